"""What a benchmark target is, which block device holds it, and the scratch file's life cycle."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from disksleuth.errors import EnvironmentProblem, UsageError
from disksleuth.model import Device
from disksleuth.probe.block import read_device
from disksleuth.probe.loops import LoopTable, file_key, read_loop_table
from disksleuth.probe.mounts import MountTable, read_mount_table
from disksleuth.probe.stack import btrfs_of
from disksleuth.probe.sysfs import Sysfs

SCRATCH_PREFIX = ".disksleuth-"
SCRATCH_SUFFIX = ".scratch"  # scratch files of older versions: .disksleuth-XXXX.scratch
SCRATCH_NAME = "scratch"
FIO_LOG_NAME = "fio-log"  # fio's logs in a private directory: fio-log_bw.1.log
_OWN_NAMES = (SCRATCH_NAME, FIO_LOG_NAME)  # all a private directory of ours may hold
LEGACY_LOG_PREFIX = "disksleuth-fio-logs-"  # fio log directories of older versions, in $TMPDIR
LEFTOVER_MIN_AGE_S = 2.0
# mkdtemp's names: the prefix and 8 characters of its alphabet (tempfile._RandomNameSequence).
_PRIVATE_DIR_RE = re.compile(r"\.disksleuth-[a-z0-9_]{8}\Z")
MIB = 1 << 20


@dataclass(frozen=True)
class TargetInfo:
    kind: str  # "dir", "file" or "block"
    path: str  # absolute path as given
    fstype: str | None  # file system holding a dir/file target
    mountpoint: str | None
    free_bytes: int | None  # for dir targets
    size_bytes: int | None  # for file and block targets
    device: Device | None  # the block device (a partition for a partition target)
    disk: Device | None  # the whole disk (or backing disk) behind it, for link and health
    readable: bool = True  # by us (effective ids): a raw device usually needs root
    writable: bool = True  # by us; False on a read-only file system too
    backs: tuple[str, ...] = ()  # a file target: the loop devices attached to it
    # Every device linked to the target through loop devices (attached to it, or it to them), read
    # within LOOP_DEPTH links, so the pure safety rule can follow the chain to a mounted one.
    loop_related: tuple[Device, ...] = ()
    # Why opening it for reading failed, as the OS said it (errno, its text): root can be refused too
    # (a container's device rules, a security module), so what is said comes from here, not a guess.
    read_errno: int | None = None
    read_error: str | None = None
    # A block target that belongs to a mounted multi-device file system (btrfs): its name there. sysfs shows
    # no holders for a btrfs member, so the safety rule needs it said (issue 24).
    member_of: str | None = None


LOOP_DEPTH = 8  # loop devices stacked deeper than this are not followed (the safety rule then refuses)


def _dev_name(major: int, minor: int, fs: Sysfs) -> str | None:
    link = fs.p(f"/sys/dev/block/{major}:{minor}")
    real = fs.realpath(link)
    return os.path.basename(real) if fs.isdir(real) else None


def _whole_disk(name: str, fs: Sysfs) -> tuple[str, bool]:
    """(whole-disk name, is_partition) for a block device name."""
    real = fs.realpath(fs.p("/sys/class/block", name))
    if fs.isfile(os.path.join(real, "partition")):
        return os.path.basename(os.path.dirname(real)), True
    return name, False


def backing_disks(name: str, sysfs_root: str = "/", depth: int = 0) -> list[str]:
    """The disks a target's I/O is credited to: the members under a dm or md device, else the disk itself.

    A loop device is a disk of its own here, never the disk holding its backing file: what it measures is the
    loop driver and its backing file (with dio 0, the page cache), and its runs belong to it (issue 20). The disk
    beneath stays as context on the loop device (Device.backing_device)."""
    fs = Sysfs(sysfs_root)
    disk, _ = _whole_disk(name, fs)
    if depth > 8:
        return [disk]
    slaves = fs.listdir(fs.p("/sys/block", disk, "slaves"))
    if slaves:
        out: list[str] = []
        for s in slaves:
            out.extend(backing_disks(s, sysfs_root, depth + 1))
        return list(dict.fromkeys(out))
    return [disk]


def read_block(name: str, sysfs_root: str, mounts: MountTable, fs: Sysfs, loops: LoopTable) -> Device:
    """A whole disk or a partition, by name."""
    whole, is_part = _whole_disk(name, fs)
    disk = read_device(whole, sysfs_root, mounts=mounts, fs=fs, loops=loops)
    return next((p for p in disk.partitions if p.name == name), disk) if is_part else disk


def loop_related(
    first: tuple[str, ...], sysfs_root: str = "/", loops: LoopTable | None = None
) -> tuple[Device, ...]:
    """The devices named in `first` and every device linked to them through loop devices (backs,
    backed_by, shares_backing_with, also of partitions), at most LOOP_DEPTH links away."""
    fs = Sysfs(sysfs_root)
    mounts = read_mount_table(sysfs_root)
    loops = loops if loops is not None else read_loop_table(sysfs_root)
    found: dict[str, Device] = {}
    frontier = list(dict.fromkeys(first))
    for _ in range(LOOP_DEPTH + 1):
        following: list[str] = []
        for name in frontier:
            if name in found:
                continue
            dev = read_block(name, sysfs_root, mounts, fs, loops)
            found[name] = dev
            for d in (dev, *dev.partitions):
                following.extend(d.backs)
                following.extend(d.shares_backing_with)
                if d.backed_by:
                    following.append(d.backed_by)
        frontier = [n for n in following if n not in found]
        if not frontier:
            break
    return tuple(found.values())


def device_for_path(path: str, sysfs_root: str = "/") -> tuple[Device | None, Device | None]:
    """(block device holding `path` or named by it, the whole physical disk behind it)."""
    fs = Sysfs(sysfs_root)
    st = os.stat(path)
    rdev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    name = _dev_name(os.major(rdev), os.minor(rdev), fs)
    if name is None:
        return None, None
    mounts = read_mount_table(sysfs_root)
    whole, is_part = _whole_disk(name, fs)
    disk_dev = read_device(whole, sysfs_root, mounts=mounts, fs=fs)
    device = next((p for p in disk_dev.partitions if p.name == name), disk_dev) if is_part else disk_dev
    physical = backing_disks(whole, sysfs_root)
    if physical and physical[0] != whole:
        disk_dev = read_device(physical[0], sysfs_root, mounts=mounts, fs=fs)
    return device, disk_dev


def fs_of(path: str) -> tuple[str | None, str | None]:
    """(fstype, mountpoint) of the file system holding `path` (live system)."""
    table = read_mount_table("/")
    path = os.path.realpath(path)
    best = None
    for mp in table.fstypes:
        if (path == mp or path.startswith(mp.rstrip("/") + "/")) and (best is None or len(mp) > len(best)):
            best = mp
    if best is None:
        return None, None
    return table.fstypes[best][0], best


def _access(path: str, mode: int) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(path, mode, effective_ids=effective)


def node_kind(path: str) -> str:
    """"block", "char", "dir", "file" or "other" (a FIFO, a socket): what `path` is, following links."""
    mode = os.stat(path).st_mode
    for kind, test in (("block", stat.S_ISBLK), ("char", stat.S_ISCHR), ("dir", stat.S_ISDIR), ("file", stat.S_ISREG)):
        if test(mode):
            return kind
    return "other"


def read_refusal(path: str) -> OSError | None:
    """The OS's refusal to open `path` for reading, or None when it opens. A real open(2), closed at once
    (no O_EXCL, nothing read): access(2) answers only yes or no, and misses what a security module checks
    at open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        return exc
    os.close(fd)
    return None


