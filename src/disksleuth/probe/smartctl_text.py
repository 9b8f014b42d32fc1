"""smartctl's text output (`-a`, `-x`, `-i`, `-A`, `-H`; smartctl 6.x and 7.x; ATA, NVMe, SCSI) read into the
shape of smartctl's JSON, then into Health by the same code as `--json` (probe/smart_parse.py), so a paste gives
the same model, the same warning signs and the same numbers as a live read.

Lines, from smartmontools src/ataprint.cpp, nvmeprint.cpp, scsiprint.cpp (5.x to 7.5):
- "smartctl 7.4 2023-08-01 r5530 [x86_64-linux-6.8.0] (local build)" header; "=== START OF ... SECTION ===".
- ATA: "Device Model:", "Serial Number:", "Firmware Version:", "User Capacity:  1,000,204,886,016 bytes [1.00 TB]",
  "SATA Version is:  SATA 3.2, 6.0 Gb/s (current: 1.5 Gb/s)", "SMART overall-health self-assessment test result:
  PASSED|FAILED!", the attribute table in its old form (`-a`: "ID# ATTRIBUTE_NAME FLAG VALUE WORST THRESH TYPE
  UPDATED WHEN_FAILED RAW_VALUE") or brief form (`-x`: "ID# ATTRIBUTE_NAME FLAGS VALUE WORST THRESH FAIL
  RAW_VALUE"), "ATA Error Count: N" / "Device Error Count: N", the self-test log rows ("# 1  Short offline
  Completed without error  00%  21620  -"), SCT "Current Temperature:  27 Celsius", SATA Phy Event Counters rows.
- NVMe: "Model Number:", "Critical Warning: 0x04", "Temperature: 44 Celsius", "Available Spare: 100%",
  "Percentage Used: 114%", "Media and Data Integrity Errors: 0", "Warning  Comp. Temp. Threshold: 70 Celsius",
  "Supported LBA Sizes" table ("Id Fmt  Data  Metadt  Rel_Perf").
- SCSI: "Vendor:", "Product:", "Revision:", "SMART Health Status: OK", "Current Drive Temperature: 39 C",
  "Elements in grown defect list: 0", the error counter log rows ("read:  0 0 0 0 0 1234.567 0").
Anything else is ignored; every field is optional, as in the JSON.
"""

from __future__ import annotations

import re
from typing import Any

from disksleuth.errors import ParseError
from disksleuth.model.paste import PastedHealth
from disksleuth.probe.error_logs import ErrorLogText
from disksleuth.probe.paste_text import iter_lines
from disksleuth.probe.smart_attributes import NVME_LABELS
from disksleuth.probe.smart_parse import SMART_DATA_KEYS, health_from_smartctl_doc

