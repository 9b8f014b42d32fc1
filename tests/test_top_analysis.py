"""`top`'s judgement of two snapshots (analysis/top.py), on real captured pairs from this machine
(tests/data/procfs/top-*/{before,after}, made by capture_top.py during the load each names) and on the edge cases
the kernel's counters have: wraps, a device removed or replaced, a process that exits or whose PID is reused, a
parent that reaps a busy child, an interval of 0."""

from __future__ import annotations

import dataclasses
import os

import pytest

from disksleuth.analysis.top import (
    DEVICE_CLASSES,
    counter_delta,
    device_class,
    device_profiles,
    latency_high,
    process_rates,
    top_report,
)
from disksleuth.model import Device
from disksleuth.model.iostat import DiskCounters
from disksleuth.model.top import (
    DeviceProfile,
    DriveTemperature,
    Pressure,
    PressureLine,
    ProcessIo,
    ProcessSample,
    ProcessStat,
    Snapshot,
)
from disksleuth.present.top_view import to_text
from disksleuth.probe.procfs import read_uptime
from disksleuth.run.top import read_snapshot

DATA = os.path.join(os.path.dirname(__file__), "data", "procfs")


def captured(scenario: str) -> tuple[Snapshot, Snapshot]:
    root = os.path.join(DATA, scenario)
    shots = []
    for side in ("before", "after"):
        where = os.path.join(root, side)
        taken = read_uptime(where)
        assert taken is not None
        shots.append(read_snapshot(where, taken_s=taken, ticks=100, page=4096))
    return shots[0], shots[1]


def loops(*stacked: tuple[str, str]) -> dict[str, DeviceProfile]:
    """The captures' devices as this machine listed them: loop devices over /dev/shm and a virtio disk; a loop
    device over another one is stacked with it (the same bytes counted on both)."""
    profiles = {f"loop{n}": DeviceProfile(f"loop{n}", "virtual") for n in range(8)}
    profiles["vda"] = DeviceProfile("vda", "virtual")
    for upper, lower in stacked:
        profiles[upper] = DeviceProfile(upper, "virtual", related=(lower,))
        profiles[lower] = DeviceProfile(lower, "virtual", related=(upper,))
    return profiles


def codes(report) -> list[str]:  # noqa: ANN001
    return [f.code for f in report.findings]


# --- real captures ------------------------------------------------------------------------------------------------


def test_the_idle_machine_gives_no_warning() -> None:
    report = top_report(*captured("top-idle"), loops())
    assert not [f for f in report.findings if f.severity in ("warn", "critical")], report.findings
    assert report.devices and all(d.util_pct < 90 for d in report.devices)


def test_fio_on_a_loop_device_over_a_throttled_one_saturates_it_and_fio_does_its_io() -> None:
    # loop4 over loop3, loop3 read-capped at 50 MiB/s (52.4 MB/s) by the blkio group fio ran in: loop4's requests
    # wait for loop3's, so loop4 is the slow device top should name.
    report = top_report(*captured("top-fio-saturated"), loops(("loop4", "loop3")))
    loop4 = next(d for d in report.devices if d.name == "loop4")
    assert loop4.util_pct == 100 and loop4.queue_size > 7 and loop4.r_await_ms and loop4.r_await_ms > 100
    assert loop4.read_mbps == pytest.approx(52.4, rel=0.1)
    assert loop4.avg_request_kb == pytest.approx(1048.6, rel=0.01)  # fio's 1 MiB requests
    saturated = next(f for f in report.findings if f.code == "device_saturated")
    assert saturated.device == "loop4" and saturated.evidence["util_pct"] == 100
    assert "busy 100% of the time" in saturated.message and "53.1 MB/s read" in saturated.message
    dominant = next(f for f in report.findings if f.code == "process_dominates")
    assert dominant.evidence["comm"] == "fio" and dominant.evidence["share_pct_at_least"] >= 80
    assert report.processes[0].comm == "fio"
    assert "latency_high" not in codes(report)  # 160 ms with 8 queued is the queue, not a slow device
    assert report.delayacct is False and any("kernel.task_delayacct=1" in n for n in report.notes)


