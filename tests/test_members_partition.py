"""`bench --members` refuses two members that read one physical disk, as it refuses a device given twice (issue 35
§12): a disk and its own partition (`--members /dev/loop2 /dev/loop2p1` was read as two members, the disk twice),
two partitions of one disk, and two loop devices on one backing file. One line, exit 2, before fio runs. On a real
loop device with a DOS partition table (two partitions), written by hand: no sfdisk or parted on this machine."""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest
from conftest import _have_fio, _have_loop

SIZE = 64 << 20


def _two_partitions(image: str) -> None:
    """A DOS partition table with two Linux partitions (type 0x83), each half the image."""
    half = SIZE // 512 // 2

    def entry(start: int, sectors: int) -> bytes:
        return struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, sectors)

    with open(image, "r+b") as fh:
        fh.seek(446)
        fh.write(entry(2048, half - 2048) + entry(half, half) + b"\0" * 32 + b"\x55\xaa")


@contextlib.contextmanager
def _partitioned_loop() -> Iterator[str]:
    reason = _have_loop() or _have_fio()
    if reason:
        pytest.skip(reason)
    image = f"/dev/shm/disksleuth-test-{uuid.uuid4().hex[:8]}.img"
    with open(image, "wb") as fh:
        fh.truncate(SIZE)
    _two_partitions(image)
    disk = None
    try:
        disk = subprocess.run(["losetup", "-f", "--show", "-P", image], capture_output=True, text=True, check=True)
        disk = disk.stdout.strip()
        for _ in range(50):
            if os.path.exists(f"{disk}p2"):
                break
            subprocess.run(["partx", "-a", disk], capture_output=True)  # -P's own scan can be missed
            time.sleep(0.1)
        if not os.path.exists(f"{disk}p2"):
            pytest.skip("the kernel did not create the partition devices")
        yield disk
    finally:
        if disk:
            subprocess.run(["losetup", "-d", disk], check=False)
        os.unlink(image)


def _refused(cli, *members: str) -> str:  # noqa: ANN001
    started = time.monotonic()
    res = cli("bench", "--members", *members, "--no-save")
    assert res.code == 2 and not res.out, res
    assert res.err.count("\n") == 1 and "Traceback" not in res.err, res.err
    assert time.monotonic() - started < 5  # refused before any fio run (each read is 2 s alone and 2 s together)
    return res.err.strip()


def test_a_disk_and_its_own_partition_are_not_two_members(cli) -> None:
    with _partitioned_loop() as disk:
        name = os.path.basename(disk)
        said = _refused(cli, disk, f"{disk}p1")
        assert said == (
            f"disksleuth: --members names {name} and {name}p1, which both read {name} ({name}p1 is a partition of "
            f"{name}): one disk is not two members; name each disk once"
        )
        # Either order; and the device given twice is still refused as before.
        assert f"--members names {name}p1 and {name}, which both read {name}" in _refused(cli, f"{disk}p1", disk)
        assert _refused(cli, disk, disk) == f"disksleuth: --members names the same device twice: {name}, {name}"


def test_two_partitions_of_one_disk_are_not_two_members(cli) -> None:
    """Read together they take turns on one disk: "together" would measure the disk's contention, and member_slow
    or shared_bottleneck would judge one disk as two."""
    with _partitioned_loop() as disk:
        name = os.path.basename(disk)
        said = _refused(cli, f"{disk}p1", f"{disk}p2")
        assert f"--members names {name}p1 and {name}p2, which both read {name} (" in said
        assert said.endswith("one disk is not two members; name each disk once")


def test_two_loop_devices_on_one_backing_file_are_not_two_members(cli) -> None:
    reason = _have_loop() or _have_fio()
    if reason:
        pytest.skip(reason)
    image = f"/dev/shm/disksleuth-test-{uuid.uuid4().hex[:8]}.img"
    with open(image, "wb") as fh:
        fh.truncate(SIZE)
    attached: list[str] = []
    try:
        for _ in range(2):
            dev = subprocess.run(["losetup", "-f", "--show", image], capture_output=True, text=True, check=True)
            attached.append(dev.stdout.strip())
        a, b = (os.path.basename(d) for d in attached)
        said = _refused(cli, *attached)
        assert said.startswith(f"disksleuth: --members names {a} and {b}, loop devices attached to one backing file")
    finally:
        for dev in attached:
            subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)
