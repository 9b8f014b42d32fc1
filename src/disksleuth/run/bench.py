"""The benchmark run: carries out a plan (plan.py says what runs where, for how long).

It composes probe/ calls and analysis/ functions; progress goes to an `Events` object the caller
supplies (present/ draws it on a TTY, or does nothing).

Two seams for new kinds of measurement:
- the stop rule: `run_bench(..., stop_rule=factory)`, where `factory(step)` returns a callable fed each
  status sample of that test, answering "stop now?" (default: the steady-state rule);
- the analysis: `ANALYSES[spec.kind]` turns a finished fio job (`FioOutcome`) into a TestResult; a
  profile's test of another kind brings its own fio arguments (`TestSpec.extra_args`) and analysis.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any

from disksleuth.analysis import completions, confidence, steady
from disksleuth.analysis.foreign import Watched, other_io
from disksleuth.analysis.health import health_changes
from disksleuth.analysis.results import result_from_fio, series_from_samples, with_reference
from disksleuth.analysis.verdicts import buffered_loop_note
from disksleuth.errors import (
    TERMINATING_SIGNALS,
    DisksleuthError,
    EnvironmentProblem,
    ParseError,
    SafetyRefusal,
    Terminated,
    UsageError,
)
from disksleuth.model.fio import FioReport, StatusSample
from disksleuth.model.run import Health, Run, TestResult
from disksleuth.probe import fio, runner
from disksleuth.probe.claim import DeviceBusy, exclusive_claim, held_state
from disksleuth.probe.fio_bwlog import read_lat_logs
from disksleuth.probe.fio_parse import aggregate
from disksleuth.probe.host import host_info
from disksleuth.probe.hwmon import TemperatureSampler, hwmon_temp_input, read_temp_c
from disksleuth.probe.procio import read_io
from disksleuth.probe.smart import read_health
from disksleuth.probe.target import (
    TargetInfo,
    direct_io_supported,
    fio_log_dir,
    inspect_target,
    ram_reference,
    remove_dead_scratch,
    scratch_file,
)
from disksleuth.profiles import MIB, JobPlan, TestSpec, fio_argv, fio_filename, shell_command
from disksleuth.run.context import Events, QuietEvents, Where
from disksleuth.run.plan import (
    DEFAULT_PRECISION_PCT,
    MIN_SCRATCH_BYTES,
    PREPARE_MAX_S,
    VIRTUAL,
    BenchOptions,
    BenchPlan,
    Placement,
    TestStep,
    measuring_limit_s,
    plan_bench,
    profile_named,
    with_prepared_bytes,
    with_time_limit,
)

__all__ = ["MIN_SCRATCH_BYTES", "PREPARE_MAX_S", "BenchOptions", "Events", "QuietEvents", "run_bench", "execute"]

FILL_SLACK_S = 5.0  # a time-limited fill that ran this close to its limit ended on time


class FillInterrupted(EnvironmentProblem):
    """The scratch file was not laid out: fio ended before the size or the time limit."""


class Signalled:
    """The stopping signal that arrived, kept. A signal handler's exception can be lost: raised while Python runs
    an at-fork callback (logging's lock release, each time fio is started) or a __del__, it is printed as
    "Exception ignored" and the run went on, to exit 1 with the scratch file's fate left to chance (CI saw a
    SIGHUP lost that way). The run asks `check()` between tests and at each fio status line, and once more on
    the way out, so a lost exception is raised again."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def check(self) -> None:
        if self.signum == signal.SIGINT:
            raise KeyboardInterrupt
        if self.signum is not None:
            raise Terminated(self.signum)


