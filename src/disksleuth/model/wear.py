"""A drive's wear over time: the rate it wears at and when it reaches 100% of its rated endurance."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class WearForecast:
    """`basis`: "history" (stored readings over `span_days`), "lifetime" (the share used so far over the power-on
    hours, when the history is too short), or "none" (no wear figure at all; only the data written is known)."""

    basis: str
    percentage_used: int | None  # now
    readings: int = 0  # readings the rate was taken from (the current one included)
    span_days: float | None = None  # from the oldest to the newest of them
    pct_per_day: float | None = None  # calendar days for "history", power-on days for "lifetime"
    days_left: float | None = None  # until 100% at that rate; 0 at or past it; None: no measurable wear
    projected_full_at_s: float | None = None  # epoch seconds of 100% ("history" only: the calendar is known)
    no_wear_days: float | None = None  # readings over this many days show no wear at all
    data_written_bytes: int | None = None
    data_read_bytes: int | None = None
    written_bytes_per_day: float | None = None  # over the same readings
    read_bytes_per_day: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
