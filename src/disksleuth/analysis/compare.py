"""Side-by-side comparison of stored runs (pure): figures per test, ratios, % of a reference."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from disksleuth.analysis.pathdiff import FigureChange, PairDiff, diff_pair
from disksleuth.analysis.ratios import format_ratio

METRICS = ("read_mbps", "write_mbps", "read_iops", "write_iops", "lat_p99_us")
# A mixed test (randrw, rw) has a latency per direction: its headline latency is whichever direction did a few
# more I/Os, so between two runs the row could compare reads with writes (57 ms reads beside 97 ms writes).
DIRECTION_LATENCY = ("read_lat_p99_us", "write_lat_p99_us")
METRIC_LABELS = {
    "read_mbps": "read MB/s",
    "write_mbps": "write MB/s",
    "read_iops": "read IOPS",
    "write_iops": "write IOPS",
    "lat_p99_us": "p99 latency µs",
    "read_lat_p99_us": "read p99 latency µs",
    "write_lat_p99_us": "write p99 latency µs",
}
LOWER_IS_BETTER = {"lat_p99_us", *DIRECTION_LATENCY}
INTERVAL_METRICS = ("read_mbps", "write_mbps", "read_iops", "write_iops")
SAME_WITHIN = 0.01  # ratios within 1% of 1.00x are "same": below what a rerun reproduces
# A 95% interval wider than the figure itself (±100%: from nothing to twice the figure) says the figure is not
# known; it cannot make a change "same" (a crafted ci95_pct of 1e15 called a 6.7e11x change so). The change is
# then said with its direction and that the interval is too wide to judge it.
MAX_JUDGING_CI_PCT = 100.0
# Below these a figure is nothing: no byte per second, no I/O in a thousand seconds, no nanosecond of latency. A
# ratio against nothing is no ratio (1,549 MB/s over a stored 1e-320 printed "infx faster"): "from nothing".
_NOTHING = {"mbps": 1e-6, "iops": 1e-3, "us": 1e-3}
FROM_NOTHING = "from nothing"
TO_NOTHING = "to nothing"
TOO_WIDE = "too wide to judge"


def is_nothing(value: float, metric: str) -> bool:
    return value < _NOTHING[metric.rsplit("_", 1)[-1]]


@dataclass(frozen=True)
class Row:
    test_id: str
    metric: str
    values: tuple[float | None, ...]  # one per run, in the order given
    ratios: tuple[float | None, ...]  # value / baseline value
    pct_of_reference: tuple[float | None, ...]  # value / reference value * 100, with --relative-to
    ci95_pcts: tuple[float | None, ...] = ()  # each run's 95% interval of this figure (MB/s and IOPS rows)
    # The word for each run's change against the baseline ("same", "faster", ...; None where no ratio). Judged
    # once per test and direction: MB/s and IOPS of a direction are one measurement (IOPS x block size), so
    # they share the MB/s row's judgement; judged apart, 688.9 -> 784.0 MB/s was "same" beside 654 -> 745
    # IOPS "faster", both 1.14x, one on each side of the noise threshold.
    changes: tuple[str | None, ...] = ()
    # Why run i's change is said without a ratio or without a judgement: FROM_NOTHING (the baseline's figure is
    # nothing), TO_NOTHING (run i's is), TOO_WIDE (an interval wider than its figure); None for the rest.
    notes: tuple[str | None, ...] = ()

    def noise(self, i: int, baseline: int) -> float | None:
        """How far run i may differ from the baseline by chance alone: both 95% half-widths combined
        (root sum of squares), as a fraction; None when either run has no interval, or one too wide to judge
        with (MAX_JUDGING_CI_PCT)."""
        if not self.ci95_pcts:
            return None
        a, b = self.ci95_pcts[i], self.ci95_pcts[baseline]
        if a is None or b is None or max(a, b) > MAX_JUDGING_CI_PCT:
            return None
        return math.hypot(a, b) / 100.0

    def too_wide(self, i: int, baseline: int) -> bool:
        """Whether run i's or the baseline's interval is too wide to judge a change with."""
        cis = [self.ci95_pcts[k] for k in (i, baseline)] if self.ci95_pcts else []
        return any(x is not None and x > MAX_JUDGING_CI_PCT for x in cis)


@dataclass(frozen=True)
class Difference:
    """One way the compared runs were measured differently: what, and its value in each run (in order)."""

    what: str  # "profile", "length", "size", "tests", "engine", "I/O"
    values: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    run_ids: tuple[int, ...]
    labels: tuple[str, ...]
    baseline: int  # index into run_ids
    reference_id: int | None
    rows: tuple[Row, ...]
    differences: tuple[Difference, ...] = ()  # how the runs were measured differently; () when alike
    # Each other run against the baseline: what changed on the path, and whether it explains the figures.
    paths: tuple[PairDiff, ...] = ()


NOTE_IN_LABEL_CHARS = 60  # a longer note is cut in a label (show has it whole)


def run_label(doc: dict[str, Any]) -> str:
    """'#ID device [tags] "note"': the tags and the note (`before`/`after`) are what tell runs of one device apart."""
    run = doc["run"]
    device = (doc.get("device") or {}).get("model") or run.get("device") or run.get("target")
    label = f"#{run['id']} {device}"
    tags = [str(t) for t in run.get("tags") or () if str(t)]
    if tags:
        label += f" [{', '.join(tags)}]"
    note = " ".join(str(run.get("note") or "").split())
    if note:
        cut = note if len(note) <= NOTE_IN_LABEL_CHARS else note[: NOTE_IN_LABEL_CHARS - 1] + "…"
        label += f' "{cut}"'
    return label


def _tests_by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in doc.get("tests") or []}


def _length(doc: dict[str, Any]) -> str:
    """How long the tests ran: to a precision target (the stop rule's ci95_pct), or for a fixed time."""
    tests = doc.get("tests") or []
    targets = sorted({t["precision_target_pct"] for t in tests if t.get("precision_target_pct") is not None})
    if targets:
        return "until ±" + "/".join(f"{p:g}%" for p in targets)
    runtimes = sorted(t["runtime_s"] for t in tests if isinstance(t.get("runtime_s"), (int, float)))
    if not runtimes:
        return "unknown"
    return f"fixed {runtimes[len(runtimes) // 2]:.0f} s"


def _size(doc: dict[str, Any]) -> str:
    from disksleuth.units import fmt_bytes

    size = doc["run"].get("size_bytes")
    return fmt_bytes(size) if isinstance(size, int) else "unknown"


def _io(doc: dict[str, Any]) -> str:
    direct = {t.get("direct", True) for t in doc.get("tests") or []}
    return "direct" if direct == {True} else "buffered" if direct == {False} else "direct and buffered"


def method_differences(docs: list[dict[str, Any]]) -> tuple[Difference, ...]:
    """How the runs were measured differently (profile, test length or precision target, size, test set,
    engine, direct I/O): figures measured differently compare only roughly, and a ratio should say so."""
    aspects = (
        ("profile", lambda d: str(d["run"].get("profile") or "unknown")),
        ("length", _length),  # of each test
        ("size", _size),  # of the test file or region
        ("tests", lambda d: str(len(d.get("tests") or []))),
        ("engine", lambda d: str(d["run"].get("engine") or "unknown")),
        ("I/O", _io),
    )
    out = []
    for what, value in aspects:
        values = tuple(value(d) for d in docs)
        if len(set(values)) > 1:
            out.append(Difference(what, values))
    if not any(d.what == "tests" for d in out):  # as many tests, but not the same ones
        sets = [frozenset(t["id"] for t in d.get("tests") or []) for d in docs]
        if len(set(sets)) > 1:
            own = tuple(", ".join(sorted(s - frozenset.intersection(*sets))) or "—" for s in sets)
            out.append(Difference("tests", own))
    return tuple(out)


def differences_line(c: Comparison) -> str | None:
    """The one-line warning: 'measured differently, ratios are rough: profile quick vs standard; ...'."""
    if not c.differences:
        return None
    return "measured differently, ratios are rough: " + "; ".join(
        f"{d.what} {' vs '.join(d.values)}" for d in c.differences
    )


def compare(docs: list[dict[str, Any]], baseline: int = 0, reference: dict[str, Any] | None = None) -> Comparison:
    order: list[str] = []
    for doc in docs:
        for t in doc.get("tests") or []:
            if t["id"] not in order:
                order.append(t["id"])
    by_run = [_tests_by_id(d) for d in docs]
    ref_tests = _tests_by_id(reference) if reference else {}
    rows = []
    for test_id in order:
        for metric in _metrics(test_id, by_run):
            values = tuple((tests.get(test_id) or {}).get(metric) for tests in by_run)
            if all(v is None for v in values):
                continue
            if metric in LOWER_IS_BETTER and not any(values):
                continue
            base = values[baseline]
            # No ratio over nothing; a figure that fell to nothing keeps its ratio (0.00x), said "to nothing".
            ratios = tuple(
                v / base if v is not None and base is not None and not is_nothing(base, metric) else None
                for v in values
            )
            ref_value = (ref_tests.get(test_id) or {}).get(metric)
            # No percentage of nothing either (a stored 1e-320 reference printed "inf%", and --json "Infinity").
            known_ref = isinstance(ref_value, (int, float)) and not is_nothing(ref_value, metric)
            pct = tuple(100.0 * v / ref_value if v is not None and known_ref else None for v in values)
            cis: tuple[float | None, ...] = ()
            if metric in INTERVAL_METRICS:  # ci95_pct is of the headline figure: MB/s and IOPS move together
                cis = tuple((tests.get(test_id) or {}).get("ci95_pct") for tests in by_run)
            rows.append(Row(test_id, metric, values, ratios, pct, cis))
    rows = _judged(rows, baseline)
    paths = tuple(
        diff_pair(docs[baseline], doc, figure_changes(rows, docs, baseline, i))
        for i, doc in enumerate(docs)
        if i != baseline
    )
    return Comparison(
        run_ids=tuple(d["run"]["id"] for d in docs),
        labels=tuple(run_label(d) for d in docs),
        baseline=baseline,
        reference_id=reference["run"]["id"] if reference else None,
        rows=tuple(rows),
        differences=method_differences(docs),
        paths=paths,
    )


SMALL_BLOCK_BYTES = 64 * 1024  # up to here a test's figure is quoted in IOPS (random 4K), above in MB/s


def figure_changes(rows: list[Row], docs: list[dict[str, Any]], baseline: int, i: int) -> list[FigureChange]:
    """Run i's figures against the baseline's, one per test and direction, with the judgement made on them
    (a direction's MB/s and IOPS share one): what pathdiff explains."""
    by_key = {(r.test_id, r.metric): r for r in rows}
    bs = {t["id"]: t.get("bs_bytes") for d in docs for t in d.get("tests") or [] if t.get("bs_bytes")}
    out = []
    for test_id in dict.fromkeys(r.test_id for r in rows):
        for direction in ("read", "write"):
            mbps = by_key.get((test_id, f"{direction}_mbps"))
            iops = by_key.get((test_id, f"{direction}_iops"))
            small = isinstance(bs.get(test_id), int) and bs[test_id] <= SMALL_BLOCK_BYTES
            quoted = (iops or mbps) if small else (mbps or iops)
            if quoted is None or quoted.values[i] is None or quoted.values[baseline] is None:
                continue
            judged = mbps or quoted
            word = judged.changes[i] if judged.changes else None
            note = judged.notes[i] if judged.notes else None
            out.append(
                FigureChange(
                    test_id,
                    direction,
                    quoted.metric,
                    quoted.values[baseline],
                    quoted.values[i],
                    quoted.ratios[i],
                    word,
                    mbps.values[baseline] if mbps else None,
                    mbps.values[i] if mbps else None,
                    note,
                )
            )
    return out


def _metrics(test_id: str, by_run: list[dict[str, dict[str, Any]]]) -> tuple[str, ...]:
    """The rows of one test: a mixed test's p99 latency per direction, each direction against itself. Its
    headline p99 stays only for a run stored without the per-direction figures (before they were kept)."""
    tests = [t[test_id] for t in by_run if test_id in t]

    def has_split(t: dict[str, Any]) -> bool:
        return any(t.get(k) is not None for k in DIRECTION_LATENCY)

    if not any(has_split(t) for t in tests):
        return METRICS
    old = any(t.get("lat_p99_us") is not None and not has_split(t) for t in tests)
    return (*METRICS[:4], *DIRECTION_LATENCY, *(("lat_p99_us",) if old else ()))


def _note(r: Row, i: int, baseline: int) -> str | None:
    """FROM_NOTHING, TO_NOTHING, TOO_WIDE or None for run i's change against the baseline (see Row.notes)."""
    v, base = r.values[i], r.values[baseline]
    if i == baseline or v is None or base is None:
        return None
    if is_nothing(base, r.metric) or is_nothing(v, r.metric):
        if is_nothing(base, r.metric) and is_nothing(v, r.metric):
            return None  # nothing both times: no change to speak of
        return FROM_NOTHING if is_nothing(base, r.metric) else TO_NOTHING
    ratio = r.ratios[i]
    if ratio is not None and abs(ratio - 1.0) >= SAME_WITHIN and r.too_wide(i, baseline):
        return TOO_WIDE
    return None


def _word(r: Row, i: int, baseline: int, note: str | None) -> str | None:
    """The change word: from or to nothing by its direction, never "same"; otherwise change_word."""
    lower = r.metric in LOWER_IS_BETTER
    if note == FROM_NOTHING:
        return "worse" if lower else "faster"
    if note == TO_NOTHING:
        return "better" if lower else "slower"
    return change_word(r.ratios[i], r.metric, r.noise(i, baseline))


def _judged(rows: list[Row], baseline: int) -> list[Row]:
    """Each row with its change words and notes; a direction's IOPS row takes its MB/s row's words (see
    Row.changes) where the MB/s row judged a change it could measure (no note): an IOPS row is not "from
    nothing" because its MB/s figure was stored as nothing."""

    def judged(r: Row) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
        notes = tuple(_note(r, i, baseline) for i in range(len(r.values)))
        return tuple(_word(r, i, baseline, n) for i, n in enumerate(notes)), notes

    own = {(r.test_id, r.metric): judged(r) for r in rows}
    out = []
    for r in rows:
        changes, notes = own[(r.test_id, r.metric)]
        if r.metric.endswith("_iops"):
            mbps = own.get((r.test_id, r.metric.replace("_iops", "_mbps")))
            if mbps is not None:  # a ratio missing on one side keeps the row's own word there
                changes = tuple(
                    m if m is not None and mn is None and n is None else c
                    for m, mn, c, n in zip(*mbps, changes, notes, strict=True)
                )
        out.append(replace(r, changes=changes, notes=notes))
    return out


def change_word(ratio: float | None, metric: str, noise: float | None = None) -> str | None:
    """Which way a row moved, in words: MB/s and IOPS are better higher, latency is better lower.
    `noise`: what chance alone explains (Row.noise); a change within it is "same" (issue 13: a -1% on
    figures of ±8% and ±12% is no change)."""
    if ratio is None:
        return None
    if abs(ratio - 1.0) < max(SAME_WITHIN, noise or 0.0):
        return "same"
    if metric in LOWER_IS_BETTER:
        return "better" if ratio < 1.0 else "worse"
    return "faster" if ratio > 1.0 else "slower"


def format_change(
    ratio: float | None, metric: str, noise: float | None = None, word: str | None = None, note: str | None = None
) -> str:
    """'2.10x faster', '0.62x slower'; for latency '0.62x better', '1.60x worse'; 'from nothing', 'to nothing';
    '3.20x faster?' when an interval is too wide to judge (TOO_WIDE_LEGEND says so under the table). `word`: the
    judgement made already (Row.changes), else it is made here; `note`: Row.notes."""
    if note in (FROM_NOTHING, TO_NOTHING):
        return note
    word = word or change_word(ratio, metric, noise)
    if ratio is None or word is None:
        return "—"
    return f"{format_ratio(ratio)} {word}" + ("?" if note == TOO_WIDE else "")


def too_wide_line(c: Comparison) -> str | None:
    """The line under the table for changes marked '?': which runs' intervals are too wide, and how wide."""
    widest: dict[int, float] = {}
    for r in c.rows:
        for i, note in enumerate(r.notes):
            if note != TOO_WIDE:
                continue
            for k in (i, c.baseline):
                ci = r.ci95_pcts[k] if r.ci95_pcts else None
                if ci is not None and ci > MAX_JUDGING_CI_PCT:
                    widest[k] = max(widest.get(k, 0.0), ci)
    if not widest:
        return None
    runs = ", ".join(f"#{c.run_ids[k]} ±{pct:,.3g}%" for k, pct in sorted(widest.items()))
    return (
        f"?: a 95% interval wider than its figure ({runs}) is too wide to judge whether a change is more than "
        "chance; the ratio is shown, not judged."
    )


def format_value(value: float | None, metric: str) -> str:
    if value is None:
        return "—"
    if metric.endswith("iops") or value >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def table_cells(c: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and rows of plain strings, shared by the table, Markdown and CSV outputs."""
    header = ["test", "metric", *c.labels]
    if c.reference_id is None:
        header += [f"#{rid} vs #{c.run_ids[c.baseline]}" for i, rid in enumerate(c.run_ids) if i != c.baseline]
    rows = []
    for r in c.rows:
        if c.reference_id is not None:
            cells = [f"{p:.0f}%" if p is not None else "—" for p in r.pct_of_reference]
        else:
            cells = [format_value(v, r.metric) for v in r.values]
            cells += [
                format_change(x, r.metric, word=r.changes[i], note=r.notes[i] if r.notes else None)
                for i, x in enumerate(r.ratios)
                if i != c.baseline
            ]
        rows.append([r.test_id, METRIC_LABELS[r.metric], *cells])
    return header, rows
