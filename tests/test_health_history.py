"""Health over time: readings kept in the store, counters told against their past, acknowledgements, and the
edges (another drive under the same name, a serial that changed, a counter that went down, clock skew).

The series of readings are real smartctl captures (tests/data/smartctl) in which only the CRC attribute's raw
value (ATA 199, UDMA_CRC_Error_Count) and smartctl's own `local_time` (when the capture was taken) are changed
between readings; everything else is the drive's real output, parsed by the real parser."""

from __future__ import annotations

import calendar
import json
import os
import sqlite3

import pytest
from conftest import SMARTCTL_FIXTURES

from disksleuth.analysis.health_history import apply_history, judge
from disksleuth.model import Finding
from disksleuth.model.health_history import HealthAck, HealthReading

WDC = os.path.join(SMARTCTL_FIXTURES, "WDC_WD20EFRX-68EUZN0_17.json")
CRC = "interface.UDMA_CRC_Error_Count (ATA 199)"


def day_s(text: str) -> int:
    """'2026-11-02 08:00' as epoch seconds (UTC)."""
    return calendar.timegm(__import__("time").strptime(text, "%Y-%m-%d %H:%M"))


def capture(tmp_path, crc: int, at: str, *, serial: str | None = None, name: str = "wdc") -> str:
    """The real WD20EFRX capture with only ATA 199's raw value and the capture time changed (and the serial,
    where a test says so)."""
    with open(WDC) as fh:
        doc = json.load(fh)
    for attr in doc["ata_smart_attributes"]["table"]:
        if attr["id"] == 199:
            attr["raw"] = {"value": crc, "string": str(crc)}
    doc["local_time"] = {"time_t": day_s(at), "asctime": at}
    if serial is not None:
        doc["serial_number"] = serial
    path = tmp_path / f"{name}-{crc}-{at.replace(' ', '_').replace(':', '')}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def as_sdb(path: str) -> tuple[str, ...]:
    """A saved capture read as this host's sdb: a file's reading is otherwise kept apart (issue 40)."""
    return ("--from-smartctl", path, "--as-device", "sdb")


def _crc_finding(doc: dict) -> dict:
    return next(f for f in doc["findings"] if f["code"] == "interface_crc_errors")


def test_crc_grows_warns_ack_quiets_it_and_growth_warns_again(cli, tmp_path):
    """The acceptance series: warn, ack, quiet, then warn again when the count grows."""
    db = f"sqlite:///{tmp_path}/store.sqlite"

    def health(crc: int, at: str) -> tuple[int, dict]:
        res = cli("health", *as_sdb(capture(tmp_path, crc, at)), "--db", db, "--json")
        return res.code, res.json()

    code, doc = health(108, "2026-11-02 08:00")
    assert code == 1 and _crc_finding(doc)["severity"] == "warn"
    assert doc["history"] == {"kept": True, "compared_readings": 0, "error": None}
    code, doc = health(131, "2026-11-05 08:00")
    f = _crc_finding(doc)
    assert code == 1 and f["severity"] == "warn"
    assert "UDMA_CRC_Error_Count (ATA 199) 108 → 131 since 2026-11-02" in f["message"]

    res = cli("health", "--ack", "sdb", "199", "--db", db)
    assert res.code == 0, res.err
    assert "acknowledged UDMA_CRC_Error_Count (ATA 199) at 131" in res.out

    code, doc = health(131, "2026-11-08 08:00")  # the same count: quiet
    f = _crc_finding(doc)
    assert code == 0 and f["severity"] == "info"
    assert "Acknowledged: UDMA_CRC_Error_Count (ATA 199) at 131" in f["message"]
    assert "warns again if it grows" in f["message"]

    code, doc = health(140, "2026-11-09 08:00")  # it grows past the acknowledged value: warn again
    f = _crc_finding(doc)
    assert code == 1 and f["severity"] == "warn"
    assert "131 → 140 since it was acknowledged on" in f["message"]

    res = cli("health", "--history", "sdb", "--db", db)
    assert res.code == 1, res.err  # the newest reading's CRC count grew past the ack: warn, as `health` exits
    for value in ("108", "131", "140", "ATA 199"):
        assert value in res.out
    hist = cli("health", "--history", "/dev/sdb", "--db", db, "--json").json()["health_history"]
    assert [r["counters"][CRC] for r in hist["readings"]] == [108, 131, 131, 140]
    assert [r["source"] for r in hist["readings"]] == ["file"] * 4

    assert cli("health", "--unack", "sdb", "199", "--db", db).code == 0
    code, doc = health(140, "2026-11-10 08:00")
    assert code == 1 and "108 → 140 since 2026-11-02" in _crc_finding(doc)["message"]


