"""`report`: one self-contained HTML file. Charts are matplotlib figures embedded as inline SVG; no
network resources, no JavaScript, print-friendly CSS.

Every chart is a function `chart(docs or doc) -> svg | None` so new ones (a sustained-write plot) slot
into ACROSS_RUNS_CHARTS or RUN_CHARTS. Charts are drawn at the width they are shown (CHART_WIDTH_IN at
96 dpi fits the page and an A4/Letter print), so their 8-9 pt text prints at 8-9 pt instead of being
scaled down.

What a reader must not lose, whatever the chart: memory-backed targets and cache-affected tests are
marked, skipped tests and stability notes are listed, % of the RAM reference is shown, and findings
come first.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from disksleuth.analysis.aer import stored_aer_lines
from disksleuth.analysis.baseline import History
from disksleuth.analysis.compare import run_label
from disksleuth.analysis.steady import NOT_REACHED
from disksleuth.doc.card import card_lines
from disksleuth.doc.run import is_limited, is_memory_backed, limited_tests
from disksleuth.present.charts import (
    CHART_WIDTH_IN,
    FONT_PT,
    RUN_COLORS,
    SMALL_PT,
)
from disksleuth.present.charts import chart_text as _chart_text
from disksleuth.present.charts import fmt_value as _fmt
from disksleuth.present.charts import legend_below as _legend_below
from disksleuth.present.charts import per_second as _per_second
from disksleuth.present.charts import pyplot as _plt
from disksleuth.present.charts import svg_of as _svg
from disksleuth.present.report_history import history_html
from disksleuth.present.stack_view import member_lines, tree_lines
from disksleuth.present.text import safe_text
from disksleuth.units import fmt_size

DECADES_FOR_LOG = 2.0  # a log axis when the largest value is >= 10^2 times the smallest

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1b1f24; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
h3 { font-size: 1.05rem; margin-bottom: .3rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
th, td { border: 1px solid #d0d7de; padding: .2rem .45rem; text-align: right; }
th { white-space: nowrap; } td { font-variant-numeric: tabular-nums; }
th:first-child, td:first-child { text-align: left; }
tr.sub td { color: #57606a; font-size: .8rem; border-top: none; }
tr.cache td:first-child::after { content: " *"; color: #9a6700; font-weight: 700; }
.finding { border-left: 4px solid #999; padding: .3rem .7rem; margin: .4rem 0; background: #f6f8fa; }
.finding.warn { border-color: #d4a72c; } .finding.critical { border-color: #cf222e; }
.finding.info { border-color: #0969da; } .finding.ok { border-color: #1a7f37; }
.code { font-family: ui-monospace, monospace; font-weight: 600; }
.summary { font-size: 1.05rem; font-weight: 600; }
.badge { display: inline-block; font-size: .75rem; font-weight: 600; padding: .05rem .45rem; border-radius: 1rem;
         margin-left: .4rem; vertical-align: middle; border: 1px solid; }
.badge.memory { color: #8250df; border-color: #8250df; } .badge.cache { color: #9a6700; border-color: #d4a72c; }
.badge.skipped { color: #57606a; border-color: #8c959f; } .badge.unstable { color: #bc4c00; border-color: #bc4c00; }
.caveats { background: #fff8c5; border: 1px solid #d4a72c; padding: .4rem .8rem; margin: .5rem 0; }
.caveats ul { margin: .2rem 0; padding-left: 1.2rem; }
.chart { margin: .5rem 0 1rem; }
.chart svg { max-width: 100%; height: auto; }
.muted { color: #57606a; font-size: .85rem; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  /* Whole sections may be taller than a page: keep only charts, rows and boxes whole. */
  .chart, tr, .finding, .caveats { page-break-inside: avoid; break-inside: avoid; }
  h2, h3 { page-break-after: avoid; break-after: avoid; }
}
"""

ChartFilter = Callable[[dict[str, Any]], bool]  # which of a run document's tests a chart shows




# --- caveats (what a reader must not lose) -----------------------------------------------------


def skipped_notes(doc: dict[str, Any]) -> list[str]:
    return [str(n) for n in (doc.get("run") or {}).get("notes") or [] if "skipped" in str(n).lower()]