@contextlib.contextmanager
def sigterm_as_exception() -> Iterator[Signalled]:
    """SIGTERM and SIGHUP (a closed terminal) unwind like Ctrl-C, so every `finally` runs: without it
    SIGHUP's default action kills the process on the spot and leaves the scratch file behind. Ctrl-C is
    kept too (Signalled), and raised as KeyboardInterrupt as Python's own handler does."""
    signalled = Signalled()

    def handler(signum: int, frame: object) -> None:
        signalled.signum = signum
        if not runner.hold_stop_signal(signum):  # fio being started: raised again once the run holds it
            signalled.check()

    previous: dict[int, Callable[[int, FrameType | None], Any] | int] = {}
    try:
        for sig in (*TERMINATING_SIGNALS, signal.SIGINT):
            if sig == signal.SIGINT and signal.getsignal(sig) is not signal.default_int_handler:
                continue  # Ctrl-C ignored (a background job) or handled by the caller: leave it so
            previous[sig] = signal.signal(sig, handler) or signal.SIG_DFL  # None: set outside Python
    except ValueError:  # not the main thread (tests running us in a thread)
        yield signalled
        return
    try:
        yield signalled
        signalled.check()  # arrived, and its exception was lost: raised now
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class HealthWatch:
    """Health snapshots around the run, and the drive's temperature about once a second during it.

    hwmon needs no root and costs nothing; smartctl is the fallback. Missing smartctl or a device
    without SMART only adds a note: the benchmark goes on without health."""

    def __init__(self, target: TargetInfo, notes: list[str], read_health: bool = True):
        self.target = target
        self.notes = notes
        self.before: Health | None = None
        self.after: Health | None = None
        self.sampler: TemperatureSampler | None = None
        self.source: str | None = None
        physical = target.disk is not None and target.disk.transport not in VIRTUAL
        self.disk_path = target.disk.path if physical and read_health and target.disk else None

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


# --- stop rules and analyses (the seams) ---------------------------------------------------------

StopRule = Callable[[StatusSample], bool]  # fed each status sample of one test; True: stop now
StopRuleFactory = Callable[[TestStep], StopRule]


class ConfidenceStop:
    """Stop once the 95% interval of the measured throughput (after the ramp) is within the step's
    precision target, after its minimum time (analysis/confidence.py)."""

    def __init__(self, step: TestStep):
        self.step = step
        self.rule = confidence.StopRule(
            step.precision_pct or confidence.DEFAULT_TARGET_PCT, step.min_s, step.status_interval_s
        )
        self.samples: list[StatusSample] = []

    def __call__(self, sample: StatusSample) -> bool:
        self.samples.append(sample)
        # The window holds MIN_COMPLETIONS requests before it may close (issue 37); fio's count of requests
        # issued since the ramp trails the completed ones by the queue, so this errs on the long side.
        if sample.ios < completions.MIN_COMPLETIONS:
            return False
        window = None
        if counts_completed(self.step):
            # The interval the result will show, from the same counts (analysis/completions.counted_window); a fio
            # whose documents carry no timestamps has no such window, and is judged on its documents as before.
            window = completions.counted_window(self.samples, self.step.spec.bs_bytes, self.step.ramp_s)
        if window is not None:
            if window.window_s + 1e-9 < self.step.min_s or window.ci95_pct is None:
                return False
            return window.ci95_pct <= self.rule.target_pct
        measured = confidence.measured_rates(self.samples, self.step.ramp_s)
        return self.rule.sure(measured, len(measured) * self.step.status_interval_s)


def confidence_stop_rule(step: TestStep) -> StopRule:
    return ConfidenceStop(step)


steady_stop_rule = confidence_stop_rule  # the default rule's earlier name


@dataclass(frozen=True)
class FioOutcome:
    """One finished fio job, for the analysis of its test's kind."""

    step: TestStep
    where: Where
    report: FioReport
    samples: tuple[StatusSample, ...]
    temperatures: Mapping[float, float]  # status-sample time (s, 2 decimals) -> drive temperature
    stopped_early: bool
    fio_version: str
    decided_at: int | None = None  # how many status samples the stop rule had seen when it said stop
    completed: tuple[completions.Entry, ...] | None = None  # each request's completion, when fio logged them


Analysis = Callable[[FioOutcome], TestResult]