def test_the_same_reading_is_kept_once_and_a_quiet_drive_every_six_hours(cli, tmp_path):
    db = tmp_path / "store.sqlite"
    first = capture(tmp_path, 5, "2026-11-02 08:00")
    for _ in range(3):  # the same file three times: one row
        assert cli("health", *as_sdb(first), "--db", str(db)).code == 1
    assert cli("health", *as_sdb(capture(tmp_path, 5, "2026-11-02 09:00")), "--db", str(db)).code == 1
    assert cli("health", *as_sdb(capture(tmp_path, 5, "2026-11-02 14:00")), "--db", str(db)).code == 1
    assert cli("health", *as_sdb(capture(tmp_path, 6, "2026-11-02 14:30")), "--db", str(db)).code == 1
    con = sqlite3.connect(db)
    rows = con.execute("SELECT read_at, counters_json FROM health_readings ORDER BY read_at_s").fetchall()
    con.close()
    # 08:00 kept (first), 09:00 dropped (same, 1 h later), 14:00 kept (6 h), 14:30 kept (a counter changed).
    assert [r[0] for r in rows] == ["2026-11-02T08:00:00Z", "2026-11-02T14:00:00Z", "2026-11-02T14:30:00Z"]


def test_no_save_keeps_nothing_and_a_broken_store_costs_only_the_history(cli, tmp_path):
    db = tmp_path / "store.sqlite"
    res = cli("health", *as_sdb(capture(tmp_path, 5, "2026-11-02 08:00")), "--db", str(db), "--no-save")
    assert res.code == 1 and not db.exists()
    bad = tmp_path / "not-a-store.sqlite"
    bad.write_text("this is not a database")
    res = cli("health", *as_sdb(capture(tmp_path, 5, "2026-11-02 08:00")), "--db", str(bad), "--json")
    assert res.code == 1 and "Traceback" not in res.err
    assert "health history left out" in res.err and res.json()["history"]["error"]


