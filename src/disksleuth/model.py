"""Frozen dataclasses that flow between the layers: probe -> model -> analysis -> store -> present.

Field names carry their units (`speed_gtps`, `read_mbps`, `lat_p99_us`). MB is 10^6 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SEVERITY_ORDER = {"ok": 0, "info": 1, "warn": 2, "critical": 3}


# --- link hops -------------------------------------------------------------------------------


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
    kind: str = field(default="pcie", init=False)


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
    bottleneck: HopCeiling | None  # the hop that sets the current ceiling


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
    hops: tuple[Hop, ...] = ()
    notes: tuple[str, ...] = ()  # things we could not read, in plain words
    sysfs_path: str | None = None  # resolved, relative to the sysfs root

    @property
    def is_partition(self) -> bool:
        return self.parent is not None

    def all_mountpoints(self) -> tuple[str, ...]:
        mps = list(self.mountpoints)
        for part in self.partitions:
            mps.extend(part.mountpoints)
        return tuple(mps)


@dataclass(frozen=True)
class PciFunction:
    """One PCI function as `links` shows it (NICs and HBAs too)."""

    bdf: str
    vendor_device: str | None
    class_code: int | None
    speed_gtps: float | None
    width: int | None
    max_speed_gtps: float | None
    max_width: int | None
    parent: str | None  # the port above, when it is a PCI function
    parent_max_speed_gtps: float | None
    parent_max_width: int | None
    driver: str | None
    role: str = "endpoint"  # root_port, upstream_port, downstream_port, endpoint, integrated
    notes: tuple[str, ...] = ()


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


# --- benchmark results -----------------------------------------------------------------------


@dataclass(frozen=True)
class SeriesPoint:
    """One status interval of a running test (per second by default)."""

    t_s: float
    read_mbps: float
    write_mbps: float
    iops: float
    temperature_c: float | None = None


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest test class

    id: str  # "RND4K_Q32T1_read"
    rw: str  # fio rw= value
    bs_bytes: int
    iodepth: int
    numjobs: int
    read_mbps: float | None
    read_iops: float | None
    write_mbps: float | None
    write_iops: float | None
    lat_mean_us: float | None
    lat_p50_us: float | None
    lat_p99_us: float | None
    lat_p999_us: float | None
    lat_max_us: float | None
    runtime_s: float
    fio_command: str
    cache_affected: bool
    engine: str
    fio_version: str | None
    rwmixread: int | None = None
    sync: bool = False
    direct: bool = True
    cpu_usr_pct: float | None = None
    cpu_sys_pct: float | None = None
    series: tuple[SeriesPoint, ...] = ()
    pct_of_reference: Mapping[str, float] | None = None
    notes: tuple[str, ...] = ()
    # Adaptive length (steady state); None when the test ran for a fixed time.
    stability_pct: float | None = None
    settled: bool | None = None
    burst_mbps: float | None = None
    sustained_mbps: float | None = None

    @property
    def writes(self) -> bool:
        return "write" in self.rw or self.rw in ("rw", "readwrite", "randrw", "trimwrite")


@dataclass(frozen=True)
class Run:
    target: str
    profile: str
    started_at: str  # ISO 8601, local time with offset
    fio_version: str | None
    engine: str
    host: Mapping[str, Any]
    tests: tuple[TestResult, ...]
    id: int | None = None
    kind: str = "bench"  # bench or check
    device: str | None = None  # the block device the target lives on, when known
    size_bytes: int | None = None
    finished_at: str | None = None
    notes: tuple[str, ...] = ()
    reference: tuple[TestResult, ...] = ()  # the RAM-backed reference (riscos)
    health_before: Health | None = None
    health_after: Health | None = None
    health_changes: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    temperature_series: tuple[tuple[float, float], ...] = ()  # (seconds since start, °C)
    temperature_source: str | None = None  # "hwmon" or "smartctl"
    disk: Device | None = None  # the physical disk behind the target, when there is one


# --- health ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LbaFormat:
    id: int
    data_bytes: int
    metadata_bytes: int
    relative_performance: int  # NVMe RP: 0 best, 1 better, 2 good, 3 degraded
    in_use: bool


@dataclass(frozen=True)
class Health:
    """Normalised drive health. Every field is optional: many drives omit many."""

    device: str | None = None
    protocol: str | None = None  # "NVMe", "ATA", "SCSI"
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    capacity_bytes: int | None = None
    smart_passed: bool | None = None
    temperature_c: float | None = None
    temperature_warning_c: float | None = None
    temperature_critical_c: float | None = None
    power_on_hours: int | None = None
    power_cycles: int | None = None
    unsafe_shutdowns: int | None = None
    percentage_used: int | None = None
    available_spare_pct: int | None = None
    available_spare_threshold_pct: int | None = None
    media_errors: int | None = None
    error_log_entries: int | None = None
    critical_warning: tuple[str, ...] = ()
    ata_reallocated_sectors: int | None = None
    ata_pending_sectors: int | None = None
    ata_offline_uncorrectable: int | None = None
    ata_crc_errors: int | None = None
    scsi_grown_defects: int | None = None
    scsi_uncorrected_errors: int | None = None
    sata_speed_current_gbps: float | None = None
    sata_speed_max_gbps: float | None = None
    lba_formats: tuple[LbaFormat, ...] = ()
    throttle: Mapping[str, int] = field(default_factory=dict)
    smartctl_version: str | None = None
    exit_status: int | None = None
    exit_status_words: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()

    def counters(self) -> dict[str, int]:
        """Counters whose growth during a run means something happened."""
        out = {
            k: v
            for k, v in (
                ("media_errors", self.media_errors),
                ("error_log_entries", self.error_log_entries),
                ("ata_reallocated_sectors", self.ata_reallocated_sectors),
                ("ata_pending_sectors", self.ata_pending_sectors),
                ("ata_offline_uncorrectable", self.ata_offline_uncorrectable),
                ("ata_crc_errors", self.ata_crc_errors),
                ("scsi_grown_defects", self.scsi_grown_defects),
                ("unsafe_shutdowns", self.unsafe_shutdowns),
            )
            if v is not None
        }
        out.update({f"throttle.{k}": v for k, v in self.throttle.items()})
        return out
