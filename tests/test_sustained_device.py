"""The sustained profile for real: real fio on an emulated cached drive (tests/emulated_cache.py: a loop device
over tmpfs, a cgroup v1 blkio group, and a watcher that lowers the write throttle once the "cache" is full),
and its safety rules on real loop devices and file systems.

Sizes are scaled down from the issue's acceptance run (600 MB cache then 50 MB/s, --size 1600M) to keep the
suite fast: 300 MB then 50 MB/s over 600 MiB (about 7 s of fio)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from conftest import blkio_throttle, findings_exit, in_cgroup, loop_device, mounted_ext4, needs_fio, needs_loop
from emulated_cache import CacheModel, cache_drive, missing, sectors_written

pytestmark = [
    pytest.mark.root,
    needs_loop,
    needs_fio,
    pytest.mark.skipif(missing() is not None, reason=missing() or ""),
]

MB = 1_000_000


def _bench(cli, dev: str, *extra: str) -> dict:
    res = cli(
        "bench", dev, "--profile", "sustained", "--destructive", "--yes", "--json", "--engine", "libaio",
        "--no-save", *extra,
    )  # fmt: skip
    assert res.code == findings_exit(res.out), res.err
    return res.json()


@pytest.mark.alone
@pytest.mark.slow
def test_cache_then_throttle_is_found_where_it_ran_out(cli):
    cache, after = 300 * MB, 50 * MB
    # The cache has its own rate (400 MB/s, a SATA-class burst): unthrottled, the RAM loop device wrote 300 MB in
    # two 100 ms windows, and the watcher (it polls every 20 ms, 30 MB at 1.5 GB/s) switched at 317-354 MB.
    model = CacheModel(cache_bytes=cache, burst_bps=400 * MB, after_bps=after)
    with cache_drive(760, model) as (dev, watcher):
        doc = _bench(cli, dev, "--size", "600M")
    switched = next(at for at, bps in watcher.switches if bps == after)
    s = doc["sustained"]
    assert s["written_bytes"] == 600 * 2**20
    assert s["cause"] == "cache"
    # Within 10% of the cache, and of where the watcher really switched (it polls every 20 ms).
    assert s["cache_exhausted_at_bytes"] == pytest.approx(cache, rel=0.10)
    assert s["cache_exhausted_at_bytes"] == pytest.approx(switched, rel=0.10)
    assert s["sustained_mbps"] == pytest.approx(50, rel=0.10)
    assert s["burst_mbps"] > 3 * s["sustained_mbps"]
    assert s["phases"][0]["start_bytes"] == 0 and s["phases"][-1]["end_bytes"] == s["written_bytes"]
    assert all(a["end_bytes"] == b["start_bytes"] for a, b in zip(s["phases"], s["phases"][1:], strict=False))
    assert len(s["points"]) > 40  # 100 ms windows over ~7 s
    # The emulated drive is a loop device over /dev/shm: bench also says so (memory_backed, issue 11 §2).
    (finding,) = [f for f in doc["findings"] if f["code"] != "memory_backed"]
    assert finding["code"] == "write_cache_cliff" and finding["severity"] == "info"
    cache_mb = s["cache_exhausted_at_bytes"] / 1e6
    assert finding["message"].startswith(f"Writes ran at {s['burst_mbps']:,.0f} MB/s for the first {cache_mb:,.0f} MB")
    # The test result carries it too (that is what the store keeps), and its command reruns the fill.
    (test,) = doc["tests"]
    assert test["sustained"] == s and test["id"] == "SEQ1M_Q4T1_fill"
    for arg in ("--rw=write", "--bs=1048576", "--iodepth=4", "--log_avg_msec=100"):
        assert arg in test["fio_command"]
    # One rate for the fill: the table's write_mbps is the sustained block's bytes over time.
    assert s["judged"] is True and s["mbps"] == pytest.approx(test["write_mbps"], abs=0.1)


@pytest.mark.alone
@pytest.mark.slow
def test_same_device_without_the_throttle_has_no_cliff(cli):
    # A drive with no cache: one steady rate. Not the bare RAM device: on this 2-vCPU VM its write rate
    # itself falls from ~3.6 to ~1 GB/s now and then (docs/PERFORMANCE.md), a real drop the tool rightly
    # reported as a cliff in about one run of six. A steady 300 MB/s throttle, well under what the RAM
    # device keeps up even on a loaded machine (600 MB/s still failed once under a full parallel suite),
    # is a cache-less drive.
    with cache_drive(700, CacheModel(burst_bps=300 * MB)) as (dev, watcher):
        doc = _bench(cli, dev, "--size", "600M")
    assert watcher.switches[-1] == (0, 300 * MB) and len(watcher.switches) == 2  # none, then 300 MB/s for good
    s = doc["sustained"]
    assert s["cause"] is None and s["cache_exhausted_at_bytes"] is None and s["cliff_at_bytes"] is None
    if s["duration_s"] >= 0.7:  # faster than 2.4 GB/s it is too short to judge (test_a_short_fill_*)
        assert s["judged"] is True and "the rate held" in s["reason"]
        assert s["burst_mbps"] == s["sustained_mbps"] == s["mbps"] > 0
    # No cliff finding; the loop device over /dev/shm is named as memory (issue 11 §2), nothing else but the
    # emulated drive's own 300 MB/s: a blkio limit this process runs in, which io_limit may name (issue 36).
    assert [f["code"] for f in doc.get("findings") if f["code"] != "io_limit"] == ["memory_backed"]


@pytest.mark.alone
@pytest.mark.slow
def test_max_time_bounds_the_fill(cli):
    with cache_drive(400, CacheModel(cache_bytes=0, after_bps=20 * MB)) as (dev, _):
        started = time.monotonic()
        doc = _bench(cli, dev, "--size", "380M", "--max-time", "2")
        took = time.monotonic() - started
    s = doc["sustained"]
    assert s["stopped_by"] == "time"
    assert s["written_bytes"] < 100 * MB  # 2 s at 20 MB/s, not 380 MiB
    assert any("--max-time 2 s ended the fill" in n for n in doc["tests"][0]["notes"])
    assert took < 20


@pytest.mark.alone
@pytest.mark.slow
def test_recovery_burst_after_idle(cli):
    # A 150 MB cache written at 300 MB/s that drains at 200 MB/s while idle (after 0.5 s without writes):
    # after 2 s idle all of it is back.
    model = CacheModel(cache_bytes=150 * MB, burst_bps=300 * MB, after_bps=40 * MB, drain_bps=200 * MB)
    with cache_drive(400, model) as (dev, watcher):
        doc = _bench(cli, dev, "--size", "300M", "--recovery", "2")
    switched = next(at for at, bps in watcher.switches if bps == 40 * MB)  # the watcher polls: it may overshoot
    s = doc["sustained"]
    r = s["recovery"]
    assert s["cache_exhausted_at_bytes"] == pytest.approx(switched, rel=0.10)
    assert r["idle_s"] == 2 and r["fell"]
    assert r["recovered_pct"] == pytest.approx(100, abs=20)
    assert s["sustained_mbps"] == pytest.approx(40, rel=0.15)
    # The burst after idling is what the feature finds: the cache's rate back, clearly above the sustained 40 MB/s
    # (a broken idle or a burst measured past the cache reads ~40), and never above the 300 MB/s the throttle lets
    # through. Not 300 +-15%: under CPU load the loop device falls short of the throttle (236 MB/s seen).
    assert 3 * s["sustained_mbps"] < r["mbps"] <= 300 * 1.05


@pytest.fixture(scope="module")
def short_fill(tmp_path_factory):
    """One short fill (64 MiB) on a RAM loop device, saved: (store URL, bench --json document)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('short-fill')}/runs.sqlite"
    fill = ["--profile", "sustained", "--size", "64M", "--destructive", "--yes"]
    with loop_device(128) as dev:
        argv = [sys.executable, "-m", "disksleuth", "--db", db, "--json", "bench", dev, *fill]
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert res.returncode == findings_exit(res.stdout), res.stderr
    return db, json.loads(res.stdout)


