"""`compare --json`: runs side by side."""

from __future__ import annotations

from typing import Any

from disksleuth.analysis.compare import LOWER_IS_BETTER, METRIC_LABELS, Comparison, differences_line
from disksleuth.analysis.pathdiff import PairDiff, PathChange, figure_text


def _change(c: PathChange) -> dict[str, Any]:
    return {
        "what": c.what,
        "hop": c.hop,
        "before": c.before,
        "after": c.after,
        "area": c.area,
        "before_mbps": c.before_mbps,
        "after_mbps": c.after_mbps,
    }


def _pair_changes(p: PairDiff) -> list[dict[str, Any]]:
    return [{**_change(x), "run": p.run_id, "baseline": p.baseline_id} for x in p.changes]


def _pair_explanations(p: PairDiff) -> list[dict[str, Any]]:
    """Per figure that moved (or held while its path changed): the ratio, and the changes that explain it
    (`explained` true), may (null), or that none does (false, `changes` [])."""
    return [
        {
            "run": p.run_id,
            "baseline": p.baseline_id,
            "test": e.figure.test_id,
            "direction": e.figure.direction,
            "metric": e.figure.metric,
            "figure": figure_text(e.figure),
            "before": e.figure.before,
            "after": e.figure.after,
            "ratio": None if e.figure.ratio is None else round(e.figure.ratio, 4),
            "change": e.figure.word,
            # "from nothing", "to nothing" or "too wide to judge" (added field; see the row's change_notes).
            "note": e.figure.note,
            "verdict": e.verdict,
            "explained": e.explained,
            "changes": [_change(x) for x in e.because],
            "text": e.text,
        }
        for e in p.explanations
    ]


def path_changes_to_list(c: Comparison) -> list[dict[str, Any]]:
    """What changed on the path from the baseline to each other run: [] for an unchanged device."""
    return [x for p in c.paths for x in _pair_changes(p)]


def explanations_to_list(c: Comparison) -> list[dict[str, Any]]:
    return [x for p in c.paths for x in _pair_explanations(p)]


def pair_to_dict(p: PairDiff) -> dict[str, Any]:
    """`show --baseline --json`'s `comparison`: one run against a run of its baseline, in compare's shape."""
    return {
        "run": p.run_id,
        "baseline": p.baseline_id,
        "path_changes": _pair_changes(p),
        "explanations": _pair_explanations(p),
    }


def compare_to_dict(c: Comparison) -> dict[str, Any]:
    return {
        "runs": [{"id": rid, "label": label} for rid, label in zip(c.run_ids, c.labels, strict=True)],
        "baseline": c.run_ids[c.baseline],
        "relative_to": c.reference_id,
        # How the runs were measured differently (added field): [] when alike, and the warning line.
        "differences": [{"what": d.what, "values": list(d.values)} for d in c.differences],
        "warning": differences_line(c),
        # What changed on the path between the baseline and each run, and whether it explains the figures
        # (added fields, issue 28).
        "path_changes": path_changes_to_list(c),
        "explanations": explanations_to_list(c),
        "rows": [
            {
                "test": r.test_id,
                "metric": r.metric,
                "label": METRIC_LABELS[r.metric],
                "values": list(r.values),
                "ratios": [None if x is None else round(x, 4) for x in r.ratios],
                "higher_is_better": r.metric not in LOWER_IS_BETTER,
                # One judgement per test and direction: a direction's IOPS row has its MB/s row's words.
                "changes": list(r.changes),
                # Each run's 95% interval of this figure (added field; [] for latency rows).
                "ci95_pcts": list(r.ci95_pcts),
                # Per run, why its change has no ratio or no judgement (added field): "from nothing" (the
                # baseline's figure is nothing: ratio null), "to nothing", "too wide to judge" (an interval wider
                # than its figure: `changes` gives the direction only); null otherwise.
                "change_notes": list(r.notes),
                "pct_of_reference": None
                if c.reference_id is None
                else [None if p is None else round(p, 2) for p in r.pct_of_reference],
            }
            for r in c.rows
        ],
    }
