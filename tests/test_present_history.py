"""The history views: `runs` cuts a long summary at a word, `show`'s ± 95% column says what its "—" means,
and `compare` warns when runs were measured differently and never passes escapes into Markdown or CSV."""

from __future__ import annotations

import copy
import re

import pytest
from conftest import sample_export
from test_store import _doc

from disksleuth.store.db import Store

# A summary as check writes it, long enough to be cut in the `runs` table.
SUMMARY = "reads 1,243.5 MB/s, 69% of its PCIe 2.0 x4 link (1,800 MB/s); 4K random 1,234,567 read IOPS"


def _summary_cell(out: str, run_id: int) -> str:
    row = next(line for line in out.splitlines() if re.match(rf"\s*{run_id}\s", line))
    return row[row.index("reads") :]


@pytest.mark.parametrize("pad", range(0, 14))
def test_runs_cuts_the_summary_at_a_word_with_an_ellipsis_never_inside_a_figure(cli, tmp_path, monkeypatch, pad):
    """Shifting the summary by 0..13 characters puts the cut inside "1,243.5", "(1,800", "1,234,567" and words."""
    monkeypatch.setenv("COLUMNS", "150")  # one line per run, the summary cell cut: the cell is what the cut left
    db = f"sqlite:///{tmp_path}/r.sqlite"
    doc = _doc(1243.5, 1234567.0, "Samsung SSD 970 EVO Plus")
    doc["summary"] = "x" * pad + " " + SUMMARY if pad else SUMMARY
    with Store(db) as store:
        run_id = store.save(doc)
    out = cli("runs", "--db", db).out
    row = next(line for line in out.splitlines() if re.match(rf"\s*{run_id}\s", line))
    cell = row[row.index("x" * pad + " reads" if pad else "reads") :]
    assert cell.endswith("…"), cell
    kept = cell[:-1].split()
    full = doc["summary"].split()
    n = len(kept)
    assert kept[:-1] == full[: n - 1] and kept[-1] == full[n - 1].rstrip(",;:("), (cell, "cut inside a word")
    assert not re.search(r"\d[\d,.]*%?[,;:)]*$", kept[-1]), (cell, "a figure left without what it counts")
    assert len(row) <= 150
    assert "show ID" in out  # where the whole summary is
    assert cli("runs", "--db", db, "--json").json()["runs"][0]["summary"] == doc["summary"]


