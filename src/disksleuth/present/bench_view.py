"""Benchmark progress on a terminal, the results table, and the run as JSON."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Any

from disksleuth.model.run import Run, TestResult
from disksleuth.present.text import has_control_chars, safe_text
from disksleuth.profiles import TestSpec
from disksleuth.units import fmt_bytes, fmt_size


class TtyEvents:
    """Live progress on stderr (a terminal, whatever stdout is): per test, elapsed and planned time,
    current MB/s and IOPS, laid out to fit the terminal's width."""

    LABEL_WIDTH = 26  # "[4/4] RND4K_Q1T1_randrw80"
    CLOCK_WIDTH = 9  # "120/120 s"

    def __init__(self, no_color: bool = False) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn

        self.console = Console(stderr=True, highlight=False, no_color=no_color or None)
        width = self.console.width
        # The bar is the first thing to shrink, then to go: the figures matter more.
        self.bar_width = 24 if width >= 110 else 10 if width >= 80 else 0
        columns: list[Any] = [TextColumn(f"{{task.description:<{self.LABEL_WIDTH}}}")]
        if self.bar_width:
            columns.append(BarColumn(bar_width=self.bar_width))
        columns += [TextColumn(f"{{task.fields[clock]:>{self.CLOCK_WIDTH}}}"), TextColumn("{task.fields[rate]}")]
        # Gaps of one space between columns, and one column spare so the line never touches the edge.
        used = self.LABEL_WIDTH + self.bar_width + self.CLOCK_WIDTH + len(columns) - 1 + 1 + 1
        self.rate_width = max(0, width - used)
        self.progress = Progress(*columns, console=self.console, transient=True)
        self.task: Any = None
        self.total_s = 0.0
        self.done = 0
        self.progress.start()

    def close(self) -> None:
        self.progress.stop()

    def message(self, text: str) -> None:
        self.console.print(f"[bold]{safe_text(text)}[/bold]")

    def warn(self, text: str) -> None:
        self.console.print(f"[yellow]warning:[/yellow] {safe_text(text)}")

    def confirm(self, text: str) -> bool:
        self.progress.stop()
        try:
            answer = self.console.input(f"{safe_text(text)} Type 'yes' to continue: ")
        except EOFError:
            answer = ""
        self.progress.start()
        return answer.strip().lower() == "yes"

    def _new_task(self, label: str, total: float | None) -> None:
        """label is plain text: cut to its column first, then escaped for the markup column."""
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.total_s = total or 0.0
        if len(label) > self.LABEL_WIDTH:
            label = label[: self.LABEL_WIDTH - 1] + "…"
        # Until fio reports (its start-up, file layout), say so rather than show a blank clock.
        self.task = self.progress.add_task(safe_text(label), total=total, clock="starting…", rate="")

    def phase(self, label: str, total_s: float | None) -> None:
        if self.done:  # a new section after finished tests (the RAM reference): head its results
            self.console.print(f"[bold]{safe_text(label)}[/bold]")
        self._new_task(label, total_s)

    def test_start(self, index: int, total: int, spec: TestSpec, total_s: float) -> None:
        # "[1/4]" is not markup to rich (a tag starts with a letter, # / or @), so it prints as is.
        self._new_task(f"[{index}/{total}] {spec.id}", total_s)

    def status(
        self, elapsed_s: float, read_mbps: float, write_mbps: float, iops: float, written_bytes: int | None = None
    ) -> None:
        """`written_bytes`: for a write bounded by size rather than time (the sustained fill), how much so far."""
        if self.task is None:
            return
        self.progress.update(
            self.task,
            completed=min(elapsed_s, self.total_s or elapsed_s),
            clock=progress_clock(elapsed_s, self.total_s),
            rate=progress_rate(read_mbps, write_mbps, iops, self.rate_width, written_bytes),
        )

    def test_done(self, result: TestResult) -> None:
        self.done += 1
        # A narrow terminal: first no alignment, then short direction words, rather than a wrapped figure.
        width = self.console.width
        name, figure = f"{result.id:<24}", _headline(result)
        if 4 + len(name) + 1 + len(figure) > width:
            name = result.id
        if 4 + len(name) + 1 + len(figure) > width:
            figure = _headline(result, short=True)
        self.console.print(f"  [green]✓[/green] {safe_text(name)} {figure}")


def progress_clock(elapsed_s: float, total_s: float) -> str:
    """"12/30 s". fio's clock includes its set-up and the wind-down after a stop request, so it
    can pass the planned length: then the elapsed time alone, never "3/2 s"."""
    if total_s and elapsed_s <= total_s:
        # The total to a hundredth: the quick profile's 3 s maximum and 0.5 s ramp are "/3.5 s", never "/4 s".
        return f"{int(elapsed_s)}/{round(total_s, 2):g} s"  # whole seconds gone, never rounded up past it
    return f"{elapsed_s:.0f} s"