def job_plan(step: TestStep, where: Where, runtime_s: float | None = None, shown: bool = False) -> JobPlan:
    """The fio job for `step` at `where`; `shown`: naming the file as people see it (the record)."""
    return JobPlan(
        (where.shown_path or where.path) if shown else where.path,
        where.region,
        where.offset,
        where.engine,
        where.direct,
        runtime_s if runtime_s is not None else step.runtime_s,
        step.ramp_s,
        read_only=where.read_only,
    )


REMOVED_TARGET = "REMOVED-TEMPORARY-TARGET"


def recorded_command(spec: TestSpec, plan: JobPlan, where: Where) -> str:
    """The fio command stored with a result, for people to rerun.

    A target made for the run and removed after it (the RAM reference's loop device) is never named:
    later the same name can be another device, and pasting the command would overwrite it. Such a
    command is labelled and commented out instead."""
    if where.temporary is None:
        return shell_command(fio_argv(spec, plan))
    argv = fio_argv(spec, replace(plan, filename=REMOVED_TARGET))
    return f"# not rerunnable: ran on {where.temporary}, removed after the run: {shell_command(argv)}"


def analyse_timed(outcome: FioOutcome) -> TestResult:
    """The usual time-based test: figures from fio's final report, series from its status stream."""
    step, where = outcome.step, outcome.where
    job = aggregate(outcome.report)
    # The interval is of the samples the stop rule judged: the one fio prints while it stops is partial.
    judged = outcome.samples[: outcome.decided_at] if outcome.decided_at else outcome.samples
    window = completions.window(outcome.completed) if outcome.completed is not None else None
    points = completions.series(window, outcome.samples, step.status_interval_s) if window else ()
    if counts_completed(step):
        window = completions.counted_window(judged, step.spec.bs_bytes, step.ramp_s)
        points = completions.counted_series(judged, step.spec.bs_bytes, step.ramp_s, step.status_interval_s)
    if not points:
        points = series_from_samples(outcome.samples)
    series = tuple(replace(p, temperature_c=_nearest(outcome.temperatures, p.t_s)) for p in points)
    plan = job_plan(step, where, shown=True)
    if outcome.stopped_early:
        # Record the length it really ran, so pasting the command reproduces this measurement.
        measured_ms = max((d.runtime_ms for d in (job.read, job.write, job.mixed) if d is not None), default=0)
        plan = replace(plan, runtime_s=max(0.001, measured_ms / 1000))
    result = result_from_fio(
        step.spec,
        job,
        fio_version=outcome.fio_version,
        engine=where.engine,
        fio_command=recorded_command(step.spec, plan, where),
        plan=plan,
        cache_affected=where.cache_affected,
        series=series,
    )
    if window is not None:
        result = completions.with_window(result, window)
    if result.completed_ios is not None and result.window_s is not None:
        few = completions.too_few_note(result.completed_ios, result.window_s)
        if few is not None:
            result = replace(result, notes=(*result.notes, few))
    return steady.annotate(
        result,
        measured=confidence.measured_rates(judged, step.ramp_s),
        ramp_s=step.ramp_s,
        stopped_early=outcome.stopped_early,
        adaptive=step.adaptive,
        target_pct=step.precision_pct if step.adaptive else DEFAULT_PRECISION_PCT,
        sample_s=step.status_interval_s,
        interval_pct=(window.ci95_pct,) if window is not None else None,
    )


def _nearest(temperatures: Mapping[float, float], t_s: float) -> float | None:
    """The drive's temperature read at the status document nearest `t_s` (within a second)."""
    if t_s in temperatures:
        return temperatures[t_s]
    near = min(temperatures, key=lambda t: abs(t - t_s), default=None)
    return temperatures[near] if near is not None and abs(near - t_s) <= 1.0 else None


def logs_each_request(step: TestStep) -> bool:
    """Tests of few, large requests get fio's per-request log, for figures of completed requests only."""
    spec = step.spec
    return step.kind == "timed" and not spec.extra_args and spec.bs_bytes >= completions.PER_IO_LOG_MIN_BS


