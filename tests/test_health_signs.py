"""The warning signs in real SMART data (issue 11 §4): exact verdicts per capture, then the signs one by one
on real captures changed in the one field that carries the sign (growth needs two snapshots)."""

from __future__ import annotations

import copy
import json
import os

import pytest
from conftest import SMARTCTL_FIXTURES, SYSFS

from disksleuth.analysis.health import health_changes, health_findings
from disksleuth.analysis.verdicts import assess_run
from disksleuth.model.run import Health, Run
from disksleuth.probe.block import read_device
from disksleuth.probe.smart_parse import parse_smartctl_json

WDC = "WDC_WD20EFRX-68EUZN0_17.json"
HGST = "sat-HGST_Ultrastar_7K6000-HGST_HUS726040ALA614-sda.json"
INTEL_SSD = "sat-Intel_S4510_S4610_S4500_S4600_Series_SSDs-INTEL_SSDSC2KB480G8-sdm.json"
MICRON_SSD = "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"
SEAGATE_SAS = "SEAGATE_ST373453LC_26.json"
SAMSUNG_NVME = "nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json"
MICRON_NVME = "nvme-null-Micron_7450_MTFDKCC3T2TFS-nvme1.json"

# What each real capture says, read by hand from the capture (attribute tables, error counter logs).
VERDICTS = {
    SEAGATE_SAS: {"media_errors": "warn"},  # 260 grown defects, 1 + 535 uncorrected read/write errors
    WDC: {},
    HGST: {},
    INTEL_SSD: {},
    MICRON_SSD: {},
    SAMSUNG_NVME: {},  # 22 error log entries, but no media errors: the log alone is no sign
    MICRON_NVME: {},
    "nvme-null-CT250P2SSD8-nvme0.json": {},
    "nvme-null-INTEL_SSDPEK1A058GA-nvme0.json": {},
}


def _doc(name: str) -> dict:
    with open(os.path.join(SMARTCTL_FIXTURES, name)) as fh:
        return json.load(fh)


def _health(doc: dict) -> Health:
    return parse_smartctl_json(json.dumps(doc))


def _attr(doc: dict, attr_id: int) -> dict:
    return next(a for a in doc["ata_smart_attributes"]["table"] if a["id"] == attr_id)


def _set_raw(doc: dict, attr_id: int, raw: int) -> dict:
    doc = copy.deepcopy(doc)
    a = _attr(doc, attr_id)
    a["raw"] = {"value": raw, "string": str(raw)}
    return doc


def _codes(findings) -> dict[str, str]:
    return {f.code: f.severity for f in findings}


def test_every_capture_has_its_verdict():
    assert set(VERDICTS) == {f for f in os.listdir(SMARTCTL_FIXTURES) if f.endswith(".json")}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_verdicts_per_capture(name):
    assert _codes(health_findings(_health(_doc(name)))) == VERDICTS[name]


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_health_says_nothing_found_or_names_the_findings(cli, name):
    res = cli("health", "--from-smartctl", os.path.join(SMARTCTL_FIXTURES, name))
    doc = cli("health", "--from-smartctl", os.path.join(SMARTCTL_FIXTURES, name), "--json").json()
    if VERDICTS[name]:
        assert res.code == 1 and all(code in res.out for code in VERDICTS[name])
        assert doc["summary"].startswith("1 finding(s), worst warn")
    else:
        assert res.code == 0 and "Nothing found: no warning signs" in res.out
        assert doc["summary"].startswith("Nothing found")


def test_scsi_grown_defects_and_uncorrected_errors_are_named():
    (found,) = health_findings(_health(_doc(SEAGATE_SAS)))
    assert "SCSI grown defects 260" in found.message and "SCSI uncorrected write errors 535" in found.message
    assert found.evidence["counts"]["SCSI uncorrected read errors"] == 1