def test_a_shell_whose_busy_child_exited_is_not_credited_with_the_childs_whole_life() -> None:
    # In that capture a pytest that had read 9.8 GB exited; its shells up to bash 8512 exited with it, and the kernel
    # added the lot to bash 8512's counters in one instant (kernel/exit.c).
    before, after = captured("top-fio-saturated")
    rates, exited, _ = process_rates(before.processes or {}, after.processes or {}, 2.0, 100, False)
    bash = next(r for r in rates if r.pid == 8512)
    assert bash.total_mbps < 1 and exited >= 5


def test_a_process_swapping_under_a_memory_limit_is_swapping_not_writeback() -> None:
    # python3 touching 160 MB in a memory cgroup capped at 64 MB, swap on a loop device over /dev/shm.
    report = top_report(*captured("top-swapping"), loops())
    assert "swapping" in codes(report) and "writeback_stall" not in codes(report)
    swapping = next(f for f in report.findings if f.code == "swapping")
    assert swapping.evidence["swap_in_pages_per_s"] > 1000 and swapping.evidence["memory_some_pct"] >= 5
    assert "The slowness is memory" in swapping.message


def test_a_writer_held_in_balance_dirty_pages_is_a_writeback_stall() -> None:
    # dd into ext4 on a loop device whose writes were capped at 10 MiB/s, its bdi limited to 64 MB of dirty data.
    report = top_report(*captured("top-writeback"), loops())
    stall = next(f for f in report.findings if f.code == "writeback_stall")
    assert stall.evidence["waiting"] == [{"pid": 32440, "comm": "dd", "wchan": "balance_dirty_pages"}]
    assert "dd (PID 32440) in balance_dirty_pages" in stall.message


def test_the_view_of_a_loaded_capture_fits_80_columns() -> None:
    report = top_report(*captured("top-fio-saturated"), loops(("loop4", "loop3")))
    text = to_text(report, 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    lines = text.splitlines()
    assert lines[1].split()[:4] == ["DEVICE", "r/s", "w/s", "rMB/s"]
    assert lines[2].split()[0] == "loop4" and "device_saturated (loop4)" in text
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("PID"))
    assert lines[header + 1].split()[1] == "fio"


# --- counters and their edges -------------------------------------------------------------------------------------


def disk(name: str = "sda", dev: tuple[int, int] = (8, 0), **values: int) -> DiskCounters:
    fields = dict.fromkeys(
        ("reads_completed", "reads_merged", "sectors_read", "read_ms", "writes_completed", "writes_merged",
         "sectors_written", "write_ms", "in_flight", "io_ms", "weighted_io_ms"), 0)  # fmt: skip
    fields.update(values)
    return DiskCounters(name, dev[0], dev[1], **fields)


def snap(t: float, disks: dict[str, DiskCounters] | None = None, processes=None, **kw) -> Snapshot:  # noqa: ANN001,ANN003
    return Snapshot(taken_s=t, disks=disks if disks is not None else {}, processes=processes or {}, **kw)


def test_counter_deltas_wrap_at_the_kernels_width() -> None:
    assert counter_delta(2**64 - 5, 10) == 15
    assert counter_delta(2**32 - 5, 10, 2**32) == 15
    assert counter_delta(1_000_000, 10) is None  # went back: a reset, not a wrap


def test_a_wrapped_millisecond_counter_still_gives_the_right_await() -> None:
    # ms fields are printed as unsigned int (block/genhd.c): they wrap every 49.7 days of I/O time.
    a = disk(reads_completed=100, sectors_read=0, read_ms=2**32 - 100, io_ms=2**32 - 500, weighted_io_ms=2**32 - 100)
    b = disk(reads_completed=110, sectors_read=20480, read_ms=100, io_ms=500, weighted_io_ms=100)
    report = top_report(snap(0, {"sda": a}), snap(1, {"sda": b}), {"sda": DeviceProfile("sda", "hdd")})
    (rate,) = report.devices
    assert rate.r_await_ms == 20.0 and rate.util_pct == 100 and rate.queue_size == 0.2
    assert rate.read_mbps == pytest.approx(10.49, abs=0.01)


def test_a_device_removed_replaced_or_reset_is_said_not_rated() -> None:
    before = {"sda": disk(), "sdb": disk("sdb", (8, 16)), "sdc": disk("sdc", (8, 32), reads_completed=50)}
    after = {"sdb": disk("sdb", (8, 17)), "sdc": disk("sdc", (8, 32), reads_completed=3), "sdd": disk("sdd")}
    report = top_report(snap(0, before), snap(1, after), {}, device_names=["sda", "sdb", "sdc", "sdd", "sde"])
    assert report.devices == ()
    notes = " ".join(report.notes)
    for said in ("sda went away", "sdb is another device now", "sdc's counters went back", "sdd appeared",
                 "sde is not in /proc/diskstats"):  # fmt: skip
        assert said in notes