def inspect_target(path: str) -> TargetInfo:
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file, directory or device")
    path = os.path.abspath(path)
    st = os.stat(path)
    readable, writable = _access(path, os.R_OK), _access(path, os.W_OK)
    if stat.S_ISBLK(st.st_mode):
        device, disk = device_for_path(path)
        size = device.size_bytes if device else None
        related = loop_related((device.name,)) if device else ()
        refused = read_refusal(path)
        member_of = _multi_device_fs(device)
        return TargetInfo(
            "block",
            path,
            None,
            None,
            None,
            size,
            device,
            disk,
            readable and refused is None,
            writable,
            loop_related=related,
            read_errno=refused.errno if refused else None,
            read_error=refused.strerror if refused else None,
            member_of=member_of,
        )
    fstype, mountpoint = fs_of(path)
    device, disk = device_for_path(path)
    if stat.S_ISDIR(st.st_mode):
        vfs = os.statvfs(path)
        free = vfs.f_bavail * vfs.f_frsize
        return TargetInfo("dir", path, fstype, mountpoint, free, None, device, disk, readable, writable)
    if stat.S_ISREG(st.st_mode):
        loops = read_loop_table()
        backs = loops.attached_to(file_key(st))
        related = loop_related(backs, loops=loops) if backs else ()
        refused = read_refusal(path)
        return TargetInfo(
            "file",
            path,
            fstype,
            mountpoint,
            None,
            st.st_size,
            device,
            disk,
            readable and refused is None,
            writable,
            backs,
            related,
            read_errno=refused.errno if refused else None,
            read_error=refused.strerror if refused else None,
        )
    raise UsageError(f"{path}: not a directory, regular file or block device")