def counts_completed(step: TestStep) -> bool:
    """Tests of smaller blocks take their figures from fio's completed-request counts in its status documents
    (analysis/completions.counted_window): too many requests a second to log each."""
    spec = step.spec
    return step.kind == "timed" and not spec.extra_args and 0 < spec.bs_bytes < completions.PER_IO_LOG_MIN_BS


ANALYSES: dict[str, Analysis] = {"timed": analyse_timed}


# --- the executor --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    """What every test of one run shares."""

    events: Events
    version: str
    temperature: Callable[[], float | None]
    stop_rule: StopRuleFactory
    signalled: Signalled = field(default_factory=Signalled)  # a stopping signal whose exception may have been lost
    watched: Watched | None = None  # whose counters tell other I/O around each test (issue 36: foreign_io)


def run_bench(
    target: TargetInfo,
    opts: BenchOptions,
    events: Events | None = None,
    *,
    stop_rule: StopRuleFactory = confidence_stop_rule,
) -> Run:
    """Measure an inspected target (probe.target.inspect_target): plan, hold, run fio, clean up."""
    events = events or QuietEvents()
    profile = profile_named(opts.profile)
    runner.require("fio")
    version = fio.fio_version()
    root = os.geteuid() == 0
    state = None  # what the claim sees: plan_bench refuses another device, other openers, a read-only one
    with contextlib.ExitStack() as held:
        if opts.destructive and target.kind == "block":
            # The kernel has the last word: hold the device with O_EXCL from the safety check until fio has
            # ended, so a mount in another namespace, a btrfs or md member or a dm table refuses the run, and
            # nothing can claim the device meanwhile (fio's own open is not exclusive and still works).
            try:
                claim = held.enter_context(exclusive_claim(target.path))
            except (DeviceBusy, EnvironmentProblem):  # busy, or an open refused (EPERM in a sandbox)
                plan_bench(target, opts, profile, root=root)  # our own checks first, for their clearer words
                raise
            target = inspect_target(target.path)  # under the claim, what the checks see can no longer change
            state = held_state(claim)
        plan = plan_bench(target, opts, profile, root=root, held=state)
        return execute(plan, events, version, stop_rule=stop_rule)


def _require_phase_detection() -> None:
    try:
        import ruptures  # noqa: F401  (only a sustained run pays for this import)
    except ImportError:
        raise EnvironmentProblem(
            "the sustained profile needs the Python package ruptures (change-point detection), which is missing "
            "from this installation; reinstall disksleuth (pip install --force-reinstall disksleuth)"
        ) from None


def _confirm(plan: BenchPlan, events: Events) -> None:
    if plan.destructive_identity is None:
        return
    events.message(f"DESTRUCTIVE: write tests will overwrite {plan.destructive_identity}")
    if plan.ask_to_confirm and not events.confirm(f"Erase data on {plan.destructive_identity}?"):
        raise SafetyRefusal("not confirmed; nothing was written")


def execute(plan: BenchPlan, events: Events, version: str, *, stop_rule: StopRuleFactory = confidence_stop_rule) -> Run:
    """Carry out `plan`: make and fill the scratch file, pick the engine, run each test, clean up."""
    for line in plan.without_root:
        events.message(line)
    _confirm(plan, events)
    for step in plan.tests:
        if step.kind not in ANALYSES and step.kind != "fill":
            raise UsageError(f"{step.spec.id}: no analysis for tests of kind {step.kind!r}")
    if any(step.kind == "fill" for step in plan.tests):
        _require_phase_detection()  # before writing anything: a broken install must not cost a finished fill
    target = plan.target
    started = _now_iso()
    notes = [*plan.without_root, *plan.notes]
    watch = HealthWatch(target, notes, read_health=plan.read_health)
    with sigterm_as_exception() as signalled, watch:
        from disksleuth.run.surround import watched

        ctx = _Ctx(events, version, watch.latest_temperature, stop_rule, signalled, watched(target))
        with _main_target(plan, ctx) as (plan, where, where_notes):
            notes.extend(where_notes)
            passes = [_run_pass(plan, plan.tests, where, ctx, watch) for _ in range(plan.passes)]
            results = list(confidence.median_of_passes(passes)) if plan.passes > 1 else passes[0]
        reference: tuple[TestResult, ...] = ()
        if plan.reference is not None:
            reference = _run_reference(plan, plan.reference, plan.tests, ctx)
            results = list(with_reference(results, reference))
    return Run(
        target=target.path,
        profile=plan.profile.name,
        started_at=started,
        finished_at=_now_iso(),
        fio_version=version,
        engine=where.engine,
        host=host_info(version),
        tests=tuple(results),
        device=target.disk.name if target.disk else None,
        disk=target.disk,
        size_bytes=plan.main.size_bytes,
        notes=tuple(notes),
        reference=reference,
        health_before=watch.before,
        health_after=watch.after,
        health_changes=health_changes(watch.before, watch.after),
        temperature_series=tuple(watch.sampler.samples) if watch.sampler else (),
        temperature_source=watch.source,
    )


