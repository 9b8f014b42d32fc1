"""Benchmark progress on a terminal, the results table, and the run as JSON."""

from __future__ import annotations

import dataclasses
from typing import Any

from disksleuth.model import Run, TestResult
from disksleuth.present.health_view import health_to_dict
from disksleuth.present.text import safe_text
from disksleuth.profiles import TestSpec
from disksleuth.units import fmt_bytes


def test_to_dict(t: TestResult) -> dict[str, Any]:
    out = dataclasses.asdict(t)
    out["series"] = [dataclasses.asdict(p) for p in t.series]
    out["pct_of_reference"] = dict(t.pct_of_reference) if t.pct_of_reference is not None else None
    out["notes"] = list(t.notes)
    return out


def run_to_dict(run: Run) -> dict[str, Any]:
    return {
        "run": {
            "id": run.id,
            "kind": run.kind,
            "target": run.target,
            "profile": run.profile,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "fio_version": run.fio_version,
            "engine": run.engine,
            "host": dict(run.host),
            "device": run.device,
            "size_bytes": run.size_bytes,
            "notes": list(run.notes),
        },
        "tests": [test_to_dict(t) for t in run.tests],
        "reference": [test_to_dict(t) for t in run.reference],
        "health": {
            "before": health_to_dict(run.health_before) if run.health_before else None,
            "after": health_to_dict(run.health_after) if run.health_after else None,
            "changes": {k: list(v) for k, v in run.health_changes.items()},
            "temperature_source": run.temperature_source,
            "temperature_series": [{"t_s": t, "temperature_c": c} for t, c in run.temperature_series],
        },
    }


def run_from_dict(doc: dict[str, Any]) -> Run:
    """A stored run document back into the model, for the terminal views."""
    from disksleuth.model import SeriesPoint

    test_fields = {f.name for f in dataclasses.fields(TestResult)}

    required = [
        f.name
        for f in dataclasses.fields(TestResult)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]

    def test(t: dict[str, Any]) -> TestResult:
        kw: dict[str, Any] = {name: None for name in required}
        kw.update({k: v for k, v in t.items() if k in test_fields})
        kw["series"] = tuple(SeriesPoint(**p) for p in t.get("series") or [])
        kw["notes"] = tuple(t.get("notes") or ())
        kw["cache_affected"] = bool(kw.get("cache_affected"))
        return TestResult(**kw)

    run = doc["run"]
    return Run(
        id=run.get("id"),
        kind=run.get("kind", "bench"),
        target=run["target"],
        profile=run["profile"],
        started_at=run["started_at"],
        finished_at=run.get("finished_at"),
        fio_version=run.get("fio_version"),
        engine=run.get("engine") or "",
        host=run.get("host") or {},
        device=run.get("device"),
        size_bytes=run.get("size_bytes"),
        notes=tuple(run.get("notes") or ()),
        tests=tuple(test(t) for t in doc.get("tests") or []),
        reference=tuple(test(t) for t in doc.get("reference") or []),
    )