def unsettled_tests(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Tests whose figure is less sure than asked: adaptive ones that ran out of time before their interval
    reached the target, and in runs stored before there were targets (no precision_target_pct field),
    tests whose rate still moved at the end. A fixed-length test of a newer run (--time: a null target)
    was never meant to settle."""
    return [
        t
        for t in doc.get("tests") or []
        if t.get("settled") is False and ("precision_target_pct" not in t or t["precision_target_pct"] is not None)
    ]


def run_badges(doc: dict[str, Any]) -> list[tuple[str, str]]:
    badges = []
    if is_memory_backed(doc):
        badges.append(("memory", "memory-backed"))
    if is_limited(doc):  # issue 36: a cgroup I/O limit held its figures
        badges.append(("cache", "I/O limit"))
    if any(t.get("cache_affected") for t in doc.get("tests") or []):
        badges.append(("cache", "cache-affected tests"))
    if skipped_notes(doc):
        badges.append(("skipped", "tests skipped"))
    if unsettled_tests(doc):
        badges.append(("unstable", "not settled"))
    return badges


def series_label(doc: dict[str, Any]) -> str:
    """A run's name in chart legends, with its caveat: '#3 loop2 (memory)'."""
    return run_label(doc) + (" (memory)" if is_memory_backed(doc) else "")


# --- matplotlib helpers -----------------------------------------------------------------------


def _spans_decades(values: list[float]) -> bool:
    positive = [v for v in values if v and v > 0]
    return len(positive) > 1 and math.log10(max(positive) / min(positive)) >= DECADES_FOR_LOG


def _log_floor(values: list[float]) -> float:
    """A decade below the smallest value, so the shortest bar still shows above the axis floor."""
    smallest = min(v for v in values if v and v > 0)
    return 10.0 ** math.floor(math.log10(smallest) - 0.3)


def _wrap(text: str, width: int = 18) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


# --- charts across runs -----------------------------------------------------------------------


def bar_figure(docs: list[dict[str, Any]], metric: str, title: str, test_filter: ChartFilter) -> Any:
    """Horizontal bars, one group per test and one bar per run, value at the end of each bar.

    Horizontal so test names never rotate and 6 runs x 8 tests stay legible at the page width; a log
    axis when the values span two decades (a RAM disk next to an SD card), its floor a decade under
    the smallest bar; the axis runs past the longest bar so every label stays inside the frame.
    Error bars when tests carry `ci95_pct` (half-width of the 95% interval, % of the figure)."""
    tests: list[str] = []
    for d in docs:
        for t in d.get("tests") or []:
            if test_filter(t) and (t.get(metric) or 0) > 0 and t["id"] not in tests:
                tests.append(t["id"])
    if not tests:
        return None
    plt = _plt()
    # Compact groups: a test gets a bar only for the runs that have it, so six runs with different
    # profiles do not leave rows of empty slots.
    bars_by_run: dict[int, list[tuple[float, dict[str, Any]]]] = {}
    ticks, y = [], 0.0
    for test_id in tests:
        first = y
        for i, d in enumerate(docs):
            t = next((t for t in d.get("tests") or [] if t["id"] == test_id), None)
            if t is not None and (t.get(metric) or 0) > 0:
                bars_by_run.setdefault(i, []).append((y, t))
                y += 1.0
        ticks.append((first + y - 1.0) / 2)
        y += 0.6  # the gap between tests
    values_all = [t[metric] for rows in bars_by_run.values() for _, t in rows]
    log = _spans_decades(values_all)
    floor = _log_floor(values_all) if log else 0.0
    # The longest bar with its error bar: value labels go past the whisker and must stay inside the frame.
    top = max(
        t[metric] * (1 + (t["ci95_pct"] if isinstance(t.get("ci95_pct"), (int, float)) else 0) / 100)
        for rows in bars_by_run.values()
        for _, t in rows
    )
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 0.9 + 0.2 * y))
    any_cache = any_errs = False
    for i, rows in sorted(bars_by_run.items()):
        d = docs[i]
        values = [t[metric] for _, t in rows]
        cache = [bool(t.get("cache_affected")) for _, t in rows]
        any_cache = any_cache or any(cache)
        errs = [
            v * t["ci95_pct"] / 100.0 if isinstance(t.get("ci95_pct"), (int, float)) and t["ci95_pct"] > 0 else 0.0
            for v, (_, t) in zip(values, rows, strict=True)
        ]
        any_errs = any_errs or any(errs)
        memory = is_memory_backed(d)
        bars = ax.barh(
            [yy for yy, _ in rows],
            [v - floor for v in values],
            0.82,
            left=floor,
            color=RUN_COLORS[i % len(RUN_COLORS)],
            hatch="//" if memory else None,
            edgecolor="#444444" if memory else "white",
            linewidth=0.3,
            label=series_label(d),
            xerr=errs if any(errs) else None,
            error_kw={"elinewidth": 0.9, "capsize": 2, "ecolor": "#24292f"},
        )
        labels = [_fmt(v) + (" *" if c else "") for v, c in zip(values, cache, strict=True)]
        ax.bar_label(bars, labels=labels, fontsize=SMALL_PT, padding=3, clip_on=True)
    ax.set_yticks(ticks, tests)
    ax.set_ylim(y - 0.6 + 0.3, -0.7)  # first test at the top, in profile order
    unit = "MB/s" if metric.endswith("mbps") else "IOPS"
    if log:
        ax.set_xscale("log")
        ax.set_xlim(floor, top * 8)  # room for the value label right of the longest bar
        span = math.log10(max(values_all) / min(values_all))
        ax.set_xlabel(f"{unit} (log scale: values span {span:.1f} decades)")
    else:
        ax.set_xlim(0, top * 1.28)
        ax.set_xlabel(unit)
    ax.set_title(title, loc="left")
    ax.grid(axis="x", alpha=0.3, which="both" if log else "major")
    ax.set_axisbelow(True)
    n_runs = len(bars_by_run)
    notes = [
        "error bars: 95% confidence interval of each figure over its run" if any_errs else "",
        "* cache-affected: page cache or memory, not the medium" if any_cache else "",
    ]
    _legend_below(ax, n_runs, "; ".join(n for n in notes if n) or None)
    return fig