@contextlib.contextmanager
def _main_target(plan: BenchPlan, ctx: _Ctx) -> Iterator[tuple[BenchPlan, Where, list[str]]]:
    """The target made ready: (the plan as it now stands, where the tests run, notes)."""
    placement = plan.main
    if placement.on == "scratch":
        leftovers = remove_dead_scratch(plan.target.path)
        for line in leftovers:
            ctx.events.warn(line)
        with scratch_file(plan.target.path) as scratch, _scratch_full(scratch.path, scratch.shown_path):
            path, fds = scratch.path, (scratch.dir_fd,)
            # Lay out real, incompressible data first, so reads hit the medium and not sparse holes.
            direct = direct_io_supported(path)
            if placement.fill:
                ctx.events.phase(f"preparing a {placement.size_bytes // MIB} MiB scratch file", None)
                written = _fill(
                    path,
                    placement.size_bytes,
                    direct,
                    placement.engine or "psync",
                    ctx.events,
                    time_limit_s=placement.fill_time_limit_s,
                    pass_fds=fds,
                )
                plan = with_prepared_bytes(plan, written)
            where, notes = _resolve(plan.main, path, direct, plan.target, ctx, scratch.shown_path, fds)
            yield plan, where, [*leftovers, *notes]
    else:
        assert placement.path is not None
        direct = direct_io_supported(placement.path) if placement.on == "file" else True
        where, notes = _resolve(placement, placement.path, direct, plan.target, ctx)
        yield plan, where, notes


@contextlib.contextmanager
def _scratch_full(path: str, shown_path: str) -> Iterator[None]:
    """A fio job that ran out of space in the scratch file: one line naming the file as people know it
    (not /proc/self/fd/N/scratch), saying it was removed (scratch_file() removes it as this leaves)."""
    try:
        yield
    except fio.FioJobError as exc:
        if exc.err != errno.ENOSPC:
            raise
        raise EnvironmentProblem(f"{str(exc).replace(path, shown_path)} (the scratch file was removed)") from exc


def _resolve(
    placement: Placement,
    path: str,
    direct: bool,
    target: TargetInfo,
    ctx: _Ctx,
    shown_path: str | None = None,
    pass_fds: tuple[int, ...] = (),
) -> tuple[Where, list[str]]:
    """Engine, cache warnings and preconditioning for the placement at `path`."""
    cache_affected, notes = _fs_warnings(target, direct) if target.kind != "block" else (False, [])
    loop_note = buffered_loop_note(target.disk)
    if loop_note is not None:  # the loop driver caches below fio's O_DIRECT: the figures measure memory
        cache_affected = True
        notes.append(loop_note)
    for note in notes:
        ctx.events.warn(note)
    engine = _engine(path, direct, placement.engine, pass_fds)
    where = Where(
        path,
        placement.region_bytes,
        placement.offset_bytes,
        engine,
        direct,
        cache_affected,
        placement.read_only,
        shown_path=shown_path,
        pass_fds=pass_fds,
    )
    for n in range(1, placement.precondition_passes + 1):
        ctx.events.phase(f"preconditioning: random fill {n} of {placement.precondition_passes}", None)
        _fill(path, where.region, direct, engine, ctx.events, offset=where.offset, time_limit_s=None, pass_fds=pass_fds)
    return where, list(notes)


