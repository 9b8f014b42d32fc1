"""One rate per test from the requests it completed (pure).

fio's totals disagree with each other at card and stick speeds: after the ramp its `io_bytes` counts every
request completed since the counters were reset (the iodepth ones issued during the ramp too, and the ones
drained after the last issue), while `total_ios` counts only the ones issued since the reset; the two differ
by up to iodepth x block size, 8 MiB for SEQ1M Q8T1, against the 20-150 requests a window of 2-3 s holds at
10-50 MB/s (issue 37: 9.99 MB/s beside 6.4 IOPS of 1 MiB at a 10 MB/s cap).

From a per-request log (completion time and latency of each, probe/fio_bwlog.read_lat_logs) the window is
made of completions only:
- it opens at the first completion after the reset and closes at the last one before fio stopped issuing
  (the latest issue time, completion minus latency): the drain after it runs with a queue emptying, and
  fio stamps it late (a 10 MB/s throttle drained eight requests over 0.8 s, logged in the same millisecond);
- it opens and closes at the end of a burst of completions (`_edges`), and counts the requests completed after
  its opening one up to its closing one, over the time between the two: MB/s is IOPS x block size exactly;
- the 95% interval is batch means (analysis/confidence.py) of that same ratio over batches of the window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from disksleuth.analysis import confidence
from disksleuth.model.fio import StatusSample
from disksleuth.model.run import SeriesPoint, TestResult

# A figure holds at least this many completed requests: its interval then rests on 99 gaps or more, in ten
# batches of ten. A test's window grows until it holds them (the stop rule waits), within the time its profile
# gives it: SEQ1M Q8T1 holds them in 2.1 s at 50 MB/s, and says it has fewer when capped lower in `quick`.
MIN_COMPLETIONS = 100
# Tests of this block size or larger log every request (a few thousand lines a second even at 7 GB/s);
# smaller ones hold thousands of requests in any window, where an edge is lost in the count.
PER_IO_LOG_MIN_BS = 128 * 1024

# A point of the series holds at least this many requests: one more or less in it then moves it by 3% at most
# (blk-throttle's 100 ms slices held four or five 1 MiB reads at 50 MB/s: 39-55 MB/s as points of one slice).
SERIES_MIN_IOS = 34

COMPLETIONS = "completions"  # rate_basis: from the per-request log
# rate_basis of smaller blocks: fio's completed-request counts in its status documents (see counted_window).
COUNTED = "completed_counts"
# A point of the series spans at least a second (the per-second series of charts): blk-throttle and write-back
# release requests in bursts, and a point of 100 ms held one burst too many or too few (359 MB/s beside 109 at a
# 200 MB/s cap), one of 0.5 s still 20% too many (60 MB/s at a 50 MB/s cap, 4 KiB reads).
SERIES_MIN_S = 1.0
# A counted test's point (counted_series) spans at least this long: a status document's bytes and its timestamp are
# not read at the same moment, and under load one came 85 ms late (a 185 ms interval holding 100 ms of requests):
# points of a second still held 9% more than a 50 MB/s cap beside a figure of 50.6 MB/s ±8.9%, once in seven runs.
COUNTED_SERIES_MIN_S = 2.0

# (completion time ms, latency ns, direction, block size bytes), as probe/fio_bwlog.read_lat_logs gives them.
Entry = tuple[int, int, str, int]


@dataclass(frozen=True)
class Window:
    completed_ios: int  # requests completed inside the window (the one opening it not counted)
    window_s: float
    end_ms: int  # when it closed, in fio's time since its counters were reset (its status documents' runtime)
    read_bytes: int
    write_bytes: int
    read_ios: int
    write_ios: int
    ci95_pct: float | None
    steady: tuple[Entry, ...] = ()  # the completions up to the last issue, in time order
    edges: tuple[int, ...] = ()  # indices in `steady` a window may open or close at (`_edges`)
    basis: str = COMPLETIONS  # rate_basis of the figures it gives

    def mbps(self, direction: str) -> float:
        done = self.read_bytes if direction == "read" else self.write_bytes
        return done / self.window_s / 1e6

    def iops(self, direction: str) -> float:
        return (self.read_ios if direction == "read" else self.write_ios) / self.window_s


def window(entries: Sequence[Entry]) -> Window | None:
    """The completions-only window of a test, or None when it holds too few completions apart in time."""
    if len(entries) < 2:
        return None
    last_issue_ms = max(t - lat / 1e6 for t, lat, _, _ in entries)
    # A completion stamped in the millisecond of the last issue belongs to the window (times are whole ms).
    steady = sorted((e for e in entries if e[0] <= last_issue_ms + 1), key=lambda e: e[0])
    times = [e[0] for e in steady]
    edges = _edges(times)
    if len(edges) < 2:
        return None
    first, last = edges[0], edges[-1]
    inside = steady[first + 1 : last + 1]
    read = [e for e in inside if e[2] == "read"]
    write = [e for e in inside if e[2] == "write"]
    return Window(
        completed_ios=len(inside),
        window_s=(times[last] - times[first]) / 1000.0,
        end_ms=times[last],
        steady=tuple(steady),
        edges=tuple(edges),
        read_bytes=sum(e[3] for e in read),
        write_bytes=sum(e[3] for e in write),
        read_ios=len(read),
        write_ios=len(write),
        ci95_pct=_interval_pct(times, edges),
    )


def _edges(times: Sequence[int]) -> list[int]:
    """Indices of the completions a window may open or close at: those followed by a gap of at least the mean.

    Completions come in bursts: blk-throttle releases a slice's worth at once (five 1 MiB reads in the same
    millisecond every 100 ms at a 50 MB/s cap). A window from the first of one burst to the last of another
    counts a burst too many (+4% there); one from the end of a burst to the end of another holds whole bursts
    over whole periods. In a steady flow about every other completion qualifies."""
    if len(times) < 2 or times[-1] <= times[0]:
        return []
    mean_gap = (times[-1] - times[0]) / (len(times) - 1)
    return [i for i in range(len(times) - 1) if times[i + 1] - times[i] >= mean_gap]


def _interval_pct(times: Sequence[int], edges: Sequence[int], counts: Sequence[int] | None = None) -> float | None:
    """The 95% interval of completions per unit time over the window, in percent, by batch means of a ratio:
    the window cut at edges into about MAX_BATCHES batches of equal time, each batch (requests, time), and the
    spread of requests - rate x time across batches (the ratio estimator's residuals; its centre is the window's
    own rate, so the interval is of the figure shown)."""
    first, last = edges[0], edges[-1]
    span = times[last] - times[first]
    wanted = min(confidence.MAX_BATCHES, len(edges) - 1)
    if span <= 0 or wanted < confidence.MIN_BATCHES:
        return None
    cuts = [first]
    for j in range(1, wanted):
        goal = times[first] + span * j / wanted
        nearest = min(edges, key=lambda i: abs(times[i] - goal))
        if nearest > cuts[-1]:
            cuts.append(nearest)
    if last > cuts[-1]:
        cuts.append(last)
    done = counts if counts is not None else range(len(times))  # completions up to each index
    batches = [
        (done[b] - done[a], times[b] - times[a]) for a, b in zip(cuts, cuts[1:], strict=False) if times[b] > times[a]
    ]
    k = len(batches)
    if k < confidence.MIN_BATCHES:
        return None
    rate = sum(c for c, _ in batches) / sum(t for _, t in batches)
    residuals = [c - rate * t for c, t in batches]
    mean_t = sum(t for _, t in batches) / k
    se = math.sqrt(sum(r * r for r in residuals) / (k * (k - 1))) / mean_t
    return round(100.0 * confidence.t975(k - 1) * se / rate, 2) if rate > 0 else None


def too_few_note(completed_ios: int, window_s: float) -> str | None:
    """Said when a test's window ended before it held MIN_COMPLETIONS requests (the profile's time ran out)."""
    if completed_ios >= MIN_COMPLETIONS:
        return None
    return (
        f"{completed_ios} requests completed in its {window_s:.1f} s window, fewer than the {MIN_COMPLETIONS} "
        "a figure wants: the time the profile gives a test ran out first"
    )


def with_window(result: TestResult, window: Window) -> TestResult:
    """The figures of a test from its completions-only window (analysis/completions.py): MB/s and IOPS of
    the same requests, so MB/s is IOPS x block size. Latency and everything else stay fio's."""

    def mbps(direction: str, shown: float | None) -> float | None:
        return round(window.mbps(direction), 2) if shown is not None else None

    def iops(direction: str, shown: float | None) -> float | None:
        # Two decimals below 100 IOPS: one would move IOPS x block size 0.5% from the MB/s beside it at 10 IOPS.
        value = window.iops(direction)
        return round(value, 2 if value < 100 else 1) if shown is not None else None

    return replace(
        result,
        read_mbps=mbps("read", result.read_mbps),
        read_iops=iops("read", result.read_iops),
        write_mbps=mbps("write", result.write_mbps),
        write_iops=iops("write", result.write_iops),
        completed_ios=window.completed_ios,
        window_s=round(window.window_s, 3),
        rate_basis=window.basis,
    )


