"""The attribute table `smartctl -A` prints, and the latest self-test, from smartctl's JSON (pure).

Keys, from smartmontools src/ataprint.cpp, nvmeprint.cpp and scsiprint.cpp (7.0 to 7.4):
- ATA: `ata_smart_attributes.table[]` {id, name, value, worst, thresh, when_failed ("", "now" or
  "past", ataprint.cpp print_smart_attribs), flags {string "POSR-K", prefailure}, raw {value, string}}.
  Self-tests: `ata_smart_self_test_log.{extended,standard}.table[]` newest first, {type {string},
  status {value, string, passed (absent when aborted: status >> 4 in 1-3), remaining_percent},
  lifetime_hours, lba (first error)}; status >> 4 == 0xF means still running.
- NVMe: `nvme_smart_health_information_log` {critical_warning, temperature, available_spare, ...,
  data_units_read (units of 1000 x 512 bytes, NVMe base spec, SMART / Health log), temperature_sensors[]}.
  Self-tests (7.4+): `nvme_self_test_log` {current_self_test_operation {value, string},
  current_self_test_completion_percent, table[] {self_test_code {string}, self_test_result {value,
  string}, power_on_hours, lba}}; result 0 is "Completed without error", 1-4, 8, 9 aborted, 5-7 failed.
- SCSI: `scsi_error_counter_log.{read,write,verify}` {errors_corrected_by_eccfast, ..._eccdelayed,
  ..._rereads_rewrites, total_errors_corrected, correction_algorithm_invocations, gigabytes_processed
  (a string, "11523.849"), total_uncorrected_errors}, `scsi_grown_defect_list`. Self-tests:
  `scsi_self_test_0` (newest) {code {string}, result {value, string}, power_on_time {hours},
  failed_lba}; result 0 completed, 1-2 aborted, 3-7 failed, 15 in progress (SPC-4 self-test results).
Every member is optional; a missing or odd one is left out, never raised.
"""

from __future__ import annotations

from typing import Any

from disksleuth.model.run import SCSI_COUNTERS, SelfTest, SmartAttribute
from disksleuth.probe.smart_selftests import ata_entry, scsi_entry

# smartctl -A for NVMe ("SMART/Health Information (NVMe Log 0x02)"), in its order and words.
NVME_LABELS = (
    ("critical_warning", "Critical Warning"),
    ("temperature", "Temperature"),
    ("available_spare", "Available Spare"),
    ("available_spare_threshold", "Available Spare Threshold"),
    ("percentage_used", "Percentage Used"),
    ("data_units_read", "Data Units Read"),
    ("data_units_written", "Data Units Written"),
    ("host_reads", "Host Read Commands"),
    ("host_writes", "Host Write Commands"),
    ("controller_busy_time", "Controller Busy Time"),
    ("power_cycles", "Power Cycles"),
    ("power_on_hours", "Power On Hours"),
    ("unsafe_shutdowns", "Unsafe Shutdowns"),
    ("media_errors", "Media and Data Integrity Errors"),
    ("num_err_log_entries", "Error Information Log Entries"),
    ("warning_temp_time", "Warning  Comp. Temperature Time"),
    ("critical_comp_time", "Critical Comp. Temperature Time"),
    ("thermal_mgmt_temperature_1_transition_count", "Thermal Temp. 1 Transition Count"),
    ("thermal_mgmt_temperature_2_transition_count", "Thermal Temp. 2 Transition Count"),
    ("thermal_mgmt_temperature_1_total_time", "Thermal Temp. 1 Total Time"),
    ("thermal_mgmt_temperature_2_total_time", "Thermal Temp. 2 Total Time"),
)
_NVME_UNITS = {
    "temperature": " Celsius",
    "available_spare": "%",
    "available_spare_threshold": "%",
    "percentage_used": "%",
    "controller_busy_time": " min",
    "warning_temp_time": " min",
    "critical_comp_time": " min",
    "thermal_mgmt_temperature_1_total_time": " s",
    "thermal_mgmt_temperature_2_total_time": " s",
}
NVME_DATA_UNIT_BYTES = 512_000  # one "data unit" = 1000 blocks of 512 bytes (NVMe base spec)

# NVMe self-test results that are aborts, not failures (nvmeprint.cpp print_self_test_log).
_NVME_ABORTED = {1, 2, 3, 4, 8, 9}


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _str(v: Any) -> str | None:
    return v.strip() if isinstance(v, str) and v.strip() else None


def _get(d: Any, *path: str) -> Any:
    for key in path:
        d = d.get(key) if isinstance(d, dict) else None
    return d


def _list(v: Any) -> list[Any]:
    """A JSON array, or nothing: `x or []` lets a number or string through to a for loop."""
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    """A JSON object, or an empty one."""
    return v if isinstance(v, dict) else {}


def _when_failed(text: Any) -> str | None:
    t = (_str(text) or "").lower()
    return t if t in ("now", "past") else None


