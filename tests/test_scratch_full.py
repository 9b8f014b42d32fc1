"""A nearly full file system: the scratch file fits the free space (half of it on btrfs, which writes
every overwrite beside the old data), a disk that fills up anyway ends the run with one line and a
non-zero exit, and nothing is left behind. Real btrfs and ext4 file systems on real loop devices."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from conftest import blkio_throttle, have_blkio, in_cgroup, loop_device, mounted_ext4, needs_fio, needs_loop

from disksleuth.probe.target import SCRATCH_PREFIX, scratch_file

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
FS_MB = 400
RUN_TIMEOUT_S = 300
# The nearly-full ext4 check proves where the scratch file fits and that nothing is left: the file is laid out
# whole before any test, its size does not hang on how long each test runs, and ext4 overwrites in place.
# --time 1: four 1 s tests, not the adaptive 1.5-3 s each. The btrfs checks keep the default length: their
# random writes take room beside the file for as long as they run, which is what "no space left" guards.
FIXED_TIME = ("--time", "1")
needs_btrfs = pytest.mark.skipif(shutil.which("mkfs.btrfs") is None, reason="mkfs.btrfs missing")


def _free_bytes(path: str) -> int:
    vfs = os.statvfs(path)
    return vfs.f_bavail * vfs.f_frsize


@contextlib.contextmanager
def mounted_btrfs(dev: str) -> Iterator[str]:
    subprocess.run(["mkfs.btrfs", "-q", "-f", dev], check=True, capture_output=True)
    mnt = f"/tmp/remain-btrfs-{uuid.uuid4().hex[:8]}"
    os.makedirs(mnt)
    try:
        subprocess.run(["mount", dev, mnt], check=True, capture_output=True)
        try:
            yield mnt
        finally:
            subprocess.run(["umount", mnt], check=False)
    finally:
        os.rmdir(mnt)


def _fill_until(mnt: str, free_left: int) -> None:
    """Write incompressible data until about `free_left` bytes stay free."""
    chunk = os.urandom(1 << 20)
    with open(os.path.join(mnt, "filler"), "wb") as fh:
        while _free_bytes(mnt) > free_left + (8 << 20):
            fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())


def _take_all_space(mnt: str) -> None:
    """Allocate what is free, in ever smaller files (btrfs refuses one allocation of all it reports free)."""
    size, n = _free_bytes(mnt), 0
    while size >= 1 << 20:
        n += 1
        res = subprocess.run(["fallocate", "-l", str(size), os.path.join(mnt, f"hog{n}")], capture_output=True)
        if res.returncode != 0:
            size //= 2


def _leftovers(directory: str) -> list[str]:
    return glob.glob(os.path.join(directory, f"{SCRATCH_PREFIX}*"))


def _tested_bytes(out: str) -> int:
    m = re.search(r"(\d+) MiB \([\d.,]+ [MG]B\) tested", out)
    assert m, out
    return int(m.group(1)) << 20


@needs_loop
@needs_btrfs
def test_a_scratch_file_on_btrfs_is_removed() -> None:
    # btrfs fixes what an open directory lists at its first read: the private directory, listed empty as
    # it was made, never showed the scratch file, and every run on btrfs left its scratch file behind.
    with loop_device(FS_MB) as dev, mounted_btrfs(dev) as mnt:
        with scratch_file(mnt) as scratch, open(scratch.shown_path, "wb") as fh:
            fh.write(b"x" * 4096)
        assert _leftovers(mnt) == []


@pytest.mark.slow
@needs_loop
@needs_fio
@needs_btrfs
def test_check_on_a_nearly_full_btrfs_fits_and_leaves_nothing() -> None:
    with loop_device(FS_MB) as dev, mounted_btrfs(dev) as mnt:
        _fill_until(mnt, 100 << 20)
        free = _free_bytes(mnt)
        target = os.path.join(mnt, "d")
        os.mkdir(target)
        res = subprocess.run(
            [*DISKSLEUTH, "check", target, "--no-save"], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
        assert _leftovers(target) == [], res.stderr
        # It ran out of space with a 90% share: random writes on btrfs take room beside the file.
        assert res.returncode in (0, 1), res.stderr
        assert "no space left" not in res.stdout + res.stderr
        assert _tested_bytes(res.stdout) <= free * 0.45


@pytest.mark.slow
@needs_loop
@needs_fio
def test_check_on_a_nearly_full_ext4_fits_and_leaves_nothing() -> None:
    with loop_device(FS_MB) as dev, mounted_ext4(dev) as mnt:
        _fill_until(mnt, 50 << 20)
        free = _free_bytes(mnt)
        res = subprocess.run(
            [*DISKSLEUTH, "check", mnt, "--no-save", *FIXED_TIME], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
        assert _leftovers(mnt) == [], res.stderr
        assert res.returncode in (0, 1), res.stderr
        assert free * 0.45 < _tested_bytes(res.stdout) <= free * 0.9


@pytest.mark.slow
@needs_loop
@needs_fio
@needs_btrfs
@pytest.mark.skipif(have_blkio() is not None, reason=have_blkio() or "")
def test_a_disk_that_fills_up_during_the_run_gives_one_line_and_leaves_nothing() -> None:
    # Writes throttled to 10 MB/s, so the run is still writing when another writer takes all the free space.
    with loop_device(FS_MB) as dev, mounted_btrfs(dev) as mnt, blkio_throttle(dev, write_bps=10_000_000) as procs:
        target = os.path.join(mnt, "d")
        os.mkdir(target)
        proc = subprocess.Popen(
            in_cgroup(procs, [*DISKSLEUTH, "check", target, "--no-save"]),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not _leftovers(target):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the run made no scratch directory"
                time.sleep(0.05)
            time.sleep(0.5)
            _take_all_space(mnt)
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert _leftovers(target) == [], err
        assert proc.returncode == 2, (out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "no space left" in lines[0] and "(the scratch file was removed)" in lines[0], lines[0]
        # It names the file as people know it, not the descriptor fio opened it through.
        assert f"{target}/{SCRATCH_PREFIX}" in lines[0] and "/proc/self/fd" not in lines[0], lines[0]
