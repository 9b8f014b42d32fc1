"""A drive's own error log, summarised: the ATA SMART error log or the NVMe Error Information log (issue 38)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorLogEntry:
    """One entry as smartctl shows it. ATA: `number` is smartctl's "Error N", `power_on_hours` when it happened,
    `what` its "Error: UNC at LBA = ..." words. NVMe: `number` is the entry's error count, `what` the status
    smartctl decoded ("Invalid Field in Command"), `status` the raw status field."""

    number: int | None
    what: str | None = None
    power_on_hours: int | None = None
    lba: int | None = None
    status: int | None = None  # NVMe status field (bits 15:1 of DW3 as smartctl prints it, "0x4004" in text)
    command: str | None = None  # ATA: the command that failed, when smartctl names it ("READ FPDMA QUEUED")


@dataclass(frozen=True)
class ErrorLog:
    """The log's own count (ATA: errors since the drive was made; NVMe: its lifetime error count) and the newest
    entries smartctl printed, newest first."""

    kind: str  # "ATA" or "NVMe"
    count: int | None
    entries: tuple[ErrorLogEntry, ...] = ()
