"""`top`, judged: two snapshots of the kernel's counters become rates per device and per process, and findings
with their numbers (pure: no I/O). The words of every finding and note are in analysis/top_words.py.

The device figures are iostat's (sysstat, iostat(1); Documentation/admin-guide/iostats.rst): r/s and w/s are
completed requests, r_await = d(ms reading) / d(reads), aqu-sz = d(weighted ms) / interval ms, %util = d(ms
with I/O in flight) / interval ms."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from disksleuth.analysis import top_words as words
from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.limits import HELD_MAX_SHARE, HOW_SET, LIMIT_SHARE, limit_amount, limit_source, limit_to_dict
from disksleuth.analysis.temperature import hwmon_limits, level_of
from disksleuth.model import Device, Finding
from disksleuth.model.iostat import SECTOR_BYTES, DiskCounters
from disksleuth.model.limits import CgroupLimits, IoLimit
from disksleuth.model.top import (
    DeviceProfile,
    DeviceRate,
    DriveTemperature,
    MemoryRate,
    Pressure,
    PressureRate,
    ProcessRate,
    ProcessSample,
    Snapshot,
    TopReport,
)

# Counts in /proc/diskstats are unsigned longs (2**64 on 64-bit kernels); the millisecond fields are printed as
# unsigned int (block/genhd.c diskstats_show: "%u" of div_u64(nsecs, NSEC_PER_MSEC) and jiffies_to_msecs), so
# they wrap at 2**32 ms, every 49.7 days of I/O time.
COUNT_MODULUS = 2**64
MS_MODULUS = 2**32


@dataclass(frozen=True)
class ClassLimits:
    """What a sound device of a class does at worst: an await above read_ms/write_ms, plus the time to move the
    request at slow_mbps, with at most `parallel` requests queued, is far above it. A longer queue multiplies the
    wait (each request waits for those ahead of it): that is load, judged by device_saturated, not slowness."""

    label: str
    read_ms: float
    write_ms: float
    parallel: int  # requests it serves at once: a queue up to this long adds no waiting
    slow_mbps: float  # a slow but sound transfer rate of the class, for the time a large request takes
    why: str


# One table, with where each figure comes from. Thresholds sit several times above the worst sound case so that
# an idle machine and normal load never warn; what crosses them is retries, a stalled bridge, a card or stick that
# is failing, or a device waking up.
# fmt: off
DEVICE_CLASSES: dict[str, ClassLimits] = {
    #                      label             read ms write ms parallel slow MB/s
    "hdd":      ClassLimits("hard disk",      150.0,  150.0,   1,      50.0,
        "a random request costs a seek (8-9 ms) and half a turn (4.2 ms at 7200 rpm, 5.6 ms at 5400): 13-18 ms; "
        "one actuator serves one request at a time; inner tracks of old disks stream ~50 MB/s"),
    "sata_ssd": ClassLimits("SATA SSD",       30.0,   50.0,    4,      100.0,
        "a 4K read takes ~0.1 ms, a 1 MiB request ~2 ms at 550 MB/s; garbage collection stalls writes for a few "
        "ms; flash channels serve several requests at once"),
    "nvme":     ClassLimits("NVMe SSD",       10.0,   50.0,    16,     200.0,
        "a 4K read takes ~0.1 ms, 1 MiB 0.3-0.5 ms; a DRAM-less drive past its SLC cache writes 1 MiB in ~5-10 "
        "ms; drives reach their rated IOPS at queue depth 16-32"),
    "sd_mmc":   ClassLimits("SD card / eMMC", 100.0,  500.0,   1,      5.0,
        "an A1 card reads 4K in under 1 ms (1,500 IOPS) and writes in 2 ms (500 IOPS); poor cards write 1-19 "
        "random 4K per second (50 ms and more each); Class 2 cards stream 2 MB/s"),
    "usb":      ClassLimits("USB drive",      100.0,  500.0,   1,      10.0,
        "USB 2.0 moves ~40 MB/s (25 ms per 1 MiB); USB sticks write 4K randomly in 10-100 ms (26 IOPS = 38 ms); "
        "a USB disk adds the bridge to a hard disk's 13-18 ms"),
    "virtual":  ClassLimits("virtual device", 1000.0, 1000.0,  1,      0.0,
        "a loop device on RAM or zram completes in microseconds; a virtio disk or a loop file takes whatever the "
        "host or the file's disk takes, so only a stall of a second is news"),
}
# fmt: on
# md and dm ("stacked") wait for their members, which are judged themselves; "unknown" has no class to judge by.
UNJUDGED_CLASSES = ("stacked", "unknown")

SATURATED_UTIL_PCT = 90.0
BUSY_UTIL_PCT = 50.0  # process_dominates looks at devices at least this busy
MIN_LATENCY_REQUESTS = 2  # one slow request is an outlier; two in one interval are a pattern
DOMINANT_SHARE = 0.80
SWAP_PAGES_PER_S = 256  # ~1 MiB/s with 4 KiB pages: a steady stream, not a page now and then
MEMORY_SOME_PCT = 5.0  # tasks stalled on memory for 5% of the interval: the slowness users feel starts there
WRITEBACK_MIN_MB = 32.0
MEMORY_FULL_PCT = 5.0
# Where a writer waits while the kernel holds it until dirty pages are written (mm/page-writeback.c), or while it
# waits for writeback or a journal commit to finish (fsync).
WRITEBACK_WAITS = ("balance_dirty_pages", "writeback", "wb_wait", "jbd2_log_wait_commit", "xlog_wait")
MAX_PROCESSES = 50  # in a report: the busiest, then those waiting the most


# --- the device's class and ceiling ---------------------------------------------------------------------------


def device_class(device: Device) -> str:
    if device.transport in ("loop", "zram", "virtio", "nbd", "ram", "brd"):
        return "virtual"
    if device.transport in ("md", "dm"):
        return "stacked"
    if device.transport == "nvme":
        return "nvme"
    if device.transport == "mmc":
        return "sd_mmc"
    if device.transport == "usb":  # sticks often claim to rotate (the SCSI default): one class for both
        return "usb"
    if device.transport in ("sata", "sas", "scsi"):
        return "sata_ssd" if device.rotational is False else "hdd"
    return "unknown"


def device_profiles(devices: Iterable[Device]) -> dict[str, DeviceProfile]:
    """Each whole device (and partition, for --device sda1) by kernel name, with its class and link ceiling."""
    out: dict[str, DeviceProfile] = {}
    for dev in devices:
        chain = link_chain(dev.hops)
        related = {*dev.holders, *dev.slaves, *dev.backs, *(p.name for p in dev.partitions)}
        related |= {n for n in (dev.backed_by, dev.backing_device, dev.parent) if n}
        profile = DeviceProfile(
            name=dev.name,
            device_class=device_class(dev),
            ceiling_mbps=chain.current_ceiling_mbps,
            ceiling_label=chain.bottleneck.label if chain.bottleneck else None,
            related=tuple(sorted(related)),
            model=dev.model,
        )
        out[dev.name] = profile
        for part in dev.partitions:
            out[part.name] = DeviceProfile(
                part.name, profile.device_class, profile.ceiling_mbps, profile.ceiling_label,
                tuple(sorted({dev.name, *part.holders})), dev.model,
            )  # fmt: skip
    return out


# --- counters to rates ----------------------------------------------------------------------------------------


def counter_delta(before: int, after: int, modulus: int = COUNT_MODULUS) -> int | None:
    """after - before for a counter that wraps at `modulus`; None when it went back by more than a wrap can
    explain (the device was replaced, or the counters reset)."""
    delta = (after - before) % modulus
    return delta if delta < modulus // 2 else None


def _device_rate(
    name: str, a: DiskCounters, b: DiskCounters, interval_s: float, profile: DeviceProfile | None
) -> DeviceRate | None:
    counts = [
        counter_delta(x, y)
        for x, y in (
            (a.reads_completed, b.reads_completed),
            (a.writes_completed, b.writes_completed),
            (a.sectors_read, b.sectors_read),
            (a.sectors_written, b.sectors_written),
        )
    ]
    times = [
        counter_delta(x, y, MS_MODULUS)
        for x, y in ((a.read_ms, b.read_ms), (a.write_ms, b.write_ms), (a.io_ms, b.io_ms))
    ]
    queue_ms = counter_delta(a.weighted_io_ms, b.weighted_io_ms, MS_MODULUS)
    if any(v is None for v in (*counts, *times, queue_ms)):
        return None
    reads, writes, sectors_r, sectors_w = (v or 0 for v in counts)
    read_ms, write_ms, io_ms = (v or 0 for v in times)
    interval_ms = interval_s * 1000.0
    requests = reads + writes
    ceiling = profile.ceiling_mbps if profile else None
    read_mbps = sectors_r * SECTOR_BYTES / 1e6 / interval_s
    write_mbps = sectors_w * SECTOR_BYTES / 1e6 / interval_s
    return DeviceRate(
        name=name,
        device_class=profile.device_class if profile else "unknown",
        reads_per_s=reads / interval_s,
        writes_per_s=writes / interval_s,
        read_mbps=read_mbps,
        write_mbps=write_mbps,
        r_await_ms=read_ms / reads if reads else None,
        w_await_ms=write_ms / writes if writes else None,
        queue_size=(queue_ms or 0) / interval_ms,
        util_pct=min(100.0, io_ms / interval_ms * 100.0),
        avg_request_kb=(sectors_r + sectors_w) * SECTOR_BYTES / 1e3 / requests if requests else None,
        in_flight=b.in_flight,
        ceiling_mbps=ceiling,
        ceiling_label=profile.ceiling_label if profile else None,
        link_share_pct=(read_mbps + write_mbps) / ceiling * 100.0 if ceiling else None,
    )


def device_rates(
    before: Mapping[str, DiskCounters],
    after: Mapping[str, DiskCounters],
    interval_s: float,
    profiles: Mapping[str, DeviceProfile],
    names: Sequence[str] | None = None,
) -> tuple[list[DeviceRate], list[str]]:
    """Rates of the devices in both snapshots (`names`, else those with a profile, else all), and notes on those
    that went away, appeared, or whose counters went back."""
    wanted = list(names) if names is not None else [n for n in after if n in profiles] or list(after)
    rates: list[DeviceRate] = []
    notes: list[str] = []
    for name in wanted:
        a, b = before.get(name), after.get(name)
        if a is None and b is None:
            notes.append(words.device_not_in_diskstats(name))
        elif b is None:
            notes.append(words.device_went_away(name))
        elif a is None:
            notes.append(words.device_appeared(name))
        elif a.dev != b.dev:
            notes.append(words.device_replaced(name, a.dev, b.dev))
        else:
            rate = _device_rate(name, a, b, interval_s, profiles.get(name))
            if rate is None:
                notes.append(words.counters_went_back(name))
            else:
                rates.append(rate)
    return rates, notes


MAX_ANCESTRY = 64  # a ppid chain longer than this (or a loop, in a hand-made capture) is not followed further


def _inherited(before: Mapping[int, ProcessSample], alive: set[int]) -> dict[int, tuple[int, int]]:
    """What each live process took over from descendants that exited in between: their read and write bytes as
    the first snapshot saw them. The kernel adds a reaped child's I/O counters (its own and those it had reaped)
    to its parent's (kernel/exit.c, wait_task_zombie), so a shell whose pytest exited "read" gigabytes in an
    instant. What the child did before the first snapshot is taken off its nearest live ancestor; what it did
    in between stays, since it happened in between."""
    out: dict[int, tuple[int, int]] = {}
    for pid, sample in before.items():
        if pid in alive or sample.io is None:
            continue
        ancestor, seen = sample.stat.ppid, 0
        while ancestor not in alive and ancestor in before and seen < MAX_ANCESTRY:
            ancestor, seen = before[ancestor].stat.ppid, seen + 1
        if ancestor in alive:
            read, write = out.get(ancestor, (0, 0))
            out[ancestor] = (read + sample.io.read_bytes, write + sample.io.write_bytes)
    return out


def process_rates(
    before: Mapping[int, ProcessSample],
    after: Mapping[int, ProcessSample],
    interval_s: float,
    clock_ticks_per_s: int,
    delayacct: bool | None,
) -> tuple[list[ProcessRate], int, int]:
    """(rates of processes there at both ends, busiest first; how many exited or were replaced; how many had
    I/O that could not be read)."""
    alive = {pid for pid, a in before.items() if pid in after and after[pid].stat.start_ticks == a.stat.start_ticks}
    inherited = _inherited(before, alive)
    rates: list[ProcessRate] = []
    unreadable = 0
    for pid in alive:
        a, b = before[pid], after[pid]
        read_mbps = write_mbps = None
        if a.io is not None and b.io is not None:
            taken_read, taken_write = inherited.get(pid, (0, 0))
            read = counter_delta(a.io.read_bytes, b.io.read_bytes)
            written = counter_delta(a.io.write_bytes, b.io.write_bytes)
            read_mbps = max(0, read - taken_read) / 1e6 / interval_s if read is not None else None
            write_mbps = max(0, written - taken_write) / 1e6 / interval_s if written is not None else None
        else:
            unreadable += 1
        delay_pct = None
        if delayacct is not False and a.stat.blkio_ticks is not None and b.stat.blkio_ticks is not None:
            ticks = counter_delta(a.stat.blkio_ticks, b.stat.blkio_ticks)
            if ticks is not None:
                delay_pct = min(100.0, ticks / clock_ticks_per_s / interval_s * 100.0)
        rates.append(ProcessRate(pid, b.stat.comm, b.stat.state, read_mbps, write_mbps, delay_pct, b.wchan))
    rates.sort(key=lambda r: (-r.total_mbps, -(r.blkio_delay_pct or 0.0), r.state != "D", r.pid))
    shown = [r for r in rates if r.total_mbps > 0 or (r.blkio_delay_pct or 0) > 0 or r.state == "D"]
    return shown[:MAX_PROCESSES], len(before) - len(alive), unreadable


def _stalled_pct(a: Pressure | None, b: Pressure | None, interval_s: float, full: bool) -> float | None:
    if a is None or b is None:
        return None
    la, lb = (a.full, b.full) if full else (a.some, b.some)
    if la is None or lb is None:
        return None
    delta = counter_delta(la.total_us, lb.total_us)
    return None if delta is None else min(100.0, delta / (interval_s * 1e6) * 100.0)


def pressure_rate(before: Snapshot, after: Snapshot, interval_s: float) -> PressureRate:
    return PressureRate(
        io_some_pct=_stalled_pct(before.io_pressure, after.io_pressure, interval_s, False),
        io_full_pct=_stalled_pct(before.io_pressure, after.io_pressure, interval_s, True),
        memory_some_pct=_stalled_pct(before.memory_pressure, after.memory_pressure, interval_s, False),
        memory_full_pct=_stalled_pct(before.memory_pressure, after.memory_pressure, interval_s, True),
    )


def memory_rate(before: Snapshot, after: Snapshot, interval_s: float | None) -> MemoryRate | None:
    a, b = before.memory, after.memory
    if b is None:
        return None

    def per_s(x: int | None, y: int | None) -> float | None:
        if interval_s is None or x is None or y is None:
            return None
        delta = counter_delta(x, y)
        return None if delta is None else delta / interval_s

    def mb(kib: int | None) -> float | None:
        return kib * 1024 / 1e6 if kib is not None else None

    swap_used = None
    if b.swap_total_kib is not None and b.swap_free_kib is not None:
        swap_used = mb(b.swap_total_kib - b.swap_free_kib)
    return MemoryRate(
        swap_in_pages_per_s=per_s(a.swap_in_pages if a else None, b.swap_in_pages),
        swap_out_pages_per_s=per_s(a.swap_out_pages if a else None, b.swap_out_pages),
        dirty_mb=mb(b.dirty_kib),
        writeback_mb=mb(b.writeback_kib),
        swap_used_mb=swap_used,
        mem_available_mb=mb(b.mem_available_kib),
        page_bytes=after.page_bytes,
    )


# --- findings -------------------------------------------------------------------------------------------------


def _latency_limit_ms(limits: ClassLimits, rate: DeviceRate, write: bool) -> float:
    base = limits.write_ms if write else limits.read_ms
    transfer_ms = (rate.avg_request_kb or 0.0) / limits.slow_mbps if limits.slow_mbps else 0.0  # KB / (MB/s) = ms
    return (base + transfer_ms) * max(1.0, rate.queue_size / limits.parallel)


def saturated(rate: DeviceRate) -> Finding | None:
    if rate.device_class in UNJUDGED_CLASSES:
        return None
    limits = DEVICE_CLASSES.get(rate.device_class)
    queue_needed = max(1, limits.parallel if limits else 1)
    if rate.util_pct < SATURATED_UTIL_PCT or rate.queue_size < queue_needed:
        return None
    message, hint = words.device_saturated(rate, queue_needed)
    evidence = {
        "util_pct": round(rate.util_pct, 1),
        "queue_size": round(rate.queue_size, 2),
        "queue_threshold": queue_needed,
        "read_mbps": round(rate.read_mbps, 2),
        "write_mbps": round(rate.write_mbps, 2),
        "reads_per_s": round(rate.reads_per_s, 1),
        "writes_per_s": round(rate.writes_per_s, 1),
        "r_await_ms": _round(rate.r_await_ms),
        "w_await_ms": _round(rate.w_await_ms),
    }
    return Finding("device_saturated", "warn", message, evidence, hint, device=rate.name)


def latency_high(rate: DeviceRate, interval_s: float) -> Finding | None:
    limits = DEVICE_CLASSES.get(rate.device_class)
    if limits is None:
        return None
    slow = []
    for write, await_ms, per_s in ((False, rate.r_await_ms, rate.reads_per_s),
                                   (True, rate.w_await_ms, rate.writes_per_s)):  # fmt: skip
        limit_ms = _latency_limit_ms(limits, rate, write)
        if await_ms is not None and per_s * interval_s >= MIN_LATENCY_REQUESTS and await_ms > limit_ms:
            slow.append(("write" if write else "read", await_ms, limit_ms))
    if not slow:
        return None
    message, hint = words.latency_high(rate, limits.label, slow)
    evidence = {
        "device_class": rate.device_class,
        "queue_size": round(rate.queue_size, 2),
        "avg_request_kb": _round(rate.avg_request_kb),
        **{f"{kind[0]}_await_ms": round(ms, 1) for kind, ms, _ in slow},
        **{f"{kind[0]}_await_limit_ms": round(limit, 1) for kind, _, limit in slow},
    }
    return Finding("latency_high", "warn", message, evidence, hint, device=rate.name)


def _bounded_mbps(process: ProcessRate, rate: DeviceRate, others: Sequence[DeviceRate]) -> float:
    """The least of this device's MB/s the process can have done: /proc/PID/io does not say which device, so what
    every other device moved in the same direction may have been the process's, and is taken off."""
    read_elsewhere = sum(d.read_mbps for d in others)
    write_elsewhere = sum(d.write_mbps for d in others)
    read = min(rate.read_mbps, max(0.0, (process.read_mbps or 0.0) - read_elsewhere))
    write = min(rate.write_mbps, max(0.0, (process.write_mbps or 0.0) - write_elsewhere))
    return read + write


