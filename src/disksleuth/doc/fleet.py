"""`fleet --json`: each host and device from its newest run."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from disksleuth.analysis.fleet import FleetRow, fleet_counts


def fleet_to_dict(rows: list[FleetRow]) -> dict[str, Any]:
    hosts = sorted({r.host for r in rows})
    return {
        "hosts": hosts,
        "counts": fleet_counts(rows),
        "rows": [_row(r) for r in rows],
    }


def _row(r: FleetRow) -> dict[str, Any]:
    return {**asdict(r), "codes": list(r.codes), "siblings": list(r.siblings)}
