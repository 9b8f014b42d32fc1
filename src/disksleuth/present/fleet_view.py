"""The fleet view: the counts, then a table of the worst devices (rows and counts come from analysis.fleet)."""

from __future__ import annotations

from disksleuth.analysis.fleet import FleetRow, FleetSummary

_MARK = {"critical": "✗ critical", "warn": "! warn", "info": "i info", "ok": "✓ ok"}
_STYLE = {"critical": "bold red", "warn": "yellow", "info": "cyan", "ok": "green"}


def _mbps(v: float | None) -> str:
    return f"{v:,.0f}" if v is not None else "—"


_CODES_SHOWN = 8  # finding codes and models named in the summary; the rest are counted
_MODELS_SHOWN = 6


def summary_lines(summary: FleetSummary, shown: int, limit: int | None, filters: dict[str, str]) -> list[str]:
    """The counts in words: severities, finding codes and models, and which devices the table holds."""
    sev = summary.by_severity
    head = (
        f"{summary.devices:,} drive{'s' if summary.devices != 1 else ''} on {summary.hosts:,} "
        f"host{'s' if summary.hosts != 1 else ''}: "
        + ", ".join(f"{sev[s]:,} {s}" for s in ("ok", "info", "warn", "critical") if sev.get(s))
    )
    if filters:
        given = ", ".join(f"--{k} {v}" for k, v in filters.items())
        head += f" (of {summary.store_devices:,} in the store; {given})"
    lines = [head]
    if summary.by_finding:
        named = ", ".join(f"{code} {n:,}" for code, n in summary.by_finding[:_CODES_SHOWN])
        rest = len(summary.by_finding) - _CODES_SHOWN
        lines.append("findings: " + named + (f", and {rest} more code{'s' if rest > 1 else ''}" if rest > 0 else ""))
    if summary.by_model:
        parts = []
        for model, c in summary.by_model[:_MODELS_SHOWN]:
            unwell = ", ".join(f"{c[s]:,} {s}" for s in ("critical", "warn") if c.get(s))
            parts.append(f"{model} {c['devices']:,}" + (f" ({unwell})" if unwell else ""))
        rest = len(summary.by_model) - _MODELS_SHOWN
        lines.append("models: " + "; ".join(parts) + (f"; and {rest} more" if rest > 0 else ""))
    if shown < summary.devices:
        lines.append(
            f"The {shown:,} worst of {summary.devices:,}, from each device's newest run "
            f"(--limit N or --all for more):"
        )
    else:
        lines.append("Every device, worst first, from its newest run:")
    return lines


def render_fleet(summary: FleetSummary, rows: list[FleetRow], limit: int | None, filters: dict[str, str]) -> None:
    from rich.table import Table

    from disksleuth.present.text import console, safe_text

    out = console()
    if not summary.store_devices:
        out.print("No runs yet. Run `disksleuth check --db URL` on each machine to fill the shared store.")
        return
    for line in summary_lines(summary, len(rows), limit, filters):
        out.print(safe_text(line))
    if not rows:
        return
    # Numbers and times are never cut: when the terminal is too narrow, whole columns go, in this order.
    # The profile beside the read figure: runs of different profiles read differently (issue 40).
    columns = ["host", "device", "worst", "findings", "profile", "read MB/s", "ceiling MB/s", "run", "when"]
    widths = {"host": 6, "device": 6, "worst": 10, "findings": 22, "profile": 7, "read MB/s": 9, "ceiling MB/s": 12}
    widths.update({"run": 4, "when": 16})
    for optional in ("when", "run", "ceiling MB/s"):
        if sum(widths[c] for c in columns) + 2 * (len(columns) - 1) <= out.width:
            break
        columns.remove(optional)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in columns:
        numeric = col in ("read MB/s", "ceiling MB/s", "run")
        table.add_column(
            col,
            justify="right" if numeric else "left",
            no_wrap=numeric or col in ("worst", "when"),
            min_width=widths[col] if numeric or col in ("worst", "when") else None,
            overflow="fold",
        )
    def older(r: FleetRow) -> bool:
        return r.seq_read_run_id is not None and r.seq_read_run_id != r.run_id

    for r in rows:
        device = r.device + (f" ({r.model})" if r.model else "")
        cells = {
            "host": safe_text(r.host),
            "device": safe_text(device),
            "worst": f"[{_STYLE[r.worst]}]{_MARK[r.worst]}[/]",
            "findings": safe_text(", ".join(r.codes) or "—"),
            "profile": safe_text(r.profile or "—"),
            # A figure from an older run than the one shown (the newest has none: a write-only sustained run).
            "read MB/s": _mbps(r.seq_read_mbps) + ("*" if older(r) else ""),
            "ceiling MB/s": _mbps(r.ceiling_mbps),
            "run": f"#{r.run_id}",
            "when": safe_text(str(r.started_at)[:16].replace("T", " ")),
        }
        table.add_row(*(cells[c] for c in columns))
    out.print(table)
    for r in rows:
        for f in r.siblings:
            out.print(f"[{_STYLE[f['severity']]}]{safe_text(f['message'])}[/]")
    if "read MB/s" in columns and any(older(r) for r in rows):
        out.print("[dim]* from an older run: the newest has no sequential read (run ids in --json)[/dim]")
