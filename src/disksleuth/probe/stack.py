"""The stack under a block device, read from sysfs under a root (issue 24): dm -> md -> partitions -> disks.

Kernel layout relied on:
  Documentation/ABI/stable/sysfs-block: /sys/block/X/slaves/ (what X is built from), holders/ (what uses X),
      queue/minimum_io_size and optimal_io_size (a striped target's chunk and stripe width)
  Documentation/admin-guide/md.rst: /sys/block/mdN/md/{level,raid_disks,chunk_size,degraded,array_state,
      sync_action,sync_completed} and md/dev-X/{state,errors,slot,block} for each member X
  Documentation/admin-guide/device-mapper (dm-uevent, dm-ioctl): /sys/block/dm-N/dm/{name,uuid}; the uuid's
      prefix names who made the mapping: "LVM-" (lvm2), "CRYPT-" (cryptsetup), "mpath-" (multipath), "part"
  Documentation/ABI/testing/sysfs-fs-btrfs: /sys/fs/btrfs/<fsid>/{label,devices/,devinfo/<id>/,allocation/data/}
      (present while the file system is mounted)
Every value is read through Sysfs, so a hostile --sysfs-root is confined like every other reader.
"""

from __future__ import annotations

import os
from dataclasses import replace

from disksleuth.model.arrays import StackNode
from disksleuth.probe.block import read_device
from disksleuth.probe.loops import LoopTable, read_loop_table
from disksleuth.probe.mounts import MountTable, multi_device_source, read_mount_table
from disksleuth.probe.sysfs import Notes, Sysfs, parse_int

MAX_DEPTH = 16  # dm over md over dm ... deeper than this is not followed (a loop in a hostile tree)
MAX_MEMBERS = 256  # md allows 384 members (md-1.x superblock); a tree listing more is cut, with a note

# dm uuid prefixes (lvm2 lib/activate/dev_manager.c UUID_PREFIX "LVM-"; cryptsetup lib/libdevmapper.c
# "CRYPT-<type>-..."; multipath-tools "mpath-"; kpartx "partN-"; stratis "stratis-").
_DM_ROLES = (("LVM-", "LVM"), ("CRYPT-", "CRYPT"), ("mpath-", "mpath"), ("stratis-", "stratis"))
# LVM names its hidden sub-volumes by suffix (lvm2 lib/metadata/lv_manip.c): raid images and metadata,
# cache origin and pools, thin pools, mirror legs.
_LVM_SUFFIXES = (
    ("_rimage_", "raid image"),
    ("_rmeta_", "raid metadata"),
    ("_corig", "cache origin"),
    ("_cdata", "cache data"),
    ("_cmeta", "cache metadata"),
    ("_cpool", "cache pool"),
    ("_tdata", "thin pool data"),
    ("_tmeta", "thin pool metadata"),
    ("_mimage_", "mirror image"),
)