# Review of 560e4cf on a RAM loop device (--size 300MB): the table said 1,475 MB/s, the sustained block 2,181;
# "too soon to show phases" beside "no cliff: 510 MB/s throughout"; `show --json` had no `sustained`; the recorded
# command had --time_based and --time_based=0 and wrote its log into the current directory.


def test_a_short_fill_has_one_rate(short_fill):
    _, doc = short_fill
    (test,) = doc["tests"]
    s = doc["sustained"]
    assert s["written_bytes"] == 64 * 2**20
    assert s["written_bytes"] / s["duration_s"] / MB == pytest.approx(test["write_mbps"], rel=0.005)
    assert s["duration_s"] == pytest.approx(test["runtime_s"], abs=0.002)
    for p in s["phases"]:
        own = (p["end_bytes"] - p["start_bytes"]) / (p["end_s"] - p["start_s"]) / MB
        assert p["mbps"] == pytest.approx(own, rel=0.01)
    assert s["mbps"] == pytest.approx(test["write_mbps"], abs=0.1)


def test_a_short_fill_is_not_judged_and_claims_no_cliff(cli, short_fill):
    db, doc = short_fill
    s = doc["sustained"]
    # 64 MiB on RAM is over in well under the 0.6 s that six 100 ms windows take.
    assert s["cache_exhausted_at_bytes"] is None and s["burst_mbps"] is None and s["sustained_mbps"] is None
    assert "too short to judge" in s["reason"] and s["judged"] is False
    res = cli("--db", db, "show", "1")
    assert res.code == 0, res.err
    assert "no cliff" not in res.out and "too short to judge" in res.out
    # --size 64M is binary (as in fio), and the header says so: not "67.1 MB tested" (review of e9e3807).
    assert "64 MiB (67.1 MB) tested" in res.out
    assert f"{s['mbps']:,.1f} MB/s (bytes written / fill time)" in res.out


