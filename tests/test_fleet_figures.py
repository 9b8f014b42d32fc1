"""`fleet` figures come from the newest run that has them (a write-only sustained run has no read MB/s),
and `fleet --host` for a host the store has no run of says so instead of "No runs yet"."""

from __future__ import annotations

import pytest

from disksleuth.store.db import Store


def _test(test_id: str, rw: str, read_mbps: float | None, write_mbps: float | None) -> dict:
    return {
        "id": test_id,
        "rw": rw,
        "bs_bytes": 1 << 20,
        "iodepth": 8,
        "numjobs": 1,
        "read_mbps": read_mbps,
        "read_iops": None if read_mbps is None else read_mbps / 1.048576,
        "write_mbps": write_mbps,
        "write_iops": None if write_mbps is None else write_mbps / 1.048576,
        "lat_p99_us": 20000.0,
    }


def _doc(host: str, started_at: str, profile: str, tests: list[dict]) -> dict:
    run = {
        "kind": "check",
        "target": "/dev/sdb",
        "profile": profile,
        "started_at": started_at,
        "host": {"hostname": host},
        "device": "sdb",
    }
    return {"run": run, "device": {"name": "sdb", "model": "WDC WD40"}, "tests": tests}


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/fleet.sqlite"


def test_each_figure_comes_from_the_newest_run_that_has_it(cli, db):
    with Store(db) as store:
        quick = store.save(
            _doc(
                "nas",
                "2026-11-20T10:00:00+0000",
                "quick",
                [_test("SEQ1M_Q8T1_read", "read", 212.5, None), _test("SEQ1M_Q8T1_write", "write", None, 198.0)],
            )
        )
        # Then a sustained run: writes only, so the newest run has no read figure.
        sustained = store.save(
            _doc("nas", "2026-11-21T10:00:00+0000", "sustained", [_test("SEQ1M_Q8T1_write", "write", None, 150.0)])
        )
    res = cli("fleet", "--db", db, "--json")
    assert res.code == 0, res.err
    (row,) = res.json()["fleet"]["rows"]
    assert row["run_id"] == sustained  # findings and state: the newest run
    assert row["seq_read_mbps"] == 212.5  # the old code: None, shown as "—"
    assert (row["seq_read_run_id"], row["seq_read_started_at"]) == (quick, "2026-11-20T10:00:00+0000")
    assert (row["seq_write_mbps"], row["seq_write_run_id"]) == (150.0, sustained)
    table = cli("fleet", "--db", db)
    assert "212*" in table.out and "from an older run" in table.out, table.out


def test_host_with_no_run_is_an_error_naming_the_hosts(cli, db):
    with Store(db) as store:
        for host in ("nas", "web1"):
            store.save(_doc(host, "2026-11-20T10:00:00+0000", "quick", [_test("SEQ1M_Q8T1_read", "read", 200.0, None)]))
    res = cli("fleet", "--db", db, "--host", "nosuch")
    assert res.code == 2 and res.out == "", res  # the old code: "No runs yet", exit 0
    assert res.err.count("\n") == 1 and "no stored run has this host" in res.err and "nas, web1" in res.err
    res = cli("fleet", "--db", db, "--host", "nosuch", "--json")
    assert res.code == 2 and "nas, web1" in res.json()["error"]["message"]
    res = cli("fleet", "--db", db, "--host", "web1", "--json")
    assert res.code == 0 and [r["host"] for r in res.json()["fleet"]["rows"]] == ["web1"]
