"""What surrounds a measurement (issue 36): the cgroup I/O limits the run is under, and other I/O on the target's
devices around each test. Composes probe/cgroups, probe/procio and analysis/limits, analysis/foreign."""

from __future__ import annotations

import os

from disksleuth.analysis.foreign import Watched
from disksleuth.analysis.limits import target_limits
from disksleuth.model import Device
from disksleuth.model.arrays import StackNode
from disksleuth.model.limits import IoLimit
from disksleuth.probe.cgroups import read_io_limits
from disksleuth.probe.sysfs import Sysfs
from disksleuth.probe.target import TargetInfo

_BLOCK_KINDS = ("md", "dm", "partition", "disk", "loop")  # stack nodes that are block devices


def _dev_of(name: str, fs: Sysfs) -> tuple[str | None, str | None]:
    """(MAJ:MIN, the whole disk's name when `name` is a partition) from sysfs."""
    block = fs.realpath(fs.p("/sys/class/block", name))
    dev = fs.read(os.path.join(block, "dev"))
    parent = None
    if fs.isfile(os.path.join(block, "partition")):
        parent = os.path.basename(os.path.dirname(block))
    return (dev.strip() if dev else None), parent


def limit_devices(target: TargetInfo, stack: StackNode | None, sysfs_root: str = "/") -> dict[str, str]:
    """MAJ:MIN -> name of every device a limit on would hold the target's I/O, the target's own first: its block
    device, the whole disk of a partition, a loop device's backing disk, and the layers of an array under it."""
    names: list[str] = []
    known: dict[str, str] = {}
    for device in (target.device, target.disk):
        if device is not None:
            names.append(device.name)
            if device.dev:
                known[device.name] = device.dev
            if device.parent:
                names.append(device.parent)
            if device.backing_device:
                names.append(device.backing_device)
    if stack is not None:
        names += [node.name for node in stack.walk() if node.kind in _BLOCK_KINDS]
    fs = Sysfs(sysfs_root)
    out: dict[str, str] = {}
    seen: set[str] = set()
    while names:
        name = names.pop(0)
        if name in seen or len(seen) >= 512:
            continue
        seen.add(name)
        dev, parent = _dev_of(name, fs)
        dev = known.get(name) or dev
        if dev and dev not in out:
            out[dev] = name
        if parent:
            names.append(parent)
    return out


def io_limits(
    target: TargetInfo, stack: StackNode | None = None, procfs_root: str = "/proc", cgroup_root: str = "/sys/fs/cgroup"
) -> tuple[IoLimit, ...] | None:
    """The cgroup I/O limits this process meets on the target's devices; None when its cgroups are unknown."""
    return target_limits(read_io_limits("self", procfs_root, cgroup_root), limit_devices(target, stack))


def watched(target: TargetInfo) -> Watched:
    """The devices whose counters tell other I/O on the target: its block device as fio's I/O reaches it (the whole
    disk of a partition: the disk is what is shared), and an array's members."""
    from disksleuth.probe.stack import stack_of

    device: Device | None = target.device
    if device is None:
        if target.fstype == "btrfs" and target.mountpoint:  # files on btrfs carry an anonymous device number
            from disksleuth.probe.mounts import read_mount_table

            source = read_mount_table("/").fstypes.get(target.mountpoint, ("", ""))[1]
            if source.startswith("/dev/"):
                return Watched(None, stack_of(os.path.basename(os.path.realpath(source))))
        return Watched(None)
    top = device.parent or device.name
    tree = stack_of(device.name)
    if tree is not None and tree.name != device.name:
        tree = None  # the array this device belongs to: its members' I/O is the array's, not the target's
    return Watched(top, tree)
