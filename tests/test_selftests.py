"""Issue 38 item 2: the self-test log judged on real reports, progress read from real output, and fix hints that
never advise the test the log shows already failed."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disksleuth.analysis.health import health_findings
from disksleuth.model.run import Health
from disksleuth.probe.smart_parse import parse_smartctl_json
from disksleuth.probe.smartctl_text import parse_smartctl_text

DATA = Path(__file__).parent / "data"
SELFTEST = DATA / "smartctl-selftest"

# Real reports whose newest self-test is an extended one that ended "Completed: read failure":
# (file, first failing LBA, its age in power-on hours).
NEWEST_LONG_FAILED = [
    ("linuxhw-ata-HDS721050CLA360-CDE9E5A155DC.txt", 13_749_748, 23_714),  # 71,448 h now: the log's hours wrapped
    ("linuxhw-ata-HD103SJ-91BBA7CDEF01.txt", 2_769_432, 62),
    ("linuxhw-ata-ST10000NM0016-1TT101-6B4ADAE142C4.txt", 306_526_128, 901),
    ("linuxhw-ata-MB8000GFECR-265297FF8485.txt", 293_776, 7_255),
]


def _text_health(path: Path) -> Health:
    return parse_smartctl_text(path.read_text()).health


@pytest.mark.parametrize(("name", "lba", "age_h"), NEWEST_LONG_FAILED, ids=[n[0][12:30] for n in NEWEST_LONG_FAILED])
def test_newest_failed_long_test_is_critical_with_lba_and_age(name: str, lba: int, age_h: int) -> None:
    findings = health_findings(_text_health(SELFTEST / name))
    failed = [f for f in findings if f.code == "self_test_failed"]
    assert len(failed) == 1
    f = failed[0]
    assert f.severity == "critical"
    assert f.evidence["failing_lba"] == lba and f.evidence["age_hours"] == age_h and f.evidence["newest"] is True
    assert f"{lba:,}" in f.message and f"{age_h:,} power-on hours ago" in f.message


@pytest.mark.parametrize(("name", "lba", "age_h"), NEWEST_LONG_FAILED, ids=[n[0][12:30] for n in NEWEST_LONG_FAILED])
def test_no_hint_advises_the_long_test_that_already_failed(name: str, lba: int, age_h: int) -> None:
    """The defect: media_errors and health_critical said "run a long self-test (smartctl -t long)" to drives whose
    newest long self-test had failed."""
    findings = health_findings(_text_health(SELFTEST / name))
    assert findings
    for f in findings:
        assert "smartctl -t long" not in f.hint, (f.code, f.hint)
        assert "run a long self-test" not in f.hint.lower(), (f.code, f.hint)


def test_the_failed_long_test_is_named_in_the_advice_instead() -> None:
    health = _text_health(SELFTEST / "linuxhw-ata-ST10000NM0016-1TT101-6B4ADAE142C4.txt")
    media = next(f for f in health_findings(health) if f.code == "media_errors")
    assert "already failed" in media.hint and "306,526,128" in media.hint


def test_an_earlier_failure_with_a_later_pass_is_info_and_the_ages_follow_the_wrapped_log() -> None:
    """HUS724020ALA640 at 89,379 h: "# 1 Short ... passed 5514", "# 2 Short ... read failure 12309". The log's
    hours are 16-bit: the pass is 18,329 h old and the failure older still (77,070 h), never younger than it."""
    from disksleuth.analysis.selftests import self_test_age_hours

    health = _text_health(DATA / "paste" / "smartctl" / "linuxhw-ata-HUS724020ALA640-D3974AD957F3.txt")
    f = next(f for f in health_findings(health) if f.code == "self_test_failed")
    assert f.severity == "info" and f.evidence["newest"] is False
    assert f.evidence["failing_lba"] == 2_901_265_099
    assert f.evidence["age_hours"] == 77_070
    assert self_test_age_hours(health, health.self_tests[0]) == 18_329
    # A short test passing later does not cover the surface: the long test is still worth advising.
    assert "smartctl -t long" in f.hint


def test_a_drive_without_a_self_test_for_a_month_is_said() -> None:
    health = _text_health(DATA / "paste" / "smartctl" / "linuxhw-ata-HUS724020ALA640-D3974AD957F3.txt")
    f = next(f for f in health_findings(health) if f.code == "self_test_overdue")
    assert f.severity == "info" and f.evidence["age_hours"] == 18_329
    # A test run a week of power-on ago is not overdue.
    recent = replace(health, power_on_hours=65_536 + 5_514 + 7 * 24)
    assert not [f for f in health_findings(recent) if f.code == "self_test_overdue"]


def test_an_empty_log_on_a_drive_that_ran_for_years_is_said() -> None:
    # "No self-tests have been logged."
    health = _text_health(SELFTEST / "linuxhw-ata-HDN721010ALE604-F8E1CFC996DE.txt")
    f = next(f for f in health_findings(health) if f.code == "self_test_overdue")
    assert f.severity == "info" and "log is empty" in f.message and "32,508 power-on hours" in f.message
    # A new drive (a week of running) is not asked for one yet.
    assert not [f for f in health_findings(replace(health, power_on_hours=168)) if f.code == "self_test_overdue"]


def test_json_self_test_log_and_polling_minutes_from_a_real_capture() -> None:
    health = parse_smartctl_json((DATA / "smartctl-x" / "scrutiny-smart-ata-full.json").read_text())
    assert health.self_test_minutes == {"short": 2, "extended": 85}
    assert len(health.self_tests) > 3 and all(t.passed for t in health.self_tests[:3])
    assert health.self_tests[0].power_on_hours == 14_417
    codes = {f.code for f in health_findings(health)}
    assert "self_test_failed" not in codes
    assert "self_test_overdue" not in codes  # 134 h ago


def test_progress_from_a_real_report_with_a_test_running() -> None:
    """ "Self-test execution status: ( 243) Self-test routine in progress... 30% of test remaining." and the
    drive's own estimates ("recommended polling time: ( 321) minutes")."""
    from disksleuth.analysis.selftests import self_test_advice

    health = _text_health(SELFTEST / "linuxhw-ata-HDS723020BLA642-63FCB196A088.txt")
    assert health.self_test is not None and health.self_test.in_progress and health.self_test.remaining_pct == 30
    assert health.self_test_minutes == {"short": 1, "extended": 321}
    assert "running now (30% left)" in self_test_advice(health)
    assert not [f for f in health_findings(health) if f.code.startswith("self_test")]


