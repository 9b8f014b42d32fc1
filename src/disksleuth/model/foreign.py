"""Other I/O on a test's device while the test ran (issue 36): counters read around it, and what they showed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disksleuth.model.iostat import DiskCounters


@dataclass(frozen=True)
class ProcessIo:
    """One process's storage I/O (/proc/PID/io read_bytes and write_bytes, the bytes it made the block layer
    fetch or send, on any device), or what it did between two readings."""

    pid: int
    name: str  # its command name (/proc/PID/stat's, as comm)
    read_bytes: int
    write_bytes: int
    kernel: bool = False  # a kernel thread (a loop device's worker, jbd2): its I/O is done for someone else


@dataclass(frozen=True)
class ProcessIoReading:
    """Every readable process's counters at one instant, bounded: at most a cap of them read."""

    processes: Mapping[int, ProcessIo] = field(default_factory=dict)
    unreadable: int = 0  # processes whose io file could not be read (another user's without root, gone meanwhile)
    not_read: int = 0  # processes past the cap, not read at all


@dataclass(frozen=True)
class IoReading:
    """The counters around a test at one instant: the devices', the processes', and the block I/O of this
    process's reaped children (getrusage RUSAGE_CHILDREN: fio's own, ramp and all, counted as the kernel counts
    /proc/PID/io)."""

    at_s: float  # time.monotonic()
    disks: Mapping[str, DiskCounters] | None  # None: /proc/diskstats could not be read
    processes: ProcessIoReading | None
    children_read_bytes: int | None  # None: getrusage said nothing (no task I/O accounting)
    children_write_bytes: int | None


@dataclass(frozen=True)
class ForeignIo:
    """What a test's device did besides the test (run.bench reads it around each test; analysis.foreign judges).

    Bytes are the block layer's (512-byte sectors of /proc/diskstats), fio's own taken away: what fio made the
    device read and write, measured the same way. `other_*` are never negative."""

    devices: tuple[str, ...]  # the devices whose counters were read ("loop2"; an array's members too)
    seconds: float  # between the two readings
    test_read_bytes: int  # fio's own, as the block layer counted them
    test_write_bytes: int
    other_read_bytes: int
    other_write_bytes: int
    other_mbps: float  # (other read + other write) / seconds, MB/s
    share_pct: float | None  # other bytes as a share of the test's own; None when the test moved nothing
    found: bool  # above FOREIGN_SHARE of the test's bytes and FOREIGN_FLOOR_MBPS: the test is marked
    processes: tuple[ProcessIo, ...] = ()  # other processes whose I/O meanwhile fits it, most first (any device)
    processes_unreadable: int = 0  # processes whose counters could not be read
    processes_not_read: int = 0  # past the cap
    notes: tuple[str, ...] = ()  # what could not be told, in plain words

    @property
    def other_bytes(self) -> int:
        return self.other_read_bytes + self.other_write_bytes