def process_dominates(rate: DeviceRate, devices: Sequence[DeviceRate], processes: Sequence[ProcessRate],
                      profiles: Mapping[str, DeviceProfile]) -> Finding | None:  # fmt: skip
    """One process did at least DOMINANT_SHARE of a busy device's bytes. The share claimed is a lower bound (see
    _bounded_mbps); devices stacked with this one (holders, members, a loop device's backing) carry the same bytes
    a second time and are not counted against it. A buffered write is counted when the page is dirtied and reaches
    the device later, so a writer through the page cache may be missed: the finding is then silent, never wrong."""
    if rate.util_pct < BUSY_UTIL_PCT or rate.total_mbps <= 0 or not processes:
        return None
    related = set(profiles[rate.name].related) if rate.name in profiles else set()
    others = [d for d in devices if d.name != rate.name and d.name not in related]
    top, done_mbps = max(((p, _bounded_mbps(p, rate, others)) for p in processes), key=lambda pair: pair[1])
    share = done_mbps / rate.total_mbps
    if share < DOMINANT_SHARE:
        return None
    message, hint = words.process_dominates(rate, top, share, done_mbps)
    evidence = {
        "pid": top.pid,
        "comm": top.comm,
        "process_read_mbps": _round(top.read_mbps, 2),
        "process_write_mbps": _round(top.write_mbps, 2),
        "device_mbps": round(rate.total_mbps, 2),
        "share_pct_at_least": round(share * 100.0, 1),
    }
    return Finding("process_dominates", "info", message, evidence, hint, device=rate.name)


