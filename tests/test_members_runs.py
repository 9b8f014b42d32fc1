"""Member runs are stored like other runs (issue 24): `bench --members` on real loop devices saves its members'
figures and findings, and `runs`, `show`, `export`/`import` and `report` give them back; `check` on an array keeps
its stack, members and expectation in the stored device, and `show` puts them back where `check --json` had them."""

from __future__ import annotations

import json

import pytest
from conftest import DATA, loop_device, needs_fio, needs_loop
from test_json_schema import assert_valid, is_valid

MEMBER_ARGS = ("--time", "1")


@pytest.mark.slow  # ~10 s on two shared cores: two members read alone, then together, then six commands
@needs_loop
@needs_fio
def test_bench_members_is_saved_and_shown_exported_and_reported(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/store.sqlite"
    with loop_device(64) as a, loop_device(64) as b:
        res = cli("bench", "--members", a, b, *MEMBER_ARGS, "--json", "--db", db)
        assert res.code in (0, 1), res.err
        doc = res.json()
        assert_valid(doc, "members")
        assert doc["store"]["saved"] is True and doc["run"]["kind"] == "members"
        run_id = str(doc["run"]["id"])
        names = [m["name"] for m in doc["members"]]

        (row,) = cli("runs", "--json", "--db", db).json()["runs"]
        assert row["kind"] == "members" and row["device"] == ",".join(names)
        assert row["target"] == f"{a} {b}"

        shown = cli("show", run_id, "--json", "--db", db).json()
        assert is_valid(shown)
        assert shown["members"] == doc["members"] and shown["device"]["members"] == doc["members"]
        assert [f["code"] for f in shown["findings"]] == [f["code"] for f in doc["findings"]]
        assert shown["baseline"] is None  # no drive's figure to hold against earlier runs
        text = cli("show", run_id, "--db", db).out
        assert "Members, read-only sequential reads" in text and a in text and b in text

        exported = tmp_path / "export.json"
        assert cli("export", run_id, "-o", str(exported), "--db", db).code == 0
        other = f"sqlite:///{tmp_path}/other.sqlite"
        assert cli("import", str(exported), "--db", other).code == 0
        assert cli("show", "--json", "--db", other).json()["members"] == doc["members"]

        report = tmp_path / "report.html"
        assert cli("report", run_id, "-o", str(report), "--db", db).code == 0
        html = report.read_text()
        assert "Members, read-only sequential reads" in html and f"{a}  alone " in html


@pytest.mark.long
@needs_loop
@needs_fio
def test_bench_members_no_save_stores_nothing(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/store.sqlite"
    with loop_device(64) as a, loop_device(64) as b:
        res = cli("bench", "--members", a, b, *MEMBER_ARGS, "--json", "--no-save", "--db", db)
    assert res.code in (0, 1), res.err
    assert "store" not in res.json() and res.json()["run"].get("id") is None


def test_a_stored_array_check_gives_back_its_stack_and_members(cli, tmp_path):
    """check on an array (md cannot be built on this kernel): its document as check --json writes it, with the
    stack, members and expectation in the device (cli/measure), saved in a real SQLite store and shown back."""
    with open(f"{DATA}/store/standard-budget-ram-loop.json") as fh:
        doc = json.load(fh)
    doc["run"].pop("id", None)
    with open(f"{DATA}/store/members-loops-export.json") as fh:
        members = json.load(fh)["runs"][0]["members"]
    stack = cli("list", "--json", "--sysfs-root", f"{DATA}/sysfs/array_raid1_failing_member").json()["arrays"][0]
    stack.pop("findings")
    expectation = {"level": "raid1", "members": 2, "data_members": 1.0, "member_typical_mbps": 100.0,
                   "expected_mbps": 100.0, "slowest_bound_mbps": 90.0, "measured_mbps": 80.0, "words": "w"}  # fmt: skip
    doc["device"] |= {"stack": stack, "members": members, "array_expectation": expectation}
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": [doc]}))
    db = f"sqlite:///{tmp_path}/store.sqlite"
    assert cli("import", str(path), "--db", db).code == 0
    shown = cli("show", "--json", "--db", db).json()
    assert shown["stack"] == stack and shown["members"] == members and shown["array_expectation"] == expectation
    text = cli("show", "--db", db).out
    assert "SMART CRITICAL" in text and "Members, read-only sequential reads" in text
