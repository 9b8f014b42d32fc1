"""`disksleuth top` as a user runs it: --once --json against real fio on throttled loop devices and a process that
swaps under a memory cgroup, bad options (one line, exit 2), a process that exits and a device removed during the
sample, another user's processes (run as nobody), the live view on a pseudo-terminal, and the JSON schema."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from conftest import blkio_throttle, have_blkio, in_cgroup, loop_device, needs_fio, needs_loop, remove_cgroup
from jsonschema import Draft202012Validator

from disksleuth.doc.schema import load_schema
from disksleuth.run.top import Top

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
SCHEMA = load_schema()
MEMORY_CGROUP = "/sys/fs/cgroup/memory"


def assert_top_document(doc: dict) -> None:
    narrowed = {k: v for k, v in SCHEMA.items() if k != "anyOf"}
    Draft202012Validator({**narrowed, "$ref": "#/$defs/top"}).validate(doc)
    Draft202012Validator(SCHEMA).validate(doc)


def _first_device() -> str:
    with open("/proc/diskstats") as fh:
        names = [line.split()[2] for line in fh if len(line.split()) > 3]
    return next(n for n in names if not n.startswith(("loop", "ram", "zram"))) if names else "vda"


# --- the command line ---------------------------------------------------------------------------------------------


def test_once_json_is_one_valid_document(cli) -> None:  # noqa: ANN001
    res = cli("top", "--once", "--seconds", "0.3", "--json")
    assert res.code in (0, 1), res.err
    doc = res.json()
    assert_top_document(doc)
    assert doc["kind"] == "top" and 0.25 < doc["interval_s"] < 1.0
    assert doc["processes_seen"] > 1 and doc["summary"]
    assert res.code == (1 if any(f["severity"] in ("warn", "critical") for f in doc["findings"]) else 0)


def test_json_alone_samples_once(cli) -> None:  # noqa: ANN001
    res = cli("top", "--json", "--seconds", "0.2")
    assert res.code in (0, 1) and res.json()["kind"] == "top"


def test_device_and_pid_narrow_the_sample(cli) -> None:  # noqa: ANN001
    name = _first_device()
    res = cli("top", "--once", "--seconds", "0.2", "--json", "--device", f"/dev/{name}", "--pid", str(os.getpid()))
    doc = res.json()
    assert [d["name"] for d in doc["devices"]] == [name]
    assert doc["narrowed_to"] == {"devices": [name], "pids": [os.getpid()]}
    assert doc["processes_seen"] == 1 and all(p["pid"] == os.getpid() for p in doc["processes"])


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--seconds", "0"], "--seconds must be positive: '0'"),
        (["--seconds", "-1"], "--seconds must be positive: '-1'"),
        (["--seconds", "nan"], "--seconds must be positive"),
        (["--seconds", "0.01"], "--seconds must be between 0.1 and 3600 seconds, not 0.01"),
        (["--interval", "0"], "--interval must be positive"),
        (["--once", "--interval", "1"], "--interval sets the live view's refresh"),
        (["--pid", "abc"], "--pid must be a process ID"),
        (["--pid", "0"], "--pid must be a process ID"),
        (["--device", "nosuchdisk"], "no block device 'nosuchdisk'"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(cli, argv: list[str], words: str) -> None:  # noqa: ANN001
    res = cli("top", *argv)  # each fails before anything is sampled, live view or not
    assert res.code == 2, (res.out, res.err)
    assert words in res.err and len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    res = cli("top", "--json", *[a for a in argv if a != "--once"])
    assert res.code == 2 and res.json()["error"]["code"] in ("usage", "device_not_found")


def test_a_process_not_running_is_one_line(cli) -> None:  # noqa: ANN001
    child = subprocess.Popen(["true"])
    child.wait()
    res = cli("top", "--once", "--pid", str(child.pid))
    assert res.code == 2 and f"process {child.pid} is not running" in res.err


def test_the_live_view_off_a_terminal_prints_each_refresh(cli) -> None:  # noqa: ANN001
    res = cli("top", "--seconds", "0.4", "--interval", "0.2")
    assert res.code == 0, res.err
    assert res.out.count("disksleuth top") == 2 and res.out.count("DEVICE") == 2


# --- what happens during a sample: real processes and devices, the sleep between the two readings replaced ----------


def test_a_process_that_exits_during_the_sample_is_said(tmp_path) -> None:  # noqa: ANN001
    child = subprocess.Popen(["sleep", "30"])

    def end_it(_seconds: float) -> None:
        child.kill()
        child.wait()

    report = Top(pids=[child.pid], sleep=end_it).sample(0.1)
    assert f"Process {child.pid} exited during the sample." in report.notes
    assert report.processes == () and report.processes_exited == 1


LOOP_CTL_ADD, LOOP_CTL_REMOVE = 0x4C80, 0x4C81  # include/uapi/linux/loop.h


@needs_loop
def test_a_device_removed_during_the_sample_is_said() -> None:
    fd = os.open("/dev/loop-control", os.O_RDWR)
    try:
        number = fcntl.ioctl(fd, LOOP_CTL_ADD, 200 + os.getpid() % 50)
    except OSError as exc:
        os.close(fd)
        pytest.skip(f"no loop device to add: {exc}")
    name = f"loop{number}"
    try:
        top = Top(devices=[name], sleep=lambda _s: fcntl.ioctl(fd, LOOP_CTL_REMOVE, number))
        report = top.sample(0.1)
        assert f"{name} went away during the sample." in report.notes and report.devices == ()
    finally:
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, LOOP_CTL_REMOVE, number)
        os.close(fd)


@pytest.mark.root
def test_another_users_processes_are_counted_as_unreadable_as_nobody() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run as nobody")
    res = subprocess.run(
        ["runuser", "-u", "nobody", "--", *DISKSLEUTH, "top", "--once", "--seconds", "0.2", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    assert_top_document(doc)
    assert doc["processes_unreadable"] > 1 and "Traceback" not in res.stderr
    assert any("could not be read" in note for note in doc["notes"])


# --- real load ----------------------------------------------------------------------------------------------------


def _top_json(*extra: str) -> dict:
    res = subprocess.run([*DISKSLEUTH, "top", "--once", "--json", *extra], capture_output=True, text=True, timeout=60)
    assert res.returncode in (0, 1) and "Traceback" not in res.stderr, res.stderr
    doc = json.loads(res.stdout)
    assert_top_document(doc)
    return doc


def _fio_reading(dev: str, procs: str, seconds: int = 3) -> subprocess.Popen[bytes]:
    argv = ["fio", "--name=top", f"--filename={dev}", "--rw=read", "--bs=1M", "--iodepth=8", "--ioengine=libaio",
            "--direct=1", "--time_based", f"--runtime={seconds}", "--output=/dev/null"]  # fmt: skip
    return subprocess.Popen(in_cgroup(procs, argv))


@contextlib.contextmanager
def _loop_over(dev: str) -> Iterator[str]:
    """A loop device backed by another block device: its worker's reads of `dev` are charged to the blkio group of
    whoever read it (loop's per-cgroup workers), so a limit on `dev` makes this device the slow one."""
    upper = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", dev], check=True, capture_output=True,
                           text=True).stdout.strip()  # fmt: skip
    try:
        yield upper
    finally:
        subprocess.run(["losetup", "-d", upper], check=False)


