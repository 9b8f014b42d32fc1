"""`health DEV --self-test short|long --json`: the self-test started, and the wear forecast in `health --json`."""

from __future__ import annotations

import dataclasses
from typing import Any

from disksleuth.model import Finding
from disksleuth.model.selftest import SelfTestStart
from disksleuth.model.wear import WearForecast


def _iso(epoch_s: float | None) -> str | None:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if epoch_s is not None else None


def self_test_start_to_dict(start: SelfTestStart) -> dict[str, Any]:
    return {
        "device": start.device,
        "kind": start.kind,
        "started": start.started,
        "already_running": start.already_running,
        "started_at": _iso(start.started_at_s),
        "estimate_minutes": start.estimate_minutes,
        "done_by": _iso(start.done_by_s),
        "progress": dataclasses.asdict(start.progress) if start.progress is not None else None,
        "smartctl_said": start.smartctl_said,
    }


def self_test_document(start: SelfTestStart, findings: list[Finding]) -> dict[str, Any]:
    from disksleuth.doc.health import device_summary

    return {
        "device": device_summary(start.health) if start.health is not None else {"name": start.device},
        "self_test": self_test_start_to_dict(start),
        "findings": [f.to_dict() for f in findings],
    }


def wear_to_dict(wear: WearForecast | None) -> dict[str, Any] | None:
    if wear is None:
        return None
    out = wear.to_dict()
    out["projected_full_at"] = _iso(wear.projected_full_at_s)
    return out