def test_ack_errors_are_one_line(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/store.sqlite"
    res = cli("health", "--ack", "sdq", "199", "--db", db)
    assert res.code == 2 and "no results store" in res.err and res.err.count("\n") == 1
    cli("health", *as_sdb(capture(tmp_path, 5, "2026-11-02 08:00")), "--db", db)
    res = cli("health", "--ack", "sdb", "nonesuch", "--db", db)
    assert res.code == 2 and "no counter named 'nonesuch'" in res.err and "UDMA_CRC_Error_Count" in res.err
    res = cli("health", "--ack", "sdb", "--db", db)
    assert res.code == 2 and "needs DEVICE and ATTRIBUTE" in res.err
    res = cli("health", "--history", "sdz", "--db", db)
    assert res.code == 2 and "no health readings of sdz" in res.err and "Traceback" not in res.err


# --- the edges, judged on readings as the store gives them back ---------------------------------------


def reading(at: str, crc: int, *, key: str = "drive-a", model: str = "WDC WD20EFRX", hours: int | None = 1000,
            source: str = "exporter", rid: int | None = None) -> HealthReading:  # fmt: skip
    return HealthReading(
        read_at_s=day_s(at),
        hostname="h",
        device_name="sdb",
        drive_key=key,
        serial_id=key,
        model=model,
        source=source,
        power_on_hours=hours,
        counters={CRC: crc},
        id=rid,
    )


def crc_finding(count: int) -> Finding:
    return Finding(
        "interface_crc_errors", "warn", "corrupted (...).", {"counts": {CRC.removeprefix("interface."): count}}, "h"
    )


def test_a_replaced_drive_under_the_same_name_is_said_and_never_compared():
    old = [reading("2026-11-01 08:00", 300, key="old", hours=40_000, rid=1)]
    now = reading("2026-11-03 08:00", 2, key="new", model="WDC WD40EFRX", hours=10, rid=2)
    j = judge(now, old, {}, day_s("2026-11-03 09:00"))
    assert [n.code for n in j.notes] == ["health_drive_changed"] and j.compared == 0
    assert "another drive since 2026-11-03" in j.notes[0].message
    assert not j.counters[CRC].grew  # 300 → 2 is not a drop on one drive, nor 2 a growth


def test_a_serial_change_with_power_on_hours_carrying_on_is_the_same_drive():
    before = [reading("2026-11-01 08:00", 100, key="s1", hours=5000, rid=1)]
    now = reading("2026-11-02 08:00", 120, key="s2", hours=5024, rid=2)
    acked = {CRC: HealthAck("s1", CRC, 100, day_s("2026-11-01 09:00"))}
    j = judge(now, before, acked, day_s("2026-11-02 09:00"))
    assert [n.code for n in j.notes] == ["health_serial_changed"] and set(j.drive_keys) == {"s1", "s2"}
    f = apply_history([crc_finding(120)], j)[0]
    assert f.severity == "warn" and "100 → 120 since it was acknowledged on 2026-11-01" in f.message


def test_a_counter_that_went_down_is_said_and_voids_an_older_ack():
    readings = [reading("2026-11-01 08:00", 500, rid=1), reading("2026-11-02 08:00", 3, rid=2)]
    now = reading("2026-11-04 08:00", 4, rid=3)
    acked = {CRC: HealthAck("drive-a", CRC, 500, day_s("2026-11-01 09:00"))}
    j = judge(now, readings, acked, day_s("2026-11-04 09:00"))
    assert [n.code for n in j.notes] == ["health_counter_reset"]
    assert "went down from 500" in j.notes[0].message and "to 3" in j.notes[0].message
    story = j.counters[CRC]
    assert story.ack is None and story.since_value == 3 and story.grew  # 3 → 4, never 500 → 4
    f = apply_history([crc_finding(4)], j)[0]
    assert f.severity == "warn" and "3 → 4 since 2026-11-02" in f.message


def test_readings_dated_in_the_future_are_left_out_and_said():
    skewed = [reading("2027-06-01 08:00", 0, rid=1), reading("2026-11-01 08:00", 7, rid=2)]
    now = reading("2026-11-02 08:00", 7, rid=3)
    j = judge(now, skewed, {}, day_s("2026-11-02 08:00"))
    assert [n.code for n in j.notes] == ["health_clock_skew"] and "dated after now" in j.notes[0].message
    assert j.compared == 1 and not j.counters[CRC].grew  # the future 0 neither drops nor grows anything
    f = apply_history([crc_finding(7)], j)[0]
    assert f.severity == "warn" and "Unchanged since 2026-11-01" in f.message


def test_an_ack_does_not_pass_to_another_drive(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/store.sqlite"
    cli("health", *as_sdb(capture(tmp_path, 50, "2026-11-02 08:00", serial="AAA")), "--db", db)
    assert cli("health", "--ack", "sdb", "crc", "--db", db).code == 0
    res = cli("health", *as_sdb(capture(tmp_path, 20, "2026-11-03 08:00", serial="BBB")), "--db", db)
    assert res.code == 1  # 20 is below the other drive's acknowledged 50, and still warns: it is not acknowledged


@pytest.mark.parametrize("args", [["--ack", "--unack", "sdb", "199"], ["sdb", "199"]])
def test_bad_combinations(cli, args, tmp_path):
    res = cli("health", *args, "--db", f"sqlite:///{tmp_path}/s.sqlite")
    assert res.code == 2 and res.err.count("\n") == 1 and "Traceback" not in res.err


def test_health_history_on_a_real_postgresql(cli, fresh_postgres_url, tmp_path):
    """Schema 5 migrates on PostgreSQL too, and the whole series behaves as on SQLite."""
    db = fresh_postgres_url
    assert cli("health", *as_sdb(capture(tmp_path, 108, "2026-11-02 08:00")), "--db", db).code == 1
    assert cli("health", "--ack", "sdb", "199", "--db", db).code == 0
    assert cli("health", "--ack", "sdb", "199", "--db", db).code == 0  # again: replaces, never a duplicate key
    res = cli("health", *as_sdb(capture(tmp_path, 108, "2026-11-03 08:00")), "--db", db, "--json")
    assert res.code == 0 and _crc_finding(res.json())["severity"] == "info"
    res = cli("health", *as_sdb(capture(tmp_path, 131, "2026-11-04 08:00")), "--db", db, "--json")
    assert res.code == 1 and "108 → 131 since it was acknowledged" in _crc_finding(res.json())["message"]
    readings = cli("health", "--history", "sdb", "--db", db, "--json").json()["health_history"]["readings"]
    assert [r["counters"][CRC] for r in readings] == [108, 108, 131]
    drives = cli("health", "--db", db, "--json").json()["drives"]
    assert [(d["device"], d["worst"]) for d in drives] == [("sdb", "warn")]


def test_the_new_documents_meet_the_shipped_schema(cli, tmp_path):
    from test_json_schema import assert_valid, is_valid

    db = f"sqlite:///{tmp_path}/store.sqlite"
    cli("health", *as_sdb(capture(tmp_path, 108, "2026-11-02 08:00")), "--db", db)
    cli("health", *as_sdb(capture(tmp_path, 131, "2026-11-03 08:00")), "--db", db)
    docs = {
        "health_history": cli("health", "--history", "sdb", "--db", db, "--json").json(),
        "health_acknowledged": cli("health", "--ack", "sdb", "199", "--db", db, "--json").json(),
        "health_drives": cli("health", "--db", db, "--json").json(),
    }
    assert docs["health_acknowledged"]["acknowledged"][0]["value"] == 131
    for name, doc in docs.items():
        assert_valid(doc, name)
        for key in list(doc):
            broken = {k: v for k, v in doc.items() if k != key}
            assert not is_valid(broken), f"{name} still valid without {key}"
    undone = cli("health", "--unack", "sdb", "199", "--db", db, "--json").json()
    assert_valid(undone, "health_acknowledged")
    assert undone["acknowledged"][0]["undone"] is True
