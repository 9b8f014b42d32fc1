"""The rules a run document follows on its way into and out of the store, whatever carries it (the
database, an export, a kept unsaved run): the identity of old runs, no serial in the clear, latencies
capped at their max. Pure: no SQLAlchemy."""

from __future__ import annotations

import json
import time
import uuid as uuid_mod
from typing import Any

_RUN_NAMESPACE = uuid_mod.UUID("6d1f8a52-7c2e-4b7e-9a35-0d15c5e1e7a1")


def legacy_uuid(run: dict[str, Any]) -> str:
    """The identity of a run recorded before runs carried a uuid: what it ran, where and when. The v3
    migration gives stored runs the same value, so an old export imported twice is still found."""
    host = run["host"] if isinstance(run.get("host"), dict) else {}
    key = [
        run.get("kind") or "bench",
        run.get("started_at"),
        host.get("hostname"),
        run.get("target"),
        run.get("profile"),
    ]
    return str(uuid_mod.uuid5(_RUN_NAMESPACE, json.dumps(key)))


_PERCENTILES = ("p50", "p99", "p999")


def capped_latencies(test: dict[str, Any]) -> dict[str, Any]:
    """A stored test with no percentile above its max, overall and per direction. New runs are capped
    when made (analysis.results: fio reports a bucket's middle, which can pass the largest latency seen);
    runs stored or exported before that, or imported from elsewhere, are capped here, where every
    reader (show, report, compare, exporter, fleet) gets them."""
    out = dict(test)
    for prefix in ("", "read_", "write_"):
        top = out.get(f"{prefix}lat_max_us")
        if not isinstance(top, (int, float)) or isinstance(top, bool):
            continue
        for p in _PERCENTILES:
            key = f"{prefix}lat_{p}_us"
            value = out.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > top:
                out[key] = top
    return out


def without_serial(device: dict[str, Any]) -> dict[str, Any]:
    """Serial numbers never reach the store in the clear: the keyed id has its own column."""
    return {k: v for k, v in device.items() if k not in ("serial", "serial_sha256", "serial_id")}


def without_health_serials(health: Any) -> Any:
    """`check` never puts the serial in its health (health_to_dict), but a run from elsewhere may."""
    if not isinstance(health, dict):
        return health
    out = dict(health)
    for key in ("before", "after"):
        if isinstance(out.get(key), dict) and "serial" in out[key]:
            out[key] = {k: v for k, v in out[key].items() if k != "serial"}
    return out


def now_stamp() -> str:
    """The time now as runs, exports and migrations record it ("%Y-%m-%dT%H:%M:%S%z")."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
