"""Human output for a terminal. rich is imported lazily so --json and --version stay fast.

rich drops colour when stdout is not a TTY and honours NO_COLOR.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from disksleuth.model import Device, Finding, LinkChain, PcieHop, SataHop, UsbHop
from disksleuth.units import fmt_bytes, fmt_mbps

if TYPE_CHECKING:
    from rich.console import Console

    from disksleuth.analysis.pci import LinkStatus

SEVERITY_STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "critical": "bold red"}
SEVERITY_MARK = {"ok": "✓", "info": "i", "warn": "!", "critical": "✖"}


@lru_cache(maxsize=1)
def console() -> Console:
    import os
    import sys

    from rich.console import Console

    # Off a terminal rich assumes 80 columns and truncates tables; a pipe or file gets wider lines
    # unless COLUMNS says otherwise.
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(highlight=False, soft_wrap=False, width=width)


def fmt_num(v: float | None, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if v is not None else "—"


def hop_where(hop: object) -> str:
    if isinstance(hop, PcieHop):
        return f"{hop.name} ← {hop.port}" if hop.port else hop.name
    if isinstance(hop, UsbHop):
        return f"usb {hop.name}" + (f" {hop.product}" if hop.product else "")
    if isinstance(hop, SataHop):
        return f"{hop.port}/{hop.name}"
    return getattr(hop, "name", "?")


def render_chain(chain: LinkChain, indent: str = "  ") -> None:
    out = console()
    if not chain.hops:
        out.print(f"{indent}[dim]link: none found[/dim]")
        return
    for c in chain.hops:
        capable = ""
        if c.capable_label and c.capable_label != c.label:
            capable = f"  [dim](capable: {c.capable_label}, {fmt_mbps(c.capable_mbps)})[/dim]"
        enc = f" [dim](encoded {fmt_mbps(c.encoded_mbps)})[/dim]" if c.encoded_mbps else ""
        ceiling = f"~{fmt_mbps(c.current_mbps)}" if c.current_mbps is not None else "no ceiling"
        out.print(f"{indent}{hop_where(c.hop):<34} {c.label:<28} {ceiling}{enc}{capable}")
    if chain.current_ceiling_mbps is not None:
        out.print(
            f"{indent}[bold]ceiling now {fmt_mbps(chain.current_ceiling_mbps)}[/bold], "
            f"capable {fmt_mbps(chain.capable_ceiling_mbps)}"
            + (f" — set by {chain.bottleneck.label}" if chain.bottleneck else "")
        )


def render_findings(findings: Iterable[Finding], indent: str = "  ") -> None:
    from rich.padding import Padding
    from rich.text import Text

    out = console()
    pad = len(indent)
    for f in findings:
        style = SEVERITY_STYLE.get(f.severity, "")
        mark = SEVERITY_MARK.get(f.severity, "?")
        out.print(f"{indent}[{style}]{mark} {f.severity} · {f.code}[/{style}]")
        out.print(Padding(Text(f.message), (0, 0, 0, pad + 4), expand=False))
        if f.hint:
            out.print(Padding(Text.assemble(("fix: ", "bold"), f.hint), (0, 0, 0, pad + 4), expand=False))


def render_devices(rows: list[tuple[Device, LinkChain, list[Finding]]], show_partitions: bool) -> None:
    from rich.table import Table

    out = console()
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col in ("device", "transport", "size", "model", "sectors", "sched", "link now", "ceiling", "capable"):
        table.add_column(col, justify="right" if col in ("size", "ceiling", "capable") else "left")
    for dev, chain, _ in rows:
        if chain.bottleneck:
            bottleneck = chain.bottleneck.label
        elif any(c.hop.kind == "virtual" for c in chain.hops):
            bottleneck = "virtual"
        else:
            bottleneck = "unknown" if chain.hops else "—"
        sectors = f"{dev.logical_block_size or '?'}/{dev.physical_block_size or '?'}"
        table.add_row(
            dev.path,
            dev.transport,
            fmt_bytes(dev.size_bytes),
            dev.model or "",
            sectors,
            dev.scheduler or "",
            bottleneck,
            fmt_mbps(chain.current_ceiling_mbps),
            fmt_mbps(chain.capable_ceiling_mbps),
        )
        if show_partitions:
            for part in dev.partitions:
                mp = ",".join(part.mountpoints) or ("[swap]" if part.swap else "")
                table.add_row(f"  └ {part.path}", "partition", fmt_bytes(part.size_bytes), mp, "", "", "", "", "")
    out.print(table)
    for dev, chain, findings in rows:
        interesting = chain.hops and not all(c.hop.kind == "virtual" for c in chain.hops)
        if not (interesting or findings or dev.notes):
            continue
        out.print(f"\n[bold]{dev.path}[/bold] {dev.model or ''}")
        if interesting:
            render_chain(chain)
        render_findings(findings)
        for note in dev.notes:
            out.print(f"  [dim]note: {note}[/dim]")


def render_links(statuses: list[LinkStatus]) -> None:
    from rich.table import Table

    out = console()
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col in ("function", "kind", "role", "driver", "negotiated", "capable", "MB/s now", "MB/s capable", "flag"):
        table.add_column(col, justify="right" if col.startswith("MB/s") else "left")
    for s in statuses:
        if s.current is None:
            continue
        flag = ""
        if s.downgraded:
            flag = "[yellow]DOWNGRADED[/yellow]"
        elif s.port_limited:
            flag = "[cyan]port-limited[/cyan]"
        table.add_row(
            s.fn.bdf,
            s.kind,
            s.fn.role.replace("_", " "),
            s.fn.driver or "",
            s.current or "",
            s.capable or "",
            fmt_num(s.current_mbps),
            fmt_num(s.capable_mbps),
            flag,
        )
    no_link = [s.fn.bdf for s in statuses if s.current is None]
    if table.row_count:
        out.print(table)
    else:
        out.print("No PCIe links found.")
    if no_link:
        out.print(
            f"[dim]{len(no_link)} function(s) without a PCIe link (conventional PCI or virtual): "
            f"{', '.join(no_link)}[/dim]"
        )