# "smartctl 7.4 2023-08-01 r5530 ..."; pre-release builds print "smartctl pre-7.4 2023-03-21 r5470 ... (CircleCI)"
# (py-SMART tests/dataset/singletests/nvme_6 and nvme_win10_0_issue_64).
_HEADER = re.compile(r"^\s*+smartctl (?:pre-)?(\d++)\.(\d++)\b")
# The value is taken whole and stripped in Python: `(.*?)\s*$` tried `\s*$` after every character of it, and
# "Device Model:" with 65,536 spaces inside took 10 s. (No pattern here backtracks over a run of one class: a run
# is possessive, bounded, or followed by something it cannot match.)
_KV = re.compile(r"^\s*+([A-Za-z][A-Za-z0-9 ./()&#_-]{1,60}?):\s++(.*)")
# Numbers as smartctl prints them in the user's locale: "2,597" (C/en), "2.597" (de: py-SMART nvme_6, a Toshiba
# KBG30 under a German locale, where "Power On Hours: 8.737" read as 8 hours), "2 597" or U+202F/U+00A0 between
# groups (fr: py-SMART sas_ssd_0_issue_57, "User Capacity: 7 681 501 126 656 bytes", read as 7 bytes). A group
# separator is only taken between groups of exactly three digits, so a decimal such as "1.5" is never one.
_NUM = re.compile(r"^\s*+(0x[0-9a-fA-F]++|-?\d{1,3}(?:[,.' \u00a0\u202f]\d{3})+(?!\d)|-?\d++)")
_GROUP_SEPARATORS = re.compile(r"[,.' \u00a0\u202f]")
# A locale with decimal commas prints "6,0 Gb/s (current: 1,5 Gb/s)".
# Searched: it starts only where a number starts, or every digit of a long run would be tried as a start.
_SATA = re.compile(r"(?<!\d)(\d++(?:[.,]\d++)?) Gb/s(?: \(current: (\d++(?:[.,]\d++)?|<unknown>) ?(?:Gb/s)?\))?")
# ATA attribute rows. Old form: id name flag(0xNNNN) value worst thresh type updated when_failed raw...
_ATTR_OLD = re.compile(
    r"^\s*+(\d{1,3})\s++(\S++)\s++(0x[0-9a-fA-F]{4})\s++(\d{1,3}|---)\s++(\d{1,3}|---)\s++(\d{1,3}|---)\s++"
    r"(Pre-fail|Old_age)\s++(Always|Offline)\s++(\S++)\s++(.*)"
)
# Brief form (-x, -f brief): id name flags(POSR-K, 6 chars; a "+" after them when the drive sets flag bits smartctl
# has no letter for: linuxhw 2E256-TU2-510B00 "170 Unknown_Attribute POSR-K+") value worst thresh fail raw...
_ATTR_BRIEF = re.compile(
    r"^\s*+(\d{1,3})\s++(\S++)\s++([P-][O-][S-][R-][C-][K-]\+?|[A-Z-]{6})\s++(\d{1,3}|---)\s++(\d{1,3}|---)\s++"
    r"(\d{1,3}|---)\s++(\S++)\s++(.*)"
)
# Self-test log rows: "# 1  Short offline       Completed without error       00%     21620         -". The row
# is split in Python (_self_test_row): one pattern with two free-text columns tried every way of cutting a padded
# row (5 s for one 64 KiB row).
_SELF_TEST_HEAD = re.compile(r"^\s*+#\s*+(\d++)\s++(\S.*)")
_RUN_OF_SPACES = re.compile(r"\s{2,}+")
_PERCENT = re.compile(r"(\d{1,3})%")
_PAREN_NUMBER = re.compile(r"\(\s{0,8}(\d{1,5})\)")  # "(  243)", "( 316) minutes."
_PHY = re.compile(r"^\s*+0x([0-9a-fA-F]{4})\s++\d++\s++(\d++)\s++\S")
_SCSI_COUNTER = re.compile(r"^\s*+(read|write|verify):\s++(.*)")
_LBA_ROW = re.compile(r"^(\d++)\s++([+-])\s++(\d++)\s++(\d++)\s++(\d++)")  # on the stripped line, whole
_LBA_HEADER = re.compile(r"^Id\s++Fmt\s++Data\s++Metadt")
_TEMP_SENSOR = re.compile(r"^\s*+Temperature Sensor (\d++):\s++(-?\d{1,6}) Celsius")
# Digits no smartctl counter needs (its widest, the 128-bit NVMe counters, print 39): a longer run is not read as
# a number, since int() refuses past 4,300 digits and one such field lost the whole report.
_MAX_DIGITS = 40
# SATA's link speeds are 1.5, 3.0 and 6.0 Gb/s; anything else (0, 1e308) is not a link smartctl reported.
_SATA_GBPS_MAX = 24.0

_NVME_KEYS = {label.lower(): key for key, label in NVME_LABELS}
_NVME_KEYS["warning  comp. temperature time"] = "warning_temp_time"
_NVME_KEYS["warning comp. temperature time"] = "warning_temp_time"  # one space: py-SMART issue_53 (smartctl 7.1)


def _num(text: str) -> int | None:
    m = _NUM.match(text)
    if not m:
        return None
    raw = m.group(1) if m.group(1).startswith("0x") else _GROUP_SEPARATORS.sub("", m.group(1))
    try:
        return int(raw, 0) if raw.startswith("0x") else int(raw)
    except ValueError:
        return None


def _bytes(text: str) -> int | None:
    """'1,000,204,886,016 bytes [1.00 TB]' or '500,107,862,016 [500 GB]' -> bytes."""
    n = _num(text)  # grouped as the locale groups it: _NUM takes every separator
    return n if n and n > 0 else None


def _int(digits: str) -> int | None:
    return int(digits) if len(digits) <= _MAX_DIGITS else None


