"""Targets that are not disks, said as such (issue 20 §3): a kernel pseudo file system is not "0 MiB free",
a directory is not a drive for `health` (smartctl's "Unable to detect device type"), and a virtual disk's
missing SMART is worded once, the same in `health` as in `check`."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import loop_device, needs_fio, needs_loop


@pytest.mark.parametrize("path", ["/proc", "/sys", "/proc/self"])
def test_check_on_a_pseudo_file_system_says_it_is_not_disk_backed(cli, path):
    res = cli("check", path, "--no-save")
    fstype = "sysfs" if path == "/sys" else "proc"
    assert res.code == 2
    assert res.err.count("\n") == 1, res.err
    assert f"{path} is on {fstype}, a kernel pseudo file system, not a disk-backed one" in res.err
    assert "free space" not in res.err and res.out == ""


def test_bench_json_on_a_pseudo_file_system_is_one_error_document(cli):
    res = cli("bench", "/sys/kernel", "--json", "--no-save")
    assert res.code == 2
    assert "kernel pseudo file system" in res.json()["error"]["message"]


def _smartctl_or_skip() -> None:
    if not shutil.which("smartctl"):
        pytest.skip("smartctl missing")


def test_health_on_a_directory_says_it_is_not_a_block_device(cli, tmp_path):
    _smartctl_or_skip()
    res = cli("health", str(tmp_path))
    assert res.code == 2, res.err
    assert res.err.startswith(f"disksleuth: {tmp_path} is a directory, not a block device")
    assert "Unable to detect device type" not in res.err and res.err.count("\n") == 1


def test_health_on_a_memory_file_system_says_no_disk_is_behind_it(cli):
    _smartctl_or_skip()
    res = cli("health", "/dev/shm")
    assert res.code == 2
    assert res.err.strip() == (
        "disksleuth: /dev/shm is a directory, not a block device, and no disk is behind it (tmpfs file system); "
        "health reads a drive: give its device (`disksleuth list` shows them)"
    )


def _virtual_disk_reason(dev: str) -> str:
    return f"no SMART on a virtual disk ({os.path.basename(dev)} is a loop device)"


@pytest.mark.root
@needs_loop
def test_health_words_a_virtual_disk_in_one_line(cli):
    _smartctl_or_skip()
    with loop_device(64) as dev:
        health = cli("health", dev)
        assert health.code == 2
        assert health.err.strip() == f"disksleuth: {dev}: {_virtual_disk_reason(dev)}"
        health_json = cli("health", dev, "--json")
        assert health_json.json()["error"]["message"] == f"{dev}: {_virtual_disk_reason(dev)}"


@pytest.mark.slow  # a whole check (fio, --time 1 per test): the wording is health's, tested just above
@pytest.mark.long
@pytest.mark.root
@needs_loop
@needs_fio
def test_check_words_a_virtual_disk_as_health_does(cli):
    _smartctl_or_skip()
    with loop_device(64) as dev:
        check = cli("check", dev, "--json", "--no-save", "--time", "1")  # the health block, not the figures
        assert check.json()["health"]["not_read_reason"] == _virtual_disk_reason(dev)
