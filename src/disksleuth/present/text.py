"""Human output for a terminal. rich is imported lazily so --json and --version stay fast.

rich drops colour when stdout is not a TTY and honours NO_COLOR.
"""

from __future__ import annotations

import re
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


# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts ANSI and OSC
# sequences, 0x9b is a one-byte CSI), DEL, and the invisible or direction-changing format characters
# (zero-width, bidi embeddings, overrides and isolates, BOM) that make text read differently.
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\t\n\r":
        return " "
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: object, markup: bool = True) -> str:
    """Text from outside (a tag, a note, a target, a model or serial from sysfs or smartctl, an
    imported document, a message from fio) made safe to show: control characters become visible
    escapes (\\x1b) so no escape sequence reaches the terminal, and, for strings printed as Rich
    markup (console.print of an f-string, table cells), square brackets are escaped so "[/]" or
    "[link=...]" prints as itself. Use markup=False for rich.text.Text, which takes no markup."""
    text = _CONTROL_RE.sub(_visible, "" if value is None else str(value))
    if not markup:
        return text
    from rich.markup import escape

    return escape(text)


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
        out.print(f"{indent}{safe_text(f'{hop_where(c.hop):<34} {c.label:<28}')} {ceiling}{enc}{capable}")
    if chain.current_ceiling_mbps is not None:
        out.print(
            f"{indent}[bold]ceiling now {fmt_mbps(chain.current_ceiling_mbps)}[/bold], "
            f"capable {fmt_mbps(chain.capable_ceiling_mbps)}"
            + (f" — set by {safe_text(chain.bottleneck.label)}" if chain.bottleneck else "")
        )


def render_findings(findings: Iterable[Finding], indent: str = "  ") -> None:
    from rich.padding import Padding
    from rich.text import Text

    out = console()
    pad = len(indent)
    for f in findings:
        style = SEVERITY_STYLE.get(f.severity, "")
        mark = SEVERITY_MARK.get(f.severity, "?")
        out.print(f"{indent}[{style}]{mark} {f.severity} · {safe_text(f.code)}[/{style}]")
        out.print(Padding(Text(safe_text(f.message, markup=False)), (0, 0, 0, pad + 4), expand=False))
        if f.hint:
            hint = safe_text(f.hint, markup=False)
            out.print(Padding(Text.assemble(("fix: ", "bold"), hint), (0, 0, 0, pad + 4), expand=False))


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
            safe_text(dev.path),
            dev.transport,
            fmt_bytes(dev.size_bytes),
            safe_text(dev.model or ""),
            sectors,
            safe_text(dev.scheduler or ""),
            safe_text(bottleneck),
            fmt_mbps(chain.current_ceiling_mbps),
            fmt_mbps(chain.capable_ceiling_mbps),
        )
        if show_partitions:
            for part in dev.partitions:
                mp = safe_text(",".join(part.mountpoints) or ("[swap]" if part.swap else ""))
                row = (f"  └ {safe_text(part.path)}", "partition", fmt_bytes(part.size_bytes), mp)
                table.add_row(*row, "", "", "", "", "")
    out.print(table)
    for dev, chain, findings in rows:
        interesting = chain.hops and not all(c.hop.kind == "virtual" for c in chain.hops)
        if not (interesting or findings or dev.notes):
            continue
        out.print(f"\n[bold]{safe_text(dev.path)}[/bold] {safe_text(dev.model or '')}")
        if interesting:
            render_chain(chain)
        render_findings(findings)
        for note in dev.notes:
            out.print(f"  [dim]note: {safe_text(note)}[/dim]")


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
            safe_text(s.fn.bdf),
            s.kind,
            s.fn.role.replace("_", " "),
            safe_text(s.fn.driver or ""),
            safe_text(s.current or ""),
            safe_text(s.capable or ""),
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
            f"{safe_text(', '.join(no_link))}[/dim]"
        )