def _gbps_units(gbps: str) -> dict[str, int] | None:
    try:
        value = float(gbps.replace(",", "."))
    except ValueError:
        return None
    if not 0 < value <= _SATA_GBPS_MAX:
        return None
    return {"units_per_second": round(value * 10), "bits_per_unit": 100_000_000}


def _section_of(line: str, current: str) -> str:
    if "=== START OF" in line:
        return "info" if "INFORMATION" in line else "data"
    return current


def parse_smartctl_text(text: str, device: str | None = None, first_line: int = 1) -> PastedHealth:
    """Health from smartctl text; ParseError when the text holds no drive data at all.

    `first_line` is the line number of the text's first line in the paste, so facts name paste lines."""
    doc: dict[str, Any] = {}
    where: dict[str, int] = {}
    messages: list[str] = []
    protocol: str | None = None
    attributes: list[dict[str, Any]] = []
    nvme: dict[str, Any] = {}
    sensors: list[int] = []
    lba_formats: list[dict[str, Any]] = []
    self_tests: list[dict[str, Any]] = []
    phy: list[dict[str, int]] = []
    scsi_counters: dict[str, dict[str, Any]] = {}
    in_attrs = in_lba = in_phy = in_self_test = in_nvme_log = False
    routine: str | None = None  # "Extended self-test routine" names the polling time on the next line
    error_log = ErrorLogText()  # the ATA and NVMe error logs (issue 38): it only reads, every line
    for offset, line in enumerate(iter_lines(text)):  # the normaliser's lines: "\n" only, as numbered
        no = first_line + offset
        stripped = line.strip()
        error_log.feed(stripped)
        if not stripped:
            in_attrs = in_lba = in_phy = in_self_test = False
            continue
        m = _HEADER.match(line)
        if m:
            doc["smartctl"] = {"version": [int(m.group(1)), int(m.group(2))]}
            where["smartctl_version"] = no
            continue
        if stripped.startswith("ID# ATTRIBUTE_NAME"):
            in_attrs, protocol = True, protocol or "ATA"
            continue
        if in_attrs:
            row = _attribute_row(line)
            if row is not None:
                attributes.append(row)
                where[f"attribute {row['id']}"] = no
                continue
            if stripped.startswith("|") or stripped.startswith("||"):
                in_attrs = False
                continue
        if stripped.startswith("Id Fmt  Data") or _LBA_HEADER.match(stripped):
            in_lba = True
            continue
        if in_lba:
            lm = _LBA_ROW.fullmatch(stripped)
            if lm:
                lba_formats.append(
                    {
                        "formatted": lm.group(2) == "+",
                        "data_bytes": _int(lm.group(3)),
                        "metadata_bytes": _int(lm.group(4)),
                        "relative_performance": _int(lm.group(5)),
                    }
                )
                continue
            in_lba = False
        if stripped.startswith("ID      Size     Value  Description"):
            in_phy = True
            continue
        if in_phy:
            pm = _PHY.match(line)
            if pm:
                if (count := _int(pm.group(2))) is not None:
                    phy.append({"id": int(pm.group(1), 16), "value": count})
                continue
            in_phy = False
        if stripped.startswith("Num  Test_Description"):
            in_self_test = True
            continue
        if stripped.startswith("No self-tests have been logged"):  # ataprint.cpp: the log read, and empty
            doc.setdefault("ata_smart_self_test_log", {"standard": {"count": 0}})
            continue
        if in_self_test:
            entry = _self_test_row(line)
            if entry is not None:
                self_tests.append(entry)
                where.setdefault("self_test", no)
                continue
        if stripped.startswith("SMART/Health Information (NVMe Log"):
            in_nvme_log, protocol = True, "NVMe"
            continue
        cm = _SCSI_COUNTER.match(line)
        if cm and protocol in (None, "SCSI"):
            counters = _scsi_counter_row(cm.group(2))
            if counters is not None:
                scsi_counters[cm.group(1)] = counters
                where[f"scsi {cm.group(1)} errors"] = no
                protocol = "SCSI"
                continue
        tm = _TEMP_SENSOR.match(line)
        if tm:
            sensors.append(int(tm.group(2)))
            continue
        words = stripped.split()
        if len(words) == 3 and words[1:] == ["self-test", "routine"]:
            routine = words[0].lower()
            continue
        if routine and stripped.startswith("recommended polling time:"):
            pm = _PAREN_NUMBER.search(stripped)
            if pm:
                polling = doc.setdefault("ata_smart_data", {}).setdefault("self_test", {})
                polling.setdefault("polling_minutes", {})[routine] = int(pm.group(1))
            routine = None
            continue
        kv = _KV.match(line)
        if not kv:
            if stripped.startswith(("Smartctl open device", "Read Device Identity failed", "/dev/")) or (
                "failed:" in stripped and len(stripped) < 200
            ):
                messages.append(stripped)
            continue
        key, value = kv.group(1).strip(), kv.group(2).rstrip()
        lkey = key.lower()
        if in_nvme_log and lkey in _NVME_KEYS:
            n = _num(value)
            if n is not None:
                nvme[_NVME_KEYS[lkey]] = n
                where[_NVME_KEYS[lkey]] = no
            continue
        protocol = _read_field(doc, where, lkey, value, no, protocol)
    if attributes:
        doc["ata_smart_attributes"] = {"table": attributes}
    error_log.into(doc)
    if nvme:
        if sensors:
            nvme["temperature_sensors"] = sensors
        doc["nvme_smart_health_information_log"] = nvme
        doc.setdefault("temperature", {}).setdefault("current", nvme.get("temperature"))
        if "power_on_hours" in nvme:
            # smartctl --json puts it in power_on_time too (nvmeprint.cpp), where Health reads it: without this a
            # pasted NVMe report had no power-on hours (py-SMART nvme_6, nvme_13_issue_96).
            doc.setdefault("power_on_time", {"hours": nvme["power_on_hours"]})
    if lba_formats:
        doc.setdefault("nvme_namespaces", [{}])[0]["lba_formats"] = lba_formats
    if self_tests:
        doc["ata_smart_self_test_log"] = {"standard": {"table": self_tests}}
    if phy:
        doc["sata_phy_event_counters"] = {"table": phy}
    if scsi_counters:
        doc["scsi_error_counter_log"] = scsi_counters
    if "temperature" not in doc or doc["temperature"].get("current") is None:
        for attr_id in (194, 190):
            row = next((a for a in attributes if a["id"] == attr_id), None)
            if row is not None and row["raw"]["value"] is not None and 0 < row["raw"]["value"] < 150:
                doc.setdefault("temperature", {})["current"] = row["raw"]["value"]
                where.setdefault("temperature_c", where.get(f"attribute {attr_id}", 0))
                break
    if "power_on_time" not in doc:
        row = next((a for a in attributes if a["id"] == 9), None)
        if row is not None and row["raw"]["value"] is not None:
            doc["power_on_time"] = {"hours": row["raw"]["value"]}
            where["power_on_hours"] = where.get("attribute 9", 0)
    if "power_cycle_count" not in doc:
        row = next((a for a in attributes if a["id"] == 12), None)
        if row is not None:
            doc["power_cycle_count"] = row["raw"]["value"]
    if messages:
        doc.setdefault("smartctl", {})["messages"] = [{"string": m, "severity": "error"} for m in messages]
    if device:
        doc["device"] = {"name": device, "protocol": protocol}
    elif protocol:
        doc["device"] = {"protocol": protocol}
    has_data = any(k in doc for k in SMART_DATA_KEYS)
    if not has_data:
        why = "; ".join(messages) or "no drive data in the text (is it the whole smartctl output?)"
        raise ParseError(f"no SMART data: {why}")
    doc.setdefault("json_format_version", [1, 0])
    health = health_from_smartctl_doc(doc)
    return PastedHealth(health, _field_lines(where))


