"""A drive's temperature judged against its own limits, and its heat counters over time (pure; issue 38).

`temperature_high`: warn at the warning limit, critical at the critical one. The limits are the drive's own (NVMe
WCTEMP and CCTEMP, the ATA SCT limits, the SCSI trip temperature); a drive that reports none is judged against a
class default, and the finding says so. `thermal_throttled`: NVMe's time above the warning and critical
temperatures and its thermal-management (throttling) counters grew, during a run or between stored readings; a
drive that ran hot before and has no earlier reading gets it at info. Words: analysis/drive_words.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from disksleuth.analysis import drive_words as words
from disksleuth.model import Finding
from disksleuth.model.health_history import HealthReading
from disksleuth.model.run import Health

# A limit outside this range is no limit: NVMe reports 0 for "none" and some bridges 255 °C (probe/drive_temp.py
# keeps the same range for hwmon's temp1_max / temp1_crit).
PLAUSIBLE_LIMIT_C = (30.0, 150.0)

# Class defaults, for a drive that reports no limit. Datasheet operating maxima: 3.5" hard disks 60 °C (Seagate
# BarraCuda, HGST Ultrastar 7K6000; WD Red 65 °C), SATA SSDs 70 °C (Samsung 860 EVO, Crucial MX500), NVMe drives
# 70 °C (the lowest WCTEMP seen in the captures here; most are 70-85 °C). The critical default is 10 °C above:
# out of specification, where drives shut down to protect themselves.
CLASS_DEFAULTS_C = {"hdd": (60.0, 70.0), "ssd": (70.0, 80.0), "nvme": (70.0, 80.0)}

# NVMe critical warning bit 1, in probe/smart_parse.py's words: the composite temperature is over its over-temperature
# threshold or under its under-temperature one, as the drive itself judges it now.
TEMPERATURE_BIT = "temperature above or below threshold"

# Heat counters: NVMe SMART / Health log members (Health.throttle); growth of any is throttling.
HEAT_TIMES = ("warning_temp_time", "critical_comp_time")
THROTTLE_KEYS = tuple(words.THROTTLE_WORDS)
# Growth between stored readings counts from the oldest reading of this window (or the newest earlier one when none
# is that recent), so a finding stays a day after the counter moved, whatever the exporter's read interval.
GROWTH_WINDOW_S = 24 * 3600.0


@dataclass(frozen=True)
class Limits:
    warning_c: float | None
    critical_c: float | None
    warning_source: str  # "the drive's WCTEMP", "class default"
    critical_source: str
    default_for: str | None = None  # the class whose defaults filled a missing limit, in words

    @property
    def any(self) -> bool:
        return self.warning_c is not None or self.critical_c is not None


def _plausible(value: float | None) -> float | None:
    low, high = PLAUSIBLE_LIMIT_C
    return float(value) if value is not None and low <= value <= high else None


def drive_class(protocol: str | None, rotation_rate_rpm: int | None) -> str:
    if protocol == "NVMe":
        return "nvme"
    return "ssd" if rotation_rate_rpm == 0 else "hdd"


def limits_of(health: Health) -> Limits:
    """The drive's warning and critical temperatures, its own where it reports them, else its class's."""
    warning = _plausible(health.temperature_warning_c)
    critical = _plausible(health.temperature_critical_c)
    inverted = warning if warning is not None and critical is not None and warning > critical else None
    if inverted is not None:
        warning = critical  # a drive whose warning is above its critical: the critical one decides
    warn_src = words.limit_source(health.protocol, "warning") if warning is not None else "class default"
    crit_src = words.limit_source(health.protocol, "critical") if critical is not None else "class default"
    if inverted is not None:  # not "60 °C (the drive's WCTEMP)" for a WCTEMP of 90
        warn_src = words.warning_above_critical(crit_src, inverted)
    default_for = None
    if warning is None or critical is None:
        cls = drive_class(health.protocol, health.rotation_rate_rpm)
        default_for = words.CLASS_WORDS[cls]
        d_warn, d_crit = CLASS_DEFAULTS_C[cls]
        if critical is None:
            critical = max(d_crit, warning) if warning is not None else d_crit
        if warning is None:
            warning = min(d_warn, critical)
    return Limits(warning, critical, warn_src, crit_src, default_for)


def level_of(temp_c: float | None, limits: Limits) -> str | None:
    """ "critical", "warn" or None."""
    if temp_c is None or temp_c > PLAUSIBLE_LIMIT_C[1]:
        return None  # 255 °C and the like: a bridge's or a dead sensor's placeholder, not a drive on fire
    if limits.critical_c is not None and temp_c >= limits.critical_c:
        return "critical"
    if limits.warning_c is not None and temp_c >= limits.warning_c:
        return "warn"
    return None


def _c(value: float | None) -> str:
    return f"{value:g} °C" if value is not None else ""


def _heat_parts(throttle: Mapping[str, int]) -> list[str]:
    return [words.throttle_text(k, v) for k in THROTTLE_KEYS if (v := throttle.get(k))]


def temperature_high(health: Health, name: str | None = None) -> Finding | None:
    limits = limits_of(health)
    level = level_of(health.temperature_c, limits)
    who = name or health.device or "The drive"
    if level is None and TEMPERATURE_BIT in health.critical_warning:
        return _drive_says_hot(health, limits, who)
    if level is None or health.temperature_c is None:
        return None
    if level == "critical":
        limit, used, other = limits.critical_c, limits.critical_source, f"warning at {_c(limits.warning_c)}"
    else:
        limit, used, other = limits.warning_c, limits.warning_source, f"critical at {_c(limits.critical_c)}"
    source = words.class_default_note(limits.default_for or "its class") if used == "class default" else used
    message = words.temperature_high(who, health.temperature_c, level, _c(limit), source, other)
    message += words.lifetime_heat(_heat_parts(health.throttle))
    return Finding(
        code="temperature_high",
        severity=level,
        message=message,
        evidence={
            "temperature_c": health.temperature_c,
            "warning_c": limits.warning_c,
            "critical_c": limits.critical_c,
            "warning_source": limits.warning_source,
            "critical_source": limits.critical_source,
            "warning_temp_time_min": health.throttle.get("warning_temp_time"),
            "critical_comp_time_min": health.throttle.get("critical_comp_time"),
        },
        hint=words.HOT_NOW_HINT if level == "critical" else words.HEAT_HINT,
    )


def _drive_says_hot(health: Health, limits: Limits, who: str) -> Finding:
    """The drive's critical warning says its temperature is out of its thresholds while the figure read is not over
    the limits judged here (a sensor other than the composite one, or an under-temperature)."""
    return Finding(
        code="temperature_high",
        severity="warn",
        message=words.drive_says_hot(who, _c(health.temperature_c) or "an unknown temperature"),
        evidence={
            "temperature_c": health.temperature_c,
            "critical_warning": list(health.critical_warning),
            "warning_c": limits.warning_c,
            "critical_c": limits.critical_c,
        },
        hint=words.HEAT_HINT,
    )


def _throttle_evidence(grew: Mapping[str, tuple[int, int]], since: str | None = None) -> dict[str, object]:
    # Each counter under its own smartctl key first, so a paste's finding cites that counter's line (run/paste.py).
    return {
        **{k: list(v) for k, v in grew.items()},
        "grew": {k: list(v) for k, v in grew.items()},
        "units": {k: words.throttle_row(k)[1] for k in grew},
        "since": since,
    }


def thermal_throttled(health: Health, changes: Mapping[str, tuple[int, int]] | None = None,
                      name: str | None = None) -> Finding | None:  # fmt: skip
    """Heat counters that grew during a run (warn), else lifetime heat with nothing to compare with (info)."""
    who = name or health.device or "The drive"
    grew = {
        k.removeprefix("throttle."): v for k, v in (changes or {}).items() if k.startswith("throttle.") and v[1] > v[0]
    }
    if grew:
        parts = [words.growth_text(k, b, a) for k, (b, a) in grew.items()]
        return Finding(
            "thermal_throttled", "warn", words.thermal_grew(who, parts, "during the run"),
            _throttle_evidence(grew), words.HEAT_HINT,
        )  # fmt: skip
    parts = _heat_parts(health.throttle)
    if not parts:
        return None
    lifetime = {k: v for k in THROTTLE_KEYS if (v := health.throttle.get(k))}
    return Finding(
        "thermal_throttled", "info", words.thermal_standing(who, parts),
        {**lifetime, "lifetime": lifetime, "units": {k: words.throttle_row(k)[1] for k in lifetime}},
        words.HEAT_HINT,
    )  # fmt: skip


def temperature_findings(health: Health, changes: Mapping[str, tuple[int, int]] | None = None) -> list[Finding]:
    """The hook analysis/health.py calls: temperature_high and thermal_throttled of one reading (and a run)."""
    hot = temperature_high(health)
    throttled = thermal_throttled(health, changes)
    if hot is not None and throttled is not None and throttled.severity == "info":
        throttled = None  # the lifetime heat is in temperature_high's message already
    return [f for f in (hot, throttled) if f is not None]


# --- growth between stored readings ------------------------------------------------------------------------------


def baseline(series: Sequence[HealthReading]) -> HealthReading | None:
    """The reading growth is counted from: the oldest of the last GROWTH_WINDOW_S before the newest, else the newest
    earlier one. `series` is one drive's readings, oldest first, the current one last."""
    if len(series) < 2:
        return None
    current = series[-1]
    recent = [r for r in series[:-1] if r.read_at_s >= current.read_at_s - GROWTH_WINDOW_S]
    return recent[0] if recent else series[-2]


