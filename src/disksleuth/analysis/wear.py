"""Wear forecast (pure): the rate a drive's endurance is used at, from its stored readings, and the date it reaches
100%; `health_worn` told with that date.

The figure is NVMe's percentage_used, or a SATA/SAS wear indicator as Health.percentage_used gives it (ATA 177
Wear_Leveling_Count, 231 SSD_Life_Left, 233 Media_Wearout_Indicator, 202 Percent_Lifetime_Remain, the Device
Statistics' Percentage Used Endurance Indicator). It moves in whole percents, so the rate is a least-squares line
through every reading over at least MIN_SPAN_DAYS, never the difference of two. Data written and read (the
`wear.` counters of each reading) give the write rate over the same readings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace

from disksleuth.model import Finding
from disksleuth.model.health_history import HealthReading
from disksleuth.model.run import Health
from disksleuth.model.wear import WearForecast

DAY_S = 86_400.0
MIN_SPAN_DAYS = 1.0  # readings closer than a day say nothing about a rate in whole percents
MAX_DAYS_LEFT = 100 * 365.0  # beyond a century the "date" is noise: said as no measurable wear
WRITTEN_KEY = "wear.data_written_bytes"
READ_KEY = "wear.data_read_bytes"
TB = 1e12

# Words a user sees, in one place.
WHEN_HISTORY = "At the rate of the last {span} days ({rate}), it reaches 100% around {date} (in about {days} days)."
WHEN_PAST = "It is at or past its rated endurance now."
WHEN_NO_WEAR = "No measurable wear in {span} of readings."
WHEN_NO_WEAR_LIFETIME = "No measurable wear in its {hours:,} power-on hours."
WHEN_LIFETIME = (
    "At its lifetime average ({pct}% in {hours:,} power-on hours), 100% comes after about {days} more days of "
    "running (a history of readings gives a date: disksleuth health, check and the exporter keep them)."
)
WRITTEN = "{written} written, {read} read over its life"
WRITE_RATE = "{rate}/day written lately"


def wear_counters(health: Health) -> dict[str, int]:
    """What a stored reading keeps of the data moved (not warning signs: kept beside the counters)."""
    out = {}
    if health.data_written_bytes is not None:
        out[WRITTEN_KEY] = health.data_written_bytes
    if health.data_read_bytes is not None:
        out[READ_KEY] = health.data_read_bytes
    return out


def _slope_per_day(points: Sequence[tuple[float, float]]) -> float | None:
    """Least-squares slope of value over time (seconds), per day."""
    n = len(points)
    if n < 2:
        return None
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var <= 0:
        return None
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / var * DAY_S


def _rate(readings: Sequence[HealthReading], key: str) -> float | None:
    pts = [(r.read_at_s, r.counters[key]) for r in readings if key in r.counters]
    if len(pts) < 2 or pts[-1][0] - pts[0][0] < MIN_SPAN_DAYS * DAY_S or pts[-1][1] < pts[0][1]:
        return None  # too short, or another drive's (or a reset) counter
    return (pts[-1][1] - pts[0][1]) / ((pts[-1][0] - pts[0][0]) / DAY_S)


def forecast_wear(health: Health, readings: Sequence[HealthReading]) -> WearForecast | None:
    """The forecast from the drive's readings (oldest first, the current one last); None when the drive reports
    neither wear nor data written."""
    # A negative share (hostile or garbled smartctl JSON gave -7%) is no figure: it forecast "-637 more days".
    pct = health.percentage_used if health.percentage_used is None or health.percentage_used >= 0 else None
    if pct is None and health.data_written_bytes is None:
        return None
    readings = sorted(readings, key=lambda r: r.read_at_s)
    base = WearForecast(
        basis="none",
        percentage_used=pct,
        data_written_bytes=health.data_written_bytes,
        data_read_bytes=health.data_read_bytes,
        written_bytes_per_day=_rate(readings, WRITTEN_KEY),
        read_bytes_per_day=_rate(readings, READ_KEY),
    )
    if pct is None:
        return base
    pts = [
        (r.read_at_s, float(r.percentage_used))
        for r in readings
        if r.percentage_used is not None and r.percentage_used >= 0
    ]
    span_days = (pts[-1][0] - pts[0][0]) / DAY_S if len(pts) >= 2 else 0.0
    if span_days >= MIN_SPAN_DAYS:
        slope = _slope_per_day(pts)
        now_s = pts[-1][0]
        hist = replace(base, basis="history", readings=len(pts), span_days=span_days, pct_per_day=slope)
        if pct >= 100:
            return replace(hist, days_left=0.0, projected_full_at_s=now_s)
        if slope is None or slope <= 0 or max(v for _, v in pts) == min(v for _, v in pts):
            return replace(hist, pct_per_day=0.0, no_wear_days=span_days)
        days_left = (100 - pct) / slope
        if days_left > MAX_DAYS_LEFT:
            return replace(hist, no_wear_days=span_days)
        return replace(hist, days_left=days_left, projected_full_at_s=now_s + days_left * DAY_S)
    hours = health.power_on_hours
    if pct >= 100:
        return replace(base, basis="lifetime", readings=1, days_left=0.0)
    if hours and hours > 0:
        per_day = pct / (hours / 24)
        if pct == 0:  # a whole life without a percent of wear
            return replace(base, basis="lifetime", readings=1, pct_per_day=0.0, no_wear_days=hours / 24)
        return replace(base, basis="lifetime", readings=1, pct_per_day=per_day, days_left=(100 - pct) / per_day)
    return base


def _fmt_bytes(n: float) -> str:
    return f"{n / TB:,.2f} TB" if n >= TB / 10 else f"{n / 1e9:,.1f} GB"


def _rate_text(pct_per_day: float) -> str:
    per_month = pct_per_day * 30
    return f"{per_month:.2f}% a month" if per_month < 10 else f"{per_month:.0f}% a month"


def forecast_text(f: WearForecast, power_on_hours: int | None = None) -> str | None:
    """When the drive reaches 100%, in one sentence; None when nothing can be said."""
    if f.days_left == 0:
        return WHEN_PAST
    if f.basis == "history":
        span = f"{f.span_days:,.0f}"
        if f.days_left is None or f.projected_full_at_s is None or not f.pct_per_day:
            return WHEN_NO_WEAR.format(span="1 day" if span == "1" else f"{span} days")  # not "1 days"
        date = dt.datetime.fromtimestamp(f.projected_full_at_s, dt.UTC).strftime("%Y-%m-%d")
        return WHEN_HISTORY.format(span=span, rate=_rate_text(f.pct_per_day), date=date, days=f"{f.days_left:,.0f}")
    if f.basis == "lifetime" and power_on_hours:
        if f.no_wear_days is not None:
            return WHEN_NO_WEAR_LIFETIME.format(hours=power_on_hours)
        if f.days_left is not None:
            return WHEN_LIFETIME.format(pct=f.percentage_used, hours=power_on_hours, days=f"{f.days_left:,.0f}")
    return None


def data_text(f: WearForecast) -> str | None:
    """ "12.34 TB written, 56.78 TB read over its life; 25.3 GB/day written lately"."""
    if f.data_written_bytes is None:
        return None
    read = _fmt_bytes(f.data_read_bytes) if f.data_read_bytes is not None else "unknown"
    text = WRITTEN.format(written=_fmt_bytes(f.data_written_bytes), read=read)
    if f.written_bytes_per_day is not None:
        text += "; " + WRITE_RATE.format(rate=_fmt_bytes(f.written_bytes_per_day))
    return text


def with_forecast(findings: Sequence[Finding], f: WearForecast | None, power_on_hours: int | None) -> list[Finding]:
    """`health_worn` says when: the forecast in its message and evidence."""
    if f is None:
        return list(findings)
    when = forecast_text(f, power_on_hours)
    out = []
    for finding in findings:
        if finding.code == "health_worn":
            evidence = {**finding.evidence, "forecast": f.to_dict()}
            message = f"{finding.message} {when}" if when else finding.message
            finding = replace(finding, message=message, evidence=evidence)
        out.append(finding)
    return out