def test_crc_errors_are_a_cable_problem_worse_when_growing():
    before = _health(_set_raw(_doc(WDC), 199, 12))
    (found,) = health_findings(before)
    assert (found.code, found.severity) == ("interface_crc_errors", "warn")
    assert "UDMA_CRC_Error_Count (ATA 199) 12" in found.message and "not a dying drive" in found.message
    assert "Reseat or replace" in found.hint
    after = _health(_set_raw(_doc(WDC), 199, 40))
    grew = {f.code: f for f in health_findings(after, health_changes(before, after))}
    assert grew["interface_crc_errors"].severity == "critical" and "12 → 40" in grew["interface_crc_errors"].message
    assert "health_critical" not in grew  # a cable, not the drive


def test_crc_kin_by_name_samsung_and_sata_downshift():
    doc = _set_raw(_doc(INTEL_SSD), 183, 31)  # Intel: 183 SATA_Downshift_Count (drivedb)
    (found,) = health_findings(_health(doc))
    assert found.code == "interface_crc_errors" and "SATA_Downshift_Count (ATA 183) 31" in found.message


@pytest.mark.parametrize(
    "attr_id,name", [(5, "Reallocated_Sector_Ct"), (197, "Current_Pending_Sector"), (198, "Offline_Uncorrectable")]
)
def test_reallocated_pending_uncorrectable_warn_then_critical(attr_id, name):
    before = _health(_set_raw(_doc(HGST), attr_id, 8))
    codes = _codes(health_findings(before))
    assert codes == {"media_errors": "warn"}
    after = _health(_set_raw(_doc(HGST), attr_id, 24))
    found = {f.code: f for f in health_findings(after, health_changes(before, after))}
    assert found["health_critical"].severity == "critical"
    assert f"{name} (ATA {attr_id}) grew from 8 to 24" in found["health_critical"].message


def test_past_the_drives_threshold_is_critical():
    doc = _set_raw(_doc(HGST), 5, 1975)
    a = _attr(doc, 5)
    a["value"], a["worst"], a["when_failed"] = 1, 1, "now"  # threshold 5 on this drive
    codes = _codes(health_findings(_health(doc)))
    assert codes == {"health_critical": "critical", "media_errors": "warn"}


def test_same_id_other_meaning_is_not_read_as_the_sign():
    # drivedb: some families rename 198 ("Not_In_Use"); a raw count there is no uncorrectable sector.
    doc = _set_raw(_doc(MICRON_SSD), 198, 77)
    _attr(doc, 198)["name"] = "Not_In_Use"
    assert health_findings(_health(doc)) == []


def test_nvme_media_errors_warn_and_error_log_growth():
    doc = copy.deepcopy(_doc(SAMSUNG_NVME))
    doc["nvme_smart_health_information_log"]["media_errors"] = 3
    before = _health(doc)
    assert _codes(health_findings(before)) == {"media_errors": "warn"}
    doc["nvme_smart_health_information_log"]["media_errors"] = 5
    doc["nvme_smart_health_information_log"]["num_err_log_entries"] = 30
    after = _health(doc)
    codes = _codes(health_findings(after, health_changes(before, after)))
    assert codes == {"health_critical": "critical", "media_errors": "warn", "error_log_growth": "warn"}


@pytest.mark.parametrize(
    "name,attr_id,value,source",
    [
        (INTEL_SSD, 233, 15, "ATA 233 Media_Wearout_Indicator"),  # Intel: normalised 100 -> 1
        (MICRON_SSD, 202, 12, "ATA 202 Percent_Lifetime_Remain"),  # Micron: norm = max(100-raw, 0)
    ],
)
def test_sata_ssd_wear_is_percentage_used_and_health_worn(name, attr_id, value, source):
    doc = copy.deepcopy(_doc(name))
    _attr(doc, attr_id)["value"] = value
    health = _health(doc)
    assert health.percentage_used == 100 - value and health.percentage_used_source.startswith(source)
    worn = {f.code: f for f in health_findings(health)}["health_worn"]
    assert source in worn.message