def _latency_rows(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, float | None], bool]]:
    rows = []
    for d in docs:
        memory = is_memory_backed(d)
        for t in d.get("tests") or []:
            split = [
                (direction, {k: t.get(f"{direction}_lat_{k}_us") for k in ("p50", "p99", "p999")})
                for direction in ("read", "write")
                if t.get(f"{direction}_lat_p50_us")
            ]
            label = f"#{d['run']['id']} {t['id']}"
            if split:  # a mixed test: each direction on its own row
                rows += [(f"{label} {direction}", figs, memory) for direction, figs in split]
            elif t.get("lat_p50_us"):
                rows.append((label, {k: t.get(f"lat_{k}_us") for k in ("p50", "p99", "p999")}, memory))
    return rows


def latency_figure(docs: list[dict[str, Any]]) -> Any:
    """Each test's latency as a range: p50 to p99.9, with p99 marked. Log axis when they span decades."""
    rows = _latency_rows(docs)
    if not rows:
        return None
    plt = _plt()
    values = [v for _, figs, _ in rows for v in figs.values() if v]
    log = _spans_decades(values)
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 0.9 + 0.22 * len(rows)))
    for y, (_, figs, memory) in enumerate(rows):
        known = [v for v in (figs["p50"], figs["p99"], figs["p999"]) if v]
        color = "#8250df" if memory else "#0969da"
        ax.plot([min(known), max(known)], [y, y], color=color, linewidth=2, alpha=0.5, solid_capstyle="butt")
        for key, marker, name in (("p50", "o", "p50"), ("p99", "D", "p99"), ("p999", ">", "p99.9")):
            if figs[key]:
                ax.plot([figs[key]], [y], marker=marker, color=color, markersize=5, linestyle="none",
                        label=name if y == 0 else None)
        ax.annotate(
            _fmt(max(known)), (max(known), y), (5, 0), textcoords="offset points", fontsize=SMALL_PT, va="center"
        )
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.set_ylim(len(rows) - 0.4, -0.6)  # first row at the top; half a row of room above and below
    if log:
        ax.set_xscale("log")
        ax.set_xlim(_log_floor(values), max(values) * 6)
        ax.set_xlabel("latency µs (log scale)")
    else:
        ax.set_xlim(0, max(values) * 1.2)
        ax.set_xlabel("latency µs")
    ax.grid(axis="x", alpha=0.3, which="both" if log else "major")
    ax.set_axisbelow(True)
    ax.set_title("Latency: p50 (circle), p99 (diamond), p99.9 (triangle); purple rows are memory-backed", loc="left")
    return fig


def pct_of_reference_figure(docs: list[dict[str, Any]]) -> Any:
    """Runs with a RAM-disk reference (riscos): each figure as % of the same test on RAM."""
    rows = []
    for d in docs:
        for t in d.get("tests") or []:
            for key, value in (t.get("pct_of_reference") or {}).items():
                if value is not None:
                    direction, unit = key.split("_", 1)
                    unit = {"mbps": "MB/s", "iops": "IOPS"}.get(unit, unit)
                    rows.append((f"#{d['run']['id']} {t['id']} {direction} {unit}", value))
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 0.9 + 0.22 * len(rows)))
    bars = ax.barh(range(len(rows)), [v for _, v in rows], 0.7, color="#1a7f37")
    ax.bar_label(bars, labels=[f"{v:,.1f}%" for _, v in rows], fontsize=SMALL_PT, padding=3, clip_on=True)
    ax.axvline(100, color="#57606a", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(rows)), [r for r, _ in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, max(110.0, max(v for _, v in rows) * 1.25))
    ax.set_xlabel("% of the RAM-disk reference (dashed: as fast as RAM)")
    ax.set_title("Share of the RAM reference", loc="left")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    return fig


# --- charts per run ---------------------------------------------------------------------------


