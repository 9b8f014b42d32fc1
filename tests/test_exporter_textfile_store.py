"""exporter --textfile with a store it cannot read: the summary and the --json document say so, not only a bare
"0 stored benchmark figures" (issue 20 §3; the stderr warning and store_up 0 are in test_exporter_bounds.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import metric_value

CLI = [sys.executable, "-m", "disksleuth"]
TREE = os.path.join(os.path.dirname(__file__), "data", "sysfs", "scenario_badly_seated")


def _textfile(tmp_path, store, *extra: str) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    argv = [*CLI, "exporter", "--textfile", str(out), "--sysfs-root", TREE, "--no-health", "--db", str(store)]
    return subprocess.run([*argv, *extra], capture_output=True, text=True, timeout=60)


def test_corrupt_store_is_said_in_the_summary_and_the_document(tmp_path):
    store = tmp_path / "corrupt.sqlite"
    store.write_bytes(b"SQLite format 3\0" + os.urandom(8192))
    res = _textfile(tmp_path, store)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("0 stored benchmark figures (the results store could not be read)")
    assert "warning: benchmark figures left out" in res.stderr
    doc = json.loads(_textfile(tmp_path, store, "--json").stdout)["exporter"]
    assert doc["store_up"] is False and "not a disksleuth results store" in doc["store_error"]
    assert metric_value((tmp_path / "out" / "disksleuth.prom").read_text(), "disksleuth_store_up") == 0


def test_a_store_not_made_yet_is_no_alarm(tmp_path):
    res = _textfile(tmp_path, tmp_path / "none.sqlite")
    assert res.returncode == 0 and res.stderr == "" and "could not be read" not in res.stdout
    doc = json.loads(_textfile(tmp_path, tmp_path / "none.sqlite", "--json").stdout)["exporter"]
    assert doc["store_up"] is False and doc["store_error"]  # the gauge says 0 for it too


def test_a_long_summary_off_a_terminal_is_one_line(tmp_path):
    """Off a terminal a sentence is not wrapped: a long output path once split the summary over two lines."""
    deep = tmp_path / ("d" * 200)
    deep.mkdir()
    res = _textfile(deep, tmp_path / "none.sqlite")
    assert res.returncode == 0, res.stderr
    (line,) = res.stdout.splitlines()
    assert line.startswith(f"wrote {deep}/out/disksleuth.prom: ") and line.endswith("stored benchmark figures")
