"""Baselines (pure): a run against the same drive's earlier runs of the same test, measured the same way.

A figure is judged `slower_than_usual` (warn) or `faster_than_usual` (info) only when it lies outside its
own 95% interval AND outside the baseline's spread: the run's interval and the band around the baseline
do not touch. The codes, the rule and their words live here; the store finds the earlier runs
(store/baseline.py) and run/baseline.py joins the two.

Which runs are "the same drive": the keyed serial id when the run knows one (the drive keeps it when it
moves to another port or host), else its model, size, host and device name. "Measured the same way":
the same profile, engine and size; a test is compared with the same test id only.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from disksleuth.errors import UsageError
from disksleuth.model import Finding
from disksleuth.model.baseline import EarlierRun, Identity, TestFigures

MIN_RUNS = 3  # a median of fewer earlier runs is one run's luck
DEFAULT_RUNS = 5  # median:5 unless --baseline says otherwise
MAX_RUNS = 50  # median:N beyond this is no longer "usual" but a long-term mean
# Reruns of an unchanged drive on a busy machine differ by a few percent even when each run's own interval
# is tighter (CPU placement, the page cache's state, the VM's neighbours): a band narrower than this would
# raise alarms on noise, so the judgement never takes the baseline as tighter than this.
MIN_BAND_PCT = 5.0
LARGE_BLOCK_BYTES = 128 * 1024  # at and above: MB/s is the figure people quote; below: IOPS

SLOWER = "slower_than_usual"
FASTER = "faster_than_usual"


@dataclass(frozen=True)
class Choice:
    """What a run is compared with: the median of the last N earlier runs, the last one, or a given run."""

    kind: str  # "median", "last" or "run"
    runs: int = DEFAULT_RUNS  # for "median"
    run_id: int | None = None  # for "run"

    @property
    def text(self) -> str:
        if self.kind == "run":
            return f"run #{self.run_id}"
        if self.kind == "last":
            return "last"
        return f"median:{self.runs}"


DEFAULT_CHOICE = Choice("median", DEFAULT_RUNS)


def parse_choice(text: str | None) -> Choice:
    """--baseline RUN|last|median:N (the same word `compare --baseline RUN` takes for one run)."""
    if text is None:
        return DEFAULT_CHOICE
    value = text.strip().lower()
    if value == "last":
        return Choice("last", 1)
    if value == "median":
        return DEFAULT_CHOICE
    if value.startswith("median:"):
        n = value.removeprefix("median:")
        if not n.isdigit() or not 1 <= int(n) <= MAX_RUNS:
            raise UsageError(f"--baseline {text}: median:N takes N from 1 to {MAX_RUNS} (median:5 is the default)")
        return Choice("median", int(n))
    digits = value.removeprefix("#")
    if digits.isdigit() and int(digits) > 0:
        return Choice("run", 1, int(digits))
    raise UsageError(f"--baseline {text}: give a run id, last, or median:N (e.g. median:5)")


@dataclass(frozen=True)
class Judged:
    """One figure of the run against its baseline."""

    test_id: str
    metric: str  # read_mbps, write_mbps, read_iops, write_iops
    value: float
    ci95_pct: float | None
    baseline_value: float  # the median (or the one run's figure)
    spread_pct: float  # every baseline run lies within +-spread of it; the one run's interval for "last"
    band_pct: float  # what the judgement used: spread, the baseline runs' own intervals, at least MIN_BAND_PCT
    run_ids: tuple[int, ...]  # the baseline runs, newest first
    ratio: float  # value / baseline_value
    verdict: str  # "slower", "faster" or "usual"
    # Other I/O on the device while the run's test ran (issue 36: foreign_io), in words: said before the verdict.
    other_io: str | None = None

    @property
    def label(self) -> str:
        return figure_label(self.test_id, self.metric)


@dataclass(frozen=True)
class Baseline:
    """A run against its baseline: each figure judged, or why none could be."""

    choice: Choice
    identity: Identity | None
    figures: tuple[Judged, ...] = ()
    status: str = "compared"  # "compared", "too_little_history", "no_history", "not_applicable"
    reason: str | None = None  # in words, when status is not "compared"
    earlier_runs: int = 0  # usable earlier runs of the same drive measured the same way
    notes: tuple[str, ...] = field(default_factory=tuple)  # what was left out, and why

    @property
    def worst(self) -> str | None:
        verdicts = {f.verdict for f in self.figures}
        return "slower" if "slower" in verdicts else "faster" if "faster" in verdicts else None


@dataclass(frozen=True)
class History:
    """For the report's history charts: one run and the runs of its drive measured the same way up to it
    (newest first, the run itself included), with the run's baseline."""

    run_id: int
    runs: tuple[EarlierRun, ...]
    baseline: Baseline


