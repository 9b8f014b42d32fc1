"""A target directory renamed while a run uses it: the run's private scratch directory is still removed
(it is made, opened and removed through an open descriptor of the target directory, not its path)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

import pytest
from conftest import needs_fio

from disksleuth.probe.target import SCRATCH_PREFIX

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
APPEAR_TIMEOUT_S = 60
RUN_TIMEOUT_S = 300


@pytest.mark.slow
@needs_fio
def test_renaming_the_target_directory_mid_run_leaves_nothing(tmp_path) -> None:  # noqa: ANN001
    target, renamed = tmp_path / "target", tmp_path / "renamed"
    target.mkdir()
    proc = subprocess.Popen(
        [*DISKSLEUTH, "bench", str(target), "--profile", "quick", "--size", "16M", "--time", "1", "--no-save"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + APPEAR_TIMEOUT_S
        while not glob.glob(str(target / f"{SCRATCH_PREFIX}*")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run made no scratch directory"
            time.sleep(0.02)
        os.rename(target, renamed)
        _out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # The exit status is not judged here: `bench` looks the target up again by its old path after the
    # measurements (cli.cmd_bench -> inspect_target) and says it is gone.
    assert "internal error" not in err, err
    assert os.listdir(renamed) == [], f"left behind in the renamed directory: {os.listdir(renamed)}"
    assert not os.path.exists(target)
