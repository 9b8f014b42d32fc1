"""Frozen dataclasses for what fio reports: its JSON report (probe/fio_parse.py parses it) and the
status samples of a running job (probe/fio.py reads them). analysis/ works on these."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FioDirection:
    io_bytes: int
    bw_bytes: float  # bytes per second
    iops: float
    total_ios: int
    runtime_ms: int
    lat_mean_ns: float | None
    lat_max_ns: float | None
    percentiles_ns: dict[float, float] = field(default_factory=dict)
    percentile_source: str | None = None  # "lat" or "clat"

    @property
    def active(self) -> bool:
        return self.total_ios > 0 or self.io_bytes > 0


@dataclass(frozen=True)
class FioJob:
    name: str
    error: int
    read: FioDirection | None
    write: FioDirection | None
    mixed: FioDirection | None
    usr_cpu: float | None
    sys_cpu: float | None
    job_runtime_ms: int | None
    elapsed_s: int | None
    jobs_merged: int = 1
    percentiles_approx: bool = False  # merged from jobs without group_reporting


@dataclass(frozen=True)
class FioReport:
    version: str | None
    timestamp_ms: int | None
    jobs: tuple[FioJob, ...]
    messages: tuple[str, ...] = ()  # non-JSON lines fio printed on stdout


@dataclass(frozen=True)
class StatusSample:
    """One cumulative status document, reduced to what progress and series need."""

    elapsed_s: float
    read_bytes: int
    write_bytes: int
    ios: int
    timestamp_ms: int | None
    runtime_ms: int | None = None  # fio's own time since its counters last started (ramp_time resets them)


@dataclass(frozen=True)
class BwLogEntry:
    """One entry of a fio bandwidth log (--write_bw_log): time, rate and direction."""

    t_ms: int
    bytes_per_s: float
    direction: str