class TtyEvents:
    """Live progress on stderr: per test, elapsed and total time, current MB/s and IOPS."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn

        self.console = Console(stderr=True, highlight=False)
        self.progress = Progress(
            TextColumn("{task.description:<26}"),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[clock]:>11}"),
            TextColumn("{task.fields[rate]}"),
            console=self.console,
            transient=True,
        )
        self.task: Any = None
        self.total_s = 0.0
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
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.total_s = total or 0.0
        self.task = self.progress.add_task(label, total=total, clock="", rate="")

    def phase(self, label: str, total_s: float | None) -> None:
        self._new_task(label, total_s)

    def test_start(self, index: int, total: int, spec: TestSpec, total_s: float) -> None:
        self._new_task(f"\\[{index}/{total}] {safe_text(spec.id)}", total_s)

    def status(self, elapsed_s: float, read_mbps: float, write_mbps: float, iops: float) -> None:
        if self.task is None:
            return
        clock = f"{elapsed_s:4.0f}/{self.total_s:.0f} s" if self.total_s else f"{elapsed_s:4.0f} s"
        parts = []
        if read_mbps:
            parts.append(f"read {read_mbps:,.1f} MB/s")
        if write_mbps:
            parts.append(f"write {write_mbps:,.1f} MB/s")
        if iops:
            parts.append(f"{iops:,.0f} IOPS")
        self.progress.update(
            self.task, completed=min(elapsed_s, self.total_s or elapsed_s), clock=clock, rate="  ".join(parts)
        )

    def test_done(self, result: TestResult) -> None:
        figure = _headline(result)
        self.console.print(f"  [green]✓[/green] {safe_text(f'{result.id:<24}')} {figure}")


def _headline(t: TestResult) -> str:
    parts = []
    if t.read_mbps is not None:
        parts.append(f"read {t.read_mbps:,.1f} MB/s {t.read_iops or 0:,.0f} IOPS")
    if t.write_mbps is not None:
        parts.append(f"write {t.write_mbps:,.1f} MB/s {t.write_iops or 0:,.0f} IOPS")
    return "  ".join(parts)


def _n(v: float | None, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if v is not None else "—"


def table_rows_by_direction(table: Any, t: TestResult, ncols: int) -> None:
    """A mixed test's read and write latency, each on its own line under the test's row."""
    for d in ("read", "write"):
        figures = [getattr(t, f"{d}_lat_{k}_us", None) for k in ("mean", "p50", "p99", "p999", "max")]
        if all(v is None for v in figures):
            continue
        cells = [f"  └ {d} latency", "", "", "", ""]
        cells += [_n(v, 1) for v in figures[:4]] + [_n(figures[4])]
        table.add_row(*cells, *[""] * (ncols - len(cells)), style="dim")


def render_run(run: Run, show_commands: bool = False) -> None:
    from rich.table import Table

    from disksleuth.present.text import console, safe_text

    out = console()
    title = f"{run.target}  ·  profile {run.profile}  ·  {run.fio_version}, engine {run.engine}"
    if run.size_bytes:
        title += f"  ·  {fmt_bytes(run.size_bytes)} tested"
    table = Table(title=safe_text(title), title_justify="left", box=None, header_style="bold", pad_edge=False)
    has_ref = any(t.pct_of_reference for t in run.tests)
    cols = [
        "test",
        "read MB/s",
        "write MB/s",
        "read IOPS",
        "write IOPS",
        "lat mean µs",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
    ]
    if has_ref:
        cols.append("% of RAM ref")
    for col in cols:
        if col == "test":
            table.add_column(col, no_wrap=True, min_width=max(len(t.id) for t in run.tests) + 2 if run.tests else 4)
        else:
            table.add_column(col, justify="right")
    for t in run.tests:
        row = [
            safe_text(t.id) + (" *" if t.cache_affected else ""),
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
            row.append(safe_text(" / ".join(f"{v:.0f}%" for k, v in pct.items() if k.endswith("mbps")) or "—"))
        table.add_row(*row)
        table_rows_by_direction(table, t, len(cols))
    out.print(table)
    if any(t.cache_affected for t in run.tests):
        out.print("[yellow]* cache_affected: measured through the page cache or on memory, not the medium[/yellow]")
    for note in run.notes:
        out.print(f"[dim]note: {safe_text(note)}[/dim]")
    for t in run.tests:
        for note in t.notes:
            out.print(f"[dim]{safe_text(t.id)}: {safe_text(note)}[/dim]")
    if show_commands:
        out.print("\n[bold]fio command lines[/bold] (paste one to rerun that test):")
        for t in run.tests:
            out.print(f"[dim]{safe_text(t.id)}:[/dim] {safe_text(t.fio_command)}", soft_wrap=True)
    else:
        out.print("[dim]Exact fio command lines: --commands (or fio_command in --json).[/dim]")
