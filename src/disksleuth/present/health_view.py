"""`health` output: JSON and a terminal view."""

from __future__ import annotations

import dataclasses
from typing import Any

from disksleuth.model import Finding, Health
from disksleuth.units import fmt_bytes


def health_to_dict(h: Health) -> dict[str, Any]:
    out = dataclasses.asdict(h)
    for key in ("device", "model", "serial", "firmware", "protocol", "capacity_bytes"):
        out.pop(key, None)
    out["critical_warning"] = list(h.critical_warning)
    out["lba_formats"] = [dataclasses.asdict(f) for f in h.lba_formats]
    out["throttle"] = dict(h.throttle)
    out["exit_status_words"] = list(h.exit_status_words)
    out["messages"] = list(h.messages)
    return out


def device_summary(h: Health) -> dict[str, Any]:
    return {
        "name": h.device,
        "protocol": h.protocol,
        "model": h.model,
        "serial": h.serial,
        "firmware": h.firmware,
        "capacity_bytes": h.capacity_bytes,
    }


_ROWS = (
    ("SMART overall", "smart_passed", lambda v: "PASSED" if v else "FAILED"),
    ("temperature", "temperature_c", lambda v: f"{v:g} °C"),
    ("warning at", "temperature_warning_c", lambda v: f"{v:g} °C"),
    ("critical at", "temperature_critical_c", lambda v: f"{v:g} °C"),
    ("power-on hours", "power_on_hours", lambda v: f"{v:,}"),
    ("power cycles", "power_cycles", lambda v: f"{v:,}"),
    ("unsafe shutdowns", "unsafe_shutdowns", lambda v: f"{v:,}"),
    ("endurance used", "percentage_used", lambda v: f"{v}%"),
    ("available spare", "available_spare_pct", lambda v: f"{v}%"),
    ("spare threshold", "available_spare_threshold_pct", lambda v: f"{v}%"),
    ("media errors", "media_errors", lambda v: f"{v:,}"),
    ("error log entries", "error_log_entries", lambda v: f"{v:,}"),
    ("reallocated sectors", "ata_reallocated_sectors", lambda v: f"{v:,}"),
    ("pending sectors", "ata_pending_sectors", lambda v: f"{v:,}"),
    ("offline uncorrectable", "ata_offline_uncorrectable", lambda v: f"{v:,}"),
    ("CRC errors (cable)", "ata_crc_errors", lambda v: f"{v:,}"),
    ("grown defects", "scsi_grown_defects", lambda v: f"{v:,}"),
    ("uncorrected errors", "scsi_uncorrected_errors", lambda v: f"{v:,}"),
    ("SATA link now", "sata_speed_current_gbps", lambda v: f"{v:g} Gb/s"),
    ("SATA link max", "sata_speed_max_gbps", lambda v: f"{v:g} Gb/s"),
)


def render_health(h: Health, findings: list[Finding]) -> None:
    from rich.table import Table

    from disksleuth.present.text import console, render_findings, safe_text

    out = console()
    title = " ".join(x for x in (h.device or "", h.model or "", f"({h.protocol})" if h.protocol else "") if x)
    if h.capacity_bytes:
        title += f"  {fmt_bytes(h.capacity_bytes)}"
    versions = f"firmware {h.firmware or '?'}, smartctl {h.smartctl_version or '?'}"
    out.print(f"[bold]{safe_text(title)}[/bold]  [dim]{safe_text(versions)}[/dim]")
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="dim")
    table.add_column()
    for label, key, fmt in _ROWS:
        value = getattr(h, key)
        if value is not None:
            table.add_row(label, safe_text(fmt(value)))
    if h.critical_warning:
        table.add_row("critical warning", "[red]" + ", ".join(h.critical_warning) + "[/red]")
    for key, value in h.throttle.items():
        table.add_row(safe_text(key.replace("_", " ")), f"{value:,}")
    out.print(table)
    if h.lba_formats:
        out.print(
            "LBA formats: "
            + ", ".join(
                f"{'[bold]' if f.in_use else ''}#{f.id} {f.data_bytes}+{f.metadata_bytes} B rp{f.relative_performance}"
                f"{' (in use)[/bold]' if f.in_use else ''}"
                for f in h.lba_formats
            )
        )
    if h.exit_status_words:
        out.print(f"[dim]smartctl exit status {h.exit_status}: {'; '.join(h.exit_status_words)}[/dim]")
    render_findings(findings, indent="")
