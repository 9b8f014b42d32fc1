"""Memory is not storage (issue 11 §2), and `bench` gives findings as `check` does (§5).

Real targets: loop devices over /dev/shm, a zram device of our own (hot_add / hot_remove), a device-mapper
linear table over such a loop device, and a tmpfs directory, measured by real fio."""

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
from conftest import SYSFS, loop_device, mounted_ext4, needs_fio, needs_loop

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.verdicts import Figures, verdicts
from disksleuth.model.run import MemoryBacking, TestResult
from disksleuth.probe.block import read_device
from disksleuth.probe.memory import device_memory_backing

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
QUICK = ["--time", "1", "--size", "32M", "--no-save", "--json"]


def _disksleuth(*args: str, timeout: int = 120) -> tuple[int, dict]:
    res = subprocess.run([*DISKSLEUTH, *args], capture_output=True, text=True, timeout=timeout)
    assert res.stdout, res.stderr
    return res.returncode, json.loads(res.stdout)


def _codes(doc: dict) -> set[str]:
    return {f["code"] for f in doc["findings"]}


def _finding(doc: dict, code: str) -> dict:
    return next(f for f in doc["findings"] if f["code"] == code)


def _have_zram() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.exists("/sys/class/zram-control/hot_add"):
        subprocess.run(["modprobe", "zram", "num_devices=0"], capture_output=True, check=False)
    return None if os.path.exists("/sys/class/zram-control/hot_add") else "no zram module"


@contextlib.contextmanager
def zram_device(size_mb: int) -> Iterator[str]:
    """A zram device of our own: reading hot_add allocates a fresh one (zram.rst), so others' are untouched."""
    with open("/sys/class/zram-control/hot_add") as fh:
        index = int(fh.read().strip())
    try:
        with open(f"/sys/block/zram{index}/disksize", "w") as fh:
            fh.write(str(size_mb << 20))
        yield f"/dev/zram{index}"
    finally:
        with contextlib.suppress(OSError), open(f"/sys/block/zram{index}/reset", "w") as fh:
            fh.write("1")
        with open("/sys/class/zram-control/hot_remove", "w") as fh:
            fh.write(str(index))


@pytest.mark.root
@pytest.mark.slow
@needs_fio
@needs_loop
def test_check_on_a_loop_device_over_shm_is_memory_not_ok():
    # eda8072 said "Nothing wrong found" here (11,982 MB/s from RAM).
    with loop_device(64) as dev:
        code, doc = _disksleuth("check", dev, *QUICK)
    assert "ok" not in _codes(doc) and "memory_backed" in _codes(doc)
    found = _finding(doc, "memory_backed")
    assert found["severity"] == "warn" and found["evidence"]["kind"] == "tmpfs"
    assert found["evidence"]["chain"][-1] == "tmpfs on /dev/shm"
    assert doc["summary"].startswith("memory, not storage")
    assert code == 1


@pytest.mark.root
@pytest.mark.slow
@needs_fio
@needs_loop
def test_bench_gives_the_same_findings_as_check_text_and_json():
    with loop_device(64) as dev:
        _, doc = _disksleuth("bench", dev, *QUICK)
        text = subprocess.run(
            [*DISKSLEUTH, "bench", dev, *QUICK[:-1]], capture_output=True, text=True, timeout=120
        ).stdout
    assert "memory_backed" in _codes(doc) and doc["summary"].startswith("memory, not storage")
    assert "Findings" in text and "memory_backed" in text and "backed by memory" in text


@pytest.mark.root
@pytest.mark.slow
@needs_fio
def test_zram_never_written_is_memory_not_ok():
    reason = _have_zram()
    if reason:
        pytest.skip(reason)
    # eda8072: "Nothing wrong found" at 8,066 MB/s and 615,676 IOPS, reading zero pages.
    with zram_device(64) as dev:
        code, doc = _disksleuth("check", dev, *QUICK)
    found = _finding(doc, "memory_backed")
    assert found["evidence"]["kind"] == "zram" and "never written" in found["message"]
    assert "ok" not in _codes(doc) and "raw_device_reads" not in _codes(doc)
    assert code == 1


@pytest.mark.slow
@needs_fio
def test_tmpfs_directory_is_memory_the_same_way():
    where = f"/dev/shm/disksleuth-figures-{uuid.uuid4().hex[:8]}"
    os.mkdir(where)
    try:
        _, doc = _disksleuth("check", where, *QUICK)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    found = _finding(doc, "memory_backed")
    assert found["evidence"]["kind"] == "tmpfs" and "ok" not in _codes(doc)


@pytest.mark.root
@needs_loop
def test_memory_is_found_down_a_device_mapper_stack():
    if shutil.which("dmsetup") is None:
        pytest.skip("dmsetup missing")
    name = f"disksleuth-figures-{uuid.uuid4().hex[:8]}"
    with loop_device(16) as dev:
        sectors = 16 << 11
        made = subprocess.run(
            ["dmsetup", "create", name, "--table", f"0 {sectors} linear {dev} 0"], capture_output=True, text=True
        )
        if made.returncode != 0:
            pytest.skip(f"dmsetup create failed: {made.stderr.strip()}")
        try:
            dm = os.path.basename(os.path.realpath(f"/dev/mapper/{name}"))
            found = device_memory_backing(dm)
        finally:
            subprocess.run(["dmsetup", "remove", name], capture_output=True, check=False)
    assert found is not None and found.kind == "tmpfs"
    assert found.chain[0].startswith(f"{dm} over {os.path.basename(dev)}") and found.chain[-1] == "tmpfs on /dev/shm"


