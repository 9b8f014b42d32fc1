"""What surrounds a measurement, measured (issue 36): a loop device over /dev/shm (direct I/O on), read-capped by a
cgroup v1 blkio group that disksleuth itself runs in (the shell joins the group, then execs it), and another
process reading the same device during a bench.

Before issue 36 `check` said "memory, not storage: reads 51.7 MB/s" and "these figures (52 MB/s) measure RAM" of a
capped figure, `compare` said "Nothing on its path changed", and a second reader went unnoticed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from conftest import blkio_throttle, have_blkio, in_cgroup, loop_device, needs_fio, needs_loop
from test_json_schema import assert_valid

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.long, needs_fio, needs_loop]

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
CAP_MBPS = 100  # far above the few requests a 1 s test's window holds at card speeds


@pytest.fixture(scope="module")
def dev() -> Iterator[str]:
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    with loop_device(128, fill=True) as path:
        yield path


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=240)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_capped_loop_device_shows_the_limit_in_the_chain_and_compare_names_it(dev, tmp_path) -> None:  # noqa: ANN001
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    with blkio_throttle(dev, read_bps=CAP_MBPS * 1_000_000) as procs:
        capped = _run(in_cgroup(procs, [*DISKSLEUTH, "check", dev, "--engine", "libaio", "--time", "1", "--db", db]))
        assert capped.returncode == 1, capped.stderr  # warn: memory_backed, io_limit
    text = _flat(capped.stdout)
    group = procs.split("/blkio", 1)[1].rsplit("/", 1)[0]  # "/disksleuth-test-xxxxxxxx"
    # The limit is a hop of the chain with its ceiling, and sets the chain's ceiling.
    assert f"cgroup {group} cgroup I/O limit, reads {CAP_MBPS} MB/s on {dev[5:]} ~{CAP_MBPS} MB/s" in text
    assert f"ceiling now {CAP_MBPS} MB/s — set by cgroup I/O limit" in text
    # io_limit names the file and the value and how such limits are set; the capped figure never "measures RAM".
    assert "warn · io_limit" in text and "blkio.throttle.read_bps_device" in text
    assert f'"{_majmin(dev)} {CAP_MBPS}000000" in cgroup {group}' in text
    assert "IOReadBandwidthMax=" in text and "--device-read-bps" in text
    assert "warn · memory_backed" in text and "backed by memory" in text
    assert "measure RAM" not in text and "measures RAM" not in text
    assert "foreign_io" not in text  # nothing else reads a loop device on /dev/shm

    free = _run([*DISKSLEUTH, "bench", dev, "--engine", "libaio", "--time", "1", "--db", db, "--json"])
    doc = json.loads(free.stdout)
    assert doc["device"]["link"]["limits"] == [] and "io_limit" not in {f["code"] for f in doc["findings"]}
    assert all(t["foreign_io"] is not None and not t["foreign_io"]["found"] for t in doc["tests"])

    stored = json.loads(_run([*DISKSLEUTH, "show", "1", "--db", db, "--json"]).stdout)
    assert_valid(stored, "stored_run_document")
    (limit,) = stored["device"]["link"]["limits"]  # a stored run remembers its limits
    assert (limit["setting"], limit["value"], limit["cgroup"]) == ("read_bps", CAP_MBPS * 1_000_000, group)

    compared = _flat(_run([*DISKSLEUTH, "compare", "1", "2", "--db", db]).stdout)
    assert f"I/O limit gone: read_bps on {dev[5:]}, {CAP_MBPS} MB/s (blkio.throttle.read_bps_device" in compared
    assert "A cgroup I/O limit changed" in compared and "explains the rise" in compared
    assert "Nothing on its path changed" not in compared
    # show --baseline says the same in compare's words: test_show_baseline_paths.py, on runs under two limits.


def test_another_reader_during_a_bench_is_foreign_io_with_its_rate_and_name(dev) -> None:  # noqa: ANN001
    """A second fio reads the same device at 15 MB/s (its own --rate) while bench, capped at 100 MB/s, measures."""
    neighbour = f"--name=neighbour --filename={dev} --rw=read --bs=64k --direct=1 --ioengine=psync --rate=15m"
    argv = ["fio", *neighbour.split(), "--time_based", "--runtime=60s", "--thread", "--output=/dev/null"]
    reader = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with blkio_throttle(dev, read_bps=CAP_MBPS * 1_000_000) as procs:
            argv = [*DISKSLEUTH, "bench", dev, "--engine", "libaio", "--time", "1", "--no-save", "--json"]
            res = _run(in_cgroup(procs, argv))
    finally:
        reader.terminate()
        reader.wait(timeout=30)
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert_valid(doc, "run_document")
    codes = [f["code"] for f in doc["findings"]]
    assert {"memory_backed", "io_limit", "foreign_io"} <= set(codes)
    assert doc["device"]["link"]["limits"][0]["value"] == CAP_MBPS * 1_000_000  # bench keeps the limit too
    finding = next(f for f in doc["findings"] if f["code"] == "foreign_io")
    for t in doc["tests"]:
        other = t["foreign_io"]
        assert other["found"] and other["devices"] == [dev[5:]], other
        assert 10 <= other["other_mbps"] <= 20, other  # the neighbour's 15 MB/s, give or take its own start
        assert other["other_write_bytes"] == 0 and other["processes"][0]["name"] == "fio", other
        assert other["processes"][0]["pid"] == reader.pid
    assert f"fio (pid {reader.pid}) read" in finding["message"]


def _majmin(dev: str) -> str:
    import os

    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