def _multi_device_fs(device: Device | None) -> str | None:
    """'btrfs <label or fsid>' when the device (or a partition of it) is a member of a mounted btrfs."""
    if device is None:
        return None
    fs = Sysfs("/")
    for name in (device.name, *(p.name for p in device.partitions)):
        fsid = btrfs_of(name, "/", fs)
        if fsid is not None:
            label = fs.read(fs.p("/sys/fs/btrfs", fsid, "label")) or fsid
            # Name the other members: the one mounted is what the user will recognise (/dev/loop3 at /mnt).
            others = sorted(
                f"/dev/{n}" for n in fs.listdir(fs.p("/sys/fs/btrfs", fsid, "devices")) if n != name
            )
            return f"btrfs {label}" + (f" (with {', '.join(others)})" if others else "")
    return None


def direct_io_supported(path: str) -> bool:
    """Does the file system (or device) accept O_DIRECT for this file?"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return False
        raise
    os.close(fd)
    return True


@dataclass(frozen=True)
class Scratch:
    """A scratch file in a private directory that only this run can create names in.

    `path` is what we and fio open: /proc/self/fd/N/scratch, resolved through our open directory
    (fio inherits fd N under the same number), so renaming or replacing the directory in a
    world-writable parent cannot redirect it. `shown_path` is the real path, for people and for the
    recorded fio command. The directory is flock()ed while the run lives (fio shares the lock), so a
    later run tells a dead run's leftovers from a live run's files."""

    path: str
    shown_path: str
    dir_fd: int


def _same_inode(name: str, fd: int, parent_fd: int) -> bool:
    """Is `name` in the directory open as parent_fd the file open as fd (not a link to it)?"""
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _open_dir(path: str) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _open_private_dir(name: str, parent_fd: int, shown: str) -> int:
    """Open a directory we just made, refusing anything that is not ours alone (swapped in meanwhile)."""
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != 0o700 or _names(fd):
        os.close(fd)
        raise EnvironmentProblem(f"{shown}: the private scratch directory was replaced while it was being made")
    return fd


# mkdtemp's alphabet and length (_PRIVATE_DIR_RE), for names made relative to an open directory.
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_NAME_TRIES = 100


def _make_private_dir(parent_fd: int) -> str:
    """mkdtemp(), but inside the directory open as parent_fd: a new 0700 directory; its name."""
    for _ in range(_NAME_TRIES):
        name = SCRATCH_PREFIX + "".join(secrets.choice(_NAME_CHARS) for _ in range(8))
        try:
            os.mkdir(name, 0o700, dir_fd=parent_fd)
        except FileExistsError:
            continue
        return name
    raise FileExistsError(errno.EEXIST, "no unused name for a private directory")


def _entries(dir_fd: int) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(dir_fd))
    except OSError:
        return []


def _names(fd: int) -> list[str]:
    """The names in the directory open as `fd`, read through a descriptor opened now.

    Not os.listdir(fd): btrfs (6.x kernels) fixes a directory's last entry at the first read of an
    open directory and rewinding does not refresh it, so the fd listed empty when the private
    directory was made never showed the scratch file made after, and every btrfs run left it behind."""
    fresh = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
    try:
        return os.listdir(fresh)
    finally:
        os.close(fresh)


def _remove_private_dir(parent_fd: int, name: str, fd: int) -> int:
    """Remove our private directory's files (never following links) and the directory; bytes freed.

    The directory is removed by name relative to its parent's open descriptor, so the parent may be
    renamed or moved meanwhile (someone renames the target directory during a run)."""
    freed = 0
    for entry in _names(fd):
        with contextlib.suppress(OSError):
            st = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                freed += st.st_blocks * 512
            os.unlink(entry, dir_fd=fd)
    if not _same_inode(name, fd, parent_fd):  # someone renamed it within the parent: find it by inode
        ours = (e.name for e in _entries(parent_fd) if e.name.startswith(SCRATCH_PREFIX))
        name = next((n for n in ours if _same_inode(n, fd, parent_fd)), "")
    if name:
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=parent_fd)
    return freed


@contextlib.contextmanager
def private_dir(directory: str, what: str) -> Iterator[tuple[str, int]]:
    """A new private (0700) directory inside `directory`: (its path, an open descriptor of it).

    flock()ed while it lives (a child given the descriptor shares the lock), so a later run tells a
    dead run's leftovers from a live run's files. Removed with what it holds on success, error,
    Ctrl-C or SIGTERM (the caller turns SIGTERM into an exception, so this `finally` runs); after
    kill -9 a later run removes it (`remove_dead_scratch`). It may hold only names starting with
    SCRATCH_NAME or FIO_LOG_NAME: a leftover holding anything else is not ours to remove. Made,
    opened and removed through an open descriptor of `directory`, so renaming `directory` during
    the run leaves nothing behind."""
    try:
        parent_fd = _open_dir(directory)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot create {what} in {directory}: {exc.strerror}") from exc
    try:
        try:
            name = _make_private_dir(parent_fd)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot create {what} in {directory}: {exc.strerror}") from exc
        private = os.path.join(directory, name)
        try:
            fd = _open_private_dir(name, parent_fd, private)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot open the private directory {private}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            yield private, fd
        finally:
            try:
                _remove_private_dir(parent_fd, name, fd)
            finally:
                os.close(fd)
    finally:
        os.close(parent_fd)


def _through_fd(fd: int, private: str, name: str) -> str:
    """`name` in our private directory as /proc/self/fd/N/name (see Scratch), or its real path without /proc."""
    via_fd = f"/proc/self/fd/{fd}/{name}"
    return via_fd if os.path.exists(f"/proc/self/fd/{fd}") else os.path.join(private, name)


@contextlib.contextmanager
def scratch_file(directory: str) -> Iterator[Scratch]:
    """An empty scratch file in a new private directory inside `directory` (`private_dir`)."""
    with private_dir(directory, "a scratch file") as (private, fd):
        try:
            os.close(os.open(SCRATCH_NAME, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd))
        except OSError as exc:
            raise EnvironmentProblem(f"cannot create a scratch file in {private}: {exc.strerror}") from exc
        yield Scratch(_through_fd(fd, private, SCRATCH_NAME), os.path.join(private, SCRATCH_NAME), fd)


@dataclass(frozen=True)
class FioLogs:
    """Where fio writes its logs: `prefix` for --write_bw_log (through `dir_fd`, which fio must inherit)."""

    prefix: str
    dir_fd: int


@contextlib.contextmanager
def fio_log_dir() -> Iterator[FioLogs]:
    """A private directory in $TMPDIR for fio's log files (`private_dir`): after kill -9 it is left
    behind, and the next run's `remove_dead_fio_logs` removes it."""
    with private_dir(tempfile.gettempdir(), "a directory for fio's logs") as (private, fd):
        yield FioLogs(_through_fd(fd, private, FIO_LOG_NAME), fd)


