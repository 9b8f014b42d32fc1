"""Drive health as a document (`health --json`, and the health before and after a run)."""

from __future__ import annotations

import dataclasses
from typing import Any

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