def test_an_interval_of_zero_gives_no_rates_and_says_so() -> None:
    shot = snap(5.0, {"sda": disk()})
    report = top_report(shot, shot, {"sda": DeviceProfile("sda", "hdd")})
    assert report.interval_s == 0 and report.devices == () and report.findings == ()
    assert any("no rates" in n for n in report.notes)


def proc(pid: int, comm: str, read: int | None, *, ppid: int = 1, start: int = 10, state: str = "S",
         blkio: int | None = 0, wchan: str | None = None) -> ProcessSample:  # fmt: skip
    io = ProcessIo(read, 0, 0) if read is not None else None
    return ProcessSample(ProcessStat(pid, comm, state, ppid, start, blkio), io, wchan)


def test_processes_that_exit_reuse_a_pid_or_hide_their_io_are_counted_not_rated() -> None:
    before = {1: proc(1, "init", None), 2: proc(2, "gone", 5), 3: proc(3, "old", 5), 4: proc(4, "reader", 0)}
    after = {1: proc(1, "init", None), 3: proc(3, "new", 0, start=99), 4: proc(4, "reader", 20_000_000)}
    rates, exited, unreadable = process_rates(before, after, 2.0, 100, None)
    assert [(r.comm, r.read_mbps) for r in rates] == [("reader", 10.0)]
    assert exited == 2 and unreadable == 1


def test_block_io_delay_is_the_share_of_the_interval_waiting() -> None:
    before = {7: proc(7, "db", 0, blkio=100)}
    after = {7: proc(7, "db", 0, blkio=150, state="D", wchan="io_schedule")}
    (rate,), _, _ = process_rates(before, after, 1.0, 100, True)
    assert rate.blkio_delay_pct == 50.0 and rate.state == "D"
    (off,), _, _ = process_rates(before, after, 1.0, 100, False)
    assert off.blkio_delay_pct is None


def test_a_child_reaped_in_the_interval_leaves_only_what_it_did_in_the_interval() -> None:
    before = {10: proc(10, "sh", 1_000), 11: proc(11, "make", 0, ppid=10), 12: proc(12, "cc", 8_000_000, ppid=11)}
    # cc read 2 MB more, then exited; make reaped it and exited; sh reaped make: sh's counter took both whole.
    after = {10: proc(10, "sh", 1_000 + 10_000_000)}
    (sh,), exited, _ = process_rates(before, after, 1.0, 100, None)
    assert exited == 2 and sh.read_mbps == 2.0


# --- the rules ----------------------------------------------------------------------------------------------------


def rate_of(device_class: str, *, reads: int, read_ms: int, sectors: int = 8, io_ms: int = 1000, queue_ms: int = 0):  # noqa: ANN201
    a = disk()
    b = disk(reads_completed=reads, sectors_read=sectors * reads, read_ms=read_ms, io_ms=io_ms, weighted_io_ms=queue_ms)
    report = top_report(snap(0, {"sda": a}), snap(1, {"sda": b}), {"sda": DeviceProfile("sda", device_class)})
    return report


@pytest.mark.parametrize(
    ("device_class", "await_ms", "warns"),
    [("hdd", 20, False), ("hdd", 400, True), ("nvme", 2, False), ("nvme", 40, True), ("sata_ssd", 45, True),
     ("usb", 80, False), ("sd_mmc", 90, False), ("sd_mmc", 300, True), ("virtual", 400, False), ("virtual", 2000, True),
     ("stacked", 5000, False), ("unknown", 5000, False)],
)  # fmt: skip
def test_latency_high_judges_each_class_by_its_own_table(device_class: str, await_ms: int, warns: bool) -> None:
    # 5 reads of 4 KiB, each taking await_ms, one at a time (queue of one).
    report = rate_of(device_class, reads=5, read_ms=5 * await_ms, queue_ms=1000)
    assert ("latency_high" in codes(report)) is warns, report.findings
    if warns:
        finding = next(f for f in report.findings if f.code == "latency_high")
        assert finding.evidence["r_await_ms"] == await_ms and f"{await_ms:,} ms" in finding.message