class _Reader:
    def __init__(self, sysfs_root: str, fs: Sysfs | None, mounts: MountTable | None, loops: LoopTable | None):
        self.root = sysfs_root
        self.fs = fs or Sysfs(sysfs_root)
        self.mounts = mounts if mounts is not None else read_mount_table(sysfs_root)
        self.loops = loops if loops is not None else read_loop_table(sysfs_root)

    def block_dir(self, name: str) -> str | None:
        for base in ("/sys/class/block", "/sys/block"):
            real = self.fs.realpath(self.fs.p(base, name))
            if self.fs.isdir(real):
                return real
        return None

    def attr(self, block_dir: str, rel: str) -> str | None:
        return self.fs.read(os.path.join(block_dir, rel))

    def node(self, name: str, depth: int, seen: frozenset[str]) -> StackNode:
        if depth > MAX_DEPTH or name in seen:
            return StackNode(name, "missing", notes=(f"{name}: stacked deeper than {MAX_DEPTH} layers or in a loop",))
        seen = seen | {name}
        block_dir = self.block_dir(name)
        if block_dir is None:
            return StackNode(name, "missing", notes=(f"{name} is not in this sysfs tree",))
        notes = Notes()
        size = parse_int(self.attr(block_dir, "size"), f"{name} size", notes)
        size_bytes = size * 512 if size is not None else None
        if self.fs.isfile(os.path.join(block_dir, "partition")):
            disk = os.path.basename(os.path.dirname(block_dir))
            child = self.node(disk, depth + 1, seen)
            return StackNode(name, "partition", size_bytes=size_bytes, children=(child,), notes=notes.as_tuple())
        if self.fs.isdir(os.path.join(block_dir, "md")):
            return self.md_node(name, block_dir, size_bytes, depth, seen, notes)
        slaves = self.fs.listdir(os.path.join(block_dir, "slaves"))[:MAX_MEMBERS]
        if self.fs.isdir(os.path.join(block_dir, "dm")) or name.startswith("dm-"):
            return self.dm_node(name, block_dir, size_bytes, slaves, depth, seen, notes)
        if slaves:  # another stacking driver (bcache, drbd): its slaves are its members
            children = tuple(self.node(s, depth + 1, seen) for s in slaves)
            return StackNode(name, "virtual", size_bytes=size_bytes, children=children, notes=notes.as_tuple())
        device = read_device(name, self.root, mounts=self.mounts, fs=self.fs, loops=self.loops)
        kind = "loop" if device.transport == "loop" else "disk"
        return StackNode(name, kind, size_bytes=size_bytes, device=device, notes=notes.as_tuple())

    def md_node(
        self, name: str, block_dir: str, size_bytes: int | None, depth: int, seen: frozenset[str], notes: Notes
    ) -> StackNode:
        md = os.path.join(block_dir, "md")

        def a(rel: str) -> str | None:
            return self.fs.read(os.path.join(md, rel))

        level = a("level")
        members = [e[len("dev-") :] for e in self.fs.listdir(md) if e.startswith("dev-")][:MAX_MEMBERS]
        if not members:  # an array being assembled lists its members under slaves/ first
            members = self.fs.listdir(os.path.join(block_dir, "slaves"))[:MAX_MEMBERS]
        children = []
        for member in members:
            dev_dir = os.path.join(md, f"dev-{member}")
            state = tuple(w for w in (self.fs.read(os.path.join(dev_dir, "state")) or "").split(",") if w)
            slot_text = self.fs.read(os.path.join(dev_dir, "slot"))
            child = self.node(member, depth + 1, seen)
            children.append(
                replace(
                    child,
                    member_state=state,
                    member_errors=parse_int(self.fs.read(os.path.join(dev_dir, "errors")), f"{member} errors", notes),
                    # "none" for a spare or a member not in the array yet (md.rst, dev-XXX/slot)
                    member_slot=None if slot_text in (None, "none") else parse_int(slot_text, f"{member} slot", notes),
                )
            )
        # md.rst: chunk_size is in bytes; raid1 and linear report 0 (no chunks).
        chunk = parse_int(a("chunk_size"), f"{name} chunk_size", notes)
        return StackNode(
            name,
            "md",
            level=level,
            size_bytes=size_bytes,
            raid_disks=parse_int(a("raid_disks"), f"{name} raid_disks", notes),
            chunk_bytes=chunk or None,
            degraded=parse_int(a("degraded"), f"{name} degraded", notes),
            array_state=a("array_state"),
            sync_action=a("sync_action"),
            sync_done_pct=parse_sync_completed(a("sync_completed")),
            children=tuple(children),
            notes=notes.as_tuple(),
        )

    def dm_node(
        self,
        name: str,
        block_dir: str,
        size_bytes: int | None,
        slaves: list[str],
        depth: int,
        seen: frozenset[str],
        notes: Notes,
    ) -> StackNode:
        dm_name = self.attr(block_dir, "dm/name")
        uuid = self.attr(block_dir, "dm/uuid") or ""
        role = next((r for prefix, r in _DM_ROLES if uuid.startswith(prefix)), None)
        if role is None and uuid.startswith("part"):
            role = "partition"
        io_min = parse_int(self.attr(block_dir, "queue/minimum_io_size"), f"{name} minimum_io_size", notes)
        io_opt = parse_int(self.attr(block_dir, "queue/optimal_io_size"), f"{name} optimal_io_size", notes)
        level = dm_level(role, uuid, dm_name, len(slaves), io_min, io_opt)
        children = tuple(self.node(s, depth + 1, seen) for s in slaves)
        return StackNode(
            name,
            "dm",
            level=level,
            label=dm_name,
            role=role,
            size_bytes=size_bytes,
            chunk_bytes=io_min if level == "striped" else None,
            children=children,
            notes=notes.as_tuple(),
        )


