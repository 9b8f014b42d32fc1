"""The benchmark run: target safety, scratch file, engine choice, each test through fio, clean-up.

It composes probe/ calls and analysis/ functions; progress goes to an `Events` object the caller
supplies (present/ draws it on a TTY, or does nothing).
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from disksleuth.analysis import steady
from disksleuth.analysis.health import health_changes
from disksleuth.analysis.results import result_from_fio, series_from_samples, with_reference
from disksleuth.analysis.safety import identity_line, write_refusal
from disksleuth.errors import DisksleuthError, SafetyRefusal, Terminated, UsageError
from disksleuth.model import Health, Run, TestResult
from disksleuth.probe import fio, runner
from disksleuth.probe.fio_parse import aggregate
from disksleuth.probe.host import host_info
from disksleuth.probe.hwmon import TemperatureSampler, hwmon_temp_input, read_temp_c
from disksleuth.probe.smart import read_health
from disksleuth.probe.target import (
    TargetInfo,
    direct_io_supported,
    inspect_target,
    ram_reference,
    scratch_file,
)
from disksleuth.profiles import MIB, PROFILES, JobPlan, Profile, TestSpec, fio_argv, shell_command

MIN_SCRATCH_BYTES = 16 * MIB
FREE_SPACE_SHARE = 0.9
PREPARE_MAX_S = 120.0
VIRTUAL = ("loop", "zram", "md", "dm", "virtio", "unknown")


class Events(Protocol):
    def message(self, text: str) -> None: ...
    def warn(self, text: str) -> None: ...
    def confirm(self, text: str) -> bool: ...
    def phase(self, label: str, total_s: float | None) -> None: ...
    def test_start(self, index: int, total: int, spec: TestSpec, total_s: float) -> None: ...
    def status(self, elapsed_s: float, read_mbps: float, write_mbps: float, iops: float) -> None: ...
    def test_done(self, result: TestResult) -> None: ...
    def close(self) -> None: ...


class QuietEvents:
    """No drawing (not a TTY, or --json). Messages (the device identity before destructive writes)
    still go to stderr; warnings need no echo, they are in the run's notes."""

    def message(self, text: str) -> None:
        print(f"disksleuth: {text}", file=sys.stderr, flush=True)

    def warn(self, text: str) -> None:
        pass

    def confirm(self, text: str) -> bool:
        return False

    def phase(self, label: str, total_s: float | None) -> None:
        pass

    def test_start(self, index: int, total: int, spec: TestSpec, total_s: float) -> None:
        pass

    def status(self, elapsed_s: float, read_mbps: float, write_mbps: float, iops: float) -> None:
        pass

    def test_done(self, result: TestResult) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class BenchOptions:
    profile: str = "quick"
    size_bytes: int | None = None
    engine: str | None = None
    destructive: bool = False
    yes: bool = False
    interactive: bool = False  # a TTY is there to confirm on
    precondition: bool = False
    fixed_time_s: float | None = None  # --time: fixed length, no adaptive stop
    adaptive: bool = True


@contextlib.contextmanager
def sigterm_as_exception() -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (tests running us in a thread)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _check_writes(target: TargetInfo, opts: BenchOptions, events: Events) -> tuple[bool, list[str]]:
    """(writes allowed, notes). Raises SafetyRefusal when --destructive meets a device in use."""
    notes: list[str] = []
    if target.kind == "dir":
        return True, notes
    if not opts.destructive:
        what = "raw device" if target.kind == "block" else "existing file"
        notes.append(f"{what}: read tests only; write tests need --destructive (they overwrite its contents)")
        return False, notes
    if target.kind == "block":
        if target.device is None:
            raise SafetyRefusal(f"{target.path}: cannot identify this block device in sysfs; refusing to write")
        reason = write_refusal(target.device)
        if reason:
            raise SafetyRefusal(f"refusing to write to {target.path}: {reason}")
        ident = identity_line(target.device)
        events.message(f"DESTRUCTIVE: write tests will overwrite {ident}")
        if not opts.yes:
            if not opts.interactive:
                raise SafetyRefusal(f"refusing to write to {target.path} without a terminal to confirm; add --yes")
            if not events.confirm(f"Erase data on {ident}?"):
                raise SafetyRefusal("not confirmed; nothing was written")
    return True, notes