def test_a_long_queue_is_load_not_slowness() -> None:
    # An HDD at 400 ms a read with 32 queued: each waits for 31 others (~13 ms each). Saturated, not slow.
    report = rate_of("hdd", reads=80, read_ms=80 * 400, queue_ms=32_000)
    assert "device_saturated" in codes(report) and "latency_high" not in codes(report)


def test_a_parallel_device_is_not_saturated_by_one_request_at_a_time() -> None:
    nvme = rate_of("nvme", reads=10_000, read_ms=1_000, queue_ms=1_000)  # 100% busy, one in flight: QD1 latency
    assert "device_saturated" not in codes(nvme)
    assert "device_saturated" in codes(rate_of("nvme", reads=100_000, read_ms=20_000, queue_ms=20_000))


def test_a_device_with_requests_that_never_complete_is_said_to_hang() -> None:
    a, b = disk(in_flight=4), disk(in_flight=4, io_ms=1000, weighted_io_ms=4000)
    report = top_report(snap(0, {"sda": a}), snap(1, {"sda": b}), {"sda": DeviceProfile("sda", "hdd")})
    (finding,) = report.findings
    assert finding.code == "device_saturated" and "completed none" in finding.message


def test_latency_table_states_its_reasons() -> None:
    for limits in DEVICE_CLASSES.values():
        assert limits.why and limits.read_ms > 0 and limits.parallel >= 1
    assert latency_high(rate_of("hdd", reads=1, read_ms=9000).devices[0], 1.0) is None  # one request: an outlier


def test_a_hot_drive_at_its_warning_temperature_is_thermal_throttling() -> None:
    hot = DriveTemperature("nvme0n1", 71.0, 70.0, 80.0)
    cool = DriveTemperature("nvme1n1", 45.0, 70.0, 80.0)
    report = top_report(snap(0), snap(1, temperatures=(hot, cool)), {})
    (finding,) = report.findings
    assert finding.code == "thermal_throttling" and finding.device == "nvme0n1" and "71 °C" in finding.message


def test_swapping_needs_a_stream_of_pages_and_a_memory_stall() -> None:
    from disksleuth.model.top import MemoryCounters

    def memory(pages: int) -> MemoryCounters:
        return MemoryCounters(pages, pages, 0, 0, 1 << 20, 1 << 19, 1 << 20, 1 << 19)

    def pressure(total_us: int) -> Pressure:
        return Pressure(PressureLine(0, 0, 0, total_us), PressureLine(0, 0, 0, 0))

    base = snap(0, memory=memory(0), memory_pressure=pressure(0))
    assert "swapping" in codes(top_report(base, snap(1, memory=memory(300), memory_pressure=pressure(100_000)), {}))
    assert not top_report(base, snap(1, memory=memory(300), memory_pressure=pressure(1_000)), {}).findings
    assert not top_report(base, snap(1, memory=memory(50), memory_pressure=pressure(900_000)), {}).findings


def test_device_classes_come_from_the_transport() -> None:
    def dev(transport: str, rotational: bool | None = None) -> Device:
        return Device(name="x", path="/dev/x", transport=transport, rotational=rotational)

    assert [device_class(dev(t, r)) for t, r in (("sata", True), ("sata", False), ("sata", None), ("nvme", None),
            ("usb", True), ("mmc", None), ("loop", None), ("virtio", True), ("dm", None), ("unknown", None))] == [
        "hdd", "sata_ssd", "hdd", "nvme", "usb", "sd_mmc", "virtual", "virtual", "stacked", "unknown"]  # fmt: skip
    part = dataclasses.replace(dev("sata", False), name="sda1", parent="sda")
    profiles = device_profiles([dataclasses.replace(dev("sata", False), name="sda", partitions=(part,))])
    assert profiles["sda1"].device_class == "sata_ssd" and "sda" in profiles["sda1"].related


def test_a_narrower_terminal_drops_the_least_needed_columns_first() -> None:
    report = top_report(*captured("top-fio-saturated"), loops(("loop4", "loop3")))
    text = to_text(report, 60)
    assert max(len(line) for line in text.splitlines()) <= 60
    header = text.splitlines()[1].split()
    assert header == ["DEVICE", "rMB/s", "wMB/s", "r_await", "w_await", "aqu-sz", "%util"]
    assert "off" in text  # delay accounting off: said in its column, never a dash that reads as none
