"""fio 3.33 died of SIGSEGV twice in a day of this project's runs, and one crash lost a whole standard run
(`disksleuth: fio was killed by signal 11`). A test whose fio crashes runs once more and says so; a crash's
figures are never used. The crash is injected by a wrapper in front of the real fio: its first timed test job kills
itself with SIGSEGV, every other call is the real fio."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import needs_fio

WRAPPER = """#!/bin/sh
case "$*" in
  *--time_based*)
    if mkdir "{marker}" 2>/dev/null; then kill -SEGV $$; fi ;;
esac
exec {fio} "$@"
"""


@pytest.mark.slow
@needs_fio
def test_a_test_whose_fio_crashes_runs_again_and_says_so(tmp_path) -> None:  # noqa: ANN001
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "fio"
    wrapper.write_text(WRAPPER.format(marker=tmp_path / "crashed-once", fio=shutil.which("fio")))
    wrapper.chmod(0o755)
    target = f"/dev/shm/disksleuth-crash-{os.getpid()}"
    os.mkdir(target)
    try:
        res = subprocess.run(
            [sys.executable, "-m", "disksleuth", "bench", target, "--profile", "mixed", "--time", "1",
             "--size", "16M", "--no-save", "--json"],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        )  # fmt: skip
    finally:
        shutil.rmtree(target, ignore_errors=True)
    assert (tmp_path / "crashed-once").is_dir()  # the first test job did crash
    assert res.returncode in (0, 1), res.stderr  # before: 2, "fio was killed by signal 11 (SIGSEGV)"
    (test,) = json.loads(res.stdout)["tests"]
    assert test["read_mbps"] > 0 and any("crashed (SIGSEGV)" in n for n in test["notes"]), test["notes"]
