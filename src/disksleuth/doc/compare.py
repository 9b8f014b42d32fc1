"""`compare --json`: runs side by side."""

from __future__ import annotations

from typing import Any

from disksleuth.analysis.compare import LOWER_IS_BETTER, METRIC_LABELS, Comparison, differences_line


def compare_to_dict(c: Comparison) -> dict[str, Any]:
    return {
        "runs": [{"id": rid, "label": label} for rid, label in zip(c.run_ids, c.labels, strict=True)],
        "baseline": c.run_ids[c.baseline],
        "relative_to": c.reference_id,
        # How the runs were measured differently (added field): [] when alike, and the warning line.
        "differences": [{"what": d.what, "values": list(d.values)} for d in c.differences],
        "warning": differences_line(c),
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
                "pct_of_reference": None
                if c.reference_id is None
                else [None if p is None else round(p, 2) for p in r.pct_of_reference],
            }
            for r in c.rows
        ],
    }
