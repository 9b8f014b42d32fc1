"""Which loop device is attached to which file or block device, read from sysfs under a root.

Loop devices never show up as holders/slaves in sysfs (drivers/block/loop.c opens the backing file
like any other file), so "is this file or device in use through a loop device?" needs its own read:
/sys/block/loopN/loop/backing_file holds the backing file's path as d_path() prints it, with
" (deleted)" appended once the file is unlinked (fs/d_path.c). Paths can differ (bind mounts,
symlinks, /dev/mapper names), so backings are compared by identity: (st_dev, st_ino) for a file,
the device number for a block device.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from disksleuth.probe.sysfs import Sysfs

DELETED_SUFFIX = " (deleted)"  # fs/d_path.c, appended to the path of an unlinked file

BackingKey = tuple[str, int, int]  # ("inode", st_dev, st_ino) or ("dev", major, minor)


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


def _backing_key(path: str, fs: Sysfs) -> BackingKey | None:
    try:
        return file_key(os.stat(fs.p(path)))
    except OSError:
        pass
    # A captured tree holds no device nodes: a /dev/NAME backing is known by its sysfs `dev` attribute.
    if path.startswith("/dev/"):
        return block_key(fs.read(fs.p("/sys/class/block", os.path.basename(path), "dev")))
    return None  # deleted, or not reachable from here


def read_loop_table(sysfs_root: str = "/") -> LoopTable:
    fs = Sysfs(sysfs_root)
    backing: dict[str, str] = {}
    keys: dict[str, BackingKey | None] = {}
    for name in fs.listdir(fs.p("/sys/block")):
        if not name.startswith("loop"):
            continue
        path = parse_backing_file(fs.read(fs.p("/sys/block", name, "loop/backing_file")))
        if path is None:
            continue  # not attached
        backing[name] = path
        keys[name] = _backing_key(path, fs)
    return LoopTable(backing, keys)


def block_name(key: BackingKey | None, sysfs_root: str = "/") -> str | None:
    """The block device (whole disk or partition) with this device number, by name."""
    if key is None or key[0] != "dev":
        return None
    fs = Sysfs(sysfs_root)
    real = fs.realpath(fs.p(f"/sys/dev/block/{key[1]}:{key[2]}"))
    return os.path.basename(real) if os.path.isdir(real) else None
