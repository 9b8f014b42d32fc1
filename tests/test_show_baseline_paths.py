"""`show RUN --baseline` says what changed on the path between the run and its baseline, and whether that
explains the figures, in the words `compare` uses (issues 23 and 28).

Real runs: fio on a RAM-backed loop device throttled with cgroup v1 blkio, saved in a real SQLite store. The
x1 → x4 pair is the seed's story, measured as test_compare_paths measures it (the real run given the device
and link chain of a real-layout sysfs tree); the throttled runs are stored as `check` stores them.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest
from conftest import DATA, blkio_throttle, have_blkio, in_cgroup, loop_device, needs_fio, needs_loop
from test_compare_paths import DISKSLEUTH, SEQ, Measured, compare_pair, on_tree
from test_json_schema import assert_valid

from disksleuth.analysis.pathdiff import EXPLAIN_HEADING, LOOK_ELSEWHERE
from disksleuth.store.db import Store

X1_TO_X4 = os.path.join(DATA, "store", "x1-to-x4-export.json")


def _explanation(comparison: dict, test_id: str) -> dict:
    return next(e for e in comparison["explanations"] if e["test"] == test_id)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_show_without_a_baseline_has_no_comparison(cli, tmp_path) -> None:  # noqa: ANN001
    db = f"sqlite:///{tmp_path}/one.sqlite"
    assert cli("import", X1_TO_X4, "--db", db).code == 0
    res = cli("show", "1", "--db", db, "--json")
    assert res.code == 0, res.err
    doc = res.json()
    assert_valid(doc, "stored_run_document")
    assert doc["baseline"]["status"] == "no_history" and doc["comparison"] is None
    assert "What changed on the path" not in cli("show", "1", "--db", db).out


def test_show_baseline_says_what_compare_says_of_the_same_pair(cli, tmp_path) -> None:  # noqa: ANN001
    """The seed's x1 chipset slot (run 1) and x4 after the BIOS change (run 2), real runs kept in
    tests/data/store: show 2 --baseline 1 gives compare 1 2's path changes and explanation, word for word."""
    db = f"sqlite:///{tmp_path}/pair.sqlite"
    assert cli("import", X1_TO_X4, "--db", db).code == 0
    shown = cli("show", "2", "--baseline", "1", "--db", db, "--json")
    assert shown.code == 0, shown.err
    doc = shown.json()
    assert_valid(doc, "stored_run_document")
    assert doc["baseline"]["verdict"] == "faster"
    c = doc["comparison"]
    assert (c["run"], c["baseline"]) == (2, 1)
    link = [x for x in c["path_changes"] if x["area"] == "link"]
    assert [(x["before"], x["after"]) for x in link] == [("PCIe 2.0 x1 (~450 MB/s)", "PCIe 2.0 x4 (~1,800 MB/s)")]
    seq = _explanation(c, SEQ)
    assert (seq["verdict"], seq["explained"], seq["change"]) == ("link", True, "faster")
    assert "the link no longer limits it: the chipset uplink and the drive come next" in seq["text"]

    compared = cli("compare", "1", "2", "--db", db, "--json").json()["comparison"]
    assert c["path_changes"] == compared["path_changes"]
    assert seq["text"] == _explanation(compared, SEQ)["text"]

    text = cli("show", "2", "--baseline", "1", "--db", db)
    assert text.code == 0, text.err
    flat = _flat(text.out)
    assert "What changed on the path from run #1 to #2:" in flat
    assert "link PCIe 0000:03:00.0: PCIe 2.0 x1 (~450 MB/s) → PCIe 2.0 x4 (~1,800 MB/s)" in flat
    assert EXPLAIN_HEADING in flat and _flat(seq["text"]) in flat


