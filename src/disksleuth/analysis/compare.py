"""Side-by-side comparison of stored runs (pure): figures per test, ratios, % of a reference."""

from __future__ import annotations

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

    def noise(self, i: int, baseline: int) -> float | None:
        """How far run i may differ from the baseline by chance alone: both 95% half-widths combined
        (root sum of squares), as a fraction; None when either run has no interval."""
        if not self.ci95_pcts:
            return None
        a, b = self.ci95_pcts[i], self.ci95_pcts[baseline]
        return None if a is None or b is None else (a * a + b * b) ** 0.5 / 100.0


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


def run_label(doc: dict[str, Any]) -> str:
    run = doc["run"]
    device = (doc.get("device") or {}).get("model") or run.get("device") or run.get("target")
    return f"#{run['id']} {device}"


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
            ratios = tuple(v / base if v is not None and base else None for v in values)
            ref_value = (ref_tests.get(test_id) or {}).get(metric)
            pct = tuple(100.0 * v / ref_value if v is not None and ref_value else None for v in values)
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
            word = (mbps or quoted).changes[i] if (mbps or quoted).changes else None
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


def _judged(rows: list[Row], baseline: int) -> list[Row]:
    """Each row with its change words; a direction's IOPS row takes its MB/s row's words (see Row.changes)."""

    def words(r: Row) -> tuple[str | None, ...]:
        return tuple(change_word(x, r.metric, r.noise(i, baseline)) for i, x in enumerate(r.ratios))

    own = {(r.test_id, r.metric): words(r) for r in rows}
    out = []
    for r in rows:
        changes = own[(r.test_id, r.metric)]
        if r.metric.endswith("_iops"):
            mbps = own.get((r.test_id, r.metric.replace("_iops", "_mbps")))
            if mbps is not None:  # a ratio missing on one side keeps the row's own word there
                changes = tuple(m if m is not None else c for m, c in zip(mbps, changes, strict=True))
        out.append(replace(r, changes=changes))
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


def format_change(ratio: float | None, metric: str, noise: float | None = None, word: str | None = None) -> str:
    """'2.10x faster', '0.62x slower'; for latency '0.62x better', '1.60x worse'. `word`: the judgement made
    already (Row.changes), else it is made here."""
    word = word or change_word(ratio, metric, noise)
    if ratio is None or word is None:
        return "—"
    return f"{format_ratio(ratio)} {word}"


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
            cells += [format_change(x, r.metric, word=r.changes[i]) for i, x in enumerate(r.ratios) if i != c.baseline]
        rows.append([r.test_id, METRIC_LABELS[r.metric], *cells])
    return header, rows
