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


def _yes_no(v: bool | None) -> str:
    return "?" if v is None else ("yes" if v else "no")


def _mounts(dev: Device) -> str:
    mps = list(dev.all_mountpoints())
    if dev.swap or any(p.swap for p in dev.partitions):
        mps.append("[SWAP]")
    return ", ".join(mps)


def _fstypes(dev: Device) -> str:
    return ",".join(dict.fromkeys(d.fstype for d in (dev, *dev.partitions) if d.fstype))


# Column headers as lsblk names them (LOG-SEC, PHY-SEC, ROTA), so the sector sizes say which is which.
DEVICE_COLUMNS = (
    "device",
    "transport",
    "size",
    "model",
    "rota",
    "log-sec",
    "phy-sec",
    "sched",
    "fs",
    "mounts",
    "link now",
    "ceiling",
    "capable",
)


def render_devices(rows: list[tuple[Device, LinkChain, list[Finding]]], show_partitions: bool) -> None:
    from rich.table import Table

    out = console()
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col in DEVICE_COLUMNS:
        numeric = col in ("size", "log-sec", "phy-sec", "ceiling", "capable")
        # Numbers and the link label never wrap; model and mount points fold when space runs out.
        table.add_column(col, justify="right" if numeric else "left", no_wrap=numeric or col == "link now")
    for dev, chain, _ in rows:
        if chain.bottleneck:
            bottleneck = chain.bottleneck.label
        elif any(c.hop.kind == "virtual" for c in chain.hops):
            bottleneck = "virtual"
        else:
            bottleneck = "unknown" if chain.hops else "—"
        table.add_row(
            safe_text(dev.path),
            dev.transport,
            fmt_bytes(dev.size_bytes),
            safe_text(dev.model or ""),
            _yes_no(dev.rotational),
            str(dev.logical_block_size or "?"),
            str(dev.physical_block_size or "?"),
            safe_text(dev.scheduler or ""),
            safe_text(_fstypes(dev)),
            safe_text(_mounts(dev)),
            safe_text(bottleneck),
            fmt_mbps(chain.current_ceiling_mbps),
            fmt_mbps(chain.capable_ceiling_mbps),
        )
        if show_partitions:
            for part in dev.partitions:
                mp = safe_text(",".join(part.mountpoints) or ("[SWAP]" if part.swap else ""))
                cells = {"device": f"  └ {safe_text(part.path)}", "transport": "partition"}
                cells.update({"size": fmt_bytes(part.size_bytes), "fs": safe_text(part.fstype or ""), "mounts": mp})
                table.add_row(*(cells.get(col, "") for col in DEVICE_COLUMNS))
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


def pci_display_name(vendor_name: str | None, device_name: str | None, vendor_device: str | None) -> str:
    """As lspci prints it: "Samsung Electronics Co Ltd NVMe SSD Controller SM981/PM981/PM983", or
    "Intel Corporation Device 0d57" when pci.ids knows the vendor only."""
    if vendor_name is None:
        return vendor_device or ""
    device = device_name or f"Device {(vendor_device or '').partition(':')[2]}"
    return f"{vendor_name} {device}".strip()


def _fn_name(s: LinkStatus) -> str:
    return pci_display_name(s.fn.vendor_name, s.fn.device_name, s.fn.vendor_device)


def render_links(statuses: list[LinkStatus]) -> None:
    from rich.table import Table

    out = console()
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    columns = ("function", "name", "kind", "role", "driver", "negotiated", "capable")
    for col in (*columns, "MB/s now", "MB/s capable", "flag"):
        # Only the name folds (pci.ids names run to 80 characters); figures and labels stay whole.
        table.add_column(col, justify="right" if col.startswith("MB/s") else "left", no_wrap=col != "name")
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
            safe_text(_fn_name(s)),
            s.kind,
            s.fn.role.replace("_", " "),
            safe_text(s.fn.driver or ""),
            safe_text(s.current or ""),
            safe_text(s.capable or ""),
            fmt_num(s.current_mbps),
            fmt_num(s.capable_mbps),
            flag,
        )
    no_link = [
        safe_text(s.fn.bdf + (f" ({_fn_name(s)})" if s.fn.vendor_name else ""))
        for s in statuses
        if s.current is None
    ]
    if table.row_count:
        out.print(table)
    else:
        out.print("No PCIe links found.")
    if no_link:
        out.print(
            f"[dim]{len(no_link)} function(s) without a PCIe link (conventional PCI or virtual):\n  "
            + "\n  ".join(no_link)
            + "[/dim]"
        )
    if statuses and not any(s.fn.vendor_name for s in statuses):
        out.print("[dim]No pci.ids found: install pciutils (or hwdata) to see vendor and device names.[/dim]")