def test_progress_from_json_execution_status() -> None:
    """The same status in smartctl's JSON shape (ataprint.cpp: value 0xF3, remaining_percent 30), and NVMe's
    current operation with its completion (nvmeprint.cpp)."""
    doc = json.loads((DATA / "smartctl-x" / "scrutiny-smart-ata-full.json").read_text())
    doc["ata_smart_data"]["self_test"]["status"] = {
        "value": 243,
        "string": "in progress, 30% remaining",
        "remaining_percent": 30,
    }
    health = parse_smartctl_json(json.dumps(doc))
    assert health.self_test is not None and health.self_test.in_progress and health.self_test.remaining_pct == 30
    nvme = json.loads((DATA / "smartctl" / "nvme-null-CT250P2SSD8-nvme0.json").read_text())
    nvme["nvme_self_test_log"] = {
        "current_self_test_operation": {"value": 2, "string": "Extended self-test in progress"},
        "current_self_test_completion_percent": 40,
    }
    running = parse_smartctl_json(json.dumps(nvme)).self_test
    assert running is not None and running.in_progress and running.remaining_pct == 60 and running.kind == "Extended"


def test_nvme_log_entries_judged() -> None:
    """NVMe results (nvmeprint.cpp): 7 "Completed: failed segments" is a failure, 1 an abort, 0 a pass."""
    from disksleuth.analysis.selftests import self_test_advice

    nvme = json.loads((DATA / "smartctl" / "nvme-null-CT250P2SSD8-nvme0.json").read_text())
    poh = nvme["power_on_time"]["hours"]
    nvme["nvme_self_test_log"] = {
        "current_self_test_operation": {"value": 0, "string": "No self-test in progress"},
        "table": [
            {
                "self_test_code": {"value": 1, "string": "Short"},
                "self_test_result": {"value": 1, "string": "Aborted: Self-test command"},
                "power_on_hours": poh - 2,
            },
            {
                "self_test_code": {"value": 2, "string": "Extended"},
                "self_test_result": {"value": 7, "string": "Completed: failed segments"},
                "power_on_hours": poh - 5,
                "lba": 123456,
            },
        ],
    }
    health = parse_smartctl_json(json.dumps(nvme))
    f = next(f for f in health_findings(health) if f.code == "self_test_failed")
    assert f.severity == "critical" and f.evidence["age_hours"] == 5 and f.evidence["failing_lba"] == 123456
    assert "already failed" in self_test_advice(health)


# --- health DEV --self-test: the start path, with the real smartctl ------------------------------


def test_self_test_on_a_loop_device_is_one_line_and_exit_2(cli, loopdev: str, tmp_path: Path) -> None:
    """A loop device has no SMART: refused in the words `health` uses, before smartctl is asked."""
    r = cli("health", loopdev, "--self-test", "short", "--db", f"sqlite:///{tmp_path}/s.sqlite")
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and "no SMART on a virtual disk" in r.err and "loop device" in r.err


