"""The `sustained` profile's fill: sequential writes until --size bytes (or --max-time), logged by fio every
100 ms, then the phases found (analysis/sustained.py); optionally an idle pause and a second, short burst to
see how much of the cache came back.

It composes probe/ calls (fio, its bandwidth log) and analysis/ functions, as bench.py does; bench.py calls
`run_fill` for tests of kind "fill".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from disksleuth.analysis import sustained as phases
from disksleuth.analysis.results import result_from_fio, series_from_samples
from disksleuth.model.fio import BwLogEntry, FioJob, StatusSample
from disksleuth.model.run import TestResult
from disksleuth.model.sustained import Sustained
from disksleuth.probe import fio
from disksleuth.probe.fio_bwlog import read_bw_log
from disksleuth.probe.fio_parse import aggregate
from disksleuth.probe.target import fio_log_dir, remove_dead_fio_logs
from disksleuth.profiles import MIB, JobPlan, fio_argv, shell_command
from disksleuth.units import fmt_size

if TYPE_CHECKING:
    from disksleuth.run.context import Events, Where
    from disksleuth.run.plan import TestStep

RECOVERY_MARGIN = 1.25  # the second burst writes 25% more than the cache the fill found, to see it fall again
RECOVERY_MIN_BYTES = 64 * MIB
# The log prefix in the command we record: an absolute path, so a pasted rerun writes its log to
# /tmp/disksleuth-fill_bw.1.log, not into whatever directory it is pasted in.
SHOWN_LOG_PREFIX = "/tmp/disksleuth-fill"


def _argv(step: TestStep, where: Where, size: int, runtime_s: float, log_prefix: str, shown: bool = False) -> list[str]:
    path = (where.shown_path or where.path) if shown else where.path  # shown: as people see it (the record)
    plan = JobPlan(path, size, where.offset, where.engine, where.direct, runtime_s, 0.0, read_only=False)
    argv = fio_argv(step.spec, plan)
    argv.insert(-1, f"--write_bw_log={log_prefix}")
    return argv


def _write(
    step: TestStep,
    where: Where,
    size: int,
    runtime_s: float,
    events: Events,
    temperature: Callable[[], float | None],
) -> tuple[FioJob, list[StatusSample], list[tuple[float, float]], tuple[BwLogEntry, ...], list[str]]:
    """One logged sequential write: (fio job, status samples, temperatures, bandwidth log, argv)."""
    temps: list[tuple[float, float]] = []
    live: list[StatusSample] = []

    def on_status(sample: StatusSample) -> None:
        live.append(sample)
        temp = temperature()
        if temp is not None:
            temps.append((round(sample.elapsed_s, 2), temp))
        points = series_from_samples(live)
        if points:
            events.status(sample.elapsed_s, 0.0, points[-1].write_mbps, points[-1].iops, sample.write_bytes)

    with fio_log_dir() as logs:
        argv = _argv(step, where, size, runtime_s, logs.prefix)
        fds = (*where.pass_fds, logs.dir_fd)  # fio writes through our open log directory (and shares its lock)
        report, samples = fio.run_job(argv, timeout_s=runtime_s + 120, on_status=on_status, pass_fds=fds)
        entries = read_bw_log(logs.prefix)
    shown = _argv(step, where, size, runtime_s, SHOWN_LOG_PREFIX, shown=True)
    return aggregate(report), samples, temps, entries, shown


def _announcement(where: Where, limit_s: float) -> str:
    """Said before the fill starts: it writes until its size or its time runs out, which by default is half
    the free space (tens of GB in seconds on a fast drive), so the user learns both bounds first."""
    return (
        f"sustained fill: writes at most {fmt_size(where.region)} to {where.shown_path or where.path}, "
        f"for at most {limit_s:,.0f} s "
        "(--size and --max-time set smaller bounds)"
    )


def run_fill(
    step: TestStep,
    where: Where,
    events: Events,
    fio_version: str,
    temperature: Callable[[], float | None],
    warning_c: float | None,
    recovery_idle_s: float | None = None,
) -> TestResult:
    """The fill, its phases and (with `recovery_idle_s`) the recovery burst, as one TestResult."""
    # The fill's log directory is the one thing a kill -9 leaves in $TMPDIR: the next fill removes it.
    leftovers = remove_dead_fio_logs()
    for line in leftovers:
        events.warn(line)
    events.message(_announcement(where, step.runtime_s))
    events.test_start(step.index, step.total, step.spec, step.runtime_s)
    job, samples, temps, entries, shown = _write(step, where, where.region, step.runtime_s, events, temperature)
    written = job.write.io_bytes if job.write else 0
    stopped_by = "size" if written >= where.region else "time"
    runtime_s = (job.write.runtime_ms if job.write else 0) / 1000.0
    # Anchored to fio's io_bytes and runtime: the fill's one rate is the test's write_mbps.
    points = phases.fill_points(entries, total_bytes=written, total_s=runtime_s)
    notes: list[str] = [*leftovers]
    found = phases.analyse(points, temps, warning_c, stopped_by=stopped_by)
    if not found.judged:
        notes.append(f"the fill was {found.reason}")
    if stopped_by == "time":
        notes.append(
            f"--max-time {step.runtime_s:g} s ended the fill after {written / 1e9:,.2f} GB "
            f"of {where.region / 1e9:,.2f} GB"
        )
    if not temps:
        notes.append("no drive temperature readings during the fill: heat cannot be told apart from the cache")
    if recovery_idle_s:
        found, note = _recovery(step, where, events, temperature, found, recovery_idle_s)
        if note:
            notes.append(note)
    plan = JobPlan(
        where.shown_path or where.path, where.region, where.offset, where.engine, where.direct, step.runtime_s, 0.0
    )
    result = result_from_fio(
        step.spec,
        job,
        fio_version=fio_version,
        engine=where.engine,
        fio_command=shell_command(shown),
        plan=plan,
        cache_affected=where.cache_affected,
        series=series_from_samples(samples),
        notes=tuple(notes),
    )
    result = replace(result, sustained=found, burst_mbps=found.burst_mbps, sustained_mbps=found.sustained_mbps)
    events.test_done(result)
    return result


def _recovery(
    step: TestStep,
    where: Where,
    events: Events,
    temperature: Callable[[], float | None],
    fill: Sustained,
    idle_s: float,
) -> tuple[Sustained, str | None]:
    cache = fill.cache_exhausted_at_bytes
    if cache is None:
        return fill, "recovery burst skipped: the fill found no write cache to recover"
    size = min(where.region, max(RECOVERY_MIN_BYTES, int(cache * RECOVERY_MARGIN) // MIB * MIB))
    events.phase(f"idle {idle_s:g} s, then a {size / 1e6:,.0f} MB burst to see how much cache came back", idle_s)
    time.sleep(idle_s)
    job, _, _, entries, _ = _write(step, where, size, step.runtime_s, events, temperature)
    written = job.write.io_bytes if job.write else 0
    runtime_s = (job.write.runtime_ms if job.write else 0) / 1000.0
    back = phases.recovery(phases.fill_points(entries, total_bytes=written, total_s=runtime_s), idle_s, fill)
    return replace(fill, recovery=back), None
