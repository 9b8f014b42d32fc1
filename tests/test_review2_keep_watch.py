"""Review of issues 38 and 39 as a user, an engineer checking the numbers and an attacker would (REVIEW2): each test
is a defect seen by hand, on the real captures and trees the features were built on."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import SYSFS

from disksleuth.analysis.card_claims import emmc_health, emmc_worn
from disksleuth.analysis.health import health_findings
from disksleuth.probe.block import read_device

DATA = Path(__file__).parent / "data"
# linuxhw HUS724020ALA640: 89,379 power-on hours; its newest self-test is logged at 5,514 h, past ATA's 16-bit wrap.
HUS = DATA / "paste" / "smartctl" / "linuxhw-ata-HUS724020ALA640-D3974AD957F3.txt"
RUNNING = DATA / "smartctl-selftest" / "linuxhw-ata-HDS723020BLA642-63FCB196A088.txt"


def _health(cli, tmp_path: Path, path: Path) -> str:
    r = cli("health", "--no-save", "--db", str(tmp_path / "s.db"), "--from-smartctl", str(path))
    assert r.code in (0, 1), r.err
    return r.out


def test_the_last_self_test_line_unwraps_ata_hours_as_the_finding_does(cli, tmp_path: Path) -> None:
    # (89,379 mod 65,536) - 5,514 = 18,329 h: the finding said so, the line above it said 89,379 - 5,514 = 83,865.
    out = " ".join(_health(cli, tmp_path, HUS).split())
    assert "at 5,514 h (18,329 h ago)" in out
    assert "83,865" not in out


def test_a_running_self_test_is_not_named_twice(cli, tmp_path: Path) -> None:
    out = " ".join(_health(cli, tmp_path, RUNNING).split())
    assert "last self-test: running, 30% remaining" in out
    assert "self-test: self-test" not in out


def test_a_card_running_sdr104_takes_sdr104(cli) -> None:
    # The Goodram U3 V30 card runs SDR104 (debugfs ios); the registers alone only give SDR50 as a floor.
    doc = cli("list", "--json", "--sysfs-root", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2")).json()
    card = doc["devices"][0]["card"]
    assert card["timing"] == "sd uhs SDR104"
    assert card["card_max_timing"] == "sd uhs SDR104"


def _emmc(tmp_path: Path, life_time: str, pre_eol: str = "0x01"):
    root = tmp_path / "tree"
    shutil.copytree(os.path.join(SYSFS, "emmc_worn"), root, symlinks=True)
    device = (root / "sys" / "block" / "mmcblk1" / "device").resolve()
    (device / "life_time").write_text(life_time + "\n")
    (device / "pre_eol_info").write_text(pre_eol + "\n")
    return read_device("mmcblk1", str(root))


def test_emmc_health_warns_where_emmc_worn_does(tmp_path: Path) -> None:
    # JESD84-B51: 0x08 is "70-80% used", no warning yet (issue 39: warn at 0x09-0x0A); health said health_worn at
    # 0x08 (percentage_used 80, the top of the step) while list and check said nothing.
    for life, worn in (("0x08 0x01", False), ("0x09 0x01", True), ("0x01 0x0a", True)):
        dev = _emmc(tmp_path / life.replace(" ", "_"), life)
        h = emmc_health(dev)
        assert h is not None
        codes = {f.code for f in health_findings(h)}
        assert ("health_worn" in codes) is worn, (life, codes)
        assert (emmc_worn(dev) is not None) is worn, life


def test_a_negative_wear_figure_forecasts_nothing() -> None:
    # Hostile smartctl JSON with percentage_used -7 forecast "100% comes after about -637 more days".
    from disksleuth.analysis.wear import forecast_text, forecast_wear
    from disksleuth.model.health_history import HealthReading
    from disksleuth.model.run import Health

    h = Health(device="/dev/nvme0", protocol="NVMe", percentage_used=-7, power_on_hours=1000)
    f = forecast_wear(h, [])
    assert f is None or forecast_text(f, 1000) is None
    day = 86_400.0
    readings = [
        HealthReading(read_at_s=1.7e9 + d * day, hostname="h", device_name="sda", drive_key="k", serial_id=None,
                      percentage_used=p)
        for d, p in ((0, -50), (10, 3), (20, 3))
    ]  # fmt: skip
    f = forecast_wear(Health(device="sda", protocol="NVMe", percentage_used=3, power_on_hours=9000), readings)
    assert f is not None and forecast_text(f, 9000) == "No measurable wear in 10 days of readings."
    one = [*readings[1:2], HealthReading(read_at_s=1.7e9 + 11 * day, hostname="h", device_name="sda", drive_key="k",
                                         serial_id=None, percentage_used=3)]  # fmt: skip
    f = forecast_wear(Health(device="sda", protocol="NVMe", percentage_used=3, power_on_hours=9000), one)
    assert f is not None and forecast_text(f, 9000) == "No measurable wear in 1 day of readings."


def test_a_negative_error_log_count_is_no_count() -> None:
    from disksleuth.analysis.error_logs import summary_lines
    from disksleuth.probe.error_logs import parse_error_log

    doc = {"nvme_smart_health_information_log": {"num_err_log_entries": -3},
           "nvme_error_information_log": {"table": [{"error_count": -1, "status_field": {"string": "x"}}]}}  # fmt: skip
    log = parse_error_log(doc)
    assert log is not None and log.count is None and not log.entries
    assert not any("-3" in line for line in summary_lines(log))


def test_a_hostile_self_test_log_gives_no_absurd_hours() -> None:
    # A text log row "99999999999999999999999 -5" was shown as a test "at 99,999,999,999,999,999,999,999 h".
    from disksleuth.probe.smart_selftests import parse_self_test_log

    rows = [
        {"type": {"string": "Extended offline"}, "status": {"value": 121, "string": "x" * 100_000, "passed": False},
         "lifetime_hours": hours, "lba": lba}
        for hours, lba in ((10**23, -5), (-3, 1.5), (1e300, 2**64), (64229.0, 2769432))
    ]  # fmt: skip
    tests = parse_self_test_log({"ata_smart_self_test_log": {"extended": {"table": rows}}})
    assert [t.power_on_hours for t in tests] == [None, None, None, 64229]
    assert [t.failing_lba for t in tests] == [None, None, None, 2769432]
    assert all(len(t.status) <= 200 for t in tests)


def test_an_implausible_temperature_and_inverted_limits_are_said(cli, tmp_path: Path) -> None:
    import json

    doc = json.loads((DATA / "drive-logs" / "nvme-CT250P2SSD8-hot.json").read_text())
    doc["temperature"] = {"current": 255, "op_limit_max": 70, "critical_limit_max": 85}
    doc["nvme_smart_health_information_log"]["temperature"] = 255
    (tmp_path / "hot.json").write_text(json.dumps(doc))
    # 255 °C is a bridge's placeholder, not judged: the row said "255 °C" above "nothing found".
    out = " ".join(_health(cli, tmp_path, tmp_path / "hot.json").split())
    assert "255 °C (not a plausible reading: not judged)" in out
    doc["temperature"] = {"current": 50, "op_limit_max": 90, "critical_limit_max": 60}
    doc["nvme_smart_health_information_log"]["temperature"] = 50
    (tmp_path / "inv.json").write_text(json.dumps(doc))
    # A WCTEMP of 90 above a CCTEMP of 60: the row said "warning at 60 °C (the drive's WCTEMP)".
    out = " ".join(_health(cli, tmp_path, tmp_path / "inv.json").split())
    assert "warning at 60 °C (the drive's CCTEMP; its warning limit, 90 °C, is above it)" in out


def test_host_limits_card_advises_the_card_s_own_family(cli) -> None:
    # The one hint named both families: "UHS-I (SDR50/SDR104), or HS200/HS400 for eMMC", for an SD card and an eMMC.
    for tree, want, never in (("sd_sandisk_sc16g_hs_host", "SD UHS-I SDR50", "eMMC"),
                              ("emmc_hs400_on_hs200_host", "eMMC HS400", "UHS-I")):  # fmt: skip
        doc = cli("list", "--json", "--sysfs-root", os.path.join(SYSFS, tree)).json()
        hint = next(f["hint"] for f in doc["devices"][0]["findings"] if f["code"] == "host_limits_card")
        assert want in hint and never not in hint, hint


def test_health_tells_the_worst_finding_first(cli, tmp_path: Path) -> None:
    # HD103SJ: media_errors (warn: "watch these counters ... replace the drive if they grow") came above
    # self_test_failed (critical: "back up this drive now and replace it").
    out = _health(cli, tmp_path, DATA / "smartctl-selftest" / "linuxhw-ata-HD103SJ-91BBA7CDEF01.txt")
    assert 0 <= out.index("critical · self_test_failed") < out.index("warn · media_errors")


def test_long_error_log_lines_wrap_under_themselves(cli, tmp_path: Path, monkeypatch) -> None:
    # At 80 columns "(READ DMA)" was cut to a "DMA)" line at column 0, under the table's labels.
    monkeypatch.setenv("COLUMNS", "80")
    out = _health(cli, tmp_path, DATA / "smartctl-selftest" / "linuxhw-ata-HD103SJ-91BBA7CDEF01.txt")
    lines = out.splitlines()
    assert "      DMA)" in lines
    assert not any(line.startswith("DMA)") for line in lines)
    assert all(len(line) <= 80 for line in lines)
