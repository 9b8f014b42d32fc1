"""The kernel's word on whether a block device is free: an exclusive open, held for a destructive run.

The mount table of this process shows only this mount namespace. A privileged container sees the host's
disks but not the host's mounts, and a btrfs file system names only one of its devices in mountinfo. The
kernel knows every claim: opening a block device with O_EXCL (and no O_CREAT) fails with EBUSY while a
file system (in any namespace), an md or btrfs array, a device-mapper table or swap holds it, and while it
is held nothing else can claim it (mount, swapon, mdadm, btrfs device add). Non-exclusive opens, fio's
among them, still work. (open(2), "O_EXCL ... if pathname refers to a block device"; block/bdev.c,
bd_may_claim: a claimed partition also makes its whole disk busy, and a claimed disk its partitions.)

When the kernel says busy, `what_holds` looks for who: mounts in every mount namespace (/proc/PID/mountinfo,
one process per namespace), btrfs members (/sys/fs/btrfs/UUID/devices/NAME), holders and swap.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from disksleuth.errors import EnvironmentProblem, SafetyRefusal
from disksleuth.probe.mounts import parse_mountinfo, parse_swaps
from disksleuth.probe.sysfs import MAX_PROC_BYTES, read_regular_file

MAX_NAMESPACES = 4096  # processes scanned for their mount namespace; a bound for hosts with huge pid counts
MAX_PIDS_SCANNED = 65536


class DeviceBusy(SafetyRefusal):
    """The kernel refused an exclusive open: something holds the device."""

    def __init__(self, path: str, holders: list[str]):
        self.path = path
        self.holders = holders
        said = "; ".join(holders) if holders else (
            "the holder is not visible from here (a mount in a namespace this process cannot read, "
            "an array, a device-mapper table or a file system)"
        )
        super().__init__(f"refusing to write to {path}: the kernel reports it busy: {said}; nothing was written")


@dataclass(frozen=True)
class Claim:
    """An exclusive hold on a block device, for as long as the context that made it lasts."""

    path: str
    fd: int


@contextlib.contextmanager
def exclusive_claim(path: str, *, sysfs_root: str = "/", proc_root: str = "/proc") -> Iterator[Claim]:
    """Hold `path` (a block device) open with O_EXCL; DeviceBusy, naming what holds it, if the kernel says no."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise DeviceBusy(path, what_holds(path, sysfs_root=sysfs_root, proc_root=proc_root)) from None
        raise EnvironmentProblem(
            f"cannot open {path} exclusively to make sure nothing else uses it ({exc.strerror}); refusing to write"
        ) from None
    try:
        if not stat.S_ISBLK(os.fstat(fd).st_mode):  # the name was swapped since it was inspected
            raise SafetyRefusal(f"{path} is no longer a block device; refusing to write")
        yield Claim(path, fd)
    finally:
        os.close(fd)


def _block_names(path: str, sysfs_root: str) -> list[tuple[str, str]]:
    """(name, MAJ:MIN) of the device, then of its partitions, or of its whole disk if it is a partition."""
    rdev = os.stat(path).st_rdev
    dev = f"{os.major(rdev)}:{os.minor(rdev)}"
    sys_dev = os.path.join(sysfs_root, "sys/dev/block", dev)
    real = os.path.realpath(sys_dev)
    name = os.path.basename(real)
    related = [(name, dev)]
    parent = os.path.dirname(real)
    if os.path.exists(os.path.join(real, "partition")):  # a partition: its whole disk is claimed through it too
        related.append((os.path.basename(parent), _read_dev(parent)))
    else:
        with contextlib.suppress(OSError):
            for entry in sorted(os.listdir(real)):
                if entry.startswith(name) and os.path.exists(os.path.join(real, entry, "partition")):
                    related.append((entry, _read_dev(os.path.join(real, entry))))
    return related


def _read_dev(sys_dir: str) -> str:
    raw = read_regular_file(os.path.join(sys_dir, "dev"), 64)
    return raw.decode("ascii", "replace").strip() if raw else ""


