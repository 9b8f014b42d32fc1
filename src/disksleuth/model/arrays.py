"""The storage stack under a device (issue 24): file system -> dm -> md -> partitions -> physical disks.

One `StackNode` per layer; its `children` are what it is built from (sysfs `slaves/`, md's `md/dev-*`,
btrfs's `devices/`, a zpool's vdevs). A node's `member_*` fields describe it as a member of its parent
(md's `md/dev-X/state`, `errors`, `slot`), so the same disk can sit in two trees with two roles.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from disksleuth.model import Device

# Annotations only: model.run's dataclasses would be built for every `list` (issue 37: start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from disksleuth.model.run import Health

# Kinds of node. "disk" and "loop" are where reads end: the devices a member benchmark reads.
ARRAY_KINDS = ("md", "dm", "btrfs", "zfs", "vdev", "bcachefs")
LEAF_KINDS = ("disk", "loop")


@dataclass(frozen=True)
class StackNode:
    name: str  # kernel name ("md0", "dm-0", "sdb1", "sdb"), or a pool/file system name for btrfs and zfs
    kind: str  # md, dm, btrfs, zfs, vdev, bcachefs, partition, disk, loop, missing
    level: str | None = None  # md "raid5"; dm "linear", "striped", "crypt", ...; btrfs/zfs profile "raid1", "raidz1"
    label: str | None = None  # dm name ("vg0-root"), btrfs label, zpool name
    role: str | None = None  # dm: who made it, from the uuid prefix ("LVM", "CRYPT", "mpath")
    size_bytes: int | None = None
    raid_disks: int | None = None  # md/raid_disks: members of a complete array
    chunk_bytes: int | None = None  # md/chunk_size, or a striped dm's minimum_io_size
    degraded: int | None = None  # md/degraded; btrfs devices marked missing; zfs vdevs not ONLINE
    array_state: str | None = None  # md/array_state ("clean", "active", ...); zfs pool state
    sync_action: str | None = None  # md/sync_action: idle, resync, recover, check, repair, reshape, frozen
    sync_done_pct: float | None = None  # md/sync_completed as a percentage
    member_state: tuple[str, ...] = ()  # md dev-X/state words (in_sync, faulty, spare, write_mostly, ...)
    member_errors: int | None = None  # md dev-X/errors (read errors corrected), btrfs error_stats, zfs R+W+C
    member_slot: int | None = None  # md dev-X/slot; None for a spare ("none")
    children: tuple[StackNode, ...] = ()
    device: Device | None = None  # disk and loop leaves: the device with its link hops
    health: Health | None = None  # a disk leaf's SMART health, when it was read (run/members.with_member_health)
    health_not_read: str | None = None  # why a disk leaf's SMART was not read, when it was tried
    notes: tuple[str, ...] = field(default=())

    @property
    def is_array(self) -> bool:
        return self.kind in ARRAY_KINDS and len(self.leaves()) > 1

    def leaves(self) -> tuple[StackNode, ...]:
        """The devices at the bottom (disks, loop devices, missing members), each once, in tree order."""
        if not self.children:
            return (self,) if self.kind in (*LEAF_KINDS, "missing") else ()
        out: dict[str, StackNode] = {}
        for child in self.children:
            for leaf in child.leaves():
                out.setdefault(leaf.name, leaf)
        return tuple(out.values())

    def walk(self) -> tuple[StackNode, ...]:
        """This node and every node below it, parents first."""
        return (self, *(n for child in self.children for n in child.walk()))


@dataclass(frozen=True)
class MemberInfo:
    """A leaf of a stack with what the layers above say about it: the state that matters for a benchmark."""

    name: str  # the leaf device ("sdc")
    via: str  # the member the array names ("sdc1"), or the leaf itself
    array: str  # the nearest array above it ("md0")
    state: tuple[str, ...] = ()
    errors: int | None = None
    rebuilding: bool = False  # being recovered or replaced into the array: its reads are not its own
    missing: bool = False


@dataclass(frozen=True)
class MemberReading:
    """One member's read-only sequential reads: alone, then with every other member at once (bench --members)."""

    name: str  # the device read ("sdc", "loop3")
    path: str  # /dev/sdc
    alone_mbps: float | None = None
    alone_ci95_pct: float | None = None  # half-width of the 95% interval, % of the figure
    together_mbps: float | None = None
    together_ci95_pct: float | None = None
    skipped: str | None = None  # why it was not read (being rebuilt, ...)
    fio_command: str | None = None  # the alone read, to rerun it

    def interval(self, together: bool = False) -> tuple[float, float] | None:
        """(low, high) MB/s of the 95% interval; the point itself when the interval is unknown."""
        mbps = self.together_mbps if together else self.alone_mbps
        ci = self.together_ci95_pct if together else self.alone_ci95_pct
        if mbps is None:
            return None
        half = mbps * (ci or 0.0) / 100.0
        return max(0.0, mbps - half), mbps + half


@dataclass(frozen=True)
class SharedLink:
    """A link or controller that several members sit behind: one HBA's PCIe link, one USB hub, one SAS expander."""

    name: str  # "0000:05:00.0", "usb1/1-1", "expander-11:0"
    label: str  # "PCIe 2.0 x1 link of 0000:05:00.0 (1b21:1064)", "USB 2.0 480 Mb/s hub 1-1"
    ceiling_mbps: float | None  # what the shared link carries for all of them together (practical)
    members: tuple[str, ...]
    member_ceilings_mbps: tuple[float | None, ...]  # each member's own link ceiling below the shared one
