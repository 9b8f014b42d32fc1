"""What one exporter scrape sees: each disk with its chain, findings and cached health, and the stored figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from disksleuth.model import Device, Finding, LinkChain


@dataclass(frozen=True)
class DiskState:
    device: Device
    chain: LinkChain
    findings: tuple[Finding, ...]
    health: object | None  # model.run.Health; loaded lazily so a scrape without health stays light
    health_read_at: float | None  # wall-clock seconds
    wear: object | None = None  # model.wear.WearForecast: when the drive reaches 100% of its endurance


@dataclass(frozen=True)
class Snapshot:
    disks: tuple[DiskState, ...]
    bench: tuple[dict[str, Any], ...]  # latest stored figures per device and test (store.latest.latest_tests)
    bench_error: str | None
    hostname: str
    serial_key: bytes | None = None  # what serial ids are keyed with (serials.py); none: no ids at all
    bench_read_at: float | None = None  # wall-clock seconds of the last successful store read
    store_missing: bool = False  # bench_error only says no store exists yet (nothing has been saved)
