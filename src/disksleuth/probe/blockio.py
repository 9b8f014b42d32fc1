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

BLKFLSBUF = 0x1261  # _IO(0x12, 97), linux/fs.h: flush the buffer cache of a block device


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


def error_words(exc: OSError) -> str:
    """'ENOSPC: No space left on device'."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{name}: {text}" if name else text
