"""Block devices and the path from each one up to the CPU, read from sysfs under a root.

Kernel layout relied on (Documentation/ABI/stable/sysfs-block, sysfs-bus-pci, sysfs-bus-usb):
  /sys/block/NAME -> ../devices/<bus path>/block/NAME   (symlink; partitions are NAME/NAMEp1 dirs)
  PCIe:  .../0000:00:1c.4/0000:03:00.0/nvme/nvme0/nvme0n1
  NVMe multipath: /sys/block/nvme0n1 -> ../devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1,
         and nvme-subsys0/nvme0 -> ../../../pci0000:00/.../nvme/nvme0 (one link per controller)
  USB:   .../0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb
  SATA:  .../0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda, link attrs in
         ata1/link1/ata_link/link1/{sata_spd,sata_spd_limit,hw_sata_spd_limit}
  MMC:   .../mmc_host/mmc0/mmc0:aaaa/block/mmcblk0, bus timing in debugfs mmc0/ios
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from disksleuth.errors import DeviceNotFound
from disksleuth.model import Device, Hop, MmcHop, PcieHop, SataHop, Slot, UsbHop, VirtualHop
from disksleuth.model.card import CardRegisters
from disksleuth.probe.aer import read_aer_at
from disksleuth.probe.loops import (
    LoopTable,
    block_key,
    block_name,
    holding_device,
    parse_backing_file,
    read_loop_table,
)
from disksleuth.probe.mmc_card import read_card_registers
from disksleuth.probe.mounts import MountTable, read_mount_table
from disksleuth.probe.slots import SlotTable, read_slot_table
from disksleuth.probe.sysfs import (
    BDF_RE,
    Notes,
    Sysfs,
    block_cap_note,
    block_device_names,
    parse_int,
    parse_mmc_ios,
    parse_pcie_speed,
    parse_pcie_width,
    parse_sata_speed,
    parse_scheduler,
    parse_usb_speed,
    refused_notes,
)
from disksleuth.probe.uplink import BoardFn, chipset_uplink

_USB_DEV_RE = re.compile(r"^\d+-\d+(?:\.\d+)*$")
_USB_IFACE_RE = re.compile(r"^\d+-\d+(?:\.\d+)*:\d+\.\d+$")
_USB_ROOT_RE = re.compile(r"^usb\d+$")
_ATA_PORT_RE = re.compile(r"^ata\d+$")
_MMC_CARD_RE = re.compile(r"^mmc\d+:[0-9a-fA-F]{4}$")
_MMC_HOST_RE = re.compile(r"^mmc\d+$")
_NVME_CTRL_RE = re.compile(r"^nvme\d+$")

# PCI class 0x0604xx: PCI-to-PCI bridge (root ports and switch ports). include/linux/pci_ids.h
_CLASS_BRIDGE_PCI = 0x0604

# Chipset (PCH) root ports. Intel PCHs place their root ports at device 0x1b, 0x1c and 0x1d on
# bus 0; CPU root ports sit at 0x01, 0x06 and friends. Their traffic shares the DMI uplink.
_INTEL_PCH_ROOT_PORT_SLOTS = {0x1B, 0x1C, 0x1D}
# AMD chipset (Promontory) switch ports, from pci.ids: 57ad/57a3/57a4 (X570), 43e9/43ea (500
# series), 43f4/43f5 (600 series), 43c6/43c7 (400 series). Their uplink is a visible PCIe link.
_AMD_CHIPSET_DEVICE_IDS = {0x57AD, 0x57A3, 0x57A4, 0x43E9, 0x43EA, 0x43F4, 0x43F5, 0x43C6, 0x43C7}


def list_devices(
    sysfs_root: str = "/", include_partitions: bool = True, notes: list[str] | None = None, unattached: bool = True
) -> list[Device]:
    """Every whole block device under <root>/sys/block, with partitions attached: the first MAX_BLOCK_DEVICES of
    them, with a line in `notes` saying so when there are more. With `unattached` false, the devices that would be
    `is_unattached` are left unread (a machine's dozens of free loop devices cost `list` 12 ms: issue 37)."""
    fs = Sysfs(sysfs_root)
    mounts = read_mount_table(sysfs_root)
    loops = read_loop_table(sysfs_root)
    slots = read_slot_table(sysfs_root, fs)
    names, total = block_device_names(fs)
    cap_note = block_cap_note(total, len(names))
    if cap_note and notes is not None:
        notes.append(cap_note)
    if not unattached:
        names = [name for name in names if not _unattached(fs, name)]
    board: list[BoardFn] = []

    def read_board_once() -> list[BoardFn]:  # read only when a drive is behind the chipset, then once
        if not board:
            board.extend(board_functions(fs, slots))
        return board

    return [
        read_device(name, sysfs_root, mounts=mounts, fs=fs, loops=loops, slots=slots, board=read_board_once)
        for name in names
    ]


def _unattached(fs: Sysfs, name: str) -> bool:
    """What read_device would give `is_unattached`: a loop or zram device, there, of no size (or none readable)."""
    if not name.startswith(("loop", "zram")):
        return False
    block_dir = fs.realpath(fs.p("/sys/block", name))
    return fs.isdir(block_dir) and not parse_int(fs.read(os.path.join(block_dir, "size")), "size", Notes())


def read_device(
    name: str,
    sysfs_root: str = "/",
    *,
    mounts: MountTable | None = None,
    fs: Sysfs | None = None,
    loops: LoopTable | None = None,
    slots: SlotTable | None = None,
    board: Callable[[], list[BoardFn]] | None = None,
) -> Device:
    fs = fs or Sysfs(sysfs_root)
    mounts = mounts if mounts is not None else read_mount_table(sysfs_root)
    loops = loops if loops is not None else read_loop_table(sysfs_root)
    notes = Notes()
    refused_before = len(fs.refused)
    link = fs.p("/sys/block", name)
    block_dir = fs.realpath(link)
    if not fs.isdir(block_dir):
        if not fs.leaves_root(link):
            notes.add(f"/sys/block/{name} is a dangling link")
        refused_notes(fs, refused_before, notes)
        return Device(name=name, path=f"/dev/{name}", transport="unknown", notes=notes.as_tuple())
    rel_path = fs.rel(block_dir)
    transport = detect_transport(name, rel_path, has_md=fs.isdir(os.path.join(block_dir, "md")))

    def attr(rel: str) -> str | None:
        return fs.read(os.path.join(block_dir, rel))

    size_sectors = parse_int(attr("size"), "size", notes)
    dev = attr("dev")
    model, serial, firmware = _identity(fs, block_dir, transport, notes)
    holders = tuple(fs.listdir(os.path.join(block_dir, "holders")))
    slaves = tuple(fs.listdir(os.path.join(block_dir, "slaves")))
    backing = attr("loop/backing_file") if transport == "loop" else None
    partitions = tuple(
        _read_partition(fs, block_dir, part, name, mounts, loops)
        for part in fs.listdir(block_dir)
        if fs.isfile(os.path.join(block_dir, part, "partition"))
    )
    dm_name = attr("dm/name")
    if slots is None and transport not in ("loop", "zram", "md", "dm", "virtio"):
        slots = read_slot_table(sysfs_root, fs)
    hops = read_hops(fs, block_dir, transport, name, notes, slaves=slaves, backing=backing, slots=slots)
    if slots is not None and any(isinstance(h, PcieHop) for h in hops):
        for note in slots.notes:  # why a slot may be missing or doubtful (a cut-short table, no root)
            notes.add(note)
    mountpoints = mounts.mountpoints_for(name, dev, dm_name)
    swap = mounts.is_swap(name, dm_name)
    backing_key = loops.keys.get(name)
    fstype = _fstype(fs, mounts, mountpoints, dev, swap)
    uplink = None
    pcie = [h for h in hops if isinstance(h, PcieHop)]
    if any(h.port_is_chipset for h in pcie):
        uplink = chipset_uplink(pcie, board() if board is not None else board_functions(fs, slots))
    card_registers = _card_registers(fs, block_dir) if transport == "mmc" else None
    refused_notes(fs, refused_before, notes)  # the card's links too: a register file that leaves the root is said
    return Device(
        name=name,
        path=f"/dev/{name}",
        transport=transport,
        model=model,
        serial=serial,
        firmware=firmware,
        # The `size` attribute counts 512-byte sectors whatever the logical block size
        # (include/linux/blkdev.h SECTOR_SHIFT).
        size_bytes=size_sectors * 512 if size_sectors is not None else None,
        rotational=_bool(attr("queue/rotational")),
        removable=_bool(attr("removable")),
        read_only=_bool(attr("ro")),
        logical_block_size=parse_int(attr("queue/logical_block_size"), "logical_block_size", notes),
        physical_block_size=parse_int(attr("queue/physical_block_size"), "physical_block_size", notes),
        scheduler=parse_scheduler(attr("queue/scheduler")),
        write_cache=attr("queue/write_cache"),
        dev=dev,
        mountpoints=mountpoints,
        swap=swap,
        holders=holders,
        slaves=slaves,
        partitions=partitions,
        backing_file=backing,
        backs=loops.attached_to(block_key(dev)),
        backed_by=block_name(backing_key, sysfs_root),
        loop_direct_io=_bool(attr("loop/dio")) if transport == "loop" and backing else None,
        backing_device=holding_device(parse_backing_file(backing), backing_key, mounts, sysfs_root)
        if transport == "loop"
        else None,
        shares_backing_with=loops.attached_to(backing_key, besides=name),
        hops=hops,
        chipset_uplink=uplink,
        notes=notes.as_tuple(),
        sysfs_path=rel_path,
        fstype=fstype,
        card_registers=card_registers,
    )


def _card_registers(fs: Sysfs, block_dir: str) -> CardRegisters | None:
    """The registers of the card under an mmcblk device (its `device` link: .../mmc_host/mmc0/mmc0:aaaa)."""
    card_dir = fs.realpath(os.path.join(block_dir, "device"))
    base = os.path.basename(card_dir)
    if not _MMC_CARD_RE.match(base) or not fs.isdir(card_dir):
        return None
    return read_card_registers(fs, card_dir, base.split(":")[0])


def parse_udev_fstype(text: str | None) -> str | None:
    """ID_FS_TYPE from a udev database entry (/run/udev/data/bMAJ:MIN), as lsblk falls back to.

    systemd src/libudev/libudev-device-internal / udev-db: one property per line, "E:KEY=VALUE"; blkid
    fills ID_FS_TYPE ("ext4", "vfat", "swap", "crypto_LUKS", "LVM2_member", ...)."""
    for line in (text or "").splitlines():
        if line.startswith("E:ID_FS_TYPE="):
            return line.partition("=")[2].strip() or None
    return None


def _fstype(fs: Sysfs, mounts: MountTable, mountpoints: tuple[str, ...], dev: str | None, swap: bool) -> str | None:
    """The mounted file system's type, else swap, else what udev's blkid probe recorded (unmounted)."""
    fstype = mounts.fstype_for(mountpoints)
    if fstype:
        return fstype
    if swap:
        return "swap"
    return parse_udev_fstype(fs.read(fs.p("/run/udev/data", f"b{dev}"))) if dev else None


def _read_partition(
    fs: Sysfs, block_dir: str, part: str, parent: str, mounts: MountTable, loops: LoopTable
) -> Device:
    notes = Notes()
    part_dir = os.path.join(block_dir, part)
    size = parse_int(fs.read(os.path.join(part_dir, "size")), f"{part} size", notes)
    dev = fs.read(os.path.join(part_dir, "dev"))
    mountpoints = mounts.mountpoints_for(part, dev, None)
    swap = mounts.is_swap(part, None)
    return Device(
        name=part,
        path=f"/dev/{part}",
        transport="partition",
        size_bytes=size * 512 if size is not None else None,
        dev=dev,
        mountpoints=mountpoints,
        swap=swap,
        holders=tuple(fs.listdir(os.path.join(part_dir, "holders"))),
        backs=loops.attached_to(block_key(dev)),
        parent=parent,
        notes=notes.as_tuple(),
        sysfs_path=fs.rel(part_dir),
        fstype=_fstype(fs, mounts, mountpoints, dev, swap),
    )


def detect_transport(name: str, rel_path: str, has_md: bool = False) -> str:
    """Transport from the device name and its resolved sysfs path (pure)."""
    parts = rel_path.split("/")
    if name.startswith("loop"):
        return "loop"
    if name.startswith("zram"):
        return "zram"
    if name.startswith("dm-"):
        return "dm"
    if name.startswith("md") and has_md:
        return "md"
    if "nvme-subsystem" in parts or any(_NVME_CTRL_RE.match(p) for p in parts) or name.startswith("nvme"):
        return "nvme"
    if any(_USB_ROOT_RE.match(p) for p in parts):
        return "usb"
    if "mmc_host" in parts:
        return "mmc"
    if any(_ATA_PORT_RE.match(p) for p in parts):
        return "sata"
    if any(p.startswith(("end_device-", "expander-")) for p in parts):
        return "sas"
    if any(re.match(r"^virtio\d+$", p) for p in parts):
        return "virtio"
    if any(re.match(r"^target\d+:\d+:\d+$", p) for p in parts):
        return "scsi"
    return "unknown"


def _identity(fs: Sysfs, block_dir: str, transport: str, notes: Notes) -> tuple[str | None, ...]:
    dev_dir = os.path.join(block_dir, "device")
    if transport == "nvme":
        # For a multipath head, `device` is the nvme-subsys dir, which carries the same attributes.
        return (
            fs.read(os.path.join(dev_dir, "model")),
            fs.read(os.path.join(dev_dir, "serial")),
            fs.read(os.path.join(dev_dir, "firmware_rev")),
        )
    if transport in ("sata", "sas", "scsi", "usb"):
        vendor = fs.read(os.path.join(dev_dir, "vendor"))
        model = fs.read(os.path.join(dev_dir, "model"))
        # libata reports every ATA drive's vendor as "ATA" (drivers/ata/libata-scsi.c); drop it.
        full_model = model if vendor in (None, "", "ATA") else f"{vendor} {model or ''}".strip()
        return (
            full_model,
            _vpd_serial(fs.read_bytes(os.path.join(dev_dir, "vpd_pg80"))),
            fs.read(os.path.join(dev_dir, "rev")),
        )
    if transport == "mmc":
        return (
            fs.read(os.path.join(dev_dir, "name")),
            fs.read(os.path.join(dev_dir, "serial")),
            fs.read(os.path.join(dev_dir, "fwrev")),
        )
    if transport == "virtio":
        return None, fs.read(os.path.join(block_dir, "serial")) or None, None
    return None, None, None


def _vpd_serial(raw: bytes | None) -> str | None:
    # VPD page 0x80 (Unit Serial Number), SPC-4 7.8.19: 4-byte header, then ASCII.
    if not raw or len(raw) <= 4:
        return None
    return raw[4:].decode("ascii", "replace").strip(" \x00") or None


def _bool(text: str | None) -> bool | None:
    if text in ("0", "1"):
        return text == "1"
    return None


# --- the link chain --------------------------------------------------------------------------


def read_hops(
    fs: Sysfs,
    block_dir: str,
    transport: str,
    name: str,
    notes: Notes,
    *,
    slaves: tuple[str, ...] = (),
    backing: str | None = None,
    slots: SlotTable | None = None,
) -> tuple[Hop, ...]:
    """Hops ordered from the device up to the root port."""
    if transport in ("loop", "zram", "md", "dm"):
        return (VirtualHop(name=name, driver=transport, backing=(backing,) if backing else slaves),)
    if transport == "virtio":
        return (VirtualHop(name=name, driver="virtio"),)
    device_dirs = _controller_paths(fs, block_dir, notes)
    if not device_dirs:
        return ()
    # Native multipath: every controller is a path; report the first and note the rest.
    if len(device_dirs) > 1:
        others = ", ".join(os.path.basename(d) for d in device_dirs[1:])
        notes.add(f"NVMe multipath: also reachable through {others}; showing the first path")
    path = device_dirs[0]
    hops: list[Hop] = []
    ancestors = _ancestors(fs, path)  # bottom-up
    names = [os.path.basename(a) for a in ancestors]
    for hop in (
        _mmc_hop(fs, ancestors, names, notes),
        _sata_hop(fs, ancestors, names, notes),
        _usb_hop(fs, ancestors, names, notes),
    ):
        if hop:
            hops.append(hop)
    hops.extend(pcie_hops(fs, ancestors, names, notes, slots))
    return tuple(hops)


def _controller_paths(fs: Sysfs, block_dir: str, notes: Notes) -> list[str]:
    rel = fs.rel(block_dir).split("/")
    if "nvme-subsystem" in rel:
        subsys = os.path.dirname(block_dir)
        ctrls = [
            fs.realpath(os.path.join(subsys, entry))
            for entry in fs.listdir(subsys)
            if _NVME_CTRL_RE.match(entry) and fs.islink(os.path.join(subsys, entry))
        ]
        live = [c for c in ctrls if fs.isdir(c)]
        if not live:
            notes.add("NVMe subsystem lists no reachable controller; link chain unknown")
        return live
    return [block_dir]


def _ancestors(fs: Sysfs, path: str) -> list[str]:
    top = fs.p("/sys/devices")
    out = []
    cur = path
    while cur.startswith(top) and cur != top:
        out.append(cur)
        cur = os.path.dirname(cur)
    return out


def _mmc_hop(fs: Sysfs, ancestors: list[str], names: list[str], notes: Notes) -> MmcHop | None:
    for anc, base in zip(ancestors, names, strict=True):
        if _MMC_CARD_RE.match(base):
            host = base.split(":")[0]
            timing = clock = width = None
            ios = fs.read(fs.p("/sys/kernel/debug", host, "ios"))
            if ios is not None:
                timing, clock, width = parse_mmc_ios(ios)
            else:
                notes.add(f"MMC bus timing unknown: debugfs {host}/ios is not readable (needs root)")
            return MmcHop(
                name=base,
                host=host,
                card_type=fs.read(os.path.join(anc, "type")),
                card_name=fs.read(os.path.join(anc, "name")),
                timing=timing,
                clock_hz=clock,
                bus_width_bits=width,
            )
    return None


def _sata_hop(fs: Sysfs, ancestors: list[str], names: list[str], notes: Notes) -> SataHop | None:
    for anc, base in zip(ancestors, names, strict=True):
        if _ATA_PORT_RE.match(base):
            link_dirs = []
            for link in fs.listdir(anc):
                if link.startswith("link"):
                    inner = os.path.join(anc, link, "ata_link", link)
                    if fs.isdir(inner):
                        link_dirs.append((link, inner))
            if not link_dirs:
                notes.add(f"{base}: no ata_link attributes found; SATA speed unknown")
                return SataHop(base, base, None, None, None)
            # With a port multiplier there are several links; the host link is the first.
            link, inner = link_dirs[0]

            def spd(attr: str, d: str = inner, w: str = link) -> float | None:
                return parse_sata_speed(fs.read(os.path.join(d, attr)), f"{w} {attr}", notes)

            return SataHop(
                name=link,
                port=base,
                sata_spd_gbps=spd("sata_spd"),
                sata_spd_limit_gbps=spd("sata_spd_limit"),
                hw_sata_spd_limit_gbps=spd("hw_sata_spd_limit"),
            )
    return None


def usb_version_max_mbps(version: str | None) -> float | None:
    """The least a device's bcdUSB promises. "3.10" may still be a 5 Gb/s-only device, so any 3.x
    counts as 5000; 2.x as 480; 1.1 as 12."""
    if not version:
        return None
    try:
        v = float(version)
    except ValueError:
        return None
    if v >= 3.0:
        return 5000.0
    if v >= 2.0:
        return 480.0
    return 12.0


def _usb_hop(fs: Sysfs, ancestors: list[str], names: list[str], notes: Notes) -> UsbHop | None:
    driver = None
    for i, base in enumerate(names):
        if _USB_IFACE_RE.match(base):
            driver = fs.link_name(os.path.join(ancestors[i], "driver"))
        if _USB_DEV_RE.match(base):
            anc = ancestors[i]
            version = fs.read(os.path.join(anc, "version"))
            version = version.strip() if version else None
            host_max = None
            for j in range(i + 1, len(names)):
                if _USB_ROOT_RE.match(names[j]):
                    controller = os.path.dirname(ancestors[j])
                    speeds = [
                        parse_usb_speed(fs.read(os.path.join(controller, hub, "speed")), hub, notes)
                        for hub in fs.listdir(controller)
                        if _USB_ROOT_RE.match(hub)
                    ]
                    known = [s for s in speeds if s is not None]
                    host_max = max(known) if known else None
                    break
            vid = fs.read(os.path.join(anc, "idVendor"))
            pid = fs.read(os.path.join(anc, "idProduct"))
            return UsbHop(
                name=base,
                speed_mbps=parse_usb_speed(fs.read(os.path.join(anc, "speed")), f"{base} speed", notes),
                version=version,
                driver=driver,
                device_max_mbps=usb_version_max_mbps(version),
                host_max_mbps=host_max,
                product=fs.read(os.path.join(anc, "product")),
                vendor_product=f"{vid}:{pid}" if vid and pid else None,
            )
    return None


@dataclass
class _PciFn:
    path: str
    bdf: str
    vendor_device: str | None
    class_code: int | None
    speed: float | None
    width: int | None
    max_speed: float | None
    max_width: int | None

    @property
    def is_bridge(self) -> bool:
        return self.class_code is not None and (self.class_code >> 8) == _CLASS_BRIDGE_PCI

    @property
    def has_link(self) -> bool:
        return self.max_speed is not None or self.speed is not None

    @property
    def cap_speed(self) -> float | None:
        return self.max_speed  # max_link_speed: the kernel has already read LnkCap2 or LnkCap


def read_pci_fn(fs: Sysfs, path: str, notes: Notes) -> _PciFn:
    bdf = os.path.basename(path)

    def a(attr: str) -> str | None:
        return fs.read(os.path.join(path, attr))

    vendor, device = a("vendor"), a("device")
    vd = f"{vendor[2:]}:{device[2:]}" if vendor and device and vendor.startswith("0x") else None
    return _PciFn(
        path=path,
        bdf=bdf,
        vendor_device=vd,
        class_code=parse_int(a("class"), f"{bdf} class", notes, base=16),
        speed=parse_pcie_speed(a("current_link_speed"), f"{bdf} current_link_speed", notes),
        width=parse_pcie_width(a("current_link_width"), f"{bdf} current_link_width", notes),
        max_speed=parse_pcie_speed(a("max_link_speed"), f"{bdf} max_link_speed", notes),
        max_width=parse_pcie_width(a("max_link_width"), f"{bdf} max_link_width", notes),
    )


class LinkEnd(Protocol):
    """One end of a PCIe link, read from sysfs or from pasted lspci text."""

    @property
    def bdf(self) -> str: ...
    @property
    def vendor_device(self) -> str | None: ...
    @property
    def speed(self) -> float | None: ...
    @property
    def width(self) -> int | None: ...
    @property
    def cap_speed(self) -> float | None: ...
    @property
    def max_width(self) -> int | None: ...
    @property
    def is_bridge(self) -> bool: ...


def link_hop(lower: LinkEnd, port: LinkEnd, port_is_root: bool, slot: Slot | None = None) -> PcieHop:
    """The link between a function and the port above it. Both ends report the same negotiated state; an end
    that reports none takes the other's. Each keeps its own capability."""
    return PcieHop(
        name=lower.bdf,
        port=port.bdf,
        vendor_device=lower.vendor_device,
        port_vendor_device=port.vendor_device,
        speed_gtps=lower.speed if lower.speed is not None else port.speed,
        width=lower.width if lower.width is not None else port.width,
        max_speed_gtps=lower.cap_speed,
        max_width=lower.max_width,
        port_max_speed_gtps=port.cap_speed,
        port_max_width=port.max_width,
        port_is_root=port_is_root,
        port_is_chipset=is_chipset_port(port.bdf, port.vendor_device, port_is_root)
        or is_chipset_port(lower.bdf, lower.vendor_device, False),
        is_bridge=lower.is_bridge,
        slot=slot,
    )


def is_chipset_port(fn_bdf: str, vendor_device: str | None, is_root: bool) -> bool:
    if not vendor_device:
        return False
    vendor, _, device = vendor_device.partition(":")
    try:
        dev_id = int(device, 16)
        slot = int(fn_bdf.split(":")[2].split(".")[0], 16)
    except (ValueError, IndexError):
        return False
    if vendor == "8086" and is_root and slot in _INTEL_PCH_ROOT_PORT_SLOTS:
        return True
    return vendor == "1022" and dev_id in _AMD_CHIPSET_DEVICE_IDS


def pcie_hops(
    fs: Sysfs,
    ancestors: list[str],
    names: list[str],
    notes: Notes,
    slots: SlotTable | None = None,
    *,
    with_aer: bool = True,
) -> list[PcieHop]:
    """Pair PCI functions top-down into links: RP -> [USP -> DSP]* -> EP.

    A root port or switch downstream port faces down; the function below it faces up. The two
    ends of one link report the same negotiated state (LnkSta) but each its own LnkCap. With
    `with_aer`, each hop carries both ends' PCIe error counters (probe.aer).
    """
    fns = [
        read_pci_fn(fs, anc, notes)
        for anc, base in reversed(list(zip(ancestors, names, strict=True)))
        if BDF_RE.match(base)
    ]
    hops: list[PcieHop] = []
    port: _PciFn | None = None
    port_is_root = False
    for idx, fn in enumerate(fns):
        if port is None:
            if fn.is_bridge:
                port, port_is_root = fn, idx == 0
            continue  # an RC-integrated endpoint (no link) stays out of the chain
        if port.has_link or fn.has_link:
            slot = slots.slot_for(port.bdf, fn.bdf) if slots is not None else None
            hop = link_hop(fn, port, port_is_root, slot)
            if with_aer:
                aer, port_aer = read_aer_at(fs, fn.path, fn.bdf, notes), read_aer_at(fs, port.path, port.bdf, notes)
                hop = replace(hop, aer=aer, port_aer=port_aer)
            hops.append(hop)
        # A switch upstream port is followed by its downstream port, which faces down again.
        port = None
        port_is_root = False
    hops.reverse()  # device first, root port last
    return hops


_MAX_BOARD_FUNCTIONS = 8192


def board_functions(fs: Sysfs, slots: SlotTable | None) -> list[BoardFn]:
    """Every PCI function with its path to the CPU, for who shares a chipset uplink (probe.uplink)."""
    out = []
    bus_dir = fs.p("/sys/bus/pci/devices")
    for bdf in fs.listdir(bus_dir)[:_MAX_BOARD_FUNCTIONS]:
        path = fs.realpath(os.path.join(bus_dir, bdf))
        if not BDF_RE.match(bdf) or not fs.isdir(path):
            continue
        chain = []
        cur = path
        while BDF_RE.match(os.path.basename(cur)):
            chain.append(cur)
            cur = os.path.dirname(cur)
        fn = read_pci_fn(fs, path, Notes())
        top = len(chain) == 1
        own = slots.slot_for(None, fn.bdf) if slots is not None and top and fn.is_bridge else None
        out.append(
            BoardFn(
                bdf=fn.bdf,
                vendor_device=fn.vendor_device,
                class_code=fn.class_code,
                is_bridge=fn.is_bridge,
                top_level=top,
                is_chipset_port=top and fn.is_bridge and is_chipset_port(fn.bdf, fn.vendor_device, True),
                hops=tuple(pcie_hops(fs, chain, [os.path.basename(p) for p in chain], Notes(), slots, with_aer=False)),
                own_slot=own if own is not None and own.source == "smbios" and own.matched == "device" else None,
            )
        )
    return out


def resolve_disk_name(arg: str, sysfs_root: str = "/") -> str:
    """'nvme0n1', '/dev/nvme0n1' or a partition '/dev/sda1' -> the whole-disk name in sysfs."""
    fs = Sysfs(sysfs_root)
    name = os.path.basename(arg.rstrip("/"))
    if name in ("", ".", ".."):  # "" would be /sys/block itself, read as a disk
        raise DeviceNotFound(f"{arg!r}: no such block device")
    if name.startswith("mapper") or "/mapper/" in arg:
        real = os.path.realpath(arg)
        name = os.path.basename(real)
    if fs.isdir(fs.p("/sys/block", name)):
        return name
    part = fs.realpath(fs.p("/sys/class/block", name))
    if fs.isfile(os.path.join(part, "partition")):
        return os.path.basename(os.path.dirname(part))
    raise DeviceNotFound(f"{arg}: no such block device" + ("" if sysfs_root == "/" else f" in {sysfs_root}"))


def device_node(arg: str) -> str:
    """The /dev path for smartctl: a path that exists is used as given (it may be a node sysfs does not
    list, like /dev/sg0); a name ('vda', 'nvme0n1') resolves as for explain, so both commands accept the
    same names."""
    if "/" in arg and os.path.exists(arg):
        return arg
    return "/dev/" + resolve_disk_name(arg, "/")
