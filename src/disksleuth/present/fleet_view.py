"""The fleet view: a table and a JSON document (rows come from analysis.fleet)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from disksleuth.analysis.fleet import FleetRow, fleet_counts

_MARK = {"critical": "✗ critical", "warn": "! warn", "info": "i info", "ok": "✓ ok"}
_STYLE = {"critical": "bold red", "warn": "yellow", "info": "cyan", "ok": "green"}


def fleet_to_dict(rows: list[FleetRow]) -> dict[str, Any]:
    hosts = sorted({r.host for r in rows})
    return {
        "hosts": hosts,
        "counts": fleet_counts(rows),
        "rows": [{**asdict(r), "codes": list(r.codes)} for r in rows],
    }


def _mbps(v: float | None) -> str:
    return f"{v:,.0f}" if v is not None else "—"


def render_fleet(rows: list[FleetRow]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from disksleuth.present.text import console

    out = console()
    if not rows:
        out.print("No runs yet. Run `disksleuth check --db URL` on each machine to fill the shared store.")
        return
    counts = fleet_counts(rows)
    hosts = len({r.host for r in rows})
    out.print(
        f"{hosts} host(s), {len(rows)} device(s): "
        + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        + "  (worst first; each device's newest run)"
    )
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("host", overflow="fold")
    table.add_column("device", overflow="fold")
    table.add_column("worst", no_wrap=True)
    table.add_column("findings", overflow="fold")
    table.add_column("seq read MB/s", justify="right", no_wrap=True)
    table.add_column("ceiling MB/s", justify="right", no_wrap=True)
    table.add_column("run", justify="right", no_wrap=True)
    table.add_column("when", no_wrap=True)
    for r in rows:
        device = r.device + (f" ({r.model})" if r.model else "")
        table.add_row(
            escape(r.host),
            escape(device),
            f"[{_STYLE[r.worst]}]{_MARK[r.worst]}[/]",
            escape(", ".join(r.codes) or "—"),
            _mbps(r.seq_read_mbps),
            _mbps(r.ceiling_mbps),
            f"#{r.run_id}",
            r.started_at[:16].replace("T", " "),
        )
    out.print(table)
