"""A self-test started on a drive (`health DEV --self-test short|long`, and watch's self-test policy)."""

from __future__ import annotations

from dataclasses import dataclass

from disksleuth.model import Finding
from disksleuth.model.run import Health, SelfTest


@dataclass(frozen=True)
class SelfTestStart:
    device: str  # the node smartctl was given, "/dev/sda"
    kind: str  # "short" or "long"
    started: bool  # the drive accepted the command
    already_running: bool  # a test was running: smartctl refused to start another (nothing was aborted)
    started_at_s: float  # wall clock of the request
    estimate_minutes: int | None = None  # the drive's own estimate (ATA polling minutes, smartctl's "Please wait")
    progress: SelfTest | None = None  # the test running now, as the drive reports it right after
    health: Health | None = None  # the reading taken right after (kept in the health history)
    smartctl_said: str = ""  # smartctl's own line about the start, for the record
    findings: tuple[Finding, ...] = ()  # the reading's findings, judged against the drive's history

    @property
    def done_by_s(self) -> float | None:
        """When the drive expects to be done (its estimate from the start)."""
        return self.started_at_s + self.estimate_minutes * 60 if self.estimate_minutes is not None else None