THROTTLE_BPS = 50 * 1024 * 1024  # 52.4 MB/s


def _children(pid: int) -> set[int]:
    """fio's job processes: fio forks one per job (thread=0), a moment after it starts on a loaded machine."""
    deadline = time.monotonic() + 10
    while True:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            found = {int(p) for p in fh.read().split()}
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _assert_held_by_its_limit(doc: dict, jobs: set[int], limited: str) -> None:
    """io_limit names our fio, the limited device, the file and its line."""
    held = [f for f in doc["findings"] if f["code"] == "io_limit" and f["evidence"]["pid"] in jobs]
    assert len(held) == 1, doc["findings"]
    (finding,) = held
    assert finding["device"] == limited and finding["evidence"]["limit"]["file"] == "blkio.throttle.read_bps_device"
    assert finding["evidence"]["limit"]["value"] == THROTTLE_BPS and 80 <= finding["evidence"]["share_pct"] <= 150
    assert (
        "is held by its cgroup's I/O limit: it reads" in finding["message"] and "IOReadBandwidthMax" in finding["hint"]
    )


def _assert_fio_reads_most(doc: dict, jobs: set[int], ours: tuple[str, ...]) -> None:
    """Our fio job is the top reader, at the limit's rate (within 20%: /proc/PID/io counts a read when it is
    submitted, and 8 MiB may be queued at either end of the sample). A process reading more than ours read it from
    another device: when the other devices together carried less than ours did (nothing else running, as under
    pytest's `alone`), ours must be first; beside another test run on this machine, it must be there at its rate."""
    (job,) = [p for p in doc["processes"] if p["pid"] in jobs]
    assert job["comm"] == "fio" and job["read_mbps"] == pytest.approx(THROTTLE_BPS / 1e6, rel=0.2), job
    readers = sorted(doc["processes"], key=lambda p: -(p["read_mbps"] or 0))
    elsewhere = sum(d["read_mbps"] for d in doc["devices"] if d["name"] not in ours)
    if elsewhere < 0.9 * job["read_mbps"]:
        assert readers[0]["pid"] in jobs, (elsewhere, readers[:3])


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.alone
@needs_fio
@needs_loop
def test_fio_on_a_device_over_a_throttled_one_is_saturated_and_fio_does_its_io() -> None:
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    with loop_device(128) as lower, blkio_throttle(lower, read_bps=THROTTLE_BPS) as procs, _loop_over(lower) as upper:
        fio = _fio_reading(upper, procs)
        try:
            time.sleep(0.8)  # fio started and its queue full
            jobs = _children(fio.pid)
            up, low = os.path.basename(upper), os.path.basename(lower)
            doc = _top_json("--seconds", "1")
        finally:
            fio.wait(timeout=30)
    devices = {d["name"]: d for d in doc["devices"]}
    for name in (up, low):
        assert devices[name]["read_mbps"] == pytest.approx(THROTTLE_BPS / 1e6, rel=0.1), devices[name]
    assert devices[up]["util_pct"] >= 90 and devices[up]["queue_size"] >= 1
    saturated = {f["device"] for f in doc["findings"] if f["code"] == "device_saturated"}
    assert up in saturated and low not in saturated, doc["findings"]  # the limit's device waits on nothing
    _assert_fio_reads_most(doc, jobs, (up, low))
    # The share is a lower bound: what other devices read may have been fio's; with nothing else running, fio is
    # named.
    dominates = [f for f in doc["findings"] if f["code"] == "process_dominates" and f["device"] == up]
    assert not dominates or dominates[0]["evidence"]["pid"] in jobs, dominates
    if dominates:
        assert dominates[0]["evidence"]["share_pct_at_least"] >= 80
    _assert_held_by_its_limit(doc, jobs, low)


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.alone
@needs_fio
@needs_loop
def test_fio_held_by_a_limit_on_its_own_device_is_not_called_a_saturated_device() -> None:
    """The limit holds fio before its requests reach the device: the RAM loop device is idle most of the time and
    is not called saturated; the rate and the reader are right."""
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    with loop_device(128) as dev, blkio_throttle(dev, read_bps=THROTTLE_BPS) as procs:
        fio = _fio_reading(dev, procs)
        try:
            time.sleep(0.8)
            jobs = _children(fio.pid)
            doc = _top_json("--seconds", "1")
        finally:
            fio.wait(timeout=30)
    (device,) = [d for d in doc["devices"] if d["name"] == os.path.basename(dev)]
    assert device["read_mbps"] == pytest.approx(THROTTLE_BPS / 1e6, rel=0.1) and device["util_pct"] < 50
    assert device["name"] not in {f["device"] for f in doc["findings"] if f["code"] == "device_saturated"}
    _assert_fio_reads_most(doc, jobs, (device["name"],))
    _assert_held_by_its_limit(doc, jobs, device["name"])


