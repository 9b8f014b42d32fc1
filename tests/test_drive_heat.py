"""Temperature judged against the drive's own limits (issue 38 item 1): temperature_high at the warning and the
critical limit, thermal_throttled when the heat counters grow (in a run, between stored readings), units on every
figure, and the same judgement in health, check, explain pastes, the exporter and top.

Real captures only (tests/data/drive-logs/SOURCES.md):
- nvme-CT250P2SSD8-hot.json is the shared fixture /work/shared/fixtures/smartctl/nvme-null-CT250P2SSD8-nvme0.json
  (smartctl_exporter, Apache-2.0) with three changes, the issue's reproduction: the temperature set to 86 °C (both
  `temperature.current` and the health log's), `warning_temp_time` 0 -> 1,873 minutes, and the limits smartctl -x
  prints added as `temperature.op_limit_max` 70 and `critical_limit_max` 85 (WCTEMP, CCTEMP).
- nvme-CT250P2SSD8-hot-next-day.json: the same, a day later (local_time + 86,400 s, power-on hours + 24), at 74 °C,
  `warning_temp_time` 1,910 and three refused commands in its error log (see test_drive_error_logs.py).
- the pasted texts of tests/data/paste/smartctl (py-SMART, LGPL-2.1+; linuxhw, CC BY 4.0), unchanged.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from conftest import HERE, needs_fio, needs_loop
from test_health_check_path import smart_loop as _smart_loop

LOGS = os.path.join(HERE, "data", "drive-logs")
PASTES = os.path.join(HERE, "data", "paste", "smartctl")
SHARED = os.path.join(HERE, "data", "smartctl")  # the shared fixtures, copied unchanged
HOT = os.path.join(LOGS, "nvme-CT250P2SSD8-hot.json")
HOT_LATER = os.path.join(LOGS, "nvme-CT250P2SSD8-hot-next-day.json")


def _json_health(path: str):  # noqa: ANN202
    from disksleuth.probe.smart_parse import parse_smartctl_json

    with open(path) as fh:
        return parse_smartctl_json(fh.read())


def _text_health(name: str):  # noqa: ANN202
    from disksleuth.probe.smartctl_text import parse_smartctl_text

    with open(os.path.join(PASTES, name)) as fh:
        return parse_smartctl_text(fh.read()).health


def _codes(findings) -> dict[str, str]:  # noqa: ANN001
    return {f.code: f.severity for f in findings}


# --- the reproduction, as a user runs it ------------------------------------------------------------------


def test_a_drive_over_its_critical_limit_is_temperature_high_critical_with_minutes(cli) -> None:  # noqa: ANN001
    """86 °C over WCTEMP 70 / CCTEMP 85 with 1,873 minutes above warning: was "Nothing found", exit 0, and
    "warning temp time 1,873" without a unit."""
    res = cli("health", "--no-save", "--from-smartctl", HOT)
    assert res.code == 1, res.out + res.err
    assert "Nothing found" not in res.out
    assert "critical · temperature_high" in res.out
    assert "86 °C, at or above its critical temperature 85 °C (the drive's CCTEMP; warning at 70 °C)" in res.out
    # every heat figure with its unit: the table row and the finding
    assert "time above the warning temperature   1,873 min (31 h 13 min)" in res.out
    assert "warning temp time    1,873" not in res.out
    assert "warning at                           70 °C (the drive's WCTEMP)" in res.out

    res = cli("health", "--no-save", "--json", "--from-smartctl", HOT)
    doc = res.json()
    from test_json_schema import assert_valid

    assert_valid(doc, "health")
    (hot,) = [f for f in doc["findings"] if f["code"] == "temperature_high"]
    assert hot["severity"] == "critical"
    assert hot["evidence"]["critical_c"] == 85 and hot["evidence"]["warning_c"] == 70
    assert hot["evidence"]["warning_temp_time_min"] == 1873
    assert doc["summary"].startswith("1 finding")


def test_the_exporter_and_its_alerts_judge_the_same_limits() -> None:
    """The rules alert on disksleuth_health_temperature_limit_celsius: the same figures the CLI judges against,
    the class default included (a drive that reports none had no alert before, and a CLI finding)."""
    from disksleuth.model import Device, LinkChain
    from disksleuth.model.exporter import DiskState, Snapshot
    from disksleuth.present.prometheus import families

    hot = _json_health(HOT)
    hdd = replace(_json_health(os.path.join(SHARED, "WDC_WD20EFRX-68EUZN0_17.json")), temperature_c=62)
    disks = tuple(
        DiskState(Device(name=n, path=f"/dev/{n}", transport="nvme"), LinkChain((), None, None, None), (), h, 0.0)
        for n, h in (("nvme0n1", hot), ("sda", hdd))
    )
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for m in families(Snapshot(disks, (), None, "h"))
        for s in m.samples
    }

    def value(name: str, **labels: str) -> float | None:
        return samples.get((name, tuple(sorted(labels.items()))))

    limit = "disksleuth_health_temperature_limit_celsius"
    assert value(limit, device="nvme0n1", level="warning", source="drive") == 70
    assert value(limit, device="nvme0n1", level="critical", source="drive") == 85
    assert value(limit, device="sda", level="warning", source="default") == 60  # a 5,400 rpm disk: HDD default
    assert value("disksleuth_health_heat_seconds", device="nvme0n1", counter="warning_temp_time") == 1873 * 60
    assert value("disksleuth_health_error_log_entries", device="nvme0n1", kind="NVMe") == 1


# --- the limits: the drive's own, else a class default that is said ----------------------------------------------


def test_limits_come_from_each_protocol_and_a_default_is_said() -> None:
    from disksleuth.analysis.temperature import limits_of, temperature_high

    # NVMe WCTEMP/CCTEMP from a text paste (py-SMART nvme_11: "Warning  Comp. Temp. Threshold: 82 Celsius")
    nvme = _text_health("pysmart-nvme_11_issue_75-_-d_nvme_--all__dev_sda.txt")
    lim = limits_of(nvme)
    assert (lim.warning_c, lim.critical_c, lim.default_for) == (82, 85, None)
    # ATA SCT status text: "Min/Max recommended Temperature: 0/60", "Min/Max Temperature Limit: -40/70"
    ata = _text_health("linuxhw-ata-HDS722020ALA330-4D9F4036185B.txt")
    assert (ata.temperature_warning_c, ata.temperature_critical_c) == (60, 70)
    # ATA SCT in JSON (scrutiny smart-ata-failed-scrutiny: op_limit_max 70, limit_max 70), an SSD
    sct = _json_health(os.path.join(LOGS, "scrutiny-smart-ata-failed-scrutiny.json"))
    f = temperature_high(replace(sct, temperature_c=70))
    assert f is not None and f.severity == "critical" and "(the drive's SCT limit" in f.message
    assert temperature_high(sct) is None  # 33 °C
    # SCSI trip temperature 60 (scrutiny smart-scsi2): critical; no warning of its own, the HDD default said
    scsi = _json_health(os.path.join(LOGS, "scrutiny-smart-scsi2.json"))
    lim = limits_of(scsi)
    assert lim.critical_c == 60 and lim.critical_source == "the drive's trip temperature"
    assert lim.warning_source == "class default" and lim.warning_c == 60
    # a RAID controller's trip of 0 is no limit: the class defaults, and 0 °C is not hot
    raid = _json_health(os.path.join(LOGS, "scrutiny-smart-raid.json"))
    assert raid.temperature_critical_c is None and temperature_high(raid) is None
    # an SSD reporting no limit (Micron 5300, rotation_rate 0) at 72 °C: warn, and the message says it is a default
    micron = _json_health(
        os.path.join(SHARED, "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json")
    )
    f = temperature_high(replace(micron, temperature_c=72))
    assert f is not None and f.severity == "warn"
    assert "72 °C, at or above its warning temperature 70 °C (class default for a SATA/SAS SSD; the drive " in f.message


def test_implausible_limits_are_no_limits() -> None:
    from disksleuth.analysis.temperature import limits_of
    from disksleuth.model.run import Health

    lim = limits_of(Health(protocol="NVMe", temperature_c=40, temperature_warning_c=0, temperature_critical_c=255))
    assert (lim.warning_c, lim.critical_c) == (70, 80) and lim.default_for and "NVMe" in lim.default_for
    lim = limits_of(Health(protocol="NVMe", temperature_warning_c=90, temperature_critical_c=80))
    assert (lim.warning_c, lim.critical_c) == (80, 80)  # a warning above the critical one: the critical decides
    from disksleuth.analysis.temperature import temperature_high

    assert temperature_high(Health(protocol="ATA", temperature_c=255)) is None  # a placeholder, not a fire


# --- heat counters: units, growth in a run, growth between readings -----------------------------------------------


def test_lifetime_heat_with_no_earlier_reading_is_info_with_units() -> None:
    from disksleuth.analysis.health import health_findings

    h = _text_health("pysmart-issue_53-_-d_nvme_--all__dev_nvme0.txt")  # "Warning Comp. Temperature Time: 284"
    assert h.throttle["warning_temp_time"] == 284
    (f,) = [f for f in health_findings(h) if f.code == "thermal_throttled"]
    assert f.severity == "info"
    assert "time above the warning temperature 284 min (4 h 44 min)" in f.message
    assert "light throttling (thermal management 1) started 18 times" in f.message
    assert "time in heavy throttling (thermal management 2) 15,910 s (4 h 25 min)" in f.message
    assert f.evidence["units"]["warning_temp_time"] == "min"


def test_heat_that_grew_during_a_run_is_thermal_throttled_unless_check_saw_the_dip() -> None:
    from conftest import result_with_series

    from disksleuth.analysis.health import health_findings
    from disksleuth.analysis.steady import annotate
    from disksleuth.analysis.verdicts import Figures, verdicts
    from disksleuth.model import Device, LinkChain

    h = _json_health(HOT_LATER)
    grew = {"throttle.warning_temp_time": (1873, 1910)}
    (f,) = [f for f in health_findings(h, grew) if f.code == "thermal_throttled"]
    assert f.severity == "warn" and "1,873 → 1,910 min (+37 min)" in f.message and "during the run" in f.message
    assert f.evidence["warning_temp_time"] == [1873, 1910]
    dev = Device(name="nvme0n1", path="/dev/nvme0n1", transport="nvme")
    chain = LinkChain((), None, None, None)
    found = verdicts(dev, chain, Figures(), health=h, health_changes=grew)
    assert "thermal_throttled" in _codes(found)
    # with a dip in throughput check's thermal_throttling says it, with the same counter: one finding, not two
    dip = annotate(result_with_series([3400, 3400, 3300, 1600, 1500, 1500], start_s=2.0), ramp_s=1.0,
                   stopped_early=False, adaptive=False)  # fmt: skip
    found = verdicts(dev, chain, Figures(), health=h, health_changes=grew, tests=[dip])
    assert "thermal_throttling" in _codes(found) and "thermal_throttled" not in _codes(found)


def test_heat_that_grew_between_stored_readings_is_thermal_throttled(tmp_path) -> None:  # noqa: ANN001
    """Two saved outputs of the same drive a day apart, through a real SQLite store."""
    from disksleuth.run.health import drive_health

    db = str(tmp_path / "store.sqlite")
    first = drive_health(from_smartctl=HOT, db=db)
    assert _codes(first.findings)["temperature_high"] == "critical"
    later = drive_health(from_smartctl=HOT_LATER, db=db)
    codes = _codes(later.findings)
    assert codes["temperature_high"] == "warn"  # 74 °C: over 70, under 85
    (f,) = [f for f in later.findings if f.code == "thermal_throttled"]
    assert f.severity == "warn"
    assert "time above the warning temperature 1,873 → 1,910 min (+37 min)" in f.message
    assert "since 2009-02-13 23:31 UTC" in f.message
    # the same reading again: nothing grew since the one before it... but the day's window still holds the growth
    again = drive_health(from_smartctl=HOT_LATER, db=db)
    assert "thermal_throttled" in _codes(again.findings)


def test_growth_is_counted_from_the_oldest_reading_of_the_last_day() -> None:
    from disksleuth.analysis.temperature import GROWTH_WINDOW_S, baseline, counter_growth
    from disksleuth.model.health_history import HealthReading

    def reading(t: float, minutes: int) -> HealthReading:
        return HealthReading(t, "h", "nvme0", "k", None, counters={"throttle.warning_temp_time": minutes})

    day = GROWTH_WINDOW_S
    series = [reading(0, 10), reading(day / 2, 12), reading(day, 12)]
    assert baseline(series) == series[0]  # a day back from the newest, inclusive
    assert counter_growth(series, ["throttle.warning_temp_time"])[0] == {"throttle.warning_temp_time": (10, 12)}
    # two days on with no change: the growth is history
    series.append(reading(3 * day, 12))
    assert counter_growth(series, ["throttle.warning_temp_time"])[0] == {}
    # a drop (another drive, a reset) is no growth
    assert counter_growth([reading(0, 50), reading(60, 3)], ["throttle.warning_temp_time"])[0] == {}


# --- explain pastes and top ---------------------------------------------------------------------------------------


def test_an_explained_paste_cites_the_heat_line(cli, tmp_path) -> None:  # noqa: ANN001
    with open(os.path.join(PASTES, "pysmart-issue_53-_-d_nvme_--all__dev_nvme0.txt")) as fh:
        text = fh.read().replace("Temperature:                        45 Celsius", "Temperature: 84 Celsius")
    text = text.replace("Temperature: 45 Celsius", "Temperature: 84 Celsius")
    paste = tmp_path / "paste.txt"
    paste.write_text(text)
    res = cli("explain", "--json", str(paste))
    doc = json.loads(res.out)
    codes = {f["code"]: f for f in doc["findings"]}
    assert codes["temperature_high"]["severity"] == "critical"  # 84 °C over CCTEMP 82
    assert "(the drive's CCTEMP; warning at 73 °C)" in codes["temperature_high"]["message"]
    assert (
        "Over its life: time above the warning temperature 284 min (4 h 44 min)" in codes["temperature_high"]["message"]
    )
    assert codes["temperature_high"]["source"]["line"] == 37  # "Temperature: 84 Celsius"
    assert "thermal_throttled" not in codes  # its lifetime figures are in temperature_high's message already


@pytest.mark.parametrize(
    ("temp", "warn", "crit", "severity"),
    [(71.0, 70.0, 80.0, "warn"), (86.0, 70.0, 85.0, "critical"), (69.0, 70.0, 85.0, None), (90.0, 255.0, 0.0, None)],
)
def test_top_judges_hwmon_limits_as_health_judges_smartctl(temp, warn, crit, severity) -> None:  # noqa: ANN001
    from disksleuth.analysis.top import thermal
    from disksleuth.model.top import DriveTemperature

    f = thermal(DriveTemperature("nvme0n1", temp, warn, crit))
    if severity is None:
        assert f is None
        return
    assert f is not None and f.severity == severity and f.code == "thermal_throttling"
    which = "critical" if severity == "critical" else "warning"
    assert f"{temp:g} °C, at or above its {which} temperature" in f.message and "hwmon temp1_" in f.message


smart_loop = _smart_loop  # the fixture: a loop device whose `smartctl` prints $REMAIN_SMARTCTL_CAPTURE


@needs_fio
@needs_loop
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.root
def test_check_names_the_hot_drive_and_its_limits(smart_loop, cli, monkeypatch) -> None:  # noqa: ANN001, F811
    """check on a real loop device (real fio, 1 s) whose `smartctl` prints the hot capture (as test_health_check_path
    does: a loop device has no SMART): the header shows the limits, and temperature_high is among the findings."""
    monkeypatch.setenv("REMAIN_SMARTCTL_CAPTURE", HOT)
    res = cli("check", smart_loop, "--time", "1", "--engine", "libaio", "--no-save")
    assert "Traceback" not in res.err, res.err
    assert "86 °C (warning 70 °C, critical 85 °C)" in res.out, res.out
    assert "critical · temperature_high" in res.out and res.code == 1


def test_the_nvme_temperature_bit_is_heat_not_a_failing_drive() -> None:
    """Critical warning bit 1 alone was health_critical, "plan to replace it": a hot drive is not a failing one."""
    from disksleuth.analysis.health import health_findings

    hot = replace(_json_health(HOT), critical_warning=("temperature above or below threshold",))
    codes = _codes(health_findings(hot))
    assert "health_critical" not in codes and codes["temperature_high"] == "critical"
    # the bit with a composite temperature under the limits: still said, at warn
    cool = replace(hot, temperature_c=50)
    (f,) = [f for f in health_findings(cool) if f.code == "temperature_high"]
    assert f.severity == "warn" and "out of its own thresholds" in f.message and "50 °C" in f.message
    # another bit still is health_critical
    worn = replace(hot, critical_warning=("temperature above or below threshold", "media placed in read-only mode"))
    assert _codes(health_findings(worn))["health_critical"] == "critical"


def test_the_history_table_shows_the_heat_minutes_and_the_error_log(capsys) -> None:  # noqa: ANN001
    from disksleuth.model.health_history import HealthReading, HistoryView
    from disksleuth.present.health_view import render_history
    from disksleuth.run.health_history import reading_of

    readings = [
        reading_of(_json_health(p), device_name="nvme0", source="file", read_at_s=t, key=b"k" * 32, hostname="vm")
        for p, t in ((HOT, 1234567890.0), (HOT_LATER, 1234654290.0))
    ]
    assert isinstance(readings[0], HealthReading)
    render_history(HistoryView("nvme0", "vm", readings, []))
    out = capsys.readouterr().out
    assert "warn temp min" in out and "error log" in out
    assert "1,873" in out and "1,910" in out


def test_growth_between_readings_gives_way_to_a_runs_own_throttling_finding() -> None:
    from disksleuth.analysis.temperature import with_growth
    from disksleuth.model import Finding
    from disksleuth.model.health_history import HealthReading

    series = [
        HealthReading(0.0, "h", "nvme0", "k", None, counters={"throttle.warning_temp_time": 10}),
        HealthReading(60.0, "h", "nvme0", "k", None, counters={"throttle.warning_temp_time": 12}),
    ]
    (grown,) = with_growth([], series, "since then")
    assert grown.code == "thermal_throttled" and grown.severity == "warn"
    run_said = Finding("thermal_throttling", "warn", "m", {}, "h", "nvme0n1")
    assert with_growth([run_said], series, "since then") == [run_said]
