"""Root refused by something above file permissions (issue 20: `check /dev/vda` as root in a container said
"permission denied ... this needs root (run with sudo)" where the OS said "Operation not permitted"). The
refusal is made real with a cgroup v1 devices controller rule, as container runtimes do, and the words must be
the OS's own, naming the path, with no advice to become root to one who already is."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from conftest import in_cgroup, loop_device, needs_fio, needs_loop, remove_cgroup

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
DEVICES = "/sys/fs/cgroup/devices"

pytestmark = [needs_loop, pytest.mark.root]


@contextlib.contextmanager
def device_denied(dev: str, access: str) -> Iterator[str]:
    """A devices cgroup that denies `access` ("r", "w", "rwm") to block device `dev`; yields its cgroup.procs."""
    if os.geteuid() != 0 or not os.path.exists(os.path.join(DEVICES, "devices.deny")):
        pytest.skip("needs root and the cgroup v1 devices controller")
    st = os.stat(dev)
    group = os.path.join(DEVICES, f"disksleuth-test-{uuid.uuid4().hex[:8]}")
    os.mkdir(group)
    try:
        with open(os.path.join(group, "devices.deny"), "w") as fh:
            fh.write(f"b {os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {access}")
        yield os.path.join(group, "cgroup.procs")
    finally:
        remove_cgroup(group, DEVICES)  # our children have exited by now; anything left is moved out


@needs_fio
def test_check_as_root_on_a_forbidden_device_says_what_the_os_said():
    with loop_device(64) as dev, device_denied(dev, "rwm") as procs:
        res = subprocess.run(
            in_cgroup(procs, [*DISKSLEUTH, "check", dev, "--no-save"]), capture_output=True, text=True, timeout=120
        )
    assert res.returncode == 2, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last == f"disksleuth: cannot read {dev}: Operation not permitted, even as root"
    assert "sudo" not in res.stderr and "Traceback" not in res.stderr


@needs_fio
def test_fio_refused_as_root_says_what_the_os_said():
    """Reading allowed, writing denied: the refusal comes from fio's own open(), errno 1 (EPERM)."""
    code = (
        "from disksleuth.probe import fio\n"
        "try:\n"
        "    fio.run_job(['fio', '--name=t', '--filename=' + DEV, '--thread', '--bs=1M', '--rw=write',\n"
        "                 '--size=1M', '--direct=1', '--output-format=json'], timeout_s=60)\n"
        "except fio.FioJobError as exc:\n"
        "    print(exc)\n"
    )
    with loop_device(64) as dev, device_denied(dev, "w") as procs:
        argv = in_cgroup(procs, [sys.executable, "-c", f"DEV = {dev!r}\n{code}"])
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == f"t: cannot open {dev}: Operation not permitted, even as root", res.stderr
