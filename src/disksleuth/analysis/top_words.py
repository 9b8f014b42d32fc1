"""Every sentence `top` says: its findings' messages and hints, and its notes on what could not be read. The
rules that decide when they are said are in analysis/top.py; the view's column names are in present/top_view.py."""

from __future__ import annotations

from collections.abc import Sequence

from disksleuth.model.limits import IoLimit
from disksleuth.model.top import DeviceRate, DriveTemperature, MemoryRate, ProcessRate, TopReport
from disksleuth.units import fmt_rate


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.2g} ms"


def _who(process: ProcessRate) -> str:
    return f"{process.comm} (PID {process.pid})"


def _traffic(rate: DeviceRate) -> str:
    parts = []
    if rate.reads_per_s:
        parts.append(f"{fmt_rate(rate.read_mbps)} read in {rate.reads_per_s:,.0f} requests/s")
    if rate.writes_per_s:
        parts.append(f"{fmt_rate(rate.write_mbps)} written in {rate.writes_per_s:,.0f} requests/s")
    waits = [f"{kind} {_ms(ms)}" for kind, ms in (("r_await", rate.r_await_ms), ("w_await", rate.w_await_ms)) if ms]
    return "; ".join(parts + waits)


# --- findings: (message, hint) ----------------------------------------------------------------------------------


def device_saturated(rate: DeviceRate, queue_needed: int) -> tuple[str, str]:
    if rate.requests_per_s == 0:
        return (
            f"{rate.name} had I/O in flight {rate.util_pct:.0f}% of the time ({rate.queue_size:.1f} requests queued "
            f"on average, {rate.in_flight} still in flight) and completed none: the device, or its driver, is not "
            "answering.",
            f"Look at the kernel log (dmesg) for resets and timeouts on {rate.name}, and at its health.",
        )
    parallel = f" (it serves about {queue_needed} at once)" if queue_needed > 1 else ""
    return (
        f"{rate.name} is busy {rate.util_pct:.0f}% of the time with {rate.queue_size:.1f} requests queued on "
        f"average{parallel}: {_traffic(rate)}. The device is the bottleneck right now; every request waits for "
        "those ahead of it.",
        "The processes below show who does the I/O. Move the load to a faster device, spread it, or give the work "
        "that can wait a lower I/O priority (ionice -c3 -p PID).",
    )


def latency_high(rate: DeviceRate, class_label: str, slow: Sequence[tuple[str, float, float]]) -> tuple[str, str]:
    parts = [f"a {kind} takes {_ms(ms)} on average where a sound {class_label} takes under {_ms(limit)}"
             for kind, ms, limit in slow]  # fmt: skip
    return (
        f"{rate.name}: {'; '.join(parts)} at this load ({rate.queue_size:.1f} requests queued, "
        f"{rate.requests_per_s:,.0f} requests/s).",
        f"Requests this slow come from retries (weak sectors, a failing cable or USB bridge), a card or stick wearing "
        f"out, or a drive waking from standby. Check its health (disksleuth health {rate.name}) and the kernel log "
        "(dmesg) for resets.",
    )


def process_dominates(rate: DeviceRate, process: ProcessRate, share: float, done_mbps: float) -> tuple[str, str]:
    return (
        f"{_who(process)} does at least {share * 100:.0f}% of {rate.name}'s I/O: {fmt_rate(done_mbps)} "
        f"of {fmt_rate(rate.total_mbps)}, with {rate.name} busy {rate.util_pct:.0f}% of the time.",
        f"If that is not what the machine is for right now, stop it or lower its I/O priority: "
        f"ionice -c3 -p {process.pid}.",
    )


def swapping(memory: MemoryRate, memory_some_pct: float | None) -> tuple[str, str]:
    swap_in = memory.swap_in_pages_per_s or 0.0
    swap_out = memory.swap_out_pages_per_s or 0.0
    mbps_in, mbps_out = (p * memory.page_bytes / 1e6 for p in (swap_in, swap_out))
    stalled = (
        f", and tasks waited for memory {memory_some_pct:.0f}% of the time"
        if memory_some_pct is not None
        else " (memory pressure is not readable here)"
    )
    return (
        f"The system is swapping: {swap_in:,.0f} pages/s in and {swap_out:,.0f} out ({fmt_rate(mbps_in)} and "
        f"{fmt_rate(mbps_out)}){stalled}. The slowness is memory, not the disk.",
        "Find what holds the memory (ps aux --sort=-rss; a service's cgroup limit, memory.max or "
        "memory.limit_in_bytes, can hold it tight). More RAM, a limit on the culprit, or zram swap relieves it.",
    )


def writeback_stall(
    memory: MemoryRate, memory_full_pct: float | None, waiters: Sequence[ProcessRate]
) -> tuple[str, str]:
    pending = f"{memory.dirty_mb or 0.0:,.0f} MB of written data wait in memory for the disk"
    if memory.writeback_mb:
        pending += f" ({memory.writeback_mb:,.0f} MB being written now)"
    held = []
    if waiters:
        names = ", ".join(f"{_who(p)} in {p.wchan}" for p in waiters[:3])
        more = f" and {len(waiters) - 3} more" if len(waiters) > 3 else ""
        held.append(f"writers are held until it catches up: {names}{more}")
    if memory_full_pct is not None and memory_full_pct >= 1:
        held.append(f"all tasks stalled on memory {memory_full_pct:.0f}% of the time")
    return (
        f"{pending}, and {'; '.join(held)}.",
        "The disk takes writes slower than processes make them. Smaller vm.dirty_bytes and "
        "vm.dirty_background_bytes start writeback sooner and hold writers for less at a time; a faster disk, or "
        "fewer writers at once, ends it.",
    )