def test_samsung_177_and_kingston_231_wear():
    doc = copy.deepcopy(_doc(INTEL_SSD))
    for a in doc["ata_smart_attributes"]["table"]:
        if a["id"] == 233:
            a.update(id=177, name="Wear_Leveling_Count", value=9)  # Samsung (drivedb "Samsung based SSDs")
    assert _health(doc).percentage_used == 91
    # WD/SanDisk 233 is NAND writes, not wear: a normalised 9 there says nothing about wear.
    for a in doc["ata_smart_attributes"]["table"]:
        if a["id"] == 177:
            a.update(id=233, name="NAND_GB_Written_TLC")
    assert _health(doc).percentage_used is None


def test_standard_endurance_indicator_wins_over_vendor_attributes():
    doc = copy.deepcopy(_doc(INTEL_SSD))
    doc["endurance_used"] = {"current_percent": 83}  # ATA Device Statistics page 7 (smartctl -x)
    health = _health(doc)
    assert health.percentage_used == 83 and "device statistics" in health.percentage_used_source


def test_sata_link_downgraded_from_smartctl_alone(cli, tmp_path):
    doc = copy.deepcopy(_doc(WDC))
    doc["interface_speed"]["current"] = {"sata_value": 1, "string": "1.5 Gb/s", "units_per_second": 15}
    doc["interface_speed"]["current"]["bits_per_unit"] = 100000000
    path = tmp_path / "usb-bridge.json"
    path.write_text(json.dumps(doc))
    res = cli("health", "--from-smartctl", str(path), "--json")
    found = {f["code"]: f for f in res.json()["findings"]}["sata_link_downgraded"]
    assert found["severity"] == "warn" and found["evidence"]["sata_speed_max_gbps"] == 6.0
    doc["interface_speed"]["current"].update(units_per_second=30, string="3.0 Gb/s")
    path.write_text(json.dumps(doc))
    assert _codes(health_findings(_health(doc)))["sata_link_downgraded"] == "info"


def test_sysfs_sata_finding_is_not_doubled_by_smartctls():
    device = read_device("sda", os.path.join(SYSFS, "sata_3g_on_6g"))
    doc = copy.deepcopy(_doc(WDC))
    doc["interface_speed"]["current"].update(units_per_second=30, string="3.0 Gb/s")
    run = Run("/dev/sda", "quick", "2026-01-01T00:00:00+0000", None, "", {}, (), health_before=_health(doc))
    codes = [f.code for f in assess_run(run, device).findings]
    assert codes.count("sata_link_downgraded") == 1


def test_nvme_capacity_and_every_temperature_sensor():
    micron = _health(_doc(MICRON_NVME))  # no namespace list, no user_capacity: Identify Controller TNVMCAP
    assert micron.capacity_bytes == 3200631791616
    assert micron.temperature_sensors_c == (38.0, 35.0, 33.0)
    assert _health(_doc(SAMSUNG_NVME)).temperature_sensors_c == (35.0, 39.0)
    assert _health(_doc(INTEL_SSD)).temperature_sensors_c == (30.0, 30.0)  # 190 Drive_Temperature, 194


def test_check_and_bench_carry_the_same_health_findings():
    doc = _set_raw(_doc(WDC), 199, 12)
    device = read_device("sda", os.path.join(SYSFS, "sata_3g_on_6g"))
    run = Run("/dev/sda", "quick", "2026-01-01T00:00:00+0000", None, "", {}, (), health_before=_health(doc))
    codes = {f.code for f in assess_run(run, device).findings}
    assert {"interface_crc_errors", "sata_link_downgraded"} <= codes


def test_scan_output_is_named_as_such(cli, tmp_path):
    path = tmp_path / "scan.json"
    path.write_text(json.dumps({"json_format_version": [1, 0], "devices": [{"name": "/dev/sda", "type": "sat"}]}))
    res = cli("health", "--from-smartctl", str(path))
    assert res.code == 2 and "smartctl --scan" in res.err and res.err.count("\n") == 1