def counter_growth(
    series: Sequence[HealthReading], keys: Sequence[str]
) -> tuple[dict[str, tuple[int, int]], float | None]:
    """Counters of `keys` that grew from the baseline reading to the newest: key -> (then, now), and when then was.
    A counter that went down (another drive, a reset) is no growth."""
    base = baseline(series)
    if base is None:
        return {}, None
    now = series[-1].counters
    grew = {
        k: (base.counters[k], now[k]) for k in keys if k in now and k in base.counters and now[k] > base.counters[k]
    }
    return grew, base.read_at_s


def with_growth(findings: Sequence[Finding], series: Sequence[HealthReading], since_words: str) -> list[Finding]:
    """thermal_throttled from the growth between stored readings: it replaces the info one of a single reading; a
    run's own (warn) stays. `since_words` is the baseline's date as the history says it ("since 2026-11-02")."""
    grew, _ = counter_growth(series, [f"throttle.{k}" for k in THROTTLE_KEYS])
    if not grew:
        return list(findings)
    said = {(f.code, f.severity) for f in findings}
    if ("thermal_throttled", "warn") in said or any(code == "thermal_throttling" for code, _ in said):
        return list(findings)  # a run's own says it already (check's, with its dip in throughput)
    plain = {k.removeprefix("throttle."): v for k, v in grew.items()}
    device = next((f.device for f in findings if f.device), None)
    who = series[-1].device_name or "The drive"
    finding = Finding(
        "thermal_throttled", "warn",
        words.thermal_grew(who, [words.growth_text(k, b, a) for k, (b, a) in plain.items()], since_words),
        _throttle_evidence(plain, since_words.removeprefix("since ")), words.HEAT_HINT, device,
    )  # fmt: skip
    return [f for f in findings if f.code != "thermal_throttled"] + [finding]


# --- top: the same judgement of a live hwmon reading ---------------------------------------------------------------


def hwmon_limits(warn_c: float | None, crit_c: float | None) -> Limits:
    """The limits hwmon gives `top` (temp1_max is NVMe WCTEMP or drivetemp's SCT limit, temp1_crit NVMe CCTEMP),
    judged as health judges smartctl's: implausible values are none; no default is invented for a live view."""
    warning, critical = _plausible(warn_c), _plausible(crit_c)
    if warning is not None and critical is not None and warning > critical:
        warning = critical
    return Limits(warning, critical, "hwmon temp1_max", "hwmon temp1_crit")