def swapping(memory: MemoryRate | None, pressure: PressureRate) -> Finding | None:
    if memory is None or memory.swap_in_pages_per_s is None or memory.swap_out_pages_per_s is None:
        return None
    pages = memory.swap_in_pages_per_s + memory.swap_out_pages_per_s
    stalled = pressure.memory_some_pct
    if pages < SWAP_PAGES_PER_S or (stalled is not None and stalled < MEMORY_SOME_PCT):
        return None
    message, hint = words.swapping(memory, stalled)
    evidence = {
        "swap_in_pages_per_s": round(memory.swap_in_pages_per_s, 1),
        "swap_out_pages_per_s": round(memory.swap_out_pages_per_s, 1),
        "memory_some_pct": _round(stalled),
        "memory_full_pct": _round(pressure.memory_full_pct),
        "swap_used_mb": _round(memory.swap_used_mb),
        "page_bytes": memory.page_bytes,
    }
    return Finding("swapping", "warn", message, evidence, hint)


def writeback_waiters(processes: Iterable[ProcessRate]) -> list[ProcessRate]:
    return [p for p in processes if p.state == "D" and p.wchan and any(w in p.wchan for w in WRITEBACK_WAITS)]


def writeback_stall(
    memory: MemoryRate | None, pressure: PressureRate, waiters: Sequence[ProcessRate], swapping_now: bool
) -> Finding | None:
    """Much written data waiting for the disk, and writers held for it: a process in D state waiting in
    balance_dirty_pages (or for writeback, or a journal commit), or all tasks stalled on memory. A memory stall
    while the system swaps is the swap's (the swapping finding), not the dirty pages'."""
    if memory is None or memory.dirty_mb is None:
        return None
    pending = memory.dirty_mb + (memory.writeback_mb or 0.0)
    full = pressure.memory_full_pct
    memory_held = full is not None and full >= MEMORY_FULL_PCT and not swapping_now
    if pending < WRITEBACK_MIN_MB or not (waiters or memory_held):
        return None
    message, hint = words.writeback_stall(memory, full if memory_held else None, waiters)
    evidence = {
        "dirty_mb": round(memory.dirty_mb, 1),
        "writeback_mb": _round(memory.writeback_mb),
        "memory_full_pct": _round(full),
        "waiting": [{"pid": p.pid, "comm": p.comm, "wchan": p.wchan} for p in waiters[:10]],
    }
    return Finding("writeback_stall", "warn", message, evidence, hint)