def test_a_fill_too_short_to_judge_says_so_once(cli, short_fill, monkeypatch):
    """It read "not judged: too short to judge: 1 bandwidth-log window ..." and then the same reason again as
    the test's note ("SEQ1M_Q4T1_fill: the fill was too short to judge: 1 bandwidth-log window ...")."""
    db, _ = short_fill
    monkeypatch.setenv("COLUMNS", "300")  # one line each: the count is of sentences, not of wrapped pieces
    res = cli("--db", db, "show", "1")
    assert res.code == 0, res.err
    assert res.out.count("too short to judge") == 1, res.out
    assert res.out.count("bandwidth-log window") == 1, res.out
    assert "not judged: too short to judge" not in res.out
    assert "  too short to judge: " in res.out
    # The reason stays whole in the document (--json), where no section says it.
    doc = cli("--db", db, "--json", "show", "1").json()
    assert doc["sustained"]["reason"].startswith("too short to judge: ")


def test_show_json_and_export_keep_the_sustained_object(cli, short_fill, tmp_path):
    db, doc = short_fill
    shown = cli("--db", db, "--json", "show", "1")
    assert shown.code == 0, shown.err
    assert shown.json().get("sustained") == doc["sustained"]
    out = tmp_path / "export.json"
    assert cli("--db", db, "export", "1", "-o", str(out)).code == 0
    assert json.loads(out.read_text())["runs"][0].get("sustained") == doc["sustained"]


def test_the_recorded_fill_command_is_clean(short_fill):
    _, doc = short_fill
    argv = shlex.split(doc["tests"][0]["fio_command"])
    # Not time-based (fio stops at --size; --runtime bounds it): no --time_based at all, let alone two.
    assert [a for a in argv if a.startswith("--time_based")] == []
    (log,) = [a.split("=", 1)[1] for a in argv if a.startswith("--write_bw_log=")]
    assert os.path.isabs(log)  # a pasted rerun does not drop log files where it is pasted


# --- safety ------------------------------------------------------------------------------------------


def test_raw_device_needs_destructive(cli):
    with loop_device(64) as dev:
        before = sectors_written(dev)
        res = cli("bench", dev, "--profile", "sustained", "--json", "--no-save")
        assert res.code == 2
        assert "sustained profile only writes" in res.err and "--destructive" in res.err
        assert sectors_written(dev) == before


def test_device_in_use_is_refused(cli):
    with loop_device(64) as dev, mounted_ext4(dev) as mnt:
        with open(os.path.join(mnt, "keep.txt"), "w") as fh:
            fh.write("precious")
        res = cli("bench", dev, "--profile", "sustained", "--destructive", "--yes", "--no-save")
        assert res.code == 2 and "mounted" in res.err
        with open(os.path.join(mnt, "keep.txt")) as fh:
            assert fh.read() == "precious"


def test_scratch_file_removed_after_a_fill(cli):
    with loop_device(256) as dev, mounted_ext4(dev) as mnt:
        res = cli("bench", mnt, "--profile", "sustained", "--size", "64M", "--json", "--no-save")
        assert res.code == findings_exit(res.out), res.err
        doc = res.json()
        assert doc["sustained"]["written_bytes"] == 64 * 2**20
        assert doc["sustained"]["mbps"] > 0  # the fill ran (64 MiB is too short to judge: no sustained_mbps)
        assert not [n for n in os.listdir(mnt) if n != "lost+found"]


def test_scratch_default_size_is_half_the_free_space(cli):
    with loop_device(128) as dev, mounted_ext4(dev) as mnt:
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        res = cli("bench", mnt, "--profile", "sustained", "--json", "--no-save")
        assert res.code == findings_exit(res.out), res.err
        assert res.json()["sustained"]["written_bytes"] == pytest.approx(free / 2, rel=0.05)
        assert not [n for n in os.listdir(mnt) if n != "lost+found"]