def progress_rate(
    read_mbps: float, write_mbps: float, iops: float, width: int, written_bytes: int | None = None
) -> str:
    """The live figures in the longest form that fits in width: full words, then short ones, then
    without IOPS, then the combined MB/s. Bytes written so far (a fill) come first and stay longest:
    a fill's clock alone hides that it may be writing tens of GB."""
    if written_bytes is not None:
        written = f"{fmt_bytes(written_bytes)} written"
        rest = progress_rate(read_mbps, write_mbps, iops, width - len(written) - 2)
        return next((c for c in (f"{written}  {rest}" if rest else written, written) if len(c) <= width), "")
    iops_text = f"{iops:,.0f} IOPS" if iops else ""
    full = [f"read {read_mbps:,.1f} MB/s" if read_mbps else "", f"write {write_mbps:,.1f} MB/s" if write_mbps else ""]
    if read_mbps and write_mbps:
        short = f"r {read_mbps:,.1f} w {write_mbps:,.1f} MB/s"
    else:
        short = f"{read_mbps or write_mbps:,.1f} MB/s" if (read_mbps or write_mbps) else ""
    candidates = [
        "  ".join(p for p in (*full, iops_text) if p),
        "  ".join(p for p in (short, iops_text) if p),
        short,
        f"{read_mbps + write_mbps:,.0f} MB/s" if (read_mbps or write_mbps) else "",
    ]
    return next((c for c in candidates if len(c) <= width), "")


def _headline(t: TestResult, short: bool = False) -> str:
    read, write = ("r", "w") if short else ("read", "write")
    parts = []
    if t.read_mbps is not None:
        parts.append(f"{read} {t.read_mbps:,.1f} MB/s {t.read_iops or 0:,.0f} IOPS")
    if t.write_mbps is not None:
        parts.append(f"{write} {t.write_mbps:,.1f} MB/s {t.write_iops or 0:,.0f} IOPS")
    if parts and t.ci95_pct is not None:
        parts.append(_ci(t))
    return "  ".join(parts)


# An interval at least as wide as the figure says only that the figure is unknown to within itself
# (its low end would be below zero): said in words; --json keeps ci95_pct.
TOO_NOISY_PCT = 100.0


def _ci(t: TestResult) -> str:
    """The 95% interval beside a figure: "± 2.1%"."""
    if t.ci95_pct is None:
        return "—"
    return "too noisy" if t.ci95_pct >= TOO_NOISY_PCT else f"± {t.ci95_pct:.1f}%"


def ci_legend(tests: tuple[TestResult, ...] | list[TestResult]) -> str:
    """The line under the table that says what the ± 95% column holds, its "—" included."""
    # analysis/confidence.batch_means gives no interval under 4 batches of 2 status samples after the ramp.
    no_interval = "too few samples for an interval (the test was too short)"
    if all(t.ci95_pct is None for t in tests):
        return f"± 95%: —, {no_interval}"
    legend = (
        "± 95%: half-width of the 95% confidence interval of the test's MB/s and IOPS over this run;"
        " separate runs can differ by more (--repeat N shows how much)"
    )
    if any(t.ci95_pct is None for t in tests):
        legend += f"; —: {no_interval}"
    if any(t.ci95_pct is not None and t.ci95_pct >= TOO_NOISY_PCT for t in tests):
        legend += "; too noisy: the interval is wider than the figure itself (ci95_pct in --json)"
    return legend


