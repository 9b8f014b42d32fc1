"""`compare` never contradicts itself: one judgement per test and direction (MB/s and IOPS are one
measurement), one unit in the change column, no "-0%"; and a reference with no test in common is an error."""

from __future__ import annotations

import pytest

from disksleuth.store.db import Store


def _doc(target: str, tests: list[dict]) -> dict:
    run = {"started_at": "2026-11-21T10:00:00+0000", "profile": "quick", "kind": "bench", "target": target}
    return {"run": run, "device": {"model": "drive"}, "tests": tests}


def _write_test(mbps: float, iops: float, ci95_pct: float | None) -> dict:
    return {
        "id": "SEQ1M_Q8T1_write",
        "rw": "write",
        "bs_bytes": 1 << 20,
        "iodepth": 8,
        "numjobs": 1,
        "write_mbps": mbps,
        "write_iops": iops,
        "lat_p99_us": 30000.0,
        "ci95_pct": ci95_pct,
    }


def _read_test(test_id: str, mbps: float) -> dict:
    return {
        "id": test_id,
        "rw": "read",
        "bs_bytes": 1 << 20,
        "iodepth": 8,
        "numjobs": 1,
        "read_mbps": mbps,
        "read_iops": mbps / 1.048576,
        "lat_p99_us": 9000.0,
    }


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/compare.sqlite"


def test_mbps_and_iops_of_one_test_get_one_judgement(cli, db):
    # Issue 20: "write MB/s 688.9 784.0 1.14x same" beside "write IOPS 654 745 1.14x faster". Both ratios are
    # 1.14x, but 784.0/688.9 = 1.1380 and 745/654 = 1.1391 fall either side of what two ±9.8% intervals allow
    # (13.86%), so each row, judged on its own, got a different word.
    with Store(db) as store:
        a = store.save(_doc("/a", [_write_test(688.9, 654.0, 9.8)]))
        b = store.save(_doc("/b", [_write_test(784.0, 745.0, 9.8)]))
    rows = {r["metric"]: r for r in cli("compare", str(a), str(b), "--db", db, "--json").json()["comparison"]["rows"]}
    assert rows["write_mbps"]["changes"] == rows["write_iops"]["changes"] == ["same", "same"]
    table = cli("compare", str(a), str(b), "--db", db).out
    lines = {m: next(line for line in table.splitlines() if m in line) for m in ("write MB/s", "write IOPS")}
    assert lines["write MB/s"].endswith("1.14x same") and lines["write IOPS"].endswith("1.14x same"), table


def test_change_column_has_one_unit_and_no_negative_zero(cli, db):
    # A 0.2% loss printed "-0% same"; a loss was a % change and a gain a x-ratio in one column.
    with Store(db) as store:
        a = store.save(_doc("/a", [_read_test("SEQ1M_Q8T1_read", 1000.0), _read_test("SEQ1M_Q1T1_read", 500.0)]))
        b = store.save(_doc("/b", [_read_test("SEQ1M_Q8T1_read", 998.0), _read_test("SEQ1M_Q1T1_read", 310.0)]))
        c = store.save(_doc("/c", [_read_test("SEQ1M_Q8T1_read", 2100.0), _read_test("SEQ1M_Q1T1_read", 500.0)]))
    out = cli("compare", str(a), str(b), str(c), "--db", db, "--format", "markdown").out
    assert "-0%" not in out
    rows = [line.split(" | ") for line in out.splitlines()[2:] if line.startswith("| ")]
    change_cells = [cell.strip(" |") for row in rows for cell in row[-2:]]
    assert change_cells and all(cell == "—" or cell.split()[0].endswith("x") for cell in change_cells), change_cells
    assert "1.00x same" in change_cells and "0.62x slower" in change_cells and "2.10x faster" in change_cells


def test_a_reference_with_no_test_in_common_is_nothing_to_compare(cli, db):
    # Issue 20: `compare 1 2 --relative-to 4` printed a table of "—", "Figures are % of run #4", and exit 0.
    with Store(db) as store:
        a = store.save(_doc("/a", [_read_test("SEQ1M_Q8T1_read", 1000.0)]))
        b = store.save(_doc("/b", [_read_test("SEQ1M_Q8T1_read", 900.0)]))
        ref = store.save(_doc("/ram", [_read_test("SEQ8M_Q1T1_read", 4000.0)]))
    res = cli("compare", str(a), str(b), "--relative-to", str(ref), "--db", db)
    assert res.code == 2 and res.out == "", res
    assert res.err.count("\n") == 1 and "no test in common" in res.err and "nothing to compare" in res.err
    res = cli("compare", str(a), str(b), "--relative-to", str(ref), "--db", db, "--json")
    assert res.code == 2
    assert "nothing to compare" in res.json()["error"]["message"]
    # One test in common is enough: the figures are % of the reference where it has the test.
    ok = cli("compare", str(a), str(b), "--relative-to", str(a), "--db", db, "--json")
    assert ok.code == 0 and ok.json()["comparison"]["rows"][0]["pct_of_reference"] == [100.0, 90.0]