def history_points(history: History, test_id: str, metric: str) -> list[tuple[EarlierRun, float, float | None]]:
    """(run, figure, its 95% interval in %) of one test's figure over time, oldest first; runs without a start
    time, measured through a cache, or without the figure are left out."""
    out = []
    for r in sorted(history.runs, key=lambda r: (r.started_at_s or 0.0, r.run_id)):
        t = r.tests.get(test_id)
        value = t.get(metric) if t is not None and not t.cache_affected else None
        if t is not None and value is not None and r.started_at_s is not None:
            out.append((r, value, t.ci95_pct))
    return out


def figure_label(test_id: str, metric: str) -> str:
    """'SEQ1M Q8T1 read' for SEQ1M_Q8T1_read's read figure; a mixed test names its direction."""
    direction = metric.split("_", 1)[0]
    parts = test_id.split("_")
    if parts[-1] != direction:
        parts.append(direction)
    return " ".join(parts)


def unit_of(metric: str) -> str:
    return "MB/s" if metric.endswith("_mbps") else "IOPS"


def _fmt(value: float, metric: str) -> str:
    if metric.endswith("_iops") or value >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if value >= 10 else f"{value:,.2f}"


def headline_metrics(bs_bytes: int | None, figures: TestFigures) -> tuple[str, ...]:
    """The figures of a test that are judged: MB/s of large blocks, IOPS of small ones, per direction (the
    other is the same measurement times the block size)."""
    large = bs_bytes is None or bs_bytes >= LARGE_BLOCK_BYTES
    out = []
    for direction in ("read", "write"):
        metric = f"{direction}_mbps" if large else f"{direction}_iops"
        if figures.get(metric) is not None:
            out.append(metric)
    return tuple(out)


def _chosen(earlier: Sequence[EarlierRun], choice: Choice) -> list[EarlierRun]:
    if choice.kind == "run":
        return [r for r in earlier if r.run_id == choice.run_id]
    return list(earlier[: choice.runs if choice.kind == "median" else 1])


def usable_history(
    earlier: Sequence[EarlierRun], current_started_s: float | None, now_s: float
) -> tuple[list[EarlierRun], list[str]]:
    """The earlier runs a baseline may use, newest first, and notes on what was left out: runs dated in the
    future (a clock that was wrong then or is wrong now) and runs with no readable start time."""
    future = [r for r in earlier if r.started_at_s is not None and r.started_at_s > now_s + 300]
    undated = [r for r in earlier if r.started_at_s is None]
    after = [
        r
        for r in earlier
        if r.started_at_s is not None and current_started_s is not None and r.started_at_s >= current_started_s
        and r not in future
    ]
    keep = [r for r in earlier if r not in future and r not in undated and r not in after]
    keep.sort(key=lambda r: (r.started_at_s or 0.0, r.run_id), reverse=True)
    notes = []
    if future:
        ids = ", ".join(f"#{r.run_id}" for r in future[:5]) + (", …" if len(future) > 5 else "")
        notes.append(
            f"{len(future)} earlier run(s) dated in the future ({ids}, e.g. {future[0].started_at}) were left out: "
            "the clock was wrong when they ran, or is wrong now"
        )
    if after:
        notes.append(f"{len(after)} run(s) stored before this one but dated after it were left out (clock skew?)")
    if undated:
        notes.append(f"{len(undated)} earlier run(s) with no readable start time were left out")
    return keep, notes


