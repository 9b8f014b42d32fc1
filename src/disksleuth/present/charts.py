"""Chart helpers shared by the report's modules (report.py, report_history.py): matplotlib set up for inline
SVG at the size a chart is shown, its colours, and stored text made safe to draw."""

from __future__ import annotations

import io
import math
from typing import Any

CHART_WIDTH_IN = 7.0
FONT_PT = 9
SMALL_PT = 8  # the smallest text in any chart: ticks, value labels

# Colour-blind-safe colours (Okabe & Ito, "Color Universal Design", 2008), without their yellow,
# which vanishes on white paper.
RUN_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#999999")


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 96,
            "font.size": FONT_PT,
            "axes.titlesize": FONT_PT + 1,
            "axes.labelsize": FONT_PT,
            "xtick.labelsize": SMALL_PT,
            "ytick.labelsize": SMALL_PT,
            "legend.fontsize": SMALL_PT,
            "svg.hashsalt": "disksleuth",
            "svg.fonttype": "none",  # text stays text: crisp in print, searchable, a third of the size
        }
    )
    return plt


def svg_of(fig: Any) -> str | None:
    """The figure as inline SVG (None stays None: a chart with nothing to draw is left out)."""
    if fig is None:
        return None
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.05)
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE for inline use


def fmt_value(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:,.1f}"
    return f"{v:,.2f}"


def legend_below(ax: Any, entries: int, footnote: str | None = None) -> None:
    """Legend under the x label, never over the bars; offsets in points so any chart height works."""
    from matplotlib.transforms import ScaledTranslation

    below = ScaledTranslation(0, -42 / 72, ax.figure.dpi_scale_trans)
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(0, 0),
        bbox_transform=ax.transAxes + below,
        ncol=min(entries, 3),
        frameon=False,
        borderaxespad=0,
    )
    if footnote:
        rows = math.ceil(entries / 3)
        ax.annotate(
            footnote,
            (0, 0),
            (0, -44 - 14 * rows),
            xycoords="axes fraction",
            textcoords="offset points",
            va="top",
            fontsize=SMALL_PT,
            color="#9a6700",
            gid="footnote",
        )


def chart_text(value: Any) -> Any:
    """Stored text (test ids, host names, hop labels: importable, so anyone's) as a chart shows it: control
    characters as visible escapes, the way the terminal views show them. A raw ESC or BEL is a glyph no font
    has, and matplotlib's warning about it printed the character itself on stderr. Newlines stay (labels wrap)."""
    from disksleuth.present.text import safe_text

    if isinstance(value, str):
        return "\n".join(safe_text(line, markup=False) for line in value.split("\n"))
    if isinstance(value, dict):
        return {key: chart_text(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(chart_text(item) for item in value)
    return value


PER_SECOND_S = 1.0


def per_second(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A sustained fill's points (each window's end `t_s`, `written_bytes` by then, its `mbps`) summed into stretches
    of at least PER_SECOND_S, each at its bytes over its time, as the tests' series are (analysis/completions.py).
    fio's 100 ms bandwidth windows count a burst of the throttle too many or too few: the recorded fill held at
    120 MB/s drew windows of 188 and 198 MB/s (tests/data/series/sustained-flat.json). A last stretch shorter than
    that joins the one before it. The phases are still found on the windows themselves (analysis/sustained.py)."""
    out: list[dict[str, Any]] = []
    start_t, start_b = 0.0, 0  # the first window starts at 0 (analysis/sustained.fill_points)
    for i, p in enumerate(points):
        span = p["t_s"] - start_t
        if span < PER_SECOND_S and i < len(points) - 1:
            continue
        if span < PER_SECOND_S and out:
            last = out.pop()
            start_t, start_b = last["t_s"] - last["span_s"], last["written_bytes"] - last["bytes"]
            span = p["t_s"] - start_t
        if span <= 0:
            continue
        done = p["written_bytes"] - start_b
        out.append({**p, "mbps": done / span / 1e6, "span_s": span, "bytes": done})
        start_t, start_b = p["t_s"], p["written_bytes"]
    return [{k: v for k, v in p.items() if k not in ("span_s", "bytes")} for p in out]
