"""fio's failures in one sentence each (issue 12, "Errors in fio's words"), what needs root said up
front, and no stored command naming a device that is gone (issue 11 §3). Real fio throughout."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest
from conftest import loop_device, needs_fio, needs_loop

from disksleuth.model import Device
from disksleuth.probe import fio
from disksleuth.probe.target import TargetInfo, inspect_target
from disksleuth.profiles import MIB, PROFILES
from disksleuth.run import bench
from disksleuth.run.plan import BenchOptions, plan_bench

pytestmark = [needs_fio]

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def _root_or_skip() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (mounts, setpriv)")


@contextlib.contextmanager
def _mounted(fstype: str, options: str = "") -> Iterator[str]:
    mnt = tempfile.mkdtemp(prefix=f"disksleuth-{fstype}-{uuid.uuid4().hex[:6]}-")
    argv = ["mount", "-t", fstype, *(["-o", options] if options else []), fstype, mnt]
    subprocess.run(argv, check=True, capture_output=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", mnt], check=False)
        os.rmdir(mnt)


def _fio(filename: str, *args: str) -> list[str]:
    return ["fio", "--name=t", f"--filename={filename}", "--thread", "--bs=1M", *args, "--output-format=json"]


def _one_line(text: str) -> bool:
    return text.count("\n") <= 1 and "Traceback" not in text and "filesetup.c" not in text and "; fio said" not in text


def test_a_file_smaller_than_a_block_is_one_sentence(cli, tmp_path):
    """`check /etc/hostname` said "fio failed: fio: size too small ... 3 < 1048576"."""
    small = tmp_path / "hostname"
    small.write_bytes(b"abc")
    res = cli("check", str(small), "--no-save")
    assert res.code == 2
    assert res.err.strip() == (
        f"disksleuth: {small} is 3 bytes, smaller than one 1,048,576-byte block of the quick profile; "
        "give a directory (a scratch file is made there), a larger file or a device"
    )
    # And fio's own words, should it ever get that far, in ours.
    assert fio.explain_fio_failure("fio: size too small, must not be less than minimum block size: 3 < 1048576\n") == (
        "the target is 3 bytes, smaller than one 1,048,576-byte block of this test; "
        "give a directory (a scratch file is made there), a larger file or a device"
    )


@pytest.mark.root
@needs_loop
def test_non_root_on_a_raw_device_is_told_it_needs_root():
    """Non-root `check /dev/vda` said "fio reported error 13 ... filesetup.c:805"."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv missing")
    with loop_device(64) as dev:
        os.chmod(dev, 0o600)
        res = subprocess.run([*NOBODY, *DISKSLEUTH, "check", dev, "--no-save"], capture_output=True, text=True)
        assert res.returncode == 2
        assert res.stderr.strip().splitlines()[-1] == (
            f"disksleuth: cannot read {dev}: Permission denied; reading a raw device needs root (run with sudo)"
        )
        assert "Traceback" not in res.stderr and "error 13" not in res.stderr


