"""`fleet`: every host and device in a shared store, from each one's newest run."""

from __future__ import annotations

from disksleuth.analysis.fleet import FleetRow, fleet_rows
from disksleuth.store.latest import latest_runs_per_host_device


def fleet(db: str | None, *, host: str | None = None) -> list[FleetRow]:
    return fleet_rows(latest_runs_per_host_device(db, host=host))
