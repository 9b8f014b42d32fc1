"""Which loop device is attached to which file or block device, read from sysfs under a root.

Loop devices never show up as holders/slaves in sysfs (drivers/block/loop.c opens the backing file
like any other file), so "is this file or device in use through a loop device?" needs its own read:
/sys/block/loopN/loop/backing_file holds the backing file's path as d_path() prints it, with
" (deleted)" appended once the file is unlinked (fs/d_path.c). Paths can differ (bind mounts,
symlinks, /dev/mapper names), so backings are compared by identity: (st_dev, st_ino) for a file,
the device number for a block device.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import struct
from dataclasses import dataclass

from disksleuth.probe.mounts import MountTable
from disksleuth.probe.sysfs import Sysfs, block_device_names

LOOP_MAJOR = 7  # Documentation/admin-guide/devices.txt
DELETED_SUFFIX = " (deleted)"  # fs/d_path.c, appended to the path of an unlinked file

BackingKey = tuple[str, int, int]  # ("inode", st_dev, st_ino) or ("dev", major, minor)

# include/uapi/linux/loop.h: LOOP_GET_STATUS64 fills struct loop_info64, which starts with
# __u64 lo_device, lo_inode, lo_rdevice (the backing file's stat dev, ino and rdev, encoded as
# userspace's st_dev; drivers/block/loop.c loop_get_status). 232 bytes in all.
LOOP_GET_STATUS64 = 0x4C05
LOOP_INFO64_SIZE = 232


def parse_backing_file(text: str | None) -> str | None:
    """The backing file's path from loop/backing_file, without the kernel's " (deleted)" mark."""
    if not text:
        return None
    path = text.rstrip("\n")
    if path.endswith(DELETED_SUFFIX):
        path = path[: -len(DELETED_SUFFIX)]
    return path or None


def parse_dev(text: str | None) -> tuple[int, int] | None:
    """ "MAJ:MIN" from a sysfs `dev` attribute."""
    major, sep, minor = (text or "").strip().partition(":")
    if not sep or not major.isdigit() or not minor.isdigit():
        return None
    return int(major), int(minor)


@dataclass(frozen=True)
class LoopTable:
    """Attached loop devices: name -> backing path, and name -> the backing's identity (None: unknown)."""

    backing: dict[str, str]
    keys: dict[str, BackingKey | None]

    def attached_to(self, key: BackingKey | None, besides: str | None = None) -> tuple[str, ...]:
        """Loop devices whose backing is `key`, by name (sorted), leaving out `besides`."""
        if key is None:
            return ()
        return tuple(sorted(n for n, k in self.keys.items() if k == key and n != besides))


def block_key(dev_attr: str | None) -> BackingKey | None:
    majmin = parse_dev(dev_attr)
    return ("dev", *majmin) if majmin else None


def file_key(st: os.stat_result) -> BackingKey:
    if stat.S_ISBLK(st.st_mode):
        return ("dev", os.major(st.st_rdev), os.minor(st.st_rdev))
    return ("inode", st.st_dev, st.st_ino)


def parse_loop_info64(raw: bytes) -> BackingKey | None:
    """The backing's identity from a struct loop_info64 (see LOOP_GET_STATUS64)."""
    if len(raw) < 24:
        return None
    device, inode, rdevice = struct.unpack_from("=QQQ", raw)
    if rdevice:  # a block device backs it
        return ("dev", os.major(rdevice), os.minor(rdevice))
    return ("inode", device, inode)


def _status_key(name: str) -> BackingKey | None:
    """The kernel's own record of the backing (live system only): right even when the file was
    unlinked (" (deleted)") or its path was replaced meanwhile. Needs read access to /dev/NAME."""
    with contextlib.suppress(OSError):
        fd = os.open(f"/dev/{name}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if not stat.S_ISBLK(st.st_mode) or os.major(st.st_rdev) != LOOP_MAJOR:
                return None
            return parse_loop_info64(fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(LOOP_INFO64_SIZE)))
        finally:
            os.close(fd)
    return None


def _backing_key(name: str, path: str, fs: Sysfs) -> BackingKey | None:
    if fs.root == "/":
        key = _status_key(name)
        if key is not None:
            return key
    st = fs.stat(fs.p(path))  # in a captured tree, the path inside it (never out of it)
    if st is not None:
        return file_key(st)
    # A captured tree holds no device nodes: a /dev/NAME backing is known by its sysfs `dev` attribute.
    if path.startswith("/dev/"):
        return block_key(fs.read(fs.p("/sys/class/block", os.path.basename(path), "dev")))
    return None  # deleted, or not reachable from here


def read_loop_table(sysfs_root: str = "/") -> LoopTable:
    fs = Sysfs(sysfs_root)
    backing: dict[str, str] = {}
    keys: dict[str, BackingKey | None] = {}
    for name in block_device_names(fs)[0]:  # the devices the readers read: past the cap, not every loop device
        if not name.startswith("loop"):
            continue
        path = parse_backing_file(fs.read(fs.p("/sys/block", name, "loop/backing_file")))
        if path is None:
            continue  # not attached
        backing[name] = path
        keys[name] = _backing_key(name, path, fs)
    return LoopTable(backing, keys)


def block_name(key: BackingKey | None, sysfs_root: str = "/") -> str | None:
    """The block device (whole disk or partition) with this device number, by name."""
    if key is None or key[0] != "dev":
        return None
    fs = Sysfs(sysfs_root)
    real = fs.realpath(fs.p(f"/sys/dev/block/{key[1]}:{key[2]}"))
    return os.path.basename(real) if fs.isdir(real) else None


def holding_device(
    backing: str | None, key: BackingKey | None, mounts: MountTable, sysfs_root: str = "/"
) -> str | None:
    """The block device a loop device's backing lives on: the backing device itself, or the one whose file
    system holds the backing file. The file's mount is found in the mount table (so a captured tree answers
    as the live system does); the kernel's st_dev (LOOP_GET_STATUS64) answers when the table does not."""
    if key is not None and key[0] == "dev":
        return block_name(key, sysfs_root)
    if backing is None:
        return None
    majmin = mounts.dev_holding(backing)
    found = block_name(block_key(majmin), sysfs_root) if majmin else None
    if found is None and key is not None and sysfs_root == "/":
        found = block_name(("dev", os.major(key[1]), os.minor(key[1])), sysfs_root)
    return found
