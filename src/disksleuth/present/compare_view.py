"""`compare` output: a terminal table, Markdown that pastes into a forum, CSV, or JSON."""

from __future__ import annotations

import csv
import io
from typing import Any

from disksleuth.analysis.compare import METRIC_LABELS, Comparison, table_cells


def to_markdown(c: Comparison) -> str:
    header, rows = table_cells(c)
    right = [False, False] + [True] * (len(header) - 2)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    if c.reference_id is not None:
        lines.append(f"\nFigures are % of run #{c.reference_id}.")
    return "\n".join(lines) + "\n"


def to_csv(c: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    header = ["test", "metric", *[f"run_{rid}" for rid in c.run_ids]]
    header += [f"ratio_run_{rid}" for rid in c.run_ids]
    if c.reference_id is not None:
        header += [f"pct_of_run_{c.reference_id}_run_{rid}" for rid in c.run_ids]
    writer.writerow(header)
    for r in c.rows:
        row: list[Any] = [r.test_id, r.metric, *("" if v is None else v for v in r.values)]
        row += ["" if x is None else round(x, 4) for x in r.ratios]
        if c.reference_id is not None:
            row += ["" if p is None else round(p, 2) for p in r.pct_of_reference]
        writer.writerow(row)
    return buf.getvalue()


def to_dict(c: Comparison) -> dict[str, Any]:
    return {
        "runs": [{"id": rid, "label": label} for rid, label in zip(c.run_ids, c.labels, strict=True)],
        "baseline": c.run_ids[c.baseline],
        "relative_to": c.reference_id,
        "rows": [
            {
                "test": r.test_id,
                "metric": r.metric,
                "label": METRIC_LABELS[r.metric],
                "values": list(r.values),
                "ratios": [None if x is None else round(x, 4) for x in r.ratios],
                "pct_of_reference": None
                if c.reference_id is None
                else [None if p is None else round(p, 2) for p in r.pct_of_reference],
            }
            for r in c.rows
        ],
    }


def render_table(c: Comparison) -> None:
    from rich.table import Table

    from disksleuth.present.text import console, safe_text

    header, rows = table_cells(c)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for i, col in enumerate(header):
        table.add_column(safe_text(col), justify="left" if i < 2 else "right", no_wrap=i == 0)
    last_test = None
    for row in rows:
        shown = row[0] if row[0] != last_test else ""
        last_test = row[0]
        table.add_row(safe_text(shown), *(safe_text(cell) for cell in row[1:]))
    console().print(table)
    if c.reference_id is not None:
        console().print(f"[dim]Figures are % of run #{c.reference_id}.[/dim]")
    else:
        console().print(f"[dim]Ratios against run #{c.run_ids[c.baseline]}: 1.00x is the same, -38% is slower.[/dim]")
