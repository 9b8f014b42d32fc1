"""Health readings into the store and back: each reading is kept (store.health decides which are worth a
row) and judged against the drive's own past and acknowledgements (analysis.health_history).

A store problem never costs a reading its findings: they come back unjudged, with the reason.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass

from disksleuth import serials
from disksleuth.analysis.health_history import HistoryJudgement, apply_history, judge
from disksleuth.analysis.selftests import self_test_counters
from disksleuth.analysis.wear import forecast_wear, wear_counters, with_forecast
from disksleuth.errors import DisksleuthError, StoreMissing
from disksleuth.model import Finding
from disksleuth.model.health_history import HealthReading
from disksleuth.model.run import Health
from disksleuth.model.wear import WearForecast


def device_name_of(text: str | None) -> str | None:
    """'/dev/sda' -> 'sda' (node_exporter's and smartctl_exporter's `device`), None for nothing."""
    if not text:
        return None
    return text.split()[0].removeprefix("/dev/") or None


# A saved smartctl file's reading is of a drive somewhere else, not this host's (issue 40): it is kept under a
# host of its own, so `health` and `--history` of this host never list it, and its device name stays the file's.
FILE_HOST_PREFIX = "file:"


def file_host(path: str) -> str:
    """The host a reading read from a saved file is kept under: 'file:' and the file's name."""
    import os

    return (FILE_HOST_PREFIX + os.path.basename(path.rstrip("/")))[:255]


def drive_key(health: Health, key: bytes | None, hostname: str, device_name: str | None) -> str:
    """The drive, keyed: its serial with its model (placeholder serials such as "0000" or "To be filled by
    O.E.M." are shared by many drives, their models rarely), else host and device for a drive without one."""
    if health.serial and key is not None:
        return serials.serial_id(f"{health.model or ''}\0{health.serial}", key) or ""
    return f"{hostname}:{device_name or '?'}"


def reading_of(
    health: Health,
    *,
    device_name: str | None,
    source: str,
    read_at_s: float,
    key: bytes | None,
    hostname: str | None = None,
) -> HealthReading:
    host = hostname or socket.gethostname()
    name = device_name or device_name_of(health.device)
    return HealthReading(
        read_at_s=read_at_s,
        hostname=host,
        device_name=name,
        drive_key=drive_key(health, key, host, name),
        serial_id=serials.serial_id(health.serial, key),
        model=health.model,
        firmware=health.firmware,
        protocol=health.protocol,
        source=source,
        smart_passed=health.smart_passed,
        temperature_c=health.temperature_c,
        percentage_used=health.percentage_used,
        available_spare_pct=health.available_spare_pct,
        power_on_hours=health.power_on_hours,
        counters={**health.counters(), **wear_counters(health), **self_test_counters(health)},
    )


def smartctl_time_s(raw: str) -> float | None:
    """smartctl's own `local_time.time_t`: when a saved `smartctl --json` output was taken."""
    try:
        value = json.loads(raw).get("local_time", {}).get("time_t")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


@dataclass(frozen=True)
class Observed:
    findings: list[Finding]
    judgement: HistoryJudgement | None = None
    reading: HealthReading | None = None
    stored: bool = False
    error: str | None = None  # why the history could not be used (the findings are then unjudged)
    wear: WearForecast | None = None  # the wear rate over this drive's readings, and when it reaches 100%


def observe(
    health: Health,
    findings: list[Finding],
    db: str | None,
    *,
    device_name: str | None,
    source: str,
    read_at_s: float | None = None,
    keep: bool = True,
    now_s: float | None = None,
    timeout_s: int | None = None,
    hostname: str | None = None,
) -> Observed:
    """Judge the reading against the store's history and acknowledgements, and keep it (`keep`)."""
    from disksleuth.store.db import Store
    from disksleuth.store.health import acks, history, record

    now = time.time() if now_s is None else now_s
    try:
        with Store(db, create=keep, read_only=not keep, timeout_s=timeout_s) as store:
            reading = reading_of(
                health,
                device_name=device_name,
                source=source,
                read_at_s=read_at_s or now,
                key=store.serial_key,
                hostname=hostname,
            )
            earlier = history(
                store, hostname=reading.hostname, device_name=reading.device_name, drive_keys=[reading.drive_key]
            )
            known = {reading.drive_key} | {r.drive_key for r in earlier if r.drive_key == reading.drive_key}
            judgement = judge(reading, earlier, acks(store, known), now)
            if len(judgement.drive_keys) > 1:  # a serial that changed: its earlier acknowledgements still count
                judgement = judge(reading, earlier, acks(store, judgement.drive_keys), now)
            stored = record(store, reading) if keep else False
    except StoreMissing:
        return _unjudged(health, findings)
    except DisksleuthError as exc:
        return _unjudged(health, findings, str(exc))
    wear = forecast_wear(health, [*(r for r in earlier if r.drive_key in judgement.drive_keys), reading])
    findings = with_forecast(findings, wear, health.power_on_hours)
    return Observed(apply_history(findings, judgement, health.error_log), judgement, reading, stored, wear=wear)


def _unjudged(health: Health, findings: list[Finding], error: str | None = None) -> Observed:
    """Without the store: the findings as they are, and the lifetime average for a wear forecast."""
    wear = forecast_wear(health, [])
    return Observed(with_forecast(findings, wear, health.power_on_hours), error=error, wear=wear)
