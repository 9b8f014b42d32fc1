"""`watch` judged (pure): two passes compared, mutes, quiet hours, the heartbeat and a late pass.

A pass tells only what changed since the pass before: a finding a drive did not have (at warn or critical), a
severity that rose to warn or critical, a warning-sign counter that went up (the media and interface counters that
`health --ack` knows), a drive that is gone. What stayed the same is never told again; an info finding is kept in
the state (so that its rise to warn is told) but is not news by itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from disksleuth.analysis.health_history import shown_name, watched
from disksleuth.model import SEVERITY_ORDER
from disksleuth.model.watch import Change, DriveSeen, PassState, SeenFinding

NEWS = ("warn", "critical")
_COUNTER_FINDING = {
    "interface": "interface_crc_errors",
    "media": "media_errors",
}  # the finding each family has  # the severities a new finding or a rise must reach to be told
DAY_S = 86400.0
RETOLD_AFTER_S = 7 * DAY_S  # a finding that went and came back is told again only this long after it was told
MAX_TOLD = 1000  # the memory of what was told, newest kept: a state stays small whatever a tree holds


def _rank(severity: str) -> int:
    return SEVERITY_ORDER.get(severity, 0)


def worst_of(findings: Iterable[SeenFinding]) -> dict[str, SeenFinding]:
    """A drive's findings by code, the worst of each (one code may be found on two hops)."""
    out: dict[str, SeenFinding] = {}
    for f in findings:
        if f.code not in out or _rank(f.severity) > _rank(out[f.code].severity):
            out[f.code] = f
    return out


def diff(before: PassState | None, now: PassState) -> list[Change]:
    """What `now` saw that `before` did not (module docstring). The first pass tells every finding at warn or
    critical once; counters have nothing to grow from yet."""
    earlier = {d.key: d for d in before.drives} if before else {}
    changes: list[Change] = []
    for drive in now.drives:
        if drive.carried:
            continue  # not read this pass: what it shows is the pass before's
        old = earlier.get(drive.key)
        old_findings = worst_of(old.findings) if old else {}
        for code, f in worst_of(drive.findings).items():
            if f.severity not in NEWS:
                continue
            prior = old_findings.get(code)
            if prior is None:
                if not _told_lately(before, drive.key, code, f.severity, now.at_s):
                    changes.append(_change("new", drive, f))
            elif _rank(f.severity) > _rank(prior.severity):
                changes.append(_change("worse", drive, f, before=prior.severity))
        if old is not None:
            told = {c.code for c in changes if c.key == drive.key}
            # A counter finding that is new or worse already tells its counters' growth: never twice.
            changes.extend(c for c in _grown(old, drive) if counter_finding(c.counter) not in told)
    seen_now = {d.key for d in now.drives}
    for key, old in earlier.items():
        if key not in seen_now and not _told_lately(before, key, "missing", "warn", now.at_s):
            changes.append(Change("missing", key, old.device, old.model, "warn"))
    return changes


def _told_lately(before: PassState | None, key: str, code: str, severity: str, now_s: float) -> bool:
    """Whether this drive's `code`, at `severity` or worse, was told less than RETOLD_AFTER_S ago."""
    return before is not None and any(
        k == key and c == code and _rank(s) >= _rank(severity) and 0 <= now_s - at < RETOLD_AFTER_S
        for k, c, s, at in before.told
    )


def told_after(
    before: PassState | None, changes: Sequence[Change], now_s: float
) -> tuple[tuple[str, str, str, float], ...]:
    """The memory of what was told, with this pass's told findings and missing drives added (muted ones were not
    told), entries older than RETOLD_AFTER_S dropped, at most MAX_TOLD kept (the newest)."""
    kept = [t for t in (before.told if before else ()) if 0 <= now_s - t[3] < RETOLD_AFTER_S]
    kept += [
        (c.key, c.code or c.kind, c.severity, now_s)
        for c in changes
        if not c.muted and c.kind in ("new", "worse", "missing")
    ]
    return tuple(kept[-MAX_TOLD:])


def counter_finding(counter: str | None) -> str | None:
    """The finding that tells a watched counter: interface.* -> interface_crc_errors, media.* -> media_errors."""
    return _COUNTER_FINDING.get((counter or "").partition(".")[0])


def _change(kind: str, drive: DriveSeen, f: SeenFinding, before: str | None = None) -> Change:
    return Change(kind, drive.key, drive.device, drive.model, f.severity, f.code, f.message, before)


