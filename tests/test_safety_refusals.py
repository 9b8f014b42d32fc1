"""--destructive is refused on devices in use, for real: swap, a mounted partition, a holder (dm)."""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from conftest import loop_device, mounted_ext4, needs_fio, needs_loop, sha256_of

pytestmark = [needs_fio, needs_loop, pytest.mark.root]

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _refused(dev: str) -> str:
    res = subprocess.run(
        [*DISKSLEUTH, "bench", dev, "--destructive", "--yes", "--no-save"], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 2, res.stdout
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    return res.stderr.strip()


def test_swap_device_is_refused():
    with loop_device(64) as dev:
        subprocess.run(["mkswap", dev], check=True, capture_output=True)
        if subprocess.run(["swapon", "--priority", "-10", dev], capture_output=True).returncode != 0:
            pytest.skip("swapon is not allowed here")
        try:  # (no checksum: the kernel itself may swap to it meanwhile)
            assert _refused(dev) == f"disksleuth: refusing to write to {dev}: {dev} is in use as swap"
        finally:
            subprocess.run(["swapoff", dev], check=False)


def _mbr_one_partition(image: str, start_sector: int, sectors: int) -> None:
    """A DOS partition table with one Linux partition (type 0x83), written by hand (no fdisk here)."""
    entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start_sector, sectors)
    with open(image, "r+b") as fh:
        fh.seek(446)
        fh.write(entry + b"\0" * 48 + b"\x55\xaa")


@contextlib.contextmanager
def _partitioned_loop() -> Iterator[tuple[str, str]]:
    image = f"/dev/shm/disksleuth-test-{uuid.uuid4().hex[:8]}.img"
    with open(image, "wb") as fh:
        fh.truncate(64 << 20)
    _mbr_one_partition(image, 2048, (64 << 20) // 512 - 2048)
    disk = None
    try:
        disk = subprocess.run(["losetup", "-f", "--show", "-P", image], capture_output=True, text=True, check=True)
        disk = disk.stdout.strip()
        part = f"{disk}p1"
        for _ in range(50):
            if os.path.exists(part):
                break
            subprocess.run(["partx", "-a", disk], capture_output=True)  # -P's own scan can be missed
            time.sleep(0.1)
        if not os.path.exists(part):
            pytest.skip("the kernel did not create the partition device")
        yield disk, part
    finally:
        if disk:
            subprocess.run(["losetup", "-d", disk], check=False)
        os.unlink(image)


def test_disk_with_a_mounted_partition_is_refused():
    with _partitioned_loop() as (disk, part), mounted_ext4(part) as mnt:
        with open(os.path.join(mnt, "precious.bin"), "wb") as fh:
            fh.write(os.urandom(1 << 20))
        digest = sha256_of(os.path.join(mnt, "precious.bin"))
        assert _refused(disk) == f"disksleuth: refusing to write to {disk}: {part} is mounted at {mnt}"
        assert sha256_of(os.path.join(mnt, "precious.bin")) == digest


def test_device_with_a_holder_is_refused():
    if shutil.which("dmsetup") is None or subprocess.run(["dmsetup", "targets"], capture_output=True).returncode:
        pytest.skip("device-mapper is not available in this kernel")
    with loop_device(64) as dev:
        name = f"disksleuth-test-{uuid.uuid4().hex[:8]}"
        table = f"0 {(64 << 20) // 512} linear {dev} 0"
        subprocess.run(["dmsetup", "create", name], input=table, text=True, check=True, capture_output=True)
        try:
            before = sha256_of(dev)
            assert "(LVM, md or dm)" in _refused(dev)
            assert sha256_of(dev) == before
        finally:
            subprocess.run(["dmsetup", "remove", name], check=False)
