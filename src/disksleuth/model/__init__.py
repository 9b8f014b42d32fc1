"""Frozen dataclasses that flow between the layers: probe -> model -> analysis -> store -> present.

Field names carry their units (`speed_gtps`, `read_mbps`, `lat_p99_us`). MB is 10^6 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disksleuth.model.card import CardRegisters  # at run time: the document validator resolves Device's hints

# Annotations only: importing typing (even for typing.TYPE_CHECKING) costs ~3 ms at start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from disksleuth.model.limits import LimitCeiling


SEVERITY_ORDER = {"ok": 0, "info": 1, "warn": 2, "critical": 3}


# --- link hops -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """Where a PCIe link is on the board, as the firmware or the kernel names it."""

    name: str  # "PCIEX16_2", "M.2_1" (SMBIOS); "3" (/sys/bus/pci/slots); "Onboard - NVMe" (a device label)
    source: str  # "smbios" (type 9), "smbios_onboard" (type 41), "pci_slot" (the kernel's), "label"
    bus_address: str | None  # the address the source gives, e.g. "0000:00:1c.4" or "0000:03:00"
    matched: str  # which end of the link it names: "port", "device", "secondary_bus", "slot_address", "label"
    firmware_type: str | None = None  # SMBIOS's words: "PCI Express 3 x16", "M.2 Socket 3"
    firmware_width: int | None = None  # electrical lanes the firmware states (data bus width)
    firmware_generation: int | None = None  # PCIe generation the firmware states
    physical_width: int | None = None  # SMBIOS 3.4: the connector's width
    current_usage: str | None = None  # "In Use", "Available"
    acpi_index: int | None = None


@dataclass(frozen=True)
class AerCount:
    """One kind of PCIe error a function counted, as its aer_dev_* file names it."""

    severity: str  # "correctable", "nonfatal", "fatal"
    name: str  # the kernel's name: "RxErr", "BadDLLP", "CmpltTO", or "dev_cor_errs_bit[15]" for an unnamed bit
    count: int


@dataclass(frozen=True)
class AerCounters:
    """A PCI function's PCIe Advanced Error Reporting counters since boot (drivers/pci/pcie/aer.c; sysfs
    aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal and a root port's aer_rootport_total_err_*). None: the
    file is missing or unreadable (no AER capability, firmware-first error handling, or an older kernel)."""

    bdf: str
    correctable: int | None  # TOTAL_ERR_COR: error messages the function reported
    nonfatal: int | None  # TOTAL_ERR_NONFATAL
    fatal: int | None  # TOTAL_ERR_FATAL
    # A root port's (or event collector's) totals: messages it received from everything below it, itself included.
    rootport_correctable: int | None = None
    rootport_nonfatal: int | None = None
    rootport_fatal: int | None = None
    counts: tuple[AerCount, ...] = ()  # the kinds with a non-zero count, in the files' order


@dataclass(frozen=True)
class PcieHop:
    """One PCIe link: a downstream-facing port (root port or switch downstream port) and the
    upstream-facing function below it (endpoint or switch upstream port)."""

    name: str  # BDF of the function below the port, e.g. "0000:03:00.0"
    port: str | None  # BDF of the port above it, e.g. "0000:00:1c.4"
    vendor_device: str | None  # "144d:a808"
    port_vendor_device: str | None
    speed_gtps: float | None  # negotiated (LnkSta)
    width: int | None
    max_speed_gtps: float | None  # the function's own LnkCap
    max_width: int | None
    port_max_speed_gtps: float | None  # the port's LnkCap
    port_max_width: int | None
    port_is_root: bool = False
    port_is_chipset: bool = False
    is_bridge: bool = False  # the lower end is a switch upstream port, not an endpoint
    slot: Slot | None = None  # the physical slot this link runs through, where the facts name one
    # PCIe AER counters of the function below the port and of the port (issue 36); None: none readable.
    aer: AerCounters | None = None
    port_aer: AerCounters | None = None
    kind: str = field(default="pcie", init=False)


@dataclass(frozen=True)
class BoardPeer:
    """Another PCI function, or a named slot, as the PCI tree shows it (probe.block.chipset_uplink)."""

    bdf: str  # the function; for a named slot with nothing in it, its root port
    class_code: int | None  # PCI class, e.g. 0x010601 (AHCI); None for an empty slot
    slot: Slot | None = None  # the physical slot it sits in, where the facts name one
    root_port: str | None = None  # the root port above it (the CPU's, for cpu_slots)


@dataclass(frozen=True)
class ChipsetUplink:
    """A drive behind the chipset: what else shares the chipset's one link to the CPU, and which named
    slots hang from the CPU's own root ports. Facts of the PCI tree only: which lanes a slot shares with
    what (board muxing) is in no source read here, so nothing here says so."""

    chipset: str  # "intel_pch" (PCH root ports; its DMI uplink is no link sysfs shows), "pcie" (AMD)
    uplink_port: str | None  # "pcie": the CPU root port the chipset hangs from
    uplink_speed_gtps: float | None  # "pcie": that link, negotiated
    uplink_width: int | None
    peers: tuple[BoardPeer, ...] = ()  # behind the same uplink, besides the drive's own functions
    cpu_slots: tuple[BoardPeer, ...] = ()  # named physical slots wired to a CPU root port


@dataclass(frozen=True)
class UsbHop:
    name: str  # kernel USB device name, e.g. "2-1.4"
    speed_mbps: float | None  # negotiated, from the `speed` attribute
    version: str | None  # the device's bcdUSB, e.g. "3.10"
    driver: str | None  # "uas" or "usb-storage"
    device_max_mbps: float | None  # what its bcdUSB promises at least
    host_max_mbps: float | None  # fastest root hub on the same host controller
    product: str | None = None
    vendor_product: str | None = None  # "152d:0583"
    kind: str = field(default="usb", init=False)


@dataclass(frozen=True)
class SataHop:
    name: str  # "link1"
    port: str | None  # "ata1"
    sata_spd_gbps: float | None
    sata_spd_limit_gbps: float | None  # a user/libata limit; None when "<unknown>" (no limit)
    hw_sata_spd_limit_gbps: float | None  # the port's own maximum
    drive_max_gbps: float | None = None  # from smartctl `interface_speed.max`, filled in by `check`
    kind: str = field(default="sata", init=False)


@dataclass(frozen=True)
class MmcHop:
    name: str  # card, e.g. "mmc0:aaaa"
    host: str | None  # "mmc0"
    card_type: str | None  # "SD", "MMC", "SDIO"
    card_name: str | None
    timing: str | None  # debugfs ios "timing spec" name, e.g. "sd uhs SDR104"; None when unreadable
    clock_hz: int | None
    bus_width_bits: int | None
    kind: str = field(default="mmc", init=False)


@dataclass(frozen=True)
class VirtualHop:
    """virtio, loop, zram, md, dm, ...: no physical ceiling of its own."""

    name: str
    driver: str  # "virtio", "loop", "zram", "md", "dm", ...
    backing: tuple[str, ...] = ()  # loop backing file, md/dm slaves
    kind: str = field(default="virtual", init=False)


Hop = PcieHop | UsbHop | SataHop | MmcHop | VirtualHop


@dataclass(frozen=True)
class HopCeiling:
    """A hop with its bandwidth, as computed by analysis.ceilings."""

    hop: Hop
    label: str  # "PCIe 2.0 x1", "USB 480 Mb/s (usb-storage)", "SATA 3.0 Gb/s"
    encoded_mbps: float | None  # after line encoding, at the negotiated rate
    current_mbps: float | None  # practical, at the negotiated rate
    capable_mbps: float | None  # practical, at the best rate both ends support
    capable_label: str | None
    fact: str | None = None  # the arithmetic, e.g. "PCIe 2.0 = 5 GT/s, 8b/10b, 500 MB/s per lane"


@dataclass(frozen=True)
class LinkChain:
    hops: tuple[HopCeiling, ...]
    current_ceiling_mbps: float | None
    capable_ceiling_mbps: float | None
    # The hop that sets the current ceiling: a link, or a cgroup I/O limit (a LimitCeiling: label and hop.kind too).
    bottleneck: HopCeiling | LimitCeiling | None
    # The cgroup I/O limits a run is under, each a hop of its own (issue 36): the current ceiling and the
    # bottleneck count them. None: not read (list, explain: no process of theirs measures anything).
    limits: tuple[LimitCeiling, ...] | None = None


# --- devices ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    name: str
    path: str  # /dev/NAME
    transport: str  # nvme, sata, sas, scsi, usb, mmc, virtio, loop, zram, md, dm, unknown
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    size_bytes: int | None = None
    rotational: bool | None = None
    removable: bool | None = None
    read_only: bool | None = None
    logical_block_size: int | None = None
    physical_block_size: int | None = None
    scheduler: str | None = None
    write_cache: str | None = None
    dev: str | None = None  # "MAJ:MIN"
    mountpoints: tuple[str, ...] = ()
    swap: bool = False
    holders: tuple[str, ...] = ()
    slaves: tuple[str, ...] = ()
    partitions: tuple[Device, ...] = ()
    parent: str | None = None  # set on partitions
    backing_file: str | None = None  # loop devices
    # Loop devices: loop/dio (False: the loop driver reads and writes its backing through the page cache, so
    # figures measure memory), and the block device holding the backing file (or backing it): context only,
    # since a run on the loop device belongs to the loop device (issue 20).
    loop_direct_io: bool | None = None
    backing_device: str | None = None
    # Loop links (sysfs shows none of them as holders): loop devices attached to this device, the block
    # device a loop device is attached to, and other loop devices attached to the same backing file.
    backs: tuple[str, ...] = ()
    backed_by: str | None = None
    shares_backing_with: tuple[str, ...] = ()
    hops: tuple[Hop, ...] = ()
    # Set when a PCIe hop crosses the chipset: who shares its uplink (the behind_chipset finding's words).
    chipset_uplink: ChipsetUplink | None = None
    notes: tuple[str, ...] = ()  # things we could not read, in plain words
    sysfs_path: str | None = None  # resolved, relative to the sysfs root
    fstype: str | None = None  # file system on the device itself (mountinfo, else the udev database)
    # An SD card's or eMMC's registers as sysfs and debugfs print them (issue 39); analysis.card_registers
    # decodes them. Never in a document as they are: the CID holds the card's serial.
    card_registers: CardRegisters | None = None

    @property
    def is_partition(self) -> bool:
        return self.parent is not None

    @property
    def is_unattached(self) -> bool:
        """An unattached loop device or unconfigured zram (size 0): lsblk hides them, and so do we."""
        return self.transport in ("loop", "zram") and not self.size_bytes

    def all_mountpoints(self) -> tuple[str, ...]:
        mps = list(self.mountpoints)
        for part in self.partitions:
            mps.extend(part.mountpoints)
        return tuple(dict.fromkeys(mps))  # a bcachefs over two partitions of this disk is one mount, said once


# --- findings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str  # ok, info, warn, critical
    message: str
    evidence: Mapping[str, Any]
    hint: str
    device: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "evidence": dict(self.evidence),
            "hint": self.hint,
        }
        if self.device:
            out["device"] = self.device
        return out


def worst_severity(findings: list[Finding] | tuple[Finding, ...]) -> str:
    if not findings:
        return "ok"
    return max((f.severity for f in findings), key=lambda s: SEVERITY_ORDER.get(s, 0))
