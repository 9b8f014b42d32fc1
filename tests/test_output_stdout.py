"""-o - is standard output for export, report and capture (issue 20: `export 1 -o -` wrote a file named "-").
Real subprocesses, so stdout is a real pipe (or a real terminal), as in `export 1 -o - | ssh host import`."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import tarfile

import pytest
from conftest import sample_export

CLI = [sys.executable, "-m", "disksleuth"]
SYSFS = os.path.join(os.path.dirname(__file__), "data", "sysfs", "nvme_multipath")


@pytest.fixture
def store(tmp_path) -> str:
    db = str(tmp_path / "s.sqlite")
    subprocess.run([*CLI, "import", sample_export(tmp_path), "--db", db], check=True, capture_output=True)
    return db


def _run(tmp_path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *argv], capture_output=True, cwd=tmp_path, timeout=120)


def test_export_to_stdout_is_the_export_and_nothing_else(tmp_path, store):
    before = set(os.listdir(tmp_path))
    res = _run(tmp_path, "export", "1", "-o", "-", "--db", store)
    assert res.returncode == 0, res.stderr
    bundle = json.loads(res.stdout)  # only the export on stdout: the summary went to stderr
    assert bundle["kind"] == "export" and len(bundle["runs"]) == 1
    assert res.stderr.decode().strip() == "disksleuth: exported 1 run(s) to standard output (serial numbers hashed)"
    assert set(os.listdir(tmp_path)) == before, "a file named '-' was written"
    # --json: still one document, the export itself.
    as_json = _run(tmp_path, "export", "1", "-o", "-", "--json", "--db", store)
    assert json.loads(as_json.stdout)["kind"] == "export"
    # And it is what import reads back.
    piped = tmp_path / "piped.json"
    piped.write_bytes(res.stdout)
    again = _run(tmp_path, "import", str(piped), "--db", str(tmp_path / "other.sqlite"))
    assert again.returncode == 0 and b"imported 1 run" in again.stdout


def test_a_file_named_dash_is_still_reachable_as_dot_slash(tmp_path, store):
    res = _run(tmp_path, "export", "1", "-o", "./-", "--db", store)
    assert res.returncode == 0 and (tmp_path / "-").is_file()


def test_report_to_stdout(tmp_path, store):
    res = _run(tmp_path, "report", "1", "-o", "-", "--db", store)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(b"<!DOCTYPE html>") and res.stdout.rstrip().endswith(b"</html>")
    assert b"wrote standard output" in res.stderr and not (tmp_path / "-").exists()


def test_capture_to_stdout_is_a_readable_bundle(tmp_path):
    res = _run(tmp_path, "capture", "-o", "-", "--sysfs-root", SYSFS)
    assert res.returncode == 0, res.stderr
    with tarfile.open(fileobj=io.BytesIO(res.stdout), mode="r:gz") as tar:
        names = tar.getnames()
    assert "disksleuth-capture.json" in names and any(n.startswith("sys/block") for n in names)
    assert not (tmp_path / "-").exists()


def test_capture_to_a_terminal_is_refused(tmp_path):
    master, slave = pty.openpty()
    try:
        res = subprocess.run(
            [*CLI, "capture", "-o", "-", "--sysfs-root", SYSFS],
            stdout=slave,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            timeout=60,
            env={**os.environ, "TERM": "xterm"},
        )
    finally:
        os.close(slave)
        os.close(master)
    assert res.returncode == 2
    assert b"not writing a gzip archive to a terminal" in res.stderr