def _run_pass(
    plan: BenchPlan, steps: tuple[TestStep, ...], where: Where, ctx: _Ctx, watch: HealthWatch | None = None
) -> list[TestResult]:
    """Each step once, in order; adaptive tests share the pass's measuring budget (plan.measuring_limit_s)."""
    results: list[TestResult] = []
    budget_left = plan.measure_budget_s
    for i, step in enumerate(steps):
        ctx.signalled.check()
        if step.kind == "fill":
            assert watch is not None
            results.append(_run_fill(step, where, ctx, watch, plan.recovery_idle_s))
            continue
        result = _run_test(with_time_limit(step, measuring_limit_s(steps[i:], budget_left)), where, ctx)
        if budget_left is not None and step.adaptive:
            budget_left -= result.runtime_s
        results.append(result)
    return results


def _run_reference(
    plan: BenchPlan, placement: Placement, steps: tuple[TestStep, ...], ctx: _Ctx
) -> tuple[TestResult, ...]:
    ctx.events.phase("RAM-backed reference", None)
    with ram_reference(placement.size_bytes) as (path, direct):
        where = Where(
            path,
            placement.size_bytes,
            None,
            fio.pick_engine(path, direct),
            direct,
            cache_affected=not direct,
            read_only=False,
            temporary="a RAM-backed loop device" if path.startswith("/dev/loop") else "a file on /dev/shm",
        )
        return tuple(_run_pass(plan, steps, where, ctx))


def _engine(path: str, direct: bool, forced: str | None, pass_fds: tuple[int, ...] = ()) -> str:
    if forced:
        if not fio.engine_works(forced, path, direct, pass_fds):
            raise UsageError(f"fio engine {forced!r} does not work here (not compiled in, or refused)")
        return forced
    return fio.pick_engine(path, direct, pass_fds=pass_fds)


