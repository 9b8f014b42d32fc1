"""What a baseline is made of (analysis/baseline.py judges, store/baseline.py reads): which drive, how it
was measured, and the figures of its earlier runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Identity:
    """Which stored runs are of the same drive: by keyed serial id, else model, size, host and device name."""

    serial_id: str | None
    hostname: str | None
    device_name: str | None
    model: str | None
    capacity_bytes: int | None
    backing_file: str | None = None  # a loop device's backing file, when there is no serial

    @property
    def by_serial(self) -> bool:
        return bool(self.serial_id)

    @property
    def usable(self) -> bool:
        return self.by_serial or bool(self.device_name)

    @property
    def words(self) -> str:
        if self.by_serial:
            return "the same drive (by its serial number)"
        over = f" over {self.backing_file}" if self.backing_file else ""
        return f"{self.device_name}{over} on {self.hostname or 'this host'} (no serial number: by name, model and size)"


@dataclass(frozen=True)
class Method:
    """How a run was measured, as far as a baseline cares: the same profile, engine and size."""

    profile: str | None
    engine: str | None
    size_bytes: int | None


@dataclass(frozen=True)
class TestFigures:
    """One test of an earlier run: its figures and its 95% interval."""

    __test__ = False  # not a pytest test class

    bs_bytes: int | None
    read_mbps: float | None = None
    write_mbps: float | None = None
    read_iops: float | None = None
    write_iops: float | None = None
    ci95_pct: float | None = None
    cache_affected: bool = False

    @classmethod
    def of(cls, test: Mapping[str, Any]) -> TestFigures:
        """From a run document's test."""

        def number(key: str) -> float | None:
            value = test.get(key)
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

        bs = test.get("bs_bytes")
        return cls(
            bs_bytes=bs if isinstance(bs, int) else None,
            read_mbps=number("read_mbps"),
            write_mbps=number("write_mbps"),
            read_iops=number("read_iops"),
            write_iops=number("write_iops"),
            ci95_pct=number("ci95_pct"),
            cache_affected=bool(test.get("cache_affected")),
        )

    def get(self, metric: str) -> float | None:
        value = getattr(self, metric)
        return float(value) if isinstance(value, (int, float)) and value > 0 else None


@dataclass(frozen=True)
class EarlierRun:
    run_id: int
    started_at: str | None
    started_at_s: float | None  # None: no readable start time
    tests: Mapping[str, TestFigures]
