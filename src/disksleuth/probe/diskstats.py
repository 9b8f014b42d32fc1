"""/proc/diskstats: every block device's I/O counters in one read (Documentation/admin-guide/iostats.rst).

A line is `MAJ MIN NAME` then 11 fields (Linux 2.6-4.17), 15 (4.18+: discards) or 17 (5.5+: flushes). Lines are
split on whitespace, never matched with a pattern, and cut at MAX_LINE_BYTES first: a captured or planted file
cannot make this slow. psutil's disk_io_counters reads the same file but drops the in-flight count and the
weighted time that give the queue size, so this reads it directly."""

from __future__ import annotations

import os

from disksleuth.model.iostat import DiskCounters
from disksleuth.probe.sysfs import MAX_PROC_BYTES, read_regular_file

# A real line is under 200 bytes (17 unsigned longs and a name of at most 32 bytes, DISK_NAME_LEN).
MAX_LINE_BYTES = 512
_FIELD_COUNTS = (11, 15, 17)


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """The devices of a /proc/diskstats text by kernel name; a line that is not the kernel's is skipped."""
    out: dict[str, DiskCounters] = {}
    for raw in text.splitlines():
        parts = raw[:MAX_LINE_BYTES].split()
        if len(parts) < 3 + _FIELD_COUNTS[0]:
            continue
        fields = parts[3:]
        if len(fields) not in _FIELD_COUNTS:
            continue
        numbers = [_unsigned(value) for value in (parts[0], parts[1], *fields)]
        if any(number is None for number in numbers):
            continue
        major, minor, *values = (n for n in numbers if n is not None)
        extra: list[int | None] = [*values[11:], *([None] * (17 - len(values)))]
        out[parts[2]] = DiskCounters(parts[2], major, minor, *values[:11], *extra)
    return out


def _unsigned(text: str) -> int | None:
    # isdigit() takes other scripts' digits (and int() reads them): only ASCII 0-9 is the kernel's.
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def read_diskstats(procfs_root: str = "/proc") -> dict[str, DiskCounters] | None:
    """The counters now, or None when the file cannot be read (no procfs, a root without it)."""
    raw = read_regular_file(os.path.join(procfs_root, "diskstats"), MAX_PROC_BYTES)
    if raw is None:
        return None
    return parse_diskstats(raw.decode("ascii", errors="replace"))