def io_limit_findings(
    processes: Sequence[ProcessRate], devices: Mapping[str, DeviceRate], limits: Mapping[int, CgroupLimits]
) -> list[Finding]:
    """io_limit (warn): a process held by its cgroup's I/O limit. `devices` are the rates by MAJ:MIN, `limits`
    each busy process's cgroup limits (probe/cgroups.read_io_limits). A bandwidth limit holds a process whose rate
    in its direction reaches LIMIT_SHARE of it while the limited device carries that much (a loop device's backing
    disk carries its traffic: the limit may be there); an IOPS limit, a device at LIMIT_SHARE of it whose traffic
    in that direction is mostly this process's. Above HELD_MAX_SHARE the limit did not hold the figure."""
    findings = []
    for process in processes:
        found = limits.get(process.pid)
        if found is None or not found.read:
            continue
        best: tuple[float, IoLimit, DeviceRate, float] | None = None
        for dev, settings in found.per_device().items():
            rate = devices.get(dev)
            if rate is None:
                continue
            for limit in settings.values():
                mine = process.read_mbps if limit.direction == "read" else process.write_mbps
                on_device = rate.read_mbps if limit.direction == "read" else rate.write_mbps
                if not mine:
                    continue
                if limit.mbps is not None:
                    figure, share = mine, mine / limit.mbps
                    carried = on_device >= LIMIT_SHARE * limit.mbps
                else:
                    figure = rate.reads_per_s if limit.direction == "read" else rate.writes_per_s
                    share = figure / limit.value
                    carried = on_device > 0 and mine >= LIMIT_SHARE * on_device
                if carried and LIMIT_SHARE <= share <= HELD_MAX_SHARE and (best is None or share > best[0]):
                    best = (share, limit, rate, figure)
        if best is not None:
            share, limit, rate, figure = best
            message = words.io_limit(process, limit, rate.name, figure, share, limit_amount(limit), limit_source(limit))
            evidence = {
                "pid": process.pid,
                "comm": process.comm,
                "device": rate.name,
                "figure": round(figure, 2),
                "unit": "MB/s" if limit.mbps is not None else "IOPS",
                "share_pct": round(100 * share),
                "limit": {**limit_to_dict(limit), "device": rate.name},
            }
            findings.append(Finding("io_limit", "warn", message, evidence, HOW_SET, device=rate.name))
    return findings


