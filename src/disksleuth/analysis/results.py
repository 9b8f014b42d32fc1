"""From fio's report to our TestResult, per-second series, and % of a reference (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypedDict

from disksleuth.model.fio import FioDirection, FioJob, StatusSample
from disksleuth.model.run import SeriesPoint, TestResult
from disksleuth.profiles import JobPlan, TestSpec

FIO_TOTALS = "fio_totals"  # rate_basis: fio's completed bytes over its runtime, IOPS from them


def _us(ns: float | None) -> float | None:
    return round(ns / 1000.0, 2) if ns is not None else None


def _pct(d: FioDirection | None, p: float) -> float | None:
    if d is None or not d.percentiles_ns:
        return None
    # fio keys are "99.900000"; match with a tolerance.
    for k, v in d.percentiles_ns.items():
        if abs(k - p) < 1e-6:
            return _us(v)
    return None


def _capped(percentile_us: float | None, max_us: float | None) -> float | None:
    """fio's percentiles come from a log-linear histogram and report the middle of a bucket (stat.c,
    plat_idx_to_val: "the mean of the range of the bucket"), so a high one can land above the largest latency
    actually seen (33,423 vs 33,369 µs). No latency exceeds the max: show the max there."""
    if percentile_us is None or max_us is None:
        return percentile_us
    return min(percentile_us, max_us)


def series_from_samples(samples: Sequence[StatusSample]) -> tuple[SeriesPoint, ...]:
    """Per-interval throughput from fio's cumulative status documents.

    fio zeroes its counters when ramp_time ends (fio 3.33: `runtime` advanced 102 ms across a 1.6 s
    interval that held the reset). Subtracting across that reset gives nonsense, so a document whose
    runtime fell behind the wall clock is taken on its own: bytes since the reset over runtime since
    the reset. Otherwise rates are deltas over fio's own timestamps of the documents (its runtime field can
    lag the bytes it reports; see below), or over our clock when fio gave no timestamp."""
    out: list[SeriesPoint] = []
    prev: StatusSample | None = None
    for s in samples:
        if prev is not None:
            wall_s = _wall_delta(prev, s)
            point = None
            if s.runtime_ms is not None and prev.runtime_ms is not None:
                run_s = (s.runtime_ms - prev.runtime_ms) / 1000.0
                if run_s < 0.5 * wall_s:  # counters were reset in between
                    if s.runtime_ms >= 200:
                        point = (s.read_bytes, s.write_bytes, s.ios, s.runtime_ms / 1000.0)
                elif run_s > 0.05 and wall_s > 0.05:
                    # Over fio's timestamps, not its runtime: a status document's runtime can be stale. Under a
                    # blkio throttle (fio 3.33, 100 ms documents) one 188 ms period showed runtime +107 ms and the
                    # next 104 ms one +182 ms, with 9 and 5 MiB read: 88 then 29 MB/s of a steady 50, a mean
                    # 10% high; over the timestamps both are 50 MB/s, as fio's own total says.
                    point = (s.read_bytes - prev.read_bytes, s.write_bytes - prev.write_bytes, s.ios - prev.ios, wall_s)
            else:
                d_read, d_write, d_ios = (
                    s.read_bytes - prev.read_bytes,
                    s.write_bytes - prev.write_bytes,
                    s.ios - prev.ios,
                )
                if wall_s > 0.05 and min(d_read, d_write, d_ios) >= 0:
                    point = (d_read, d_write, d_ios, wall_s)
            if point is not None:
                d_read, d_write, d_ios, dt = point
                t_s = round(s.elapsed_s, 2)
                if out and t_s <= out[-1].t_s:
                    # Two documents read in one go (a loaded machine) share our clock's reading; the store keys
                    # a series by time, and a repeated time made the whole save fail (UNIQUE series.t_s).
                    t_s = round(out[-1].t_s + 0.01, 2)
                out.append(
                    SeriesPoint(
                        t_s=t_s,
                        read_mbps=round(d_read / dt / 1e6, 3),
                        write_mbps=round(d_write / dt / 1e6, 3),
                        iops=round(d_ios / dt, 1),
                    )
                )
        prev = s
    return tuple(out)


def _wall_delta(prev: StatusSample, s: StatusSample) -> float:
    # fio's own timestamp of each document is steadier than when we happened to read it.
    if s.timestamp_ms is not None and prev.timestamp_ms is not None:
        return (s.timestamp_ms - prev.timestamp_ms) / 1000.0
    return s.elapsed_s - prev.elapsed_s


class DirectionLatency(TypedDict, total=False):
    """The per-direction latency fields of a TestResult, present only for a mixed test."""

    read_lat_mean_us: float | None
    read_lat_p50_us: float | None
    read_lat_p99_us: float | None
    read_lat_p999_us: float | None
    read_lat_max_us: float | None
    write_lat_mean_us: float | None
    write_lat_p50_us: float | None
    write_lat_p99_us: float | None
    write_lat_p999_us: float | None
    write_lat_max_us: float | None


def direction_latency(read: FioDirection | None, write: FioDirection | None) -> DirectionLatency:
    """read_lat_*_us and write_lat_*_us when both directions ran (a mixed test); empty otherwise."""
    if not (read is not None and read.active and write is not None and write.active):
        return {}
    return {
        "read_lat_mean_us": _us(read.lat_mean_ns),
        "read_lat_p50_us": _pct(read, 50.0),
        "read_lat_p99_us": _pct(read, 99.0),
        "read_lat_p999_us": _pct(read, 99.9),
        "read_lat_max_us": _us(read.lat_max_ns),
        "write_lat_mean_us": _us(write.lat_mean_ns),
        "write_lat_p50_us": _pct(write, 50.0),
        "write_lat_p99_us": _pct(write, 99.0),
        "write_lat_p999_us": _pct(write, 99.9),
        "write_lat_max_us": _us(write.lat_max_ns),
    }


def latency_direction(t: TestResult) -> str | None:
    """Which direction a mixed test's main latency figures are ("read" or "write"): the busier one, as
    result_from_fio picks it (most requests; at one block size, most IOPS). None for a one-direction test."""
    if not (t.read_iops or t.read_mbps) or not (t.write_iops or t.write_mbps):
        return None
    return "read" if (t.read_iops or 0.0) >= (t.write_iops or 0.0) else "write"


def result_from_fio(
    spec: TestSpec,
    job: FioJob,
    *,
    fio_version: str | None,
    engine: str,
    fio_command: str,
    plan: JobPlan,
    cache_affected: bool,
    series: tuple[SeriesPoint, ...] = (),
    notes: tuple[str, ...] = (),
) -> TestResult:
    read, write = job.read, job.write
    if job.mixed is not None and read is None and write is None:
        read = job.mixed  # unified_rw_reporting: one combined figure, shown as read
        notes = (*notes, "fio reported read and write combined (unified_rw_reporting)")
    # Latency from the busier direction (a 75/25 mix reports its reads).
    active = [d for d in (read, write) if d is not None and d.active]
    lat = max(active, key=lambda d: d.total_ios) if active else None
    runtime_ms = max((d.runtime_ms for d in active), default=0)
    if job.percentiles_approx:
        notes = (*notes, f"percentiles are the worst of {job.jobs_merged} jobs (no group_reporting)")
    if lat is not None and lat.percentile_source == "clat":
        notes = (*notes, "percentiles are completion latency (clat); this fio did not report total latency")

    lat_max = _us(lat.lat_max_ns) if lat else None

    def mbps(d: FioDirection | None) -> float | None:
        return round(d.bw_bytes / 1e6, 2) if d is not None and d.active else None

    # One rate per test (issue 37): fio's IOPS counts the requests issued since its counters were reset, its
    # bytes the ones completed (iodepth more at the opening edge); at a fixed block size the IOPS shown are the
    # completed bytes' (analysis/completions.with_window replaces both where fio logged each request).
    fixed_bs = spec.bs_bytes if spec.bs_bytes > 0 and not spec.extra_args else None

    def iops(d: FioDirection | None) -> float | None:
        if d is None or not d.active:
            return None
        return round(d.bw_bytes / fixed_bs, 1) if fixed_bs else round(d.iops, 1)

    completed = sum(d.io_bytes // fixed_bs for d in active) if fixed_bs else sum(d.total_ios for d in active)

    return TestResult(
        id=spec.id,
        rw=spec.rw,
        bs_bytes=spec.bs_bytes,
        iodepth=spec.iodepth,
        numjobs=spec.numjobs,
        read_mbps=mbps(read),
        read_iops=iops(read),
        write_mbps=mbps(write),
        write_iops=iops(write),
        lat_mean_us=_us(lat.lat_mean_ns) if lat else None,
        lat_p50_us=_capped(_pct(lat, 50.0), lat_max),
        lat_p99_us=_capped(_pct(lat, 99.0), lat_max),
        lat_p999_us=_capped(_pct(lat, 99.9), lat_max),
        lat_max_us=lat_max,
        runtime_s=round(runtime_ms / 1000.0, 3),
        fio_command=fio_command,
        cache_affected=cache_affected,
        engine=spec.engine or engine,
        fio_version=fio_version,
        rwmixread=spec.rwmixread,
        sync=spec.sync,
        direct=plan.direct,
        cpu_usr_pct=round(job.usr_cpu, 2) if job.usr_cpu is not None else None,
        cpu_sys_pct=round(job.sys_cpu, 2) if job.sys_cpu is not None else None,
        series=series,
        notes=notes,
        completed_ios=completed if active else None,
        window_s=round(runtime_ms / 1000.0, 3) if active else None,
        rate_basis=FIO_TOTALS if active else None,
        **direction_latency(read, write),
    )


def with_reference(tests: Sequence[TestResult], reference: Sequence[TestResult]) -> tuple[TestResult, ...]:
    """Each figure as a percentage of the same test on the reference (the RISC OS table's % of RAMfs)."""
    ref = {t.id: t for t in reference}
    out = []
    for t in tests:
        r = ref.get(t.id)
        if r is None:
            out.append(t)
            continue
        pct = {}
        for key in ("read_mbps", "read_iops", "write_mbps", "write_iops"):
            mine, theirs = getattr(t, key), getattr(r, key)
            if mine is not None and theirs:
                pct[key] = round(100.0 * mine / theirs, 1)
        out.append(replace(t, pct_of_reference=pct))
    return tuple(out)
