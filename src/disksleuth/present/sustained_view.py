"""The sustained fill as JSON (`sustained` in `bench --json`) and as text: its phases, the cliff, heat or cache."""

from __future__ import annotations

from disksleuth.model.sustained import Sustained


def _size(n: int) -> str:
    return f"{n / 1e9:,.2f} GB" if n >= 1e9 else f"{n / 1e6:,.0f} MB"


def render_sustained(s: Sustained) -> None:
    """The phases of the fill, one line each, then what the cliff was."""
    from rich.markup import escape

    from disksleuth.present.text import console

    out = console()
    rate = f", {s.mbps:,.1f} MB/s (bytes written / fill time)" if s.mbps is not None else ""
    out.print(f"\n[bold]Sustained write[/bold]: {_size(s.written_bytes)} in {s.duration_s:,.2f} s{rate}")
    for i, p in enumerate(s.phases, 1):
        at = s.cliff_at_bytes
        cliff = f"  ← cliff at {_size(at)}" if at is not None and p.start_bytes <= at < p.end_bytes else ""
        out.print(
            f"  phase {i}  {_size(p.start_bytes):>10} → {_size(p.end_bytes):>10}  "
            f"{p.mbps:>9,.1f} MB/s  ({p.end_s - p.start_s:,.2f} s){cliff}"
        )
    if not s.judged:
        # The reason names itself ("too short to judge: 1 bandwidth-log window ..."): no "not judged:" before it.
        head, _, rest = s.reason.partition(": ")
        if rest and "judge" in head:
            out.print(f"  [yellow]{escape(head)}[/yellow]: {escape(rest)}")
        else:
            out.print(f"  [yellow]not judged[/yellow]: {escape(s.reason)}")
    elif s.cause == "cache" and s.cache_exhausted_at_bytes is not None:
        out.print(
            f"  write cache ran out after {_size(s.cache_exhausted_at_bytes)}: {s.burst_mbps:,.0f} MB/s, then "
            f"{s.sustained_mbps:,.0f} MB/s ({escape(s.reason)})"
        )
    elif s.cause == "thermal":
        out.print(
            f"  [yellow]thermal throttling[/yellow] after {_size(s.cliff_at_bytes or 0)}: {s.burst_mbps:,.0f} → "
            f"{s.sustained_mbps:,.0f} MB/s ({escape(s.reason)})"
        )
    else:
        out.print(
            f"  no cliff within the {_size(s.written_bytes)} written: {s.sustained_mbps or 0:,.0f} MB/s throughout "
            f"({escape(s.reason)})"
        )
    from disksleuth.analysis.sustained import findings

    for f in findings(s):
        colour = "yellow" if f.severity == "warn" else "cyan"
        out.print(f"  [{colour}]{f.severity} · {f.code}[/{colour}]: {escape(f.message)}")
    if s.recovery is not None:
        r = s.recovery
        came = f"{r.recovered_pct:.0f}% of the cache" if r.recovered_pct is not None else "no cache to compare"
        out.print(
            f"  after {r.idle_s:g} s idle: {_size(r.fast_bytes)} at {r.mbps:,.0f} MB/s before slowing ({came})"
            if r.fell
            else f"  after {r.idle_s:g} s idle: all {_size(r.written_bytes)} at {r.mbps:,.0f} MB/s ({came} or more)"
        )
