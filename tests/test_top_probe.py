"""The /proc readers `top` uses (probe/procfs.py, probe/drive_temp.py): real captures from this machine
(tests/data/procfs/top-*/, made by capture_top.py), the live /proc, the odd process names the kernel allows, and any
text giving a model or None, never an exception, in time linear in its length."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disksleuth.probe.drive_temp import read_drive_temperature
from disksleuth.probe.procfs import (
    clock_ticks_per_s,
    list_pids,
    parse_memory,
    parse_pid_io,
    parse_pid_stat,
    parse_pressure,
    process_gone,
    read_memory,
    read_pressure,
    read_process,
    read_task_delayacct,
    read_uptime,
    read_wchan,
)

DATA = os.path.join(os.path.dirname(__file__), "data", "procfs")
SWAPPING = os.path.join(DATA, "top-swapping")
WRITEBACK = os.path.join(DATA, "top-writeback")
SATURATED = os.path.join(DATA, "top-fio-saturated")

# 42 fields: pid, (comm), state, then fields 4..44 as a 6.x kernel writes them (fields 42-44 are blkio ticks, guest
# time, child guest time); starttime (22) is 4242, delayacct_blkio_ticks (42) is 17.
_TAIL = " ".join(["S", "1", *[str(n) for n in range(5, 22)], "4242", *[str(n) for n in range(23, 42)], "17", "0", "0"])


def _stat(comm: str, pid: int = 321) -> str:
    return f"{pid} ({comm}) {_TAIL}\n"


@pytest.mark.parametrize("comm", ["fio", "a b", "x) S 1 2 (", "))", "(", "tmux: server", "kworker/u8:0-events_unbound"])
def test_a_process_name_with_spaces_and_parentheses_is_read_from_the_last_parenthesis(comm: str) -> None:
    stat = parse_pid_stat(_stat(comm))
    assert stat is not None
    assert (stat.pid, stat.comm, stat.state, stat.ppid) == (321, comm, "S", 1)
    assert stat.start_ticks == 4242 and stat.blkio_ticks == 17


def test_a_stat_line_of_an_old_kernel_has_no_blkio_ticks_and_a_broken_one_is_none() -> None:
    short = "7 (init) S " + " ".join(str(n) for n in range(4, 40))  # 2.6.17: 39 fields, no field 42
    assert parse_pid_stat(short) is not None and parse_pid_stat(short).blkio_ticks is None  # type: ignore[union-attr]
    for broken in ("", "321", "321 (fio", "x (fio) S 1", "321 (fio) SS " + _TAIL[2:], "321 (fio) S \u0661 2 3"):
        assert parse_pid_stat(broken) is None


def test_the_real_captures_are_read() -> None:
    before = os.path.join(SATURATED, "before")
    pids = list_pids(before)
    assert pids and 1 in pids
    fio = [read_process(pid, before) for pid in pids]
    readers = {s.stat.comm for s in fio if s is not None and s.io is not None and s.io.read_bytes > 50_000_000}
    assert "fio" in readers
    init = read_process(1, before)
    assert init is not None and init.io is None  # /proc/1/io was unreadable, even to root: no io file captured
    assert read_uptime(before) is not None and read_task_delayacct(before) is False
    io = read_pressure("io", before)
    assert io is not None and io.full is not None and io.some.total_us > 0
    memory = read_memory(os.path.join(SWAPPING, "after"))
    assert memory is not None and memory.swap_total_kib and memory.swap_out_pages
    assert memory.dirty_kib is not None and memory.mem_available_kib


def test_a_process_in_d_state_has_its_wait_read() -> None:
    after = os.path.join(WRITEBACK, "after")
    waiting = [s for s in (read_process(p, after) for p in list_pids(after) or []) if s and s.stat.state == "D"]
    assert [(s.stat.comm, s.wchan) for s in waiting] == [("dd", "balance_dirty_pages")]


def test_pressure_lines_are_read_and_odd_ones_skipped() -> None:
    text = (
        "some avg10=0.38 avg60=0.18 avg300=0.18 total=2620312\nfull avg10=0.01 avg60=0.06 avg300=0.14 total=2399836\n"
    )
    pressure = parse_pressure(text)
    assert pressure is not None and pressure.some.avg10_pct == 0.38 and pressure.full is not None
    assert pressure.full.total_us == 2399836
    assert parse_pressure(text.splitlines()[0]) is not None  # /proc/pressure/cpu before 5.13: no full line
    for bad in ("", "\n\n", "full avg10=0 avg60=0 avg300=0 total=1", "some avg10=x avg60=0 avg300=0 total=1",
                "some avg10=1 avg60=0 avg300=0 total=-1", "some a b c d e f"):  # fmt: skip
        assert parse_pressure(bad) is None


def test_memory_tables_keep_what_they_hold() -> None:
    memory = parse_memory("pswpin 5\npswpout 7\nnr_dirty_threshold 9\nbogus\n", "Dirty: 1024 kB\nWriteback:\n")
    assert memory is not None
    assert (memory.swap_in_pages, memory.swap_out_pages, memory.dirty_threshold_pages) == (5, 7, 9)
    assert memory.dirty_kib == 1024 and memory.writeback_kib is None and memory.swap_total_kib is None
    assert parse_memory(None, None) is None and parse_memory("", "") is None


def test_io_needs_its_three_byte_counters() -> None:
    assert parse_pid_io("rchar: 1\nread_bytes: 2\nwrite_bytes: 3\ncancelled_write_bytes: 4\n") is not None
    assert parse_pid_io("read_bytes: 2\nwrite_bytes: 3\n") is None
    assert parse_pid_io("read_bytes: -2\nwrite_bytes: 3\ncancelled_write_bytes: 4\n") is None


def test_the_live_proc_is_read() -> None:
    me = read_process(os.getpid())
    assert me is not None and me.stat.pid == os.getpid() and me.stat.start_ticks > 0
    assert read_pressure("io") is not None and read_memory() is not None
    assert read_task_delayacct() in (True, False, None) and clock_ticks_per_s() > 0
    assert read_uptime() is not None and read_uptime("/nonexistent") is None
    assert list_pids("/nonexistent") is None and read_pressure("io", "/nonexistent") is None


def test_a_process_that_exits_reads_as_gone() -> None:
    child = subprocess.Popen(["sleep", "0"])
    child.wait()
    assert read_process(child.pid) is None and process_gone(child.pid)
    assert read_wchan(child.pid) is None


def test_a_planted_fifo_or_device_node_is_never_opened(tmp_path) -> None:  # noqa: ANN001
    pid_dir = tmp_path / "99"
    pid_dir.mkdir()
    os.mkfifo(pid_dir / "stat")  # opening a FIFO for reading blocks until a writer comes
    os.symlink("/dev/zero", pid_dir / "io")
    os.mkfifo(tmp_path / "diskstats")
    (tmp_path / "pressure").mkdir()
    os.symlink("/dev/zero", tmp_path / "pressure" / "io")
    start = time.monotonic()
    assert read_process(99, str(tmp_path)) is None
    assert read_pressure("io", str(tmp_path)) is None
    assert time.monotonic() - start < 1


def test_a_huge_capture_file_is_refused_and_a_long_line_is_cut(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "vmstat").write_text("pswpin 1\n" + "x" * (2 << 20) + "\n")
    (tmp_path / "meminfo").write_text("Dirty: " + "1" * 100_000 + " kB\n")  # a number longer than any counter
    start = time.monotonic()
    memory = read_memory(str(tmp_path))
    assert time.monotonic() - start < 1
    assert memory is None or memory.dirty_kib is None


@given(st.text(max_size=3000))
def test_any_text_gives_a_model_or_none(text: str) -> None:
    parse_pid_stat(text)
    parse_pid_io(text)
    parse_pressure(text)
    parse_memory(text, text)


def test_the_parsers_are_linear_on_a_megabyte() -> None:
    blob = ("(" * 200_000) + (")" * 200_000) + (" 1" * 200_000)
    start = time.monotonic()
    parse_pid_stat(blob)
    parse_pressure("some " + "avg10=1 " * 100_000)
    parse_memory("pswpin " * 100_000, "Dirty:" * 100_000)
    assert time.monotonic() - start < 1


def test_a_drive_without_a_sensor_has_no_temperature(tmp_path) -> None:  # noqa: ANN001
    home = tmp_path / "sys" / "block" / "nvme0n1" / "device" / "hwmon3"
    home.mkdir(parents=True)
    assert read_drive_temperature("nvme0n1", str(tmp_path)) is None
    (home / "temp1_input").write_text("71850\n")
    (home / "temp1_max").write_text("70850\n")
    (home / "temp1_crit").write_text("255000\n")  # a bridge's "no limit": not a limit
    temp = read_drive_temperature("nvme0n1", str(tmp_path))
    assert temp is not None and (temp.temp_c, temp.warn_c, temp.crit_c) == (71.85, 70.85, None)
    assert read_drive_temperature("nosuchdisk") is None
