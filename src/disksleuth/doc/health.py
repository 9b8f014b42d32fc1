"""Drive health as a document (`health --json`, and the health before and after a run)."""

from __future__ import annotations

import dataclasses
from typing import Any

from disksleuth.model.health_history import AckOutcome, DriveLine, HealthReading, HistoryView
from disksleuth.model.run import Health


def health_to_dict(h: Health) -> dict[str, Any]:
    out = dataclasses.asdict(h)
    for key in ("device", "model", "serial", "firmware", "protocol", "capacity_bytes"):
        out.pop(key, None)
    out["critical_warning"] = list(h.critical_warning)
    out["lba_formats"] = [dataclasses.asdict(f) for f in h.lba_formats]
    out["throttle"] = dict(h.throttle)
    out["exit_status_words"] = list(h.exit_status_words)
    out["messages"] = list(h.messages)
    out["temperature_sensors_c"] = list(h.temperature_sensors_c)
    out["interface_error_counts"] = dict(h.interface_error_counts)
    out["media_error_counts"] = dict(h.media_error_counts)
    return out


def device_summary(h: Health) -> dict[str, Any]:
    return {
        "name": h.device,
        "protocol": h.protocol,
        "model": h.model,
        "serial": h.serial,
        "firmware": h.firmware,
        "capacity_bytes": h.capacity_bytes,
    }


# --- health over time ---------------------------------------------------------------------------

def history_outcome(kept: bool, compared: int, error: str | None) -> dict[str, Any]:
    """What became of this reading in the store: kept or not, how many earlier readings it was judged against."""
    return {"kept": kept, "compared_readings": compared, "error": error}


def reading_to_dict(r: HealthReading) -> dict[str, Any]:
    from disksleuth.analysis.health_history import stamp

    return {
        "read_at": stamp(r.read_at_s),
        "read_at_s": r.read_at_s,
        "source": r.source,
        "device": r.device_name,
        "host": r.hostname,
        "drive_key": r.drive_key,
        "serial_id": r.serial_id,
        "model": r.model,
        "firmware": r.firmware,
        "smart_passed": r.smart_passed,
        "temperature_c": r.temperature_c,
        "percentage_used": r.percentage_used,
        "available_spare_pct": r.available_spare_pct,
        "power_on_hours": r.power_on_hours,
        "counters": dict(r.counters),
    }


def history_document(view: HistoryView) -> dict[str, Any]:
    return {
        "health_history": {
            "device": view.device_name,
            "host": view.hostname,
            "readings": [reading_to_dict(r) for r in view.readings],
            "findings": [f.to_dict() for f in view.findings],
        }
    }


def ack_document(outcomes: list[AckOutcome]) -> dict[str, Any]:
    from disksleuth.analysis.health_history import stamp

    return {
        "acknowledged": [
            {
                "device": o.device_name,
                "attribute": o.attribute,
                "value": o.value,
                "reading_at": stamp(o.reading_at_s) if o.reading_at_s is not None else None,
                "undone": o.value is None and o.removed > 0,
            }
            for o in outcomes
        ]
    }


def drives_document(lines: list[DriveLine]) -> dict[str, Any]:
    return {
        "drives": [
            {
                **reading_to_dict(d.reading),
                "live": d.live,
                "worst": max(
                    (f.severity for f in d.findings),
                    key=lambda s: ("ok", "info", "warn", "critical").index(s),
                    default="ok",
                ),
                "findings": [f.to_dict() for f in d.findings],
            }
            for d in lines
        ]
    }
