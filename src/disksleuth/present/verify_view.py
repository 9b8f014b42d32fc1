"""`verify`: its progress on a terminal (stderr) and its result as a few lines and the findings."""

from __future__ import annotations

from typing import Any

from disksleuth.analysis.verify import STATE_WORDS
from disksleuth.model.verify import VerifyReport
from disksleuth.present.text import safe_text
from disksleuth.units import fmt_bytes


class TtyVerifyEvents:
    """Progress on stderr: the phase, blocks done of planned, and time. The confirmation is typed as bench's is."""

    def __init__(self, no_color: bool = False) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, highlight=False, no_color=no_color or None)
        columns: list[Any] = [TextColumn("{task.description:<20}")]
        if self.console.width >= 70:
            columns.append(BarColumn(bar_width=20))
        columns += [MofNCompleteColumn(), TimeElapsedColumn()]
        self.progress = Progress(*columns, console=self.console, transient=True)
        self.task: Any = None
        self.started = False

    def message(self, text: str) -> None:
        self.console.print(f"[bold]{safe_text(text)}[/bold]")

    def confirm(self, text: str) -> bool:
        try:
            answer = self.console.input(f"{safe_text(text)} Type 'yes' to continue: ")
        except EOFError:
            answer = ""
        return answer.strip().lower() == "yes"

    def phase(self, label: str, total: int) -> None:
        if not self.started:
            self.progress.start()
            self.started = True
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.task = self.progress.add_task(safe_text(label), total=total)

    def advance(self, done: int, total: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.started:
            self.progress.stop()
            self.started = False


def render_verify(report: VerifyReport) -> None:
    from disksleuth.present.check_view import render_verdict
    from disksleuth.present.text import console

    out = console()
    v = report.verdict
    out.print(f"[bold]{safe_text(report.identity)}[/bold]")
    usable = "—" if v.usable_bytes is None else f"{fmt_bytes(v.usable_bytes)} ({v.usable_bytes:,} bytes)"
    rows = [
        ("claimed", f"{fmt_bytes(v.claimed_bytes)} ({v.claimed_bytes:,} bytes)"),
        ("usable", usable),
        ("blocks", f"{v.blocks_held} of {v.blocks_tested} held ({v.block_bytes:,} bytes each)"),
        ("time", f"{report.elapsed_s:.1f} s (writing {report.write_s:.1f} s, reading {report.read_s:.1f} s)"),
    ]
    if v.wraps_every_bytes:
        rows.append(("wraps every", f"{fmt_bytes(v.wraps_every_bytes)} ({v.wraps_every_bytes:,} bytes)"))
    for label, value in rows:
        out.print(f"  {label:<12} {safe_text(value)}")
    failed = [(s, n) for s, n in v.failures.items() if n]
    if failed:
        out.print("  past it:")
        for state, n in failed:
            out.print(f"    {n:>6}  {safe_text(STATE_WORDS[state])}")
        first = v.first_failure
        if first is not None:
            what = STATE_WORDS[first.state]
            if first.carries_offset is not None:
                what = f"carries offset {first.carries_offset:,}'s block"
            elif first.error:
                what = first.error
            out.print(f"  first failure at offset {first.offset:,}: {safe_text(what)}")
    for note in report.notes:
        out.print(f"  note: {safe_text(note)}")
    if report.stopped:
        out.print(f"  [bold]stopped early:[/bold] {safe_text(report.stopped)}")
    if v.findings:
        render_verdict(list(v.findings), v.summary)
    else:
        out.print(f"\n[bold]Summary:[/bold] {safe_text(v.summary)}")
