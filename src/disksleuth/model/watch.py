"""`watch`: what one pass saw of each drive, what changed since the pass before, and what was sent about it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# Annotations only (see model/__init__.py): typing costs start-up time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class SeenFinding:
    """A finding as a pass keeps it: enough to tell next time whether it is new or worse."""

    code: str
    severity: str
    message: str


@dataclass(frozen=True)
class DriveSeen:
    """One drive in one pass. `key` is the drive's identity across passes (its keyed serial id when its health
    was read, else its kernel name); `counters` are its health counters (Health.counters()) when read."""

    key: str
    device: str
    model: str | None = None
    findings: tuple[SeenFinding, ...] = ()
    counters: Mapping[str, int] = field(default_factory=dict)
    health_read: bool = False
    not_read: str | None = None  # why health was not read this pass (asleep, no SMART, no smartctl)
    carried: bool = False  # findings and counters carried from the pass before: the drive could not be read now


@dataclass(frozen=True)
class PassState:
    """Everything a pass saw, as the next pass compares with it."""

    at_s: float
    drives: tuple[DriveSeen, ...]
    heartbeat_at_s: float | None = None  # the newest heartbeat sent (or due and shown) by any pass
    # What was told, and when: (drive key, finding code or "missing", severity, at_s), kept for a week, so a finding
    # that comes and goes (a temperature at its limit) is told once, not at every return.
    told: tuple[tuple[str, str, str, float], ...] = ()
    targets: tuple[str, ...] | None = None  # the keyed ids of the notify targets the pass had (None: not recorded)


@dataclass(frozen=True)
class Change:
    """Something a pass saw that the pass before did not.

    kind: new (a finding the drive did not have), worse (its severity rose), grew (a counter went up), missing
    (a drive the pass before saw is gone)."""

    kind: str
    key: str
    device: str
    model: str | None
    severity: str  # the finding's severity now; for grew, the worst of the drive's findings that name it, else warn
    code: str | None = None
    message: str | None = None
    before: str | None = None  # the severity before (worse)
    counter: str | None = None  # grew: the counter's key ("interface.UDMA_CRC_Error_Count (ATA 199)")
    from_value: int | None = None
    to_value: int | None = None
    muted: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "device": self.device, "severity": self.severity}
        for name in ("model", "code", "message", "before", "counter", "from_value", "to_value"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out["muted"] = self.muted
        return out


@dataclass(frozen=True)
class Message:
    """One notification: a title and a body, for every target."""

    kind: str  # change, heartbeat, overdue
    severity: str  # info, warn, critical: Apprise's notify type follows it
    title: str
    body: str


@dataclass(frozen=True)
class Delivery:
    """One message to one target in one pass: sent, held (quiet hours), or failed (kept, tried again next pass)."""

    target: str  # the URL with any password masked
    kind: str
    title: str
    outcome: str  # sent, held, failed
    error: str | None = None
    created_at_s: float | None = None


@dataclass(frozen=True)
class WatchConfig:
    """What --config FILE and the options say; the options add to the file's lists."""

    notify: tuple[str, ...] = ()
    quiet_hours: tuple[int, int] | None = None  # minutes after local midnight: start, end (end may be before start)
    mutes: tuple[str, ...] = ()  # "sda", "temperature_high", "sda:interface_crc_errors"
    heartbeat_days: float | None = 7.0  # None: no heartbeat
    overdue_hours: float = 48.0  # a pass later than this after the one before says so
    self_test: str | None = None  # short, long: start one on each drive that can
    source: str | None = None  # the config file read, for messages
    warnings: tuple[str, ...] = ()  # what reading it found unsafe but not wrong (a file others can read or change)


@dataclass(frozen=True)
class WatchOutcome:
    """One pass: what it saw, what changed, what was sent, and what it says besides."""

    at_s: float
    hostname: str
    state: PassState
    changes: tuple[Change, ...]
    deliveries: tuple[Delivery, ...]
    previous_at_s: float | None
    overdue_s: float | None  # how late this pass came (None: on time, or the first)
    heartbeat: bool  # a heartbeat was due this pass
    quiet: bool  # the pass fell in quiet hours
    self_tests: tuple[tuple[str, str], ...] = ()  # (device, what happened)
    notes: tuple[str, ...] = ()
    findings: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)  # device -> its Findings this pass
    saved: bool = False
