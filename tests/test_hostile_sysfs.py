"""Hostile --sysfs-root trees: FIFOs, symlinks to /dev/zero, huge and pathological attribute files.

Each command runs as a real subprocess with a timeout and a memory limit, so a regression shows as a
failure (timeout, MemoryError) rather than a hung or swapping test run.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys

import pytest
from conftest import SYSFS

from disksleuth.probe.block import read_device
from disksleuth.probe.sysfs import MAX_ATTR_BYTES, Notes, Sysfs, parse_mmc_ios, parse_scheduler

MMC_BLOCK = "sys/devices/platform/emmc2bus/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0"
NVME_PCI = "sys/bus/pci/devices/0000:01:00.0"


def _limit_memory() -> None:
    # 1 GiB of address space: reading /dev/zero to the end hits MemoryError instead of the OOM killer.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "disksleuth", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"disksleuth {' '.join(args)} hung for more than {timeout} s")


def copy_tree(name: str, dest: str) -> str:
    root = os.path.join(dest, name)
    shutil.copytree(os.path.join(SYSFS, name), root, symlinks=True)
    return root


def replace(path: str, make) -> None:
    os.remove(path)
    make(path)


@pytest.fixture
def fifo_tree(tmp_path):
    """An SD-card tree whose size, scheduler and debugfs ios are FIFOs nobody writes to."""
    root = copy_tree("sd_card_sdr104", str(tmp_path))
    for rel in (f"{MMC_BLOCK}/size", f"{MMC_BLOCK}/queue/scheduler", "sys/kernel/debug/mmc0/ios"):
        replace(os.path.join(root, rel), os.mkfifo)
    return root


def test_fifo_attributes_do_not_hang_list_or_explain(fifo_tree):
    res = run_cli("list", "--sysfs-root", fifo_tree)
    assert res.returncode == 0, res.stderr
    assert "/dev/mmcblk0" in res.stdout
    res = run_cli("explain", "mmcblk0", "--read", "20MB/s", "--sysfs-root", fifo_tree)
    assert res.returncode in (0, 1), res.stderr
    assert "Traceback" not in res.stderr


def test_fifo_in_pci_tree_does_not_hang_links(tmp_path):
    root = copy_tree("nvme_new_format", str(tmp_path))
    target = os.path.realpath(os.path.join(root, NVME_PCI))
    replace(os.path.join(target, "current_link_speed"), os.mkfifo)
    res = run_cli("links", "--sysfs-root", root)
    assert res.returncode == 0, res.stderr
    res = run_cli("list", "--sysfs-root", root, "--json")
    assert res.returncode == 0, res.stderr


def test_symlinks_to_dev_zero_are_not_read(tmp_path):
    root = copy_tree("sd_card_sdr104", str(tmp_path))
    for rel in (f"{MMC_BLOCK}/size", f"{MMC_BLOCK}/queue/scheduler", "sys/kernel/debug/mmc0/ios"):
        replace(os.path.join(root, rel), lambda p: os.symlink("/dev/zero", p))
    res = run_cli("list", "--sysfs-root", root, "--json")
    assert res.returncode == 0, res.stderr
    res = run_cli("capture", "-o", str(tmp_path / "cap.tar.gz"), "--sysfs-root", root)
    assert res.returncode == 0, res.stderr


def test_pathological_attribute_values_parse_in_linear_time(tmp_path):
    """Bracket and parenthesis floods made the scheduler and ios regexes quadratic (a 100 KB
    scheduler file took 37 s). Both files stay under the read limit so the parsers really see them."""
    root = copy_tree("sd_card_sdr104", str(tmp_path))
    flood = MAX_ATTR_BYTES - 64
    with open(os.path.join(root, MMC_BLOCK, "queue/scheduler"), "w") as fh:
        fh.write("[" * flood)
    with open(os.path.join(root, "sys/kernel/debug/mmc0/ios"), "w") as fh:
        fh.write("timing spec:\t" + "(" * flood + "\n")
    res = run_cli("list", "--sysfs-root", root, "--json", timeout=15)
    assert res.returncode == 0, res.stderr


def test_oversized_attribute_is_refused_not_read_whole(tmp_path):
    root = copy_tree("sd_card_sdr104", str(tmp_path))
    with open(os.path.join(root, MMC_BLOCK, "size"), "w") as fh:
        fh.write("1" * (MAX_ATTR_BYTES + 10))
    fs = Sysfs(root)
    assert fs.read(os.path.join(root, MMC_BLOCK, "size")) is None
    dev = read_device("mmcblk0", root)
    assert dev.size_bytes is None


def test_hostile_values_become_notes_not_numbers():
    notes = Notes()
    assert parse_scheduler("[" * 200_000) is not None  # linear: returns at once
    assert parse_scheduler("mq-deadline kyber [bfq] none") == "bfq"
    assert parse_scheduler("[] [none]") == "none"
    assert parse_mmc_ios("timing spec:\t" + "(" * 200_000) == (None, None, None)
    assert parse_mmc_ios("clock:\t" + "9" * 5000 + " Hz") == (None, None, None)
    from disksleuth.probe.sysfs import parse_int, parse_pcie_speed

    assert parse_int("9" * 5000, "size", notes) is None
    assert parse_int("-5", "size", notes) is None
    assert parse_pcie_speed("9" * 5000 + " GT/s", "speed", notes) is None
    assert parse_pcie_speed("nan GT/s", "speed", notes) is None
    assert parse_pcie_speed("8.0 GT/s PCIe", "speed", notes) == 8.0
    assert all(len(n) < 200 for n in notes.items)