SWAPPER = """
import time
block = bytearray(160 * 1024 * 1024)
end = time.monotonic() + 4
while time.monotonic() < end:
    for i in range(0, len(block), 4096):
        block[i] = (block[i] + 1) & 255
"""


@contextlib.contextmanager
def _swap_on_loop(size_mb: int = 512) -> Iterator[str]:
    with loop_device(size_mb) as dev:
        subprocess.run(["mkswap", "-q", dev], check=True)
        subprocess.run(["swapon", dev], check=True)
        try:
            yield dev
        finally:
            subprocess.run(["swapoff", dev], check=False)


@contextlib.contextmanager
def _memory_group(limit: str) -> Iterator[str]:
    group = os.path.join(MEMORY_CGROUP, f"disksleuth-test-{uuid.uuid4().hex[:8]}")
    os.mkdir(group)
    try:
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as fh:
            fh.write(limit)
        yield os.path.join(group, "cgroup.procs")
    finally:
        for _ in range(50):  # a process still exiting keeps the group busy for a moment
            try:
                remove_cgroup(group, MEMORY_CGROUP)
                break
            except OSError:
                time.sleep(0.1)


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.alone
@needs_loop
def test_a_process_swapping_under_a_memory_limit_is_swapping() -> None:
    if not os.path.exists(os.path.join(MEMORY_CGROUP, "memory.limit_in_bytes")):
        pytest.skip("cgroup v1 memory controller is not mounted")
    with _swap_on_loop(), _memory_group("64M") as procs:
        swapper = subprocess.Popen(in_cgroup(procs, [sys.executable, "-c", SWAPPER]))
        try:
            time.sleep(1.5)  # its 160 MB filled, the 64 MB limit reached: it swaps from here on
            doc = _top_json("--seconds", "1")
        finally:
            swapper.wait(timeout=60)
    swapping = [f for f in doc["findings"] if f["code"] == "swapping"]
    assert swapping, (doc["memory"], doc["pressure"])
    assert swapping[0]["evidence"]["swap_out_pages_per_s"] > 1000 and doc["pressure"]["memory_some_pct"] >= 5
    assert "writeback_stall" not in [f["code"] for f in doc["findings"]]


