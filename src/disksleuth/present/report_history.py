"""The report's history charts (issue 23): per drive and test, the figure over time across the drive's runs
measured the same way, with the baseline's median and its usual band, the run of the report marked. Inline
SVG like every chart of the report (no network, no JavaScript); "too little history" when there is."""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import time
from typing import Any

from disksleuth.analysis.baseline import (
    MIN_RUNS,
    History,
    Judged,
    figure_label,
    headline_metrics,
    history_points,
    unit_of,
    usable_history,
)
from disksleuth.model.baseline import EarlierRun
from disksleuth.present.charts import CHART_WIDTH_IN, RUN_COLORS, chart_text, fmt_value, legend_below, pyplot, svg_of
from disksleuth.present.text import safe_text

TOO_LITTLE = "too little history"
LEFT_OUT = "left out of the charts: {count} run(s) dated before 1970 or in the future ({ids}, e.g. {when})"


def drawn_history(history: History, now_s: float) -> tuple[History, list[EarlierRun]]:
    """The history a chart draws, and the dated runs it leaves out: those `show` leaves out of a baseline as
    dated in the future (analysis.baseline.usable_history), and those dated before 1970, which `import` now
    refuses. One run dated year 1 or 9999 (imported before, or by an older version) failed the whole report:
    matplotlib draws years 1 to 9999 only, and the axis around such a run ran past them."""
    kept, _notes = usable_history(history.runs, None, now_s)
    drawn = {r.run_id for r in kept if r.started_at_s is not None and r.started_at_s >= 0}
    left_out = [r for r in history.runs if r.started_at_s is not None and r.run_id not in drawn]
    runs = tuple(r for r in history.runs if r.run_id in drawn or r.started_at_s is None)
    return dataclasses.replace(history, runs=runs), left_out


def _when(started_at_s: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(started_at_s, tz=dt.UTC)


def history_figure(history: History, test_id: str, metric: str, title: str) -> Any:
    """One test's figure over time: each run a point with its 95% interval, the report's run marked, the
    baseline's median and usual band over the runs it was taken from. None with fewer than 2 runs."""
    points = history_points(history, test_id, metric)
    if len(points) < 2:
        return None
    judged = next((j for j in history.baseline.figures if (j.test_id, j.metric) == (test_id, metric)), None)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 2.6))
    entries = 0
    if judged is not None:
        _baseline_band(ax, history, judged)
        entries += 1
    xs = [_when(r.started_at_s or 0.0) for r, _v, _ci in points]
    ys = [v for _r, v, _ci in points]
    errs = [v * (ci or 0.0) / 100.0 for _r, v, ci in points]
    ax.errorbar(xs, ys, yerr=errs, fmt="o-", color=RUN_COLORS[0], markersize=4, linewidth=1, capsize=3,
                label="runs (with their 95% interval)")  # fmt: skip
    entries += 1
    mine = [(x, y) for (r, _v, _ci), x, y in zip(points, xs, ys, strict=True) if r.run_id == history.run_id]
    if mine:
        ax.plot(*zip(*mine, strict=True), "D", color=RUN_COLORS[5], markersize=7,
                label=f"run #{history.run_id}: {fmt_value(mine[0][1])} {unit_of(metric)}")  # fmt: skip
        entries += 1
    ax.set_ylim(0, max(ys + [y + e for y, e in zip(ys, errs, strict=True)]) * 1.2 or 1)
    ax.set_ylabel(unit_of(metric))
    ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    ax.set_title(title, loc="left")
    legend_below(ax, entries)
    return fig


def _baseline_band(ax: Any, history: History, j: Judged) -> None:
    """The median and the band the judgement used, over the time of the runs it was taken from."""
    times = [_when(r.started_at_s) for r in history.runs if r.run_id in j.run_ids and r.started_at_s is not None]
    mine = next((r.started_at_s for r in history.runs if r.run_id == history.run_id), None)
    if mine is not None:
        times.append(_when(mine))
    if not times:
        return
    start, end = min(times), max(times)
    low, high = j.baseline_value * (1 - j.band_pct / 100), j.baseline_value * (1 + j.band_pct / 100)
    ax.fill_between([start, end], [low, low], [high, high], color="#d0d7de", alpha=0.6, linewidth=0)
    label = (
        f"baseline: median {fmt_value(j.baseline_value)} of {len(j.run_ids)} run(s), band ±{j.band_pct:.0f}% "
        f"(spread ±{j.spread_pct:.0f}%)"
    )
    ax.plot([start, end], [j.baseline_value] * 2, color="#57606a", linestyle="--", linewidth=1.2, label=label)


def history_html(history: History, device: str, now_s: float | None = None) -> str:
    """The history part of a run's section: a line on the baseline (or too little history) and a chart per
    test and direction, of the runs dated from 1970 to now (`now_s`, the clock by default)."""

    def e(value: str) -> str:  # names from the store (device, host) shown as the terminal shows them (issue 35 §13)
        return html.escape(safe_text(value, markup=False))

    b = history.baseline
    parts = [f"<h3>History of {e(device)}, measured this way</h3>"]
    if b.status != "compared":
        parts.append(f"<p class='muted'>{TOO_LITTLE}: {e(b.reason or '')} (a baseline needs {MIN_RUNS}).</p>")
    else:
        parts.append(f"<p class='muted'>{len(history.runs)} run(s) of this drive measured this way.</p>")
    current = next((r for r in history.runs if r.run_id == history.run_id), None)
    if current is None:
        return "\n".join(parts)
    history, left_out = drawn_history(history, time.time() if now_s is None else now_s)
    if left_out:
        ids = ", ".join(f"#{r.run_id}" for r in left_out[:5]) + (", …" if len(left_out) > 5 else "")
        said = LEFT_OUT.format(count=len(left_out), ids=ids, when=left_out[0].started_at)
        parts.append(f"<p class='muted'>{e(said)}.</p>")
    for test_id, figures in current.tests.items():
        if figures.cache_affected:
            continue
        for metric in headline_metrics(figures.bs_bytes, figures):
            title = chart_text(f"{device} · {figure_label(test_id, metric)}: over time")
            svg = svg_of(history_figure(history, test_id, metric, title))
            if svg:
                parts.append(f"<div class='chart'>{svg}</div>")
    return "\n".join(parts)