def judge(
    tests: Sequence[Mapping[str, Any]],
    earlier: Sequence[EarlierRun],
    choice: Choice,
    identity: Identity | None,
    *,
    current_started_s: float | None,
    now_s: float,
    notes: Sequence[str] = (),
) -> Baseline:
    """Each figure of `tests` (run-document tests) against the chosen earlier runs (newest first)."""
    notes = list(notes)
    if choice.kind != "run" and (identity is None or not identity.usable):
        reason = "no drive to compare with: no block device behind the target"
        return Baseline(choice, identity, status="not_applicable", reason=reason)
    if choice.kind == "run":  # the run a person named is used as it is, whatever its date
        usable = list(earlier)
    else:
        usable, skew_notes = usable_history(earlier, current_started_s, now_s)
        notes += skew_notes
    chosen = _chosen(usable, choice)
    need = min(MIN_RUNS, choice.runs) if choice.kind == "median" else 1
    if choice.kind == "run" and not chosen:
        reason = f"run #{choice.run_id} is not in the store"
        return Baseline(choice, identity, status="no_history", reason=reason, notes=tuple(notes))
    if len(chosen) < need:
        have = len(usable)
        said = "no earlier runs" if have == 0 else f"{have} earlier run{'s' if have != 1 else ''}"
        whose = identity.words if identity is not None else "this drive"
        reason = f"{said} of {whose} measured this way; a baseline needs {need}"
        return Baseline(
            choice, identity, status="no_history" if have == 0 else "too_little_history", reason=reason,
            earlier_runs=have, notes=tuple(notes),
        )  # fmt: skip
    figures: list[Judged] = []
    cache_left_out = 0
    no_interval = 0
    for t in tests:
        test_id = str(t.get("id"))
        if t.get("cache_affected"):
            cache_left_out += 1
            continue
        current = TestFigures.of(t)
        if current.ci95_pct is None:
            # No interval (a test too short for one, or a run from before intervals): how far chance alone moves
            # it is unknown, and a 1 s blk-throttled read moved 15-39% between unchanged runs. Not judged.
            no_interval += 1
            continue
        for metric in headline_metrics(current.bs_bytes, current):
            value = current.get(metric)
            assert value is not None
            past = [
                (r.run_id, v, r.tests[test_id].ci95_pct)
                for r in chosen
                if test_id in r.tests and not r.tests[test_id].cache_affected
                and (v := r.tests[test_id].get(metric)) is not None
            ]  # fmt: skip
            if len(past) < need:
                continue
            judged = _judge_one(test_id, metric, value, current.ci95_pct, past)
            figures.append(replace(judged, other_io=_other_io(t.get("foreign_io"))))
    if cache_left_out:
        notes.append(f"{cache_left_out} test(s) measured through a cache were not compared")
    if no_interval:
        notes.append(
            f"{no_interval} test(s) have no 95% interval (too short to compute one): not judged, since how much "
            "they vary by chance is unknown"
        )
    return Baseline(choice, identity, tuple(figures), earlier_runs=len(usable), notes=tuple(notes))


def _other_io(foreign: Any) -> str | None:
    """'other I/O on loop2 at 20 MB/s' for a test marked foreign_io (its document's foreign_io), else None."""
    if not isinstance(foreign, Mapping) or not foreign.get("found"):
        return None
    devices = ", ".join(str(d) for d in foreign.get("devices") or ()) or "the device"
    mbps = foreign.get("other_mbps")
    rate = f" at {mbps:,.1f} MB/s" if isinstance(mbps, (int, float)) and not isinstance(mbps, bool) else ""
    return f"other I/O on {devices}{rate}"


def _judge_one(
    test_id: str, metric: str, value: float, ci95_pct: float | None, past: list[tuple[int, float, float | None]]
) -> Judged:
    values = [v for _id, v, _ci in past]
    median = statistics.median(values)
    # One run: its own interval is all the spread there is; several: the farthest from their median.
    spread = (past[0][2] or 0.0) if len(values) == 1 else 100.0 * max(abs(v - median) for v in values) / median
    own_cis = [ci for _id, _v, ci in past if ci is not None]
    band = max(spread, statistics.median(own_cis) if own_cis else 0.0, MIN_BAND_PCT)
    half = value * (ci95_pct or 0.0) / 100.0
    low, high = median * (1 - band / 100.0), median * (1 + band / 100.0)
    verdict = "slower" if value + half < low else "faster" if value - half > high else "usual"
    return Judged(
        test_id, metric, value, ci95_pct, median, spread, band, tuple(i for i, _v, _ci in past), value / median, verdict
    )


