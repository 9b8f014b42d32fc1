"""`top`: what the machine's counters say at one instant (a snapshot), and what two snapshots say about the time
between them (a report). probe/ reads snapshots, analysis/top.py turns two into a report, present/ draws it.

Counters are the kernel's, kept raw in snapshots (bytes, pages, clock ticks, microseconds); reports carry rates
with their units in their names. MB is 10^6 bytes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disksleuth.model import AerCounters, Finding
from disksleuth.model.iostat import DiskCounters

# --- one instant ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessIo:
    """/proc/PID/io (Documentation/filesystems/proc.rst, 3.3): bytes this process made storage read or write.
    read_bytes is counted as a read is submitted to a block device; write_bytes as a page is dirtied (or a direct
    write submitted), so buffered writes show here before the disk sees them."""

    read_bytes: int
    write_bytes: int
    cancelled_write_bytes: int  # dirtied, then truncated before writeback: never written


@dataclass(frozen=True)
class ProcessStat:
    """/proc/PID/stat: the fields top uses (proc(5) numbering)."""

    pid: int  # 1
    comm: str  # 2, without its parentheses; at most 15 bytes, and may hold spaces and ')'
    state: str  # 3: R running, S sleeping, D uninterruptible (mostly waiting for I/O), Z, T, I ...
    ppid: int  # 4: whoever reaps it takes over its I/O counters (see analysis/top.process_rates)
    start_ticks: int  # 22 starttime, clock ticks after boot: tells a reused PID from the process it had before
    blkio_ticks: int | None  # 42 delayacct_blkio_ticks (Linux 2.6.18+): time waiting for block I/O; 0 when off


@dataclass(frozen=True)
class ProcessSample:
    stat: ProcessStat
    io: ProcessIo | None  # None: /proc/PID/io not readable (another user's process, or a protected one)
    wchan: str | None = None  # read only for processes in D state: where in the kernel it waits


@dataclass(frozen=True)
class PressureLine:
    avg10_pct: float
    avg60_pct: float
    avg300_pct: float
    total_us: int  # time stalled since boot


@dataclass(frozen=True)
class Pressure:
    """/proc/pressure/{io,memory} (Documentation/accounting/psi.rst): 'some' = at least one task stalled on the
    resource, 'full' = all non-idle tasks stalled at once."""

    some: PressureLine
    full: PressureLine | None  # absent from /proc/pressure/cpu before 5.13; present for io and memory


@dataclass(frozen=True)
class MemoryCounters:
    """/proc/vmstat (counters since boot, in pages) and /proc/meminfo (levels now, in kB as the kernel prints
    them: KiB)."""

    swap_in_pages: int | None  # vmstat pswpin
    swap_out_pages: int | None  # vmstat pswpout
    dirty_kib: int | None  # meminfo Dirty: written by processes, not yet sent to the disk
    writeback_kib: int | None  # meminfo Writeback: being written to the disk now
    mem_total_kib: int | None
    mem_available_kib: int | None
    swap_total_kib: int | None
    swap_free_kib: int | None
    dirty_threshold_pages: int | None = None  # vmstat nr_dirty_threshold: writers are held above it


@dataclass(frozen=True)
class DriveTemperature:
    """A drive's hwmon sensor (drivers/nvme/host/hwmon.c, drivers/hwmon/drivetemp.c): millidegrees turned to °C.
    warn_c is temp1_max (NVMe: the warning composite temperature WCTEMP; drivetemp: the drive's own limit),
    crit_c is temp1_crit (NVMe CCTEMP)."""

    device: str
    temp_c: float
    warn_c: float | None
    crit_c: float | None


@dataclass(frozen=True)
class Snapshot:
    """Everything top reads at one instant. None (or an empty mapping) where it could not be read; `notes` says
    why in plain words."""

    taken_s: float  # a monotonic clock (or /proc/uptime of a capture): only differences mean anything
    disks: Mapping[str, DiskCounters] | None
    processes: Mapping[int, ProcessSample] | None
    io_pressure: Pressure | None = None
    memory_pressure: Pressure | None = None
    memory: MemoryCounters | None = None
    delayacct: bool | None = None  # kernel.task_delayacct; None when unreadable (before Linux 5.14 it is a boot option)
    clock_ticks_per_s: int = 100  # USER_HZ (sysconf _SC_CLK_TCK): the unit of /proc/PID/stat times
    page_bytes: int = 4096  # sysconf _SC_PAGESIZE: the unit of pswpin and pswpout
    temperatures: tuple[DriveTemperature, ...] = ()
    aer: Mapping[str, AerCounters] = field(default_factory=dict)  # PCIe error counters of the devices' paths, by BDF
    notes: tuple[str, ...] = ()


# --- what a device is, for judging it --------------------------------------------------------------


@dataclass(frozen=True)
class DeviceProfile:
    """A block device as top judges it: its class (analysis/top.py's latency table) and its link ceiling."""

    name: str
    device_class: str  # hdd, sata_ssd, nvme, sd_mmc, usb, virtual, stacked, unknown
    ceiling_mbps: float | None = None  # the link chain's current practical ceiling (analysis/ceilings.py)
    ceiling_label: str | None = None  # the hop that sets it, e.g. "PCIe 3.0 x4"
    related: tuple[str, ...] = ()  # devices stacked with it (holders, members, partitions, loop backing)
    model: str | None = None


# --- the time between two snapshots -------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceRate:
    name: str
    device_class: str
    reads_per_s: float
    writes_per_s: float
    read_mbps: float
    write_mbps: float
    r_await_ms: float | None  # None: no read completed in the interval
    w_await_ms: float | None
    queue_size: float  # aqu-sz: weighted time in queue / interval (Little's law: requests in the queue on average)
    util_pct: float  # time with I/O in flight / interval, capped at 100
    avg_request_kb: float | None  # (sectors read + written) x 512 / requests, in KB (10^3 bytes)
    in_flight: int  # requests in flight at the end of the interval
    ceiling_mbps: float | None = None
    ceiling_label: str | None = None
    link_share_pct: float | None = None  # (read + write MB/s) / ceiling

    @property
    def total_mbps(self) -> float:
        return self.read_mbps + self.write_mbps

    @property
    def requests_per_s(self) -> float:
        return self.reads_per_s + self.writes_per_s


@dataclass(frozen=True)
class ProcessRate:
    pid: int
    comm: str
    state: str
    read_mbps: float | None  # None: /proc/PID/io not readable
    write_mbps: float | None
    blkio_delay_pct: float | None  # share of the interval spent waiting for block I/O; None with accounting off
    wchan: str | None = None

    @property
    def total_mbps(self) -> float:
        return (self.read_mbps or 0.0) + (self.write_mbps or 0.0)


@dataclass(frozen=True)
class PressureRate:
    """The share of the interval stalled, from the 'total' counters (finer than avg10 for a short sample)."""

    io_some_pct: float | None
    io_full_pct: float | None
    memory_some_pct: float | None
    memory_full_pct: float | None


@dataclass(frozen=True)
class MemoryRate:
    swap_in_pages_per_s: float | None
    swap_out_pages_per_s: float | None
    dirty_mb: float | None  # at the end of the interval
    writeback_mb: float | None
    swap_used_mb: float | None
    mem_available_mb: float | None
    page_bytes: int = 4096


@dataclass(frozen=True)
class TopReport:
    interval_s: float
    devices: tuple[DeviceRate, ...]
    processes: tuple[ProcessRate, ...]  # busiest first
    pressure: PressureRate
    memory: MemoryRate | None
    temperatures: tuple[DriveTemperature, ...]
    findings: tuple[Finding, ...]
    delayacct: bool | None
    processes_seen: int = 0
    processes_exited: int = 0  # there at the start, gone at the end
    processes_unreadable: int = 0
    notes: tuple[str, ...] = ()
