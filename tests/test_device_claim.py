"""--destructive holds the device with O_EXCL, so the kernel's own claims refuse the run (issue 26).

The mount check reads only this process's mount table: a loop device mounted in a private mount namespace
(a privileged container sees the host's disks, not its mounts) was overwritten, and so was the second member
of a mounted two-device btrfs, which mountinfo never names. Real loop devices, a real namespace, real btrfs."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from conftest import frozen, loop_device, needs_fio, needs_loop, sha256_of

from disksleuth.probe.claim import DeviceBusy, exclusive_claim, what_holds

pytestmark = [needs_loop, needs_fio, pytest.mark.root]

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _bench_destructive(dev: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DISKSLEUTH, "bench", dev, "--destructive", "--yes", "--no-save", "--profile", "quick", "--time", "1",
         "--size", "16M", *extra],
        capture_output=True,
        text=True,
        timeout=180,
    )


def _image_of(dev: str) -> str:
    with open(f"/sys/class/block/{os.path.basename(dev)}/loop/backing_file") as fh:
        return fh.read().strip()


@contextlib.contextmanager
def _mounted_in_private_namespace(dev: str) -> Iterator[subprocess.Popen[bytes]]:
    """`dev` (ext4) mounted in a new private mount namespace, by a process that holds it there until killed."""
    # No lazy init: a mounted ext4 otherwise zeroes its inode tables in the background and marks each group
    # done in its descriptors, its own write to the device, which a checksum taken later saw (a loaded CI run).
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev], check=True)
    mnt = f"/tmp/disksleuth-ns-{uuid.uuid4().hex[:8]}"
    os.makedirs(mnt)
    script = f'mount {dev} {mnt} && echo precious > {mnt}/marker && sync && echo ready && exec sleep 600'
    proc = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        with open("/proc/self/mountinfo") as fh:
            assert dev not in fh.read()  # invisible from here: only the kernel's claim can tell
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)
        os.rmdir(mnt)


def test_a_device_mounted_in_another_namespace_is_refused_and_untouched() -> None:
    with loop_device(128) as dev, _mounted_in_private_namespace(dev) as holder:
        image = _image_of(dev)
        before = sha256_of(image)
        res = _bench_destructive(dev)
        assert res.returncode == 2, res.stdout + res.stderr
        line = res.stderr.strip()
        assert line.count("\n") == 0 and "Traceback" not in line
        assert "busy" in line and "another mount namespace" in line and f"process {holder.pid}" in line
        assert "nothing was written" in line
        assert sha256_of(image) == before


def test_the_second_member_of_a_mounted_two_device_btrfs_is_refused() -> None:
    if shutil.which("mkfs.btrfs") is None:
        pytest.skip("btrfs-progs missing (./quickstart test installs it)")
    with loop_device(256) as first, loop_device(256) as second:
        subprocess.run(["mkfs.btrfs", "-q", "-f", "-d", "raid0", "-m", "raid1", first, second], check=True)
        mnt = f"/tmp/disksleuth-btrfs-{uuid.uuid4().hex[:8]}"
        os.makedirs(mnt)
        try:
            subprocess.run(["mount", first, mnt], check=True)
            try:
                with open(os.path.join(mnt, "data"), "wb") as fh:
                    fh.write(os.urandom(8 << 20))
                subprocess.run(["sync"], check=True)
                image = _image_of(second)
                with frozen(mnt):
                    before = sha256_of(image)
                    res = _bench_destructive(second)
                    assert res.returncode == 2, res.stdout + res.stderr
                    assert "member of the mounted btrfs" in res.stderr and first in res.stderr
                    assert sha256_of(image) == before
                scrub = subprocess.run(["btrfs", "scrub", "start", "-B", mnt], capture_output=True, text=True)
                assert scrub.returncode == 0, scrub.stdout + scrub.stderr
            finally:
                subprocess.run(["umount", mnt], check=False)
        finally:
            os.rmdir(mnt)


def _write_mbr_with_one_partition(image: str, start_sector: int, sectors: int) -> None:
    """A DOS partition table by hand (no fdisk needed): one Linux partition entry at 446, the 0x55AA mark at 510."""
    entry = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + start_sector.to_bytes(4, "little") + sectors.to_bytes(4, "little")
    with open(image, "r+b") as fh:
        fh.seek(446)
        fh.write(entry)
        fh.seek(510)
        fh.write(b"\x55\xaa")


def _partition_node(part: str) -> bool:
    """Make /dev/loopNp1 from sysfs where no udev does (containers); True if we made it."""
    sys_dev = f"/sys/class/block/{os.path.basename(part)}/dev"
    if not os.path.exists(sys_dev):  # this kernel did not scan the table on attach: add it (BLKPG) by hand
        subprocess.run(["partx", "-a", part[: -len("p1")]], check=True)
    if os.path.exists(part):
        return False
    with open(sys_dev) as fh:
        major, minor = (int(x) for x in fh.read().split(":"))
    os.mknod(part, 0o600 | stat.S_IFBLK, os.makedev(major, minor))
    return True


def test_a_whole_disk_whose_partition_is_mounted_elsewhere_is_refused() -> None:
    image = f"/dev/shm/disksleuth-test-{uuid.uuid4().hex[:8]}.img"
    with open(image, "wb") as fh:
        fh.truncate(128 << 20)
    _write_mbr_with_one_partition(image, start_sector=2048, sectors=64 << 11)
    dev = subprocess.run(["losetup", "-f", "--show", "-P", image], capture_output=True, text=True, check=True)
    disk = dev.stdout.strip()
    try:
        part = f"{disk}p1"
        made_node = _partition_node(part)
        with _mounted_in_private_namespace(part):
            before = sha256_of(image)
            res = _bench_destructive(disk)
            assert res.returncode == 2, res.stdout + res.stderr
            assert f"{part} is mounted at" in res.stderr and "another mount namespace" in res.stderr
            assert sha256_of(image) == before
        if made_node:
            os.unlink(part)
    finally:
        subprocess.run(["losetup", "-d", disk], check=False)
        os.unlink(image)


@pytest.mark.slow
def test_the_claim_is_held_while_fio_writes(tmp_path) -> None:  # noqa: ANN001
    """Nothing can claim the device during the run (here: another exclusive open, as mount would make)."""
    with loop_device(64) as dev:
        proc = subprocess.Popen(
            [*DISKSLEUTH, "bench", dev, "--destructive", "--yes", "--no-save", "--profile", "quick", "--time", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            refusals = 0
            deadline = time.monotonic() + 60
            # This device's fio exactly: "fio.*/dev/loop1" also matched another worker's fio on /dev/loop12.
            fio_on_dev = ["pgrep", "-f", f"fio .*--filename={dev}( |$)"]
            while proc.poll() is None and time.monotonic() < deadline:
                if subprocess.run(fio_on_dev, capture_output=True).returncode == 0:
                    try:
                        fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
                    except OSError as exc:
                        assert exc.errno == errno.EBUSY
                        refusals += 1
                    else:
                        os.close(fd)
                        # Claimed while a fio of the run was still there after the open too; one that ended
                        # between the look and the open (the run's last, then the claim let go) proves nothing.
                        if proc.poll() is None and subprocess.run(fio_on_dev, capture_output=True).returncode == 0:
                            pytest.fail("the device could be claimed while fio was writing to it")
                time.sleep(0.2)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode in (0, 1), out + err  # 1: findings (a RAM-backed device is never a clean ok)
        assert "Summary:" in out
        assert refusals >= 3
        fd = os.open(dev, os.O_RDONLY | os.O_EXCL)  # released when the run ended
        os.close(fd)


def test_exclusive_claim_names_the_holder_and_releases() -> None:
    with loop_device(64) as dev:
        with exclusive_claim(dev) as claim:
            assert claim.path == dev
            with pytest.raises(DeviceBusy) as busy, exclusive_claim(dev):
                pass
            # Held by an open file, not a mount or an array: the kernel says busy, and we say we cannot see why.
            assert "not visible from here" in str(busy.value)
        with exclusive_claim(dev):
            pass
        assert what_holds(dev) == []
