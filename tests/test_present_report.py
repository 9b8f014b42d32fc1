"""The HTML report's tables (`disksleuth report`), and what it leaves on stderr when stored text carries
escapes."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import sample_export
from test_store import _doc

from disksleuth.store.db import Store

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def test_report_tables_have_the_max_latency_column(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    doc = _doc(373.0, 2000.0, "X")
    doc["tests"][0]["lat_max_us"] = 18156.4
    with Store(db) as store:
        run_id = store.save(doc)
    path = tmp_path / "report.html"
    assert cli("report", str(run_id), "-o", str(path), "--db", db).code == 0
    html = path.read_text()
    header = re.search(r"<tr><th>test</th>.*?</tr>", html).group()
    heads = re.findall(r"<th>(.*?)</th>", header)
    assert heads[heads.index("p99.9 µs") + 1] == "max µs"
    row = re.search(r"<tr><td>SEQ1M_Q8T1_read</td>.*?</tr>", html).group()
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert cells[heads.index("max µs")] == "18,156"  # whole µs, as the terminal table shows it


@pytest.mark.slow
def test_report_with_escapes_in_stored_text_keeps_stderr_clean(tmp_path) -> None:
    """Test ids and host names with ESC/OSC/BEL: matplotlib warned `Glyph 27 (ESC) missing` with the raw
    character, plus the source line of our savefig call, on stderr. Run as a process: pytest would
    otherwise collect the warnings itself. A glyph no font has (private use) still makes a warning:
    one note line, through safe_text."""
    evil = "\x1b]0;PWN\x07\x1b[2J\u009b31m"

    def mutate(doc: dict) -> None:
        doc["run"]["host"]["hostname"] = "host" + evil
        doc["run"]["target"] = "/t" + evil
        for test in doc["tests"]:
            test["id"] += evil + "\ue000"

    db = f"sqlite:///{tmp_path}/s.sqlite"
    env = {**os.environ, "NO_COLOR": "1"}
    imported = subprocess.run([*DISKSLEUTH, "import", sample_export(tmp_path, mutate), "--db", db], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    res = subprocess.run([*DISKSLEUTH, "report", "1", "-o", str(tmp_path / "r.html"), "--db", db], env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    for char in "\x1b\x07\x9b":
        assert char not in res.stderr, repr(res.stderr)
    # matplotlib's one-off notice on a machine where it has never run (its logging, not a warning)
    lines = [line for line in res.stderr.splitlines() if not line.startswith("Matplotlib is building the font cache")]
    assert all(line.startswith("disksleuth: note: ") for line in lines), lines
    assert any("Glyph 57344" in line for line in lines), lines  # the private-use glyph: one note
    assert len(lines) == len(set(lines)) and "savefig" not in res.stderr
    charts = re.findall(r"<svg.*?</svg>", (tmp_path / "r.html").read_text(), re.S)
    assert charts and not any("\x1b" in svg or "\x07" in svg for svg in charts)
    assert any("\\x1b]0;PWN\\x07" in svg for svg in charts)  # shown as text, as the terminal views show it