def remove_dead_fio_logs() -> list[str]:
    """Log directories in $TMPDIR that runs killed with -9 left behind, removed; one line per finding."""
    return remove_dead_scratch(tempfile.gettempdir())


def remove_dead_scratch(directory: str) -> list[str]:
    """Remove private directories (scratch files, fio logs) that runs killed with -9 left in `directory`;
    one line per finding.

    A live run holds a lock on its directory: those are left alone. Directories younger than
    LEFTOVER_MIN_AGE_S are skipped too (made but not yet locked). Scratch files of older disksleuth
    versions (and their fio log directories) carry no lock, so they are only reported."""
    found: list[str] = []
    try:
        parent_fd = _open_dir(directory)
    except OSError:
        return found
    try:
        for entry in _entries(parent_fd):
            line = _remove_dead(parent_fd, entry, os.path.join(directory, entry.name))
            if line:
                found.append(line)
    finally:
        os.close(parent_fd)
    return found


def _remove_dead(parent_fd: int, entry: os.DirEntry[str], path: str) -> str | None:
    """One entry of remove_dead_scratch's directory (open as parent_fd): what was found or done, or None."""
    if not entry.name.startswith((SCRATCH_PREFIX, LEGACY_LOG_PREFIX)):
        return None
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    if st.st_uid != os.geteuid():
        return None
    if entry.name.startswith(LEGACY_LOG_PREFIX):
        if stat.S_ISDIR(st.st_mode):
            return f"found {path}, fio logs an older disksleuth left behind; remove it if no benchmark is running"
        return None
    if stat.S_ISREG(st.st_mode) and entry.name.endswith(SCRATCH_SUFFIX):
        return (
            f"found {path} ({st.st_size // MIB} MiB), a scratch file an older disksleuth left behind; "
            "remove it if no benchmark is running there"
        )
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o700 or not _PRIVATE_DIR_RE.match(entry.name):
        return None
    if time.time() - st.st_mtime < LEFTOVER_MIN_AGE_S:
        return None
    try:
        fd = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # a live run
        if not _same_inode(entry.name, fd, parent_fd) or not all(n.startswith(_OWN_NAMES) for n in _names(fd)):
            return None  # swapped meanwhile, or holding files that are not ours: leave it
        freed = _remove_private_dir(parent_fd, entry.name, fd)
        gone = "emptied (could not remove the directory)" if _same_inode(entry.name, fd, parent_fd) else "removed"
        amount = f"{freed // MIB} MiB" if freed >= MIB else f"{freed // 1024} KiB" if freed else "empty"
        return f"{gone} {path} ({amount}), left by a disksleuth run that was killed"
    finally:
        os.close(fd)


@contextlib.contextmanager
def ram_reference(size_bytes: int) -> Iterator[tuple[str, bool]]:
    """A RAM-backed reference target: (path, direct I/O works).

    As root, a loop device with direct I/O over a /dev/shm image, so the reference goes through the
    block layer like the target does; otherwise a plain file on /dev/shm (tmpfs, page cache)."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    image = os.path.join(shm, f"disksleuth-ref-{uuid.uuid4().hex[:8]}.img")
    with open(image, "wb") as fh:
        fh.truncate(size_bytes)
    loop = None
    try:
        if os.geteuid() == 0:
            res = subprocess.run(
                ["losetup", "-f", "--show", "--direct-io=on", image], capture_output=True, text=True, check=False
            )
            if res.returncode == 0:
                loop = res.stdout.strip()
        yield (loop, True) if loop else (image, False)
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True, check=False)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(image)