def _read_field(
    doc: dict[str, Any], where: dict[str, int], lkey: str, value: str, no: int, protocol: str | None
) -> str | None:
    """One "Key: value" line of the information or data section; the protocol as now known."""
    if lkey in ("device model", "model number"):
        doc["model_name"] = value
        where["model"] = no
        return protocol or ("NVMe" if lkey == "model number" else "ATA")
    if lkey == "product":
        doc["scsi_model_name"] = value
        where["model"] = no
        return protocol or "SCSI"
    if lkey in ("serial number", "serial number:"):
        doc["serial_number"] = value
    elif lkey == "firmware version":
        doc["firmware_version"] = value
    elif lkey == "revision":
        doc.setdefault("scsi_revision", value)
    elif lkey == "user capacity":
        if (n := _bytes(value)) is not None:
            doc["user_capacity"] = {"bytes": n}
    elif lkey == "namespace 1 size/capacity":
        if (n := _bytes(value.split("/")[0])) is not None:
            doc.setdefault("nvme_namespaces", [{}])[0]["size"] = {"bytes": n}
    elif lkey == "total nvm capacity":
        if (n := _bytes(value)) is not None:
            doc["nvme_total_capacity"] = n
    elif lkey == "sata version is":
        m = _SATA.search(value)
        if m:
            speed: dict[str, Any] = {}
            if (mx := _gbps_units(m.group(1))) is not None:
                speed["max"] = mx
            if m.group(2) and (cur := _gbps_units(m.group(2))) is not None:
                speed["current"] = cur
            doc["interface_speed"] = speed
            where["sata_speed_current_gbps"] = where["sata_speed_max_gbps"] = no
        return protocol or "ATA"
    elif lkey == "ata version is":
        return protocol or "ATA"
    elif lkey == "smart overall-health self-assessment test result":
        doc["smart_status"] = {"passed": value.upper().startswith("PASSED")}
        where["smart_passed"] = no
    elif lkey == "smart health status":
        doc["smart_status"] = {"passed": value.upper().startswith("OK")}
        where["smart_passed"] = no
        return protocol or "SCSI"
    elif lkey in ("current temperature", "current drive temperature"):
        if (n := _num(value)) is not None:
            doc.setdefault("temperature", {})["current"] = n
            where["temperature_c"] = no
    elif lkey == "drive trip temperature":
        if (n := _num(value)) is not None:
            doc.setdefault("temperature", {})["drive_trip"] = n
    elif lkey == "warning  comp. temp. threshold" or lkey == "warning comp. temp. threshold":
        if (n := _num(value)) is not None:
            doc.setdefault("temperature", {})["op_limit_max"] = n
    elif lkey == "critical comp. temp. threshold":
        if (n := _num(value)) is not None:
            doc.setdefault("temperature", {})["critical_limit_max"] = n
    elif lkey in ("min/max recommended temperature", "min/max temperature limit"):
        # ATA SCT status (ataprint.cpp): "0/60 Celsius" is op_limit_{min,max}, "-40/70 Celsius" limit_{min,max}.
        high = _num(value.partition("/")[2])
        if high:
            key = "op_limit_max" if "recommended" in lkey else "limit_max"
            doc.setdefault("temperature", {})[key] = high
    elif lkey == "rotation rate":
        n = 0 if value.startswith("Solid State") else _num(value)
        if n is not None:
            doc["rotation_rate"] = n
    elif lkey == "elements in grown defect list":
        if (n := _num(value)) is not None:
            doc["scsi_grown_defect_list"] = n
            where["scsi_grown_defects"] = no
        return protocol or "SCSI"
    elif lkey == "percentage used endurance indicator":
        if (n := _num(value)) is not None:
            doc["endurance_used"] = {"current_percent": n}
    elif lkey in ("ata error count", "device error count"):
        if (n := _num(value)) is not None:
            which = "extended" if lkey == "device error count" else "summary"
            doc.setdefault("ata_smart_error_log", {})[which] = {"count": n}
            where["error_log_entries"] = no
    elif lkey == "self-test execution status":
        # "( 243)	Self-test routine in progress..." (ataprint.cpp): value >> 4 == 0xF runs, low nibble x 10 % left
        pm = _PAREN_NUMBER.match(value)
        if pm:
            status = {"value": int(pm.group(1)), "string": value[pm.end() :].strip()}
            doc.setdefault("ata_smart_data", {}).setdefault("self_test", {})["status"] = status
    elif lkey == "accumulated power on time, hours:minutes":
        if (n := _num(value)) is not None:
            doc["power_on_time"] = {"hours": n}
    elif lkey == "transport protocol":
        return protocol or "SCSI"
    elif lkey == "vendor" and protocol is None:
        return "SCSI"
    return protocol


