"""How sure is a figure? A 95% confidence interval from a test's per-interval samples, and when to stop (pure).

Method: non-overlapping batch means (Schmeiser, "Batch size effects in the analysis of simulation output",
Operations Research 30(3), 1982; Law & Kelton, "Simulation Modeling and Analysis", ch. 9, "the method of
batch means"). Throughput samples taken every 100 ms are autocorrelated: a queue, a write-back burst or a
neighbour's load lasts longer than one interval, so the plain standard error of the samples is too small.
The n samples after the ramp are cut into k batches of m consecutive samples; when a batch spans the
correlation, the batch means are nearly independent and nearly normal, and

    mean +- t(k-1, 0.975) * sd(batch means) / sqrt(k)

is a 95% interval for the long-run mean. Schmeiser found 10 to 30 batches lose little against the best
choice, and fewer than 10 cost width through the t quantile; short tests have few samples, so k starts at
MIN_BATCHES with batches of MIN_BATCH_SIZE samples and grows to MAX_BATCHES, after which batches grow instead.
When the batch means are still correlated (lag-1 autocorrelation above MAX_BATCH_LAG1, the test of the
sequential procedures in Law & Carson, "A sequential procedure for determining the length of a steady-state
simulation", Operations Research 27(5), 1979), pairs of batches are merged.

The headline figure of a test (MB/s, or IOPS: the same interval in percent at a fixed block size) is fio's
total over the measured time, which is the mean of equal-length samples; the interval is given as its
half-width in percent of the mean, `ci95_pct`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from disksleuth.model.fio import StatusSample
from disksleuth.model.run import TestResult

MIN_BATCH_SIZE = 2
# A batch spans at least this long when the sample length is known. Samples of 100 ms can hold only a
# few I/Os: blk-throttle's dispatch slices made a steady 50 MB/s read alternate 28/87 MB/s, and batches
# of two such samples doubled its interval (tests/test_confidence_bench.py).
MIN_BATCH_S = 0.3
MIN_BATCHES = 4
MAX_BATCHES = 10
MAX_BATCH_LAG1 = 0.5
DEFAULT_TARGET_PCT = 3.0

# Two-sided 95% quantiles of Student's t, t(df, 0.975) (any statistics table, e.g. NIST/SEMATECH
# e-Handbook 1.3.6.7.2). Between listed degrees of freedom the next lower one is used: wider, never narrower.
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
    11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
    20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
    29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}  # fmt: skip


def t975(df: int) -> float:
    """t(df, 0.975); df >= 1."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df in _T975:
        return _T975[df]
    if df > 120:
        return 1.960
    return _T975[max(k for k in _T975 if k <= df)]


@dataclass(frozen=True)
class Interval:
    mean: float
    half_width: float
    batches: int
    batch_size: int
    samples: int  # samples used (the oldest ones left over by the batching are dropped)

    @property
    def pct(self) -> float:
        """Half-width in percent of the mean (ci95_pct)."""
        return 100.0 * self.half_width / self.mean if self.mean > 0 else math.inf

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _lag1(values: Sequence[float]) -> float:
    mean = _mean(values)
    den = sum((v - mean) ** 2 for v in values)
    if den == 0:
        return 0.0
    return sum((a - mean) * (b - mean) for a, b in zip(values, values[1:], strict=False)) / den


