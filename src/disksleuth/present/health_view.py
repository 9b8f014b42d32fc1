"""`health` output: JSON and a terminal view."""

from __future__ import annotations

from typing import Any

from disksleuth.model import Finding
from disksleuth.model.run import Health
from disksleuth.present.selftest_view import self_test_and_wear_lines
from disksleuth.units import fmt_bytes

# Annotations only: model.run is loaded with Health anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console

    from disksleuth.model.health_history import AckOutcome, DriveLine, HistoryView
    from disksleuth.model.run import SelfTest, SmartAttribute
    from disksleuth.model.wear import WearForecast


def _temperature(value_c: float) -> str:
    from disksleuth.analysis.drive_words import temperature_text
    from disksleuth.analysis.temperature import PLAUSIBLE_LIMIT_C

    return temperature_text(value_c, PLAUSIBLE_LIMIT_C[1])


_ROWS = (
    ("SMART overall", "smart_passed", lambda v: "PASSED" if v else "FAILED"),
    ("temperature", "temperature_c", _temperature),
    ("warning at", "temperature_warning_c", lambda v: f"{v:g} °C"),
    ("critical at", "temperature_critical_c", lambda v: f"{v:g} °C"),
    ("temperature sensors", "temperature_sensors_c", lambda v: ", ".join(f"{t:g} °C" for t in v) or None),
    ("power-on hours", "power_on_hours", lambda v: f"{v:,}"),
    ("power cycles", "power_cycles", lambda v: f"{v:,}"),
    ("unsafe shutdowns", "unsafe_shutdowns", lambda v: f"{v:,}"),
    ("endurance used", "percentage_used", lambda v: f"{v}%"),
    ("endurance from", "percentage_used_source", str),
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


_LIMIT_ROWS = ("temperature_warning_c", "temperature_critical_c")


def _limit_row(h: Health, key: str) -> str | None:
    from disksleuth.analysis.drive_words import limit_text
    from disksleuth.analysis.temperature import limits_of

    if h.temperature_c is None and getattr(h, key) is None:
        return None
    lim = limits_of(h)
    if key == "temperature_warning_c":
        return limit_text(lim.warning_c, lim.warning_source, lim.default_for) or None
    return limit_text(lim.critical_c, lim.critical_source, lim.default_for) or None


def self_test_line(t: SelfTest, h: Health) -> str:
    """ "Extended offline: Completed without error, at 12,667 h (884 h ago)" in rich markup."""
    from disksleuth.analysis.selftests import self_test_age_hours
    from disksleuth.present.text import safe_text as escape  # markup and control characters

    if t.in_progress:
        left = f", {t.remaining_pct}% remaining" if t.remaining_pct is not None else ""
        # A test read from the execution status has no kind of its own: not "self-test: self-test: running".
        kind = "" if t.kind.strip().lower() in ("", "self-test") else f"{escape(t.kind)}: "
        return f"[cyan]{kind}running{left}[/cyan]"
    style = "yellow" if t.passed is None else "green" if t.passed else "bold red"
    text = f"[{style}]{escape(t.kind)}: {escape(t.status)}[/{style}]"
    if t.power_on_hours is not None:
        text += f", at {t.power_on_hours:,} h"
        # The finding's age, ATA's 16-bit hours unwrapped (a raw difference said 83,865 h for 18,329).
        age = self_test_age_hours(h, t)
        if age is not None:
            text += f" ({age:,} h ago)"
    if t.failing_lba is not None:
        text += f", first failing LBA {t.failing_lba:,}"
    return text


def _ata_table(attrs: tuple[SmartAttribute, ...]) -> Any:
    from rich.table import Table

    from disksleuth.present.text import safe_text as escape  # markup and control characters

    # Columns and widths as `smartctl -A -f brief` (the -x default) prints them.
    table = Table(box=None, header_style="bold", pad_edge=False, title="SMART attributes", title_justify="left")
    for col in ("ID#", "ATTRIBUTE_NAME", "FLAGS", "VALUE", "WORST", "THRESH", "FAIL", "RAW_VALUE"):
        table.add_column(col, justify="right" if col in ("ID#", "VALUE", "WORST", "THRESH") else "left", no_wrap=True)

    def n3(v: int | None) -> str:
        return f"{v:03d}" if v is not None else "---"

    for a in attrs:
        fail = {"now": "[bold red]NOW[/bold red]", "past": "[yellow]Past[/yellow]"}.get(a.when_failed or "", "-")
        name, flags = escape(a.name), escape(a.flags or "")
        table.add_row(str(a.id), name, flags, n3(a.value), n3(a.worst), n3(a.thresh), fail, escape(a.raw))
    return table


def _nvme_table(attrs: tuple[SmartAttribute, ...]) -> Any:
    from rich.table import Table

    from disksleuth.present.text import safe_text as escape  # markup and control characters

    title = "SMART/Health Information (NVMe Log 0x02)"
    table = Table(box=None, show_header=False, pad_edge=False, title=title, title_justify="left")
    table.add_column(no_wrap=True)
    table.add_column(justify="right", no_wrap=True)
    for a in attrs:
        table.add_row(escape(a.name) + ":", escape(a.raw))
    return table


def _scsi_table(attrs: tuple[SmartAttribute, ...]) -> Any:
    from rich.table import Table

    from disksleuth.model.run import SCSI_COUNTERS
    from disksleuth.present.text import safe_text

    # smartctl's "Error counter log": one row per direction, the counters as columns.
    table = Table(box=None, header_style="bold", pad_edge=False, title="Error counter log", title_justify="left")
    table.add_column("", no_wrap=True)
    for _, label in SCSI_COUNTERS:
        table.add_column(label, justify="right")
    by_key = {a.key: a for a in attrs}
    for direction in ("read", "write", "verify"):
        cells = [by_key.get(f"{direction}.{key}") for key, _ in SCSI_COUNTERS]
        if any(cells):
            table.add_row(f"{direction}:", *(safe_text(c.raw) if c else "—" for c in cells))
    return table


def render_attributes(out: Console, h: Health) -> None:
    """The table `smartctl -A` prints, in the drive's own protocol."""
    from disksleuth.present.text import safe_text

    attrs = h.attributes
    if not attrs:
        out.print("[dim]No attribute table in this smartctl output.[/dim]")
        return
    if attrs[0].id is not None:
        out.print(_ata_table(attrs))
    elif any(a.group for a in attrs):
        out.print(_scsi_table(attrs))
        for a in attrs:
            if not a.group:
                out.print(f"{safe_text(a.name)}: {safe_text(a.raw)}")
    else:
        out.print(_nvme_table(attrs))


_HAS_ROW = ("(ATA 5)", "(ATA 197)", "(ATA 198)", "(ATA 199)")


def render_health(
    h: Health, findings: list[Finding], attributes: bool = False, wear: WearForecast | None = None
) -> None:
    from rich.table import Table

    from disksleuth.analysis.drive_words import duration, throttle_row
    from disksleuth.analysis.error_logs import summary_lines
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
        shown = fmt(value) if value is not None else None
        if key in _LIMIT_ROWS:
            shown = _limit_row(h, key)  # issue 38: where the limit came from, the drive or a class default
        if shown is not None:
            table.add_row(label, safe_text(shown))
    # Named counters that are not zero and have no row above: the rest of the evidence behind
    # interface_crc_errors and media_errors (Reported_Uncorrect, SATA_Downshift_Count, SATA phy counters, ...).
    for name, count in {**h.interface_error_counts, **h.media_error_counts}.items():
        if count and not name.endswith(_HAS_ROW) and not name.startswith(("SCSI grown", "SCSI uncorrected", "NVMe")):
            table.add_row(safe_text(name), f"[yellow]{count:,}[/yellow]")
    if h.critical_warning:
        table.add_row("critical warning", "[red]" + ", ".join(h.critical_warning) + "[/red]")
    for key, value in h.throttle.items():
        label, unit = throttle_row(key)
        table.add_row(safe_text(label), duration(value, unit) if unit else f"{value:,}")
    out.print(table)
    for line in summary_lines(h.error_log):  # the drive's own words: no escape sequence reaches the terminal
        _flow(out, safe_text(line, markup=False))
    if h.lba_formats:
        out.print(
            "LBA formats: "
            + ", ".join(
                f"{'[bold]' if f.in_use else ''}#{f.id} {f.data_bytes}+{f.metadata_bytes} B rp{f.relative_performance}"
                f"{' (in use)[/bold]' if f.in_use else ''}"
                for f in h.lba_formats
            )
        )
    if h.self_test is not None:
        out.print(f"last self-test: {self_test_line(h.self_test, h)}")
    for line in self_test_and_wear_lines(h, wear):  # issue 38
        _flow(out, line)
    if attributes:
        out.print()
        render_attributes(out, h)
        if h.self_test is None:
            out.print("[dim]No self-test log in this output (`smartctl -x` includes it).[/dim]")
    if h.exit_status_words:
        out.print(f"[dim]smartctl exit status {h.exit_status}: {'; '.join(h.exit_status_words)}[/dim]")
    if findings:
        from disksleuth.model import SEVERITY_ORDER

        # Worst first (stable): "back up now and replace it" above "watch these counters" (HD103SJ's failed test).
        render_findings(sorted(findings, key=lambda f: -SEVERITY_ORDER.get(f.severity, 0)), indent="")
    else:
        out.print(health_summary(h, findings), markup=False, highlight=False)


def _flow(out: Any, line: str) -> None:
    """A plain line wrapped under itself (a hanging indent), not from column 0 ("(READ\nDMA)" at 80 columns)."""
    import textwrap

    lead = len(line) - len(line.lstrip(" "))
    width = max(int(out.width or 80), 40)
    for part in textwrap.wrap(line, width=width, subsequent_indent=" " * (lead + 4), drop_whitespace=True) or [""]:
        out.print(part if part.startswith(" " * lead) else " " * lead + part, markup=False, highlight=False)


def health_summary(h: Health, findings: list[Finding]) -> str:
    """One line: what was found, or that nothing was, and how much there was to look at."""
    if findings:
        worst = max(findings, key=lambda f: ("ok", "info", "warn", "critical").index(f.severity))
        return f"{len(findings)} finding(s), worst {worst.severity}: " + ", ".join(f.code for f in findings)
    looked = []
    if h.attributes:
        looked.append(f"{len(h.attributes)} SMART attributes")
    if h.media_error_counts or h.interface_error_counts:
        looked.append("the error counters")
    if h.percentage_used is not None:
        looked.append("wear")
    if len(looked) > 1:  # "17 SMART attributes, the error counters and wear"
        looked = [", ".join(looked[:-1]) + " and " + looked[-1]]
    return "Nothing found: no warning signs in " + (looked[0] if looked else "what smartctl reported") + "."


# --- health over time ---------------------------------------------------------------------------


# Counters shown beside the watched ones in `health --history`: the heat minutes (NVMe) and the error log's count.
_HISTORY_EXTRA = {
    "throttle.warning_temp_time": "warn temp min",
    "throttle.critical_comp_time": "crit temp min",
    "error_log_entries": "error log",
}

_HISTORY_LEGEND = {
    "throttle.warning_temp_time": "minutes above the warning temperature (NVMe, over the drive's life)",
    "throttle.critical_comp_time": "minutes above the critical temperature (NVMe, over the drive's life)",
    "error_log_entries": "the drive's error log count (ATA or NVMe)",
}


def _counter_label(key: str) -> str:
    """A short column head: 'ATA 199' for an ATA attribute, else the counter's first words."""
    import re

    if key in _HISTORY_EXTRA:
        return _HISTORY_EXTRA[key]

    from disksleuth.analysis.health_history import shown_name

    m = re.search(r"\((ATA \d+)\)$", key)
    if m:
        return m.group(1)
    return _whole_words(shown_name(key).removeprefix("NVMe ").removeprefix("SCSI "), 18)


def _whole_words(text: str, limit: int) -> str:
    """The first words of `text` that fit in `limit` characters, never a word cut ('uncorrected writ')."""
    out = ""
    for word in text.split():
        if out and len(out) + 1 + len(word) > limit:
            break
        out = f"{out} {word}" if out else word
    return out


def render_history(view: HistoryView) -> None:
    """One row per stored reading, oldest first; a column per counter that was ever above zero or changed."""
    from rich.table import Table

    from disksleuth.analysis.health_history import shown_name, stamp, watched
    from disksleuth.analysis.selftests import SELF_TEST_PREFIX
    from disksleuth.present.selftest_view import self_test_cell
    from disksleuth.present.text import console, render_findings, safe_text

    out = console()
    out.print(f"[bold]{safe_text(view.device_name)}[/bold] on {safe_text(view.hostname)}: "
              f"{len(view.readings)} stored health reading(s)")  # fmt: skip
    keys: list[str] = []
    for r in view.readings:
        extra = {k: r.counters[k] for k in _HISTORY_EXTRA if k in r.counters}  # issue 38: heat and the error log
        for k, v in {**watched(r.counters), **extra}.items():
            if k not in keys and (v or any(o.counters.get(k) not in (None, v) for o in view.readings)):
                keys.append(k)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("read at (UTC)", "source", "drive", "°C", "hours"):
        table.add_column(col, no_wrap=True, justify="right" if col in ("°C", "hours") else "left")
    for k in keys:
        table.add_column(_counter_label(k), justify="right", no_wrap=True)
    tested = any(SELF_TEST_PREFIX + "hours" in r.counters for r in view.readings)  # issue 38: results on record
    if tested:
        table.add_column("self-test", no_wrap=True)
    drives: dict[str, str] = {}
    previous: dict[str, int] = {}
    for r in view.readings:
        drive = drives.setdefault(r.drive_key, chr(ord("A") + min(len(drives), 25)))
        cells = []
        for k in keys:
            value = r.counters.get(k)
            before = previous.get(k)
            shown = "—" if value is None else f"{value:,}"
            if value is not None and before is not None and value > before:
                shown = f"[yellow]{shown}[/yellow]"
            elif value is not None and before is not None and value < before:
                shown = f"[cyan]{shown}↓[/cyan]"
            if value is not None:
                previous[k] = value
            cells.append(shown)
        table.add_row(
            stamp(r.read_at_s).removesuffix(" UTC"),
            safe_text(r.source),
            drive,
            f"{r.temperature_c:g}" if r.temperature_c is not None else "—",
            f"{r.power_on_hours:,}" if r.power_on_hours is not None else "—",
            *cells,
            *([self_test_cell(r.counters)] if tested else []),
        )
    out.print(table)
    by_key = {r.drive_key: r for r in view.readings}
    for key, letter in drives.items():
        r = by_key[key]
        serial = f"serial id {r.serial_id[:12]}…" if r.serial_id else "no serial"
        out.print(f"[dim]drive {letter}: {safe_text(r.model or 'unknown model')}, {serial}[/dim]")
    for k in keys:
        name = _HISTORY_LEGEND.get(k) or shown_name(k)
        if _counter_label(k) != name:
            out.print(f"[dim]{safe_text(_counter_label(k))}: {safe_text(name)}[/dim]")
    if view.findings:
        render_findings(view.findings, indent="")
    else:
        out.print("Nothing found in the newest reading.")


def render_drives(lines: list[DriveLine]) -> None:
    """Every drive, worst first: one row each, then the findings of those not at ok."""
    from rich.table import Table

    from disksleuth.analysis.health_history import stamp
    from disksleuth.present.text import console, safe_text

    out = console()
    if not lines:
        out.print(
            "No drive with SMART data here, and no health readings of this host's drives in the store (virtual "
            "disks have none). `disksleuth health --from-smartctl FILE` reads a saved one and keeps it apart from "
            "this host's drives, unless `--as-device DEV` names the drive here it was read from.",
            markup=False,
            highlight=False,
        )
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("device", "model", "worst", "°C", "used", "hours", "read at (UTC)", "findings"):
        table.add_column(col, no_wrap=col != "findings", justify="right" if col in ("°C", "used", "hours") else "left")
    styles = {"critical": "bold red", "warn": "yellow", "info": "cyan", "ok": "green"}
    for d in lines:
        r = d.reading
        sev = next((s for s in styles if any(f.severity == s for f in d.findings)), "ok")
        codes = ", ".join(f.code for f in d.findings) or "—"
        table.add_row(
            safe_text(r.device_name or "?"),
            safe_text(r.model or "?"),
            f"[{styles[sev]}]{sev}[/{styles[sev]}]",
            f"{r.temperature_c:g}" if r.temperature_c is not None else "—",
            f"{r.percentage_used}%" if r.percentage_used is not None else "—",
            f"{r.power_on_hours:,}" if r.power_on_hours is not None else "—",
            stamp(r.read_at_s).removesuffix(" UTC") + ("" if d.live else " (stored)"),
            safe_text(codes),
        )
    out.print(table)


def ack_lines(outcomes: list[AckOutcome]) -> list[str]:
    """What `health --ack/--unack` did, one line per counter."""
    from disksleuth.analysis.health_history import shown_name, stamp

    lines = []
    for o in outcomes:
        name = shown_name(o.attribute)
        if o.value is None:
            what = "undone" if o.removed else "was not acknowledged"
            lines.append(f"{o.device_name}: {name}: acknowledgement {what}")
        else:
            when = stamp(o.reading_at_s) if o.reading_at_s is not None else "?"
            lines.append(
                f"{o.device_name}: acknowledged {name} at {o.value:,} (reading of {when}); warns again if it grows"
            )
    return lines
