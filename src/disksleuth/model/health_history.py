"""Drive health over time: one stored reading of a drive's counters, and an acknowledged counter value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disksleuth.model import Finding


@dataclass(frozen=True)
class HealthReading:
    """What one health reading leaves in the store: who the drive is, when, and its numbers.

    `counters` are Health.counters() (the warning-sign counters, media.* and interface.* among them);
    `drive_key` is the drive's keyed serial id, else "HOST:DEVICE" for a drive that reports no serial."""

    read_at_s: float  # wall clock (epoch seconds) of the reading: smartctl's own local_time for a saved file
    hostname: str
    device_name: str | None  # kernel name, "sda"
    drive_key: str
    serial_id: str | None
    model: str | None = None
    firmware: str | None = None
    protocol: str | None = None
    source: str = "health"  # check, bench, health, exporter, file
    smart_passed: bool | None = None
    temperature_c: float | None = None
    percentage_used: int | None = None
    available_spare_pct: int | None = None
    power_on_hours: int | None = None
    counters: Mapping[str, int] = field(default_factory=dict)
    id: int | None = None  # the store's row id, once stored


@dataclass(frozen=True)
class HealthAck:
    """A counter value a person accepted (`health --ack`): the finding stays info until the counter grows past it."""

    drive_key: str
    attribute: str  # a key of Health.counters(): "interface.UDMA_CRC_Error_Count (ATA 199)"
    value: int
    acked_at_s: float
    hostname: str | None = None
    device_name: str | None = None


@dataclass(frozen=True)
class HistoryView:
    """`health --history DEVICE`: every stored reading under the name, and the newest judged against the rest."""

    device_name: str
    hostname: str
    readings: list[HealthReading]  # oldest first, every drive that answered under the name
    findings: list[Finding]


@dataclass(frozen=True)
class AckOutcome:
    device_name: str
    attribute: str
    value: int | None  # None: undone
    reading_at_s: float | None
    removed: int = 0


@dataclass(frozen=True)
class DriveLine:
    """One drive in `health` without a DEVICE."""

    reading: HealthReading
    findings: list[Finding]
    live: bool  # read now, not only remembered by the store
