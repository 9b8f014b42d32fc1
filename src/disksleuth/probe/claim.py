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

When it says free, `held_state` reads, through the claim's descriptor, what the claim cannot see: which device is
held (a name can be re-pointed after the open), whether it is read-only, and processes holding it open without
O_EXCL (dd, a virtual machine's disk). analysis/safety judges it; bench, check and verify share both.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from disksleuth.errors import EnvironmentProblem, SafetyRefusal
from disksleuth.model.held import HeldDevice
from disksleuth.probe.mounts import parse_mountinfo, parse_swaps
from disksleuth.probe.sysfs import MAX_PROC_BYTES, read_regular_file

MAX_NAMESPACES = 4096  # processes scanned for their mount namespace; a bound for hosts with huge pid counts
MAX_PIDS_SCANNED = 65536
MAX_FDS_SCANNED = 1_000_000  # descriptors looked at in the scan for other openers, over all processes
BLKROGET = 0x125E  # _IO(0x12, 94), linux/fs.h: is the device read-only


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


def held_state(claim: Claim, *, sysfs_root: str = "/", proc_root: str = "/proc") -> HeldDevice:
    """What the claim holds, read through its descriptor: the device, a node naming it, read-only, other openers."""
    rdev = os.fstat(claim.fd).st_rdev
    dev = f"{os.major(rdev)}:{os.minor(rdev)}"
    try:
        related = _block_names_of(dev, sysfs_root)
    except OSError:
        related = [("", dev)]
    return HeldDevice(
        dev=dev,
        node=_node_of(claim.path, rdev, related[0][0]),
        read_only=read_only(claim.fd),
        openers=tuple(open_by_processes({**dict(related[1:]), related[0][0]: dev}, proc_root=proc_root)),
    )


def _node_of(path: str, rdev: int, name: str) -> str | None:
    """A path naming the device `rdev` that a name swap cannot redirect: /dev/NAME (root's directory), else the real
    path of what was claimed; each checked to be that very device, not a link. None when neither is."""
    for node in (f"/dev/{name}" if name else "", os.path.realpath(path)):
        if not node:
            continue
        try:
            st = os.lstat(node)
        except OSError:
            continue
        if stat.S_ISBLK(st.st_mode) and st.st_rdev == rdev:
            return node
    return None


def read_only(fd: int) -> bool:
    """The kernel's read-only flag of the block device of `fd` (BLKROGET): an SD card's write-protect switch,
    `blockdev --setro`, a loop device attached with -r. Every write then fails."""
    import struct

    flag = bytearray(struct.calcsize("i"))
    try:
        fcntl.ioctl(fd, BLKROGET, flag)
    except OSError:
        return False
    return bool(struct.unpack("i", flag)[0])


def open_by_processes(devs: dict[str, str], proc_root: str = "/proc") -> list[str]:
    """Other processes that hold one of the block devices `devs` (name: MAJ:MIN, the device held last) open
    ('process 123 (qemu)', 'process 9 (dd) on /dev/sdb1' for another of them): an exclusive claim does not see an
    opener without O_EXCL (a virtual machine's disk, dd, a database on a raw device), nor one of a partition of the
    disk held, or of the disk of the partition held. Bounded: at most MAX_PIDS_SCANNED processes and
    MAX_FDS_SCANNED descriptors."""
    held = list(devs)[-1] if devs else ""
    wanted = {
        os.makedev(int(d.partition(":")[0]), int(d.partition(":")[2])): name for name, d in devs.items() if _is_dev(d)
    }
    me = str(os.getpid())
    found: list[str] = []
    try:
        pids = sorted((e for e in os.listdir(proc_root) if e.isdigit() and e != me), key=int)[:MAX_PIDS_SCANNED]
    except OSError:
        return found
    budget = MAX_FDS_SCANNED
    for pid in pids:
        fd_dir = os.path.join(proc_root, pid, "fd")
        try:
            entries = os.listdir(fd_dir)
        except OSError:
            continue
        for entry in entries[:budget]:
            link = os.path.join(fd_dir, entry)
            try:  # sockets, pipes and anon inodes ('socket:[123]') are no device: not looked at further
                if not os.readlink(link).startswith("/"):
                    continue
                st = os.stat(link)
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode) and st.st_rdev in wanted:
                name = wanted[st.st_rdev]
                on = f" on /dev/{name}" if name and name != held else ""
                found.append(f"process {pid}{_comm(proc_root, pid, quoted=False)}{on}")
                break
        budget -= len(entries)
        if budget <= 0:
            break
    return found


def _is_dev(text: str) -> bool:
    major, colon, minor = text.partition(":")
    return bool(colon) and len(text) < 24 and (major + minor).isascii() and major.isdigit() and minor.isdigit()


def _block_names(path: str, sysfs_root: str) -> list[tuple[str, str]]:
    """(name, MAJ:MIN) of the device, then of its partitions, or of its whole disk if it is a partition."""
    rdev = os.stat(path).st_rdev
    return _block_names_of(f"{os.major(rdev)}:{os.minor(rdev)}", sysfs_root)


def _block_names_of(dev: str, sysfs_root: str) -> list[tuple[str, str]]:
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


def _comm(proc_root: str, pid: str, *, quoted: bool = True) -> str:
    """', 'dd'' (quoted) or ' (dd)' after a process number; '' when its name cannot be read or is not printable."""
    raw = read_regular_file(os.path.join(proc_root, pid, "comm"), 64)
    comm = raw.decode("utf-8", "replace").strip() if raw else ""
    if not comm or not comm.isprintable():
        return ""
    return f", {comm!r}" if quoted else f" ({comm})"


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