def _fill(
    path: str,
    size: int,
    direct: bool,
    engine: str,
    events: Events,
    offset: int | None = None,
    time_limit_s: float | None = PREPARE_MAX_S,
    pass_fds: tuple[int, ...] = (),
) -> int:
    """Write `size` bytes of fresh random data; returns how much was written (all, or what fit in the time).

    Raises FillInterrupted when fio ended before both the size and the time limit: testing a
    region that was never laid out would give figures of nothing (issue 10, item 6)."""
    argv = [
        "fio",
        "--name=prepare",
        f"--filename={fio_filename(path)}",
        "--thread",
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

    def on_status(s: StatusSample) -> None:
        events.status(s.elapsed_s, 0.0, s.write_bytes / max(s.elapsed_s, 1e-3) / 1e6, 0.0, s.write_bytes)

    report, _ = fio.run_job(argv, timeout_s=(time_limit_s or 3600) + 120, on_status=on_status, pass_fds=pass_fds)
    job = aggregate(report)
    written = job.write.io_bytes if job.write else 0
    if written >= size:
        return size
    ran_s = (job.write.runtime_ms if job.write else 0) / 1000
    if written < MIB or time_limit_s is None or ran_s < time_limit_s - FILL_SLACK_S:
        raise FillInterrupted(
            f"filling the scratch file stopped after {written // MIB} MiB of {size // MIB} MiB "
            f"({ran_s:.0f} s, before its {time_limit_s or 0:.0f} s limit); no figures from a region never written"
        )
    return written // MIB * MIB


def _run_fill(step: TestStep, where: Where, ctx: _Ctx, watch: HealthWatch, recovery_idle_s: float | None) -> TestResult:
    """The sustained profile's fill (fill.py): its own fio calls, bandwidth log and phases."""
    from disksleuth.run.fill import run_fill

    warning_c = watch.before.temperature_warning_c if watch.before else None

    def temperature() -> float | None:  # asked at each of the fill's status lines: a lost stop is raised here
        ctx.signalled.check()
        return ctx.temperature()

    return run_fill(step, where, ctx.events, ctx.version, temperature, warning_c, recovery_idle_s)


FIO_CRASHED_NOTE = "fio crashed (SIGSEGV) in this test's first run; its figures are from a second run"


def _run_test(step: TestStep, where: Where, ctx: _Ctx) -> TestResult:
    """One test, run again once if fio itself crashes: fio 3.33 died of SIGSEGV twice in a day of this project's
    runs (both in a test stopped early on its interval, at the same address in fio; not reproduced by SIGINT at
    random moments in 100+ runs), and one crash lost the whole run. A crash's figures are never used."""
    try:
        return _run_test_once(step, where, ctx)
    except fio.FioKilled as exc:
        if exc.signum != signal.SIGSEGV:
            raise
    result = _run_test_once(step, where, ctx)
    return replace(result, notes=(*result.notes, FIO_CRASHED_NOTE))


def _run_test_once(step: TestStep, where: Where, ctx: _Ctx) -> TestResult:
    events = ctx.events
    events.test_start(step.index, step.total, step.spec, step.runtime_s + step.ramp_s)
    rule = ctx.stop_rule(step) if step.adaptive else None
    live: list[StatusSample] = []
    temps: dict[float, float] = {}
    stop_requested = False
    decided_at: int | None = None

    def on_status(sample: StatusSample) -> None:
        nonlocal stop_requested, decided_at
        ctx.signalled.check()
        live.append(sample)
        temp = ctx.temperature()
        if temp is not None:
            temps[round(sample.elapsed_s, 2)] = temp
        points = series_from_samples(live)
        if points:
            p = points[-1]
            events.status(sample.elapsed_s, p.read_mbps, p.write_mbps, p.iops)
        if rule is not None and not stop_requested:
            stop_requested = rule(sample)
            if stop_requested:
                decided_at = len(live)

    # Other I/O on the device: its counters and every process's, right before and after fio (a RAM reference
    # made for the run has no neighbours). Through the page cache (no direct I/O) the device writes a test's data
    # back when the kernel chooses, maybe during the next test: its counters would not tell whose I/O they saw.
    watching = where.temporary is None and where.direct and ctx.watched is not None and ctx.watched.names
    around = ctx.watched if watching else None
    with contextlib.ExitStack() as stack:
        argv, fds, prefix = fio_argv(step.spec, job_plan(step, where)), where.pass_fds, None
        if logs_each_request(step):
            # Not in the recorded command: logging changes no figure of the job, and its directory is gone after.
            logs = stack.enter_context(fio_log_dir())
            prefix, fds = logs.prefix, (*fds, logs.dir_fd)
            argv = [*argv, f"--write_lat_log={prefix}", "--log_avg_msec=0"]
        before = read_io() if around is not None else None
        report, samples = fio.run_job(
            argv,
            timeout_s=step.timeout_s,
            on_status=on_status,
            status_interval_s=step.status_interval_s,
            stop_when=lambda: stop_requested,
            pass_fds=fds,
        )
        after = read_io() if around is not None else None
        completed, unread = None, None
        if prefix is not None:
            try:
                completed = read_lat_logs(prefix, step.spec.numjobs)
            except ParseError as exc:  # the figures fall back to fio's totals, and say so
                unread = f"figures from fio's totals: {exc}"
    outcome = FioOutcome(step, where, report, tuple(samples), temps, stop_requested, ctx.version, decided_at, completed)
    result = ANALYSES[step.kind](outcome)
    if unread is not None:
        result = replace(result, notes=(*result.notes, unread))
    if around is not None and before is not None and after is not None:
        job = aggregate(report)
        own = [d.io_bytes if d is not None else 0 for d in (job.read, job.write)]
        result = replace(result, foreign_io=other_io(before, after, around, *own))
    events.test_done(result)
    return result