def chain_figure(device: dict[str, Any]) -> Any:
    """The link chain as a path from the drive (left) to the CPU (right), an arrow per hop, each
    hop's ceiling beneath it; the hop that sets the ceiling in orange."""
    link = device.get("link") or {}
    hops = link.get("hops") or []
    if not hops:
        return None
    plt = _plt()
    bottleneck = link.get("bottleneck")
    grey, blue, orange = "#6e7781", "#0969da", "#bc4c00"
    drive = device.get("model") or device.get("transport") or ""
    nodes = [(str(device.get("name") or "drive"), drive, grey)]
    for h in hops:
        if h.get("ceiling_mbps"):
            ceiling = f"~{h['ceiling_mbps']:,.0f} MB/s"
        elif h.get("kind") == "virtual":
            ceiling = "no link ceiling"
        else:
            ceiling = "ceiling unknown"
        detail = str(h.get("label") or h.get("kind") or "")
        if h.get("port"):  # a PCIe hop is the link between this function and the port above it
            detail += f"\nto port {h['port']}"
        slot = h.get("slot")
        if isinstance(slot, dict) and slot.get("name"):  # the board's name for it (SMBIOS, kernel, label)
            detail += f"\nslot {slot['name']}"
        backing = h.get("backing") or []
        color = orange if bottleneck and h.get("label") == bottleneck else blue
        name = str(h.get("name"))
        if h.get("kind") == "virtual":  # its name is the device's own; say what it is instead
            name = f"{h.get('driver') or 'virtual'} driver"
            detail = "virtual: no physical link"
            if backing:
                detail += "\nbacked by " + ", ".join(str(b) for b in backing)
        nodes.append((name, f"{detail}\n{ceiling}", color))
    nodes.append(("CPU", "memory" if device.get("transport") in ("loop", "zram") else "", grey))
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 1.9))
    xs = [float(i) for i in range(len(nodes))]
    for a, b in zip(xs, xs[1:], strict=False):
        ax.annotate("", (b - 0.13, 0), (a + 0.13, 0), arrowprops={"arrowstyle": "-|>", "color": "#8c959f", "lw": 1.6})
    width = max(10, int(60 / len(nodes)))
    for x, (name, detail, color) in zip(xs, nodes, strict=True):
        ax.scatter([x], [0], s=170, color=color, zorder=2)
        ax.text(x, 0.3, _wrap(name, width), ha="center", va="bottom", fontsize=FONT_PT, fontweight="bold")
        ax.text(x, -0.3, "\n".join(_wrap(part, width) for part in detail.split("\n")), ha="center", va="top",
                fontsize=SMALL_PT, color=color if color != grey else "#57606a")
    ax.text(xs[0], 0.95, "device", ha="center", fontsize=SMALL_PT, color="#57606a")
    ax.text(xs[-1], 0.95, "CPU side", ha="center", fontsize=SMALL_PT, color="#57606a")
    ax.set_xlim(-0.6, xs[-1] + 0.6)
    lines = max(n.count("\n") + 1 for _, n, _ in nodes)
    ax.set_ylim(-0.55 - 0.28 * lines, 1.15)
    ax.axis("off")
    return fig


def _steps(series: list[dict[str, Any]], offset: float) -> tuple[list[float], list[float]]:
    """Each status point covers the interval that ends at its time: draw it as a flat segment, so a
    test with one or two points is a line, not an isolated dot."""
    xs, ys = [], []
    prev_t = None
    for i, p in enumerate(series):
        t = float(p["t_s"])
        if prev_t is None:
            nxt = float(series[i + 1]["t_s"]) if len(series) > 1 else t + 1.0
            prev_t = max(0.0, t - (nxt - t))
        value = (p.get("read_mbps") or 0) + (p.get("write_mbps") or 0)
        xs += [offset + prev_t, offset + t]
        ys += [value, value]
        prev_t = t
    return xs, ys


def timeline_figure(doc: dict[str, Any]) -> Any:
    """Throughput over time, test after test, with the drive temperature on a second axis."""
    tests = [t for t in doc.get("tests") or [] if t.get("series")]
    if not tests:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 2.9))
    offset = 0.0
    temps: list[tuple[float, float]] = []
    ymax = 0.0
    for i, t in enumerate(tests):
        xs, ys = _steps(t["series"], offset)
        color = RUN_COLORS[i % len(RUN_COLORS)]
        ax.plot(xs, ys, color=color, linewidth=1.6, label=t["id"] + (" *" if t.get("cache_affected") else ""))
        ymax = max(ymax, *ys)
        temps += [(offset + float(p["t_s"]), p["temperature_c"]) for p in t["series"] if p.get("temperature_c")]
        if i:
            ax.axvline(offset, color="#d0d7de", linewidth=0.8)
        offset = xs[-1] + 0.5
    ax.set_xlim(0, offset)
    positive = [(p.get("read_mbps") or 0) + (p.get("write_mbps") or 0) for t in tests for p in t["series"]]
    positive = [v for v in positive if v > 0]
    if _spans_decades(positive):
        ax.set_yscale("log")
        ax.set_ylim(_log_floor(positive), ymax * 2)
        ax.set_ylabel("MB/s, read + write (log)")
    else:
        ax.set_ylim(0, ymax * 1.15 or 1)
        ax.set_ylabel("MB/s (read + write)")
    ax.set_xlabel("seconds (tests back to back)")
    ax.grid(alpha=0.3)
    _legend_below(ax, len(tests))
    if temps:
        ax2 = ax.twinx()
        ax2.plot([x for x, _ in temps], [c for _, c in temps], color="#cf222e", linestyle="--", linewidth=1.2)
        ax2.set_ylabel("drive °C", color="#cf222e")
    ax.set_title(f"Run #{doc['run']['id']}: throughput over time", loc="left")
    return fig


def bar_chart(docs: list[dict[str, Any]], metric: str, title: str, test_filter: ChartFilter) -> str | None:
    return _svg(bar_figure(_chart_text(docs), metric, title, test_filter))


def latency_chart(docs: list[dict[str, Any]]) -> str | None:
    return _svg(latency_figure(_chart_text(docs)))


def pct_of_reference_chart(docs: list[dict[str, Any]]) -> str | None:
    return _svg(pct_of_reference_figure(_chart_text(docs)))