def ata_attributes(doc: dict[str, Any]) -> tuple[SmartAttribute, ...]:
    out = []
    for a in _list(_get(doc, "ata_smart_attributes", "table")):
        if not isinstance(a, dict) or _int(a.get("id")) is None:
            continue
        raw = _dict(a.get("raw"))
        raw_value = _int(raw.get("value"))
        out.append(
            SmartAttribute(
                name=_str(a.get("name")) or f"Unknown_Attribute_{a['id']}",
                raw=_str(raw.get("string")) or (str(raw_value) if raw_value is not None else ""),
                raw_value=raw_value,
                id=_int(a.get("id")),
                value=_int(a.get("value")),
                worst=_int(a.get("worst")),
                thresh=_int(a.get("thresh")),
                flags=(_str(_get(a, "flags", "string")) or None),
                prefailure=_get(a, "flags", "prefailure") if isinstance(_get(a, "flags", "prefailure"), bool) else None,
                when_failed=_when_failed(a.get("when_failed")),
            )
        )
    return tuple(out)


def _nvme_raw(key: str, value: Any) -> str:
    if key == "critical_warning" and _int(value) is not None:
        return f"0x{_int(value):02x}"
    units = _int(value)
    if key.startswith("data_units_") and units is not None and 0 <= units < 10**15:  # beyond: no size, no overflow
        tb = units * NVME_DATA_UNIT_BYTES / 1e12
        size = f"{tb:,.2f} TB" if tb >= 1 else f"{tb * 1000:,.1f} GB"
        return f"{units:,} [{size}]"
    if _int(value) is not None:
        return f"{_int(value):,}{_NVME_UNITS.get(key, '')}"
    return str(value)


def nvme_attributes(doc: dict[str, Any]) -> tuple[SmartAttribute, ...]:
    log = doc.get("nvme_smart_health_information_log")
    if not isinstance(log, dict):
        return ()
    out = [
        SmartAttribute(name=label, raw=_nvme_raw(key, log[key]), raw_value=_int(log[key]), key=key)
        for key, label in NVME_LABELS
        if key in log and isinstance(log[key], (int, float)) and not isinstance(log[key], bool)
    ]
    for i, t in enumerate(_list(log.get("temperature_sensors")), start=1):
        if _int(t) is not None:
            name, key = f"Temperature Sensor {i}", f"temperature_sensor_{i}"
            out.append(SmartAttribute(name, f"{t} Celsius", _int(t), key=key))
    return tuple(out)


def scsi_attributes(doc: dict[str, Any]) -> tuple[SmartAttribute, ...]:
    out = []
    log = doc.get("scsi_error_counter_log")
    for direction in ("read", "write", "verify"):
        counters = log.get(direction) if isinstance(log, dict) else None
        if not isinstance(counters, dict):
            continue
        for key, label in SCSI_COUNTERS:
            v = counters.get(key)
            if isinstance(v, str):  # gigabytes_processed is printed as a decimal string
                try:
                    raw_value: int | float | None = float(v)
                except ValueError:
                    continue
            elif _int(v) is not None:
                raw_value = _int(v)
            else:
                continue
            raw = v if isinstance(v, str) else f"{raw_value:,}"
            name = f"{direction}: {label}"
            out.append(SmartAttribute(name, raw, raw_value, key=f"{direction}.{key}", group=direction))
    defects = _int(doc.get("scsi_grown_defect_list"))
    if defects is not None:
        name = "Elements in grown defect list"
        out.append(SmartAttribute(name, f"{defects:,}", defects, key="scsi_grown_defect_list"))
    return tuple(out)


def parse_attributes(doc: dict[str, Any]) -> tuple[SmartAttribute, ...]:
    """Whatever the drive speaks: ATA attributes, the NVMe health log, or SCSI counters."""
    return ata_attributes(doc) or nvme_attributes(doc) or scsi_attributes(doc)


def _ata_self_test(doc: dict[str, Any]) -> SelfTest | None:
    # -x reads the extended (GP) log, -a the standard (SMART) one; either is newest first.
    for which in ("extended", "standard"):
        table = _get(doc, "ata_smart_self_test_log", which, "table")
        if isinstance(table, list) and table and isinstance(table[0], dict):
            return ata_entry(table[0])
    return None


def _nvme_self_test(doc: dict[str, Any]) -> SelfTest | None:
    log = doc.get("nvme_self_test_log")
    if not isinstance(log, dict):
        return None
    current = _int(_get(log, "current_self_test_operation", "value"))
    if current:
        done = _int(log.get("current_self_test_completion_percent"))
        return SelfTest(
            kind=_str(_get(log, "current_self_test_operation", "string")) or "self-test",
            status="in progress",
            passed=None,
            power_on_hours=None,
            in_progress=True,
            remaining_pct=100 - done if done is not None else None,
        )
    table = [t for t in _list(log.get("table")) if isinstance(t, dict)]
    if not table:
        return None
    t = table[0]  # entry 0 is the newest (NVMe base spec, Device Self-test log)
    result = _int(_get(t, "self_test_result", "value"))
    return SelfTest(
        kind=_str(_get(t, "self_test_code", "string")) or "self-test",
        status=_str(_get(t, "self_test_result", "string")) or "unknown",
        passed=None if result is None or result in _NVME_ABORTED else result == 0,
        power_on_hours=_int(t.get("power_on_hours")),
        failing_lba=_int(t.get("lba")),
    )


def _scsi_self_test(doc: dict[str, Any]) -> SelfTest | None:
    t = doc.get("scsi_self_test_0")
    return scsi_entry(t) if isinstance(t, dict) else None


def parse_latest_self_test(doc: dict[str, Any]) -> SelfTest | None:
    """The newest self-test entry (or the one running now), whatever the protocol; None when none is logged."""
    return _ata_self_test(doc) or _nvme_self_test(doc) or _scsi_self_test(doc)
