"""The terminal view of `explain FILE...`: what was recognised where, then each device as a live `explain` shows
it, each finding with the file and line it rests on."""

from __future__ import annotations

from typing import Any

from disksleuth.model import worst_severity
from disksleuth.present.check_view import render_device_header
from disksleuth.present.text import console, render_findings, safe_text


def _say(text: str, style: str = "") -> None:
    console().print(f"[{style}]{safe_text(text)}[/{style}]" if style else safe_text(text))


def render_paste(x: Any) -> None:
    out = console()
    out.print("[bold]Read from the paste[/bold]")
    for s in x.sections:
        about = f", {s.device}" if s.device else ""
        _say(f"  {s.kind}{about}: {s.file} lines {s.first_line}-{s.last_line}: {s.status}")
    for sk in x.skipped:
        _say(f"  skipped (no known command's output): {sk['file']} lines {sk['first_line']}-{sk['last_line']}", "dim")
    for note in x.notes:
        _say(f"  {note}", "dim")
    for fig in x.figures_unused:
        where = f" ({fig['source']['file']}:{fig['source']['line']})" if "source" in fig else ""
        _say(f"  figure {fig['option']} {fig['read_as']}{where} not used: {fig['not_used']}", "yellow")
    for d in x.devices:
        out.print()
        render_device_header(d.device, d.chain, None)
        for note in d.notes:
            _say(f"note: {note}", "dim")
        if not d.figures.any():
            _say("(no figures: fio, hdparm -t or dd output in the paste, or --read/--write, add the dynamic verdicts)")
        for g in d.given:
            where = f" ({g['source']['file']}:{g['source']['line']})" if "source" in g else ""
            extra = f"; {g['note']}" if g.get("note") else ""
            _say(f"figure {g['option']}: read as {g['read_as']}{where}{extra}")
        out.print("\n[bold]Findings[/bold]")
        for f, where in zip(d.findings, d.sources, strict=True):
            render_findings([f])
            if where is not None:
                _say(f"      source: {where}", "dim")
        out.print()
        _say(f"Summary: {d.summary}")
    if len(x.devices) > 1:
        worst = worst_severity(x.findings)
        out.print()
        _say(f"{len(x.devices)} devices in the paste; worst finding: {worst}")
