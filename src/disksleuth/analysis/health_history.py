"""A drive's counters against its own past (pure): what grew and since when, what a person acknowledged, and
the edges that must never raise a wrong alarm: another drive under the same name, a serial that changed, a
counter that went down, readings dated in the future.

`judge` reads the history; `apply_history` rewrites the counter findings (interface_crc_errors, media_errors)
with it: a counter acknowledged at its value falls to info until it grows past it; growth is told with its
numbers and date ("UDMA_CRC_Error_Count (ATA 199) 108 → 131 since 2026-11-02").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from disksleuth.analysis import error_logs, temperature
from disksleuth.analysis.temperature import baseline
from disksleuth.model import Finding
from disksleuth.model.drive_logs import ErrorLog
from disksleuth.model.health_history import HealthAck, HealthReading

# Readings dated more than this after now were taken while a clock was wrong (or it is wrong now).
SKEW_TOLERANCE_S = 300.0
# A drive whose serial changed is still the same drive when its model matches and its power-on hours went on
# counting from where they were (at most the elapsed time plus this much slack: hours are whole and rounded).
POWER_ON_SLACK_H = 24
# The counters a person may acknowledge, and whose growth is told from the history.
WATCHED_PREFIXES = ("interface.", "media.")
FILE_SOURCE = "file"  # a reading from a saved smartctl output (health --from-smartctl)
_FINDING_PREFIX = {"interface_crc_errors": "interface.", "media_errors": "media."}


def day(epoch_s: float) -> str:
    """A reading's date, as findings say it (UTC: a shared store has one calendar)."""
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%d")


