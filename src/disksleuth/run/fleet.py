"""`fleet`: every host and device in a shared store, from each one's newest run."""

from __future__ import annotations

from disksleuth.analysis.fleet import FleetRow, fleet_rows, with_siblings
from disksleuth.errors import UsageError
from disksleuth.store.latest import known_hosts, latest_runs_per_host_device

_HOSTS_LISTED = 10  # more than this, and the hosts are counted, not named


def fleet(db: str | None, *, host: str | None = None) -> list[FleetRow]:
    # Siblings are judged over every host's drives, then the rows are narrowed to --host.
    rows = with_siblings(fleet_rows(latest_runs_per_host_device(db)))
    if host:
        rows = [r for r in rows if r.host == host]
    if host and not rows:
        # "No runs yet" on a store that has runs, only not of this host, misleads: name the hosts it has.
        hosts = known_hosts(db)
        if hosts:
            named = ", ".join(hosts) if len(hosts) <= _HOSTS_LISTED else f"{len(hosts)} others (see `disksleuth fleet`)"
            raise UsageError(f"--host {host}: no stored run has this host; the store has runs of {named}")
    return rows
