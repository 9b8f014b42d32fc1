"""--destructive is refused through loop devices, for real: sysfs shows no holders for them, so a file or
device linked to a mounted file system by a loop device was overwritten (security review, HIGH)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from conftest import loop_device, mounted_ext4, needs_loop, sha256_of

from disksleuth.model import Device

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _bench(target: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DISKSLEUTH, "bench", target, "--no-save", "--profile", "quick", "--time", "1", *extra],
        capture_output=True,
        text=True,
        timeout=180,
    )


def _refused(target: str) -> str:
    res = _bench(target, "--destructive", "--yes")
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    return res.stderr.strip()


@contextlib.contextmanager
def _loop_over(backing: str) -> Iterator[str]:
    dev = subprocess.run(["losetup", "-f", "--show", backing], capture_output=True, text=True, check=True).stdout
    try:
        yield dev.strip()
    finally:
        subprocess.run(["losetup", "-d", dev.strip()], check=False)


def _checked(mnt: str) -> str:
    path = os.path.join(mnt, "canary")
    with open(path, "wb") as fh:
        fh.write(os.urandom(1 << 20))
    os.sync()
    return sha256_of(path)


def _intact(mnt: str, digest: str, dev: str) -> None:
    subprocess.run(["sync"], check=True)
    subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], check=False)
    assert sha256_of(os.path.join(mnt, "canary")) == digest
    subprocess.run(["umount", mnt], check=True)
    fsck = subprocess.run(["e2fsck", "-fn", dev], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_backing_file_of_a_mounted_loop_device_is_refused():  # (a)
    with loop_device(64) as loop, mounted_ext4(loop) as mnt:
        image = subprocess.run(["losetup", "-nO", "BACK-FILE", loop], capture_output=True, text=True).stdout.strip()
        digest = _checked(mnt)
        msg = _refused(image)
        assert msg == f"disksleuth: refusing to write to {image}: it backs {loop}, which is mounted at {mnt}"
        # read-only tests still run on it
        assert _bench(image).returncode in (0, 1)
        _intact(mnt, digest, loop)


@pytest.mark.root
@needs_loop
def test_loop_device_over_a_mounted_device_is_refused():  # (b)
    with loop_device(64) as lower, _loop_over(lower) as upper, mounted_ext4(lower) as mnt:
        digest = _checked(mnt)
        msg = _refused(upper)
        assert msg == f"disksleuth: refusing to write to {upper}: it is backed by {lower}, which is mounted at {mnt}"
        _intact(mnt, digest, lower)


@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_device_backing_a_mounted_loop_device_is_refused():  # (c)
    with loop_device(64) as lower, _loop_over(lower) as upper, mounted_ext4(upper) as mnt:
        digest = _checked(mnt)
        msg = _refused(lower)
        assert msg == f"disksleuth: refusing to write to {lower}: it backs {upper}, which is mounted at {mnt}"
        assert _bench(lower).returncode in (0, 1)
        _intact(mnt, digest, upper)


def test_backing_file_parser_drops_the_deleted_mark():
    from disksleuth.probe.loops import parse_backing_file

    # fs/d_path.c appends " (deleted)" to an unlinked file's path
    assert parse_backing_file("/dev/shm/img (deleted)\n") == "/dev/shm/img"
    assert parse_backing_file("/dev/loop2") == "/dev/loop2"
    assert parse_backing_file("") is None


def _dev(name: str, **kw) -> Device:  # noqa: ANN003
    return Device(name=name, path=f"/dev/{name}", transport="loop", **kw)


def test_rule_follows_a_chain_and_partitions():
    from disksleuth.analysis.safety import file_write_refusal, write_refusal

    disk = Device(
        name="sdb",
        path="/dev/sdb",
        transport="sata",
        partitions=(Device(name="sdb1", path="/dev/sdb1", transport="partition", backs=("loop4",), parent="sdb"),),
    )
    loop4 = _dev("loop4", backed_by="sdb1", backs=("loop5",))
    loop5 = _dev("loop5", backed_by="loop4", mountpoints=("/srv",))
    assert write_refusal(disk, (disk, loop4, loop5)) == (
        "it (through /dev/sdb1) backs /dev/loop4, which backs /dev/loop5, which is mounted at /srv"
    )
    unread = "it (through /dev/sdb1) backs /dev/loop4, which could not be read; refusing to write"
    assert write_refusal(disk, (disk,)) == unread
    assert write_refusal(_dev("loop5", backed_by="loop4"), (_dev("loop4"), _dev("loop5"))) is None
    assert file_write_refusal(("loop4",), (_dev("loop4"),)) == (
        "it backs /dev/loop4 (attached, so in use); detach it first (losetup -d /dev/loop4)"
    )
    assert file_write_refusal((), ()) is None


def test_rule_refuses_a_chain_deeper_than_its_bound():
    from disksleuth.analysis.safety import write_refusal

    chain = tuple(_dev(f"loop{i}", backs=(f"loop{i + 1}",)) for i in range(12))
    assert "deeper than" in (write_refusal(chain[0], chain) or "")


def _captured_tree(root) -> None:  # noqa: ANN001
    """loop2 over /dev/loop1 (mounted at /srv), loop1 over a deleted image, as sysfs and mountinfo show them."""
    for name, minor, backing in (("loop1", 1, "/dev/shm/gone.img (deleted)"), ("loop2", 2, "/dev/loop1")):
        real = root / "sys/devices/virtual/block" / name
        (real / "loop").mkdir(parents=True)
        (real / "dev").write_text(f"7:{minor}\n")
        (real / "size").write_text("131072\n")
        (real / "loop/backing_file").write_text(backing + "\n")
        for link in (f"sys/block/{name}", f"sys/class/block/{name}", f"sys/dev/block/7:{minor}"):
            (root / link).parent.mkdir(parents=True, exist_ok=True)
            (root / link).symlink_to(os.path.relpath(real, (root / link).parent))
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text("36 25 7:1 / /srv rw,relatime shared:1 - ext4 /dev/loop1 rw\n")


def test_captured_tree_links_loop_devices(tmp_path):
    from disksleuth.analysis.safety import write_refusal
    from disksleuth.probe.target import loop_related

    _captured_tree(tmp_path)
    related = {d.name: d for d in loop_related(("loop2",), str(tmp_path))}
    assert related["loop2"].backed_by == "loop1" and related["loop1"].backs == ("loop2",)
    assert related["loop1"].backing_file == "/dev/shm/gone.img (deleted)" and related["loop1"].backed_by is None
    assert related["loop1"].mountpoints == ("/srv",)
    reason = write_refusal(related["loop2"], tuple(related.values()))
    assert reason == "it is backed by /dev/loop1, which is mounted at /srv"


@pytest.mark.root
@needs_loop
def test_hard_link_to_an_unlinked_backing_file_is_refused():
    # sysfs then shows "<old path> (deleted)": only the kernel's LOOP_GET_STATUS64 record still names the inode
    with loop_device(64) as loop:
        image = subprocess.run(["losetup", "-nO", "BACK-FILE", loop], capture_output=True, text=True).stdout.strip()
        link = f"/dev/shm/disksleuth-test-{uuid.uuid4().hex[:8]}.link"
        os.link(image, link)
        os.rename(image, image + ".moved")  # the fixture removes `image`: keep a name there for it
        try:
            with open(image, "wb") as fh:  # a different file at the old path
                fh.truncate(64 << 20)
            msg = _refused(link)
            assert msg == (
                f"disksleuth: refusing to write to {link}: it backs {loop} (attached, so in use); "
                f"detach it first (losetup -d {loop})"
            )
        finally:
            os.unlink(link)
            os.unlink(image + ".moved")


def test_loop_info64_parser():
    import struct

    from disksleuth.probe.loops import parse_loop_info64

    assert parse_loop_info64(struct.pack("=QQQ", 27, 4829, 0) + bytes(208)) == ("inode", 27, 4829)
    assert parse_loop_info64(struct.pack("=QQQ", 5, 99, os.makedev(7, 1)) + bytes(208)) == ("dev", 7, 1)
    assert parse_loop_info64(b"") is None