def test_a_baseline_of_another_drive_names_the_drive(cli, tmp_path) -> None:  # noqa: ANN001
    """--baseline RUN of another drive: the drive's change is on the path and explains the figure."""
    db = f"sqlite:///{tmp_path}/swap.sqlite"
    with open(X1_TO_X4) as fh:
        runs = json.load(fh)["runs"]
    with Store(db) as store:
        for i, doc in enumerate(runs):
            doc["run"].pop("id", None)
            doc["run"]["uuid"] = str(uuid.uuid4())
            for key in ("serial_id", "serial_sha256"):
                doc["device"].pop(key, None)
            doc["device"]["serial"] = f"S4EVNX0R{i}00000"  # two drives, one name: Store.save keys the serial
            store.save(doc)
    c = cli("show", "2", "--baseline", "1", "--db", db, "--json").json()["comparison"]
    assert "drive" in {x["what"] for x in c["path_changes"]}
    assert not any("S4EVNX0R" in json.dumps(x) for x in c["path_changes"])  # the serial never appears


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.long  # four checks one after another (a baseline needs its runs in turn): 35-58 s loaded
@needs_fio
@needs_loop
def test_a_slower_run_under_a_tighter_limit_names_the_limit(cli) -> None:  # noqa: ANN001
    """Three check runs at 200 MB/s, then one at 100 MB/s on the same loop device: show --baseline median:3
    says slower than usual, and that the cgroup I/O limit the run was under changed and explains it (issue 36:
    before, "nothing on its path changed", with "a cgroup I/O limit" among the things to look for)."""
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    with loop_device(256, fill=True) as dev:
        for read_mbps in (200, 200, 200, 100):
            with blkio_throttle(dev, read_bps=read_mbps * 1_000_000, read_iops=10_000) as procs:
                argv = in_cgroup(procs, [*DISKSLEUTH, "check", dev, "--engine", "libaio", "--json"])
                res = subprocess.run(argv, capture_output=True, text=True, timeout=300)
            assert res.returncode in (0, 1), res.stderr
    shown = cli("show", "4", "--baseline", "median:3", "--json")
    assert shown.code == 0, shown.err
    doc = shown.json()
    assert doc["baseline"]["verdict"] == "slower", doc["baseline"]
    c = doc["comparison"]
    # The read IOPS limit is the same 10,000 in each run's own group: no change. The bandwidth limit halved.
    changes = [(x["what"], x["hop"], x["before_mbps"], x["after_mbps"]) for x in c["path_changes"]]
    name = os.path.basename(doc["device"]["path"])
    assert c["baseline"] == 3 and changes == [("I/O limit", f"read_bps on {name}", 200.0, 100.0)], c["path_changes"]
    seq = _explanation(c, "SEQ1M_Q8T1_read")
    assert (seq["verdict"], seq["explained"], seq["change"]) == ("link", True, "slower")
    assert seq["text"].startswith("SEQ1M_Q8T1_read fell to 0.") and "explains the fall" in seq["text"]
    assert LOOK_ELSEWHERE not in seq["text"]
    text = _flat(cli("show", "4", "--baseline", "median:3").out)
    assert "What changed on the path" in text and f"I/O limit read_bps on {name}: 200 MB/s" in text
    assert EXPLAIN_HEADING in text and _flat(seq["text"]) in text


@pytest.mark.root
@pytest.mark.slow
@needs_fio
@needs_loop
def test_make_the_x1_to_x4_pair(tmp_path, cli) -> None:  # noqa: ANN001
    """Regenerates tests/data/store/x1-to-x4-export.json from two real runs when DISKSLEUTH_REGEN_STORE=1."""
    if os.environ.get("DISKSLEUTH_REGEN_STORE") != "1":
        pytest.skip("set DISKSLEUTH_REGEN_STORE=1 to measure the pair again")
    if have_blkio():
        pytest.skip(have_blkio() or "")
    with loop_device(512, fill=True) as dev:
        measured = Measured(dev)
        before = on_tree(measured.at(380), "scenario_x1_chipset_slot", "nvme0n1")
        after = on_tree(measured.at(1243), "scenario_x4_after_bios", "nvme0n1")
    compare_pair(cli, tmp_path, before, after)
    res = cli("export", "1", "2", "-o", X1_TO_X4, "--db", f"sqlite:///{tmp_path}/pair.sqlite")
    assert res.code == 0, res.err
