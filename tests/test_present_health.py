"""`health --attributes`: the table `smartctl -A` prints, and the latest self-test, from smartctl's JSON."""

from __future__ import annotations

import json
import os

from conftest import DATA, SMARTCTL_FIXTURES

from disksleuth.probe.smart_parse import parse_smartctl_json


def parse_attributes(doc: dict):
    from disksleuth.probe.smart_attributes import parse_attributes as parse

    return parse(doc)


def parse_latest_self_test(doc: dict):
    from disksleuth.probe.smart_attributes import parse_latest_self_test as parse

    return parse(doc)


X = os.path.join(DATA, "smartctl-x")
ATA_FULL = os.path.join(X, "scrutiny-smart-ata-full.json")  # smartctl -x -j, extended self-test log
ATA_ABORTED = os.path.join(X, "scrutiny-smart-megaraid1.json")  # standard log, newest "Aborted by host"
NVME = os.path.join(SMARTCTL_FIXTURES, "nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json")
SCSI = os.path.join(SMARTCTL_FIXTURES, "SEAGATE_ST373453LC_26.json")


def _doc(path: str) -> dict:
    with open(path) as fh:
        return json.load(fh)


def _write(tmp_path, doc: dict, name: str = "x.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_ata_attribute_table_like_smartctl_A(cli):
    res = cli("health", "--from-smartctl", ATA_FULL, "--attributes")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    header = next(line for line in lines if line.startswith("ID#"))
    assert header.split() == ["ID#", "ATTRIBUTE_NAME", "FLAGS", "VALUE", "WORST", "THRESH", "FAIL", "RAW_VALUE"]
    row = next(line for line in lines if "Reallocated_Sector_Ct" in line).split()
    assert row == ["5", "Reallocated_Sector_Ct", "PO--CK", "100", "100", "010", "-", "0"]
    assert next(line for line in lines if "Total_LBAs_Written" in line).split()[-1] == "64777770148"
    assert sum(1 for line in lines if line[:3].strip().isdigit()) == 14  # every attribute in the capture
    assert "last self-test: Short offline: Completed without error, at 14,417 h (134 h ago)" in res.out


def test_attributes_are_only_printed_when_asked_but_always_in_json(cli):
    plain = cli("health", "--from-smartctl", ATA_FULL)
    assert "ATTRIBUTE_NAME" not in plain.out and "last self-test" in plain.out
    doc = cli("health", "--from-smartctl", ATA_FULL, "--json").json()
    attrs = doc["health"]["attributes"]
    assert [a["id"] for a in attrs][:3] == [5, 9, 12]
    assert attrs[0] | {"raw": "0"} == attrs[0] and attrs[0]["thresh"] == 10 and attrs[0]["prefailure"] is True
    assert doc["health"]["self_test"] == {
        "kind": "Short offline",
        "status": "Completed without error",
        "passed": True,
        "power_on_hours": 14417,
        "in_progress": False,
        "remaining_pct": None,
        "failing_lba": None,
    }
    assert doc["schema"] == "disksleuth/1" and "power_on_hours" in doc["health"]  # earlier fields stay


def test_aborted_self_test_is_neither_passed_nor_failed():
    t = parse_latest_self_test(_doc(ATA_ABORTED))
    assert t is not None and t.status == "Aborted by host" and t.passed is None and t.power_on_hours == 35990


def test_failing_attribute_and_failed_self_test_stand_out(cli, tmp_path):
    doc = _doc(ATA_FULL)
    doc["ata_smart_attributes"]["table"][0]["when_failed"] = "now"  # as ataprint.cpp writes it
    doc["ata_smart_self_test_log"]["extended"]["table"].insert(
        0,
        {
            "type": {"value": 2, "string": "Extended offline"},
            "status": {"value": 121, "string": "Completed: read failure", "remaining_percent": 90, "passed": False},
            "lifetime_hours": 14500,
            "lba": 123456789,
        },
    )
    res = cli("health", "--from-smartctl", _write(tmp_path, doc), "-A")
    row = next(line for line in res.out.splitlines() if "Reallocated_Sector_Ct" in line).split()
    assert row[6] == "NOW"
    assert "Extended offline: Completed: read failure, at 14,500 h (51 h ago), first failing LBA 123,456,789" in res.out
    health = parse_smartctl_json(json.dumps(doc))
    assert health.self_test is not None and health.self_test.passed is False


def test_running_ata_self_test():
    doc = _doc(ATA_FULL)
    doc["ata_smart_self_test_log"]["extended"]["table"].insert(
        0,
        {
            "type": {"value": 1, "string": "Short offline"},
            "status": {"value": 249, "string": "Self-test routine in progress", "remaining_percent": 90},
            "lifetime_hours": 14551,
        },
    )
    t = parse_latest_self_test(doc)
    assert t is not None and t.in_progress and t.remaining_pct == 90 and t.passed is None


def test_nvme_health_log_table(cli):
    res = cli("health", "--from-smartctl", NVME, "--attributes")
    assert "SMART/Health Information (NVMe Log 0x02)" in res.out
    lines = {line.split(":")[0]: line.split(":", 1)[1].strip() for line in res.out.splitlines() if ":" in line}
    assert lines["Data Units Read"] == "2,025,034 [1.04 TB]"  # 2,025,034 x 512,000 bytes
    assert lines["Critical Warning"] == "0x00"
    assert lines["Temperature Sensor 2"] == "39 Celsius"
    assert lines["Error Information Log Entries"] == "22"
    assert "No self-test log in this output" in res.out  # captured without -x


def _nvme_with_self_tests(entries: list[dict], current: int = 0, percent: int | None = None) -> dict:
    # The shape of smartmontools src/nvmeprint.cpp print_self_test_log (7.4), newest entry first.
    doc = _doc(NVME)
    log: dict = {
        "nsid": -1,
        "current_self_test_operation": {
            "value": current,
            "string": {0: "No self-test in progress", 2: "Extended self-test in progress"}[current],
        },
        "table": entries,
    }
    if percent is not None:
        log["current_self_test_completion_percent"] = percent
    doc["nvme_self_test_log"] = log
    return doc


def _nvme_entry(result: int, text: str, hours: int, code: str = "Short") -> dict:
    return {
        "self_test_code": {"value": 1 if code == "Short" else 2, "string": code},
        "self_test_result": {"value": result, "string": text},
        "power_on_hours": hours,
    }


def test_nvme_self_test_results(cli, tmp_path):
    ok = _nvme_with_self_tests([_nvme_entry(0, "Completed without error", 3100), _nvme_entry(7, "x", 10)])
    t = parse_latest_self_test(ok)
    assert t is not None and t.passed is True and t.kind == "Short" and t.power_on_hours == 3100
    failed = _nvme_with_self_tests([_nvme_entry(7, "Completed: failed segments", 3140, "Extended")])
    res = cli("health", "--from-smartctl", _write(tmp_path, failed))
    assert "last self-test: Extended: Completed: failed segments, at 3,140 h (9 h ago)" in res.out
    assert parse_latest_self_test(failed).passed is False  # type: ignore[union-attr]
    aborted = _nvme_with_self_tests([_nvme_entry(2, "Aborted: Controller Reset", 3140)])
    assert parse_latest_self_test(aborted).passed is None  # type: ignore[union-attr]
    running = _nvme_with_self_tests([_nvme_entry(0, "Completed without error", 3100)], current=2, percent=30)
    t = parse_latest_self_test(running)
    assert t is not None and t.in_progress and t.remaining_pct == 70
    assert "running, 70% remaining" in cli("health", "--from-smartctl", _write(tmp_path, running, "r.json")).out
    assert parse_latest_self_test(_nvme_with_self_tests([])) is None


def test_scsi_error_counter_log_and_self_test(cli, tmp_path):
    res = cli("health", "--from-smartctl", SCSI, "--attributes")
    rows = {line.split()[0]: line.split()[1:] for line in res.out.splitlines() if line.startswith(("read:", "write:"))}
    # smartctl -a: read: 5330255 1 41 5330297 5332649 11523.849 1
    assert rows["read:"] == ["5,330,255", "1", "41", "5,330,297", "5,332,649", "11523.849", "1"]
    assert rows["write:"][-1] == "535"
    assert "Elements in grown defect list: 260" in res.out
    doc = _doc(SCSI)
    # scsiprint.cpp scsiPrintSelfTest: scsi_self_test_0 is the newest.
    doc["scsi_self_test_0"] = {
        "code": {"value": 1, "string": "Background short"},
        "result": {"value": 0, "string": "Completed"},
        "power_on_time": {"hours": 102870, "aka": "accumulated_power_on_hours"},
    }
    res = cli("health", "--from-smartctl", _write(tmp_path, doc), "-A")
    assert "last self-test: Background short: Completed, at 102,870 h (10 h ago)" in res.out
    doc["scsi_self_test_0"]["result"] = {"value": 5, "string": "Failed in first segment"}
    assert parse_latest_self_test(doc).passed is False  # type: ignore[union-attr]


def test_odd_members_are_left_out_not_raised():
    doc = {
        "ata_smart_attributes": {"table": [None, {"id": "5"}, {"id": 9, "raw": "x", "flags": 3}, {"id": 12}]},
        "ata_smart_self_test_log": {"extended": {"table": ["x"]}, "standard": {"table": [{"status": 5}]}},
    }
    attrs = parse_attributes(doc)
    assert [a.id for a in attrs] == [9, 12] and attrs[0].raw == "" and attrs[0].flags is None
    t = parse_latest_self_test(doc)
    assert t is not None and t.status == "unknown" and t.passed is None
    assert parse_attributes({"nvme_smart_health_information_log": {"temperature": True, "media_errors": "1"}}) == ()
    assert parse_attributes({"scsi_error_counter_log": {"read": {"gigabytes_processed": "n/a"}}}) == ()
    assert parse_latest_self_test({"nvme_self_test_log": []}) is None


def test_absurd_numbers_do_not_overflow():
    doc = {"nvme_smart_health_information_log": {"data_units_read": 10**400, "temperature": 1e308, "power_cycles": -5}}
    rows = {a.key: a.raw for a in parse_attributes(doc)}
    assert rows["data_units_read"].startswith("10,000,000") and "[" not in rows["data_units_read"]
    assert rows["power_cycles"] == "-5"


def test_any_json_gives_rows_or_nothing_never_an_exception():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=12,
    )
    keys = st.sampled_from(
        [
            "ata_smart_attributes",
            "nvme_smart_health_information_log",
            "scsi_error_counter_log",
            "scsi_grown_defect_list",
            "ata_smart_self_test_log",
            "nvme_self_test_log",
            "scsi_self_test_0",
            "table",
            "extended",
            "standard",
            "read",
            "status",
            "raw",
            "id",
            "value",
            "current_self_test_operation",
            "temperature_sensors",
            "data_units_read",
        ]
    )
    docs = st.recursive(
        st.dictionaries(keys, values, max_size=4),
        lambda inner: st.dictionaries(keys, inner | values | st.lists(inner, max_size=3), max_size=4),
        max_leaves=20,
    )

    @settings(max_examples=120, deadline=None)
    @given(docs)
    def check(doc):
        for a in parse_attributes(doc):
            assert isinstance(a.name, str) and isinstance(a.raw, str)
        parse_latest_self_test(doc)

    check()
