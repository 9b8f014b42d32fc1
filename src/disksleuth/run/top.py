"""`top`: read the counters, wait, read them again, judge the difference; once (--once) or every interval.

It only reads: /proc, and sysfs for what the devices are. It never opens a /dev node, never runs a tool, and reads
a drive's temperature sensor only when the drive did I/O during the sample (it is awake then: reading the sensor
sends the drive a command)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace

from disksleuth.analysis import top_words as words
from disksleuth.analysis.aer import link_errors_finding, path_functions, path_growth, path_roles
from disksleuth.analysis.top import device_profiles, device_rates, io_limit_findings, top_report
from disksleuth.errors import DeviceNotFound, UsageError
from disksleuth.model import Device, Finding, Hop
from disksleuth.model.iostat import DiskCounters
from disksleuth.model.top import DeviceProfile, ProcessSample, Snapshot, TopReport
from disksleuth.probe.aer import read_aers
from disksleuth.probe.block import read_device
from disksleuth.probe.cgroups import read_io_limits
from disksleuth.probe.diskstats import read_diskstats
from disksleuth.probe.drive_temp import read_drive_temperature
from disksleuth.probe.hwmon import hwmon_temp_input
from disksleuth.probe.loops import BackingKey, LoopTable, block_key, file_key, parse_backing_file
from disksleuth.probe.mounts import read_mount_table
from disksleuth.probe.procfs import (
    clock_ticks_per_s,
    list_pids,
    read_memory,
    read_pressure,
    read_process,
    read_task_delayacct,
)
from disksleuth.probe.sysfs import Sysfs

# io_limit: the cgroups of at most this many of the busiest processes are read each refresh (a few small files each).
LIMIT_MAX_PROCESSES = 10
LIMIT_MIN_MBPS = 0.1
MIN_INTERVAL_S = 0.1  # shorter, and the counters' millisecond resolution is most of the figure
MAX_INTERVAL_S = 3600.0


def check_seconds(value: float, option: str) -> float:
    """A sample length or refresh interval the counters can say something about."""
    if not MIN_INTERVAL_S <= value <= MAX_INTERVAL_S:
        raise UsageError(f"{option} must be between {MIN_INTERVAL_S:g} and {MAX_INTERVAL_S:g} seconds, not {value:g}")
    return value


def _page_bytes() -> int:
    try:
        size = os.sysconf("SC_PAGESIZE")
    except (OSError, ValueError):
        return 4096
    return size if size > 0 else 4096


class Top:
    """One machine watched: its devices (read once from sysfs, again when /proc/diskstats lists others) and the
    readers' roots. `devices` and `pids` narrow what is shown (--device, --pid)."""

    def __init__(
        self,
        *,
        procfs_root: str = "/proc",
        sysfs_root: str = "/",
        cgroup_root: str = "/sys/fs/cgroup",
        devices: Sequence[str] = (),
        pids: Sequence[int] = (),
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.procfs_root = procfs_root
        self.sysfs_root = sysfs_root
        self.cgroup_root = cgroup_root
        self.pids = tuple(dict.fromkeys(pids))
        self.clock = clock
        self.sleep = sleep
        self.ticks = clock_ticks_per_s()
        self.page_bytes = _page_bytes()
        self.profiles: dict[str, DeviceProfile] = {}
        self.shown: list[str] = []
        self.sensors: set[str] = set()
        self.hops: dict[str, tuple[Hop, ...]] = {}
        self._listed: frozenset[str] = frozenset()
        disks = read_diskstats(procfs_root)
        self._inventory(disks)
        self.asked = tuple(self._resolve(d, disks) for d in dict.fromkeys(devices))
        for pid in self.pids:
            if read_process(pid, procfs_root, with_io=False) is None:
                raise UsageError(words.process_not_found(pid))

    # --- what the devices are ---------------------------------------------------------------------------------

    def _inventory(self, disks: Mapping[str, DiskCounters] | None) -> None:
        devices = _devices(self.sysfs_root)
        self.profiles = device_profiles(devices)
        # Unattached loop devices and unconfigured zram (size 0) are hidden, as `list` and lsblk hide them.
        self.shown = [d.name for d in devices if not d.is_unattached]
        self.sensors = {d.name for d in devices if hwmon_temp_input(d.name, self.sysfs_root)}  # looked up, not read
        self.hops = {d.name: d.hops for d in devices if path_functions(d.hops)}  # devices with a PCIe path
        self._listed = frozenset(disks or ())

    def _resolve(self, name: str, disks: Mapping[str, DiskCounters] | None) -> str:
        """--device sda, /dev/sda1, /dev/mapper/x -> the kernel's name; a name /proc/diskstats does not list is
        an error. Only the path is resolved: the node is never opened."""
        kernel_name = os.path.basename(os.path.realpath(name)) if name.startswith("/") else name
        if kernel_name in (disks or {}) or kernel_name in self.profiles:
            return kernel_name
        raise DeviceNotFound(words.device_not_found(name))

    # --- one instant ----------------------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        taken_s = self.clock()
        shot = read_snapshot(self.procfs_root, taken_s=taken_s, pids=self.pids, ticks=self.ticks, page=self.page_bytes)
        if shot.disks is not None and frozenset(shot.disks) != self._listed:
            self._inventory(shot.disks)  # a device came or went: what it is, read again (a few ms)
        bdfs = [b for name in (self.asked or self.shown) for b in path_functions(self.hops.get(name, ()))]
        return replace(shot, aer=read_aers(bdfs, self.sysfs_root)) if bdfs else shot  # sysfs files, no device I/O

    def _with_temperatures(self, before: Snapshot, after: Snapshot) -> Snapshot:
        """The temperatures of drives with a sensor that did I/O between the two snapshots."""
        a, b = before.disks or {}, after.disks or {}
        wanted = [n for n in (self.asked or self.shown) if n in self.sensors]
        awake = [n for n in wanted if n in a and n in b and _moved(a[n], b[n])]
        temps = tuple(t for t in (read_drive_temperature(n, self.sysfs_root) for n in awake) if t is not None)
        notes = after.notes + ((words.TEMPERATURES_IDLE,) if len(awake) < len(wanted) else ())
        return replace(after, temperatures=temps, notes=notes)

    # --- judged ---------------------------------------------------------------------------------------------------

    def judge(self, before: Snapshot, after: Snapshot) -> TopReport:
        after = self._with_temperatures(before, after)
        report = top_report(
            before,
            after,
            self.profiles,
            device_names=self.asked or [n for n in self.shown if n in (after.disks or {})],
            context_names=[n for n in self.shown if n in (after.disks or {}) and n in (before.disks or {})],
            extra_findings=self._path_findings(before, after),
        )
        held = self._held(before, after, report)
        if held:
            report = replace(report, findings=report.findings + tuple(held))
        gone = [pid for pid in self.pids if pid in (before.processes or {}) and pid not in (after.processes or {})]
        if gone:
            report = replace(report, notes=report.notes + tuple(words.pid_gone(pid) for pid in gone))
        return report

    def _path_findings(self, before: Snapshot, after: Snapshot) -> list[Finding]:
        """Findings from readers `top` does not own, judged over the same interval: PCIe AER counters that grew on
        a shown device's path (link_errors, analysis/aer.py). A process held by its cgroup's I/O limit (io_limit)
        is judged after the processes' rates are known (_held)."""
        findings = []
        during = words.during_sample(after.taken_s - before.taken_s)
        for name in self.asked or self.shown:
            hops = self.hops.get(name)
            if not hops:
                continue
            bdfs = path_functions(hops)
            growth = path_growth({b: before.aer[b] for b in bdfs if b in before.aer}, after.aer)
            found = link_errors_finding(growth, during=during, device=name, roles=path_roles(hops))
            if found is not None:
                findings.append(found)
        return findings

    def _held(self, before: Snapshot, after: Snapshot, report: TopReport) -> list[Finding]:
        """io_limit: the cgroup I/O limits of the busiest processes (probe/cgroups.py: /proc/PID/cgroup and the
        cgroup files up to the root), judged against what they and the limited devices did in the sample."""
        busy = [p for p in report.processes if p.total_mbps >= LIMIT_MIN_MBPS][:LIMIT_MAX_PROCESSES]
        if not busy or before.disks is None or after.disks is None or report.interval_s <= 0:
            return []
        limits = {p.pid: read_io_limits(str(p.pid), self.procfs_root, self.cgroup_root) for p in busy}
        limited = {limit.dev for found in limits.values() for limit in found.limits}
        names = [name for name, counters in after.disks.items() if counters.dev in limited]
        if not names:
            return []
        rates, _ = device_rates(before.disks, after.disks, report.interval_s, self.profiles, names)
        by_dev = {after.disks[r.name].dev: r for r in rates}
        return io_limit_findings(busy, by_dev, limits)

    def sample(self, seconds: float) -> TopReport:
        """--once: two snapshots `seconds` apart."""
        before = self.snapshot()
        self.sleep(seconds)
        return self.judge(before, self.snapshot())

    def watch(self, interval_s: float, seconds: float | None = None) -> Iterator[TopReport]:
        """A report every interval_s (the cadence kept whatever a refresh costs) until the caller stops, or for
        `seconds` in all: the last sample then ends on time, shorter if need be (never under MIN_INTERVAL_S)."""
        before = self.snapshot()
        start = due = before.taken_s
        while True:
            step = interval_s
            if seconds is not None:
                left = start + seconds - due
                if left < MIN_INTERVAL_S and due > start:
                    return
                step = min(step, max(left, MIN_INTERVAL_S))
            due += step
            self.sleep(max(0.0, due - self.clock()))
            after = self.snapshot()
            yield self.judge(before, after)
            before = after


MAX_DEVICES = 4096  # as many block devices as `list` reads; past that the rest are not judged, only counted


def _devices(sysfs_root: str) -> list[Device]:
    """The block devices as `list` reads them, from sysfs alone. list_devices asks each loop device's node for its
    backing (the LOOP_GET_STATUS64 ioctl): top opens no device node, so a loop device's backing is known here by
    stat() of the path sysfs gives, as for a captured tree."""
    fs = Sysfs(sysfs_root)
    backing: dict[str, str] = {}
    keys: dict[str, BackingKey | None] = {}
    names = fs.listdir(fs.p("/sys/block"))[:MAX_DEVICES]
    for name in names:
        path = (
            parse_backing_file(fs.read(fs.p("/sys/block", name, "loop/backing_file"))) if name[:4] == "loop" else None
        )
        if path is not None:
            backing[name] = path
            st = fs.stat(fs.p(path))  # stat() opens nothing
            dev = fs.read(fs.p("/sys/class/block", os.path.basename(path), "dev")) if path[:5] == "/dev/" else None
            keys[name] = file_key(st) if st is not None else block_key(dev)
    loops = LoopTable(backing, keys)
    mounts = read_mount_table(sysfs_root)
    return [read_device(name, sysfs_root, mounts=mounts, fs=fs, loops=loops) for name in names]


def _processes(procfs_root: str, pids: Sequence[int]) -> dict[int, ProcessSample] | None:
    listed = list(pids) if pids else list_pids(procfs_root)
    if listed is None:
        return None
    found = {}
    for pid in listed:
        sample = read_process(pid, procfs_root)
        if sample is not None:  # None: gone between the listing and the read
            found[pid] = sample
    return found


def read_snapshot(
    procfs_root: str = "/proc",
    *,
    taken_s: float,
    pids: Sequence[int] = (),
    ticks: int | None = None,
    page: int | None = None,
) -> Snapshot:
    """Everything top reads from /proc at one instant (`pids`: only these processes). `taken_s` is the instant
    on any clock that only goes forward: time.monotonic() live, /proc/uptime of a captured directory."""
    disks = read_diskstats(procfs_root)
    processes = _processes(procfs_root, pids)
    io_pressure = read_pressure("io", procfs_root)
    memory_pressure = read_pressure("memory", procfs_root)
    memory = read_memory(procfs_root)
    notes = [words.DISKSTATS_UNREADABLE] if disks is None else []
    if processes is None:
        notes.append(words.PROCESSES_UNREADABLE)
    notes += [words.pressure_unreadable(r) for r, p in (("io", io_pressure), ("memory", memory_pressure)) if not p]
    if memory is None:
        notes.append(words.memory_unreadable())
    return Snapshot(
        taken_s=taken_s,
        disks=disks,
        processes=processes,
        io_pressure=io_pressure,
        memory_pressure=memory_pressure,
        memory=memory,
        delayacct=read_task_delayacct(procfs_root),
        clock_ticks_per_s=ticks or clock_ticks_per_s(),
        page_bytes=page or _page_bytes(),
        notes=tuple(notes),
    )


def _moved(a: DiskCounters, b: DiskCounters) -> bool:
    return (a.reads_completed, a.writes_completed) != (b.reads_completed, b.writes_completed) or b.in_flight > 0
