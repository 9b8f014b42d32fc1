"""A closed terminal (SIGHUP) ends a run the way Ctrl-C and SIGTERM do: scratch removed, fio stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import needs_fio

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _fio_children(pid: int, wait_s: float = 20.0) -> list[str]:
    """fio, once it runs as our child (between two tests, for a moment, there is none)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(pid), "fio"], capture_output=True, text=True).stdout.split()
        if found:
            return found
        time.sleep(0.05)
    return []


@needs_fio
def test_sighup_during_bench_removes_scratch_and_exits_129(tmp_path):
    proc = subprocess.Popen(
        [*DISKSLEUTH, "bench", str(tmp_path), "--profile", "standard", "--size", "64M"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The first fio child may be the version check, before the scratch directory exists: wait for both.
        deadline = time.monotonic() + 30
        fios: list[str] = []
        while time.monotonic() < deadline and not (fios and os.listdir(tmp_path)):
            fios = _fio_children(proc.pid, wait_s=1.0)
        assert fios, "fio should be running mid-run"
        assert os.listdir(tmp_path), "the scratch directory should exist mid-run"
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGHUP, err
    assert "hung up" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == [], "the scratch file was left behind"
    assert [pid for pid in fios if os.path.exists(f"/proc/{pid}")] == []