def _grown(old: DriveSeen, drive: DriveSeen) -> list[Change]:
    out = []
    was = watched(old.counters)
    for counter, value in sorted(watched(drive.counters).items()):
        prior = was.get(counter)
        if prior is not None and value > prior:
            severity = max(
                (f.severity for f in drive.findings if f.severity in NEWS), key=_rank, default="warn"
            )  # the drive's own judgement when it has one
            out.append(
                Change(
                    "grew", drive.key, drive.device, drive.model, severity, counter=counter, from_value=prior,
                    to_value=value,
                )
            )  # fmt: skip
    return out


def counter_name(key: str) -> str:
    return shown_name(key)


# --- mutes ---------------------------------------------------------------------------------------


def mute_matches(spec: str, change: Change) -> bool:
    """A mute names a drive (sda, or its model), a finding code (temperature_high, or `grew` for every counter),
    or both as DRIVE:CODE. A grown counter is muted by its drive, by `grew`, or by the code of a finding about it."""
    drive, _, code = spec.partition(":") if ":" in spec else ("", "", spec)
    codes = {c for c in (change.code, change.kind if change.kind in ("grew", "missing") else None) if c}
    if change.counter:
        codes.add(counter_finding(change.counter) or "")
    if not drive:
        return spec in codes or _names_drive(spec, change)
    return _names_drive(drive, change) and (code in codes or code == "*")


def _names_drive(name: str, change: Change) -> bool:
    return name in (change.device, f"/dev/{change.device}", change.key) or (
        change.model is not None and name == change.model
    )


def apply_mutes(changes: Sequence[Change], mutes: Sequence[str]) -> list[Change]:
    from dataclasses import replace

    return [replace(c, muted=True) if any(mute_matches(m, c) for m in mutes) else c for c in changes]


# --- quiet hours, the heartbeat, a late pass -------------------------------------------------------


def parse_clock(text: str) -> int:
    """'22:00' -> minutes after midnight. Raises ValueError."""
    hours, sep, minutes = text.strip().partition(":")
    if not sep or not (hours.isascii() and hours.isdigit() and minutes.isascii() and minutes.isdigit()):
        raise ValueError(f"{text!r} is not a time of day HH:MM")
    h, m = int(hours), int(minutes)
    if h > 23 or m > 59 or len(minutes) != 2:
        raise ValueError(f"{text!r} is not a time of day HH:MM (00:00 to 23:59)")
    return h * 60 + m


def parse_quiet_hours(text: str) -> tuple[int, int]:
    """'22:00-07:00' -> (1320, 420). Raises ValueError."""
    start, sep, end = text.partition("-")
    if not sep:
        raise ValueError(f"{text!r}: quiet hours are START-END, e.g. 22:00-07:00")
    span = parse_clock(start), parse_clock(end)
    if span[0] == span[1]:
        raise ValueError(f"{text!r}: quiet hours that start when they end are empty")
    return span


def in_quiet_hours(quiet: tuple[int, int] | None, local: dt.datetime) -> bool:
    """Whether a local time falls in START-END (END excluded); a span over midnight wraps."""
    if quiet is None:
        return False
    start, end = quiet
    minute = local.hour * 60 + local.minute
    return start <= minute < end if start < end else minute >= start or minute < end


def quiet_until(quiet: tuple[int, int], local: dt.datetime) -> dt.datetime:
    """When quiet hours that hold `local` end."""
    end = local.replace(hour=quiet[1] // 60, minute=quiet[1] % 60, second=0, microsecond=0)
    return end if end > local else end + dt.timedelta(days=1)


def heartbeat_due(last_s: float | None, first_pass_s: float | None, now_s: float, every_days: float | None) -> bool:
    """A heartbeat every `every_days`, counted from the last one (or from the first pass: a new watch has just
    said everything it knows)."""
    if every_days is None:
        return False
    since = last_s if last_s is not None else first_pass_s
    return since is not None and now_s - since >= every_days * DAY_S


def overdue_s(previous_at_s: float | None, now_s: float, overdue_hours: float) -> float | None:
    """How long ago the pass before was, when longer than `overdue_hours` (a timer that stopped, a machine that
    slept); None otherwise."""
    if previous_at_s is None:
        return None
    gap = now_s - previous_at_s
    return gap if gap > overdue_hours * 3600.0 else None
