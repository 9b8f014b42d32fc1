"""The whole self-test log, the test running now and the drive's own estimate of each test's duration, from
smartctl's JSON (pure; every member optional, an odd one left out, never raised).

Keys, from smartmontools src/ataprint.cpp, nvmeprint.cpp and scsiprint.cpp (7.0 to 7.4):
- ATA: `ata_smart_self_test_log.{extended,standard}.table[]`, newest first, {type {string}, status {value, string,
  passed (absent when aborted or interrupted), remaining_percent}, lifetime_hours, lba}. The execution status of
  the drive now: `ata_smart_data.self_test.status {value, string, remaining_percent}`, value >> 4 == 0xF while a
  test runs, low nibble x 10 = % remaining; the drive's estimates: `ata_smart_data.self_test.polling_minutes
  {short, extended, conveyance}` (IDENTIFY/SMART READ DATA "recommended polling time").
- NVMe (smartctl 7.3+): `nvme_self_test_log` {current_self_test_operation {value: 0 none, 1 short, 2 extended},
  current_self_test_completion_percent, table[] {self_test_code {string}, self_test_result {value, string},
  power_on_hours, lba}}; result 0 passed, 1-4, 8, 9 aborted, 5-7 failed (nvmeprint.cpp print_self_test_log).
- SCSI: `scsi_self_test_0` .. `scsi_self_test_19`, newest first, {code {string}, result {value, string},
  power_on_time {hours}, failed_lba}; result 0 completed, 1-2 aborted, 3-7 failed, 15 in progress (SPC-4);
  `scsi_self_test_status {in_progress, completion_percent}`, `scsi_extended_self_test_seconds`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from disksleuth.model.run import SelfTest

MAX_LOG_ENTRIES = 21  # ATA logs hold 21 entries, NVMe 20, SCSI 20: more is not a log
_NVME_ABORTED = {1, 2, 3, 4, 8, 9}
_NVME_FAILED = {5, 6, 7}
_SCSI_ABORTED = {1, 2}
_NVME_RUNNING = {1: "Short", 2: "Extended", 0xE: "Vendor specific"}


def _int(v: Any) -> int | None:
    """Hours, LBAs, percents and codes: none is negative or wider than 64 bits (a hostile log's test "at
    99,999,999,999,999,999,999,999 h" was shown and judged)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer() and abs(v) < 2.0**64:
        v = int(v)
    return v if isinstance(v, int) and 0 <= v < 1 << 64 else None


_MAX_TEXT = 200  # smartctl's longest self-test type or status is well under this


def _str(v: Any) -> str | None:
    return v.strip()[:_MAX_TEXT] if isinstance(v, str) and v.strip() else None


def _get(d: Any, *path: str) -> Any:
    for key in path:
        d = d.get(key) if isinstance(d, dict) else None
    return d


def _rows(v: Any) -> list[dict[str, Any]]:
    return [t for t in v[:MAX_LOG_ENTRIES] if isinstance(t, dict)] if isinstance(v, list) else []


def ata_entry(t: dict[str, Any]) -> SelfTest:
    """One row of an ATA self-test log table (the newest is also Health.self_test's, smart_attributes)."""
    raw_status = t.get("status")
    status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
    value = _int(status.get("value"))
    in_progress = value is not None and value >> 4 == 0xF
    passed = status.get("passed")
    return SelfTest(
        kind=_str(_get(t, "type", "string")) or "self-test",
        status=_str(status.get("string")) or "unknown",
        passed=passed if isinstance(passed, bool) and not in_progress else None,
        power_on_hours=_int(t.get("lifetime_hours")),
        in_progress=in_progress,
        remaining_pct=_int(status.get("remaining_percent")) if in_progress else None,
        failing_lba=_int(t.get("lba")),
    )


def _nvme_entry(t: dict[str, Any]) -> SelfTest:
    result = _int(_get(t, "self_test_result", "value"))
    return SelfTest(
        kind=_str(_get(t, "self_test_code", "string")) or "self-test",
        status=_str(_get(t, "self_test_result", "string")) or "unknown",
        passed=True if result == 0 else False if result in _NVME_FAILED else None,
        power_on_hours=_int(t.get("power_on_hours")),
        failing_lba=_int(t.get("lba")),
    )


def scsi_entry(t: dict[str, Any]) -> SelfTest:
    """One scsi_self_test_N entry (the newest is also Health.self_test's, smart_attributes)."""
    result = _int(_get(t, "result", "value"))
    in_progress = result == 15
    return SelfTest(
        kind=_str(_get(t, "code", "string")) or "self-test",
        status=_str(_get(t, "result", "string")) or "unknown",
        passed=None if result is None or in_progress or result in _SCSI_ABORTED else result == 0,
        power_on_hours=_int(_get(t, "power_on_time", "hours")),
        in_progress=in_progress,
        failing_lba=_int(t.get("failed_lba")),
    )


def parse_self_test_log(doc: dict[str, Any]) -> tuple[SelfTest, ...]:
    """Every entry of the self-test log, newest first, whatever the protocol; () when none is logged."""
    for which in ("extended", "standard"):  # -x reads the extended (GP) log, -a the standard (SMART) one
        rows = _rows(_get(doc, "ata_smart_self_test_log", which, "table"))
        if rows:
            return tuple(ata_entry(t) for t in rows)
    rows = _rows(_get(doc, "nvme_self_test_log", "table"))
    if rows:
        return tuple(_nvme_entry(t) for t in rows)
    scsi = [doc.get(f"scsi_self_test_{i}") for i in range(MAX_LOG_ENTRIES)]
    return tuple(scsi_entry(t) for t in scsi if isinstance(t, dict))


def parse_running_self_test(doc: dict[str, Any]) -> SelfTest | None:
    """The self-test running now, with the share left, from the drive's execution status; None when none runs."""
    status = _get(doc, "ata_smart_data", "self_test", "status")
    value = _int(_get(status, "value"))
    if value is not None and value >> 4 == 0xF:
        remaining = _int(_get(status, "remaining_percent"))
        return SelfTest(
            kind="self-test",
            status=_str(_get(status, "string")) or "in progress",
            passed=None,
            power_on_hours=None,
            in_progress=True,
            remaining_pct=remaining if remaining is not None else (value & 0xF) * 10,
        )
    op = _int(_get(doc, "nvme_self_test_log", "current_self_test_operation", "value"))
    if op:
        done = _int(_get(doc, "nvme_self_test_log", "current_self_test_completion_percent"))
        return SelfTest(
            kind=_NVME_RUNNING.get(op, "self-test"),
            status=_str(_get(doc, "nvme_self_test_log", "current_self_test_operation", "string")) or "in progress",
            passed=None,
            power_on_hours=None,
            in_progress=True,
            remaining_pct=100 - done if done is not None and 0 <= done <= 100 else None,
        )
    scsi = doc.get("scsi_self_test_status")
    if isinstance(scsi, dict) and scsi.get("in_progress") is True:  # scsiprint.cpp: the progress in percent done
        done = _int(scsi.get("completion_percent"))
        return SelfTest(
            kind="self-test",
            status="in progress",
            passed=None,
            power_on_hours=None,
            in_progress=True,
            remaining_pct=100 - done if done is not None and 0 <= done <= 100 else None,
        )
    return None


def parse_self_test_minutes(doc: dict[str, Any]) -> dict[str, int]:
    """The drive's own estimate of each test's duration in minutes: {"short": 2, "extended": 85}."""
    polling = _get(doc, "ata_smart_data", "self_test", "polling_minutes")
    out = {}
    for kind in ("short", "extended", "conveyance"):
        minutes = _int(_get(polling, kind))
        if minutes is not None and 0 < minutes < 100_000:  # ~70 days: beyond, not an estimate
            out[kind] = minutes
    seconds = _int(doc.get("scsi_extended_self_test_seconds"))
    if "extended" not in out and seconds is not None and 0 < seconds < 6_000_000:
        out["extended"] = max(1, round(seconds / 60))
    return out


# What `smartctl -t short|long` prints (smartmontools lib/atacmds.cpp ataSmartTest, src/ataprint.cpp,
# nvmeprint.cpp, scsiprint.cpp), read line by line, each line cut first.
_BEGUN = ("Testing has begun", "Self-test has begun", "Background Self Test has begun")
_RUNNING = "without aborting current test"
_UNSUPPORTED = ("Self-test functions not supported", "Self-test not supported", "does not support Self-test")
_MAX_START_LINES = 400
_MAX_LINE = 300
_WAIT = re.compile(r"Please wait (\d{1,6}) (minutes|seconds) for test to complete")
_SHARE = re.compile(r"\((\s?\d{1,3})(0?)% (remaining|completed)\)")


@dataclass(frozen=True)
class StartOutput:
    outcome: str  # "started", "running" (another test runs: not started), "unsupported", "unknown"
    minutes: int | None = None  # smartctl's "Please wait N minutes" (the drive's estimate)
    remaining_pct: int | None = None  # of the test already running
    line: str = ""  # smartctl's line that said so


def parse_start_output(text: str) -> StartOutput:
    """smartctl's answer to `-t short|long`: did the test start, how long the drive expects it to take."""
    outcome, minutes, remaining, said = "unknown", None, None, ""
    for raw in text.splitlines()[:_MAX_START_LINES]:
        line = raw[:_MAX_LINE].strip()
        if any(b in line for b in _BEGUN):
            outcome, said = "started", line
        elif _RUNNING in line:
            outcome, said = "running", line
            m = _SHARE.search(line)
            if m:
                value = int(m.group(1).strip() + m.group(2))
                remaining = value if m.group(3) == "remaining" else 100 - value
        elif any(u in line for u in _UNSUPPORTED):
            outcome, said = "unsupported", line
        m = _WAIT.search(line)
        if m:
            n = int(m.group(1))
            minutes = n if m.group(2) == "minutes" else max(1, round(n / 60))
    return StartOutput(outcome, minutes, remaining, said)


def has_self_test_log(doc: dict[str, Any]) -> bool:
    """The output held the drive's self-test log, even an empty one (ATA `count: 0`, NVMe without a table)."""
    return isinstance(doc.get("ata_smart_self_test_log"), dict) or isinstance(doc.get("nvme_self_test_log"), dict)