def _attribute_row(line: str) -> dict[str, Any] | None:
    m = _ATTR_OLD.match(line)
    if m:
        attr_id, name, flag, value, worst, thresh, kind, _updated, when, raw = m.groups()
        flags = {"value": int(flag, 16), "string": flag, "prefailure": kind == "Pre-fail"}
    else:
        m = _ATTR_BRIEF.match(line)
        if not m:
            return None
        attr_id, name, flag, value, worst, thresh, when, raw = m.groups()
        flags = {"string": flag, "prefailure": flag.startswith("P")}
    raw = raw.rstrip()
    # The brief form (-x) prints its FAIL column as "NOW"/"Past" where the old form prints FAILING_NOW/In_the_past
    # (linuxhw CT500MX200SSD1-8CA288FE94BD: 202 Percent_Lifetime_Remain, not pre-fail, 000/001 "NOW").
    when_failed = {"FAILING_NOW": "now", "NOW": "now", "In_the_past": "past", "Past": "past"}.get(when, "")
    return {
        "id": int(attr_id),
        "name": name,
        "value": int(value) if value.isdigit() else None,
        "worst": int(worst) if worst.isdigit() else None,
        "thresh": int(thresh) if thresh.isdigit() else None,
        "when_failed": when_failed,
        "flags": flags,
        "raw": {"value": _num(raw), "string": raw},
    }


