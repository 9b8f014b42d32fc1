"""Where does the write cache run out? Phases of a long sequential fill, the cliff, and heat told apart (pure).

The fill's throughput comes from fio's bandwidth log, one average per LOG_AVG_MS window (finer than
TechPowerUp's "twice a second", so that a cache lasting a second on a test device still spans several
windows); long runs are binned to at most MAX_POINTS points before the search. The series is split into
phases of constant mean rate with PELT (Killick, Fearnhead and Eckley, "Optimal detection of changepoints
with a linear computational cost", JASA 107(500), 2012), through the `ruptures` library (Truong, Oudre and
Vayatis, Signal Processing 167, 2020): least-squares cost, penalty 2·σ²·ln(n) (the BIC form for a change in
mean), σ estimated from the median absolute difference of neighbouring samples so that steps do not
inflate it.

Neighbouring phases whose rates differ by less than MERGE_PCT are one phase, and a phase needs at least
MIN_PHASE_POINTS windows. A phase boundary is a CLIFF when all of these hold:
- the rate after it (bytes over time, to the end of the run or the next cliff) is at least CLIFF_DROP_PCT
  below the rate before it;
- the rate after it is below the 10th percentile of the windows before it: a level the drive did not dip to
  while the cache lasted (a noisy series dips there all the time);
- no later phase climbs back to within CLIFF_DROP_PCT of the rate before it: a cache that ran out stays out.
The burst rate is the rate before the first cliff; the sustained rate is the rate after it, less a brief
step between the two levels right after the cliff (_settled_after): the window that holds the switch mixes
both rates, and the switch is placed inside that step where the mix of the two rates matches its bytes.
A flat or noisy-flat series has no such boundary, so no cliff is reported for it.

Heat or cache: when the drive's temperature reached its warning threshold within THERMAL_BEFORE_S before to
THERMAL_AFTER_S after the cliff, the drop is thermal throttling, not the cache running out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from disksleuth.model import Finding
from disksleuth.model.fio import BwLogEntry
from disksleuth.model.sustained import FillPoint, Phase, Recovery, Sustained

LOG_AVG_MS = 100
MAX_POINTS = 400
CLIFF_DROP_PCT = 40.0  # real caches fall by half or more; a 30% sag is what a busy host alone can do
MERGE_PCT = 15.0
MIN_PHASE_POINTS = 3
BEFORE_QUANTILE = 10.0
THERMAL_BEFORE_S = 10.0  # the temperature sampler reads once a second; throttling follows within seconds
THERMAL_AFTER_S = 3.0
SETTLE_SHARE = 0.10
SIGMA_FLOOR = 0.02  # 2% of the median rate: below that, wobble is quantisation (1 MiB blocks, KiB/s logs)


def fill_points(
    entries: Sequence[BwLogEntry],
    total_bytes: int | None = None,
    direction: str = "write",
    total_s: float | None = None,
) -> tuple[FillPoint, ...]:
    """Rate against bytes written, anchored to fio's own totals so that the fill has ONE rate: bytes written
    over fill time (`total_bytes` / `total_s`, fio's io_bytes and runtime, i.e. the test's write_mbps).

    Each window's bytes are its rate times its length (the first window starts at 0 ms). fio's log stops at
    the last whole window (a 384 ms fill logged windows ending at 137 and 300 ms only, fio 3.33, this repo's
    RAM loop device) and rounds to whole KiB/s, so: the bytes after the last window become a final, shorter
    window up to `total_s` (or stretch the last window to it); when there are none to place, bytes and times
    are scaled to fio's totals. Every point's rate is then its own bytes over its own time, so phases, the
    chart and fio's figure agree."""
    raw: list[tuple[float, float]] = []  # (seconds, bytes written by then)
    previous_ms = 0
    written = 0.0
    for e in entries:
        if e.direction != direction or e.t_ms <= previous_ms:
            continue
        written += e.bytes_per_s * (e.t_ms - previous_ms) / 1000.0
        raw.append((e.t_ms / 1000.0, written))
        previous_ms = e.t_ms
    last_s = raw[-1][0] if raw else 0.0
    if total_bytes and total_s and total_s > last_s and total_bytes > written:
        # The tail fio did not log: its own window, or the last one stretched when it is under half a window
        # (a few ms hold a few I/Os, and their rate would be a spike of bookkeeping, not of the drive).
        last_window = last_s - (raw[-2][0] if len(raw) > 1 else 0.0)
        if raw and total_s - last_s < last_window / 2:
            raw.pop()
        raw.append((total_s, float(total_bytes)))
    elif raw and total_bytes:
        byte_scale = total_bytes / written if written > 0 else 1.0
        time_scale = total_s / last_s if total_s and last_s > 0 else 1.0
        raw = [(t * time_scale, w * byte_scale) for t, w in raw]
    out: list[FillPoint] = []
    t0, b0 = 0.0, 0
    for t, w in raw:
        t_r, b_r = round(t, 3), int(round(w))
        if t_r <= t0:
            continue
        out.append(FillPoint(t_r, b_r, round((b_r - b0) / (t_r - t0) / 1e6, 3)))
        t0, b0 = t_r, b_r
    return tuple(out)