def _n(v: float | None, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if v is not None else "—"


def mixed_latency_line(tests: Sequence[TestResult]) -> str | None:
    """Whose latency a mixed test's own row shows: one direction's, the busier one's (issue 40)."""
    from disksleuth.analysis.results import latency_direction

    said = [f"{t.id}: its {d}s" for t in tests if (d := latency_direction(t))]
    if not said:
        return None
    return "latency columns of " + "; ".join(said) + " (the busier direction)"


def direction_rows(t: TestResult, ncols: int) -> list[list[str]]:
    """A mixed test's read and write latency, each on its own line under the test's row."""
    rows = []
    for d in ("read", "write"):
        figures = [getattr(t, f"{d}_lat_{k}_us", None) for k in ("mean", "p50", "p99", "p999", "max")]
        if all(v is None for v in figures):
            continue
        cells = [f"  └ {d} latency", "", "", "", ""]
        cells += [_n(v, 1) for v in figures[:4]] + [_n(figures[4])]
        rows.append(cells + [""] * (ncols - len(cells)))
    return rows


# Columns left out first when the terminal is narrow (lowest rank first): the latency detail, then
# the latency summary; throughput, IOPS and the reference % always stay (or the table is stacked).
_RUN_COLUMNS = (
    ("read MB/s", 0),
    ("write MB/s", 0),
    ("read IOPS", 0),
    ("write IOPS", 0),
    ("lat mean µs", 3),
    ("p50 µs", 4),
    ("p99 µs", 5),
    ("p99.9 µs", 2),
    ("max µs", 1),
)


_FIGURE_COLS = 5  # test, read MB/s, write MB/s, read IOPS, write IOPS


# steady.annotate's note for a test that ran out of time before its interval reached the target.
_NOT_SURE = "did not reach"


def _spread(t: TestResult) -> str:
    return f"{t.repeat_spread_pct:.1f}%" if t.repeat_spread_pct is not None else "—"


NOT_ONE_FIO_CALL = "(not shown: the stored command is not one fio call)"
# The program word: fio, or a path ending in /fio made of ordinary file-name characters.
_FIO_PROGRAM_RE = re.compile(r"(?:[\w.+-]*/)*fio")
# How bench.recorded_command marks a command whose target was removed after the run: a shell
# comment, with what the target was in plain words.
_NOT_RERUNNABLE_RE = re.compile(r"(# not rerunnable: ran on [\w ./-]+, removed after the run: )(.*)", re.DOTALL)


# A run's own scratch file (probe.target: DIR/.disksleuth-XXXXXXXX/scratch, older DIR/.disksleuth-XXXXXXXX.scratch)
# is removed with the run, and pasting its path recreated the private directory that the next run then removed as
# "left by a disksleuth run that was killed". The commands shown name a plain file beside it instead, and say so.
_SCRATCH_RE = re.compile(r"--filename=(.*/)?\.disksleuth-[a-z0-9_]{8}(?:/scratch|\.scratch)", re.DOTALL)
SCRATCH_STAND_IN = "disksleuth-rerun.scratch"


def scratch_stand_in_note(paths: list[str]) -> str:
    shown = ", ".join(dict.fromkeys(paths))
    return (
        f"The scratch file these tests ran on was removed with the run: the commands name {shown} in its place "
        "(fio makes it; delete it afterwards)."
    )


def with_scratch_stand_in(command: str) -> tuple[str, str | None]:
    """A pasteable command with the run's removed scratch file replaced by SCRATCH_STAND_IN in the same directory,
    and that stand-in's path (None when the command names no scratch file of ours)."""
    import shlex

    words = shlex.split(command)
    stand_in = None
    for i, word in enumerate(words):
        found = _SCRATCH_RE.fullmatch(word)
        if found:
            stand_in = (found.group(1) or "") + SCRATCH_STAND_IN
            words[i] = f"--filename={stand_in}"
    return (shlex.join(words), stand_in) if stand_in else (command, None)


def pasteable_fio_command(stored: str | None) -> str | None:
    """A stored fio command rebuilt from its words (shlex.split, then shlex.join), so every shell
    metacharacter in it is quoted: what people paste is one fio call and nothing else. None when the
    stored text is not one fio call (an imported run can carry `fio --name=x; curl ...|sh #`): the
    program is not fio, a word is not an --option (the commands we record have no other kind), or a
    word holds a control character."""
    if not stored:
        return None
    prefix = ""
    marked = _NOT_RERUNNABLE_RE.fullmatch(stored)
    if marked:
        prefix, stored = marked.group(1), marked.group(2)
    try:
        words = shlex.split(stored)
    except ValueError:  # an unclosed quote
        return None
    if not words or not _FIO_PROGRAM_RE.fullmatch(words[0]):
        return None
    if any(not w.startswith("--") or has_control_chars(w) for w in words[1:]):
        return None
    return prefix + shlex.join(words)


FOREIGN_MARK = "!"  # beside a test's name: other I/O on its device while it ran (foreign_io)


def render_run(run: Run, show_commands: bool = False) -> None:
    from rich.text import Text

    from disksleuth.present.text import Col, console, print_fitted_table, safe_text

    out = console()
    title = f"{run.target}  ·  profile {run.profile}  ·  {run.fio_version}, engine {run.engine}"
    if run.size_bytes:
        title += f"  ·  {fmt_size(run.size_bytes)} tested"
    out.print(Text(safe_text(title, markup=False)))
    has_ref = any(t.pct_of_reference for t in run.tests)
    cols = [Col("test", justify="left")] + [Col(h, drop=d) for h, d in _RUN_COLUMNS]
    repeated = any(t.repeat_values for t in run.tests)
    cols[_FIGURE_COLS:_FIGURE_COLS] = [Col("± 95%", drop=6)] + ([Col("spread", drop=7)] if repeated else [])
    if has_ref:
        cols.append(Col("% of RAM ref"))
    rows: list[list[str]] = []
    styles: list[str | None] = []
    for t in run.tests:
        row = [
            safe_text(t.id, markup=False)  # cells are Text: no markup
            + (" *" if t.cache_affected else "")
            + (f" {FOREIGN_MARK}" if t.foreign_io is not None and t.foreign_io.found else ""),
            _n(t.read_mbps, 1),
            _n(t.write_mbps, 1),
            _n(t.read_iops),
            _n(t.write_iops),
            _n(t.lat_mean_us, 1),
            _n(t.lat_p50_us, 1),
            _n(t.lat_p99_us, 1),
            _n(t.lat_p999_us, 1),
            _n(t.lat_max_us),
        ]
        if has_ref:
            pct = t.pct_of_reference or {}
            row.append("/".join(f"{v:.0f}%" for k, v in pct.items() if k.endswith("mbps")) or "—")
        subs = direction_rows(t, len(row))
        # The interval (and the spread of --repeat passes) beside the figures: after write IOPS.
        row[_FIGURE_COLS:_FIGURE_COLS] = [_ci(t)] + ([_spread(t)] if repeated else [])
        for sub in subs:
            sub[_FIGURE_COLS:_FIGURE_COLS] = [""] * (2 if repeated else 1)
        rows.append(row)
        styles.append(None)
        for sub in subs:
            rows.append(sub)
            styles.append("dim")
    hidden = print_fitted_table(cols, rows, row_styles=styles)
    if hidden:
        out.print(f"[dim]hidden at {out.width} columns: {', '.join(hidden)} (--json has every figure)[/dim]")
    mixed = mixed_latency_line(run.tests)
    if mixed and not {"lat mean µs", "p50 µs", "p99 µs", "p99.9 µs", "max µs"} <= set(hidden):
        out.print(f"[dim]{safe_text(mixed)}[/dim]")
    if "± 95%" not in hidden and run.tests:
        out.print(f"[dim]{ci_legend(run.tests)}[/dim]")
    if repeated:
        n = max(len(t.repeat_values) for t in run.tests)
        out.print(f"[dim]figures are medians of {n} passes; spread: (max - min) / median across them[/dim]")
    if any(t.cache_affected for t in run.tests):
        out.print("[yellow]* cache_affected: measured through the page cache or on memory, not the medium[/yellow]")
    busy = [t for t in run.tests if t.foreign_io is not None and t.foreign_io.found]
    if busy:  # issue 36: the figure is the device's minus what something else took meanwhile
        from disksleuth.analysis.foreign import foreign_note

        out.print(f"[yellow]{FOREIGN_MARK} foreign_io: other I/O on the device while the test ran[/yellow]")
        for t in busy:
            assert t.foreign_io is not None
            out.print(f"[yellow]  {safe_text(t.id)}: {safe_text(foreign_note(t.foreign_io))}[/yellow]")
    for t in run.tests:
        if t.sustained is not None:
            from disksleuth.present.sustained_view import render_sustained

            render_sustained(t.sustained)
    for note in run.notes:
        out.print(f"[dim]note: {safe_text(note)}[/dim]")
    short = [t.id for t in run.tests if any(n.startswith(_NOT_SURE) for n in t.notes)]
    for t in run.tests:
        for note in t.notes:
            if len(short) > 1 and note.startswith(_NOT_SURE):
                continue  # said once below, for all of them
            if t.sustained is not None and t.sustained.reason and note.endswith(t.sustained.reason):
                continue  # the fill's "too short to judge: ..." note: its section above just said it
            out.print(f"[dim]{safe_text(t.id)}: {safe_text(note)}[/dim]")
    if len(short) > 1:
        target = next((t.precision_target_pct for t in run.tests if t.precision_target_pct is not None), None)
        goal = f"±{target:g}%" if target is not None else "their target"
        said = (
            f"none of the {len(short)} tests reached {goal}" if len(short) == len(run.tests)
            else f"{len(short)} of {len(run.tests)} tests ({safe_text(', '.join(short))}) did not reach {goal}"
        )  # fmt: skip
        out.print(f"[dim]{said} in the time they had; their intervals are in the ± 95% column[/dim]")
    if show_commands:
        out.print("\n[bold]fio command lines[/bold] (paste one to rerun that test):")
        stand_ins: list[str] = []
        for t in run.tests:
            shown = pasteable_fio_command(t.fio_command)
            if shown is None:
                out.print(f"[dim]{safe_text(t.id)}: {NOT_ONE_FIO_CALL}[/dim]", soft_wrap=True)
            else:
                shown, stand_in = with_scratch_stand_in(shown)
                stand_ins += [stand_in] if stand_in else []
                out.print(f"[dim]{safe_text(t.id)}:[/dim] {safe_text(shown)}", soft_wrap=True)
        if stand_ins:
            out.print(safe_text(scratch_stand_in_note(stand_ins)))  # words: wrapped to the terminal
    else:
        out.print("[dim]Exact fio command lines: --commands (or fio_command in --json).[/dim]")