@pytest.mark.slow
def test_sigterm_during_fill_removes_the_scratch_file():
    sig = signal.SIGTERM  # SIGINT takes the same path (test_bench.py covers both for the other profiles)
    with loop_device(512) as dev, mounted_ext4(dev) as mnt, blkio_throttle(dev, write_bps=10 * MB) as procs:
        argv = [sys.executable, "-m", "disksleuth", "bench", mnt, "--profile", "sustained", "--size", "200M"]
        proc = subprocess.Popen(in_cgroup(procs, [*argv, "--no-save", "--json"]), stdout=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            scratch: list[str] = []
            while time.monotonic() < deadline:
                scratch = [os.path.join(d, f) for d, _, files in os.walk(mnt) for f in files]
                if scratch and os.path.getsize(scratch[0]) > 0:
                    break
                time.sleep(0.2)
            assert scratch, "the fill never started"
            time.sleep(1.0)
            proc.send_signal(sig)
            out, _ = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 128 + sig
        assert json.loads(out or "{}").get("sustained") is None
        assert not [n for n in os.listdir(mnt) if n != "lost+found"]


# --- leftovers after kill -9 ---------------------------------------------------------------------
# Review of e9e3807 (attacker, hardening 5): kill -9 of a sustained run left $TMPDIR/disksleuth-fio-logs-* (the
# fill's bandwidth-log directory) behind, and no later run reported or removed it.


@pytest.mark.slow
def test_kill_9_mid_fill_the_next_fill_removes_the_log_directory(tmp_path):
    tmpdir = tmp_path / "tmp"  # a private TMPDIR: other runs on this machine keep theirs in /tmp
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    with loop_device(128) as dev, blkio_throttle(dev, write_bps=10 * MB) as procs:
        argv = [sys.executable, "-m", "disksleuth", "bench", dev, "--profile", "sustained", "--destructive", "--yes"]
        argv += ["--no-save", "--json", "--engine", "libaio"]
        # 64 MiB at 10 MB/s: the fill runs for ~7 s, and is killed ~1 s in.
        proc = subprocess.Popen(
            in_cgroup(procs, [*argv, "--size", "64M"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        try:
            deadline = time.monotonic() + 60
            while not os.listdir(tmpdir) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert os.listdir(tmpdir), "the fill never made its log directory"
            time.sleep(1.0)
            assert proc.poll() is None, "the fill ended before it could be killed"
            proc.kill()
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        (leftover,) = os.listdir(tmpdir)
        time.sleep(2.5)  # a directory younger than 2 s may be a live run's, not yet locked: it is left alone
        res = subprocess.run([*argv, "--size", "16M"], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == findings_exit(res.stdout), res.stderr
    notes = json.loads(res.stdout)["tests"][0]["notes"]
    assert any(f"removed {tmpdir / leftover}" in n and "killed" in n for n in notes), notes
    assert os.listdir(tmpdir) == []


def test_a_live_fills_log_directory_is_left_alone_and_a_dead_ones_removed(tmp_path, monkeypatch):
    import tempfile

    from disksleuth.probe.target import fio_log_dir, remove_dead_fio_logs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    aged = time.time() - 60
    dead = tmp_path / ".disksleuth-abcd1234"  # what a killed fill leaves: its log, and no lock on it
    dead.mkdir(mode=0o700)
    (dead / "fio-log_bw.1.log").write_text("100, 51200, 1, 0, 0\n")
    os.utime(dead, (aged, aged))
    with fio_log_dir() as logs:
        with open(logs.prefix + "_bw.1.log", "w") as fh:
            fh.write("100, 51200, 1, 0, 0\n")
        (live,) = [p for p in tmp_path.iterdir() if p != dead]
        os.utime(live, (aged, aged))
        (found,) = remove_dead_fio_logs()
        assert found.startswith(f"removed {dead} (") and found.endswith("left by a disksleuth run that was killed")
        assert live.exists() and not dead.exists()
    assert list(tmp_path.iterdir()) == []


def test_an_older_versions_log_directory_is_reported_not_removed(tmp_path, monkeypatch):
    import tempfile

    from disksleuth.probe.target import remove_dead_fio_logs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old = tmp_path / "disksleuth-fio-logs-abcd1234"  # no lock to tell a live run from a dead one
    old.mkdir(mode=0o700)
    assert remove_dead_fio_logs() == [
        f"found {old}, fio logs an older disksleuth left behind; remove it if no benchmark is running"
    ]
    assert old.exists()
