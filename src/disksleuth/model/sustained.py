"""Frozen dataclasses for the `sustained` profile: throughput against bytes written, its phases, the cliff."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FillPoint:
    """One bandwidth-log window: when it ended, how much had been written by then, at what rate."""

    t_s: float
    written_bytes: int
    mbps: float


@dataclass(frozen=True)
class Phase:
    start_bytes: int
    end_bytes: int
    start_s: float
    end_s: float
    mbps: float  # bytes in the phase over its duration


@dataclass(frozen=True)
class Recovery:
    """A short burst written after idling: how much ran at burst speed again."""

    idle_s: float
    written_bytes: int
    fast_bytes: int  # written before the rate fell (all of it when it never fell)
    mbps: float  # the burst's first phase
    recovered_pct: float | None  # fast_bytes as % of the cache found by the fill
    fell: bool  # whether the rate fell within the burst
    points: tuple[FillPoint, ...] = ()


@dataclass(frozen=True)
class Sustained:
    written_bytes: int
    duration_s: float
    cache_exhausted_at_bytes: int | None  # None: no cliff (or the cliff was heat, see cause)
    burst_mbps: float | None
    sustained_mbps: float | None
    phases: tuple[Phase, ...]
    cause: str | None  # "cache", "thermal" or None (no cliff)
    cliff_at_bytes: int | None = None  # the first cliff, whatever its cause
    cliff_at_s: float | None = None
    drop_pct: float | None = None
    temperature_at_cliff_c: float | None = None
    temperature_peak_c: float | None = None
    temperature_warning_c: float | None = None
    reason: str = ""  # why this cause, in words
    points: tuple[FillPoint, ...] = ()
    temperatures: tuple[tuple[float, float], ...] = ()  # (seconds since the fill started, °C)
    recovery: Recovery | None = None
    stopped_by: str = "size"  # "size" or "time" (--max-time reached first)
    judged: bool = True  # False: too few windows to look for a cliff (neither "cliff" nor "no cliff")

    @property
    def mbps(self) -> float | None:
        """The fill's one rate: bytes written over fill time (fio's io_bytes over its runtime)."""
        return round(self.written_bytes / self.duration_s / 1e6, 1) if self.duration_s > 0 else None