@pytest.mark.skipif(shutil.which("smartctl") is None, reason="smartctl missing")
def test_self_test_refused_by_the_real_smartctl_is_one_line(cli, tmp_path: Path) -> None:
    """/dev/null is a character device: it goes to smartctl as given (as /dev/sg0 would), and smartctl's own
    refusal ("Unable to detect device type") comes back as one line, exit 2; --json says it as an error."""
    r = cli("health", "/dev/null", "--self-test", "long", "--no-save")
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and "did not start the self-test" in r.err and "Unable to detect" in r.err
    r = cli("health", "/dev/null", "--self-test", "long", "--no-save", "--json")
    assert r.code == 2 and "error" in json.loads(r.out)


def test_self_test_usage(cli) -> None:
    r = cli("health", "--self-test", "short")
    assert r.code == 2 and "--self-test needs a DEVICE" in r.err
    r = cli("health", "/dev/sda", "--self-test", "medium")
    assert r.code == 2 and "invalid choice" in r.err


def test_start_output_parsed() -> None:
    """What smartctl prints for -t (lib/atacmds.cpp ataSmartTest, src/ataprint.cpp, nvmeprint.cpp)."""
    from disksleuth.probe.smart_selftests import parse_start_output

    started = parse_start_output(
        'Drive command "Execute SMART Extended self-test routine immediately in off-line mode" successful.\n'
        "Testing has begun.\nPlease wait 321 minutes for test to complete.\n"
        "Test will complete after Sat Nov 28 05:10:01 2026 UTC\nUse smartctl -X to abort test.\n"
    )
    assert started.outcome == "started" and started.minutes == 321
    running = parse_start_output(
        "Can't start self-test without aborting current test (30% remaining),\n"
        "add '-t force' option to override, or run 'smartctl -X' to abort test.\n"
    )
    assert running.outcome == "running" and running.remaining_pct == 30
    nvme = parse_start_output("Can't start self-test without aborting current test (40% completed)\n")
    assert nvme.outcome == "running" and nvme.remaining_pct == 60
    assert parse_start_output("Self-test has begun (NSID 0x1)\nUse smartctl -X to abort test\n").outcome == "started"
    assert parse_start_output("x" * 100_000 + "\n" + "Testing has begun.\n").outcome == "started"


def test_the_result_is_recorded_in_the_health_history(cli, tmp_path: Path) -> None:
    """A reading keeps its newest self-test result: `health --history` judges it again from the store alone (the
    failure, its hint that names the failed test instead of advising it) and shows it in a column."""
    db = f"sqlite:///{tmp_path}/s.sqlite"
    report = SELFTEST / "linuxhw-ata-ST10000NM0016-1TT101-6B4ADAE142C4.txt"
    r = cli("health", "--from-smartctl", str(report), "--as-device", "sdz", "--db", db)
    assert r.code == 1
    r = cli("health", "--history", "sdz", "--db", db, "--json")
    doc = json.loads(r.out)["health_history"]
    failed = [f for f in doc["findings"] if f["code"] == "self_test_failed"]
    assert len(failed) == 1 and failed[0]["severity"] == "critical"
    assert failed[0]["evidence"]["failing_lba"] == 306_526_128 and failed[0]["evidence"]["age_hours"] == 901
    assert not [f for f in doc["findings"] if "smartctl -t long" in f["hint"]]
    assert doc["readings"][-1]["counters"]["self_test.passed"] == 0
    r = cli("health", "--history", "sdz", "--db", db)
    assert "long FAILED 36,624 h" in r.out


# --- any input gives a model, never an exception ------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    [
        "ata_smart_self_test_log",
        "nvme_self_test_log",
        "scsi_self_test_0",
        "ata_smart_data",
        "scsi_self_test_status",
        "host_writes",
        "nvme_smart_health_information_log",
        "ata_smart_attributes",
        "scsi_error_counter_log",
        "logical_block_size",
        "ata_device_statistics",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=5))
def test_self_test_and_data_parsers_take_any_document(doc: dict) -> None:
    from disksleuth.probe.smart_data_units import data_bytes
    from disksleuth.probe.smart_selftests import (
        has_self_test_log,
        parse_running_self_test,
        parse_self_test_log,
        parse_self_test_minutes,
    )

    log = parse_self_test_log(doc)
    assert len(log) <= 21
    parse_running_self_test(doc)
    assert all(0 < v < 100_000 for v in parse_self_test_minutes(doc).values())
    has_self_test_log(doc)
    for direction in ("write", "read"):
        n = data_bytes(doc, direction)
        assert n is None or 0 <= n < 10**19


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_start_output_takes_any_text(text: str) -> None:
    from disksleuth.probe.smart_selftests import parse_start_output

    out = parse_start_output(text)
    assert out.outcome in ("started", "running", "unsupported", "unknown")
