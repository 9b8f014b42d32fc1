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
