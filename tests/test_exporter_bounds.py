"""`disksleuth exporter --textfile` on a real full file system (a small tmpfs, unmounted in `finally`)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import pytest
from conftest import SYSFS

BADLY_SEATED = os.path.join(SYSFS, "scenario_badly_seated")
CLI = [sys.executable, "-m", "disksleuth"]


# --- a full file system ---------------------------------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_textfile_on_a_full_file_system_says_so(tmp_path) -> None:
    """A 64 KiB tmpfs, filled: before, "internal error: OSError: [Errno 28] ... please report it". Now one
    line that says the file system is full, exit 2, the previous textfile untouched, no temp file left."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "exporter-test-full", str(mnt)], check=True)
    try:
        previous = mnt / "disksleuth.prom"
        previous.write_text("# the previous scrape's file\n")
        with contextlib.suppress(OSError), open(mnt / "filler", "wb", buffering=0) as fh:
            for _ in range(64):  # 64 x 4 KiB: more than the file system holds, so this ends in ENOSPC
                fh.write(b"\0" * 4096)
        res = subprocess.run(
            [*CLI, "exporter", "--textfile", str(mnt), "--sysfs-root", BADLY_SEATED, "--no-bench", "--no-health"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 2, res.stdout + res.stderr
        assert res.stderr.count("\n") == 1 and "the file system is full" in res.stderr, res.stderr
        assert "internal error" not in res.stderr and "Traceback" not in res.stderr
        assert previous.read_text() == "# the previous scrape's file\n"
        assert sorted(os.listdir(mnt)) == ["disksleuth.prom", "filler"]
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