@contextlib.contextmanager
def _loop_over(backing: str) -> Iterator[str]:
    dev = subprocess.run(["losetup", "-f", "--show", backing], capture_output=True, text=True, check=True)
    try:
        yield dev.stdout.strip()
    finally:
        subprocess.run(["losetup", "-d", dev.stdout.strip()], check=False)


@pytest.mark.root
@needs_loop
def test_memory_is_found_down_a_stack_of_loops_and_file_systems():
    # ext4 on a loop over /dev/shm, a file in it, a loop over that file, and a loop over that loop.
    with loop_device(32) as bottom, mounted_ext4(bottom) as mnt:
        image = os.path.join(mnt, "inner.img")
        with open(image, "wb") as fh:
            fh.truncate(4 << 20)
        with _loop_over(image) as middle, _loop_over(middle) as top:
            found = device_memory_backing(os.path.basename(top))
            names = [os.path.basename(d) for d in (top, middle, bottom)]
    assert found is not None and found.kind == "tmpfs"
    assert [c.split(":")[0] for c in found.chain if c.startswith("loop")] == names
    assert image in found.chain and found.chain[-1] == "tmpfs on /dev/shm"


@pytest.mark.root
@needs_loop
def test_a_loop_device_over_a_disk_file_is_not_memory(tmp_path):
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * (4 << 20))
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True)
    dev_path = dev.stdout.strip()
    try:
        found = device_memory_backing(os.path.basename(dev_path))
    finally:
        subprocess.run(["losetup", "-d", dev_path], check=False)
    fstype = subprocess.run(["stat", "-f", "-c", "%T", str(tmp_path)], capture_output=True, text=True).stdout.strip()
    if fstype == "tmpfs":
        assert found is not None
    else:
        assert found is None


def _read_test(rw: str = "read") -> TestResult:
    return TestResult(
        "SEQ1M_Q8T1_" + rw, rw, 1 << 20, 8, 1, 500.0, 500.0, None, None, None, None, None, None, None, 1.0, "", False,
        "libaio", "fio-3.33",
    )  # fmt: skip


def test_memory_backed_is_never_a_bare_ok():
    device = read_device("nvme0n1", os.path.join(SYSFS, "nvme_new_format"))
    chain = link_chain(device.hops)
    memory = MemoryBacking("zram", ("zram0: zram, compressed RAM",), True)
    found = verdicts(device, chain, Figures(seq_read_mbps=8066.0), memory=memory)
    assert found[0].code == "memory_backed" and "ok" not in {f.code for f in found}
    found = verdicts(device, chain, Figures(seq_read_mbps=800.0), memory=memory)
    assert [f.code for f in found] == ["memory_backed"]


def test_raw_device_reads_are_explained_and_ok_stays():
    device = read_device("nvme0n1", os.path.join(SYSFS, "nvme_new_format"))
    chain = link_chain(device.hops)
    found = verdicts(device, chain, Figures(seq_read_mbps=900.0), tests=[_read_test()], target_kind="block")
    assert [f.code for f in found] == ["ok", "raw_device_reads"]
    assert "never written or trimmed" in found[1].message and found[1].severity == "info"
    # A file or directory target reads data it wrote itself: nothing to explain.
    found = verdicts(device, chain, Figures(seq_read_mbps=900.0), tests=[_read_test()], target_kind="dir")
    assert [f.code for f in found] == ["ok"]


def test_virtio_writes_beating_reads_say_the_host_caches():
    device = read_device("vda", "/") if os.path.isdir("/sys/block/vda") else None
    if device is None or device.transport != "virtio":
        pytest.skip("no virtio disk here")
    chain = link_chain(device.hops)
    found = verdicts(device, chain, Figures(seq_read_mbps=1719.0, seq_write_mbps=2545.0))
    cache = next(f for f in found if f.code == "cache_suspected")
    assert "2,545 MB/s" in cache.message and "host is probably caching" in cache.message
    assert "cache=none" in cache.hint
    # Reads ahead of writes is the normal order: no such finding.
    assert "cache_suspected" not in {f.code for f in verdicts(device, chain, Figures(1719.0, 900.0))}


def test_check_without_fio_shows_chain_and_health_and_says_what_it_skipped(cli, monkeypatch, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    res = cli("check", str(tmp_path), "--json", "--no-save")
    doc = json.loads(res.out)
    assert res.code in (0, 1), res.err
    assert doc["device"]["name"] and "link" in json.dumps(doc["device"])
    assert any(s.startswith("the benchmark: fio is not installed") for s in doc["skipped"])
    assert doc["tests"] == [] and doc["findings"]
    text = cli("check", str(tmp_path), "--no-save")
    assert "skipped the benchmark: fio is not installed; install it with: apt-get install fio" in text.out
    assert "Findings" in text.out


# bench follows the documented exit codes: 1 when a finding is at warn (memory_backed on /dev/shm).
@pytest.mark.slow
def test_bench_exits_1_on_warn_findings(cli):
    shm = f"/dev/shm/disksleuth-verdicts-{uuid.uuid4().hex[:8]}"
    os.makedirs(shm)
    try:
        res = cli("bench", shm, "--profile", "mixed", "--time", "1", "--size", "16M", "--no-save", "--json")
    finally:
        subprocess.run(["rm", "-rf", shm], check=False)
    doc = res.json()
    assert any(f["code"] == "memory_backed" and f["severity"] == "warn" for f in doc["findings"])
    assert res.code == 1, res.err
