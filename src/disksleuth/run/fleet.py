"""`fleet`: every host and device in a shared store, from each one's newest run."""

from __future__ import annotations

from disksleuth.analysis.fleet import FleetRow, fleet_rows
from disksleuth.errors import UsageError
from disksleuth.store.latest import known_hosts, latest_runs_per_host_device

_HOSTS_LISTED = 10  # more than this, and the hosts are counted, not named


def fleet(db: str | None, *, host: str | None = None) -> list[FleetRow]:
    rows = fleet_rows(latest_runs_per_host_device(db, host=host))
    if host and not rows:
        # "No runs yet" on a store that has runs, only not of this host, misleads: name the hosts it has.
        hosts = known_hosts(db)
        if hosts:
            named = ", ".join(hosts) if len(hosts) <= _HOSTS_LISTED else f"{len(hosts)} others (see `disksleuth fleet`)"
            raise UsageError(f"--host {host}: no stored run has this host; the store has runs of {named}")
    return rows
