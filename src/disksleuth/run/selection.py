"""How a person names stored runs on the command line: run ids (12 or #12) and ages (30d, 6mo, 1y)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from disksleuth.errors import UsageError

MAX_RUN_ID = 2**63 - 1  # SQLite's and PostgreSQL's largest integer key


def parse_run_ids(values: Sequence[str]) -> list[int]:
    ids = []
    for v in values:
        shown = v if len(v) <= 40 else v[:37] + "..."
        try:
            run_id = int(v.lstrip("#"))
        except ValueError:
            raise UsageError(f"not a run id: {shown!r} (see `disksleuth runs`)") from None
        if not 1 <= run_id <= MAX_RUN_ID:
            raise UsageError(f"no run {shown} (run ids are whole numbers from 1; see `disksleuth runs`)")
        ids.append(run_id)
    return ids


_DAY_S = 86400
# Only units nobody misreads: `m` is minutes to some and months to others (`--older-than 6m` deleted
# everything older than six minutes from someone who meant six months), so it is refused.
_AGE_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), _DAY_S),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 7 * _DAY_S),
    **dict.fromkeys(("mo", "mon", "mons", "month", "months"), 30 * _DAY_S),
    **dict.fromkeys(("y", "yr", "yrs", "year", "years"), 365 * _DAY_S),
}


def parse_age_s(text: str, option: str = "--older-than") -> float:
    """'30d', '12h', '2w', '90min', '6mo', '1y', '3 days' -> seconds (a bare number is days; a month is 30
    days, a year 365). `option` names the option in the error."""
    shown = text if len(text or "") <= 40 else text[:37] + "..."
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text or "")
    if not m:
        raise UsageError(f"{option} {shown!r}: give an age such as 30d, 12h, 2w, 90min, 6mo or 1y")
    unit = m.group(2).lower()
    if unit == "m":
        number = m.group(1)
        raise UsageError(f"{option} {shown!r}: m could be minutes or months; write {number}min or {number}mo")
    if unit and unit not in _AGE_UNITS:
        raise UsageError(f"{option} {shown!r}: unknown unit {m.group(2)!r}; use min, h, d, w, mo or y")
    value = float(m.group(1)) * _AGE_UNITS[unit or "d"]
    if not math.isfinite(value):
        raise UsageError(f"{option} {shown!r}: too large")
    return value
