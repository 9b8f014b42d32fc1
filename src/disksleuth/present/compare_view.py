"""`compare` output: a terminal table, Markdown that pastes into a forum, CSV, or JSON."""

from __future__ import annotations

import csv
import io
from typing import Any

from disksleuth.analysis.compare import (
    Comparison,
    differences_line,
    table_cells,
    too_wide_line,
)
from disksleuth.analysis.pathdiff import (
    COLUMNS_HEADING,
    EXPLAIN_HEADING,
    PathChange,
    by_column,
    change_line,
    pair_heading,
    path_columns,
    path_heading,
)
from disksleuth.present.text import safe_text

_CHANGE_FIELDS = ("area", "what", "hop", "before", "after", "before_mbps", "after_mbps")


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
    elif too_wide_line(c):
        lines.append(f"\n{_md_cell(too_wide_line(c) or '')}")
    warning = differences_line(c)
    if warning:
        lines.append(f"\n**Warning:** {_md_cell(warning)}")
    lines += _md_paths(c)
    return "\n".join(lines) + "\n"


def _md_paths(c: Comparison) -> list[str]:
    """The path's changes and what they explain, in the table view's words."""
    lines: list[str] = []
    columns = path_columns(c.paths, c.run_ids, c.baseline)
    if by_column(c.paths) and columns:
        lines += [f"\n**{COLUMNS_HEADING}**\n", "| what | hop | " + " | ".join(_md_cell(x) for x in c.labels) + " |"]
        lines.append("|---|---|" + "---|" * len(c.labels))
        lines += ["| " + " | ".join(_md_cell(x) for x in (what, hop, *values)) + " |" for what, hop, values in columns]
    elif not by_column(c.paths):
        for p in c.paths:
            if p.changes:
                lines.append(f"\n**{pair_heading(p)}**\n")
                lines += [f"- {_md_cell(change_line(x))}" for x in p.changes]
    explanations = [e for p in c.paths for e in p.explanations]
    if explanations:
        lines.append(f"\n**{EXPLAIN_HEADING}**\n")
        lines += [f"- {_md_cell(e.text)}" for e in explanations]
    return lines


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
        wide = too_wide_line(c)
        if wide:
            out.print(Text(safe_text(wide, markup=False), style="yellow"))
    _render_paths(c, out)


def _render_paths(c: Comparison, out: Any) -> None:
    """What changed on the path (only what changed: nothing at all for an unchanged device), then whether it
    explains each figure that moved."""
    from rich.padding import Padding
    from rich.text import Text

    from disksleuth.present.text import Col, print_fitted_table

    def item(text: str) -> Padding:  # wrapped lines indented under their first
        return Padding(Text(safe_text(text, markup=False)), (0, 0, 0, 2))

    columns = path_columns(c.paths, c.run_ids, c.baseline)
    if by_column(c.paths) and columns:
        out.print(Text(COLUMNS_HEADING, style="bold"))
        header = ["what", "hop", *(f"#{rid}" for rid in c.run_ids)]
        cells = [[safe_text(x, markup=False) for x in (what, hop, *values)] for what, hop, values in columns]
        print_fitted_table([Col(h, justify="left") for h in header], cells, key_cols=2)
    elif not by_column(c.paths):
        for p in c.paths:
            if p.changes:
                out.print(Text(pair_heading(p), style="bold"))
                for x in p.changes:
                    out.print(item(change_line(x)))
    explanations = [e for p in c.paths for e in p.explanations]
    if explanations:
        out.print(Text(EXPLAIN_HEADING, style="bold"))
        for e in explanations:
            out.print(item(e.text))


def render_against_baseline(comparison: dict[str, Any] | None) -> None:
    """`show`: what changed on the path from the baseline's run (`show --json`'s `comparison`) and whether
    it explains the figures, in compare's words; nothing when the path and the figures held."""
    if not comparison:
        return
    from rich.padding import Padding
    from rich.text import Text

    from disksleuth.present.text import console

    out = console()

    def item(text: str) -> Padding:  # wrapped lines indented under their first
        return Padding(Text(safe_text(text, markup=False)), (0, 0, 0, 2))

    changes = [PathChange(**{k: x.get(k) for k in _CHANGE_FIELDS}) for x in comparison["path_changes"]]
    if changes:
        out.print(Text(path_heading(comparison["baseline"], comparison["run"]), style="bold"))
        for x in changes:
            out.print(item(change_line(x)))
    if comparison["explanations"]:
        out.print(Text(EXPLAIN_HEADING, style="bold"))
        for e in comparison["explanations"]:
            out.print(item(e["text"]))
