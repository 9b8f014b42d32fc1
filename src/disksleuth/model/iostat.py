"""Counters read from /proc between measurements: a block device's I/O counters at one instant.

Field meanings are the kernel's (Documentation/admin-guide/iostats.rst). Sectors are 512 bytes whatever the
device's logical block size (the block layer counts in 512-byte units). Counters are unsigned longs in the kernel
and wrap: a difference of two snapshots is taken modulo 2**64 (or 2**32 on a 32-bit kernel) by analysis/."""

from __future__ import annotations

from dataclasses import dataclass

SECTOR_BYTES = 512  # include/linux/blk_types.h SECTOR_SHIFT: diskstats counts 512-byte sectors


@dataclass(frozen=True)
class DiskCounters:
    name: str  # kernel name, e.g. "nvme0n1", "loop3", "sda1"
    major: int
    minor: int
    reads_completed: int
    reads_merged: int
    sectors_read: int
    read_ms: int  # time spent reading, summed over requests
    writes_completed: int
    writes_merged: int
    sectors_written: int
    write_ms: int
    in_flight: int  # requests issued to the driver and not yet completed (not a counter)
    io_ms: int  # time the device had I/O in flight (utilisation)
    weighted_io_ms: int  # time in queue, weighted by requests (average queue size)
    # Linux 4.18+ (discards) and 5.5+ (flushes); None on older kernels, whose lines are shorter.
    discards_completed: int | None = None
    discards_merged: int | None = None
    sectors_discarded: int | None = None
    discard_ms: int | None = None
    flushes_completed: int | None = None
    flush_ms: int | None = None

    @property
    def dev(self) -> str:
        return f"{self.major}:{self.minor}"

    @property
    def read_bytes(self) -> int:
        return self.sectors_read * SECTOR_BYTES

    @property
    def written_bytes(self) -> int:
        return self.sectors_written * SECTOR_BYTES
