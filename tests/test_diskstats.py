"""/proc/diskstats read as the kernel writes it: real captures, the three line lengths kernels have used, and
any text giving devices or nothing, never an exception."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from disksleuth.model.iostat import SECTOR_BYTES
from disksleuth.probe.diskstats import parse_diskstats, read_diskstats

DATA = os.path.join(os.path.dirname(__file__), "data", "procfs", "diskstats")


def test_a_real_capture_reads_every_device_with_its_counters() -> None:
    with open(os.path.join(DATA, "diskstats-after-fio"), encoding="ascii") as fh:
        devices = parse_diskstats(fh.read())
    loop = devices["loop0"]
    assert (loop.major, loop.minor, loop.dev) == (7, 0, "7:0")
    assert loop.reads_completed == 102928 and loop.writes_completed == 102775
    assert loop.read_bytes == 823424 * SECTOR_BYTES  # sectors are 512 bytes, whatever the block size
    assert loop.io_ms == 908 and loop.weighted_io_ms == 3986 and loop.in_flight == 0
    assert devices["vda"].flushes_completed == 2105


def test_older_kernels_shorter_lines_are_read_and_newer_fields_are_none() -> None:
    old = " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"  # Linux < 4.18: no discard or flush fields
    mid = " 8 16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"  # 4.18-5.4: discards, no flushes
    devices = parse_diskstats(old + mid)
    assert devices["sda"].weighted_io_ms == 11 and devices["sda"].discards_completed is None
    assert devices["sdb"].sectors_discarded == 14 and devices["sdb"].flushes_completed is None


def test_lines_not_the_kernels_are_skipped() -> None:
    text = "garbage\n 8 0 sda 1 2 3\n 8 0 sdc x 2 3 4 5 6 7 8 9 10 11\n 8 0 sdd \u0661 2 3 4 5 6 7 8 9 10 11\n"
    assert parse_diskstats(text) == {}


def test_the_live_file_is_read() -> None:
    devices = read_diskstats()
    assert devices is not None and devices  # every Linux with a block layer has /proc/diskstats
    assert read_diskstats("/nonexistent") is None


@given(st.text(max_size=2000))
def test_any_text_gives_devices_or_nothing(text: str) -> None:
    for counters in parse_diskstats(text).values():
        assert counters.reads_completed >= 0
