"""Other I/O on a test's device (issue 36: foreign_io), judged from real captures: /proc/diskstats before and after
one second of fio on a loop device over /dev/shm (tests/data/procfs/diskstats), and /proc/PID/io of a fio reading
at 20 MB/s and of a shell (tests/data/procfs/procio). Counters that wrap, a device removed meanwhile, an array's
members, the reader's bounds. Fast: no fio here; test_io_surround.py measures."""

from __future__ import annotations

import dataclasses
import os

from conftest import DATA, result_with_series

from disksleuth.analysis.baseline import Choice, _judge_one, findings, status_line
from disksleuth.analysis.foreign import Watched, copies, foreign_io, other_io
from disksleuth.model.arrays import StackNode
from disksleuth.model.foreign import IoReading, ProcessIo, ProcessIoReading
from disksleuth.model.iostat import SECTOR_BYTES, DiskCounters
from disksleuth.probe.diskstats import parse_diskstats
from disksleuth.probe.procio import parse_proc_io, parse_proc_stat, read_process_io

PROCFS = os.path.join(DATA, "procfs")


def _stats(name: str) -> dict[str, DiskCounters]:
    with open(os.path.join(PROCFS, "diskstats", name), encoding="ascii") as fh:
        return parse_diskstats(fh.read())


BEFORE, AFTER = _stats("diskstats"), _stats("diskstats-after-fio")
LOOP_READ = 823424 * SECTOR_BYTES  # what loop0 did in the capture: fio's randrw, alone on the device
LOOP_WRITE = 822200 * SECTOR_BYTES


def _reading(at_s: float, disks: dict[str, DiskCounters] | None, children: tuple[int, int] = (0, 0),
             procs: dict[int, ProcessIo] | None = None) -> IoReading:  # fmt: skip
    return IoReading(at_s, disks, ProcessIoReading(procs or {}, unreadable=1), *children)


def test_fio_alone_on_a_loop_device_is_no_other_io() -> None:
    """A loop device's own counters count fio's I/O exactly: the children's block I/O equals the device's."""
    f = other_io(_reading(0.0, BEFORE), _reading(1.2, AFTER, (LOOP_READ, LOOP_WRITE)), Watched("loop0"), 0, 0)
    assert f is not None
    assert (f.other_read_bytes, f.other_write_bytes, f.found) == (0, 0, False)
    assert f.test_read_bytes == LOOP_READ and f.share_pct == 0.0


def test_fio_json_io_bytes_is_the_floor_when_the_children_counters_say_nothing() -> None:
    f = other_io(_reading(0.0, BEFORE, (0, 0)), _reading(1.2, AFTER, (0, 0)), Watched("loop0"), LOOP_READ, LOOP_WRITE)
    assert f is not None and not f.found and f.other_bytes == 0


def test_another_reader_is_other_io_with_its_rate_and_name() -> None:
    """fio moved 60 MB less than the device did: a second reader (whose /proc/PID/io grew by about that much) is
    named; a process that moved far more than the device's other I/O did it elsewhere and is not."""
    other = 60_000_000
    procs0 = {4242: ProcessIo(4242, "fio", 1000, 0), 77: ProcessIo(77, "bash", 0, 0), 9: ProcessIo(9, "tar", 0, 0)}
    procs1 = {
        4242: ProcessIo(4242, "fio", 1000 + other, 0),
        77: ProcessIo(77, "bash", 5_000_000_000, 0),  # a shell that reaped a child busy elsewhere
        9: ProcessIo(9, "tar", 0, 200_000),  # a trifle
    }
    before = _reading(0.0, BEFORE, (0, 0), procs0)
    after = _reading(1.5, AFTER, (LOOP_READ - other, LOOP_WRITE), procs1)
    f = other_io(before, after, Watched("loop0"), 0, 0)
    assert f is not None and f.found
    assert f.other_read_bytes == other and f.other_write_bytes == 0 and f.other_mbps == 40.0
    assert [p.name for p in f.processes] == ["fio"] and f.processes_unreadable == 1
    finding = foreign_io([dataclasses.replace(result_with_series([40.0, 41.0]), foreign_io=f)])
    assert finding is not None and finding.code == "foreign_io" and finding.severity == "warn"
    assert "40 MB/s of other I/O on loop0" in finding.message and "fio (pid 4242) read 40 MB/s" in finding.message
    assert "1 process(es) whose /proc/PID/io could not be read" in finding.message


