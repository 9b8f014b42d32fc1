"""`fleet`: a shared store's devices from each one's newest run: counts first, then the worst devices."""

from __future__ import annotations

import contextlib
import gc
import heapq
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from disksleuth.analysis.codes import FINDING_CODES
from disksleuth.analysis.fleet import (
    FleetFilter,
    FleetKey,
    FleetRow,
    FleetSummary,
    device_runs,
    fleet_keys,
    fleet_row,
    summarise,
    with_sibling_findings,
)
from disksleuth.errors import UsageError
from disksleuth.run.selection import parse_age_s
from disksleuth.store.latest import latest_runs_per_host_device

_LISTED = 10  # more names than this, and they are counted, not named
DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class FleetView:
    summary: FleetSummary  # over every device the filters keep
    rows: list[FleetRow]  # the worst of them, worst first, at most `limit`
    limit: int | None  # None: --all
    filters: dict[str, str] = field(default_factory=dict)  # as given, for the header and --json

    @property
    def unwell(self) -> bool:
        """Any kept device at warn or critical (exit 1), shown or not."""
        return bool(self.summary.by_severity.get("warn") or self.summary.by_severity.get("critical"))


def fleet(
    db: str | None,
    *,
    host: str | None = None,
    model: str | None = None,
    finding: str | None = None,
    severity: str | None = None,
    since: str | None = None,
    limit: str | None = None,
    show_all: bool = False,
    now_s: float | None = None,
) -> FleetView:
    with _without_gc_passes():
        return _fleet(db, host, model, finding, severity, since, _limit(limit, show_all), now_s)


@contextlib.contextmanager
def _without_gc_passes() -> Iterator[None]:
    """The tens of thousands of rows and dicts of a large fleet all live until the view is made: the cyclic
    collector's passes over them free nothing and took ~0.1 s of 0.5 s at 24,000 devices."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _fleet(
    db: str | None,
    host: str | None,
    model: str | None,
    finding: str | None,
    severity: str | None,
    since: str | None,
    shown: int | None,
    now_s: float | None,
) -> FleetView:
    since_s = parse_since_s(since, time.time() if now_s is None else now_s) if since else None
    # Siblings are judged over every host's drives, then the devices are narrowed by the filters. The counts,
    # filters and order work on light keys; a full row is built only for the devices shown (at 24,000 devices
    # the rows of all of them cost more than the query).
    runs = device_runs(latest_runs_per_host_device(db))
    everything, siblings = fleet_keys(runs)
    if host:
        _matches_some(host, "host", [r for r in everything if FleetFilter(host=host).keeps(r)], everything)
    if model:
        _matches_some(model, "model", [r for r in everything if FleetFilter(model=model).keeps(r)], everything)
    if finding:
        _known_code(finding, everything)
    wanted = FleetFilter(host, model, finding, severity, since_s)
    kept = [k for k in everything if wanted.keeps(k)] if (host or model or finding or severity or since) else everything
    worst = sorted(kept) if shown is None else heapq.nsmallest(shown, kept)  # FleetKey sorts worst first
    rows = [with_sibling_findings(fleet_row(runs[k.place]), siblings.get((k.host, k.device)) or []) for k in worst]
    given = {"host": host, "model": model, "finding": finding, "severity": severity, "since": since}
    return FleetView(
        summarise(kept, len(everything)),
        rows,
        shown,
        {k: v for k, v in given.items() if v},
    )


def _limit(text: str | None, show_all: bool) -> int | None:
    if show_all:
        if text is not None:
            raise UsageError("--limit and --all: give one (--all shows every device)")
        return None
    if text is None:
        return DEFAULT_LIMIT
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"--limit {text[:40]}: give a whole number of devices from 1 (or --all for every one)")
    return value


def _matches_some(pattern: str, what: str, matched: list[FleetKey], rows: list[FleetKey]) -> None:
    """A --host or --model that matches no device is a mistake (a typo, a wrong glob), not an empty fleet."""
    if matched:
        return
    if what == "host":
        names = sorted({r.host for r in rows})
        plain = not any(c in pattern for c in "*?[")
        problem = "no stored run has this host" if plain else "no stored run has a host matching this glob"
    else:
        names = sorted({r.model for r in rows if r.model})
        problem = "no device's model contains it (* ? [ make it a glob)"
    if not names:
        raise UsageError(f"--{what} {pattern}: {problem}; the store has no runs yet")
    named = ", ".join(names) if len(names) <= _LISTED else f"{len(names):,} {what}s (see `disksleuth fleet`)"
    raise UsageError(f"--{what} {pattern}: {problem}; the store has runs of {named}")


def _known_code(code: str, rows: list[FleetKey]) -> None:
    """A code this disksleuth gives, or one a stored run carries (written by another version), is known: a
    known code with no device is an empty answer; anything else is a typo, answered with the known codes."""
    known = FINDING_CODES | {c for r in rows for c in r.codes}
    if code not in known:
        raise UsageError(f"--finding {code[:60]}: no such finding code; the codes are {', '.join(sorted(known))}")


def parse_since_s(text: str, now_s: float) -> float:
    """`--since`: a date or a time (2026-11-20, 2026-11-20T08:00, local time unless it names its zone), or an age
    before now (7d, 12h, 90min, 2w)."""
    given = text.strip()
    if re.match(r"\d{4}-\d", given):
        try:
            when = datetime.fromisoformat(given)
        except ValueError:
            raise UsageError(
                f"--since {given[:40]!r}: not a date; give one such as 2026-11-20 or 2026-11-20T08:00, "
                "or an age such as 7d or 12h"
            ) from None
        return (when.astimezone() if when.tzinfo is None else when).timestamp()
    try:
        return now_s - parse_age_s(given, "--since")
    except UsageError as exc:  # --since takes a date too: say so, where --older-than's words would not
        raise UsageError(f"{exc}, or a date such as 2026-11-20") from None