def binned(points: Sequence[FillPoint], max_points: int = MAX_POINTS) -> tuple[FillPoint, ...]:
    """At most `max_points` points: consecutive windows joined, each bin's rate its bytes over its time."""
    k = math.ceil(len(points) / max_points) if points else 1
    if k <= 1:
        return tuple(points)
    out: list[FillPoint] = []
    t0, b0 = 0.0, 0
    for i in range(k - 1, len(points) + k - 1, k):
        last = points[min(i, len(points) - 1)]
        dt = last.t_s - t0
        rate = (last.written_bytes - b0) / dt / 1e6 if dt > 0 else 0.0
        out.append(FillPoint(last.t_s, last.written_bytes, round(rate, 3)))
        t0, b0 = last.t_s, last.written_bytes
        if i >= len(points) - 1:
            break
    return tuple(out)


@dataclass(frozen=True)
class _Span:
    """points[start:end] as one stretch of the run."""

    start: int
    end: int


def _bounds(points: Sequence[FillPoint], i: int) -> tuple[float, int]:
    """(seconds, bytes) at the start of window i."""
    return (0.0, 0) if i == 0 else (points[i - 1].t_s, points[i - 1].written_bytes)


def _rate(points: Sequence[FillPoint], span: _Span) -> float:
    t0, b0 = _bounds(points, span.start)
    t1, b1 = points[span.end - 1].t_s, points[span.end - 1].written_bytes
    return (b1 - b0) / (t1 - t0) / 1e6 if t1 > t0 else 0.0


def _change_points(values: Sequence[float]) -> list[int]:
    """PELT segment ends (exclusive indices, the last is len(values))."""
    n = len(values)
    if n < 2 * MIN_PHASE_POINTS:
        return [n]
    import numpy as np
    import ruptures  # heavy: imported only when a sustained run is analysed

    x = np.asarray(values, dtype=float)
    level = float(np.median(x)) or float(x.max()) or 1.0
    y = x / level
    sigma = float(np.median(np.abs(np.diff(y)))) / (0.6745 * math.sqrt(2))
    sigma = max(sigma, SIGMA_FLOOR)
    algo = ruptures.Pelt(model="l2", min_size=MIN_PHASE_POINTS, jump=1).fit(y)
    return [int(b) for b in algo.predict(pen=2 * sigma**2 * math.log(n))]


def _merge(points: Sequence[FillPoint], spans: list[_Span]) -> list[_Span]:
    """Join neighbours closer than MERGE_PCT, and phases shorter than MIN_PHASE_POINTS, most similar first."""
    spans = list(spans)
    while len(spans) > 1:
        rates = [_rate(points, s) for s in spans]

        def gap(i: int, rates: list[float] = rates) -> float:
            a, b = rates[i], rates[i + 1]
            return abs(a - b) / max(a, b, 1e-9) * 100.0

        short = [i for i, s in enumerate(spans) if s.end - s.start < MIN_PHASE_POINTS]
        if short:
            i = short[0]
            neighbours = [j for j in (i - 1, i) if 0 <= j < len(spans) - 1]
            j = min(neighbours, key=gap)
        else:
            j = min(range(len(spans) - 1), key=gap)
            if gap(j) >= MERGE_PCT:
                break
        spans[j : j + 2] = [_Span(spans[j].start, spans[j + 1].end)]
    return spans


def _percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _cliffs(points: Sequence[FillPoint], spans: list[_Span]) -> list[int]:
    """Indices b of spans after which a cliff lies (the boundary between spans[b] and spans[b + 1])."""
    found: list[int] = []
    first = 0  # the stretch before a cliff starts at the previous cliff
    rates = [_rate(points, s) for s in spans]
    for b in range(len(spans) - 1):
        before = _Span(spans[first].start, spans[b].end)
        after = _Span(spans[b + 1].start, spans[-1].end)
        rate_before, rate_after = _rate(points, before), _rate(points, after)
        if rate_before <= 0 or (1 - rate_after / rate_before) * 100.0 < CLIFF_DROP_PCT:
            continue
        windows_before = [p.mbps for p in points[before.start : before.end]]
        if rate_after >= _percentile(windows_before, BEFORE_QUANTILE):
            continue
        if max(rates[b + 1 :]) >= rate_before * (1 - CLIFF_DROP_PCT / 100.0):
            continue
        found.append(b)
        first = b + 1
    return found


