"""Frozen dataclasses for benchmark runs, drive health and `links`; kept apart so `list` never loads them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from disksleuth.model import AerCounters, ChipsetUplink, Device, PcieHop
from disksleuth.model.drive_logs import ErrorLog  # at run time: the store's validator resolves the hints
from disksleuth.model.foreign import ForeignIo  # at run time: the store's validator resolves the hints
from disksleuth.model.sustained import Sustained  # at run time: the store's validator resolves the hints

# --- benchmark results -----------------------------------------------------------------------


# The SCSI error counter log's columns, as smartctl's scsiprint.cpp prints them: (JSON key, label).
SCSI_COUNTERS = (
    ("errors_corrected_by_eccfast", "ECC fast"),
    ("errors_corrected_by_eccdelayed", "ECC delayed"),
    ("errors_corrected_by_rereads_rewrites", "rereads/rewrites"),
    ("total_errors_corrected", "total corrected"),
    ("correction_algorithm_invocations", "algorithm invocations"),
    ("gigabytes_processed", "GB processed"),
    ("total_uncorrected_errors", "total uncorrected"),
)


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
    # Mixed read/write tests: latency of each direction (the lat_* figures above are the busier one's).
    read_lat_mean_us: float | None = None
    read_lat_p50_us: float | None = None
    read_lat_p99_us: float | None = None
    read_lat_p999_us: float | None = None
    read_lat_max_us: float | None = None
    write_lat_mean_us: float | None = None
    write_lat_p50_us: float | None = None
    write_lat_p99_us: float | None = None
    write_lat_p999_us: float | None = None
    write_lat_max_us: float | None = None
    sustained: Sustained | None = None  # the sustained profile's fill: phases, cliff, heat or cache
    # Half-width of the 95% confidence interval of the headline figure (MB/s, and IOPS alike), in percent
    # of it: batch means over the samples after the ramp (analysis/confidence.py). None: too few samples.
    ci95_pct: float | None = None
    precision_target_pct: float | None = None  # the ci95_pct the test stopped on (None: fixed length)
    # bench --repeat N: the figures above are medians of N passes; these are the headline figure of each
    # pass and their spread, (max - min) / median in percent.
    repeat_values: tuple[float, ...] = ()
    repeat_spread_pct: float | None = None
    # Other I/O on the test's device while it ran (issue 36): None when its counters were not read.
    foreign_io: ForeignIo | None = None
    # Issue 37: the requests the figures count, completed inside a window of window_s seconds, and where the
    # rate comes from ("completions": fio's per-request log; "fio_totals": its completed bytes over its runtime).
    completed_ios: int | None = None
    window_s: float | None = None
    rate_basis: str | None = None

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
class SmartAttribute:
    """One row of what `smartctl -A` prints: an ATA attribute, an NVMe health-log field or a SCSI counter."""

    name: str  # "Reallocated_Sector_Ct", "Media and Data Integrity Errors", "read: total uncorrected"
    raw: str  # as smartctl prints it ("34 (Min/Max 20/45)", "2,025,034 [1.03 TB]")
    raw_value: int | float | None
    id: int | None = None  # ATA attribute id
    value: int | None = None  # ATA normalised value, worst and threshold
    worst: int | None = None
    thresh: int | None = None
    flags: str | None = None  # ATA "POSR-K"
    prefailure: bool | None = None
    when_failed: str | None = None  # ATA: "now" or "past" (value at or below threshold)
    key: str | None = None  # the smartctl JSON member for NVMe and SCSI rows
    group: str | None = None  # SCSI: "read", "write", "verify"


@dataclass(frozen=True)
class SelfTest:
    """The newest entry of the drive's self-test log, or the test running now."""

    kind: str  # "Short offline", "Extended", "Background long"
    status: str  # smartctl's words: "Completed without error", "Aborted by host", "Completed: read failure"
    passed: bool | None  # None: aborted, running or unknown
    power_on_hours: int | None  # when it ran, in the drive's power-on hours
    in_progress: bool = False
    remaining_pct: int | None = None
    failing_lba: int | None = None


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
    attributes: tuple[SmartAttribute, ...] = ()  # the `smartctl -A` table
    self_test: SelfTest | None = None  # newest self-test log entry
    # Every temperature sensor the drive reports besides `temperature_c` (NVMe sensors 1-8, ATA 190/194, ...).
    temperature_sensors_c: tuple[float, ...] = ()
    percentage_used_source: str | None = None  # where a SATA/SAS wear figure came from, e.g. "ATA 177 Wear_..."
    # Counters named by what they count, with where they came from ("UDMA_CRC_Error_Count (ATA 199)": 12).
    interface_error_counts: Mapping[str, int] = field(default_factory=dict)  # cable, backplane, connector
    media_error_counts: Mapping[str, int] = field(default_factory=dict)  # reallocated, pending, uncorrectable
    self_tests: tuple[SelfTest, ...] = ()  # the self-test log, newest first (`self_test`: its head, or one running)
    # The drive's own estimate of each self-test's duration ("short", "extended", "conveyance"): ATA polling minutes,
    # NVMe EDSTT for "extended".
    self_test_minutes: Mapping[str, int] = field(default_factory=dict)
    data_written_bytes: int | None = None  # host writes over the drive's life (NVMe data units, ATA 241 / statistics)
    self_test_log_read: bool = False  # the output held a self-test log, even an empty one
    data_read_bytes: int | None = None
    # Issue 38: the drive's error log summarised, and its rotation rate (0: solid state) for temperature defaults.
    error_log: ErrorLog | None = None
    rotation_rate_rpm: int | None = None

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
        out.update({f"interface.{k}": v for k, v in self.interface_error_counts.items()})
        out.update({f"media.{k}": v for k, v in self.media_error_counts.items()})
        return out


@dataclass(frozen=True)
class MemoryBacking:
    """What memory a target stands on, from the target down: ("loop0", "/dev/shm/x.img", "tmpfs on /dev/shm")."""

    kind: str  # "tmpfs", "ramfs", "zram", "brd"
    chain: tuple[str, ...]
    never_written_reads_fast: bool  # zram, brd, sparse images on tmpfs: untouched space reads as zeros at once

    @property
    def description(self) -> str:
        return " → ".join(self.chain)


# --- PCI functions (links) ---


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
    vendor_name: str | None = None  # from the system's pci.ids, as lspci shows them
    device_name: str | None = None
    # The PCIe links from this function up to the root port, this function's own first: the same hops
    # `list` reads for a block device (probe.block.pcie_hops), so both judge the path alike.
    path: tuple[PcieHop, ...] = ()
    # An endpoint whose path crosses the chipset: who shares the chipset's uplink (probe.uplink).
    chipset_uplink: ChipsetUplink | None = None
    aer: AerCounters | None = None  # its PCIe error counters since boot (probe.aer; issue 36)
