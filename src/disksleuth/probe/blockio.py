"""Blocks written to and read from a block device with O_DIRECT, so the device itself answers, not the page cache.

verify writes position-tagged blocks and reads them back: a read served from the page cache would hand back what was
just written whatever the device kept. O_DIRECT bypasses the cache for this descriptor; the write phase ends with
fsync (a FLUSH: the device's volatile write cache to its media) and BLKFLSBUF (the cached pages of the device dropped,
for any buffered opener's sake). O_DIRECT needs the buffer, the offset and the length aligned to the logical block
size: an anonymous mmap is page-aligned, and blocks are whole pages (analysis/verify.BLOCK_BYTES)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import stat
from collections.abc import Iterator

from disksleuth.errors import EnvironmentProblem, SafetyRefusal
from disksleuth.probe.sysfs import read_regular_file

BLKFLSBUF = 0x1261  # _IO(0x12, 97), linux/fs.h: flush the buffer cache of a block device
LOOP_GET_STATUS64 = 0x4C05  # linux/loop.h
LOOP_INFO64 = "=QQQQQIIII64s64s32s2Q"  # struct loop_info64: lo_device, lo_inode, ..., lo_flags, names, key, init
LO_FLAGS_DIRECT_IO = 16
POSIX_FADV_DONTNEED = 4


class BlockIo:
    """An O_DIRECT descriptor on a block device and one aligned buffer of `block_bytes`."""

    def __init__(self, fd: int, block_bytes: int):
        self.fd = fd
        self.block_bytes = block_bytes
        self.buffer = mmap.mmap(-1, block_bytes)

    def size_bytes(self) -> int:
        """The size the kernel reports for the open device (what it claims)."""
        return os.lseek(self.fd, 0, os.SEEK_END)

    def write(self, offset: int, data: bytes) -> None:
        """Write one block; OSError as the kernel gave it (EIO, ENOSPC)."""
        self.buffer[:] = data
        done = os.pwritev(self.fd, [self.buffer], offset)
        if done != self.block_bytes:
            raise OSError(errno.EIO, f"short write ({done} of {self.block_bytes} bytes)")

    def read(self, offset: int) -> bytes:
        done = os.preadv(self.fd, [self.buffer], offset)
        if done != self.block_bytes:
            raise OSError(errno.EIO, f"short read ({done} of {self.block_bytes} bytes)")
        return bytes(self.buffer)

    def flush(self) -> str | None:
        """fsync, then drop the device's cached pages; what failed, in words, or None."""
        try:
            os.fsync(self.fd)
        except OSError as exc:
            return f"flushing the device's write cache failed: {exc.strerror}"
        with contextlib.suppress(OSError):  # needs CAP_SYS_ADMIN; O_DIRECT reads bypass the cache anyway
            fcntl.ioctl(self.fd, BLKFLSBUF, 0)
        return None


@contextlib.contextmanager
def open_direct(path: str, block_bytes: int, same_as: int | None = None) -> Iterator[BlockIo]:
    """Open the block device `path` for direct reads and writes (not exclusive: the caller holds the claim).

    `same_as`: the descriptor of that claim. The path is opened a second time, and a name can be pointed elsewhere
    in between (a symlink, a udev rename): what is opened must be the very device held, or nothing is written."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_DIRECT | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot open {path} for direct reads and writes: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISBLK(st.st_mode):
            raise SafetyRefusal(f"{path} is no longer a block device; refusing to write")
        if same_as is not None and os.fstat(same_as).st_rdev != st.st_rdev:
            raise SafetyRefusal(f"{path} now names another device than the one checked and held; refusing to write")
        io = BlockIo(fd, block_bytes)
        try:
            yield io
        finally:
            io.buffer.close()
    finally:
        os.close(fd)


def drop_backing_cache(fd: int, sysfs_root: str = "/") -> str | None:
    """For a loop device without direct I/O, drop the page cache of its backing file; what could not be done, in
    words, or None (not a loop device, direct I/O on, or dropped).

    Such a loop device reads its backing file through that file's page cache, whatever O_DIRECT this side asks: a
    backing file whose storage lost what was written (a FUSE file, a network file) still hands back every block
    from the cache, and a card that loses data would be judged whole. After the flush the pages are clean, and
    POSIX_FADV_DONTNEED drops them, so the reads reach the storage."""
    import struct

    info = bytearray(struct.calcsize(LOOP_INFO64))
    try:
        fcntl.ioctl(fd, LOOP_GET_STATUS64, info)
    except OSError:
        return None  # not a loop device (ENOTTY, EINVAL) or not bound (ENXIO)
    fields = struct.unpack(LOOP_INFO64, info)
    lo_device, lo_inode, lo_flags = fields[0], fields[1], fields[8]
    if lo_flags & LO_FLAGS_DIRECT_IO:
        return None
    rdev = os.fstat(fd).st_rdev
    where = os.path.join(sysfs_root, f"sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/loop/backing_file")
    raw = read_regular_file(where, 4096)
    name = raw.decode("utf-8", "surrogateescape").rstrip("\n") if raw else ""
    doubt = (
        "it is a loop device without direct I/O, and the page cache of its backing file could not be dropped "
        "({}): the blocks read back may have come from that cache, so 'holds' is not sure"
    )
    try:
        if (os.stat(name).st_dev, os.stat(name).st_ino) != (lo_device, lo_inode):  # never open what is not it
            return doubt.format("its name no longer names it")
        back = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as exc:
        return doubt.format(exc.strerror or "cannot open it")
    try:
        st = os.fstat(back)
        if (st.st_dev, st.st_ino) != (lo_device, lo_inode):  # the name now names another file (or was cut)
            return doubt.format("its name no longer names it")
        os.posix_fadvise(back, 0, 0, POSIX_FADV_DONTNEED)
    except OSError as exc:
        return doubt.format(exc.strerror or "fadvise failed")
    finally:
        os.close(back)
    return None


def error_words(exc: OSError) -> str:
    """'ENOSPC: No space left on device'."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{name}: {text}" if name else text