def chain_chart(device: dict[str, Any]) -> str | None:
    return _svg(chain_figure(_chart_text(device)))


def timeline_chart(doc: dict[str, Any]) -> str | None:
    return _svg(timeline_figure(_chart_text(doc)))


def _judged(fill: dict[str, Any]) -> bool:
    from disksleuth.analysis.sustained import MIN_PHASE_POINTS

    return bool(fill.get("judged", len(fill.get("points") or []) >= 2 * MIN_PHASE_POINTS))


def _average_mbps(points: list[dict[str, Any]], start: int = 0, end: int | None = None) -> float:
    """The time-weighted mean of the plotted windows points[start:end]: the level the curve itself shows."""
    end = len(points) if end is None else end
    total = seconds = 0.0
    for i in range(start, end):
        dt = points[i]["t_s"] - (points[i - 1]["t_s"] if i else 0.0)
        total, seconds = total + points[i]["mbps"] * dt, seconds + dt
    return total / seconds if seconds > 0 else 0.0


def fill_levels(fill: dict[str, Any]) -> list[tuple[int, int, float, str]]:
    """(start bytes, end bytes, MB/s, label) for each shaded span: the phases, each at the mean of the windows
    drawn inside it, so a label never claims a level the curve does not show (runs stored before the curve's
    rates were anchored to fio's totals too). A fill too short to judge is one span labelled as an average."""
    points = fill.get("points") or []
    if not points:
        return []
    if not _judged(fill):
        level = _average_mbps(points)
        return [(0, points[-1]["written_bytes"], level, f"{level:,.0f} MB/s average, too short to judge")]
    out = []
    for ph in fill.get("phases") or []:
        inside = [i for i, p in enumerate(points) if ph["start_bytes"] < p["written_bytes"] <= ph["end_bytes"]]
        level = _average_mbps(points, inside[0], inside[-1] + 1) if inside else ph["mbps"]
        out.append((ph["start_bytes"], ph["end_bytes"], level, f"{level:,.0f} MB/s"))
    return out


def sustained_chart(doc: dict[str, Any]) -> str | None:
    """The sustained fill: MB/s against GB written, each phase shaded with its rate, the cliff marked, and the
    drive temperature (placed by the bytes written at its time) on a second axis beside it."""
    fill = doc.get("sustained") or next((t["sustained"] for t in doc.get("tests") or [] if t.get("sustained")), None)
    if not fill or not fill.get("points"):
        return None
    points = fill["points"]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 2.9))
    # Windows of a second or more (issue 37): a burst of a throttle in one 100 ms window is no spike in the chart.
    curve = _per_second(points)
    gb = [p["written_bytes"] / 1e9 for p in curve]
    # Each window's rate over the bytes it wrote (a step from the previous point), from 0.
    ax.plot([0.0, *gb], [curve[0]["mbps"]] + [p["mbps"] for p in curve], color="#0969da", linewidth=1,
            drawstyle="steps-pre", label="write MB/s")
    shades = ("#ddf4ff", "#fff8c5", "#ffebe9", "#dafbe1")
    for i, (x0, x1, level, label) in enumerate(fill_levels(fill)):
        ax.axvspan(x0 / 1e9, x1 / 1e9, color=shades[i % len(shades)], alpha=0.8, zorder=0)
        ax.hlines(level, x0 / 1e9, x1 / 1e9, colors="#1b1f24", linestyles=":", linewidth=1)
        ax.annotate(label, ((x0 + x1) / 2e9, level), xytext=(0, 4),
                    textcoords="offset points", ha="center", fontsize=SMALL_PT)
    if fill.get("cliff_at_bytes") is not None:
        x = fill["cliff_at_bytes"] / 1e9
        what = "thermal throttling" if fill.get("cause") == "thermal" else "cache exhausted"
        ax.axvline(x, color="#cf222e", linewidth=1.2)
        ax.annotate(f"{what} at {x:,.2f} GB", (x, ax.get_ylim()[1]), xytext=(4, -12), textcoords="offset points",
                    color="#cf222e", fontsize=SMALL_PT)
    temps = fill.get("temperature_series") or []
    if temps:
        # A temperature reading's place on the byte axis: the bytes written by its time.
        ts: list[float] = [p["t_s"] for p in points]
        bs: list[int] = [p["written_bytes"] for p in points]

        def at(t: float) -> float:
            for j, tj in enumerate(ts):
                if tj >= t:
                    t0, b0 = (ts[j - 1], bs[j - 1]) if j else (0.0, 0)
                    return (b0 + (bs[j] - b0) * ((t - t0) / (tj - t0) if tj > t0 else 1.0)) / 1e9
            return bs[-1] / 1e9

        ax2 = ax.twinx()
        ax2.plot([at(t["t_s"]) for t in temps], [t["temperature_c"] for t in temps], color="#bc4c00",
                 linestyle="--", linewidth=1, label="temperature °C")
        if fill.get("temperature_warning_c") is not None:
            ax2.axhline(fill["temperature_warning_c"], color="#bc4c00", linestyle=":", linewidth=0.8)
        ax2.set_ylabel("°C", color="#bc4c00")
    ax.set_xlabel("GB written")
    ax.set_ylabel("MB/s")
    ax.set_xlim(0, gb[-1])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    title = f"Run #{doc['run']['id']}: sustained write"
    if not _judged(fill):
        title += f": too short to judge ({_average_mbps(points):,.0f} MB/s average)"
    elif fill.get("burst_mbps") is not None and fill.get("cliff_at_bytes") is not None:
        title += f": {fill['burst_mbps']:,.0f} MB/s, then {fill['sustained_mbps']:,.0f} MB/s"
    ax.set_title(title)
    return _svg(fig)


