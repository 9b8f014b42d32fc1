"""Siblings (pure): drives of the same model and firmware in a shared store, compared with each other.

`unlike_siblings` when a drive's figure or link ceiling is an outlier among its siblings by robust
statistics: its distance from their median is more than OUTLIER_Z robust standard deviations (1.4826 x
the median absolute deviation, MAD; Iglewicz and Hoaglin's modified z-score) and at least MIN_GAP_PCT of
the median, so a tight group does not flag a drive 2% off. Needs at least MIN_SIBLINGS other drives.
Health counters are the health engineer's: `COUNTER_FIGURES` is where they join when stored.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from disksleuth.model import Finding

CODE = "unlike_siblings"
MIN_SIBLINGS = 3  # other drives of the same model and firmware
OUTLIER_Z = 3.5  # modified z-score (Iglewicz & Hoaglin 1993)
MAD_TO_SD = 1.4826  # MAD x this estimates the standard deviation of normal data
MIN_GAP_PCT = 10.0

# figure -> (words, unit, higher is better)
FIGURES: dict[str, tuple[str, str, bool]] = {
    "seq_read_mbps": ("sequential read", "MB/s", True),
    "seq_write_mbps": ("sequential write", "MB/s", True),
    "ceiling_mbps": ("link ceiling", "MB/s", True),
}
COUNTER_FIGURES: dict[str, tuple[str, str, bool]] = {}  # hook: health counters (lower is better) join here


@dataclass(frozen=True)
class Drive:
    """One drive's newest figures: where it is (host, device), what it is (model, firmware)."""

    host: str
    device: str
    model: str | None
    firmware: str | None
    figures: Mapping[str, float | None] = field(default_factory=dict)
    serial_id: str | None = None  # the same drive seen under two names is one drive, not two siblings

    @property
    def key(self) -> tuple[str, str]:
        return (self.host, self.device)

    @property
    def group(self) -> tuple[str, str] | None:
        return (self.model, self.firmware) if self.model and self.firmware else None


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def judge_drive(drive: Drive, siblings: Sequence[Drive]) -> list[Finding]:
    """`drive` among `siblings` (other drives of its model and firmware; itself left out by the caller)."""
    others = [s for s in siblings if s.key != drive.key and (not drive.serial_id or s.serial_id != drive.serial_id)]
    out: list[Finding] = []
    if drive.group is None or len(others) < MIN_SIBLINGS:
        return out
    for name, (words, unit, higher_better) in {**FIGURES, **COUNTER_FIGURES}.items():
        value = drive.figures.get(name)
        values = [v for s in others if isinstance(v := s.figures.get(name), (int, float))]
        if not isinstance(value, (int, float)) or len(values) < MIN_SIBLINGS:
            continue
        median = statistics.median(values)
        mad = statistics.median(abs(v - median) for v in values)
        gap = value - median
        robust_sd = MAD_TO_SD * mad
        z = abs(gap) / robust_sd if robust_sd > 0 else float("inf") if gap else 0.0
        gap_pct = 100.0 * abs(gap) / median if median else float("inf")
        if z <= OUTLIER_Z or gap_pct < MIN_GAP_PCT:
            continue
        worse = (gap < 0) == higher_better
        way = "below" if gap < 0 else "above"
        message = (
            f"{drive.device} on {drive.host}: {words} {_fmt(value)} {unit} is {gap_pct:.0f}% {way} its "
            f"{len(values)} siblings ({drive.model}, firmware {drive.firmware}: median {_fmt(median)} {unit}, "
            f"MAD {_fmt(mad)} {unit})."
        )
        hint = (
            "Drives of one model and firmware should measure alike. Compare how this one is attached (the link "
            "chain: slot, cable, port speed), how full it is, its health and temperature, and whether it was "
            "measured the same way (profile, target)."
            if worse
            else "Better than its siblings: check the siblings' links and health, or whether this one was measured "
            "differently (a smaller target, a cache)."
        )
        evidence = {
            "figure": name,
            "value": value,
            "siblings": len(values),
            "median": median,
            "mad": mad,
            "modified_z": None if z == float("inf") else round(z, 2),
            "gap_pct": round(gap_pct, 1),
            "model": drive.model,
            "firmware": drive.firmware,
            "sibling_devices": [f"{s.host}:{s.device}" for s in others if s.figures.get(name) is not None],
        }
        out.append(Finding(CODE, "warn" if worse else "info", message, evidence, hint, drive.device))
    return out


def judge_fleet(drives: Sequence[Drive]) -> dict[tuple[str, str], list[Finding]]:
    """Every drive among the drives of its model and firmware: {(host, device): findings}."""
    groups: dict[tuple[str, str], list[Drive]] = {}
    for d in drives:
        if d.group is not None:
            groups.setdefault(d.group, []).append(d)
    out: dict[tuple[str, str], list[Finding]] = {}
    for members in groups.values():
        for d in members:
            found = judge_drive(d, members)
            if found:
                out[d.key] = found
    return out