def test_runs_keeps_a_short_summary_whole(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    db = f"sqlite:///{tmp_path}/r.sqlite"
    doc = _doc(373.0, 2000.0, "X")
    doc["summary"] = "reads 373 MB/s, 83% of its PCIe 2.0 x1 link (450 MB/s)"
    with Store(db) as store:
        run_id = store.save(doc)
    out = cli("runs", "--db", db).out
    assert _summary_cell(out, run_id) == doc["summary"]
    assert "…" not in out


def _show(cli, tmp_path, ci: list[float | None]) -> str:
    db = f"sqlite:///{tmp_path}/r.sqlite"
    doc = _doc(373.0, 2000.0, "X")
    for t, c in zip(doc["tests"], ci, strict=True):
        t["ci95_pct"] = c
    with Store(db) as store:
        run_id = store.save(doc)
    return cli("show", str(run_id), "--db", db).out


def test_ci_column_legend_says_what_a_dash_means(cli, tmp_path, monkeypatch):
    """check --time 1: every test too short for an interval, the column all "—", and the legend says why."""
    monkeypatch.setenv("COLUMNS", "200")
    out = _show(cli, tmp_path, [None, None])
    legend = [line for line in out.splitlines() if line.startswith("± 95%")]
    assert legend and "—" in legend[0] and "too few samples" in legend[0], out


def test_ci_column_legend_explains_both_an_interval_and_a_dash(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = _show(cli, tmp_path, [2.5, None])
    (legend,) = [line for line in out.splitlines() if line.startswith("± 95%")]
    assert "half-width of the 95% confidence interval" in legend
    assert "—: too few samples" in legend


def test_ci_column_legend_has_no_dash_part_when_every_test_has_an_interval(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = _show(cli, tmp_path, [2.5, 1.0])
    (legend,) = [line for line in out.splitlines() if line.startswith("± 95%")]
    assert "—" not in legend


def _standard_doc() -> dict:
    """A standard-profile run, adaptive to ±2%, on a 1.1 GB file, with 4 tests."""
    doc = _doc(1243.0, 624000.0, "Samsung SSD 970 EVO Plus", started="2026-11-21T11:00:00+0000")
    doc["run"]["profile"] = "standard"
    doc["run"]["size_bytes"] = 1_073_741_824
    extra = copy.deepcopy(doc["tests"])
    for t in extra:
        t["id"] = t["id"].replace("_read", "_write")
        t["rw"] = "write" if t["rw"] == "read" else "randwrite"
        t["write_mbps"], t["write_iops"], t["read_mbps"], t["read_iops"] = t["read_mbps"], t["read_iops"], None, None
    doc["tests"] += extra
    for t in doc["tests"]:
        t["precision_target_pct"] = 2.0
        t["runtime_s"] = 7.3
    return doc


def _quick_doc(read_mbps: float = 373.0, started: str = "2026-11-21T10:00:00+0000") -> dict:
    doc = _doc(read_mbps, 2000.0, "Samsung SSD 970 EVO Plus", started=started)
    for t in doc["tests"]:
        t["runtime_s"] = 1.01  # --time 1
    return doc


def test_compare_warns_when_runs_were_measured_differently(cli, tmp_path, monkeypatch):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        quick = store.save(_quick_doc())
        standard = store.save(_standard_doc())
    monkeypatch.setenv("COLUMNS", "200")
    out = cli("compare", str(quick), str(standard), "--db", db).out
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, out
    line = warnings[0]
    assert "profile quick vs standard" in line
    assert "length fixed 1 s vs until ±2%" in line
    assert "size 268.4 MB vs 1.1 GB" in line
    assert "tests 2 vs 4" in line
    doc = cli("compare", str(quick), str(standard), "--db", db, "--json").json()
    diffs = {d["what"]: d["values"] for d in doc["comparison"]["differences"]}
    assert diffs["profile"] == ["quick", "standard"]
    assert diffs["length"] == ["fixed 1 s", "until ±2%"]
    assert doc["comparison"]["warning"] == line.removeprefix("warning: ")
    assert "rows" in doc["comparison"] and doc["schema"] == "disksleuth/1"  # the old fields stay
    assert "measured differently" in cli("compare", str(quick), str(standard), "--db", db, "--format", "markdown").out


def test_compare_of_runs_measured_alike_has_no_warning(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        a = store.save(_quick_doc())
        b = store.save(_quick_doc(1243.0, started="2026-11-21T12:00:00+0000"))
    assert "warning" not in cli("compare", str(a), str(b), "--db", db).out
    doc = cli("compare", str(a), str(b), "--db", db, "--json").json()["comparison"]
    assert doc["differences"] == [] and doc["warning"] is None


def test_compare_names_tests_only_one_run_has(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    other = _quick_doc()
    other["tests"][1]["id"] = "RND4K_Q1T1_read"
    with Store(db) as store:
        a = store.save(_quick_doc())
        b = store.save(other)
    doc = cli("compare", str(a), str(b), "--db", db, "--json").json()["comparison"]
    assert {d["what"]: d["values"] for d in doc["differences"]} == {"tests": ["RND4K_Q32T1_read", "RND4K_Q1T1_read"]}


def test_compare_markdown_and_csv_never_carry_escapes(cli, tmp_path) -> None:
    """Labels and test ids come from stored (importable) runs: raw ESC/OSC/CR reached the terminal, and a
    newline broke the Markdown table."""
    evil = "\x1b]0;PWN\x07\x1b[2J\r\n|x"

    def mutate(doc: dict) -> None:
        doc["run"]["host"]["hostname"] = "host" + evil
        doc["run"]["target"] = "/t" + evil
        doc["tests"][0]["id"] = "SEQ" + evil

    db = f"sqlite:///{tmp_path}/c.sqlite"
    assert cli("import", sample_export(tmp_path, mutate), "--db", db).code == 0
    for fmt in ("markdown", "csv"):
        res = cli("compare", "1", "1", "--format", fmt, "--db", db)
        assert res.code == 0, res.err
        text = res.out.replace("\r\n", "\n")  # CSV's own line ending (RFC 4180) is fine; a bare CR is not
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text, fmt
        if fmt == "markdown":
            rows = [line for line in res.out.splitlines() if line.startswith("|") and not line.startswith("|---")]
            assert len({line.count(" | ") for line in rows}) == 1, rows  # every row has the same cells
