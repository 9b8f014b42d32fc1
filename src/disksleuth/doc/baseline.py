"""The `baseline` object of check, bench and show --json: what a run was compared with, each figure's
judgement, or why there was none (analysis/baseline.py)."""

from __future__ import annotations

from typing import Any

from disksleuth.analysis.baseline import Baseline, judged_to_dict, status_line


def baseline_to_dict(b: Baseline) -> dict[str, Any]:
    return {
        "choice": b.choice.text,
        "status": b.status,
        "reason": b.reason,
        "by_serial": bool(b.identity and b.identity.by_serial),
        "earlier_runs": b.earlier_runs,
        "verdict": b.worst or ("usual" if b.figures else None),
        "summary": status_line(b),
        "figures": [judged_to_dict(j) for j in b.figures],
        "notes": list(b.notes),
    }
