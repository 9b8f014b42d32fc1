"""Human output for a terminal. rich is imported lazily so --json and --version stay fast.

rich drops colour when stdout is not a TTY and honours NO_COLOR.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, TYPE_CHECKING, cast

from disksleuth.model import Device, Finding, LinkChain, PcieHop, SataHop, UsbHop
from disksleuth.units import fmt_bytes, fmt_mbps

if TYPE_CHECKING:
    from rich.console import Console, JustifyMethod

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


def has_control_chars(value: str) -> bool:
    """Does the text hold a character safe_text would show as an escape?"""
    return _CONTROL_RE.search(value) is not None


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


_settings: dict[str, object] = {"no_color": False, "stdout_isatty": None, "columns": None}


def configure(no_color: bool = False, *, stdout_isatty: bool | None = None, columns: str | None = None) -> None:
    """Per invocation (main() may run many times in one process): --no-color, whether stdout is a terminal
    and COLUMNS, as the CLI's environment says (None: ask the process), and a fresh console."""
    _settings.update(no_color=no_color, stdout_isatty=stdout_isatty, columns=columns)
    console.cache_clear()


class _TrimmedLines:
    """A file for rich off a terminal: table padding leaves trailing spaces that diff, grep and
    copy-paste trip over. Writes whole lines with their trailing blanks removed, to whatever
    sys.stdout is at the time (pytest swaps it)."""

    def __init__(self) -> None:
        self._pending = ""

    def write(self, text: str) -> int:
        import sys

        *lines, self._pending = (self._pending + text).split("\n")
        if lines:
            sys.stdout.write("".join(line.rstrip() + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        import sys

        if self._pending:
            sys.stdout.write(self._pending.rstrip())
            self._pending = ""
        sys.stdout.flush()

    def isatty(self) -> bool:
        return False


def terminal_width() -> int:
    return console().width


@lru_cache(maxsize=1)
def console() -> Console:
    import os
    import sys

    from rich.console import Console

    no_color = bool(_settings["no_color"]) or None  # None: rich decides from NO_COLOR
    isatty = _settings["stdout_isatty"]
    if sys.stdout.isatty() if isatty is None else isatty:
        return Console(highlight=False, soft_wrap=False, no_color=no_color)
    # Off a terminal rich assumes 80 columns and truncates tables; a pipe or file gets wider lines
    # unless COLUMNS says otherwise.
    columns = str(_settings["columns"] if _settings["columns"] is not None else os.environ.get("COLUMNS", ""))
    width = int(columns) if columns.isdigit() and int(columns) > 0 else 160
    # rich only writes, flushes and asks isatty() of its file: _TrimmedLines does those three.
    file = cast("IO[str]", _TrimmedLines())
    return Console(highlight=False, soft_wrap=False, width=width, no_color=no_color, file=file)


def fmt_num(v: float | None, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if v is not None else "—"


def hop_where(hop: object) -> str:
    if isinstance(hop, PcieHop):
        where = f"{hop.name} ← {hop.port}" if hop.port else hop.name
        if hop.slot is not None:
            from disksleuth.analysis.slots import slot_name

            where += f" [{slot_name(hop.slot)}]"
        return where
    if isinstance(hop, UsbHop):
        return f"usb {hop.name}" + (f" {hop.product}" if hop.product else "")
    if isinstance(hop, SataHop):
        return f"{hop.port}/{hop.name}"
    return getattr(hop, "name", "?")


def render_card(device: Device, indent: str = "  ") -> None:
    """An SD card's or eMMC's claims in one line (issue 39): maker, product, version, classes, date."""
    if device.card_registers is None:
        return
    from disksleuth.analysis.card_claims import card_of
    from disksleuth.analysis.card_registers import card_summary

    card = card_of(device)
    if card is not None and (summary := card_summary(card)):
        console().print(f"{indent}card: {safe_text(summary)}")


def render_chain(chain: LinkChain, indent: str = "  ") -> None:
    from disksleuth.analysis.aer import hop_aer_lines

    out = console()
    if not chain.hops:
        out.print(f"{indent}[dim]link: none found[/dim]")
        return
    for c in chain.hops:
        capable = ""
        if c.capable_label and c.capable_label != c.label:
            capable = f"  [dim](capable: {safe_text(c.capable_label)}, {fmt_mbps(c.capable_mbps)})[/dim]"
        enc = f" [dim](encoded {fmt_mbps(c.encoded_mbps)})[/dim]" if c.encoded_mbps else ""
        ceiling = f"~{fmt_mbps(c.current_mbps)}" if c.current_mbps is not None else "no ceiling"
        out.print(f"{indent}{safe_text(f'{hop_where(c.hop):<34} {c.label:<28}')} {ceiling}{enc}{capable}")
        for line in hop_aer_lines(c.hop):  # non-zero PCIe error counters: shown, not warned (issue 36)
            out.print(f"{indent}  {safe_text(line)}")
    for lim in chain.limits or ():  # cgroup I/O limits the run is under (issue 36): hops of the path too
        where = f"cgroup {lim.hop.cgroup}"
        cap = f"~{fmt_mbps(lim.current_mbps)}" if lim.current_mbps is not None else "(an IOPS limit)"
        out.print(f"{indent}{safe_text(f'{where:<34} {lim.label:<28}')} {cap}")
        out.print(f"{indent}{' ' * 35}[dim]{safe_text(lim.fact or '')}[/dim]")
    if chain.current_ceiling_mbps is not None:
        capable_mbps = chain.capable_ceiling_mbps
        out.print(
            f"{indent}[bold]ceiling now {fmt_mbps(chain.current_ceiling_mbps)}[/bold]"
            + (f", capable {fmt_mbps(capable_mbps)}" if capable_mbps is not None or not chain.limits else "")
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
# (header, justify, drop rank): on a narrow terminal the lowest rank is left out first and rank 0
# never (print_fitted_table); device, size, the link and its ceiling always stay.
DEVICE_COLUMNS: tuple[tuple[str, JustifyMethod, int], ...] = (
    ("device", "left", 0),
    ("transport", "left", 8),
    ("size", "right", 0),
    ("model", "left", 9),
    ("rota", "left", 2),
    ("log-sec", "right", 5),
    ("phy-sec", "right", 4),
    ("sched", "left", 1),
    ("fs", "left", 6),
    ("mounts", "left", 7),
    ("link now", "left", 0),
    ("ceiling", "right", 0),
    ("capable", "right", 3),
)


def render_devices(rows: list[tuple[Device, LinkChain, list[Finding]]], show_partitions: bool) -> None:
    out = console()
    cols = [Col(header, justify=justify, drop=drop) for header, justify, drop in DEVICE_COLUMNS]
    headers = [header for header, _, _ in DEVICE_COLUMNS]
    cells: list[list[str]] = []
    for dev, chain, _ in rows:
        if chain.bottleneck:
            bottleneck = chain.bottleneck.label
        elif any(c.hop.kind == "virtual" for c in chain.hops):
            bottleneck = "virtual"
        else:
            bottleneck = "unknown" if chain.hops else "—"
        row = [
            dev.path,
            dev.transport,
            fmt_bytes(dev.size_bytes),
            dev.model or "",
            _yes_no(dev.rotational),
            str(dev.logical_block_size or "?"),
            str(dev.physical_block_size or "?"),
            dev.scheduler or "",
            _fstypes(dev),
            _mounts(dev),
            bottleneck,
            fmt_mbps(chain.current_ceiling_mbps),
            fmt_mbps(chain.capable_ceiling_mbps),
        ]
        cells.append([safe_text(c, markup=False) for c in row])  # cells are Text: no markup to escape
        if show_partitions:
            for part in dev.partitions:
                mp = ",".join(part.mountpoints) or ("[SWAP]" if part.swap else "")
                named = {"device": f"  └ {part.path}", "transport": "partition", "size": fmt_bytes(part.size_bytes)}
                named.update({"fs": part.fstype or "", "mounts": mp})
                cells.append([safe_text(named.get(h, ""), markup=False) for h in headers])
    hidden = print_fitted_table(cols, cells)
    if hidden:
        out.print(f"[dim]hidden at {out.width} columns: {', '.join(hidden)} (--json has every field)[/dim]")
    for dev, chain, findings in rows:
        interesting = chain.hops and not all(c.hop.kind == "virtual" for c in chain.hops)
        if not (interesting or findings or dev.notes):
            continue
        out.print(f"\n[bold]{safe_text(dev.path)}[/bold] {safe_text(dev.model or '')}")
        if interesting:
            render_chain(chain)
        render_card(dev)
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


# pci.ids names run to 90 characters ("PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3
# (8.0 GT/s) Switch"); table cells never wrap, so the name is cut (it is text, not a figure). --json
# and the list of functions without a link carry it whole.
NAME_WIDTH = 40


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


# A word that ends in a figure: "1,243.5", "(285", "x4", "95%,".
_FIGURE_RE = re.compile(r"\d[\d,.]*%?[,;:)]*$")


def clip_words(text: str, width: int) -> str:
    """text cut to at most width characters at a word boundary, with an ellipsis when cut. A figure is
    never cut, nor left without the word after it: it stays whole or goes whole (`runs` summaries)."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    words = text.split(" ")
    kept: list[str] = []
    length = 0
    for word in words:
        extra = len(word) + (1 if kept else 0)
        if length + extra + 1 > width:  # one column for the ellipsis
            break
        kept.append(word)
        length += extra
    # A figure is never the last word left: without its unit or what it counts ("1,243.5 MB/s",
    # "44,086 read IOPS") it says nothing, so it goes with them.
    while kept and _FIGURE_RE.search(kept[-1]):
        kept.pop()
    return " ".join(kept).rstrip(",;:(") + "…"


_NAME_BREAKS = " -_./:,"  # where a name or path component may be cut: after one of these, never inside a word


def clip_name(text: str, width: int) -> str:
    """A name (a model, a host, tags) cut to at most width characters with an ellipsis, after a space,
    dash, dot or the like. Only a word longer than half the width is cut inside: nothing else could fit."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    room = width - 1  # one column for the ellipsis
    cut = max((i + 1 for i, char in enumerate(text[:room]) if char in _NAME_BREAKS), default=0)
    kept = text[:cut].rstrip() if cut >= room // 2 else text[:room]
    return kept + "…"


def clip_path(path: str, width: int) -> str:
    """A path cut to at most width characters in the middle, at directory boundaries
    ("/srv/…/library/scratch"): the file or directory at the end and the start of the path say the most.
    A last component too long even alone is cut as a name ("…/disksleuth-…")."""
    if len(path) <= width:
        return path
    parts = path.split("/")

    def joined(head: int, tail: int) -> str:
        return "/".join([*parts[:head], "…", *parts[len(parts) - tail :]])

    if len(parts) < 2 or len(joined(0, 1)) > width:
        return "…/" + clip_name(parts[-1], width - 2) if width > 3 and len(parts) > 1 else clip_name(path, width)
    head, tail = 0, 1
    prefer_head = True
    while True:
        tries = [(head + 1, tail), (head, tail + 1)]
        if not prefer_head:
            tries.reverse()
        grown = next(
            ((h, t) for h, t in tries if h + t < len(parts) and len(joined(h, t)) <= width),
            None,
        )
        if grown is None:
            return joined(head, tail)
        prefer_head = grown[0] == head  # alternate: a component from the start, then one from the end
        head, tail = grown


def _fn_slot(s: LinkStatus) -> str:
    """The slot of the function's own link (the hop whose lower end it is)."""
    from disksleuth.analysis.slots import slot_name

    for hop in s.fn.path:
        if hop.name == s.fn.bdf and hop.slot is not None:
            return slot_name(hop.slot)
    return ""


def _print_chipset_groups(statuses: list[LinkStatus]) -> None:
    """One line per chipset uplink: what shares it, and the named slots wired to the CPU instead."""
    from disksleuth.analysis.slots import chipset_summary, names_physical_slot
    from disksleuth.model import BoardPeer

    seen: set[tuple[str, str | None]] = set()
    for s in statuses:
        uplink = s.fn.chipset_uplink
        if uplink is None or (uplink.chipset, uplink.uplink_port) in seen:
            continue
        seen.add((uplink.chipset, uplink.uplink_port))
        own = next((h.slot for h in s.fn.path[:1] if h.name == s.fn.bdf), None)
        member = BoardPeer(s.fn.bdf, s.fn.class_code, own if names_physical_slot(own) else None)
        console().print(f"[blue]chipset[/blue] {safe_text(chipset_summary(uplink, member))}")


def _print_aer(statuses: list[LinkStatus]) -> None:
    """A line per function whose PCIe error counters are not zero (issue 36): shown, not warned."""
    from disksleuth.analysis.aer import function_aer_line

    for s in statuses:
        line = function_aer_line(s.fn.aer)
        if line:
            console().print(safe_text(line))


def render_links(statuses: list[LinkStatus]) -> None:
    out = console()
    # (header, justify, drop rank): the BDF, the negotiated and capable links and the flag always stay.
    columns: tuple[tuple[str, JustifyMethod, int], ...] = (
        ("function", "left", 0),
        ("name", "left", 7),
        ("kind", "left", 4),
        ("role", "left", 3),
        ("driver", "left", 2),
        ("slot", "left", 6),
        ("negotiated", "left", 0),
        ("capable", "left", 0),
        ("MB/s now", "right", 5),
        ("MB/s capable", "right", 1),
        ("flag", "left", 0),
    )
    cols = [Col(header, justify=justify, drop=drop) for header, justify, drop in columns]
    cells: list[list[str]] = []
    styles: list[str | None] = []
    for s in statuses:
        if s.current is None:
            continue
        flag = ""
        if s.downgraded:
            flag, style = "DOWNGRADED", "yellow"
        elif s.slot_limited is not None:
            flag, style = "slot-limited", "cyan"
        elif s.port_limited:
            flag, style = "port-limited", "cyan"
        row = [
            s.fn.bdf,
            _fn_name(s),
            s.kind,
            s.fn.role.replace("_", " "),
            s.fn.driver or "",
            _fn_slot(s),
            s.current or "",
            s.capable or "",
            fmt_num(s.current_mbps),
            fmt_num(s.capable_mbps),
            flag,
        ]
        cells.append([safe_text(c, markup=False) for c in row])
        styles.append(style if flag else None)
    if cells:
        # The name takes what the essential columns (and MB/s now) leave, up to NAME_WIDTH: on 80
        # columns "0000:03:00.0  Samsung Electronics Co…  PCIe 3.0 x2  PCIe 3.0 x4  DOWNGRADED".
        essential = [0, 6, 7, 8, 10]
        used = sum(max(len(columns[i][0]), *(len(row[i]) for row in cells)) for i in essential)
        room = min(NAME_WIDTH, out.width - used - 2 * len(essential))
        for row in cells:
            row[1] = _clip(row[1], max(room, 12))
        hidden = print_fitted_table(cols, cells, row_styles=styles)
        if hidden:
            out.print(f"[dim]hidden at {out.width} columns: {', '.join(hidden)} (--json has every field)[/dim]")
        for s in statuses:  # what limits the path: the row alone shows only the function's own link
            if s.slot_limited is not None and not s.downgraded:
                first = s.slot_limited.message.split(". ")[0].rstrip(".")  # the why; `list` adds the fact and fix
                out.print(f"[cyan]slot-limited[/cyan] {s.fn.bdf}: {safe_text(first)}.")
        _print_aer(statuses)
        _print_chipset_groups(statuses)
    else:
        out.print("No PCIe links found.")
    no_link = [
        safe_text(s.fn.bdf + (f" ({_fn_name(s)})" if s.fn.vendor_name else ""))
        for s in statuses
        if s.current is None
    ]
    if no_link:
        out.print(
            f"[dim]{len(no_link)} function(s) without a PCIe link (conventional PCI or virtual):\n  "
            + "\n  ".join(no_link)
            + "[/dim]"
        )
    if statuses and not any(s.fn.vendor_name for s in statuses):
        out.print("[dim]No pci.ids found: install pciutils (or hwdata) to see vendor and device names.[/dim]")


# --- tables that fit the terminal --------------------------------------------------------------
#
# A number is never cut. A table wider than the terminal first drops its optional columns, lowest
# `drop` rank first (the caller states the order: latency columns first), then, if it still does
# not fit, is printed stacked: one block per row, "header value" pairs flowed within the width.
# Headers may wrap between words; cells never wrap.

_GAP = 2  # box=None, padding (0, 1), pad_edge=False: two spaces between columns


@dataclass(frozen=True)
class Col:
    header: str
    justify: JustifyMethod = "right"
    drop: int = 0  # 0: always kept; otherwise dropped in increasing order when the table is too wide


def _min_width(col: Col, cells: list[str]) -> int:
    from rich.cells import cell_len

    words = [cell_len(w) for w in col.header.split()] or [0]
    return max([max(words), *(cell_len(c) for c in cells)])


def _full_width(col: Col, cells: list[str]) -> int:
    from rich.cells import cell_len

    return max([cell_len(col.header), *(cell_len(c) for c in cells)])


def fit_columns(cols: list[Col], rows: list[list[str]], width: int) -> tuple[list[int], list[int]] | None:
    """(indices of the columns kept, their widths), or None when even the essential columns do not fit."""
    keep = list(range(len(cols)))
    droppable = sorted((i for i, c in enumerate(cols) if c.drop), key=lambda i: cols[i].drop)

    def column_cells(i: int) -> list[str]:
        return [row[i] for row in rows]

    while True:
        mins = [_min_width(cols[i], column_cells(i)) for i in keep]
        if sum(mins) + _GAP * (len(keep) - 1) <= width:
            break
        if not droppable:
            return None
        keep.remove(droppable.pop(0))
    # Spare room goes to headers that would otherwise wrap, the cheapest first: as few wrapped
    # headers as possible.
    spare = width - sum(mins) - _GAP * (len(keep) - 1)
    widths = dict(zip(keep, mins, strict=True))
    for i in sorted(keep, key=lambda i: _full_width(cols[i], column_cells(i)) - widths[i]):
        extra = min(spare, _full_width(cols[i], column_cells(i)) - widths[i])
        spare -= extra
        widths[i] += extra
    return keep, [widths[i] for i in keep]


def print_fitted_table(
    cols: list[Col], rows: list[list[str]], key_cols: int = 1, row_styles: list[str | None] | None = None
) -> list[str]:
    """Print rows (plain strings, no markup) as a table that fits the console; returns the headers
    of the columns left out. key_cols=2 (compare): the first cell is a group name, printed once per
    group, and the second names the row. A row left with nothing but its name once columns are
    dropped (a latency detail line) is left out too."""
    from rich.table import Table
    from rich.text import Text

    out = console()
    fitted = fit_columns(cols, rows, out.width)
    if fitted is None:
        _print_stacked(cols, rows, key_cols)
        return []
    keep, widths = fitted
    table = Table(box=None, header_style="bold", pad_edge=False, show_edge=False)
    for i, w in zip(keep, widths, strict=True):
        table.add_column(Text(cols[i].header), justify=cols[i].justify, width=w)  # a run's tag "[before]" is no markup
    previous = None
    for n, row in enumerate(rows):
        cells = [row[i] for i in keep]
        if not any(cells[1:]):
            continue
        if key_cols == 2:
            shown = "" if row[0] == previous else row[0]
            previous = row[0]
            cells[0] = shown
        table.add_row(*(Text(c, no_wrap=True) for c in cells), style=row_styles[n] if row_styles else None)
    out.print(table)
    return [cols[i].header for i in range(len(cols)) if i not in keep]


def _print_stacked(cols: list[Col], rows: list[list[str]], key_cols: int) -> None:
    """Too narrow for any table: the first cell as a heading, then "header value" pairs."""
    from rich.cells import cell_len
    from rich.text import Text

    out = console()
    indent = "  "
    previous = None
    for row in rows:
        if row[0] != previous:
            out.print(Text(row[0], style="bold"), no_wrap=True, overflow="ignore")
            previous = row[0]
        pairs = zip(cols[key_cols:], row[key_cols:], strict=True)
        items = [f"{c.header} {v}" for c, v in pairs if v not in ("", "—")]
        line = row[1] + ":" if key_cols == 2 else ""
        lead = indent
        for item in items:
            candidate = f"{line}   {item}" if line else item
            if line and cell_len(lead + candidate) > out.width:
                out.print(Text(lead + line))
                lead, candidate = indent * 2, item  # continuation lines sit deeper
            line = candidate
        if line:
            out.print(Text(lead + line))