def _scratch_size(target: TargetInfo, opts: BenchOptions, profile: Profile) -> int:
    free = target.free_bytes or 0
    limit = int(free * FREE_SPACE_SHARE)
    if opts.size_bytes is not None:
        if opts.size_bytes > limit:
            raise UsageError(
                f"--size {opts.size_bytes} bytes is more than 90% of the {free} bytes free in {target.path}"
            )
        return opts.size_bytes
    size = min(profile.scratch_size_bytes, limit // MIB * MIB)
    if size < MIN_SCRATCH_BYTES:
        need_mib = math.ceil(MIN_SCRATCH_BYTES / FREE_SPACE_SHARE / MIB)
        raise UsageError(
            f"not enough free space in {target.path}: {free // MIB} MiB free, need at least {need_mib} MiB"
        )
    return size


def run_bench(target_path: str, opts: BenchOptions, events: Events | None = None) -> Run:
    events = events or QuietEvents()
    if opts.profile not in PROFILES:
        raise UsageError(f"unknown profile {opts.profile!r}; choose from {', '.join(PROFILES)}")
    profile = PROFILES[opts.profile]
    runner.require("fio")
    version = fio.fio_version()
    target = inspect_target(target_path)
    writes_ok, notes = _check_writes(target, opts, events)
    started = _now_iso()
    watch = HealthWatch(target, notes)
    with sigterm_as_exception(), watch:
        ctx = _Ctx(profile, opts, events, version, watch.latest_temperature)
        if target.kind == "dir":
            size = _scratch_size(target, opts, profile)
            with scratch_file(target.path) as path:
                results, engine, extra, used = _measure(path, size, True, writes_ok, target, ctx)
        else:
            size = target.size_bytes or 0
            if opts.size_bytes:
                size = min(size, opts.size_bytes)
            results, engine, extra, used = _measure(target.path, size, False, writes_ok, target, ctx)
        reference: tuple[TestResult, ...] = ()
        if profile.reference:
            reference = _reference(ctx, writes_ok, min(used, 512 * MIB))
            results = with_reference(results, reference)
    return Run(
        target=target.path,
        profile=profile.name,
        started_at=started,
        finished_at=_now_iso(),
        fio_version=version,
        engine=engine,
        host=host_info(version),
        tests=tuple(results),
        device=target.disk.name if target.disk else None,
        disk=target.disk,
        size_bytes=used,
        notes=tuple(notes + extra),
        reference=reference,
        health_before=watch.before,
        health_after=watch.after,
        health_changes=health_changes(watch.before, watch.after),
        temperature_series=tuple(watch.sampler.samples) if watch.sampler else (),
        temperature_source=watch.source,
    )


class HealthWatch:
    """Health snapshots around the run, and the drive's temperature about once a second during it.

    hwmon needs no root and costs nothing; smartctl is the fallback. Missing smartctl or a device
    without SMART only adds a note: the benchmark goes on without health."""

    def __init__(self, target: TargetInfo, notes: list[str]):
        self.target = target
        self.notes = notes
        self.before: Health | None = None
        self.after: Health | None = None
        self.sampler: TemperatureSampler | None = None
        self.source: str | None = None
        self.disk_path = target.disk.path if target.disk and target.disk.transport not in VIRTUAL else None

    def _health(self) -> Health | None:
        if not self.disk_path:
            return None
        try:
            return read_health(self.disk_path)
        except DisksleuthError as exc:  # smartctl missing, no SMART data, no root: go on without health
            self._note(f"health skipped: {exc}")
            return None

    def latest_temperature(self) -> float | None:
        return self.sampler.latest if self.sampler else None

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def __enter__(self) -> HealthWatch:
        self.before = self._health()
        disk = self.target.disk
        reader = None
        if disk is not None:
            path = hwmon_temp_input(disk.name)
            if path:
                reader, self.source = (lambda: read_temp_c(path)), "hwmon"
        if reader is None and self.before is not None and self.before.temperature_c is not None:
            disk_path = self.disk_path

            def from_smartctl() -> float | None:
                try:
                    return read_health(disk_path, timeout_s=10).temperature_c if disk_path else None
                except DisksleuthError:
                    return None

            reader, self.source = from_smartctl, "smartctl"
        if reader is not None:
            self.sampler = TemperatureSampler(reader).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sampler:
            self.sampler.stop()
        if exc[0] is None:
            self.after = self._health()


def _fs_warnings(target: TargetInfo, direct: bool) -> tuple[bool, list[str]]:
    """(cache_affected, notes) for the file system under a scratch or file target."""
    notes = []
    cache = not direct
    fstype = target.fstype or ""
    if fstype in ("tmpfs", "ramfs"):
        cache = True
        notes.append(f"{target.mountpoint} is {fstype} (memory): these figures measure RAM, not a disk")
    elif fstype == "zfs":
        cache = True
        notes.append("ZFS: the ARC cache, compression and copy-on-write shape these figures; O_DIRECT may be ignored")
    elif fstype == "btrfs":
        notes.append("btrfs: copy-on-write and compression can make figures differ from the raw device")
    if not direct:
        notes.append("direct I/O is refused here; figures go through the page cache (marked cache_affected)")
    return cache, notes


@dataclass(frozen=True)
class _Ctx:
    """What every test of one run shares."""

    profile: Profile
    opts: BenchOptions
    events: Events
    version: str
    temperature: Callable[[], float | None]


@dataclass(frozen=True)
class _Where:
    """Where and how the tests run on one target (the real one, or the RAM reference)."""

    path: str
    region: int
    offset: int | None
    engine: str
    direct: bool
    cache_affected: bool
    read_only: bool


def _measure(
    path: str, size: int, scratch: bool, writes_ok: bool, target: TargetInfo, ctx: _Ctx
) -> tuple[list[TestResult], str, list[str], int]:
    profile, opts, events = ctx.profile, ctx.opts, ctx.events
    notes: list[str] = []
    direct = True
    if scratch:
        # Lay out real, incompressible data first, so reads hit the medium and not sparse holes.
        direct = direct_io_supported(path)
        events.phase(f"preparing a {size // MIB} MiB scratch file", None)
        written = _fill(path, size, direct, opts.engine or "psync", events)
        if written < size:
            notes.append(f"scratch file filling stopped after {PREPARE_MAX_S:.0f} s; testing {written // MIB} MiB")
            size = written
    elif target.kind == "file":
        direct = direct_io_supported(path)
    cache_affected, fs_notes = _fs_warnings(target, direct) if target.kind != "block" else (False, [])
    notes.extend(fs_notes)
    for note in fs_notes:
        events.warn(note)
    engine = _engine(path, direct, opts)
    offset = size // 2 // MIB * MIB if profile.second_half else None
    where = _Where(path, size - (offset or 0), offset, engine, direct, cache_affected, read_only=not writes_ok)
    if profile.second_half and opts.precondition:
        if not writes_ok:
            raise SafetyRefusal("--precondition writes to the target: a device or existing file needs --destructive")
        for n in (1, 2):
            events.phase(f"preconditioning: random fill {n} of 2", None)
            _fill(path, where.region, direct, engine, events, offset=offset, time_limit_s=None)
    specs = _runnable(profile, writes_ok)
    if len(specs) < len(profile.tests):
        notes.append("skipped write tests: " + ", ".join(s.id for s in profile.tests if s.writes and not writes_ok))
    results = [_run_test(spec, index, len(specs), where, ctx) for index, spec in enumerate(specs, 1)]
    return results, engine, notes, size


def _runnable(profile: Profile, writes_ok: bool) -> list[TestSpec]:
    return [s for s in profile.tests if writes_ok or not s.writes]


def _engine(path: str, direct: bool, opts: BenchOptions) -> str:
    if opts.engine:
        if not fio.engine_works(opts.engine, path, direct):
            raise UsageError(f"fio engine {opts.engine!r} does not work here (not compiled in, or refused)")
        return opts.engine
    return fio.pick_engine(path, direct)


def _fill(
    path: str,
    size: int,
    direct: bool,
    engine: str,
    events: Events,
    offset: int | None = None,
    time_limit_s: float | None = PREPARE_MAX_S,
) -> int:
    """Write `size` bytes of fresh random data; returns how much was written (all, or what fit in the time)."""
    argv = [
        "fio",
        "--name=prepare",
        f"--filename={path}",
        "--rw=write",
        "--bs=1M",
        "--iodepth=8",
        f"--ioengine={engine}",
        f"--direct={1 if direct else 0}",
        f"--size={size}",
        "--refill_buffers",
        "--end_fsync=1",
        "--output-format=json",
    ]
    if offset:
        argv.append(f"--offset={offset}")
    if time_limit_s:
        argv.append(f"--runtime={int(time_limit_s)}s")

    def on_status(s: fio.StatusSample) -> None:
        events.status(s.elapsed_s, 0.0, s.write_bytes / max(s.elapsed_s, 1e-3) / 1e6, 0.0)

    report, _ = fio.run_job(argv, timeout_s=(time_limit_s or 3600) + 120, on_status=on_status)
    job = aggregate(report)
    written = job.write.io_bytes if job.write else 0
    return written // MIB * MIB if written < size else size


def _command(spec: TestSpec, plan: JobPlan, read_only: bool) -> list[str]:
    argv = fio_argv(spec, plan)
    if read_only:
        argv.insert(-1, "--readonly")  # fio itself refuses any write: belt and braces for raw devices
    return argv


def _run_test(spec: TestSpec, index: int, total: int, where: _Where, ctx: _Ctx) -> TestResult:
    profile, opts, events = ctx.profile, ctx.opts, ctx.events
    adaptive = opts.adaptive and opts.fixed_time_s is None and profile.max_runtime_s is not None
    runtime = opts.fixed_time_s or (profile.max_runtime_s if adaptive else None) or profile.runtime_s
    plan = JobPlan(where.path, where.region, where.offset, where.engine, where.direct, runtime, profile.ramp_s)
    events.test_start(index, total, spec, runtime + profile.ramp_s)
    live: list[fio.StatusSample] = []
    temps: dict[float, float] = {}
    stop_requested = False

    def on_status(sample: fio.StatusSample) -> None:
        nonlocal stop_requested
        live.append(sample)
        temp = ctx.temperature()
        if temp is not None:
            temps[round(sample.elapsed_s, 2)] = temp
        points = series_from_samples(live)
        if points:
            p = points[-1]
            events.status(sample.elapsed_s, p.read_mbps, p.write_mbps, p.iops)
        if adaptive and not stop_requested:
            measured = [pt.read_mbps + pt.write_mbps for pt in points if pt.t_s > profile.ramp_s]
            stop_requested = steady.decide(measured, min_samples=profile.min_samples(spec)).settled

    report, samples = fio.run_job(
        _command(spec, plan, where.read_only),
        timeout_s=runtime + profile.ramp_s + 120,
        on_status=on_status,
        stop_when=lambda: stop_requested,
    )
    job = aggregate(report)
    series = tuple(replace(p, temperature_c=temps.get(p.t_s)) for p in series_from_samples(samples))
    if stop_requested:
        # Record the length it really ran, so pasting the command reproduces this measurement.
        measured_ms = max((d.runtime_ms for d in (job.read, job.write, job.mixed) if d is not None), default=0)
        plan = replace(plan, runtime_s=max(1.0, round(measured_ms / 1000)))
    result = result_from_fio(
        spec,
        job,
        fio_version=ctx.version,
        engine=where.engine,
        fio_command=shell_command(_command(spec, plan, where.read_only)),
        plan=plan,
        cache_affected=where.cache_affected,
        series=series,
    )
    result = steady.annotate(result, ramp_s=profile.ramp_s, stopped_early=stop_requested, adaptive=adaptive)
    events.test_done(result)
    return result


def _reference(ctx: _Ctx, writes_ok: bool, size: int) -> tuple[TestResult, ...]:
    ctx.events.phase("RAM-backed reference", None)
    size = max(size, 64 * MIB)
    with ram_reference(size) as (path, direct):
        where = _Where(
            path, size, None, fio.pick_engine(path, direct), direct, cache_affected=not direct, read_only=False
        )
        specs = _runnable(ctx.profile, writes_ok)
        return tuple(_run_test(spec, index, len(specs), where, ctx) for index, spec in enumerate(specs, 1))