def find_phases(points: Sequence[FillPoint]) -> tuple[tuple[Phase, ...], list[int]]:
    """(phases, indices of the phases that end in a cliff)."""
    if not points:
        return (), []
    ends = _change_points([p.mbps for p in points])
    spans, start = [], 0
    for end in ends:
        spans.append(_Span(start, end))
        start = end
    spans = _merge(points, spans)
    phases = []
    for s in spans:
        t0, b0 = _bounds(points, s.start)
        last = points[s.end - 1]
        phases.append(Phase(b0, last.written_bytes, round(t0, 3), last.t_s, round(_rate(points, s), 1)))
    return tuple(phases), _cliffs(points, spans)


def _settled_after(after: Sequence[Phase], after_s: float) -> Phase:
    """The first phase after a cliff that is not a brief step between the two levels: the window that holds
    the switch mixes both rates, so a phase shorter than SETTLE_SHARE of the rest and faster than the next
    one is left out of the sustained rate."""
    for i, p in enumerate(after[:-1]):
        if (p.end_s - p.start_s) >= SETTLE_SHARE * after_s or p.mbps <= after[i + 1].mbps:
            return p
    return after[-1]


def _switch_point(last_fast: Phase, settled: Phase, sustained_mbps: float | None) -> tuple[int, float]:
    """(bytes, seconds) where the rate switched. With a brief step left between the fast phase and the settled
    one, the step's bytes are split as a mix of the two rates: fast for x seconds, then sustained."""
    start_b, start_s = last_fast.end_bytes, last_fast.end_s
    step_b, step_s = settled.start_bytes - start_b, settled.start_s - start_s
    fast, slow = last_fast.mbps * 1e6, (sustained_mbps or 0.0) * 1e6
    if step_s <= 0 or fast <= slow:
        return start_b, start_s
    x = min(max((step_b - slow * step_s) / (fast - slow), 0.0), step_s)
    return int(start_b + fast * x), round(start_s + x, 3)


def _temperature_near(temperatures: Sequence[tuple[float, float]], t_s: float) -> float | None:
    near = [c for t, c in temperatures if t_s - THERMAL_BEFORE_S <= t <= t_s + THERMAL_AFTER_S]
    return max(near) if near else None


def analyse(
    points: Sequence[FillPoint],
    temperatures: Sequence[tuple[float, float]] = (),
    warning_c: float | None = None,
    stopped_by: str = "size",
) -> Sustained:
    """The fill's phases, its first cliff, and whether that cliff was the cache or heat."""
    points = binned(points)
    phases, cliffs = find_phases(points)
    written = points[-1].written_bytes if points else 0
    duration = points[-1].t_s if points else 0.0
    peak = max((c for _, c in temperatures), default=None)
    overall = round(written / duration / 1e6, 1) if duration > 0 else None
    # What was measured; each outcome below adds its verdict.
    measured = Sustained(
        written_bytes=written,
        duration_s=duration,
        cache_exhausted_at_bytes=None,
        burst_mbps=None,
        sustained_mbps=None,
        phases=phases,
        cause=None,
        points=points,
        temperatures=tuple(temperatures),
        temperature_peak_c=peak,
        temperature_warning_c=warning_c,
        stopped_by=stopped_by,
    )
    if len(points) < 2 * MIN_PHASE_POINTS:  # too few windows to tell a phase from a wobble: no verdict at all
        return replace(
            measured,
            reason=(
                f"too short to judge: {len(points)} bandwidth-log window{'s' if len(points) != 1 else ''} "
                f"in {duration:g} s, at least {2 * MIN_PHASE_POINTS} of {LOG_AVG_MS} ms are needed to tell phases "
                "apart: give a larger --size"
            ),
            judged=False,
        )
    if not cliffs:
        return replace(
            measured,
            burst_mbps=overall,
            sustained_mbps=overall,
            reason=f"no drop of {CLIFF_DROP_PCT:.0f}% or more that lasted: the rate held",
        )
    cliff = phases[cliffs[0]]
    settled = _settled_after(phases[cliffs[0] + 1 :], duration - cliff.end_s)
    rest_s = duration - settled.start_s
    sustained = round((written - settled.start_bytes) / rest_s / 1e6, 1) if rest_s > 0 else None
    at_bytes, at_s = _switch_point(cliff, settled, sustained)
    burst = round(at_bytes / at_s / 1e6, 1) if at_s > 0 else None
    drop = round((1 - sustained / burst) * 100.0, 1) if burst and sustained is not None else None
    temp = _temperature_near(temperatures, at_s)
    if temp is not None and warning_c is not None and temp >= warning_c:
        cause = "thermal"
        reason = (
            f"the drive reached {temp:g} °C (warning threshold {warning_c:g} °C) when the rate fell: "
            "heat, not the write cache"
        )
    elif not temperatures:
        cause, reason = "cache", "no temperature readings during the run, so heat cannot be ruled out"
    elif warning_c is None:
        cause = "cache"
        reason = f"{temp if temp is not None else peak:g} °C at the drop; the drive reports no warning threshold"
    else:
        shown = temp if temp is not None else peak
        cause = "cache"
        reason = f"{shown:g} °C at the drop, below the {warning_c:g} °C warning threshold: not heat"
    return replace(
        measured,
        cache_exhausted_at_bytes=at_bytes if cause == "cache" else None,
        burst_mbps=burst,
        sustained_mbps=sustained,
        cause=cause,
        cliff_at_bytes=at_bytes,
        cliff_at_s=at_s,
        drop_pct=drop,
        temperature_at_cliff_c=temp,
        reason=reason,
    )