def thermal(temp: DriveTemperature) -> Finding | None:
    """A busy drive at its own limit, judged as `health` judges temperature_high (analysis/temperature.py): warn at
    the warning limit, critical at the critical one; top names it thermal_throttling, since the drive is busy."""
    limits = hwmon_limits(temp.warn_c, temp.crit_c)
    level = level_of(temp.temp_c, limits)
    if level is None:
        return None
    limit = limits.critical_c if level == "critical" else limits.warning_c
    message, hint = words.thermal_throttling(temp, limit if limit is not None else temp.temp_c, level)
    evidence = {"temperature_c": temp.temp_c, "warning_c": limits.warning_c, "critical_c": limits.critical_c}
    return Finding("thermal_throttling", level, message, evidence, hint, device=temp.device)


def _round(value: float | None, digits: int = 1) -> float | None:
    return round(value, digits) if value is not None else None


# --- two snapshots, judged --------------------------------------------------------------------------------------


def top_report(
    before: Snapshot,
    after: Snapshot,
    profiles: Mapping[str, DeviceProfile],
    *,
    device_names: Sequence[str] | None = None,
    context_names: Sequence[str] | None = None,
    extra_findings: Sequence[Finding] = (),
) -> TopReport:
    """The time between two snapshots: rates, findings and notes. `device_names` narrows the devices (--device);
    `context_names` are every device whose I/O may be a process's (whole devices: a partition's bytes are its
    disk's too), so that narrowing never makes process_dominates claim more; the processes are those the snapshots
    hold. `extra_findings` come from readers top does not own (io_limit, link_errors) and are listed with the
    rest."""
    interval_s = after.taken_s - before.taken_s
    notes = list(dict.fromkeys([*before.notes, *after.notes]))
    if interval_s <= 0:
        notes.append(words.no_interval(interval_s))
        empty = PressureRate(None, None, None, None)
        memory = memory_rate(before, after, None)
        return TopReport(0.0, (), (), empty, memory, after.temperatures, tuple(extra_findings), after.delayacct,
                         notes=tuple(notes))  # fmt: skip
    devices: list[DeviceRate] = []
    context: list[DeviceRate] = []
    if before.disks is not None and after.disks is not None:
        devices, device_notes = device_rates(before.disks, after.disks, interval_s, profiles, device_names)
        notes += device_notes
        context = devices
        if context_names is not None and list(context_names) != list(device_names or ()):
            context, _ = device_rates(before.disks, after.disks, interval_s, profiles, context_names)
            context += [d for d in devices if d.name not in {c.name for c in context}]
    processes: list[ProcessRate] = []
    exited = unreadable = seen = 0
    if before.processes is not None and after.processes is not None:
        seen = len(after.processes)
        processes, exited, unreadable = process_rates(
            before.processes, after.processes, interval_s, after.clock_ticks_per_s, after.delayacct
        )
    if unreadable:
        notes.append(words.io_unreadable(unreadable))
    if after.delayacct is False:
        notes.append(words.DELAYACCT_OFF)
    pressure = pressure_rate(before, after, interval_s)
    memory = memory_rate(before, after, interval_s)
    findings: list[Finding] = []
    for rate in devices:
        findings += [f for f in (saturated(rate), latency_high(rate, interval_s)) if f]
    for rate in devices:
        dominated = process_dominates(rate, context, processes, profiles)
        if dominated:
            findings.append(dominated)
    swapped = swapping(memory, pressure)
    stalled = writeback_stall(memory, pressure, writeback_waiters(processes), swapping_now=swapped is not None)
    findings += [f for f in (swapped, stalled) if f]
    findings += [f for f in (thermal(t) for t in after.temperatures) if f]
    findings += extra_findings
    return TopReport(
        interval_s=interval_s,
        devices=tuple(sorted(devices, key=lambda d: (-d.util_pct, -d.total_mbps, d.name))),
        processes=tuple(processes),
        pressure=pressure,
        memory=memory,
        temperatures=after.temperatures,
        findings=tuple(findings),
        delayacct=after.delayacct,
        processes_seen=seen,
        processes_exited=exited,
        processes_unreadable=unreadable,
        notes=tuple(notes),
    )
