"""`top` on a terminal: devices, processes, pressure, memory and temperatures, then the findings, in 80 columns.
It only draws a TopReport; the live view redraws it in place each refresh (rich Live, no refresh thread)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from disksleuth.model.top import DeviceRate, ProcessRate, TopReport

# Annotations only: rich is imported when something is drawn.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.text import Text

WIDTH = 80
NAME_WIDTH = 9  # nvme0n1p3
MAX_PROCESS_ROWS = 10
# (header, width) of the device table; one space between columns: 79 columns in all.
DEVICE_COLUMNS = (
    ("DEVICE", NAME_WIDTH), ("r/s", 5), ("w/s", 5), ("rMB/s", 7), ("wMB/s", 7), ("r_await", 7), ("w_await", 7),
    ("aqu-sz", 6), ("%util", 5), ("reqKB", 6), ("link%", 5),
)  # fmt: skip
PROCESS_COLUMNS = (("PID", 7), ("COMMAND", 15), ("rMB/s", 7), ("wMB/s", 7), ("delay%", 6), ("S", 1), ("WAITS IN", 24))
UTIL_WARN_PCT = 90.0
SEVERITY_STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "critical": "bold red"}
SEVERITY_MARK = {"ok": "✓", "info": "i", "warn": "!", "critical": "✖"}


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


def _header(columns: Iterable[tuple[str, int]]) -> str:
    cells = []
    for i, (name, width) in enumerate(columns):
        cells.append(name.ljust(width) if i == 0 or name in ("COMMAND", "S", "WAITS IN") else name.rjust(width))
    return " ".join(cells).rstrip()


def _device_line(d: DeviceRate) -> str:
    cells = [
        _clip(d.name, NAME_WIDTH).ljust(NAME_WIDTH),
        _num(d.reads_per_s, 5, 0),
        _num(d.writes_per_s, 5, 0),
        _num(d.read_mbps, 7),
        _num(d.write_mbps, 7),
        _num(d.r_await_ms, 7),
        _num(d.w_await_ms, 7),
        _num(d.queue_size, 6, 2),
        _num(d.util_pct, 5, 0),
        _num(d.avg_request_kb, 6),
        _num(d.link_share_pct, 5, 0),
    ]
    return " ".join(cells)


def _process_line(p: ProcessRate, delay_known: bool) -> str:
    from disksleuth.present.text import safe_text

    delay = _num(p.blkio_delay_pct, 6, 0) if delay_known else "off".rjust(6)
    cells = [
        str(p.pid).rjust(7),
        _clip(safe_text(p.comm, markup=False), 15).ljust(15),
        _num(p.read_mbps, 7, 2),
        _num(p.write_mbps, 7, 2),
        delay,
        _clip(p.state, 1),
        _clip(safe_text(p.wchan or "", markup=False), 24),
    ]
    return " ".join(cells).rstrip()


def _pct(value: float | None) -> str:
    return f"{value:.0f}%" if value is not None else "—"


def _active(d: DeviceRate) -> bool:
    return d.requests_per_s > 0 or d.util_pct > 0 or d.in_flight > 0


def render(report: TopReport, *, clock: str | None = None, all_devices: bool = False) -> RenderableType:
    """The whole view as one rich renderable. `all_devices`: idle devices too (--device asked for them)."""
    from rich.console import Group
    from rich.text import Text

    from disksleuth.present.text import safe_text

    parts: list[RenderableType] = []
    title = Text("disksleuth top", style="bold")
    title.append(f" · {report.interval_s:.1f} s sample" + (f" · {clock}" if clock else ""), style="dim")
    parts.append(title)

    devices = [d for d in report.devices if all_devices or _active(d)]
    table = Text(_header(DEVICE_COLUMNS) + "\n", style="bold")
    for d in devices:
        style = "yellow" if d.util_pct >= UTIL_WARN_PCT else ""
        table.append(_device_line(d) + "\n", style=style)
    idle = len(report.devices) - len(devices)
    if idle:
        table.append(f"{idle} idle device{'s' if idle != 1 else ''} not shown\n", style="dim")
    if not report.devices:
        table.append("no device figures\n", style="dim")
    parts.append(table)

    delay_known = report.delayacct is not False
    procs = Text(_header(PROCESS_COLUMNS) + "\n", style="bold")
    for p in report.processes[:MAX_PROCESS_ROWS]:
        procs.append(_process_line(p, delay_known) + "\n", style="yellow" if p.state == "D" else "")
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
        render(report, all_devices=all_devices)
    )
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def print_report(report: TopReport, *, all_devices: bool = False) -> None:
    """--once: the view once, on stdout."""
    from disksleuth.present.text import console

    console().print(render(report, all_devices=all_devices))


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
        view = render(report, clock=time.strftime("%H:%M:%S"), all_devices=self.all_devices)
        if self._live is not None:
            self._live.update(view, refresh=True)
        else:
            self.console.print(view)
            self.console.print()

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None