def describe(j: Judged, choice: Choice) -> str:
    """'SEQ1M Q8T1 read 1,612 MB/s is 31% below its median of the last 5 runs (2,340 MB/s, spread ±3%)'."""
    unit = unit_of(j.metric)
    pct = abs(j.ratio - 1.0) * 100
    way = "below" if j.ratio < 1 else "above"
    if choice.kind == "median" and len(j.run_ids) > 1:
        what = f"its median of the last {len(j.run_ids)} runs"
    else:
        what = f"run #{j.run_ids[0]}" if choice.kind == "run" else f"the last run (#{j.run_ids[0]})"
    own = f" ± {j.ci95_pct:.0f}%" if j.ci95_pct is not None else ""
    spread = f"spread ±{j.spread_pct:.0f}%" if len(j.run_ids) > 1 else f"± {j.spread_pct:.0f}%"
    beside = f"{j.label} ran beside {j.other_io} (foreign_io): " if j.other_io else ""
    return (
        f"{beside}{j.label} {_fmt(j.value, j.metric)} {unit}{own} is {pct:.0f}% {way} {what} "
        f"({_fmt(j.baseline_value, j.metric)} {unit}, {spread})"
    )


def findings(baseline: Baseline, device: str | None = None) -> list[Finding]:
    """slower_than_usual (warn) and faster_than_usual (info): one finding per code, each figure named."""
    out = []
    for verdict, code, severity in (("slower", SLOWER, "warn"), ("faster", FASTER, "info")):
        hits = [j for j in baseline.figures if j.verdict == verdict]
        if not hits:
            continue
        message = "; ".join(describe(j, baseline.choice) for j in hits) + "."
        if baseline.notes:
            message += " (" + "; ".join(baseline.notes) + ")"
        evidence = {
            "baseline": baseline.choice.text,
            "figures": [judged_to_dict(j) for j in hits],
            "by_serial": bool(baseline.identity and baseline.identity.by_serial),
        }
        busy = [j for j in hits if j.other_io]
        first = (
            "Other I/O shared the device while the slower test ran (foreign_io): rerun when the device is quiet "
            "before looking further. "
            if busy and verdict == "slower"
            else ""
        )
        hint = first + (
            "Same drive, same test, measured the same way, and the difference is larger than both this run's "
            "interval and the usual spread. Look for what changed: another workload at the same time, the drive "
            "filling up or running hot (health), a firmware or kernel update, a cable or slot. Rerun to confirm; "
            "`disksleuth runs --device` lists the history."
            if verdict == "slower"
            else "Faster than its history: a firmware or kernel update, a freshly trimmed drive, or less load than "
            "before. Nothing to fix; a faster figure also shifts what later runs are compared with."
        )
        out.append(Finding(code, severity, message, evidence, hint, device))
    return out


def judged_to_dict(j: Judged) -> dict[str, Any]:
    return {
        "test_id": j.test_id,
        "metric": j.metric,
        "value": round(j.value, 3),
        "ci95_pct": j.ci95_pct,
        "baseline_value": round(j.baseline_value, 3),
        "spread_pct": round(j.spread_pct, 2),
        "band_pct": round(j.band_pct, 2),
        "ratio": round(j.ratio, 4),
        "verdict": j.verdict,
        "runs": list(j.run_ids),
        **({"other_io": j.other_io} if j.other_io else {}),
    }


def status_line(baseline: Baseline) -> str:
    """One line for the terminal views: what the run was compared with and how it came out, or why not."""
    if baseline.status != "compared":
        return f"Baseline: {baseline.reason}."
    if not baseline.figures:
        return "Baseline: no figure of this run has enough earlier runs of the same test to compare with."
    runs = sorted({i for j in baseline.figures for i in j.run_ids}, reverse=True)
    if baseline.choice.kind == "median" and len(runs) > 1:
        what = f"the median of {len(runs)} earlier runs ({', '.join(f'#{i}' for i in runs[:8])})"
    else:
        what = f"run #{runs[0]}"
    said = {"slower": "slower than usual", "faster": "faster than usual", None: "as usual"}[baseline.worst]
    busy = list(dict.fromkeys(j.other_io for j in baseline.figures if j.other_io))
    if busy:  # the other I/O first: it explains a slower figure before the drive's history does
        said = f"beside {'; '.join(busy)} (foreign_io), {said}"
    detail = ", ".join(f"{j.label} {j.ratio:.2f}x" for j in baseline.figures[:6])
    return f"Baseline: {said} against {what}: {detail}."
