"""Health from real smartctl captures, bad inputs, this machine, and the temperature sampler."""

from __future__ import annotations

import os
import shutil
import threading
import time

import pytest
from conftest import DATA, SMARTCTL_FIXTURES, SYSFS

from disksleuth.analysis.health import health_changes, health_findings, lba_format_finding
from disksleuth.model.run import Health, LbaFormat
from disksleuth.probe.hwmon import TemperatureSampler, hwmon_temp_input, read_temp_c
from disksleuth.probe.smart_parse import decode_exit_status, parse_nvme_id_ns_json, parse_smartctl_json

BAD = os.path.join(DATA, "smartctl-bad")


def _fixture(name: str) -> str:
    return os.path.join(SMARTCTL_FIXTURES, name)


def _parse(name: str) -> Health:
    with open(_fixture(name)) as fh:
        return parse_smartctl_json(fh.read())


# Expected figures, read from each capture by hand.
EXPECTED = {
    "nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json": dict(
        protocol="NVMe",
        model="Samsung SSD 970 EVO Plus 250GB",
        temperature_c=35,
        power_on_hours=3149,
        power_cycles=16,
        unsafe_shutdowns=12,
        percentage_used=0,
        available_spare_pct=100,
        available_spare_threshold_pct=10,
        media_errors=0,
        error_log_entries=22,
        smart_passed=True,
        capacity_bytes=250059350016,
    ),
    "nvme-null-CT250P2SSD8-nvme0.json": dict(
        protocol="NVMe",
        model="CT250P2SSD8",
        temperature_c=26,
        power_on_hours=10147,
        power_cycles=8,
        percentage_used=0,
        media_errors=0,
        error_log_entries=1,
        smart_passed=True,
    ),
    "nvme-null-INTEL_SSDPEK1A058GA-nvme0.json": dict(
        protocol="NVMe", model="INTEL SSDPEK1A058GA", temperature_c=44, power_on_hours=3752, power_cycles=24
    ),
    "nvme-null-Micron_7450_MTFDKCC3T2TFS-nvme1.json": dict(
        protocol="NVMe", model="Micron_7450_MTFDKCC3T2TFS", temperature_c=33, power_on_hours=2884, power_cycles=32
    ),
    "WDC_WD20EFRX-68EUZN0_17.json": dict(
        protocol="ATA",
        model="WDC WD20EFRX-68EUZN0",
        temperature_c=34,
        power_on_hours=47657,
        power_cycles=3,
        ata_reallocated_sectors=0,
        ata_pending_sectors=0,
        ata_crc_errors=0,
        sata_speed_max_gbps=6.0,
        smart_passed=True,
    ),
    "sat-HGST_Ultrastar_7K6000-HGST_HUS726040ALA614-sda.json": dict(
        protocol="ATA",
        model="HGST HUS726040ALA614",
        temperature_c=31,
        power_on_hours=54154,
        power_cycles=11,
        ata_reallocated_sectors=0,
        ata_pending_sectors=0,
        ata_offline_uncorrectable=0,
        ata_crc_errors=0,
        sata_speed_current_gbps=6.0,
        sata_speed_max_gbps=6.0,
        error_log_entries=0,
    ),
    "sat-Intel_S4510_S4610_S4500_S4600_Series_SSDs-INTEL_SSDSC2KB480G8-sdm.json": dict(
        protocol="ATA", model="INTEL SSDSC2KB480G8", temperature_c=30, power_on_hours=13017, power_cycles=10
    ),
    "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json": dict(
        protocol="ATA", model="Micron_5300_MTFDDAK240TDS", temperature_c=27, power_on_hours=22926, power_cycles=23
    ),
    "SEAGATE_ST373453LC_26.json": dict(
        protocol="SCSI",
        model="SEAGATE ST373453LC",
        temperature_c=33,
        temperature_critical_c=68,
        power_on_hours=102880,
        scsi_grown_defects=260,
        smart_passed=True,
        capacity_bytes=73407820800,
    ),
}


