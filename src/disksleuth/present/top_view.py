"""`top` on a terminal: devices, processes, pressure, memory and temperatures, then the findings, in 80 columns.
It only draws a TopReport; the live view redraws it in place each refresh (rich Live, no refresh thread)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from disksleuth.model.top import DeviceRate, TopReport

# Annotations only: rich is imported when something is drawn.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.text import Text

WIDTH = 80
NAME_WIDTH = 9  # nvme0n1p3
MAX_PROCESS_ROWS = 10
UTIL_WARN_PCT = 90.0
SEVERITY_STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "critical": "bold red"}
SEVERITY_MARK = {"ok": "✓", "info": "i", "warn": "!", "critical": "✖"}


@dataclass(frozen=True)
class Column:
    header: str
    width: int
    cell: Callable[..., str]
    drop: int = 0  # on a narrower terminal, columns go in this order (1 first); 0: never
    left: bool = False


def _num(value: float | None, width: int, digits: int = 1) -> str:
    """A figure that fits its column: decimals while they fit, then whole, then thousands ('12k')."""
    if value is None:
        return "—".rjust(width)
    for text in (f"{value:.{digits}f}", f"{value:.0f}", f"{value / 1000:.0f}k", f"{value / 1e6:.0f}M"):
        if len(text) <= width:
            return text.rjust(width)
    return "#" * width


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _safe(text: str | None) -> str:
    from disksleuth.present.text import safe_text

    return safe_text(text or "", markup=False)


# One space between columns: 79 columns in all at 80; at 60 the request size, link share and counts go first.
DEVICE_COLUMNS = (
    Column("DEVICE", NAME_WIDTH, lambda d: _clip(d.name, NAME_WIDTH).ljust(NAME_WIDTH), left=True),
    Column("r/s", 5, lambda d: _num(d.reads_per_s, 5, 0), drop=3),
    Column("w/s", 5, lambda d: _num(d.writes_per_s, 5, 0), drop=4),
    Column("rMB/s", 7, lambda d: _num(d.read_mbps, 7)),
    Column("wMB/s", 7, lambda d: _num(d.write_mbps, 7)),
    Column("r_await", 7, lambda d: _num(d.r_await_ms, 7)),
    Column("w_await", 7, lambda d: _num(d.w_await_ms, 7)),
    Column("aqu-sz", 6, lambda d: _num(d.queue_size, 6, 2)),
    Column("%util", 5, lambda d: _num(d.util_pct, 5, 0)),
    Column("reqKB", 6, lambda d: _num(d.avg_request_kb, 6), drop=2),
    Column("link%", 5, lambda d: _num(d.link_share_pct, 5, 0), drop=1),
)
PROCESS_COLUMNS = (
    Column("PID", 7, lambda p: str(p.pid).rjust(7)),
    Column("COMMAND", 15, lambda p: _clip(_safe(p.comm), 15).ljust(15), left=True),
    Column("rMB/s", 7, lambda p: _num(p.read_mbps, 7, 2)),
    Column("wMB/s", 7, lambda p: _num(p.write_mbps, 7, 2)),
    Column("delay%", 6, lambda p: _num(p.blkio_delay_pct, 6, 0), drop=2),
    Column("S", 1, lambda p: _clip(p.state, 1), left=True),
    Column("WAITS IN", 24, lambda p: _clip(_safe(p.wchan), 24), drop=1, left=True),
)


def fit(columns: Sequence[Column], width: int) -> list[Column]:
    """The columns that fit `width`, dropping the droppable ones in their order."""
    kept = list(columns)
    for rank in sorted({c.drop for c in columns if c.drop}):
        if sum(c.width for c in kept) + len(kept) - 1 <= width:
            break
        kept = [c for c in kept if c.drop != rank]
    return kept


def _header(columns: Sequence[Column]) -> str:
    return " ".join(c.header.ljust(c.width) if c.left else c.header.rjust(c.width) for c in columns).rstrip()


def _line(columns: Sequence[Column], row: object) -> str:
    return " ".join(c.cell(row) for c in columns).rstrip()


def _pct(value: float | None) -> str:
    return f"{value:.0f}%" if value is not None else "—"


def _active(d: DeviceRate) -> bool:
    return d.requests_per_s > 0 or d.util_pct > 0 or d.in_flight > 0


def render(
    report: TopReport, *, width: int = WIDTH, clock: str | None = None, all_devices: bool = False
) -> RenderableType:
    """The whole view as one rich renderable for a terminal `width` columns wide (80 fits every column). `all_devices`:
    idle devices too (--device asked for them)."""
    from rich.console import Group
    from rich.text import Text

    from disksleuth.present.text import safe_text

    parts: list[RenderableType] = []
    title = Text("disksleuth top", style="bold")
    title.append(f" · {report.interval_s:.1f} s sample" + (f" · {clock}" if clock else ""), style="dim")
    parts.append(title)

    devices = [d for d in report.devices if all_devices or _active(d)]
    device_columns = fit(DEVICE_COLUMNS, width - 1)
    table = Text(_header(device_columns) + "\n", style="bold")
    for d in devices:
        style = "yellow" if d.util_pct >= UTIL_WARN_PCT else ""
        table.append(_line(device_columns, d) + "\n", style=style)
    idle = len(report.devices) - len(devices)
    if idle:
        table.append(f"{idle} idle device{'s' if idle != 1 else ''} not shown\n", style="dim")
    if not report.devices:
        table.append("no device figures\n", style="dim")
    parts.append(table)

    process_columns = fit(PROCESS_COLUMNS, width - 1)
    if report.delayacct is False:  # not counted: 'off', not a dash that reads as "none"
        process_columns = [replace(c, cell=lambda _p: "off".rjust(6)) if c.header == "delay%" else c
                           for c in process_columns]  # fmt: skip
    procs = Text(_header(process_columns) + "\n", style="bold")
    for p in report.processes[:MAX_PROCESS_ROWS]:
        procs.append(_line(process_columns, p) + "\n", style="yellow" if p.state == "D" else "")
    more = len(report.processes) - MAX_PROCESS_ROWS
    counts = [f"{report.processes_seen} processes"]
    if more > 0:
        counts.append(f"{more} more with I/O not shown")
    if report.processes_exited:
        counts.append(f"{report.processes_exited} exited")
    if report.processes_unreadable:
        counts.append(f"{report.processes_unreadable} unreadable")
    procs.append(", ".join(counts) + "\n", style="dim")
    parts.append(procs)

    parts.append(_system_lines(report))

    for f in report.findings:
        style = SEVERITY_STYLE.get(f.severity, "")
        where = f" ({safe_text(f.device, markup=False)})" if f.device else ""
        line = Text(f"{SEVERITY_MARK.get(f.severity, '?')} {f.severity} · {f.code}{where}", style=style)
        line.append("\n  " + safe_text(f.message, markup=False), style="")
        if f.hint:
            line.append("\n  fix: ", style="bold")
            line.append(safe_text(f.hint, markup=False))
        parts.append(line)
    for note in report.notes:
        parts.append(Text("note: " + safe_text(note, markup=False), style="dim"))
    return Group(*parts)


def _system_lines(report: TopReport) -> Text:
    from rich.text import Text

    pr = report.pressure
    text = Text()
    text.append("pressure ", style="bold")
    text.append(
        f"io some {_pct(pr.io_some_pct)} full {_pct(pr.io_full_pct)} · "
        f"memory some {_pct(pr.memory_some_pct)} full {_pct(pr.memory_full_pct)}\n"
    )
    mem = report.memory
    text.append("memory   ", style="bold")
    if mem is None:
        text.append("—\n")
    else:
        swap = (
            f"swap in {mem.swap_in_pages_per_s:,.0f} out {mem.swap_out_pages_per_s:,.0f} pages/s"
            if mem.swap_in_pages_per_s is not None and mem.swap_out_pages_per_s is not None
            else "swap —"
        )
        used = f" ({mem.swap_used_mb:,.0f} MB used)" if mem.swap_used_mb else ""
        dirty = f"{mem.dirty_mb:,.0f} MB" if mem.dirty_mb is not None else "—"
        wb = f"{mem.writeback_mb:,.0f} MB" if mem.writeback_mb is not None else "—"
        text.append(f"{swap}{used} · dirty {dirty} · writeback {wb}\n")
    if report.temperatures:
        text.append("temps    ", style="bold")
        temps = []
        for t in report.temperatures:
            limit = f" (warn {t.warn_c:g})" if t.warn_c is not None else ""
            temps.append(f"{t.device} {t.temp_c:g} °C{limit}")
        text.append(" · ".join(temps) + "\n")
    return text


def to_text(report: TopReport, width: int = WIDTH, *, all_devices: bool = False) -> str:
    """The view as plain text at `width` columns (tests, and --once off a terminal)."""
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, no_color=True, highlight=False, soft_wrap=False).print(
        render(report, width=width, all_devices=all_devices)
    )
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def print_report(report: TopReport, *, all_devices: bool = False) -> None:
    """--once: the view once, on stdout."""
    from disksleuth.present.text import console

    out = console()
    out.print(render(report, width=out.width, all_devices=all_devices))


class LiveView:
    """The view redrawn in place at each report (on a terminal); off a terminal each report is printed in turn,
    as `top -b` does."""

    def __init__(self, *, all_devices: bool = False, console: Console | None = None):
        from disksleuth.present.text import console as default_console

        self.console = console or default_console()
        self.all_devices = all_devices
        self._live: Live | None = None

    def __enter__(self) -> LiveView:
        if self.console.is_terminal:
            from rich.live import Live

            placeholder: Text | str = "disksleuth top: first sample…"
            # No refresh thread: a redraw happens only when a report arrives (each interval), which keeps top cheap.
            self._live = Live(placeholder, console=self.console, auto_refresh=False, transient=False)
            self._live.__enter__()
        return self

    def update(self, report: TopReport) -> None:
        view = render(report, width=self.console.width, clock=time.strftime("%H:%M:%S"), all_devices=self.all_devices)
        if self._live is not None:
            self._live.update(view, refresh=True)
        else:
            self.console.print(view)
            self.console.print()

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None
