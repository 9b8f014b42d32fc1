"""`compare` output: a terminal table, Markdown that pastes into a forum, CSV, or JSON."""

from __future__ import annotations

import csv
import io
from typing import Any

from disksleuth.analysis.compare import (
    Comparison,
    differences_line,
    table_cells,
)
from disksleuth.present.text import safe_text


def _md_cell(text: str) -> str:
    """A cell from stored text (labels, test ids): control characters shown as escapes, never sent to the
    terminal, and no newline or '|' to break the table."""
    return safe_text(text, markup=False).replace("|", "\\|")


def to_markdown(c: Comparison) -> str:
    header, rows = table_cells(c)
    right = [False, False] + [True] * (len(header) - 2)
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    if c.reference_id is not None:
        lines.append(f"\nFigures are % of run #{c.reference_id}.")
    warning = differences_line(c)
    if warning:
        lines.append(f"\n**Warning:** {_md_cell(warning)}")

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
        row: list[Any] = [safe_text(r.test_id, markup=False), r.metric, *("" if v is None else v for v in r.values)]
        row += ["" if x is None else round(x, 4) for x in r.ratios]
        if c.reference_id is not None:
            row += ["" if p is None else round(p, 2) for p in r.pct_of_reference]
        writer.writerow(row)
    return buf.getvalue()


def render_table(c: Comparison) -> None:
    from rich.text import Text

    from disksleuth.present.text import Col, console, fit_columns, print_fitted_table, safe_text

    out = console()
    header, rows = table_cells(c)
    # The cells are printed as Text (no markup), so only control characters need neutralising.
    header = [safe_text(h, markup=False) for h in header]
    rows = [[safe_text(cell, markup=False) for cell in row] for row in rows]
    # Every column carries a figure the comparison is about, so none is dropped. Too wide with the
    # run labels as headers: headers "#ID" and the labels in a legend above; still too wide: the
    # table is stacked (one block per test) rather than cutting numbers.
    cols = [Col(h, justify="left" if i < 2 else "right") for i, h in enumerate(header)]
    if fit_columns(cols, rows, out.width) is None:
        for i, (rid, label) in enumerate(zip(c.run_ids, c.labels, strict=True)):
            cols[2 + i] = Col(f"#{rid}")
            out.print(Text(safe_text(label, markup=False)), style="dim")
    warning = differences_line(c)
    if warning:  # before the table: a ratio read first and the caveat never is no help
        out.print(Text("warning: " + safe_text(warning, markup=False), style="yellow"))
    print_fitted_table(cols, rows, key_cols=2)
    if c.reference_id is not None:
        out.print(f"[dim]Figures are % of run #{c.reference_id}.[/dim]")
    else:
        out.print(
            f"[dim]Ratios against run #{c.run_ids[c.baseline]}: for MB/s and IOPS higher is faster; "
            "for latency lower is better; same: within 1%, or within what the two runs' 95% intervals "
            "allow.[/dim]"
        )
