"""`bench` with real fio on real block devices (loop devices over tmpfs, blkio throttling)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import pytest
from conftest import (
    blkio_throttle,
    findings_exit,
    have_blkio,
    in_cgroup,
    loop_device,
    mounted_ext4,
    needs_fio,
    needs_loop,
    sha256_of,
)

from disksleuth.probe.fio_parse import aggregate, parse_fio_json

pytestmark = [needs_fio]

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _bench_json(*args: str, cgroup: str | None = None) -> dict:
    argv = [*DISKSLEUTH, "bench", *args, "--json"]
    if cgroup:
        argv = in_cgroup(cgroup, argv)
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert res.returncode == findings_exit(res.stdout), res.stderr
    return json.loads(res.stdout)


def _test(doc: dict, test_id: str) -> dict:
    return next(t for t in doc["tests"] if t["id"] == test_id)


@pytest.mark.alone
@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_quick_on_loop_matches_its_own_fio_command():
    """RND4K Q32T1 read IOPS within 10% of pasting fio_command by hand, over alternating runs.

    On a device with a steady rate: a bare RAM loop device on this 2-vCPU VM moves ±15% between 3 s runs
    of the same fio command (docs/PERFORMANCE.md), which made this test fail on noise. A blkio IOPS limit
    above what QD1 reaches still tells QD32 from QD1 and a misread figure from a right one. libaio:
    io_uring swings under blk-throttle on this kernel."""
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    with loop_device(256, fill=True) as dev, blkio_throttle(dev, read_iops=40_000) as procs:
        ours, bare = [], []
        for _ in range(3):
            doc = _bench_json(dev, "--profile", "quick", "--engine", "libaio", "--time", "1", cgroup=procs)
            assert doc["schema"] == "disksleuth/1"
            test = _test(doc, "RND4K_Q32T1_read")
            ours.append(test["read_iops"])
            argv = in_cgroup(procs, shlex.split(test["fio_command"]))
            res = subprocess.run(argv, capture_output=True, text=True, check=True)
            bare.append(aggregate(parse_fio_json(res.stdout)).read.iops)
        ratio = statistics.median(ours) / statistics.median(bare)
        assert 0.9 <= ratio <= 1.1, (ours, bare)
        assert statistics.median(bare) == pytest.approx(40_000, rel=0.1)
        # The run carries the contract fields.
        assert {"id", "target", "profile", "started_at", "fio_version", "engine", "host"} <= set(doc["run"])
        for key in (
            "rw",
            "bs_bytes",
            "iodepth",
            "numjobs",
            "read_mbps",
            "read_iops",
            "write_mbps",
            "write_iops",
            "lat_mean_us",
            "lat_p50_us",
            "lat_p99_us",
            "lat_p999_us",
            "lat_max_us",
            "runtime_s",
            "fio_command",
            "cache_affected",
        ):
            assert key in test
        assert test["lat_p50_us"] <= test["lat_p99_us"] <= test["lat_p999_us"] <= test["lat_max_us"]
        assert doc["run"]["engine"] in ("io_uring", "libaio", "psync")


@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_throttled_loop_reads_at_the_throttle():
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    # libaio, not the default io_uring: under cgroup v1 blk-throttle, io_uring reads swing between 20 and
    # 41 MB/s run to run with bare fio 3.33 too (kernel 6.18), while libaio and psync hold 40.0-40.9.
    # Not `alone`: the 40 MB/s throttle sets the rate, forty 1 MiB reads a second, which a test on the other
    # xdist worker cannot slow (unlike a RAM device's GB/s, which is the CPU's).
    with loop_device(512, fill=True) as dev, blkio_throttle(dev, read_bps=40_000_000) as procs:
        doc = _bench_json(dev, "--profile", "quick", "--engine", "libaio", cgroup=procs)
    seq = _test(doc, "SEQ1M_Q8T1_read")
    # 10% (21 runs by hand, alone, under CPU load or beside a RAM loop device's fio, gave 39.8-41.3 MB/s), and
    # no allowance for fio's count of whole requests any more: the figures are of completed requests (issue 37).
    said = (seq["read_mbps"], seq["read_iops"], seq["ci95_pct"], seq["window_s"])
    assert abs(seq["read_mbps"] - 40.0) <= 4.0, said
    assert seq["read_mbps"] == pytest.approx(seq["read_iops"] * seq["bs_bytes"] / 1e6, rel=0.01), said


@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_standard_profile_without_destructive_leaves_raw_device_unchanged():
    with loop_device(128, fill=True) as dev:
        before = sha256_of(dev)
        doc = _bench_json(dev, "--profile", "standard", "--time", "1")
        after = sha256_of(dev)
    assert before == after
    ids = [t["id"] for t in doc["tests"]]
    assert ids == ["SEQ1M_Q8T1_read", "SEQ1M_Q1T1_read", "RND4K_Q32T1_read", "RND4K_Q1T1_read"]
    assert all("--readonly" in t["fio_command"] for t in doc["tests"])
    assert any("write tests need --destructive" in n for n in doc["run"]["notes"])


@pytest.mark.root
@needs_loop
def test_destructive_on_mounted_device_is_refused_and_files_survive():
    with loop_device(128) as dev, mounted_ext4(dev) as mnt:
        path = os.path.join(mnt, "precious.bin")
        with open(path, "wb") as fh:
            fh.write(os.urandom(1 << 20))
        digest = sha256_of(path)
        res = subprocess.run([*DISKSLEUTH, "bench", dev, "--destructive", "--yes"], capture_output=True, text=True)
        assert res.returncode == 2
        assert "refusing to write" in res.stderr and "mounted" in res.stderr
        assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1
        assert sha256_of(path) == digest


@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_destructive_without_tty_needs_yes_and_shows_identity():
    with loop_device(64) as dev:
        res = subprocess.run(
            [*DISKSLEUTH, "bench", dev, "--destructive"], capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        assert res.returncode == 2 and "--yes" in res.stderr
        res = subprocess.run(
            [*DISKSLEUTH, "bench", dev, "--destructive", "--yes", "--json", "--time", "1"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        assert res.returncode == findings_exit(res.stdout), res.stderr
        assert f"DESTRUCTIVE: write tests will overwrite {dev}" in res.stderr and "bytes)" in res.stderr
        ids = [t["id"] for t in json.loads(res.stdout)["tests"]]
        assert "RND4K_Q32T1_write" in ids


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_standard_leaves_directory_empty(tmp_path, sig):
    proc = subprocess.Popen(
        [*DISKSLEUTH, "bench", str(tmp_path), "--profile", "standard", "--size", "64M"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)
    assert proc.poll() is None, proc.communicate()
    assert os.listdir(tmp_path), "the scratch file should exist mid-run"
    # fio names the scratch file through /proc/self/fd, not tmp_path: find it as our child.
    fios: list[str] = []
    for _ in range(40):  # (between two tests, for a moment, there is none)
        fios = subprocess.run(["pgrep", "-P", str(proc.pid), "fio"], capture_output=True, text=True).stdout.split()
        if fios:
            break
        time.sleep(0.05)
    assert fios, "fio should be running mid-run"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert ("interrupted" if sig == signal.SIGINT else "terminated") in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []
    # and no fio left behind
    assert [pid for pid in fios if os.path.exists(f"/proc/{pid}")] == []


def test_missing_fio_is_one_line_with_install_command(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    res = cli("bench", str(tmp_path))
    assert res.code == 2
    assert res.err.strip() == "disksleuth: fio is not installed; install it with: apt-get install fio"


@pytest.mark.root
@needs_loop
def test_read_only_file_system_is_a_clear_error():
    with loop_device(64) as dev, mounted_ext4(dev) as mnt:
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        res = subprocess.run([*DISKSLEUTH, "bench", mnt], capture_output=True, text=True)
        assert res.returncode == 2
        assert "cannot create a scratch file" in res.stderr and "Read-only file system" in res.stderr
        assert "Traceback" not in res.stderr


@pytest.mark.slow
def test_a_decimal_size_that_is_no_whole_mib_is_filled_and_tested(cli, tmp_path):
    # --size 20MB is 19.07 MiB; the 1 MiB fill blocks stopped at 19 MiB and the old code refused to test:
    # "filling the scratch file stopped after 19 MiB of 19 MiB". The region is now whole MiB, and said so.
    res = cli("bench", str(tmp_path), "--size", "20MB", "--time", "1", "--no-save", "--json")
    assert res.code == findings_exit(res.out), res.err
    assert res.json()["run"]["size_bytes"] == 19 * 1024 * 1024 and len(res.json()["tests"]) == 4
    res = cli("bench", str(tmp_path), "--size", "100k")
    assert res.code == 2 and "too small for a scratch file" in res.err


def test_too_large_size_is_refused(cli, tmp_path):
    res = cli("bench", str(tmp_path), "--size", "100T")
    assert res.code == 2 and "more than 90%" in res.err
    # In the units people read (it said "--size 109951162777600 bytes is more than 90% of the ... bytes free").
    assert "--size 100 TiB (109,951.16 GB) is more than 90% of the " in res.err and " GB free" in res.err


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--size", "lots"], "not a size"),
        (["--time", "-3"], "--time must be positive"),
        (["--profile", "nope"], "invalid choice"),
    ],
)
def test_bad_bench_arguments(cli, tmp_path, args, needle):
    res = cli("bench", str(tmp_path), *args)
    assert res.code == 2 and needle in res.err and res.err.count("\n") == 1


def test_missing_target(cli, tmp_path):
    res = cli("bench", str(tmp_path / "nope"))
    assert res.code == 2 and "no such file" in res.err


@pytest.mark.slow
def test_flash_profile_region_and_sync(tmp_path):
    doc = _bench_json(str(tmp_path), "--profile", "flash", "--size", "64M", "--time", "1")
    by_id = {t["id"]: t for t in doc["tests"]}
    assert set(by_id) == {"SEQ1M_Q1T1_read", "SEQ1M_Q1T1_write", "RND4K_Q1T1_read", "RND4K_Q1T1_write"}
    for t in by_id.values():
        assert f"--offset={32 * 1024 * 1024}" in t["fio_command"] and f"--size={32 * 1024 * 1024}" in t["fio_command"]
    assert by_id["RND4K_Q1T1_write"]["sync"] and "--sync=1" in by_id["RND4K_Q1T1_write"]["fio_command"]
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_riscos_reports_percent_of_ram_reference(tmp_path):
    doc = _bench_json(str(tmp_path), "--profile", "riscos", "--size", "64M", "--time", "1")
    assert len(doc["reference"]) == 3
    for t in doc["tests"]:
        pct = t["pct_of_reference"]
        assert pct, t["id"]
        ref = next(r for r in doc["reference"] if r["id"] == t["id"])
        for key, value in pct.items():
            assert value == pytest.approx(100 * t[key] / ref[key], abs=0.1)


@pytest.mark.slow
def test_tmpfs_is_marked_cache_affected():
    """tmpfs accepts O_DIRECT since Linux 6.6, but it is memory: the figures must say so."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    target = tempfile.mkdtemp(dir="/dev/shm", prefix="disksleuth-test-")
    try:
        doc = _bench_json(target, "--size", "32M", "--time", "1", "--no-save")
        assert all(t["cache_affected"] for t in doc["tests"])
        assert any("tmpfs" in n and "RAM" in n for n in doc["run"]["notes"])
        assert os.listdir(target) == []
    finally:
        os.rmdir(target)