def batch_means(values: Sequence[float], sample_s: float | None = None) -> Interval | None:
    """The 95% interval of the mean of `values` (equal-length samples in time order, each `sample_s`
    long when known), or None when there are too few samples for MIN_BATCHES batches or the mean is
    not positive."""
    n = len(values)
    least = MIN_BATCH_SIZE if not sample_s else max(MIN_BATCH_SIZE, math.ceil(MIN_BATCH_S / sample_s - 1e-9))
    size = max(least, n // MAX_BATCHES)
    count = n // size
    if count < MIN_BATCHES:
        return None
    while True:
        used = values[n - count * size :]  # the oldest leftovers go: they are nearest the ramp
        means = [_mean(used[i * size : (i + 1) * size]) for i in range(count)]
        if count >= 2 * MIN_BATCHES and _lag1(means) > MAX_BATCH_LAG1:
            size, count = size * 2, count // 2
            continue
        break
    grand = _mean(means)
    if grand <= 0:
        return None
    sd = math.sqrt(sum((m - grand) ** 2 for m in means) / (count - 1))
    return Interval(grand, t975(count - 1) * sd / math.sqrt(count), count, size, count * size)


def measured_rates(samples: Sequence[StatusSample], ramp_s: float) -> list[float]:
    """MB/s of each status interval after the ramp, as fio measured it.

    The ramp ends where fio zeroed its counters (its runtime fell behind the wall clock; see
    analysis/results.series_from_samples); our own clock would count fio's start-up as ramp time."""
    from disksleuth.analysis.results import series_from_samples

    start = reset_index(samples, ramp_s)
    if start is None:
        return []  # still in the ramp
    return [p.read_mbps + p.write_mbps for p in series_from_samples(samples[max(0, start - 1) :])]


def reset_index(samples: Sequence[StatusSample], ramp_s: float) -> int | None:
    """The index of the first status document after fio zeroed its counters at the ramp's end (0 without a
    ramp), or None while still in the ramp: where fio's runtime fell behind the wall clock."""
    if ramp_s <= 0:
        return 0
    for i in range(1, len(samples)):
        prev, s = samples[i - 1], samples[i]
        if s.runtime_ms is None or prev.runtime_ms is None:
            return 1  # no runtime to tell by: as measured_rates always did, from the second document
        wall_ms = (s.timestamp_ms - prev.timestamp_ms) if s.timestamp_ms and prev.timestamp_ms else None
        if s.runtime_ms < prev.runtime_ms or (wall_ms and s.runtime_ms - prev.runtime_ms < 0.5 * wall_ms):
            return i
    return None


def ci95_pct(values: Sequence[float], sample_s: float | None = None) -> float | None:
    interval = batch_means(values, sample_s)
    return round(interval.pct, 2) if interval is not None else None


@dataclass(frozen=True)
class StopRule:
    """A test stops once it has measured `min_s` and its interval is within `target_pct`; fio's own
    runtime ends it at its maximum."""

    target_pct: float = DEFAULT_TARGET_PCT
    min_s: float = 0.0
    sample_s: float | None = None

    def sure(self, values: Sequence[float], measured_s: float) -> bool:
        if measured_s + 1e-9 < self.min_s:
            return False
        interval = batch_means(values, self.sample_s)
        return interval is not None and interval.pct <= self.target_pct


def straddles(interval_low: float, interval_high: float, threshold: float) -> bool:
    return interval_low < threshold <= interval_high


def headline(t: TestResult) -> float:
    """The figure a test is known by: its total MB/s (IOPS move with it at a fixed block size)."""
    return (t.read_mbps or 0.0) + (t.write_mbps or 0.0)


def _median_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if known else None


def median_of_passes(passes: Sequence[Sequence[TestResult]]) -> tuple[TestResult, ...]:
    """bench --repeat: each test's figures as medians over the passes, with the spread across them.

    The latency and other fields come from the pass whose headline figure is the median (the lower
    middle one for an even count), so they belong together; its ci95_pct is that pass's own interval."""
    out = []
    for i in range(len(passes[0])):
        runs = [p[i] for p in passes]
        values = [headline(r) for r in runs]
        middle = sorted(runs, key=headline)[(len(runs) - 1) // 2]
        centre = statistics.median(values)
        spread = round(100.0 * (max(values) - min(values)) / centre, 2) if centre > 0 else None
        note = (
            f"median of {len(runs)} passes: " + ", ".join(f"{v:,.1f}" for v in values) + " MB/s"
            + (f", spread {spread:.1f}%" if spread is not None else "")
        )  # fmt: skip
        out.append(
            replace(
                middle,
                read_mbps=_median_known(r.read_mbps for r in runs),
                read_iops=_median_known(r.read_iops for r in runs),
                write_mbps=_median_known(r.write_mbps for r in runs),
                write_iops=_median_known(r.write_iops for r in runs),
                repeat_values=tuple(round(v, 2) for v in values),
                repeat_spread_pct=spread,
                notes=(*middle.notes, note),
            )
        )
    return tuple(out)