def recovery(points: Sequence[FillPoint], idle_s: float, fill: Sustained) -> Recovery:
    """How much of the burst came back after idling: the bytes written before the rate fell again."""
    points = binned(points)
    phases, cliffs = find_phases(points)
    written = points[-1].written_bytes if points else 0
    fell = bool(cliffs)
    fast = phases[cliffs[0]].end_bytes if fell else written
    first_rate = phases[0].mbps if phases else 0.0
    cache = fill.cache_exhausted_at_bytes
    return Recovery(
        idle_s=idle_s,
        written_bytes=written,
        fast_bytes=fast,
        mbps=first_rate,
        recovered_pct=round(100.0 * fast / cache, 1) if cache else None,
        fell=fell,
        points=tuple(points),
    )


def _size(n: int) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.0f} MB"


def phases_line(s: Sustained) -> str:
    """ "2,400 MB/s for the first 42.0 GB, then 480 MB/s": every phase in order."""
    if not s.phases:
        return "no data"
    parts = [f"{s.phases[0].mbps:,.0f} MB/s for the first {_size(s.phases[0].end_bytes)}"]
    for p in s.phases[1:]:
        parts.append(f"{p.mbps:,.0f} MB/s to {_size(p.end_bytes)}")
    return ", then ".join(parts)


def findings(s: Sustained, device: str | None = None) -> list[Finding]:
    """write_cache_cliff (info) when the cache ran out; thermal_throttling (warn) when heat did it."""
    if s.cause is None or s.cliff_at_bytes is None or s.burst_mbps is None or s.sustained_mbps is None:
        return []
    evidence = {
        "burst_mbps": s.burst_mbps,
        "sustained_mbps": s.sustained_mbps,
        "cliff_at_bytes": s.cliff_at_bytes,
        "cliff_at_s": s.cliff_at_s,
        "drop_pct": s.drop_pct,
        "written_bytes": s.written_bytes,
        "temperature_at_cliff_c": s.temperature_at_cliff_c,
        "temperature_warning_c": s.temperature_warning_c,
        "phases": phases_line(s),
    }
    head = (
        f"Writes ran at {s.burst_mbps:,.0f} MB/s for the first {_size(s.cliff_at_bytes)}, "
        f"then {s.sustained_mbps:,.0f} MB/s"
    )
    if s.cause == "thermal":
        return [
            Finding(
                "thermal_throttling",
                "warn",
                f"{head}: {s.reason}.",
                evidence,
                "Give it airflow or a heatsink (M.2 drives often need one), then run the sustained profile again "
                "to see where the write cache itself runs out.",
                device,
            )
        ]
    extra = ""
    if len(s.phases) > 2:
        extra = f" Phases: {phases_line(s)}."
    if s.recovery is not None and s.recovery.recovered_pct is not None:
        extra += (
            f" After {s.recovery.idle_s:g} s idle, {_size(s.recovery.fast_bytes)} ran fast again "
            f"({s.recovery.recovered_pct:.0f}% of the cache)."
        )
    return [
        Finding(
            "write_cache_cliff",
            "info",
            f"{head} ({s.drop_pct:.0f}% slower): the write cache ran out ({s.reason}).{extra}",
            evidence,
            "Normal for drives with an SLC or DRAM write cache. Size large copies to the cache, or choose a drive "
            "whose after-cache rate suits your workload.",
            device,
        )
    ]
