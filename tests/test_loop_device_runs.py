"""A run on a loop device belongs to the loop device and its backing file, not to the disk beneath (issue 20 §2).

Before, `check /dev/loop0` over a file on /dev/vda credited its figures to vda (device, runs, fleet, exporter), and a
buffered loop (loop/dio 0) read 4,930 MB/s from the page cache with "✓ ok" and cache_affected false. Real loop
devices over a real file on a disk-backed file system, buffered and with direct I/O."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator

import pytest
from conftest import metric_value, needs_fio, needs_loop

from disksleuth.probe.target import inspect_target

pytestmark = [pytest.mark.root, needs_loop]

IMAGE_DIR = "/var/tmp"  # a disk-backed file system here; /tmp or /dev/shm may be tmpfs elsewhere


def _holding_disk(path: str) -> str | None:
    st = os.stat(path)
    real = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    return os.path.basename(real) if os.path.isdir(real) else None


@contextlib.contextmanager
def disk_file_loop(direct: bool, size_mb: int = 64) -> Iterator[tuple[str, str, str]]:
    """(loop device, backing image, the block device holding the image): a loop over a sparse file on a disk."""
    image = os.path.join(IMAGE_DIR, f"disksleuth-numbers-{uuid.uuid4().hex[:8]}.img")
    with open(image, "wb") as fh:
        fh.truncate(size_mb << 20)
    dev = None
    try:
        holder = _holding_disk(image)
        if holder is None:
            pytest.skip(f"{IMAGE_DIR} is not on a block device here")
        argv = ["losetup", "-f", "--show", *(["--direct-io=on"] if direct else []), image]
        dev = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
        with open(f"/sys/block/{os.path.basename(dev)}/loop/dio") as fh:
            if (fh.read().strip() == "1") != direct:
                pytest.skip(f"losetup could not set direct I/O {'on' if direct else 'off'} here")
        yield dev, image, holder
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)


def test_the_device_behind_a_loop_target_is_the_loop_device_with_its_backing_noted():
    for direct in (False, True):
        with disk_file_loop(direct) as (dev, image, holder):
            target = inspect_target(dev)
        name = os.path.basename(dev)
        assert target.disk is not None and target.disk.name == name, (direct, target.disk)  # before: the disk beneath
        assert target.disk.transport == "loop" and target.disk.backing_file == image
        assert target.disk.loop_direct_io is direct and target.disk.backing_device == holder


@needs_fio
@pytest.mark.slow
def test_a_buffered_loop_is_cache_affected_and_its_runs_are_the_loops(cli, tmp_path):
    db = str(tmp_path / "runs.sqlite")
    with disk_file_loop(direct=False) as (dev, image, holder):
        res = cli("check", dev, "--json", "--size", "16M", "--time", "1", "--db", db)
        name = os.path.basename(dev)
        doc = res.json()
        # The run is the loop device's: name, path, link chain; the backing file and the disk beneath as context.
        assert doc["device"]["name"] == name and doc["run"]["device"] == name
        assert doc["device"]["transport"] == "loop" and doc["device"]["serial"] is None
        assert doc["device"]["backing_file"] == image and doc["device"]["backing_device"] == holder
        assert doc["device"]["loop_direct_io"] is False
        assert [h["driver"] for h in doc["device"]["link"]["hops"]] == ["loop"]
        # Measured through the page cache: every test says so, a warning says why, and no "ok".
        assert doc["tests"] and all(t["cache_affected"] for t in doc["tests"])
        codes = [f["code"] for f in doc["findings"]]
        assert "buffered_loop" in codes and "ok" not in codes and res.code == 1
        finding = next(f for f in doc["findings"] if f["code"] == "buffered_loop")
        assert f"over {image} on {holder}" in finding["message"] and "page cache" in finding["message"]
        assert f"losetup --direct-io=on {dev}" in finding["hint"]
        assert any("direct I/O off (loop/dio 0)" in n for n in doc["run"]["notes"])
        # History, the fleet and the exporter name the loop device, never the disk beneath.
        runs = cli("runs", "--json", "--db", db).json()
        assert [r["device"] for r in runs["runs"]] == [name]
        fleet = cli("fleet", "--json", "--db", db).json()
        assert [(r["device"], r["transport"]) for r in fleet["fleet"]["rows"]] == [(name, "loop")]
        prom = tmp_path / "prom"
        prom.mkdir()
        assert cli("exporter", "--textfile", str(prom), "--no-health", "--db", db).code == 0
        text = (prom / "disksleuth.prom").read_text()
    read = metric_value(text, "disksleuth_bench_bytes_per_second", device=name, test="SEQ1M_Q8T1_read")
    assert read is not None and read > 0
    assert f'disksleuth_bench_bytes_per_second{{device="{holder}"' not in text


@needs_fio
@pytest.mark.slow
def test_a_direct_io_loop_is_still_the_loop_device_and_not_cache_affected(cli):
    with disk_file_loop(direct=True) as (dev, image, holder):
        doc = cli("check", dev, "--json", "--size", "16M", "--time", "1", "--no-save").json()
    name = os.path.basename(dev)
    assert doc["device"]["name"] == name and doc["run"]["device"] == name  # before: the disk holding the image
    assert doc["device"]["loop_direct_io"] is True and doc["device"]["backing_device"] == holder
    assert not any(t["cache_affected"] for t in doc["tests"])
    assert "buffered_loop" not in [f["code"] for f in doc["findings"]]
    ok = next(f for f in doc["findings"] if f["code"] == "ok")  # no ceiling: the backing file and disk as context
    assert f"/dev/{name} is a loop device over {image} on {holder}" in ok["message"]


@needs_fio
@pytest.mark.slow
def test_the_check_header_names_the_backing_file(cli):
    with disk_file_loop(direct=False) as (dev, image, holder):
        out = cli("check", dev, "--size", "16M", "--time", "1", "--no-save").out
    assert f"backing file: {image} on {holder}, direct I/O off (loop/dio 0)" in out
    assert f"/dev/{holder}" not in out.splitlines()[0]  # before: "/dev/vda  virtio ..."
