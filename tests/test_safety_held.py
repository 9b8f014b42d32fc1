"""The rules bench, check and verify share for what an exclusive claim cannot see (analysis/safety, run/plan), on
models: no device needed. tests/test_bench_attacks.py and tests/test_verify_attacks.py attack them for real."""

from __future__ import annotations

import pytest

from disksleuth.analysis.safety import held_refusal, renamed_refusal, write_refusal
from disksleuth.errors import SafetyRefusal
from disksleuth.model import Device
from disksleuth.model.held import HeldDevice
from disksleuth.probe.target import TargetInfo
from disksleuth.profiles import PROFILES
from disksleuth.run.plan import BenchOptions, plan_bench

CARD = Device("sdc", "/dev/sdc", "usb", model="Card", size_bytes=1 << 30, dev="8:32")
FREE = HeldDevice(dev="8:32", node="/dev/sdc", read_only=False)


def _plan(device: Device, held: HeldDevice, path: str = "/home/u/card"):  # noqa: ANN202
    target = TargetInfo("block", path, None, None, None, device.size_bytes, device, device)
    return plan_bench(target, BenchOptions(destructive=True, yes=True), PROFILES["quick"], held=held)


def test_fio_gets_the_checked_node_and_the_run_keeps_the_name_given() -> None:
    plan = _plan(CARD, FREE)
    assert plan.main.path == "/dev/sdc" and plan.target.path == "/home/u/card" and plan.writes_allowed


def test_a_name_that_now_names_another_device_is_refused_before_any_other_check() -> None:
    mounted = Device("sdd", "/dev/sdd", "usb", size_bytes=1 << 30, dev="8:48", mountpoints=("/srv",))
    with pytest.raises(SafetyRefusal) as refused:
        _plan(mounted, FREE)
    assert str(refused.value) == (
        "/home/u/card now names another device (8:48) than the one held (8:32); refusing to write"
    )
    assert (
        renamed_refusal("/x", None, FREE)
        == "/x now names another device (none) than the one held (8:32); refusing to write"
    )


def test_no_node_that_is_the_device_held_refuses_the_writes() -> None:
    with pytest.raises(SafetyRefusal, match=r"no device node was found that is the device held \(8:32\)"):
        _plan(CARD, HeldDevice(dev="8:32", node=None, read_only=False))


def test_openers_are_named_up_to_three_then_counted() -> None:
    held = HeldDevice("8:32", "/dev/sdc", False, tuple(f"process {p} (qemu)" for p in range(100, 105)))
    assert held_refusal("/dev/sdc", held) == (
        "refusing to write to /dev/sdc: it is open in process 100 (qemu), process 101 (qemu), process 102 (qemu) "
        "and 2 more; close it first"
    )
    assert held_refusal("/dev/sdc", FREE) is None


def test_a_mount_is_said_before_an_opener_and_an_opener_before_read_only() -> None:
    mounted = Device("sdc", "/dev/sdc", "usb", size_bytes=1 << 30, dev="8:32", mountpoints=("/media/card",))
    held = HeldDevice("8:32", "/dev/sdc", True, ("process 7 (dd)",))
    with pytest.raises(SafetyRefusal, match="mounted at /media/card"):
        _plan(mounted, held)
    with pytest.raises(SafetyRefusal, match=r"it is open in process 7 \(dd\)"):
        _plan(CARD, held)
    with pytest.raises(SafetyRefusal, match=r"^/home/u/card is read-only \(a card's write-protect switch"):
        _plan(CARD, HeldDevice("8:32", "/dev/sdc", True))


def test_an_attached_loop_device_over_the_disk_or_a_partition_refuses_it() -> None:
    part = Device("sdc1", "/dev/sdc1", "partition", backs=("loop7",), parent="sdc")
    disk = Device("sdc", "/dev/sdc", "usb", partitions=(part,), backs=("loop6",))
    loops = (Device("loop6", "/dev/loop6", "loop"), Device("loop7", "/dev/loop7", "loop"))
    assert write_refusal(disk, (disk, *loops)) == (
        "it backs /dev/loop6, /dev/loop7 (attached, so in use); detach it first (losetup -d /dev/loop6 /dev/loop7)"
    )
    mounted = (Device("loop6", "/dev/loop6", "loop", mountpoints=("/mnt",)), loops[1])
    assert write_refusal(disk, (disk, *mounted)) == "it backs /dev/loop6, which is mounted at /mnt"  # the chain first


def test_without_destructive_nothing_held_is_asked() -> None:
    target = TargetInfo("block", "/home/u/card", None, None, None, CARD.size_bytes, CARD, CARD)
    plan = plan_bench(target, BenchOptions(), PROFILES["quick"])
    assert plan.main.read_only and plan.main.path == "/home/u/card"
