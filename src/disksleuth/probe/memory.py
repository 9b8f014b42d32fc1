"""Is a benchmark target really memory? tmpfs, ramfs, zram, brd, and loop/dm/md stacks over them.

Such targets measure RAM (and for zram, the compressor), not storage; reads of never-written space
there return zero pages without touching anything (zram: "same" pages, Documentation/admin-guide/
blockdev/zram.rst; brd allocates a page on first write, drivers/block/brd.c). The verdicts say so.
"""

from __future__ import annotations

import os
import re
import stat

from disksleuth.model.run import MemoryBacking
from disksleuth.probe.mounts import MountTable, read_mount_table
from disksleuth.probe.sysfs import Sysfs

MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")  # mm/shmem.c, fs/ramfs: page cache with no backing store
_MAX_DEPTH = 8  # loop over a file on a loop over ...: stacks deeper than this are not followed


def _fs_for_path(path: str, mounts: MountTable) -> tuple[str, str] | None:
    """(fstype, mountpoint) of the longest mount point holding `path`."""
    best = None
    for mp in mounts.fstypes:
        if (path == mp or path.startswith(mp.rstrip("/") + "/")) and (best is None or len(mp) > len(best)):
            best = mp
    return (mounts.fstypes[best][0], best) if best else None


def _whole_disk(fs: Sysfs, name: str) -> str:
    real = fs.realpath(fs.p("/sys/class/block", name))
    if fs.isfile(os.path.join(real, "partition")):
        return os.path.basename(os.path.dirname(real))
    return name


def _name_of_dev(fs: Sysfs, st_dev: int) -> str | None:
    real = fs.realpath(fs.p(f"/sys/dev/block/{os.major(st_dev)}:{os.minor(st_dev)}"))
    return os.path.basename(real) if fs.isdir(real) else None


def device_memory_backing(
    name: str, sysfs_root: str = "/", mounts: MountTable | None = None, depth: int = 0
) -> MemoryBacking | None:
    """The memory under block device `name`, following partitions, dm/md slaves and loop backing files."""
    if depth > _MAX_DEPTH:
        return None
    fs = Sysfs(sysfs_root)
    disk = _whole_disk(fs, name)
    here = name if disk == name else f"{name} (on {disk})"
    if disk.startswith("zram"):
        return MemoryBacking("zram", (f"{here}: zram, compressed RAM",), True)
    # brd (drivers/block/brd.c) names its disks ram0, ram1, ... under /sys/devices/virtual/block.
    if re.fullmatch(r"ram\d+", disk) and "/virtual/" in fs.realpath(fs.p("/sys/block", disk)):
        return MemoryBacking("brd", (f"{here}: brd RAM disk",), True)
    slaves = fs.listdir(fs.p("/sys/block", disk, "slaves"))
    if slaves:
        under = [device_memory_backing(s, sysfs_root, mounts, depth + 1) for s in slaves]
        if all(under):
            first = under[0]
            assert first is not None
            chain = (f"{here} over {', '.join(slaves)}", *first.chain)
            return MemoryBacking(first.kind, chain, first.never_written_reads_fast)
        return None
    backing = fs.read(fs.p("/sys/block", disk, "loop/backing_file"))
    if not backing:
        return None
    # drivers/block/loop.c prints the file's path; " (deleted)" when it was unlinked while attached.
    path = backing.strip().removesuffix(" (deleted)")
    # A capture's own table answers for it (its backing paths are masked below their mount point, kept as is).
    mounts = mounts or read_mount_table(sysfs_root)
    holder = _fs_for_path(path, mounts)
    if holder and holder[0] in MEMORY_FILESYSTEMS:
        # The image may be sparse: its holes read as the shared zero page (mm/shmem.c), never written at all.
        return MemoryBacking(holder[0], (f"{here}: loop", path, f"{holder[0]} on {holder[1]}"), True)
    if sysfs_root != "/":  # the file's own disk is found by stat() below: on the live system only
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    # A loop over a block device (losetup /dev/loop3) stands on that device; over a file, on the file's disk.
    inner = _name_of_dev(fs, st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev)
    if inner and _whole_disk(fs, inner) != disk:
        found = device_memory_backing(inner, sysfs_root, mounts, depth + 1)
        if found:
            return MemoryBacking(found.kind, (f"{here}: loop", path, *found.chain), found.never_written_reads_fast)
    return None


def target_memory_backing(
    fstype: str | None, mountpoint: str | None, device_name: str | None, sysfs_root: str = "/"
) -> MemoryBacking | None:
    """A directory or file on tmpfs/ramfs, or any target whose block device stands on memory."""
    if fstype in MEMORY_FILESYSTEMS:
        return MemoryBacking(fstype or "", (f"{fstype} on {mountpoint}",), False)
    if device_name:
        return device_memory_backing(device_name, sysfs_root)
    return None