@pytest.mark.root
def test_permission_denied_inside_fio_is_one_sentence():
    """What fio says when its open() is refused, in our words (fio run for real as nobody)."""
    _root_or_skip()
    folder = tempfile.mkdtemp(prefix="disksleuth-perm-")
    os.chmod(folder, 0o755)
    private = os.path.join(folder, "root-only.bin")
    with open(private, "wb") as fh:
        fh.write(b"\0" * MIB)
    os.chmod(private, 0o600)
    code = (
        "import sys; from disksleuth.probe import fio\n"
        "try:\n"
        f"    fio.run_job({_fio(str(private), '--rw=read', '--size=1M')!r}, timeout_s=60)\n"
        "except fio.FioJobError as exc:\n"
        "    print(exc)\n"
    )
    try:
        res = subprocess.run([*NOBODY, sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(folder)
    assert res.stdout.strip() == (
        f"t: cannot open {private}: Permission denied; this needs root (run with sudo) or access to it"
    ), res.stderr


@pytest.mark.root
def test_no_direct_io_is_one_sentence():
    """ramfs has no O_DIRECT: fio said "err=22/file:filesetup.c:805 ... Invalid argument"."""
    _root_or_skip()
    with _mounted("ramfs") as mnt:
        path = os.path.join(mnt, "f")
        with pytest.raises(fio.FioJobError) as exc:
            fio.run_job(_fio(path, "--rw=read", "--size=4M", "--direct=1"), timeout_s=60)
    assert str(exc.value) == f"t: {path} does not support direct I/O (O_DIRECT), which this test asked for"
    assert _one_line(str(exc.value))


@pytest.mark.root
def test_no_space_is_one_sentence():
    _root_or_skip()
    with _mounted("tmpfs", "size=8m") as mnt:
        path = os.path.join(mnt, "f")
        with pytest.raises(fio.FioJobError) as exc:
            fio.run_job(_fio(path, "--rw=write", "--size=16M"), timeout_s=60)
    assert str(exc.value) == f"t: no space left on the device holding {path}; the disk filled up during the run"


def test_without_root_what_is_skipped_is_said_up_front():
    sata = Device("sdz", "/dev/sdz", "sata", model="Disk", size_bytes=1 << 30)
    target = TargetInfo("dir", "/srv", "ext4", "/srv", 10 << 30, None, None, sata)
    plan = plan_bench(target, BenchOptions(profile="riscos"), PROFILES["riscos"], root=False)
    assert not plan.read_health
    assert plan.without_root == (
        "not root: drive health (SMART) is skipped; run with sudo to include it",
        "not root: the RAM reference is a page-cached file on /dev/shm, not a loop device with direct I/O",
    )
    as_root = plan_bench(target, BenchOptions(profile="riscos"), PROFILES["riscos"], root=True)
    assert as_root.read_health and as_root.without_root == ()
    # A loop device has no drive to ask: nothing to say.
    loop = replace(target, disk=Device("loop9", "/dev/loop9", "loop"))
    assert plan_bench(loop, BenchOptions(), PROFILES["quick"], root=False).without_root == ()


@pytest.mark.root
def test_non_root_run_says_it_up_front():
    """As nobody: what is skipped without root comes first, before anything runs (here the run then
    stops at once, as nobody may not write in the directory)."""
    _root_or_skip()
    folder = tempfile.mkdtemp(prefix="disksleuth-nobody-")
    os.chmod(folder, 0o755)
    try:
        res = subprocess.run(
            [*NOBODY, *DISKSLEUTH, "bench", folder, "--profile", "riscos", "--no-save"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.rmdir(folder)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        "disksleuth: not root: the RAM reference is a page-cached file on /dev/shm, not a loop device with direct I/O",
        f"disksleuth: cannot create a scratch file in {folder}: Permission denied",
    ]


# --- issue 11 §3: no stored command names a device that is gone --------------------------------


@pytest.mark.slow
def test_reference_commands_never_name_the_removed_loop_device(tmp_path):
    riscos = PROFILES["riscos"]
    one_test = replace(riscos, tests=riscos.tests[:1])
    plan = plan_bench(inspect_target(str(tmp_path)), BenchOptions(size_bytes=16 * MIB, fixed_time_s=1), one_test)
    run = bench.execute(plan, bench.QuietEvents(), "fio-test")
    (ref,) = run.reference
    assert ref.fio_command.startswith("# not rerunnable: ran on a RAM-backed ")
    assert "/dev/loop" not in ref.fio_command and "/dev/shm" not in ref.fio_command
    # The target's own command still names the target, and pastes.
    (test,) = run.tests
    assert test.fio_command.startswith("fio ") and str(tmp_path) in test.fio_command
    assert json.dumps(ref.fio_command)  # stored as is
