"""The results store on a terminal: the `runs` table and `show`'s view of one stored run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# The `runs` table fits the terminal, one line per run: (header, justify, keep rank, narrowest width).
# A column with a narrowest width is shortened to fit (a path in the middle, text at a word, with an
# ellipsis); one without is never cut. Rank 0 columns always stay; the others join, most useful first
# (profile, tags, host, then kind, which the profile mostly says), while their narrowest widths fit.
RUNS_COLUMNS: tuple[tuple[str, str, int, int | None], ...] = (
    ("id", "right", 0, None),
    ("started", "left", 0, None),
    ("host", "left", 3, 8),
    ("kind", "left", 4, None),
    ("profile", "left", 1, None),
    ("device", "left", 0, 10),
    ("target", "left", 0, 16),
    ("tags", "left", 2, 8),
    ("vs usual", "left", 1, None),  # slower/faster than the drive's earlier runs when it was measured
    ("summary", "left", 0, 28),
)
# Spare columns go to these, in turn, up to each one's whole text (or the cap): the short names
# first, then a readable target and summary, then the rest of both.
_RUNS_GROW: tuple[tuple[str, int | None], ...] = (
    ("device", None),
    ("host", None),
    ("tags", None),
    ("target", 32),
    ("summary", 48),
    ("target", None),
    ("summary", None),
)
_GAP = 2  # columns between two cells


def fit_runs_columns(rows: list[list[str]], width: int) -> dict[str, int]:
    """The width of each column shown (by header) for `rows` of cells in RUNS_COLUMNS order, in at most
    `width` columns when that is possible at all."""
    natural = {
        header: max([len(header), *(len(row[i]) for row in rows)])
        for i, (header, _justify, _rank, _narrowest) in enumerate(RUNS_COLUMNS)
    }
    narrowest = {
        header: natural[header] if least is None else min(natural[header], max(len(header), least))
        for header, _justify, _rank, least in RUNS_COLUMNS
    }
    # A column empty in every row (no run has tags, none was judged against its usual) is left out.
    empty = {header for i, (header, _j, _r, _n) in enumerate(RUNS_COLUMNS) if not any(row[i] for row in rows)}
    optional = sorted((rank, header) for header, _j, rank, _n in RUNS_COLUMNS if rank and header not in empty)
    widths = {header: narrowest[header] for header, _j, rank, _n in RUNS_COLUMNS if not rank}

    def used() -> int:
        return sum(widths.values()) + _GAP * (len(widths) - 1)

    for *_order, header in optional:
        if used() + _GAP + narrowest[header] <= width:
            widths[header] = narrowest[header]
    widths = {header: widths[header] for header, _j, _r, _n in RUNS_COLUMNS if header in widths}
    if used() > width:  # a very narrow terminal: the summary gives what it can, down to a word or two
        widths["summary"] = max(len("summary"), widths["summary"] - (used() - width))
    for header, cap in _RUNS_GROW:
        if header in widths:
            goal = natural[header] if cap is None else min(natural[header], cap)
            widths[header] = max(widths[header], min(goal, widths[header] + width - used()))
    return widths


def render_runs(rows: list[dict[str, Any]], total: int, stored: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from disksleuth.present.text import clip_name, clip_path, clip_words, console, safe_text

    out = console()
    if not rows:
        if stored:
            out.print(f"No runs match ({stored} stored; `disksleuth runs` lists them all).")
        else:
            out.print("No runs yet. `disksleuth check` or `disksleuth bench DIR` saves one.")
        return
    cells = [
        [
            safe_text(cell, markup=False)
            for cell in (
                str(r["id"]),
                str(r["started_at"] or "")[:16].replace("T", " "),
                r["hostname"] or "",
                r["kind"] or "",
                r["profile"] or "",
                r["device_model"] or r["device_name"] or "",
                r["target"] or "",
                ", ".join(str(t) for t in r["tags"]),
                r.get("baseline") or "",
                " ".join(str(r["summary"] or "").split()),
            )
        ]
        for r in rows
    ]
    widths = fit_runs_columns(cells, out.width)
    shown = [(i, header) for i, (header, _j, _r, _n) in enumerate(RUNS_COLUMNS) if header in widths]
    clip = {"target": clip_path, "summary": clip_words}

    def fitted() -> list[list[str]]:
        return [[clip.get(header, clip_name)(row[i], widths[header]) for i, header in shown] for row in cells]

    table_cells = fitted()
    # A path or name cut at a boundary may come out shorter than its column: what it leaves goes to the summary.
    for n, (_i, header) in enumerate(shown[:-1]):
        widths[header] = max(len(header), *(len(row[n]) for row in table_cells))
    widths["summary"] = out.width - sum(w for h, w in widths.items() if h != "summary") - _GAP * (len(widths) - 1)
    table_cells = fitted()
    table = Table(box=None, header_style="bold", pad_edge=False, show_edge=False)
    for i, header in shown:
        table.add_column(header, justify="right" if RUNS_COLUMNS[i][1] == "right" else "left")
    for row in table_cells:
        table.add_row(*(Text(cell, no_wrap=True, overflow="ellipsis") for cell in row))
    out.print(table)
    hidden = [
        header
        for i, (header, _j, _r, _n) in enumerate(RUNS_COLUMNS)
        if header not in widths and any(row[i] for row in cells)
    ]
    if hidden:
        out.print(f"[dim]hidden at {out.width} columns: {', '.join(hidden)} (runs --json has every field)[/dim]")
    if any(row[-1] != full[-1] for row, full in zip(table_cells, cells, strict=True)):
        out.print("[dim]… summary cut: `disksleuth show ID` (or runs --json) has it whole[/dim]")
    if total > len(rows):
        out.print(f"[dim]showing the newest {len(rows)} of {total} runs; --limit 0 shows all[/dim]")


def render_stored_run(doc: dict[str, Any], show_commands: bool = False) -> None:
    """`show`: the stored run's header, its figures and its verdict."""
    from disksleuth.doc.run import run_from_dict
    from disksleuth.model import Finding
    from disksleuth.present.bench_view import render_run
    from disksleuth.present.check_view import render_baseline, render_verdict
    from disksleuth.present.compare_view import render_against_baseline
    from disksleuth.present.text import console, safe_text

    run = doc["run"]
    dev = doc.get("device") or {}
    console().print(
        f"[bold]Run #{run['id']}[/bold]  "
        + safe_text(f"{run['started_at']}  {run['kind']}  {dev.get('model') or run.get('device') or ''}")
        + (f"  tags: {safe_text(', '.join(str(t) for t in run['tags']))}" if run.get("tags") else "")
    )
    if run.get("note"):
        console().print(f"note: {safe_text(run['note'])}")
    if doc.get("members") or doc.get("stack"):  # an array's run: its tree and its members' reads (issue 24)
        from disksleuth.present.stack_view import render_check_stack

        render_check_stack(doc)
    if doc.get("tests") or not doc.get("members"):
        render_run(run_from_dict(doc), show_commands=show_commands)
    findings = [
        Finding(f["code"], f["severity"], f["message"] or "", f["evidence"] or {}, f["hint"] or "")
        for f in doc.get("findings") or []
    ]
    if findings or doc.get("summary"):
        render_verdict(findings, doc.get("summary") or "")
    render_baseline(doc.get("baseline"))
    render_against_baseline(doc.get("comparison"))


_RANGES_SHOWN = 8  # a line, not a page: the first few ranges and the last, when there are more


def run_ranges(ids: Sequence[int]) -> str:
    """Run ids as compact ranges in the order given: "#1-#10, #15-#20", the middle elided past a few."""
    ranges: list[list[int]] = []
    for i in ids:
        if ranges and i == ranges[-1][1] + 1:
            ranges[-1][1] = i
        else:
            ranges.append([i, i])
    shown = [f"#{a}" if a == b else f"#{a}-#{b}" for a, b in ranges]
    if len(shown) > _RANGES_SHOWN:
        hidden = len(shown) - _RANGES_SHOWN
        shown = [*shown[: _RANGES_SHOWN - 1], f"… {hidden:,} more ranges …", shown[-1]]
    return ", ".join(shown)


def imported_line(new_ids: Sequence[int], skipped: Sequence[int]) -> str:
    """What `import` did, on one line: "imported 6,000 runs, #1-#6000"."""
    count = len(new_ids)
    said = f"imported {count:,} run{'' if count == 1 else 's'}" + (f", {run_ranges(new_ids)}" if count else "")
    if skipped:
        said += f"; skipped {len(skipped):,} already stored ({run_ranges(skipped)})"
    return said
