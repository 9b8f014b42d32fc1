"""`bench --members` on real loop devices (issue 24): read-only reads of each member alone and together, the slow
member named when one is slowed by a cgroup v1 blkio throttle, none named when none is, never a write, and
--destructive refused on members and on arrays (a real btrfs raid1 stands in for md, which this kernel lacks)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from conftest import blkio_throttle, frozen, have_blkio, in_cgroup, loop_device, needs_fio, needs_loop, sha256_of
from test_json_schema import assert_valid

from disksleuth.analysis.members import skip_reason
from disksleuth.model.arrays import MemberInfo

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
THROTTLE_BPS = 50 * 1024 * 1024  # a member read at ~50 MB/s beside loop devices on tmpfs at GB/s
MEMBER_TIME = "2"  # seconds each read: enough 0.1 s samples for an interval after the 0.5 s ramp


@contextlib.contextmanager
def loops(count: int, size_mb: int = 128) -> Iterator[list[str]]:
    with contextlib.ExitStack() as stack:  # each loop_device detaches and removes its image, also on failure
        yield [stack.enter_context(loop_device(size_mb)) for _ in range(count)]


def members_cmd(devs: list[str], *extra: str, seconds: str = MEMBER_TIME) -> list[str]:
    return [sys.executable, "-m", "disksleuth", "bench", "--members", *devs, "--time", seconds, "--json", *extra]


def run_members(argv: list[str]) -> tuple[int, dict, str]:
    return run_all([argv])[0]


def run_all(argvs: list[list[str]]) -> list[tuple[int, dict, str]]:
    """Each argv at once, in its own process: (exit code, JSON document or {}, stderr) of each, in order."""
    env = {**os.environ, "PYTHONPATH": SRC}
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for a in argvs]
    done = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        try:
            doc = json.loads(out)
        except ValueError:
            doc = {}
        done.append((proc.returncode, doc, err))
    return done


def slow_members(doc: dict) -> list[str]:
    return [f["device"] for f in doc.get("findings", []) if f["code"] == "member_slow"]


def _need_blkio() -> None:
    reason = have_blkio()
    if reason:
        pytest.skip(reason)


@pytest.mark.slow  # four fio reads; the fast lane's members bench is tests/test_members_runs.py
@pytest.mark.long
@needs_loop
@needs_fio
def test_members_are_read_alone_and_together_and_never_written():
    with loops(3) as devs:
        before = [sha256_of(d) for d in devs]
        # --time 1: each read's figures and command, not its interval (the member_slow tests below need that).
        code, doc, err = run_members(members_cmd(devs, "--level", "raid5", seconds="1"))
        assert code == 0, err
        assert_valid(doc, "members")
        assert doc["kind"] == "members" and [m["path"] for m in doc["members"]] == devs
        for m in doc["members"]:
            assert m["alone_mbps"] > 0 and m["together_mbps"] > 0
            assert "--readonly" in m["fio_command"] and "--rw=read" in m["fio_command"]
        assert doc["expectation"]["data_members"] == 2.0 and "3-member raid5" in doc["expectation"]["words"]
        assert [sha256_of(d) for d in devs] == before


@needs_loop
@needs_fio
def test_destructive_members_are_refused_before_anything_runs(cli):  # noqa: ANN001
    with loops(2) as devs:
        r = cli("bench", "--members", *devs, "--destructive", "--yes")
        assert r.code == 2 and "--destructive is refused" in r.err and r.err.count("\n") == 1
        r = cli("bench", "--members", devs[0])
        assert r.code == 2 and "two devices or more" in r.err
        r = cli("bench", "--members", devs[0], devs[0])
        assert r.code == 2 and "same device twice" in r.err


@needs_loop
@needs_fio
def test_destructive_on_a_btrfs_member_is_refused():
    """A member of a mounted two-device btrfs (the real multi-device file system this kernel has): the member
    that is not the mount source has no mountpoint and no holders, yet writing it corrupts the file system."""
    if shutil.which("mkfs.btrfs") is None:
        pytest.skip("btrfs-progs missing")
    with loops(2, 200) as (a, b):
        subprocess.run(["mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", a, b], check=True, capture_output=True)
        mnt = f"/tmp/disksleuth-arrays-{uuid.uuid4().hex[:8]}"
        os.makedirs(mnt)
        try:
            if subprocess.run(["mount", a, mnt], capture_output=True).returncode != 0:
                pytest.skip("this kernel cannot mount btrfs")
            try:
                with frozen(mnt):
                    before = sha256_of(b)
                    code, _, err = run_members(
                        [sys.executable, "-m", "disksleuth", "bench", b, "--destructive", "--yes", "--profile", "quick"]
                    )
                    assert code == 2, err
                    assert "member of the mounted btrfs" in err and sha256_of(b) == before
            finally:
                subprocess.run(["umount", mnt], check=False)
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(mnt)


def test_a_member_being_rebuilt_is_skipped_with_a_note():
    info = MemberInfo("sdd", "sdd", "md0", ("spare",), 0, rebuilding=True)
    assert skip_reason(info) == "md0 is rebuilding it; its reads would be the rebuild's"
    assert skip_reason(MemberInfo("sdb", "sdb", "md0", ("in_sync",))) is None


# The 20-run figures (the throttled member named in 19 of 20 runs or more, no member_slow in 20 unthrottled runs of
# CPU-bound RAM loop devices) come from benchmarks/members_accuracy.py on a quiet machine (docs/RELIABILITY.md).
# Here, two runs each on members whose rates are set by blkio read throttles, so a test beside them on the
# other xdist worker cannot move them: the same measurement, intervals and rule, judged on steady devices.
STEADY_BPS = 300 * 1024 * 1024  # the peers: six times the slow member, far below what a loaded CPU still reads


@contextlib.contextmanager
def throttled(devs: list[str], read_bps: list[int]) -> Iterator[str]:
    """One blkio group throttling each of `devs` to its own read rate; yields its cgroup.procs."""
    with blkio_throttle(devs[0], read_bps=read_bps[0]) as procs:
        for dev, bps in zip(devs[1:], read_bps[1:], strict=True):
            st = os.stat(dev)
            with open(os.path.join(os.path.dirname(procs), "blkio.throttle.read_bps_device"), "w") as fh:
                fh.write(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {bps}")
        yield procs


@contextlib.contextmanager
def two_throttled_arrays(read_bps: list[int]) -> Iterator[list[tuple[list[str], str]]]:
    """Two arrays of members, each of its own loop devices in its own blkio group with the same read rates:
    the two runs go at once (one after the other they took 30 s), and neither shares a device or a throttle
    with the other, so each reads what its throttles let through, as it did alone."""
    with contextlib.ExitStack() as stack:
        arrays = [stack.enter_context(loops(len(read_bps))) for _ in range(2)]
        yield [(devs, stack.enter_context(throttled(devs, read_bps))) for devs in arrays]


@pytest.mark.slow
@needs_loop
@needs_fio
def test_the_throttled_member_is_named_in_both_runs():
    _need_blkio()
    with two_throttled_arrays([STEADY_BPS, THROTTLE_BPS, STEADY_BPS]) as arrays:
        runs = run_all([in_cgroup(procs, members_cmd(devs, "--engine", "libaio")) for devs, procs in arrays])
    seen: list[list[str]] = []
    for code, doc, err in runs:
        assert code == 1, err  # member_slow is a warning
        seen.append(slow_members(doc))
        print({m["name"]: (m["alone_mbps"], m["alone_ci95_pct"]) for m in doc["members"]})
    assert seen == [[os.path.basename(devs[1])] for devs, _ in arrays], seen


@pytest.mark.slow
@needs_loop
@needs_fio
def test_no_member_slow_among_equal_members_in_two_runs():
    _need_blkio()
    with two_throttled_arrays([THROTTLE_BPS] * 3) as arrays:
        runs = run_all([in_cgroup(procs, members_cmd(devs, "--engine", "libaio")) for devs, procs in arrays])
    seen: list[list[str]] = []
    for code, doc, err in runs:
        assert code in (0, 1), err
        seen.append(slow_members(doc))
        assert all(m["alone_mbps"] > 0 for m in doc["members"])
    assert seen == [[], []], seen