def test_every_capture_is_covered():
    captures = {f for f in os.listdir(SMARTCTL_FIXTURES) if f.endswith(".json")}
    assert captures == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_capture_figures(name):
    health = _parse(name)
    for key, value in EXPECTED[name].items():
        assert getattr(health, key) == value, key


def test_scsi_uncorrected_errors_sum_read_write_verify():
    import json

    with open(_fixture("SEAGATE_ST373453LC_26.json")) as fh:
        log = json.load(fh)["scsi_error_counter_log"]
    expected = sum(log[d]["total_uncorrected_errors"] for d in ("read", "write", "verify") if d in log)
    assert _parse("SEAGATE_ST373453LC_26.json").scsi_uncorrected_errors == expected


def test_nvme_throttle_counters():
    h = _parse("nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json")
    assert h.throttle == {"warning_temp_time": 0, "critical_comp_time": 0}


def test_ata_raw_values_are_masked_to_the_count():
    # HGST attribute 3 (Spin_Up_Time) packs vendor bits in raw; the counters we read are plain.
    h = _parse("sat-HGST_Ultrastar_7K6000-HGST_HUS726040ALA614-sda.json")
    assert h.ata_reallocated_sectors == 0


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(BAD) if f != "README.md"))
def test_bad_inputs_give_one_clear_line(cli, name):
    res = cli("health", "--from-smartctl", os.path.join(BAD, name))
    assert res.code == 2
    assert res.err.count("\n") == 1 and res.err.startswith("disksleuth: ")
    assert "Traceback" not in res.err and res.out == ""


def test_smartctl_error_json_says_no_smart_data(cli):
    res = cli("health", "--from-smartctl", os.path.join(BAD, "smartctl-7.3-vda-unknown-type.json"))
    assert "no SMART data" in res.err and "Unable to detect device type" in res.err


def test_health_json_contract(cli):
    res = cli("health", "--json", "--from-smartctl", _fixture("nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json"))
    assert res.code == 0
    doc = res.json()
    assert doc["schema"] == "disksleuth/1"
    assert doc["device"]["model"] == "Samsung SSD 970 EVO Plus 250GB"
    for key in (
        "temperature_c",
        "temperature_warning_c",
        "temperature_critical_c",
        "power_on_hours",
        "power_cycles",
        "unsafe_shutdowns",
        "percentage_used",
        "available_spare_pct",
        "available_spare_threshold_pct",
        "media_errors",
        "error_log_entries",
        "critical_warning",
        "smart_passed",
        "ata_reallocated_sectors",
        "ata_pending_sectors",
        "ata_crc_errors",
        "sata_speed_current_gbps",
        "sata_speed_max_gbps",
        "lba_formats",
        "throttle",
    ):
        assert key in doc["health"], key
    assert doc["health"]["temperature_warning_c"] is None  # not in a capture made without -x


def test_health_on_this_machine_says_no_smart_data(cli):
    if not os.path.exists("/dev/vda") or not shutil.which("smartctl"):
        pytest.skip("needs /dev/vda and smartctl")
    res = cli("health", "/dev/vda")
    # vda is virtio here: the words check uses (no smartctl text, "Unable to detect device type").
    assert res.code == 2 and "no SMART on a virtual disk" in res.err and "Traceback" not in res.err


