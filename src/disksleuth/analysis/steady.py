"""Is a test's throughput stable, how sure is its figure, and did it fall off a cliff? (pure)

Stability is the spread of the last WINDOW seconds (stability_pct). When to stop, and the 95% interval
of the figure (ci95_pct), are analysis/confidence.py's. Burst and sustained figures are reported when
the first seconds and the last window differ by more than CLIFF_PCT without overlapping: an SLC cache
running out, in small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from disksleuth.analysis import confidence
from disksleuth.model.run import TestResult

WINDOW = 3
TOLERANCE_PCT = 5.0
CLIFF_PCT = 20.0


NOT_REACHED = "did not reach"  # how a test's note starts when it ran out of time before its interval was sure


def spread_pct(values: Sequence[float]) -> float | None:
    """(max - min) / mean of the values, in percent."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if mean <= 0:
        return None
    return 100.0 * (max(values) - min(values)) / mean


def burst_and_sustained(values: Sequence[float], window: int = WINDOW) -> tuple[float, float] | None:
    """(burst, sustained) MB/s when they differ by more than CLIFF_PCT and do not overlap, else None."""
    if len(values) < window + 2:
        return None
    first, last = values[:2], values[-window:]
    burst = sum(first) / 2
    sustained = sum(last) / window
    if burst <= 0 or abs(burst - sustained) / burst * 100.0 <= CLIFF_PCT:
        return None
    # A level change, not noise: every burst second on one side of every sustained second (a noisy
    # neighbour swings single seconds by more than 20% both ways; a cache running out does not come back).
    if not (min(first) > max(last) or max(first) < min(last)):
        return None
    return burst, sustained


def measured_values(result: TestResult, ramp_s: float) -> list[float]:
    """The per-interval MB/s after the ramp: what the headline figure averages."""
    return [p.read_mbps + p.write_mbps for p in result.series if p.t_s > ramp_s]


def per_second_values(result: TestResult, ramp_s: float) -> list[float]:
    """The samples after the ramp averaged into one per second (the stability and cliff rules count
    seconds; status documents come faster, every 100 ms since issue 13)."""
    points = [p for p in result.series if p.t_s > ramp_s]
    values = [p.read_mbps + p.write_mbps for p in points]
    if len(points) < 3:
        return values
    steps = sorted(b.t_s - a.t_s for a, b in zip(points, points[1:], strict=False))
    per = max(1, round(1.0 / steps[len(steps) // 2])) if steps[len(steps) // 2] > 0 else 1
    return [sum(values[i : i + per]) / per for i in range(0, len(values) - per + 1, per)]


def annotate(
    result: TestResult,
    ramp_s: float,
    stopped_early: bool,
    adaptive: bool,
    target_pct: float | None = None,
    measured: Sequence[float] | None = None,
    sample_s: float | None = None,
    interval_pct: tuple[float | None] | None = None,
) -> TestResult:
    """Stability, the 95% interval of the headline figure, and burst/sustained figures.

    `adaptive`: the test was meant to stop when its interval reached `target_pct`; `stopped_early`: it did.
    `measured`: the per-interval MB/s after the ramp as the stop rule saw them (default: from the series),
    each `sample_s` long. `interval_pct`: the interval already known, in percent (from the test's completions)."""
    values = list(measured) if measured is not None else measured_values(result, ramp_s)
    per_second = per_second_values(result, ramp_s)
    spread = spread_pct(per_second[-WINDOW:])
    if interval_pct is not None:
        ci = interval_pct[0]
    else:
        interval = confidence.batch_means(values, sample_s)
        ci = round(interval.pct, 2) if interval is not None else None
    notes = list(result.notes)
    if adaptive:
        # Sure but not stopped: the test waited for its requests (analysis/completions.MIN_COMPLETIONS), which
        # its own note says.
        settled: bool | None = stopped_early or (ci is not None and target_pct is not None and ci <= target_pct)
    elif ci is not None and target_pct is not None:
        settled = ci <= target_pct
    else:
        settled = None if spread is None else spread <= TOLERANCE_PCT
    if adaptive and not settled:
        target_txt = f" ±{target_pct:g}%" if target_pct is not None else ""
        have = f"; its interval is ±{ci:.1f}%" if ci is not None else ""
        notes.append(f"{NOT_REACHED}{target_txt} in the time it had{have}")
    cliff = burst_and_sustained(per_second)
    burst = sustained = None
    if cliff:
        burst, sustained = round(cliff[0], 1), round(cliff[1], 1)
        notes.append(cliff_note(result, burst, sustained))
    return replace(
        result,
        stability_pct=round(spread, 2) if spread is not None else None,
        settled=settled,
        burst_mbps=burst,
        sustained_mbps=sustained,
        ci95_pct=ci,
        precision_target_pct=target_pct if adaptive else None,
        notes=tuple(notes),
    )


def cliff_note(result: TestResult, burst: float, sustained: float) -> str:
    """One story with the table: the result is fio's average over the whole test; the note says how it moved
    and names that figure. A cache running out is offered only where writes were measured (reads have none)."""
    measured = sum(v for v in (result.read_mbps, result.write_mbps) if v is not None)
    result_txt = f"; the result, {measured:,.0f} MB/s, is the average over the whole test" if measured else ""
    if sustained < burst:
        why = " (a write cache running out?)" if result.writes else ""
        return f"burst {burst:,.0f} MB/s fell to {sustained:,.0f} MB/s sustained{why}{result_txt}"
    return f"warmed up from {burst:,.0f} MB/s to {sustained:,.0f} MB/s sustained{result_txt}"