def test_the_threshold_is_five_percent_and_one_mb_per_second() -> None:
    small = 5_000_000  # 0.6% of the test's 843 MB over 1 s, though above 1 MB/s
    f = other_io(_reading(0.0, BEFORE), _reading(1.0, AFTER, (LOOP_READ - small, LOOP_WRITE)), Watched("loop0"), 0, 0)
    assert f is not None and f.other_read_bytes == small and not f.found


def test_counters_that_wrap_are_read_modulo_and_a_reset_or_a_removed_device_says_so() -> None:
    loop = BEFORE["loop0"]
    near = dataclasses.replace(loop, sectors_read=2**32 - 10, sectors_written=5)
    wrapped = dataclasses.replace(loop, sectors_read=20, sectors_written=5)
    f = other_io(_reading(0.0, {"loop0": near}), _reading(1.0, {"loop0": wrapped}), Watched("loop0"), 0, 0)
    assert f is not None and f.other_read_bytes == 30 * SECTOR_BYTES and f.notes == ()
    big = dataclasses.replace(loop, sectors_read=2**40, sectors_written=0)
    reset = dataclasses.replace(loop, sectors_read=100, sectors_written=0)  # removed and attached again
    f = other_io(_reading(0.0, {"loop0": big}), _reading(1.0, {"loop0": reset}), Watched("loop0"), 0, 0)
    assert f is not None and f.other_bytes == 0 and not f.found and "went back" in f.notes[0]
    f = other_io(_reading(0.0, BEFORE), _reading(1.0, {}), Watched("loop0"), 0, 0)
    assert f is not None and not f.found and "not in /proc/diskstats after the test" in f.notes[0]
    assert other_io(_reading(0.0, None), _reading(1.0, AFTER), Watched("loop0"), 0, 0) is None  # no procfs
    assert other_io(_reading(1.0, BEFORE), _reading(1.0, AFTER), Watched("loop0"), 0, 0) is None  # no time passed
    assert other_io(_reading(0.0, BEFORE), _reading(1.0, AFTER), Watched(None), 0, 0) is None  # tmpfs: no device


def _disk(name: str) -> StackNode:
    return StackNode(name, "disk")


def test_an_arrays_members_are_weighed_by_its_layout() -> None:
    raid1 = StackNode("md0", "md", "raid1", children=(_disk("sda"), _disk("sdb")))
    raid5 = StackNode("md1", "md", "raid5", children=(_disk("sda"), _disk("sdb"), _disk("sdc")))
    crypt_on_raid1 = StackNode("dm-0", "dm", "crypt", children=(raid1,))
    btrfs = StackNode("pool", "btrfs", "raid1", children=(_disk("sda"), _disk("sdb"), _disk("sdc")))
    assert (copies(raid1, writes=False), copies(raid1, writes=True)) == (1.0, 2.0)
    assert (copies(raid5, writes=False), copies(raid5, writes=True)) == (1.0, None)
    assert copies(crypt_on_raid1, writes=True) == 2.0
    assert copies(btrfs, writes=True) == 2.0  # two copies, whatever the number of devices
    assert copies(StackNode("dm-1", "dm", "thin", children=(_disk("sda"),)), writes=False) is None
    # A raid1 of two members read by fio at 100 MB: the members read 100 MB between them, and 40 MB more for
    # someone reading one member directly.
    disks0 = {
        n: dataclasses.replace(BEFORE["loop0"], name=n, sectors_read=0, sectors_written=0) for n in ("sda", "sdb")
    }
    mb = 1_000_000 // SECTOR_BYTES
    disks1 = {"sda": dataclasses.replace(disks0["sda"], sectors_read=90 * mb),
              "sdb": dataclasses.replace(disks0["sdb"], sectors_read=50 * mb)}  # fmt: skip
    f = other_io(_reading(0.0, disks0), _reading(2.0, disks1, (100 * mb * SECTOR_BYTES, 0)), Watched(None, raid1), 0, 0)
    assert f is not None and f.devices == ("sda", "sdb") and f.found and f.other_read_bytes == 40 * mb * SECTOR_BYTES


