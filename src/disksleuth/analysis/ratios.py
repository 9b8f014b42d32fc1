"""A ratio as every comparison prints it (compare's table, its path explanations, the report)."""

from __future__ import annotations


def format_ratio(ratio: float | None) -> str:
    """Always a multiple of the baseline, so a column holds one unit: 0.62x, 1.00x, 3.33x, 312x (never a
    % change beside a x-ratio, and never "-0%")."""
    if ratio is None:
        return "—"
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    if ratio >= 0.01 or ratio == 0:
        return f"{ratio:.2f}x"
    return f"{ratio:.2g}x"