# --- the live view on a terminal ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_live_view_redraws_in_place_on_a_terminal() -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([*DISKSLEUTH, "top", "--seconds", "2.1", "--interval", "0.7"], stdin=slave,
                            stdout=slave, stderr=slave, env=env)  # fmt: skip
    os.close(slave)
    from conftest import drain_terminal

    screen = drain_terminal(master, proc, timeout_s=30).decode("utf-8", errors="replace")
    assert proc.returncode == 0, screen
    assert screen.count("DEVICE") >= 3 and "\x1b[" in screen  # drawn three times, in place (cursor movement)
    assert "Traceback" not in screen


@pytest.mark.slow
def test_sigterm_ends_the_live_view_with_the_cursor_given_back() -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "LINES": "40", "TERM": "xterm-256color"}
    proc = subprocess.Popen([*DISKSLEUTH, "top", "--interval", "0.3"], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = b""
    deadline = time.monotonic() + 20
    while b"DEVICE" not in chunks and time.monotonic() < deadline:  # the first refresh is on the screen
        if select.select([master], [], [], 0.5)[0]:
            chunks += os.read(master, 65536)
    proc.send_signal(signal.SIGTERM)
    from conftest import drain_terminal

    screen = (chunks + drain_terminal(master, proc, timeout_s=20)).decode("utf-8", errors="replace")
    assert proc.returncode == 128 + signal.SIGTERM, screen[-500:]
    assert "disksleuth: terminated" in screen and "\x1b[?25h" in screen and "Traceback" not in screen


@pytest.mark.parametrize(("seconds", "interval", "samples"), [(2.5, 1.0, [1.0, 1.0, 0.5]), (0.1, 1.0, [0.1]),
                                                              (3.0, 1.0, [1.0, 1.0, 1.0])])  # fmt: skip
def test_the_live_view_ends_on_time_with_at_least_one_sample(seconds: float, interval: float, samples: list) -> None:
    now = [100.0]

    def sleep(s: float) -> None:
        now[0] += s

    top = Top(clock=lambda: now[0], sleep=sleep, pids=[os.getpid()])
    assert [round(r.interval_s, 3) for r in top.watch(interval, seconds)] == samples


@pytest.mark.slow
@needs_loop
def test_top_opens_no_device_node_and_writes_nothing(tmp_path) -> None:  # noqa: ANN001
    """It only reads: no /dev node is opened (a loop device's backing is known from sysfs, not from the node's
    LOOP_GET_STATUS64 as `list` asks it), and nothing is opened for writing."""
    if shutil.which("strace") is None:
        pytest.skip("strace missing")
    trace = tmp_path / "trace"
    with loop_device(64) as lower, _loop_over(lower) as upper:
        related = Top().profiles[os.path.basename(upper)].related  # what it is stacked on, known all the same
        assert os.path.basename(lower) in related
        argv = ["strace", "-f", "-e", "trace=open,openat,openat2", "-o", str(trace), *DISKSLEUTH, "top", "--once",
                "--seconds", "0.2", "--json"]  # fmt: skip
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert res.returncode in (0, 1), res.stderr
    opened = [line for line in trace.read_text().splitlines() if "open" in line and "= -1" not in line]
    assert not [line for line in opened if '"/dev/' in line and "/dev/null" not in line and "/dev/pts" not in line]
    assert not [line for line in opened if any(flag in line for flag in ("O_WRONLY", "O_RDWR", "O_CREAT"))]


def test_pcie_errors_that_grow_during_the_sample_are_link_errors(tmp_path) -> None:  # noqa: ANN001
    """An NVMe drive behind a root port (tests/data/sysfs/aer_oculink_*: the drive's RxErr grew by 1,200 and
    BadDLLP by 40, the root port's by 12) whose counters grow between top's two readings of its path."""
    import shutil as sh

    from conftest import SYSFS

    tree = tmp_path / "sys-root"
    sh.copytree(os.path.join(SYSFS, "aer_oculink_before"), tree, symlinks=True)
    after = os.path.join(SYSFS, "aer_oculink_after")

    def errors_meanwhile(_seconds: float) -> None:
        for folder, _dirs, files in os.walk(after):
            for name in files:
                if name.startswith("aer_"):
                    src = os.path.join(folder, name)
                    sh.copyfile(src, tree / os.path.relpath(src, after))

    report = Top(sysfs_root=str(tree), devices=["nvme0n1"], pids=[os.getpid()], sleep=errors_meanwhile).sample(0.5)
    (finding,) = [f for f in report.findings if f.code == "link_errors"]
    assert finding.device == "nvme0n1" and finding.severity == "warn"
    assert finding.message.startswith("correctable errors on 0000:01:00.0 grew by 1,240 during the last")
    assert finding.evidence["grew_by"] == 1240
    quiet = Top(sysfs_root=str(tree), devices=["nvme0n1"], pids=[os.getpid()], sleep=lambda _s: None).sample(0.1)
    assert "link_errors" not in [f.code for f in quiet.findings]
