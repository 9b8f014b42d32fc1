"""The defects a first user hit (issue 40, "Defects a first user hit"), each kept fixed by a test that failed
before its fix. Numbers in the test names are the issue's."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import needs_fio


def _root_block_device() -> str | None:
    """The block device this machine's `/` is mounted from, as mountinfo names it, when it is one."""
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            if fields[4] == "/" and " - " in line:
                source = line.split(" - ", 1)[1].split()[1]
                if source.startswith("/dev/") and os.path.exists(source) and stat.S_ISBLK(os.stat(source).st_mode):
                    return source
    return None


@needs_fio
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
@pytest.mark.skipif(_root_block_device() is None, reason="/ is not mounted from a block device here")
def test_7_destructive_bench_of_the_root_disk_says_it_holds_root(cli, tmp_path):
    """Before: "cannot open /dev/vda exclusively ... (Operation not permitted)" when the kernel's exclusive open
    failed with anything but EBUSY (a sandbox refuses O_EXCL); our own reason, named first, is the one people
    understand and the README promises."""
    dev = _root_block_device()
    res = cli("bench", str(dev), "--destructive", "--yes", "--db", str(tmp_path / "s.db"))
    assert res.code == 2, res.err
    assert "holds the root file system (/)" in res.err, res.err
    assert res.err.count("\n") == 1
