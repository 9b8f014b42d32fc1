"""What the steps of a run share: the events sink the caller supplies, and where the tests run once resolved."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Protocol

from disksleuth.model.run import TestResult
from disksleuth.profiles import TestSpec


class Events(Protocol):
    def message(self, text: str) -> None: ...
    def warn(self, text: str) -> None: ...
    def confirm(self, text: str) -> bool: ...
    def phase(self, label: str, total_s: float | None) -> None: ...
    def test_start(self, index: int, total: int, spec: TestSpec, total_s: float) -> None: ...
    def status(
        self, elapsed_s: float, read_mbps: float, write_mbps: float, iops: float, written_bytes: int | None = None
    ) -> None: ...
    def test_done(self, result: TestResult) -> None: ...
    def close(self) -> None: ...


class QuietEvents:
    """No drawing (not a TTY, or --json). Messages (the device identity before destructive writes)
    still go to stderr; warnings need no echo, they are in the run's notes."""

    def message(self, text: str) -> None:
        print(f"disksleuth: {text}", file=sys.stderr, flush=True)

    def warn(self, text: str) -> None:
        pass

    def confirm(self, text: str) -> bool:
        return False

    def phase(self, label: str, total_s: float | None) -> None:
        pass

    def test_start(self, index: int, total: int, spec: TestSpec, total_s: float) -> None:
        pass

    def status(
        self, elapsed_s: float, read_mbps: float, write_mbps: float, iops: float, written_bytes: int | None = None
    ) -> None:
        pass

    def test_done(self, result: TestResult) -> None:
        pass

    def close(self) -> None:
        pass



@dataclass(frozen=True)
class Where:
    """Where and how the tests run on one target (the real one, or the RAM reference), once resolved."""

    path: str  # what fio opens (for a scratch file: through our open private directory)
    region: int
    offset: int | None
    engine: str
    direct: bool
    cache_affected: bool
    read_only: bool
    shown_path: str | None = None  # the path people see and the recorded command names, when not `path`
    temporary: str | None = None  # made for this run and gone after it: what it was, for the record
    pass_fds: tuple[int, ...] = ()  # descriptors fio needs (the private directory behind `path`)
