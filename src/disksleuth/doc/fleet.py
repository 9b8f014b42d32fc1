"""`fleet --json`: the counts over the devices the filters keep, then the worst of them from their newest runs."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from disksleuth.analysis.fleet import FleetRow, FleetSummary


def fleet_to_dict(
    summary: FleetSummary, rows: list[FleetRow], limit: int | None, filters: dict[str, str]
) -> dict[str, Any]:
    return {
        "hosts": list(summary.host_names),  # of every device the filters keep, not only the rows shown
        "counts": summary.by_severity,
        "summary": summary_to_dict(summary, filters),
        "limit": limit,
        "rows": [_row(r) for r in rows],
    }


def summary_to_dict(summary: FleetSummary, filters: dict[str, str]) -> dict[str, Any]:
    return {
        "devices": summary.devices,
        "hosts": summary.hosts,
        "store_devices": summary.store_devices,
        "by_severity": summary.by_severity,
        "by_finding": [{"code": code, "devices": n} for code, n in summary.by_finding],
        "by_model": [{"model": model, **counts} for model, counts in summary.by_model],
        "filters": filters,
    }


def _row(r: FleetRow) -> dict[str, Any]:
    return {**asdict(r), "codes": list(r.codes), "siblings": list(r.siblings)}