# Charts drawn once for all runs, then once per run. A new chart is one function added here.
ACROSS_RUNS_CHARTS: list[Callable[[list[dict[str, Any]]], str | None]] = [
    lambda docs: bar_chart(docs, "read_mbps", "Sequential read MB/s", _seq),
    lambda docs: bar_chart(docs, "write_mbps", "Sequential write MB/s", _seq),
    lambda docs: bar_chart(docs, "read_iops", "Random read IOPS", _rnd),
    lambda docs: bar_chart(docs, "write_iops", "Random write IOPS", _rnd),
    latency_chart,
    pct_of_reference_chart,
]
RUN_CHARTS: list[Callable[[dict[str, Any]], str | None]] = [timeline_chart, sustained_chart]


def _seq(t: dict[str, Any]) -> bool:
    return (t.get("bs_bytes") or 0) >= 128 * 1024


def _rnd(t: dict[str, Any]) -> bool:
    return not _seq(t)


# --- HTML -------------------------------------------------------------------------------------


def _e(v: Any) -> str:
    # Stored text (target, tags, note, messages) can carry escape sequences and bidi overrides: shown as
    # visible escapes, as on the terminal, so `cat report.html` or a browser cannot be steered by them.
    return html.escape(safe_text("" if v is None else v, markup=False))