def series(window: Window, samples: Sequence[StatusSample], interval_s: float) -> tuple[SeriesPoint, ...]:
    """The test's throughput over time from the same completions as its figures: one point per stretch of
    at least `interval_s` and SERIES_MIN_IOS requests between ends of bursts (`_edges`), so each point holds whole
    bursts over whole periods.
    fio's status documents counted a burst or a drain stamped late in one 100 ms interval (a point of 76 MB/s
    under a 50 MB/s cap, issue 37); here no point holds more requests than were served in its time.

    Times are our clock's since fio started, as the status series' are: a document after the ramp tells how
    far fio's counters' time (the log's) is behind it. Empty when no document says (the caller keeps fio's)."""
    offsets = [s.elapsed_s - s.runtime_ms / 1000.0 for s in samples if s.runtime_ms is not None]
    if not offsets or len(window.edges) < 2:
        return ()
    offset_s = offsets[-1]
    times = [e[0] for e in window.steady]
    cuts = [window.edges[0]]
    least_s = max(interval_s, SERIES_MIN_S)
    for i in window.edges[1:]:
        since_ms = times[i] - times[cuts[-1]]
        if since_ms >= 1000 * least_s and i - cuts[-1] >= SERIES_MIN_IOS:
            cuts.append(i)
        elif i == window.edges[-1] and since_ms > 0:
            # The last stretch joins the point before it when shorter than a point (a point of one millisecond
            # would be a spike of its own, and one of half a point still held 13% too many at a 50 MB/s cap).
            if (since_ms < 1000 * least_s or i - cuts[-1] < SERIES_MIN_IOS) and len(cuts) > 1:
                cuts[-1] = i
            else:
                cuts.append(i)
    out: list[SeriesPoint] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        span_s = (times[b] - times[a]) / 1000.0
        done = window.steady[a + 1 : b + 1]
        read = sum(e[3] for e in done if e[2] == "read")
        write = sum(e[3] for e in done if e[2] == "write")
        out.append(
            SeriesPoint(
                t_s=round(offset_s + times[b] / 1000.0, 2),
                read_mbps=round(read / span_s / 1e6, 3),
                write_mbps=round(write / span_s / 1e6, 3),
                iops=round(len(done) / span_s, 1),
            )
        )
    return tuple(out)


