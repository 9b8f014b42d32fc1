"""What a newcomer's review found in the output (reports/review-newcomer.md): `runs` cut summaries mid-word,
the ± 95% column's "—" went unexplained, `check` on a virtual disk said nothing about health, `compare` of runs
measured differently gave no warning, the HTML report had no max µs column, and `links` did not flag the
slot limit `list` reported for the same drive."""

from __future__ import annotations

import copy
import glob
import os
import re

import pytest
from conftest import SYSFS, loop_device, needs_fio, needs_loop
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
    monkeypatch.setenv("COLUMNS", "250")  # one line per run: the cell is what the cut left
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
    assert len(cell) <= 71
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


@needs_loop
@needs_fio
def test_check_on_a_virtual_disk_says_health_was_not_read_and_why(cli):
    """A loop device over /dev/shm: no SMART, and check says so in text and in --json (an added field)."""
    with loop_device(128, fill=True) as dev:
        name = os.path.basename(dev)
        doc = cli("check", dev, "--time", "1", "--no-save", "--json").json()
        text = cli("check", dev, "--time", "1", "--no-save").out
    assert doc["schema"] == "disksleuth/1"
    assert doc["health"]["not_read_reason"] == f"no SMART on a virtual disk ({name} is a loop device)"
    assert doc["health"]["before"] is None  # the existing fields stay
    (line,) = [line for line in text.splitlines() if line.strip().startswith("health:")]
    assert line.strip() == f"health: not read: no SMART on a virtual disk ({name} is a loop device)"


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


def _list_slot_limited(cli, tree: str) -> dict[str, dict]:
    """{endpoint BDF: list's slot_limited finding} for each block device of a tree."""
    out = {}
    for dev in cli("list", "--json", "--sysfs-root", tree).json()["devices"]:
        hops = [h for h in (dev.get("link") or {}).get("hops") or [] if h.get("kind") == "pcie"]
        for f in dev.get("findings") or []:
            if f["code"] == "slot_limited" and hops:
                out[hops[0]["name"]] = f
    return out


def test_links_flags_the_slot_limit_list_reports_on_the_switch_tree(cli):
    """pcie_switch_middle: a PCIe 4.0 x4 drive whose own link runs at 4.0 x4, behind a switch whose uplink
    is 3.0 x1. By DESIGN.md, slot_limited is "the device supports more than the path to the CPU can carry:
    its port, or a switch or bridge further up": list is right, and links must say it too."""
    tree = os.path.join(SYSFS, "pcie_switch_middle")
    human = cli("links", "--sysfs-root", tree).out
    row = next(line for line in human.splitlines() if line.startswith("0000:04:00.0"))
    assert "slot-limited" in row, human  # the old links flagged nothing here
    assert "switch upstream port 0000:02:00.0 offers only PCIe 3.0 x1" in human
    fns = {f["bdf"]: f for f in cli("links", "--json", "--sysfs-root", tree).json()["functions"]}
    drive = fns["0000:04:00.0"]
    assert drive["slot_limited"] is True and drive["downgraded"] is False
    listed = _list_slot_limited(cli, tree)["0000:04:00.0"]
    (finding,) = drive["findings"]
    assert finding["code"] == "slot_limited"
    assert finding["message"] == listed["message"] and finding["evidence"] == listed["evidence"]
    assert finding["evidence"]["path_capable"] == "PCIe 3.0 x1"
    assert all(f["slot_limited"] is False for bdf, f in fns.items() if bdf != "0000:04:00.0")


@pytest.mark.parametrize(
    "tree", sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(SYSFS, "*", "sys")))
)
def test_links_and_list_agree_on_slot_limited_in_every_tree(cli, tree):
    root = os.path.join(SYSFS, tree)
    listed = _list_slot_limited(cli, root)
    doc = cli("links", "--json", "--sysfs-root", root).json()
    flagged = {f["bdf"]: f["findings"][0] for f in doc["functions"] if f["slot_limited"]}
    assert flagged.keys() == listed.keys(), tree
    for bdf, finding in flagged.items():
        assert finding["message"] == listed[bdf]["message"]
