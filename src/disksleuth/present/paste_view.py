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
    if not x.devices and getattr(x, "slots", None) is not None:
        _render_slots(x.slots)
    for d in x.devices:
        out.print()
        render_device_header(d.device, d.chain, None)
        for note in d.notes:
            _say(f"note: {note}", "dim")
        if not d.figures.any() and not d.given:
            _say("(no figures: fio, hdparm -t or dd output in the paste, or --read/--write, add the dynamic verdicts)")
        for g in d.given:
            where = f" ({g['source']['file']}:{g['source']['line']})" if "source" in g else ""
            extra = f"; {g['note']}" if g.get("note") else ""
            _say(f"figure {g['option']}: read as {g['read_as']}{where}{extra}")
        out.print("\n[bold]Findings[/bold]")
        if not d.findings:
            _say("  (none: no figure here is one a verdict reads)", "dim")
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


# dmidecode pasted alone (issue 40): its slots and onboard devices, and what would put them on the links.
SLOTS_HINT = (
    "No device in the paste to put these slots on: paste `lspci -vv` (and `lspci -tv`) beside it, and each drive's "
    "link is shown with the slot it is in."
)


MAX_SLOTS_SHOWN = 64  # a big server has ~20 slots; a paste of thousands is shown in part, all in --json


def _cell(value: object, width: int) -> str:
    text = "-" if value is None or value == "" else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _render_slots(table: Any) -> None:
    out = console()
    slots, onboard = table.smbios_slots, table.onboard
    version = f", SMBIOS {table.smbios_version}" if table.smbios_version else ""
    out.print()
    out.print(f"[bold]System slots (dmidecode type 9{safe_text(version)})[/bold]")
    if slots:
        _say(f"  {'designation':<29} {'type':<18} {'width':<5} {'usage':<10} bus address", "dim")
    for sl in slots[:MAX_SLOTS_SHOWN]:
        width = sl.width_name or (f"x{sl.width_lanes}" if sl.width_lanes else None)
        _say(
            f"  {_cell(sl.designation, 29):<29} {_cell(sl.type_name, 18):<18} {_cell(width, 5):<5} "
            f"{_cell(sl.current_usage, 10):<10} {_cell(sl.bus_address, 12)}"
        )
    if len(slots) > MAX_SLOTS_SHOWN:
        _say(f"  ... and {len(slots) - MAX_SLOTS_SHOWN:,} more (--json lists them all)", "dim")
    if not slots:
        _say("  (no System Slots record)", "dim")
    if onboard:
        out.print()
        out.print("[bold]Onboard devices (dmidecode types 10 and 41)[/bold]")
        _say(f"  {'designation':<32} {'type':<16} {'enabled':<8} {'bus address':<12}", "dim")
        for o in onboard[:MAX_SLOTS_SHOWN]:
            _say(
                f"  {_cell(o.designation, 32):<32} {_cell(o.type_name, 16):<16} {'yes' if o.enabled else 'no':<8} "
                f"{_cell(o.bus_address, 12):<12}"
            )
    out.print()
    in_use = sum(1 for sl in slots if (sl.current_usage or "").lower() == "in use")
    _say(f"Summary: {len(slots):,} slot(s), {in_use:,} in use; {len(onboard):,} onboard device(s)")
    _say(SLOTS_HINT)