def what_holds(path: str, *, sysfs_root: str = "/", proc_root: str = "/proc") -> list[str]:
    """Plain-words list of what holds the block device `path` (or one of its partitions)."""
    try:
        related = _block_names(path, sysfs_root)
    except OSError:
        return []
    names = sorted(n for n, _ in related)
    found = _mounts_anywhere(related, proc_root)
    found.extend(_btrfs_members(set(names), sysfs_root))
    for n in names:
        with contextlib.suppress(OSError):
            held_by = sorted(os.listdir(os.path.join(sysfs_root, "sys/class/block", n, "holders")))
            if held_by:
                found.append(f"/dev/{n} is held by {', '.join(held_by)} (LVM, md or dm)")
    swaps = read_regular_file(os.path.join(proc_root, "swaps"), MAX_PROC_BYTES)
    if swaps:
        swapped = {os.path.basename(s) for s in parse_swaps(swaps.decode("utf-8", "replace"))}
        found.extend(f"/dev/{n} is in use as swap" for n in names if n in swapped)
    return list(dict.fromkeys(found))


def _mounts_anywhere(related: list[tuple[str, str]], proc_root: str) -> list[str]:
    """Mounts of these devices in every mount namespace this process can read, one process per namespace.

    A mount is matched by its MAJ:MIN (what the kernel mounted) or its source name; btrfs reports an
    anonymous MAJ:MIN and only the device it was mounted from, so its other members are found in sysfs."""
    try:
        pids = sorted((e for e in os.listdir(proc_root) if e.isdigit()), key=int)[:MAX_PIDS_SCANNED]
    except OSError:
        return []
    own_ns = _ns_id(os.path.join(proc_root, "self"))
    seen: set[tuple[int, int]] = set()
    found: list[str] = []
    for pid in pids:
        ns = _ns_id(os.path.join(proc_root, pid))
        if ns is None or ns in seen or len(seen) >= MAX_NAMESPACES:
            continue
        seen.add(ns)
        raw = read_regular_file(os.path.join(proc_root, pid, "mountinfo"), MAX_PROC_BYTES)
        if raw is None:
            continue
        table = parse_mountinfo(raw.decode("utf-8", "replace"))
        for name, dev in related:
            mountpoints = [*table.by_source.get(f"/dev/{name}", ()), *(table.by_dev.get(dev, ()) if dev else ())]
            if not mountpoints:
                continue
            where = (
                "in this mount namespace"
                if ns == own_ns
                else f"in another mount namespace (process {pid}{_comm(proc_root, pid)})"
            )
            found.append(f"/dev/{name} is mounted at {', '.join(dict.fromkeys(mountpoints))} {where}")
    return found


def _ns_id(proc_pid: str) -> tuple[int, int] | None:
    try:
        st = os.stat(os.path.join(proc_pid, "ns/mnt"))
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _comm(proc_root: str, pid: str) -> str:
    raw = read_regular_file(os.path.join(proc_root, pid, "comm"), 64)
    comm = raw.decode("utf-8", "replace").strip() if raw else ""
    return f", {comm!r}" if comm and comm.isprintable() else ""


def _btrfs_members(names: set[str], sysfs_root: str) -> list[str]:
    """btrfs lists every member device of a mounted file system under /sys/fs/btrfs/UUID/devices/."""
    base = os.path.join(sysfs_root, "sys/fs/btrfs")
    found: list[str] = []
    with contextlib.suppress(OSError):
        for fsid in sorted(os.listdir(base)):
            devices = os.path.join(base, fsid, "devices")
            with contextlib.suppress(OSError):
                members = sorted(os.listdir(devices))
                for n in sorted(names & set(members)):
                    label = read_regular_file(os.path.join(base, fsid, "label"), 512)
                    shown = label.decode("utf-8", "replace").strip() if label else ""
                    others = ", ".join(f"/dev/{m}" for m in members if m != n)
                    what = f"btrfs file system {fsid}" + (f" ({shown!r})" if shown else "")
                    found.append(f"/dev/{n} is a member of the mounted {what}" + (f" with {others}" if others else ""))
    return found