def test_proc_pid_io_is_read_from_a_captured_tree_bounded() -> None:
    root = os.path.join(PROCFS, "procio", "proc")
    found = read_process_io(root)
    assert found.processes[4242] == ProcessIo(4242, "fio", 35651584, 0) and found.processes[4243].name == "bash"
    assert found.processes[4244] == ProcessIo(4244, "kworker/u8:2-loop2", 1133555712, 11792384, kernel=True)
    assert (found.unreadable, found.not_read) == (0, 0)
    capped = read_process_io(root, most=1)
    assert len(capped.processes) == 1 and capped.not_read == 2
    assert read_process_io(root, skip=frozenset({4242, 4244})).processes.keys() == {4243}
    assert read_process_io("/nonexistent").processes == {}
    assert parse_proc_io("read_bytes: 10\nwrite_bytes: 9\ncancelled_write_bytes: 4\n") == (10, 5)
    assert parse_proc_io("read_bytes: ten\nwrite_bytes: 9\n") is None and parse_proc_io("") is None
    # A name may hold parentheses and spaces: the kernel's own ")" is the last one.
    assert parse_proc_stat("7 (a) (b c) S 1 7 7 0 -1 4194304 0 0") == ("a) (b c", False)
    assert parse_proc_stat("7 (x) S 1") is None and parse_proc_stat("") is None


def test_a_loop_devices_kernel_worker_is_named_after_the_process() -> None:
    """The loop driver's worker thread moves the bytes a reader asked for: it may fit the other I/O as well as
    the reader does, and is named after it, as a kernel thread."""
    other = 60_000_000
    procs0 = {4242: ProcessIo(4242, "fio", 0, 0), 99: ProcessIo(99, "kworker/u8:2-loop0", 0, 0, kernel=True)}
    procs1 = {4242: ProcessIo(4242, "fio", other - 1_000_000, 0),
              99: ProcessIo(99, "kworker/u8:2-loop0", other, 0, kernel=True)}  # fmt: skip
    before = _reading(0.0, BEFORE, (0, 0), procs0)
    f = other_io(before, _reading(1.5, AFTER, (LOOP_READ - other, LOOP_WRITE), procs1), Watched("loop0"), 0, 0)
    assert f is not None and [p.name for p in f.processes] == ["fio", "kworker/u8:2-loop0"]
    finding = foreign_io([dataclasses.replace(result_with_series([40.0, 41.0]), foreign_io=f)])
    assert finding is not None and "kworker/u8:2-loop0 (pid 99, a kernel thread)" in finding.message


def test_a_baseline_says_the_other_io_before_it_says_slower_than_usual() -> None:
    judged = _judge_one("SEQ1M_Q8T1_read", "read_mbps", 40.0, 1.0, [(1, 100.0, 1.0), (2, 101.0, 1.0), (3, 99.0, 1.0)])
    assert judged.verdict == "slower"
    busy = dataclasses.replace(judged, other_io="other I/O on loop0 at 20.0 MB/s")
    from disksleuth.analysis.baseline import Baseline

    (finding,) = findings(Baseline(Choice("median", 5), None, (busy,)), "loop0")
    assert finding.code == "slower_than_usual"
    said = finding.message
    assert said.index("other I/O on loop0 at 20.0 MB/s") < said.index("below its median")
    assert finding.hint.startswith("Other I/O shared the device")
    assert status_line(Baseline(Choice("median", 5), None, (busy,))).startswith(
        "Baseline: beside other I/O on loop0 at 20.0 MB/s (foreign_io), slower than usual"
    )