def dm_level(
    role: str | None, uuid: str, dm_name: str | None, slaves: int, io_min: int | None, io_opt: int | None
) -> str | None:
    """What a dm mapping does, as far as sysfs tells (pure). The table itself (dmsetup table) needs root and
    an ioctl; sysfs shows who made it (uuid prefix), LVM's sub-volume names, and the I/O hints a striped
    target sets: minimum_io_size = chunk, optimal_io_size = chunk x stripes (drivers/md/dm-stripe.c
    stripe_io_hints)."""
    if role == "CRYPT":
        return "crypt"
    if role == "mpath":
        return "multipath"
    for suffix, what in _LVM_SUFFIXES:
        if dm_name and suffix in dm_name:
            return what
    if slaves > 1 and io_min and io_opt and io_min > 4096 and io_opt == io_min * slaves:
        return "striped"
    if role == "LVM" and uuid.endswith("-cow"):
        return "snapshot"
    return "linear" if slaves >= 1 else None


def parse_sync_completed(text: str | None) -> float | None:
    """md.rst sync_completed: "done / total" sectors, or "none" when no sync runs (pure)."""
    if not text or "/" not in text:
        return None
    done, _, total = text.partition("/")
    done, total = done.strip(), total.strip()
    if not (done.isdigit() and total.isdigit()) or len(done) > 24 or len(total) > 24 or int(total) == 0:
        return None
    return round(100.0 * int(done) / int(total), 1)


def read_stack(
    name: str,
    sysfs_root: str = "/",
    *,
    fs: Sysfs | None = None,
    mounts: MountTable | None = None,
    loops: LoopTable | None = None,
) -> StackNode:
    """The tree under block device `name` (a whole device or a partition), down to the physical disks."""
    return _Reader(sysfs_root, fs, mounts, loops).node(name, 0, frozenset())


def tops_above(name: str, sysfs_root: str = "/", fs: Sysfs | None = None) -> list[str]:
    """The devices at the top of every stack `name` is part of, through holders/ (dm over md over sdb1
    over sdb: 'sdb' -> ['dm-0']). Empty when nothing holds it. A disk's partitions are followed too."""
    fs = fs or Sysfs(sysfs_root)
    tops: dict[str, None] = {}
    frontier = [name]
    seen: set[str] = set()
    for _ in range(MAX_DEPTH):
        following: list[str] = []
        for dev in frontier:
            if dev in seen:
                continue
            seen.add(dev)
            block_dir = fs.realpath(fs.p("/sys/class/block", dev))
            holders = fs.listdir(os.path.join(block_dir, "holders"))
            parts = [p for p in fs.listdir(block_dir) if fs.isfile(os.path.join(block_dir, p, "partition"))]
            if holders or parts:
                following.extend(holders)
                following.extend(parts)
            elif dev != name and not fs.isfile(os.path.join(block_dir, "partition")):
                tops[dev] = None
        if not following:
            break
        frontier = following
    return list(tops)


# --- btrfs ----------------------------------------------------------------------------------------


def list_btrfs(sysfs_root: str = "/", fs: Sysfs | None = None) -> list[StackNode]:
    """Every mounted btrfs file system with its devices (/sys/fs/btrfs/<fsid>)."""
    fs = fs or Sysfs(sysfs_root)
    base = fs.p("/sys/fs/btrfs")
    fsids = [fsid for fsid in fs.listdir(base) if fs.isdir(os.path.join(base, fsid, "devices"))]
    return [read_btrfs(fsid, sysfs_root, fs) for fsid in fsids]


def btrfs_profile(names: list[str]) -> str | None:
    """The data profile from allocation/data/'s per-profile directories (pure): "raid1", "single", ...
    While a balance converts, two are present; the one that is not "single" is the target (named first)."""
    known = ("raid1c4", "raid1c3", "raid10", "raid1", "raid6", "raid5", "raid0", "dup", "single")
    present = [p for p in known if p in names]
    return present[0] if present else None


