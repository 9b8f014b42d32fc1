"""Siblings (issue 23): drives of the same model and firmware in a shared store, each judged among the others
by median and MAD (unlike_siblings), in `fleet` and in `check`. Real SQLite stores, filled with Store.save."""

from __future__ import annotations

import copy
import json
import uuid

import pytest
from conftest import SAMPLE_RUN

from disksleuth.analysis.siblings import CODE, Drive, judge_drive, judge_fleet
from disksleuth.store.db import Store

MODEL, FIRMWARE = "Samsung SSD 870 EVO 1TB", "SVT02B6Q"


def _doc(host: str, device: str, read_mbps: float, *, firmware: str = FIRMWARE, serial: str | None = None) -> dict:
    with open(SAMPLE_RUN) as fh:
        doc = copy.deepcopy(json.load(fh))
    doc["run"]["uuid"] = str(uuid.uuid4())
    doc["run"]["host"]["hostname"] = host
    doc["run"]["device"] = device
    doc["device"].update(name=device, model=MODEL, firmware=firmware, serial=serial or f"S-{host}-{device}")
    for t in doc["tests"]:
        scale = read_mbps / 1549.07
        for k in ("read_mbps", "read_iops", "write_mbps", "write_iops"):
            if t.get(k) is not None:
                t[k] *= scale
    doc["findings"] = []
    return doc


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/results.sqlite"


def test_fleet_names_the_drive_unlike_its_siblings_with_numbers(cli, db):
    with Store(db) as store:
        for host, read in (("nas1", 540.0), ("nas2", 552.0), ("nas3", 548.0), ("nas4", 212.0)):
            store.save(_doc(host, "sda", read))
        store.save(_doc("nas5", "sda", 100.0, firmware="OTHERFW"))  # another firmware: not a sibling
    res = cli("fleet", "--json", "--db", db)
    assert res.code == 1, res.err  # a warn finding
    rows = {r["host"]: r for r in res.json()["fleet"]["rows"]}
    odd = rows["nas4"]
    assert odd["worst"] == "warn" and CODE in odd["codes"]
    assert sorted(f["evidence"]["figure"] for f in odd["siblings"]) == ["seq_read_mbps", "seq_write_mbps"]
    f = next(f for f in odd["siblings"] if f["evidence"]["figure"] == "seq_read_mbps")
    assert f["severity"] == "warn"
    assert f["message"].startswith(f"sda on nas4: sequential read 212 MB/s is 61% below its 3 siblings ({MODEL}")
    assert "median 548 MB/s, MAD 4.0 MB/s" in f["message"]
    assert all(rows[h]["siblings"] == [] for h in ("nas1", "nas2", "nas3", "nas5"))
    assert "sequential read 212 MB/s is 61% below" in cli("fleet", "--db", db).out
    # --host narrows the rows, not the siblings they are judged among.
    only = cli("fleet", "--json", "--host", "nas4", "--db", db).json()["fleet"]["rows"]
    assert [r["host"] for r in only] == ["nas4"] and only[0]["siblings"]


def test_too_few_siblings_or_a_tight_group_is_no_finding():
    drives = [Drive(f"h{i}", "sda", MODEL, FIRMWARE, {"seq_read_mbps": v}) for i, v in enumerate((540, 552, 212))]
    assert judge_fleet(drives) == {}  # 2 siblings each: fewer than 3
    tight = [Drive(f"h{i}", "sda", MODEL, FIRMWARE, {"seq_read_mbps": v}) for i, v in enumerate((500, 500, 500, 480))]
    assert judge_fleet(tight) == {}  # 4% off identical siblings: an infinite z, but under the 10% gap


def test_one_drive_under_two_names_is_not_its_own_sibling():
    me = Drive("h0", "sdb", MODEL, FIRMWARE, {"seq_read_mbps": 200.0}, serial_id="s0")
    others = [Drive(f"h{i}", "sda", MODEL, FIRMWARE, {"seq_read_mbps": 540.0 + i}, serial_id=f"s{i}") for i in (1, 2)]
    old_me = Drive("h0", "sda", MODEL, FIRMWARE, {"seq_read_mbps": 210.0}, serial_id="s0")
    assert judge_drive(me, [*others, old_me]) == []  # 2 real siblings only
    slow = judge_drive(me, [*others, Drive("h3", "sda", MODEL, FIRMWARE, {"seq_read_mbps": 545.0}, "s3")])
    assert [f.code for f in slow] == [CODE]


def test_a_faster_drive_is_info_and_the_link_is_compared_too():
    group = [Drive(f"h{i}", "sda", MODEL, FIRMWARE, {"ceiling_mbps": 570.0, "seq_read_mbps": 500.0}) for i in range(3)]
    slow_link = Drive("h9", "sda", MODEL, FIRMWARE, {"ceiling_mbps": 285.0, "seq_read_mbps": 500.0})
    (f,) = judge_drive(slow_link, group)
    assert (f.severity, f.evidence["figure"]) == ("warn", "ceiling_mbps") and "link ceiling 285 MB/s" in f.message
    fast = Drive("h8", "sda", MODEL, FIRMWARE, {"seq_read_mbps": 900.0})
    assert [g.severity for g in judge_drive(fast, group)] == ["info"]


def test_check_judges_its_drive_among_stored_siblings(db, monkeypatch):
    """run/check's sibling step on a real store: this run's figures against three stored siblings."""
    from disksleuth.run.siblings import sibling_findings

    with Store(db) as store:
        for host, read in (("nas1", 540.0), ("nas2", 552.0), ("nas3", 548.0)):
            store.save(_doc(host, "sda", read))
    me = Drive("here", "sdc", MODEL, FIRMWARE, {"seq_read_mbps": 250.0})
    (f,) = sibling_findings(db, me)
    assert f.code == CODE and "250 MB/s is 54% below its 3 siblings" in f.message
    assert sibling_findings(db, Drive("here", "sdc", MODEL, "NEWFW", {"seq_read_mbps": 250.0})) == []
    assert sibling_findings(f"sqlite:///{db.split('///')[1]}.missing", me) == []