def _self_test_row(line: str) -> dict[str, Any] | None:
    """A self-test log row: "# N", the test, two or more spaces, the status, "NN%", the hours and the LBA of the
    first error ("-" for none); None for anything else."""
    head = _SELF_TEST_HEAD.match(line)
    if head is None:
        return None
    parts = head.group(2).rsplit(None, 3)
    if len(parts) != 4:
        return None
    text, percent, hours, lba = parts
    remaining = _PERCENT.fullmatch(percent)
    gap = _RUN_OF_SPACES.search(text)
    if remaining is None or not hours.isdecimal() or gap is None:
        return None
    kind, status = text[: gap.start()], text[gap.end() :]
    if len(kind) < 2 or len(status) < 2:
        return None
    low = status.lower()
    entry: dict[str, Any] = {
        "type": {"string": kind},
        "status": {"string": status, "remaining_percent": int(remaining.group(1))},
        "lifetime_hours": _int(hours),
    }
    if "in progress" in low:
        entry["status"]["value"] = 0xF0
    elif low.startswith("completed without error"):
        entry["status"]["passed"] = True
    elif low.startswith("completed") or "failure" in low or "fatal" in low:
        entry["status"]["passed"] = False
    if lba.isdecimal():
        entry["lba"] = _int(lba)
    return entry


def _scsi_counter_row(rest: str) -> dict[str, Any] | None:
    """'0 0 0 0 0 1234.567 0' -> the error counter log's members (scsiprint.cpp column order)."""
    parts = rest.split()
    if len(parts) != 7:
        return None
    keys = (
        "errors_corrected_by_eccfast",
        "errors_corrected_by_eccdelayed",
        "errors_corrected_by_rereads_rewrites",
        "total_errors_corrected",
        "correction_algorithm_invocations",
    )
    out: dict[str, Any] = {}
    for key, part in zip(keys, parts[:5], strict=True):
        if not part.isdecimal() or len(part) > _MAX_DIGITS:
            return None
        out[key] = int(part)
    out["gigabytes_processed"] = parts[5]
    if not parts[6].isdecimal() or len(parts[6]) > _MAX_DIGITS:
        return None
    out["total_uncorrected_errors"] = int(parts[6])
    return out


# The Health field each NVMe fact feeds, for citing its line ("percentage_used" came from line 412); nvme-cli's
# smart-log keys are the same (probe/nvme_text.py).
NVME_HEALTH_FIELDS = {
    "critical_warning": "critical_warning",
    "temperature": "temperature_c",
    "available_spare": "available_spare_pct",
    "available_spare_threshold": "available_spare_threshold_pct",
    "percentage_used": "percentage_used",
    "media_errors": "media_errors",
    "num_err_log_entries": "error_log_entries",
    "power_on_hours": "power_on_hours",
    "power_cycles": "power_cycles",
    "unsafe_shutdowns": "unsafe_shutdowns",
}
_ATA_FIELDS = {5: "ata_reallocated_sectors", 197: "ata_pending_sectors", 198: "ata_offline_uncorrectable"}
_ATA_FIELDS[199] = "ata_crc_errors"


def _field_lines(where: dict[str, int]) -> dict[str, int]:
    out = dict(where)
    for key, field_name in NVME_HEALTH_FIELDS.items():
        if key in where:
            out.setdefault(field_name, where[key])
    for attr_id, field_name in _ATA_FIELDS.items():
        if f"attribute {attr_id}" in where:
            out.setdefault(field_name, where[f"attribute {attr_id}"])
    return {k: v for k, v in out.items() if v}