def io_limit(
    process: ProcessRate, limit: IoLimit, device: str, figure: float, share: float, amount: str, source: str
) -> str:
    """The message; the hint is analysis/limits.HOW_SET, the same words check and bench give."""
    direction = "reads" if limit.direction == "read" else "writes"
    shown = fmt_rate(figure) if limit.mbps is not None else f"{figure:,.0f} I/Os per second on {device}"
    return (
        f"{_who(process)} is held by its cgroup's I/O limit: it {direction} {shown}, {share * 100:.0f}% of the "
        f"limit of {amount} on {direction} from {device}, set by {source}. The device is not what holds it."
    )


def thermal_throttling(temp: DriveTemperature, limit_c: float, level: str = "warn") -> tuple[str, str]:
    """The words `health` says of temperature_high (analysis/drive_words.py), with hwmon as the limits' source."""
    from disksleuth.analysis import drive_words

    which = "critical" if level == "critical" else "warning"
    other = temp.warn_c if level == "critical" else temp.crit_c
    other_text = f"{'warning' if level == 'critical' else 'critical'} at {other:g} °C" if other is not None else ""
    source = f"hwmon temp1_{'crit' if which == 'critical' else 'max'}"
    message = drive_words.temperature_high(temp.device, temp.temp_c, level, f"{limit_c:g} °C", source, other_text)
    return message, drive_words.HOT_NOW_HINT if level == "critical" else drive_words.HEAT_HINT


# --- notes: what could not be read, and why --------------------------------------------------------------------

DELAYACCT_OFF = (
    "Block-I/O delay per process is not counted: delay accounting is off. Turn it on with "
    "'sysctl kernel.task_delayacct=1' (until reboot), or 'delayacct' on the kernel command line."
)
DISKSTATS_UNREADABLE = "/proc/diskstats could not be read: no device figures."
PROCESSES_UNREADABLE = "The process list (/proc) could not be read: no process figures."
TEMPERATURES_IDLE = (
    "Temperatures of idle drives are not read: reading a drive's sensor sends it a command, and can keep a disk "
    "from spinning down."
)


def pressure_unreadable(resource: str) -> str:
    return (
        f"/proc/pressure/{resource} could not be read (a kernel before 4.20, or psi=0 on its command line): no "
        f"{resource} pressure figures."
    )


def memory_unreadable() -> str:
    return "/proc/vmstat and /proc/meminfo could not be read: no swap or dirty-page figures."


def io_unreadable(count: int) -> str:
    return (
        f"The I/O of {count} process{'es' if count != 1 else ''} could not be read (/proc/PID/io of another user's "
        "process needs root, and some processes are protected even from root): left out."
    )


def device_went_away(name: str) -> str:
    return f"{name} went away during the sample."


def device_appeared(name: str) -> str:
    return f"{name} appeared during the sample: its figures start with the next one."


def device_replaced(name: str, before: str, after: str) -> str:
    return f"{name} is another device now ({before}, now {after}): not rated this time."


def device_not_in_diskstats(name: str) -> str:
    return f"{name} is not in /proc/diskstats."


def counters_went_back(name: str) -> str:
    return f"{name}'s counters went back (the device was reset or replaced): not rated this time."


def no_interval(interval_s: float) -> str:
    return f"The two readings are {interval_s:g} s apart: no rates (a sample must last longer than 0 s)."


def process_not_found(pid: int) -> str:
    return f"process {pid} is not running"


def device_not_found(name: str) -> str:
    return f"no block device '{name}' (see 'disksleuth list')"


def during_sample(interval_s: float) -> str:
    """How link_errors says when the counters grew: 'during the last 1.0 s'."""
    return f"during the last {interval_s:.1f} s"


def pid_gone(pid: int) -> str:
    return f"Process {pid} exited during the sample."


# --- one line for the whole sample --------------------------------------------------------------------------------


def summary(report: TopReport) -> str:
    """The sample in one sentence: what stands out, else how busy the busiest device was."""
    warns = [f for f in report.findings if f.severity in ("warn", "critical")]
    if warns:
        named = ", ".join(dict.fromkeys(f"{f.code} ({f.device})" if f.device else f.code for f in warns))
        return f"{len(warns)} problem{'s' if len(warns) != 1 else ''} right now: {named}."
    if report.interval_s <= 0:
        return "No rates: the sample had no length."
    busiest = max(report.devices, key=lambda d: d.util_pct, default=None)
    if busiest is None:
        return "Nothing stands out (no device figures)."
    return (
        f"Nothing stands out over {report.interval_s:.1f} s: the busiest device, {busiest.name}, was busy "
        f"{busiest.util_pct:.0f}% of the time ({fmt_rate(busiest.total_mbps)})."
    )