def test_missing_smartctl_names_the_package(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    # A character device goes to smartctl as given (a virtual disk like vda is told apart before smartctl).
    res = cli("health", "/dev/null")
    assert res.code == 2 and "apt-get install smartmontools" in res.err


def test_unknown_device(cli):
    res = cli("health", "/dev/does-not-exist")
    assert res.code == 2 and "no such block device" in res.err  # the same resolution and words as explain


def test_exit_status_words():
    assert decode_exit_status(0) == ()
    words = decode_exit_status(0b1000_1010)
    assert words == (
        "device open failed, or the device did not answer",
        "SMART status check returned DISK FAILING",
        "the self-test log contains errors",
    )


def test_critical_and_worn_findings():
    h = Health(
        critical_warning=("available spare below threshold",),
        available_spare_pct=5,
        available_spare_threshold_pct=10,
        percentage_used=91,
        smart_passed=False,
    )
    codes = {f.code: f for f in health_findings(h)}
    assert codes["health_critical"].severity == "critical" and codes["health_worn"].severity == "warn"
    assert "below its threshold" in codes["health_critical"].message
    grown = health_findings(Health(media_errors=3), {"media_errors": (1, 3)})
    assert grown[0].code == "health_critical" and "grew from 1 to 3" in grown[0].message
    assert health_findings(_parse("nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json")) == []


def test_lba_format_finding_says_destructive():
    formats = (LbaFormat(0, 512, 0, 2, True), LbaFormat(1, 4096, 0, 0, False))
    f = lba_format_finding(Health(lba_formats=formats))
    assert f is not None and f.code == "lba_format" and "--lbaf=1" in f.hint and "DESTRUCTIVE" in f.hint
    assert lba_format_finding(Health(lba_formats=(LbaFormat(0, 4096, 0, 0, True),))) is None


def test_lba_formats_from_smartctl_x_json():
    import json

    with open(_fixture("nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json")) as fh:
        doc = json.load(fh)
    # What smartctl -x adds (src/nvmeprint.cpp, "Supported LBA Sizes").
    doc["nvme_namespaces"][0]["lba_formats"] = [
        {"formatted": True, "data_bytes": 512, "metadata_bytes": 0, "relative_performance": 2},
        {"formatted": False, "data_bytes": 4096, "metadata_bytes": 0, "relative_performance": 1},
    ]
    doc["temperature"].update({"op_limit_max": 85, "critical_limit_max": 86})
    h = parse_smartctl_json(json.dumps(doc))
    assert [(f.data_bytes, f.in_use) for f in h.lba_formats] == [(512, True), (4096, False)]
    assert (h.temperature_warning_c, h.temperature_critical_c) == (85, 86)


def test_nvme_cli_id_ns_formats():
    text = '{"nsze": 1, "flbas": 1, "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}]}'
    formats = parse_nvme_id_ns_json(text)
    assert [(f.data_bytes, f.in_use, f.relative_performance) for f in formats] == [(512, False, 2), (4096, True, 0)]


def test_health_changes_only_lists_growth():
    before = Health(media_errors=0, error_log_entries=5, throttle={"warning_temp_time": 2})
    after = Health(media_errors=0, error_log_entries=7, throttle={"warning_temp_time": 4})
    assert health_changes(before, after) == {"error_log_entries": (5, 7), "throttle.warning_temp_time": (2, 4)}


def test_temperature_sampler_follows_a_changing_hwmon_tree(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(os.path.join(SYSFS, "nvme_new_format"), root, symlinks=True)
    path = hwmon_temp_input("nvme0n1", str(root))
    assert path is not None and path.endswith("hwmon1/temp1_input")
    assert read_temp_c(path) == 38.85

    def heat_up() -> None:
        for milli in (45000, 60000, 72000):
            time.sleep(0.25)
            with open(path, "w") as fh:
                fh.write(f"{milli}\n")

    writer = threading.Thread(target=heat_up)
    with TemperatureSampler(lambda: read_temp_c(path), interval_s=0.05) as sampler:
        writer.start()
        writer.join()
        time.sleep(0.2)
    values = [c for _, c in sampler.samples]
    assert values[0] == 38.85 and values[-1] == 72.0
    assert {45.0, 60.0} <= set(values)
    assert values == sorted(values)  # it only ever heated up
    times = [t for t, _ in sampler.samples]
    assert times == sorted(times)


def test_health_summary_reads_as_a_sentence(cli):
    res = cli("health", "--from-smartctl", os.path.join(SMARTCTL_FIXTURES, "WDC_WD20EFRX-68EUZN0_17.json"))
    assert "Nothing found: no warning signs in 17 SMART attributes and the error counters." in res.out
    res = cli("health", "--from-smartctl", os.path.join(SMARTCTL_FIXTURES, "nvme-null-CT250P2SSD8-nvme0.json"))
    assert "the error counters, wear." not in res.out
