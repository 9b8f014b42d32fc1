"""The results store on a terminal: the `runs` table and `show`'s view of one stored run."""

from __future__ import annotations

from typing import Any

RUNS_SUMMARY_WIDTH = 70  # characters of each summary in the `runs` table; show and --json have it whole


def render_runs(rows: list[dict[str, Any]], total: int, stored: int) -> None:
    from rich.table import Table

    from disksleuth.present.text import clip_words, console, safe_text

    if not rows:
        if stored:
            console().print(f"No runs match ({stored} stored; `disksleuth runs` lists them all).")
        else:
            console().print("No runs yet. `disksleuth check` or `disksleuth bench DIR` saves one.")
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("id", "started", "host", "kind", "profile", "device", "target", "tags", "vs usual", "summary"):
        table.add_column(col, justify="right" if col == "id" else "left", overflow="fold")
    summaries = [clip_words(str(r["summary"] or ""), RUNS_SUMMARY_WIDTH) for r in rows]
    for r, summary in zip(rows, summaries, strict=True):
        cells = (
            str(r["id"]),
            str(r["started_at"] or "")[:16].replace("T", " "),
            r["hostname"] or "",
            r["kind"] or "",
            r["profile"] or "",
            r["device_model"] or r["device_name"] or "",
            r["target"] or "",
            ", ".join(str(t) for t in r["tags"]),
            r.get("baseline") or "",  # slower/faster than the drive's earlier runs when it was measured
            summary,
        )
        table.add_row(*(safe_text(cell) for cell in cells))
    console().print(table)
    if any(s.endswith("…") for s in summaries):
        console().print("[dim]… summary cut: `disksleuth show ID` (or runs --json) has it whole[/dim]")
    if total > len(rows):
        console().print(f"[dim]showing the newest {len(rows)} of {total} runs; --limit 0 shows all[/dim]")


def render_stored_run(doc: dict[str, Any], show_commands: bool = False) -> None:
    """`show`: the stored run's header, its figures and its verdict."""
    from disksleuth.doc.run import run_from_dict
    from disksleuth.model import Finding
    from disksleuth.present.bench_view import render_run
    from disksleuth.present.check_view import render_baseline, render_verdict
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
    render_run(run_from_dict(doc), show_commands=show_commands)
    findings = [
        Finding(f["code"], f["severity"], f["message"] or "", f["evidence"] or {}, f["hint"] or "")
        for f in doc.get("findings") or []
    ]
    if findings or doc.get("summary"):
        render_verdict(findings, doc.get("summary") or "")
    render_baseline(doc.get("baseline"))