# --- smaller blocks: fio's own counts ---------------------------------------------------------------------------
#
# A test of 4 KiB blocks completes thousands to hundreds of thousands of requests a second: a per-request log would
# be tens of MB a test to write and read (200k lines a second on a RAM device), and an edge of iodepth requests is
# a fraction of a percent of its window. So its figures come from what fio counts of completed requests: the bytes
# completed (io_bytes) in each status document, at a fixed block size that many requests. fio's total_ios is not
# used: it counts requests issued, iodepth ahead of the completed ones. The window runs from the first document
# after the ramp's reset to the last one the stop rule judged, over fio's own timestamps of the two (its runtime
# field can lag the bytes it is reported with), so the drain after the last issue and a partial last interval are
# left out, as for the logged tests; the interval is batch means of the same counts (`_interval_pct`), and the
# series sums the same counts over stretches of at least SERIES_MIN_S.


def counted_window(samples: Sequence[StatusSample], bs_bytes: int, ramp_s: float) -> Window | None:
    """The window of a test of `bs_bytes` blocks from fio's completed bytes in its status documents, or None
    when fewer than two documents after the ramp carry fio's timestamps."""
    start = confidence.reset_index(samples, ramp_s)
    if start is None or bs_bytes <= 0:
        return None
    docs = _running(samples[start:])
    if len(docs) < 2 or docs[-1].timestamp_ms == docs[0].timestamp_ms:
        return None
    base = docs[0]
    times = [(d.timestamp_ms or 0) - (base.timestamp_ms or 0) for d in docs]
    counts = [(d.read_bytes + d.write_bytes - base.read_bytes - base.write_bytes) // bs_bytes for d in docs]
    read_bytes, write_bytes = docs[-1].read_bytes - base.read_bytes, docs[-1].write_bytes - base.write_bytes
    edges = list(range(len(docs)))
    return Window(
        completed_ios=counts[-1],
        window_s=times[-1] / 1000.0,
        end_ms=times[-1],
        read_bytes=read_bytes // bs_bytes * bs_bytes,
        write_bytes=write_bytes // bs_bytes * bs_bytes,
        read_ios=read_bytes // bs_bytes,
        write_ios=write_bytes // bs_bytes,
        ci95_pct=_interval_pct(times, edges, counts),
        basis=COUNTED,
    )


def counted_series(
    samples: Sequence[StatusSample], bs_bytes: int, ramp_s: float, interval_s: float
) -> tuple[SeriesPoint, ...]:
    """The throughput over time of a counted test (`counted_window`): completed bytes over fio's timestamps,
    summed over stretches of at least COUNTED_SERIES_MIN_S (a 100 ms document held a burst of the throttle too many
    or too few: 8.5 and 81 MB/s beside each other at a steady 41). Times are our clock's at each closing document."""
    start = confidence.reset_index(samples, ramp_s)
    if start is None or bs_bytes <= 0:
        return ()
    docs = _running(samples[start:])
    least_ms = 1000 * max(interval_s, COUNTED_SERIES_MIN_S)
    out: list[SeriesPoint] = []
    a = prev_a = 0
    for b in range(1, len(docs)):
        span_ms = (docs[b].timestamp_ms or 0) - (docs[a].timestamp_ms or 0)
        last = b == len(docs) - 1
        if span_ms < least_ms and not last:
            continue
        if last and span_ms < least_ms and out:
            out.pop()  # a last stretch shorter than a point joins the point before it
            a = prev_a
            span_ms = (docs[b].timestamp_ms or 0) - (docs[a].timestamp_ms or 0)
        if span_ms <= 0:
            continue
        read = docs[b].read_bytes - docs[a].read_bytes
        write = docs[b].write_bytes - docs[a].write_bytes
        span_s = span_ms / 1000.0
        out.append(
            SeriesPoint(
                t_s=round(docs[b].elapsed_s, 2),
                read_mbps=round(read / span_s / 1e6, 3),
                write_mbps=round(write / span_s / 1e6, 3),
                iops=round((read + write) // bs_bytes / span_s, 1),
            )
        )
        prev_a, a = a, b
    return tuple(out)


def _running(samples: Sequence[StatusSample]) -> list[StatusSample]:
    """The documents with fio's timestamps up to the last whole interval of the job: fio goes on printing documents
    while its job ends (the same bytes, later timestamps), and the one in which the job stopped holds the drain and
    less of the job's own time than its timestamps say (runtime +101 ms over 127 ms, and half the requests of the
    intervals before it, at a 10,000 IOPS cap: tests/data/fio_status). Either would count time without requests."""
    docs = [s for s in samples if s.timestamp_ms is not None]
    end = len(docs)
    while end > 2:
        last, before = docs[end - 1], docs[end - 2]
        if last.runtime_ms is None or before.runtime_ms is None:
            break
        wall_ms = (last.timestamp_ms or 0) - (before.timestamp_ms or 0)
        if last.runtime_ms - before.runtime_ms >= 0.9 * wall_ms:
            break
        end -= 1
    return docs[:end]
