"""Siblings (pure): drives of the same model and firmware in a shared store, compared with each other.

`unlike_siblings` when a drive's figure or link ceiling is an outlier among its siblings by robust
statistics: its distance from their median is more than OUTLIER_Z robust standard deviations (1.4826 x
the median absolute deviation, MAD; Iglewicz and Hoaglin's modified z-score) and at least MIN_GAP_PCT of
the median, so a tight group does not flag a drive 2% off. Needs at least MIN_SIBLINGS other drives.
Health counters are the health engineer's: `COUNTER_FIGURES` is where they join when stored.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

from disksleuth.model import Finding

CODE = "unlike_siblings"
MIN_SIBLINGS = 3  # other drives of the same model and firmware
OUTLIER_Z = 3.5  # modified z-score (Iglewicz & Hoaglin 1993)
MAD_TO_SD = 1.4826  # MAD x this estimates the standard deviation of normal data
MIN_GAP_PCT = 10.0
SIBLINGS_NAMED = 20  # siblings named in a finding's evidence (sibling_devices); `siblings` counts them all

# figure -> (words, unit, higher is better)
FIGURES: dict[str, tuple[str, str, bool]] = {
    "seq_read_mbps": ("sequential read", "MB/s", True),
    "seq_write_mbps": ("sequential write", "MB/s", True),
    "ceiling_mbps": ("link ceiling", "MB/s", True),
}
COUNTER_FIGURES: dict[str, tuple[str, str, bool]] = {}  # hook: health counters (lower is better) join here


class Drive(NamedTuple):
    """One drive's newest figures: where it is (host, device), what it is (model, firmware). A NamedTuple, not
    a frozen dataclass: `fleet` makes one per device, and 24,000 frozen dataclasses took 60 ms to build."""

    host: str
    device: str
    model: str | None
    firmware: str | None
    figures: Mapping[str, float | None] = MappingProxyType({})
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
    for name in {**FIGURES, **COUNTER_FIGURES}:
        value = drive.figures.get(name)
        values = [v for s in others if isinstance(v := s.figures.get(name), (int, float))]
        if not isinstance(value, (int, float)) or len(values) < MIN_SIBLINGS:
            continue
        median = statistics.median(values)
        mad = statistics.median(abs(v - median) for v in values)
        named = [f"{s.host}:{s.device}" for s in others if s.figures.get(name) is not None][:SIBLINGS_NAMED]
        found = _judged(drive, name, value, median, mad, len(values), named.copy)
        if found:
            out.append(found)
    return out


def _judged(
    drive: Drive, name: str, value: float, median: float, mad: float, count: int, named: Callable[[], list[str]]
) -> Finding | None:
    """The finding for one figure of `drive` against its siblings' median and MAD, None when it is not an outlier.
    `named` lists the siblings with the figure ("host:device"), asked only for a finding."""
    words, unit, higher_better = {**FIGURES, **COUNTER_FIGURES}[name]
    gap = value - median
    robust_sd = MAD_TO_SD * mad
    z = abs(gap) / robust_sd if robust_sd > 0 else float("inf") if gap else 0.0
    gap_pct = 100.0 * abs(gap) / median if median else float("inf")
    if z <= OUTLIER_Z or gap_pct < MIN_GAP_PCT:
        return None
    worse = (gap < 0) == higher_better
    way = "below" if gap < 0 else "above"
    message = (
        f"{drive.device} on {drive.host}: {words} {_fmt(value)} {unit} is {gap_pct:.0f}% {way} its "
        f"{count} siblings ({drive.model}, firmware {drive.firmware}: median {_fmt(median)} {unit}, "
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
        "siblings": count,
        "median": median,
        "mad": mad,
        "modified_z": None if z == float("inf") else round(z, 2),
        "gap_pct": round(gap_pct, 1),
        "model": drive.model,
        "firmware": drive.firmware,
        "sibling_devices": named(),
    }
    return Finding(CODE, "warn" if worse else "info", message, evidence, hint, drive.device)


def _median_without(ordered: Sequence[float], k: int) -> float:
    """statistics.median of `ordered` (sorted) with its element at index k left out, without copying it."""
    n = len(ordered) - 1

    def at(j: int) -> float:
        return ordered[j if j < k else j + 1]

    return at(n // 2) if n % 2 else (at(n // 2 - 1) + at(n // 2)) / 2


class _Group:
    """One model and firmware's drives, each judged among all the others in O(log n): per figure the sorted
    values once, and the sorted deviations once per leave-one-out median (there are at most three). The same
    medians, MADs and findings as judge_drive, which took O(n) per drive and minutes for a fleet of 24,000."""

    def __init__(self, members: Sequence[Drive]):
        self.members = members
        # per figure: (value, index in members), sorted; the values alone, for the medians
        self._pairs: dict[str, list[tuple[float, int]]] = {}
        for name in {**FIGURES, **COUNTER_FIGURES}:
            # sorted by value, then by place (the index is unique: tuples never compare further)
            pairs = [(v, i) for i, d in enumerate(members) if isinstance(v := d.figures.get(name), (int, float))]
            pairs.sort()
            self._pairs[name] = pairs
        self.values = {name: [v for v, _i in pairs] for name, pairs in self._pairs.items()}
        self._deviations: dict[tuple[str, float], list[float]] = {}
        # Leaving one drive out moves the median by one place at most: it stays between these two values.
        self.bounds = {
            name: (ordered[max(0, len(ordered) // 2 - 1)], ordered[min(len(ordered) - 1, len(ordered) // 2 + 1)])
            for name, ordered in self.values.items()
            if ordered
        }

    def candidates(self) -> list[Drive]:
        """The drives that could be outliers: a figure outside the band that is under MIN_GAP_PCT from every
        median the others could have (the screen in judge, found by bisection rather than drive by drive)."""
        picked: set[int] = set()
        for name, (low, high) in self.bounds.items():
            pairs = self._pairs[name]
            if low <= 0:
                picked.update(i for _v, i in pairs)
                continue
            margin = 1e-9 * low  # a superset: judge applies the exact screen
            below = bisect.bisect_right(pairs, (high - MIN_GAP_PCT / 100.0 * low + margin, len(self.members)))
            above = bisect.bisect_left(pairs, (low + MIN_GAP_PCT / 100.0 * low - margin, -1))
            picked.update(i for _v, i in pairs[:below])
            picked.update(i for _v, i in pairs[above:])
        return [self.members[i] for i in sorted(picked)]

    def _named(self, name: str, drive: Drive) -> list[str]:
        others = (d for d in self.members if d is not drive and d.figures.get(name) is not None)
        return [f"{d.host}:{d.device}" for d in itertools.islice(others, SIBLINGS_NAMED)]

    def judge(self, drive: Drive) -> list[Finding]:
        out: list[Finding] = []
        if drive.group is None or len(self.members) - 1 < MIN_SIBLINGS:
            return out
        for name, ordered in self.values.items():
            value = drive.figures.get(name)
            if not isinstance(value, (int, float)) or len(ordered) - 1 < MIN_SIBLINGS:
                continue
            v = float(value)
            low, high = self.bounds[name]
            if low > 0 and 100.0 * max(abs(v - low), abs(v - high)) / low < MIN_GAP_PCT:
                continue  # under MIN_GAP_PCT from any median it could have: not an outlier, whatever the MAD
            median = _median_without(ordered, bisect.bisect_left(ordered, v))
            deviations = self._deviations.get((name, median))
            if deviations is None:
                deviations = self._deviations[(name, median)] = sorted(abs(x - median) for x in ordered)
            mad = _median_without(deviations, bisect.bisect_left(deviations, abs(v - median)))
            found = _judged(
                drive, name, value, median, mad, len(ordered) - 1, functools.partial(self._named, name, drive)
            )
            if found:
                out.append(found)
        return out


def judge_fleet(drives: Sequence[Drive]) -> dict[tuple[str, str], list[Finding]]:
    """Every drive among the drives of its model and firmware: {(host, device): findings}."""
    groups: dict[tuple[str, str], list[Drive]] = {}
    for d in drives:
        if d.group is not None:
            groups.setdefault(d.group, []).append(d)
    out: dict[tuple[str, str], list[Finding]] = {}
    for members in groups.values():
        fast = _Group(members)
        # A drive seen under two names (or two rows of one name) has fewer siblings than the group: judged alone.
        # Sets first: counting every group's names and serials cost 40 ms at 24,000 drives, and is rarely needed.
        serial_ids = [d.serial_id for d in members if d.serial_id]
        alone = []
        if len({(d.host, d.device) for d in members}) < len(members) or len(set(serial_ids)) < len(serial_ids):
            keys = Counter((d.host, d.device) for d in members)
            serials = Counter(serial_ids)
            alone = [d for d in members if keys[d.key] > 1 or (d.serial_id is not None and serials[d.serial_id] > 1)]
        judged = {id(d): fast.judge(d) for d in fast.candidates()}
        judged.update({id(d): judge_drive(d, members) for d in alone})
        for d in members:  # in the group's order, as before
            if found := judged.get(id(d)):
                out[d.key] = found
    return out