def stamp(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def watched(counters: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in counters.items() if k.startswith(WATCHED_PREFIXES)}


def shown_name(key: str) -> str:
    """'interface.UDMA_CRC_Error_Count (ATA 199)' -> 'UDMA_CRC_Error_Count (ATA 199)'."""
    for prefix in WATCHED_PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


@dataclass(frozen=True)
class CounterStory:
    """One counter of the drive now, against its history and its acknowledgement."""

    key: str
    now: int
    since_value: int | None = None  # the counter at the oldest comparable reading
    since_at_s: float | None = None
    reached_at_s: float | None = None  # when the counter first read its present value (None: only now)
    ack: HealthAck | None = None  # a valid acknowledgement (one made before a reset is void)

    @property
    def grew(self) -> bool:
        return self.since_value is not None and self.now > self.since_value

    @property
    def acked_quiet(self) -> bool:
        return self.ack is not None and self.now <= self.ack.value

    @property
    def grew_past_ack(self) -> bool:
        return self.ack is not None and self.now > self.ack.value

    def growth_text(self) -> str:
        name = shown_name(self.key)
        if self.grew_past_ack and self.ack is not None:
            return f"{name} {self.ack.value:,} → {self.now:,} since it was acknowledged on {day(self.ack.acked_at_s)}"
        if self.grew and self.since_at_s is not None:
            return f"{name} {self.since_value:,} → {self.now:,} since {day(self.since_at_s)}"
        return f"{name} {self.now:,}"

    def to_dict(self) -> dict[str, object]:
        return {
            "counter": self.key,
            "now": self.now,
            "since_value": self.since_value,
            "since_at": stamp(self.since_at_s) if self.since_at_s is not None else None,
            "grew": self.grew,
            "acknowledged_value": self.ack.value if self.ack else None,
            "acknowledged_at": stamp(self.ack.acked_at_s) if self.ack else None,
        }


@dataclass(frozen=True)
class HistoryJudgement:
    counters: dict[str, CounterStory]
    notes: list[Finding] = field(default_factory=list)  # drive changed, serial changed, reset, clock skew
    compared: int = 0  # earlier readings of the same drive the counters were compared with
    drive_keys: tuple[str, ...] = ()  # every key the drive was known by (a serial that changed)
    series: tuple[HealthReading, ...] = ()  # this drive's readings compared, oldest first, the current one last


def _continues(older: HealthReading, newer: HealthReading) -> bool:
    """Is `newer` the same physical drive as `older` though its serial differs (a new bridge or firmware)?"""
    if not older.model or older.model != newer.model:
        return False
    if older.power_on_hours is None or newer.power_on_hours is None:
        return False
    elapsed_h = max(0.0, (newer.read_at_s - older.read_at_s) / 3600)
    return 0 <= newer.power_on_hours - older.power_on_hours <= elapsed_h + POWER_ON_SLACK_H


def _who(r: HealthReading) -> str:
    serial = f"serial id {r.serial_id[:12]}…" if r.serial_id else "no serial"
    return f"{r.model or 'unknown model'}, {serial}"


def judge(
    current: HealthReading,
    earlier: Sequence[HealthReading],
    acks: Mapping[str, HealthAck],
    now_s: float,
) -> HistoryJudgement:
    """The drive's watched counters now against `earlier` readings (of its device name and of its own keys)."""
    notes: list[Finding] = []
    name = current.device_name or "the drive"
    future = [r for r in earlier if r.read_at_s > now_s + SKEW_TOLERANCE_S]
    past = sorted(
        (
            r
            for r in earlier
            if r.read_at_s <= now_s + SKEW_TOLERANCE_S
            and r.id != current.id
            and not (r.drive_key == current.drive_key and abs(r.read_at_s - current.read_at_s) < 1.0)
            and r.read_at_s <= current.read_at_s
        ),
        key=lambda r: (r.read_at_s, r.id or 0),
    )
    if future or current.read_at_s > now_s + SKEW_TOLERANCE_S:
        latest = max([r.read_at_s for r in future] + [current.read_at_s])
        what = f"{len(future)} stored reading(s)" if future else "this reading"
        notes.append(
            Finding(
                code="health_clock_skew",
                severity="info",
                message=(
                    f"{what.capitalize()} of {name} are dated after now (up to {stamp(latest)}, now "
                    f"{stamp(now_s)}): a clock was wrong when they were taken, or is wrong now. They are left out "
                    "of the comparison, so they cannot raise or hide an alarm."
                ),
                evidence={"future_readings": len(future), "latest_at": stamp(latest), "now": stamp(now_s)},
                hint="Check the clocks (timedatectl; chrony or systemd-timesyncd) of the hosts sharing this store.",
            )
        )
    # Walk back from now: the same drive's readings, through a serial change that keeps the drive's model and
    # power-on hours going, until another drive answered under this name.
    keys = {current.drive_key}
    lineage: list[HealthReading] = []
    newer = current
    for r in reversed(past):
        if r.drive_key in keys:
            lineage.append(r)
            newer = r
            continue
        if r.hostname != current.hostname or r.device_name != current.device_name:
            continue  # another drive elsewhere that happens to share nothing but the query
        if FILE_SOURCE in (r.source, current.source):
            continue  # a saved file names its drive by serial; its /dev name may be another machine's
        if _continues(r, newer):
            keys.add(r.drive_key)
            notes.append(
                Finding(
                    code="health_serial_changed",
                    severity="info",
                    message=(
                        f"{name} reports another serial since {day(newer.read_at_s)} ({_who(r)} before, "
                        f"{_who(newer)} after), but its model and power-on hours ({r.power_on_hours:,} h → "
                        f"{newer.power_on_hours:,} h) carry on: the same drive behind a new bridge or firmware. "
                        "Its counters are compared across the change."
                    ),
                    evidence={"before": r.drive_key, "after": newer.drive_key, "changed_at": stamp(newer.read_at_s)},
                    hint="Nothing to do if the enclosure, bridge or firmware changed then.",
                )
            )
            lineage.append(r)
            newer = r
            continue
        notes.append(
            Finding(
                code="health_drive_changed",
                severity="info",
                message=(
                    f"{name} is another drive since {day(newer.read_at_s)} ({_who(r)} before, {_who(newer)} now"
                    + (
                        f"; power-on hours {r.power_on_hours:,} h then, {newer.power_on_hours:,} h now"
                        if r.power_on_hours is not None and newer.power_on_hours is not None
                        else ""
                    )
                    + "). Its counters are not compared with the earlier drive's."
                ),
                evidence={"before": r.drive_key, "after": newer.drive_key, "changed_at": stamp(newer.read_at_s)},
                hint="`disksleuth health --history` shows both drives' readings.",
            )
        )
        break
    lineage.reverse()
    series = [*lineage, current]
    stories: dict[str, CounterStory] = {}
    for key, now in watched(current.counters).items():
        points = [(r.read_at_s, r.counters[key]) for r in series if key in r.counters]
        # A counter of one drive never goes down: a drop means another drive under the same serial, or a
        # firmware that reset it. Compare only from the last drop on, and say so.
        start = 0
        for i in range(1, len(points)):
            if points[i][1] < points[i - 1][1]:
                start = i
        if start:
            (was_at, was), (drop_at, now_then) = points[start - 1], points[start]
            notes.append(
                Finding(
                    code="health_counter_reset",
                    severity="info",
                    message=(
                        f"{shown_name(key)} on {name} went down from {was:,} ({day(was_at)}) to {now_then:,} "
                        f"({day(drop_at)}). A drive's counter never goes down, so another drive answers under the "
                        "same name and serial, or the firmware reset it; it is compared from then on, and an "
                        "acknowledgement made before the drop no longer counts."
                    ),
                    evidence={"counter": key, "before": [was, stamp(was_at)], "after": [now_then, stamp(drop_at)]},
                    hint="If the drive was not replaced, a counter that resets hides its history: keep watching it.",
                )
            )
        segment = points[start:]
        since_at, since_value = segment[0] if len(segment) > 1 else (None, None)
        reached = next((t for t, v in segment if v == now), None) if len(segment) > 1 else None
        ack = acks.get(key)
        reset_at = points[start][0] if start else None
        if ack is not None and reset_at is not None and ack.acked_at_s < reset_at:
            ack = None
        stories[key] = CounterStory(key, now, since_value, since_at, reached, ack)
    return HistoryJudgement(stories, notes, len(lineage), tuple(sorted(keys)), tuple(series))


def apply_history(
    findings: Sequence[Finding], judgement: HistoryJudgement | None, error_log: ErrorLog | None = None
) -> list[Finding]:
    """The counter findings told against the history and acknowledgements, plus the history's own notes. Heat and
    error-log counters that grew between readings (issue 38) are thermal_throttled and error_log_growth."""
    if judgement is None:
        return list(findings)
    out = [_with_history(f, judgement) if f.code in _FINDING_PREFIX else f for f in findings]
    base = baseline(judgement.series)
    if base is not None:
        since = f"since {stamp(base.read_at_s)}"
        out = error_logs.with_growth(temperature.with_growth(out, judgement.series, since), judgement.series, since,
                                     error_log)  # fmt: skip
    return out + judgement.notes


def _with_history(f: Finding, j: HistoryJudgement) -> Finding:
    prefix = _FINDING_PREFIX[f.code]
    counts = f.evidence.get("counts") if isinstance(f.evidence, Mapping) else None
    standing = [prefix + k for k in (counts or {})]
    stories = [j.counters[k] for k in standing if k in j.counters]
    if not stories:
        return f
    grown = [s for s in stories if s.grew_past_ack or (s.ack is None and s.grew)]
    quiet = [s for s in stories if s.acked_quiet]
    unacked = [s for s in stories if s.ack is None]
    sentences = []
    if grown:
        sentences.append("Grew: " + "; ".join(s.growth_text() for s in grown) + ".")
    elif j.compared and unacked:
        first = min((s.since_at_s for s in unacked if s.since_at_s is not None), default=None)
        if first is not None:
            sentences.append(f"Unchanged since {day(first)} ({j.compared} earlier reading(s)).")
    if quiet:
        sentences.append(
            "Acknowledged: "
            + "; ".join(f"{shown_name(s.key)} at {s.ack.value:,} on {day(s.ack.acked_at_s)}" for s in quiet if s.ack)
            + "; warns again if it grows."
        )
    severity = f.severity
    if severity != "critical":  # growth during the run stays critical whatever was acknowledged
        severity = "info" if len(quiet) == len(stories) else "warn"
    evidence = {**f.evidence, "history": [s.to_dict() for s in stories]}
    message = f.message + (" " + " ".join(sentences) if sentences else "")
    return replace(f, severity=severity, message=message, evidence=evidence)