def read_btrfs(fsid: str, sysfs_root: str = "/", fs: Sysfs | None = None) -> StackNode:
    fs = fs or Sysfs(sysfs_root)
    reader = _Reader(sysfs_root, fs, None, None)
    base = fs.p("/sys/fs/btrfs", fsid)
    notes = Notes()
    devices = fs.listdir(os.path.join(base, "devices"))[:MAX_MEMBERS]
    children = [reader.node(d, 1, frozenset()) for d in devices]
    # devinfo/<devid>/ carries missing and error_stats but not the device's name: they are totals for the
    # file system (btrfs device stats names them, and needs root).
    missing = errors = 0
    infos = fs.listdir(os.path.join(base, "devinfo"))
    for devid in infos:
        d = os.path.join(base, "devinfo", devid)
        if fs.read(os.path.join(d, "missing")) == "1":
            missing += 1
        for line in (fs.read(os.path.join(d, "error_stats")) or "").splitlines():
            _, _, count = line.partition(" ")
            value = parse_int(count.strip(), f"btrfs devinfo/{devid} error_stats", notes)
            errors += value or 0
    # A missing device is absent from devices/: one placeholder each, so the tree shows the hole.
    children.extend(StackNode(f"missing device {i + 1}", "missing") for i in range(missing))
    if errors:
        notes.add(f"btrfs error counters total {errors} (btrfs device stats names the device)")
    label = fs.read(os.path.join(base, "label")) or None
    profile = btrfs_profile(fs.listdir(os.path.join(base, "allocation", "data")))
    return StackNode(
        fsid,
        "btrfs",
        level=profile,
        label=label,
        raid_disks=len(infos) or len(devices),
        degraded=missing,
        member_errors=errors or None,
        children=tuple(children),
        notes=notes.as_tuple(),
    )


# --- bcachefs ---------------------------------------------------------------------------------------


def list_bcachefs(sysfs_root: str = "/", fs: Sysfs | None = None, mounts: MountTable | None = None) -> list[StackNode]:
    """Every mounted multi-device bcachefs, from the mount table: its source names its devices ("/dev/sdc1:/dev/sdc2",
    probe.mounts.multi_device_source). The mount table says nothing of replicas or each device's state
    (/sys/fs/bcachefs/<uuid>/ does, while mounted), so the set's level is left unknown."""
    fs = fs or Sysfs(sysfs_root)
    mounts = mounts if mounts is not None else read_mount_table(sysfs_root)
    reader = _Reader(sysfs_root, fs, mounts, None)
    out: dict[str, StackNode] = {}
    for mountpoint, (fstype, source) in mounts.fstypes.items():
        devices = multi_device_source(fstype, source)[1:]
        if len(devices) < 2 or source in out:
            continue
        children = tuple(reader.node(os.path.basename(d), 1, frozenset()) for d in devices[:MAX_MEMBERS])
        notes = ["replicas and each device's state are not in the mount table"]
        disks = list(dict.fromkeys(n.name for c in children for n in c.leaves()))
        if len(disks) < len(children):  # a copy on another partition of the same disk dies with that disk
            notes.append(f"its {len(children)} devices are on {len(disks)} disk(s): {', '.join(disks)}")
        out[source] = StackNode(
            source, "bcachefs", label=mountpoint, raid_disks=len(devices), children=children, notes=tuple(notes)
        )
    return list(out.values())


def bcachefs_of(name: str, sysfs_root: str = "/", fs: Sysfs | None = None) -> StackNode | None:
    """The mounted multi-device bcachefs `name` (or a partition of it) is a device of, else None."""
    for tree in list_bcachefs(sysfs_root, fs):
        if any(leaf.name == name for leaf in tree.leaves()) or any(c.name == name for c in tree.walk()):
            return tree
    return None


def btrfs_of(name: str, sysfs_root: str = "/", fs: Sysfs | None = None) -> str | None:
    """The fsid of the mounted btrfs whose devices include `name` (or a partition of it), else None."""
    fs = fs or Sysfs(sysfs_root)
    base = fs.p("/sys/fs/btrfs")
    for fsid in fs.listdir(base):
        devices = fs.listdir(os.path.join(base, fsid, "devices"))
        if name in devices:
            return fsid
    return None


def stack_of(name: str, sysfs_root: str = "/", fs: Sysfs | None = None) -> StackNode | None:
    """The stack a device is part of, for list, check and explain: its own tree when it is built from other
    devices, else the tree of the array above it (dm, md, or a mounted btrfs it belongs to), else None."""
    fs = fs or Sysfs(sysfs_root)
    block_dir = fs.realpath(fs.p("/sys/class/block", name))
    if fs.listdir(os.path.join(block_dir, "slaves")) or fs.isdir(os.path.join(block_dir, "md")):
        return read_stack(name, sysfs_root, fs=fs)
    tops = tops_above(name, sysfs_root, fs)
    if tops:
        return read_stack(tops[0], sysfs_root, fs=fs)
    fsid = btrfs_of(name, sysfs_root, fs)
    if fsid is not None:
        return read_btrfs(fsid, sysfs_root, fs)
    return bcachefs_of(name, sysfs_root, fs)