def _num(v: Any, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else "—"


def _stability(t: dict[str, Any]) -> str:
    parts = []
    if isinstance(t.get("ci95_pct"), (int, float)):
        parts.append(f"±{t['ci95_pct']:.1f}% (95%)")
    if t.get("settled") is False:
        parts.append("not settled" + (f" (spread {t['stability_pct']:.0f}%)" if t.get("stability_pct") else ""))
    elif t.get("settled") is True:
        parts.append("settled")
    return ", ".join(parts) or "fixed length"


def _pct_ref(t: dict[str, Any]) -> str:
    pct = t.get("pct_of_reference") or {}
    return " · ".join(f"{k.split('_')[0]} {v:,.0f}%" for k, v in pct.items() if k.endswith("mbps")) or "—"


def _tests_table(doc: dict[str, Any]) -> str:
    tests = doc.get("tests") or []
    has_ref = any(t.get("pct_of_reference") for t in tests)
    head = ["test", "read MB/s", "write MB/s", "read IOPS", "write IOPS", "mean µs", "p50 µs", "p99 µs", "p99.9 µs",
            "max µs", "stability"]
    if has_ref:
        head.append("% of RAM ref")
    rows = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for t in tests:
        cells = [
            _e(t["id"]),
            _num(t.get("read_mbps"), 1),
            _num(t.get("write_mbps"), 1),
            _num(t.get("read_iops")),
            _num(t.get("write_iops")),
            _num(t.get("lat_mean_us"), 1),
            _num(t.get("lat_p50_us"), 1),
            _num(t.get("lat_p99_us"), 1),
            _num(t.get("lat_p999_us"), 1),
            _num(t.get("lat_max_us")),  # whole µs, as the terminal table shows it
            _e(_stability(t)),
        ]
        if has_ref:
            cells.append(_e(_pct_ref(t)))
        cls = " class='cache'" if t.get("cache_affected") else ""
        rows.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        for d in ("read", "write"):
            if t.get(f"{d}_lat_p50_us") is None:
                continue
            lat = [_num(t.get(f"{d}_lat_{k}_us"), 1) for k in ("mean", "p50", "p99", "p999")]
            lat.append(_num(t.get(f"{d}_lat_max_us")))
            sub = [f"└ {d} latency", "", "", "", "", *lat, ""] + ([""] if has_ref else [])
            rows.append("<tr class='sub'>" + "".join(f"<td>{c}</td>" for c in sub) + "</tr>")
    rows.append("</table>")
    return "".join(rows)


def _without_skipped_word(note: str) -> str:
    """'skipped write tests: X' under the heading "Skipped:" reads 'write tests: X', not the word twice."""
    return note[len("skipped ") :] if note.lower().startswith("skipped ") else note


def _caveats(doc: dict[str, Any]) -> str:
    items = []
    held = limited_tests(doc)  # issue 36: figures a cgroup I/O limit held measure the limit, not RAM nor a device
    if held:
        items.append(
            f"<b>cgroup I/O limit:</b> a limit the run was under held {_e(', '.join(held))} (see io_limit): those "
            "figures measure the limit, not the device."
        )
    if is_memory_backed(doc):
        unheld = [t.get("id") for t in doc.get("tests") or [] if t.get("id") not in held]
        if not held:
            items.append("<b>Memory-backed target:</b> these figures measure RAM, not a storage device.")
        elif unheld:
            items.append(f"<b>Memory-backed target:</b> the other figures ({_e(', '.join(map(str, unheld)))}) "
                         "measure RAM, not a storage device.")  # fmt: skip
        else:
            items.append("<b>Memory-backed target:</b> not a storage device; what it holds is lost at power-off.")
    cached = [t["id"] for t in doc.get("tests") or [] if t.get("cache_affected")]
    if cached:
        items.append(
            f"<b>Cache-affected (*):</b> {_e(', '.join(cached))} went through the page cache or memory, not the medium."
        )
    items += [f"<b>Skipped:</b> {_e(_without_skipped_word(n))}" for n in skipped_notes(doc)]
    unsettled = [t["id"] for t in unsettled_tests(doc)]
    if unsettled:
        targets = [t.get("precision_target_pct") for t in unsettled_tests(doc)]
        if all(target is not None for target in targets):
            items.append(
                f"<b>Not within ±{targets[0]:g}%:</b> {_e(', '.join(unsettled))} did not reach ±{targets[0]:g}% in "
                "the time they had: their 95% intervals, in the table, are wider."
            )
        else:  # stored before precision targets: settled meant the rate had stopped moving
            items.append(
                f"<b>Not settled:</b> {_e(', '.join(unsettled))} still moved at the end of the test: "
                "treat those figures as approximate (their notes below say by how much)."
            )
    other = [n for n in (doc.get("run") or {}).get("notes") or [] if n not in skipped_notes(doc)]
    items += [_e(n) for n in other]
    for t in doc.get("tests") or []:
        # A test's "did not reach ±3%" note is what the line above says of it, and its interval is in the table.
        notes = [n for n in t.get("notes") or [] if not (unsettled and str(n).startswith(NOT_REACHED))]
        items += [f"{_e(t['id'])}: {_e(n)}" for n in notes]
    changes = ((doc.get("health") or {}).get("changes")) or {}
    for key, (before, after) in changes.items():
        items.append(f"<b>Health counter changed during the run:</b> {_e(key)} {_e(before)} → {_e(after)}")
    if not items:
        return ""
    return "<div class='caveats'><b>Caveats</b><ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul></div>"


def _reference_table(doc: dict[str, Any]) -> str:
    ref = doc.get("reference") or []
    if not ref:
        return ""
    rows = "".join(
        f"<tr><td>{_e(t['id'])}</td><td>{_num(t.get('read_mbps'), 1)}</td><td>{_num(t.get('write_mbps'), 1)}</td>"
        f"<td>{_num(t.get('read_iops'))}</td><td>{_num(t.get('write_iops'))}</td></tr>"
        for t in ref
    )
    return (
        "<h3>RAM-disk reference</h3><p class='muted'>The same tests on a RAM-backed target on this host; "
        "the % column above divides by these.</p><table><tr><th>test</th><th>read MB/s</th><th>write MB/s</th>"
        f"<th>read IOPS</th><th>write IOPS</th></tr>{rows}</table>"
    )


def _findings(doc: dict[str, Any]) -> str:
    return "".join(
        f"<div class='finding {_e(f.get('severity'))}'><span class='code'>{_e(f.get('code'))}</span> "
        f"({_e(f.get('severity'))}): {_e(f.get('message'))}"
        + (f"<br><b>fix:</b> {_e(f['hint'])}" if f.get("hint") else "")
        + "</div>"
        for f in doc.get("findings") or []
    )


def _badges(doc: dict[str, Any]) -> str:
    return "".join(f"<span class='badge {cls}'>{_e(text)}</span>" for cls, text in run_badges(doc))


def _run_section(doc: dict[str, Any], history: History | None = None) -> str:
    run, device = doc["run"], doc.get("device") or {}
    title = device.get("model") or run.get("device") or run["target"]
    parts = [f"<section><h2>Run #{run['id']}: {_e(title)}{_badges(doc)}</h2>"]
    host = run.get("host") or {}
    parts.append(
        f"<p class='muted'>{_e(run['started_at'])} · {_e(run['kind'])} · profile {_e(run['profile'])} · target "
        f"{_e(run['target'])} · {_e(run.get('fio_version'))}, engine {_e(run.get('engine'))} · host "
        f"{_e(host.get('hostname'))} ({_e(host.get('kernel'))})"
        + (f" · {fmt_size(run['size_bytes'])} tested" if run.get("size_bytes") else "")
        + (f" · tags: {_e(', '.join(run.get('tags') or []))}" if run.get("tags") else "")
        + "</p>"
    )
    if run.get("note"):
        parts.append(f"<p>{_e(run['note'])}</p>")
    if doc.get("summary"):
        parts.append(f"<p class='summary'>{_e(doc['summary'])}</p>")
    parts.append(_findings(doc))
    parts.append(_caveats(doc))
    chain = chain_chart(device)
    if chain:
        parts.append(f"<h3>Link chain, device to CPU</h3><div class='chart'>{chain}</div>")
    card = card_lines(device.get("card"))  # an SD card's or eMMC's claims and wear (issue 39)
    if card:
        parts.append("<p class='muted'>Card: " + "<br>".join(_e(line) for line in card) + "</p>")
    link = device.get("link")  # non-zero PCIe error counters on the path (issue 36)
    aer = stored_aer_lines((link.get("hops") if isinstance(link, dict) else None) or [])
    if aer:
        shown = "<br>".join(_e(line) for line in aer)
        parts.append(f"<p class='muted'>PCIe errors since boot, as read when the run ended:<br>{shown}</p>")
    if isinstance(device.get("stack"), dict):  # issue 24: the array under the target, each member's link and state
        lines = "\n".join(_e(line) for line in tree_lines(device["stack"]))
        parts.append(f"<h3>Storage stack</h3><pre>{lines}</pre>")
    if isinstance(device.get("members"), list) and device["members"]:  # check on an array, bench --members
        lines = "\n".join(_e(line) for line in member_lines(device))
        parts.append(f"<h3>Members, read-only sequential reads</h3><pre>{lines}</pre>")
    if doc.get("tests") or not device.get("members"):  # bench --members has no tests of its own
        parts.append(_tests_table(doc))
    parts.append(_reference_table(doc))
    parts += [f"<div class='chart'>{svg}</div>" for chart in RUN_CHARTS if (svg := chart(doc))]
    if history is not None:
        parts.append(history_html(history, str(run.get("device") or device.get("model") or run["target"])))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _runs_table(docs: list[dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>#{d['run']['id']}</td><td>{_e(', '.join(map(str, d['run'].get('tags') or [])) or '—')}</td>"
        f"<td>{_e(d['run'].get('note') or '—')}</td><td>{_e(d['run'].get('started_at'))}</td>"
        f"<td>{_e((d.get('device') or {}).get('model') or d['run'].get('device') or d['run'].get('target'))}</td>"
        f"<td>{_e(d['run'].get('profile'))}</td><td>{_e(d['run'].get('target'))}</td><td>{_badges(d) or '—'}</td></tr>"
        for d in docs
    )
    return (
        "<table><tr><th>run</th><th>tags</th><th>note</th><th>started</th><th>device</th><th>profile</th><th>target</th><th>caveats</th></tr>"
        f"{rows}</table>"
    )


def _path_changes(docs: list[dict[str, Any]]) -> str:
    """What changed on the path from the first run to each other one, and whether it explains the figures:
    compare's words (analysis.pathdiff), so the report and `compare` say the same of the same runs."""
    from disksleuth.analysis.compare import compare
    from disksleuth.analysis.pathdiff import (
        COLUMNS_HEADING,
        EXPLAIN_HEADING,
        by_column,
        change_line,
        pair_heading,
        path_columns,
    )

    if len(docs) < 2:
        return ""
    c = compare(docs)
    parts: list[str] = []
    columns = path_columns(c.paths, c.run_ids, c.baseline)
    if by_column(c.paths) and columns:
        head = "".join(f"<th>#{rid}</th>" for rid in c.run_ids)
        rows = "".join(
            f"<tr><td>{_e(what)}</td><td>{_e(hop)}</td>" + "".join(f"<td>{_e(v)}</td>" for v in values) + "</tr>"
            for what, hop, values in columns
        )
        parts.append(f"<h3>{_e(COLUMNS_HEADING)}</h3><table><tr><th>what</th><th>hop</th>{head}</tr>{rows}</table>")
    elif not by_column(c.paths):
        for p in c.paths:
            if p.changes:
                items = "".join(f"<li>{_e(change_line(x))}</li>" for x in p.changes)
                parts.append(f"<h3>{_e(pair_heading(p))}</h3><ul>{items}</ul>")
    explanations = [e for p in c.paths for e in p.explanations]
    if explanations:
        items = "".join(f"<li>{_e(e.text)}</li>" for e in explanations)
        parts.append(f"<h3>{_e(EXPLAIN_HEADING)}</h3><ul>{items}</ul>")
    return "\n".join(parts)


def render_report(docs: list[dict[str, Any]], histories: Sequence[History] = ()) -> str:
    """The report of `docs`; `histories` (run/baseline.report_histories) adds each drive's history charts
    to the section of the run it ends with."""
    title = "disksleuth report: " + ", ".join(f"#{d['run']['id']}" for d in docs)
    body = [f"<h1>{_e(title)}</h1>", "<section><h2>Across runs</h2>", _runs_table(docs), _path_changes(docs)]
    body += [f"<div class='chart'>{svg}</div>" for chart in ACROSS_RUNS_CHARTS if (svg := chart(docs))]
    body.append("</section>")
    by_run = {h.run_id: h for h in histories}
    body += [_run_section(d, by_run.get(d["run"]["id"])) for d in docs]
    page = (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
    # Every part escapes its stored names (_e), and the page is still passed through the terminal's own
    # neutraliser, line by line: a name that reached a part unescaped (the history heading carried ESC and BEL,
    # issue 35 §13) shows as the terminal shows it, never as a raw control byte in the file.
    return "\n".join(safe_text(line, markup=False) for line in page.split("\n"))
