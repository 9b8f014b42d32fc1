"""Pure parser for `smartctl --json` (smartmontools 7.0+), normalised across NVMe, ATA/SAT and SCSI.

Keys, from smartmontools src/nvmeprint.cpp, ataprint.cpp, scsiprint.cpp and smartctl.cpp:
- `json_format_version` is [1, 0] in every 7.x release; a different major means a format we don't know.
- `smartctl.exit_status` is smartctl's exit-status bitmask (smartctl(8) "EXIT STATUS");
  `smartctl.messages[]` carries its errors ("Unable to detect device type", "open device ... failed").
- `temperature.current` everywhere; `temperature.op_limit_max` is NVMe WCTEMP or the ATA SCT limit,
  `temperature.critical_limit_max` is NVMe CCTEMP, `temperature.drive_trip` is the SCSI trip point.
- NVMe: `nvme_smart_health_information_log.*`, with `-x` also `thermal_mgmt_temperature_{1,2}_*`,
  and `nvme_namespaces[].lba_formats[]` {formatted, data_bytes, metadata_bytes, relative_performance}.
- ATA: `ata_smart_attributes.table[]` by id (5, 197, 198, 199), `interface_speed.{current,max}`,
  `ata_smart_error_log.{summary,extended}.count`.
- SCSI: `scsi_grown_defect_list`, `scsi_error_counter_log.{read,write}.total_uncorrected_errors`.
The captures in tests/data/smartctl were made without `-x`; every field is optional.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from disksleuth.errors import ParseError, json_problem
from disksleuth.model.run import Health, LbaFormat
from disksleuth.probe.drivedb import attribute_preset, first_word
from disksleuth.probe.error_logs import parse_error_log
from disksleuth.probe.smart_attributes import parse_attributes, parse_latest_self_test
from disksleuth.probe.smart_data_units import data_bytes
from disksleuth.probe.smart_selftests import (
    has_self_test_log,
    parse_running_self_test,
    parse_self_test_log,
    parse_self_test_minutes,
)

# The most of a saved `smartctl --json` file read (health --from-smartctl). `-x` output is tens of KiB
# (the captures here are at most 14 KB); a drive with full error and self-test logs stays well under 1 MiB.
MAX_SMARTCTL_JSON_BYTES = 16 << 20

# smartctl(8), EXIT STATUS: bit -> meaning
EXIT_BITS = {
    0: "command line did not parse",
    1: "device open failed, or the device did not answer",
    2: "a SMART or other ATA command failed, or a checksum error in SMART data",
    3: "SMART status check returned DISK FAILING",
    4: "prefail attributes at or below threshold",
    5: "usage or prefail attributes were at or below threshold in the past",
    6: "the device error log contains errors",
    7: "the self-test log contains errors",
}

# NVMe critical warning bits (NVMe base spec, SMART / Health log byte 0; smartmontools names).
CRITICAL_WARNING_BITS = {
    0: "available spare below threshold",
    1: "temperature above or below threshold",
    2: "reliability degraded (media or internal errors)",
    3: "media placed in read-only mode",
    4: "volatile memory backup device failed",
    5: "persistent memory region unreliable",
}

ATA_REALLOCATED, ATA_PENDING, ATA_OFFLINE_UNC, ATA_CRC = 5, 197, 198, 199

# ATA attribute IDs mean different things on different drives; smartctl names each one from drivedb.h
# (smartmontools drivedb/drivedb.h: "DEFAULT" entry and the per-family "-v ID,format,Name" presets).
# So the warning signs are read by the NAME smartctl printed, which is what the drive's family means.
#
# Media: sectors or blocks the drive could not read or had to retire. DEFAULT: 5 Reallocated_Sector_Ct,
# 196 Reallocated_Event_Count, 197 Current_Pending_Sector, 198 Offline_Uncorrectable, 187 Reported_Uncorrect,
# 181 Program_Fail_Cnt_Total, 182 Erase_Fail_Count_Total, 183 Runtime_Bad_Block;
# families: Intel 197 Pending_Sector_Count, 187 Uncorrectable_Error_Cnt; Crucial 5 Reallocate_NAND_Blk_Cnt;
# ATP 198 Offline_UErr_Media_Scan; Kingston/Phison 170 Grown_Failing_Block_Ct; Samsung 171/172 *_Fail_Count.
# Counts of factory bad blocks (Bad_Block_Count) and *_Rate attributes (vendor-packed) are left out, and so is
# 198 where a family renames it (drivedb: "-v 198,raw48,Not_In_Use").
_MEDIA_NAME = re.compile(
    r"Realloc|Retired_Block|Pending|Uncor|UErr|Program_Fail|Erase_Fail|Runtime_Bad_Block|Grown_(?:Bad|Failing)"
)
# Interface: the link between host and drive. DEFAULT 199 UDMA_CRC_Error_Count; families: Samsung 199
# CRC_Error_Count, Micron/ATP 199 SATA_CRC_Error_Count / SATA_FIS_CRC_Errors, Intel/Micron 183
# SATA_Downshift_Count / SATA_Int_Downshift_Ct / SATA_Iface_Downshift (link speed lowered after errors),
# WD/SanDisk 168 SATA_PHY_Error_Count, 212 SATA_PHY_Error.
_INTERFACE_NAME = re.compile(r"CRC|Downshift|PHY_Err|Interface_Err|Iface_Err")
# Wear: attributes whose NORMALISED value is the share of rated life left (100 new, counting down towards the
# threshold; SMART normalised values always fall as things get worse). drivedb: Samsung 177 Wear_Leveling_Count,
# Intel 233 Media_Wearout_Indicator, Micron/Crucial 202 Percent_Lifetime_Remain ("norm = max(100-raw,0); raw =
# percent_lifetime_used") and older 202 Perc_Rated_Life_Used / Percent_Lifetime_Used, SandForce/Kingston 231
# SSD_Life_Left, WD/SanDisk 169 Remaining_Lifetime_Perc, WD 230 Media_Wearout_Indicator, and the 245/248 "life
# remaining" spellings of Phison, SiliconMotion and Maxio. IDs alone would mislead: WD/SanDisk 233 is NAND writes.
WEAR_NAMES = frozenset(
    {
        "Wear_Leveling_Count",
        "Media_Wearout_Indicator",
        "Percent_Lifetime_Remain",
        "Perc_Rated_Life_Used",
        "Percent_Lifetime_Used",
        "SSD_Life_Left",
        "SSD_Life_Left_Perc",
        "Remaining_Lifetime_Perc",
        "Lifetime_Left",
        "Percent_Life_Remaining",
        "Remaining_Life",
        "SSD_Remaining_Life_Perc",
        "Perc_Rated_Life_Remain",
        "PCT_Life_Remaining",
        "Lifetime_Remaining%",
    }
)
# SATA Phy Event Counters (smartctl -x, ataprint.cpp PrintSataPhyEventCounters; SATA 3.x 13.7.4): the CRC ones.
SATA_PHY_CRC_IDS = {0x001: "ICRC errors", 0x00B: "host-to-device FIS CRC errors", 0x00F: "data FIS CRC R_ERR"}
SATA_PHY_CRC_IDS[0x012] = "non-data FIS CRC R_ERR"
# SAS Protocol Specific Port log page (smartctl -x, scsiprint.cpp show_sas_port_param): per phy. Link resets at
# power-on also count invalid dwords, so only their growth during a run is a sign (analysis/health.py).
SAS_PHY_COUNTERS = (
    "Invalid DWORD count",
    "Running disparity error count",
    "Loss of DWORD synchronization count",
    "Phy reset problem count",
)


# The keys of smartctl's JSON that carry anything about the drive: a document with none of them read nothing.
SMART_DATA_KEYS = (
    "smart_status",
    "nvme_smart_health_information_log",
    "ata_smart_attributes",
    "temperature",
    "model_name",
    "scsi_model_name",
    "power_on_time",
)


def decode_exit_status(status: int | None) -> tuple[str, ...]:
    if not status:
        return ()
    return tuple(text for bit, text in EXIT_BITS.items() if status & (1 << bit))


def decode_critical_warning(value: int | None) -> tuple[str, ...]:
    if not value:
        return ()
    words = [text for bit, text in CRITICAL_WARNING_BITS.items() if value & (1 << bit)]
    if value & ~0x3F:
        words.append(f"other bits 0x{value & ~0x3F:02x}")
    return tuple(words)


def _get(d: Any, *path: str | int) -> Any:
    for key in path:
        if isinstance(d, dict):
            d = d.get(key)
        elif isinstance(d, list) and isinstance(key, int) and 0 <= key < len(d):
            d = d[key]
        else:
            return None
    return d


# smartctl prints counters as JSON integers up to 128 bits (NVMe data units, ATA raw values); a
# value past that, NaN, Infinity or a bool is treated as missing, never trusted or raised.
_INT_LIMIT = 1 << 128


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        v = int(v) if math.isfinite(v) else None
    return v if isinstance(v, int) and -_INT_LIMIT < v < _INT_LIMIT else None


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    """A string field (model, serial, firmware, device name); other JSON types are not strings."""
    return v if isinstance(v, str) else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def load_json(text: str, what: str, hint: str = "") -> Any:
    """json.loads for files from outside: ParseError for malformed text, NaN/Infinity (not JSON),
    integers past Python's 4,300-digit limit and nesting deeper than the recursion limit."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith(("{", "[")):
            problem = json_problem(exc.msg, exc.lineno)
            raise ParseError(f"the {what} JSON is truncated or malformed ({problem})") from None
        raise ParseError(f"this is not {what} JSON output{hint}") from None
    except RecursionError:
        raise ParseError(f"the {what} JSON is nested too deeply") from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise ParseError(f"the {what} JSON holds an impossible value ({str(exc).split(':')[0][:80]})") from None


def load_smartctl_json(text: str) -> dict[str, Any]:
    """The JSON object, or ParseError with one plain reason."""
    if not text.strip():
        raise ParseError("the smartctl output is empty")
    return smartctl_document(load_json(text, "smartctl", " (was it saved without --json?)"))


def smartctl_document(doc: Any) -> dict[str, Any]:
    """A decoded value as smartctl's JSON object (json_format_version checked), or ParseError. For callers that
    decode the text themselves (a paste is decoded within a memory budget: run/paste.py)."""
    if not isinstance(doc, dict):
        raise ParseError("this is not smartctl JSON output (expected an object)")
    version = doc.get("json_format_version")
    # [1, 0] since smartctl 7.0; [0, 1] is the 6.7 development JSON (same keys). Tools that keep captures
    # (Scrutiny's testdata) sometimes drop the field; a document with device data still reads.
    if version is None and any(k in doc for k in ("device", "model_name", "smart_status")):
        version = [1, 0]
    if not (isinstance(version, list) and version and version[0] in (0, 1)):
        raise ParseError(f"unsupported smartctl json_format_version {version!r} (disksleuth reads version 1)")
    return doc


def parse_smartctl_json(text: str) -> Health:
    return health_from_smartctl_doc(load_smartctl_json(text))


def health_from_smartctl_doc(doc: dict[str, Any]) -> Health:
    """Health from a smartctl JSON document, or one built in its shape from smartctl's text
    (probe/smartctl_text.py), so both give the same model and the same findings."""
    smartctl = _dict(doc.get("smartctl"))
    status = _int(smartctl.get("exit_status"))
    messages = tuple(
        m["string"] for m in _list(smartctl.get("messages")) if isinstance(m, dict) and _str(m.get("string"))
    )
    device = _str(_get(doc, "device", "name"))
    protocol = _str(_get(doc, "device", "protocol"))
    has_data = any(k in doc for k in SMART_DATA_KEYS)
    if not has_data and isinstance(doc.get("devices"), list):
        raise ParseError("this is `smartctl --scan` output (a list of devices), not one device's health")
    if not has_data:
        why = "; ".join(messages) or "; ".join(decode_exit_status(status)) or "no device data in the output"
        raise ParseError(f"no SMART data: {why}")
    nvme = _dict(doc.get("nvme_smart_health_information_log"))
    ata_table = _list(_get(doc, "ata_smart_attributes", "table"))
    attrs = {a["id"]: a for a in ata_table if isinstance(a, dict) and _int(a.get("id"))}

    def ata_raw(attr_id: int) -> int | None:
        return _attr_count(attrs.get(attr_id))

    def speed_gbps(which: str) -> float | None:
        units = _int(_get(doc, "interface_speed", which, "units_per_second"))
        bits = _int(_get(doc, "interface_speed", which, "bits_per_unit"))
        if units is None or not bits or units < 0 or bits < 0 or units * bits > 10**15:  # 1 Pb/s: not a link
            return None
        return round(units * bits / 1e9, 1)

    error_log = _int(nvme.get("num_err_log_entries"))
    if error_log is None:
        error_log = _int(_get(doc, "ata_smart_error_log", "extended", "count"))
    if error_log is None:
        error_log = _int(_get(doc, "ata_smart_error_log", "summary", "count"))
    scsi_unc = [
        _int(_get(doc, "scsi_error_counter_log", d, "total_uncorrected_errors")) for d in ("read", "write", "verify")
    ]
    scsi_unc_known = [v for v in scsi_unc if v is not None]
    throttle = {
        key: value
        for key in (
            "warning_temp_time",
            "critical_comp_time",
            "thermal_mgmt_temperature_1_transition_count",
            "thermal_mgmt_temperature_1_total_time",
            "thermal_mgmt_temperature_2_transition_count",
            "thermal_mgmt_temperature_2_total_time",
        )
        if (value := _int(nvme.get(key))) is not None and value >= 0  # unsigned in the log: below 0 is no count
    }
    formats = []
    for i, f in enumerate(_list(_get(doc, "nvme_namespaces", 0, "lba_formats"))):
        if isinstance(f, dict) and _int(f.get("data_bytes")):
            formats.append(
                LbaFormat(
                    id=i,
                    data_bytes=_int(f.get("data_bytes")) or 0,
                    metadata_bytes=_int(f.get("metadata_bytes")) or 0,
                    relative_performance=_int(f.get("relative_performance")) or 0,
                    in_use=bool(f.get("formatted")),
                )
            )
    table = tuple(a for a in (_attribute(a) for a in attrs.values()) if a is not None)
    wear_used, wear_source = _percentage_used(doc, nvme, table)
    crit = _int(nvme.get("critical_warning"))
    if crit is None:
        crit = _int(_get(doc, "smart_status", "nvme", "value"))
    version = smartctl.get("version")
    return Health(
        device=device,
        protocol=protocol,
        model=_str(doc.get("model_name")) or _str(doc.get("scsi_model_name")),
        serial=_str(doc.get("serial_number")),
        firmware=_str(doc.get("firmware_version")) or _str(doc.get("scsi_revision")),
        capacity_bytes=_capacity_bytes(doc),
        smart_passed=_bool(_get(doc, "smart_status", "passed")),
        temperature_c=_int(_get(doc, "temperature", "current"))
        if _get(doc, "temperature", "current") is not None
        else _int(nvme.get("temperature")),
        temperature_warning_c=_temperature_limit(doc, "op_limit_max", "warning"),
        temperature_critical_c=_temperature_limit(doc, "critical_limit_max", "critical"),
        power_on_hours=_int(_get(doc, "power_on_time", "hours")),
        power_cycles=_int(doc.get("power_cycle_count"))
        if doc.get("power_cycle_count") is not None
        else _int(nvme.get("power_cycles")),
        unsafe_shutdowns=_int(nvme.get("unsafe_shutdowns")),
        percentage_used=wear_used,
        available_spare_pct=_int(nvme.get("available_spare")),
        available_spare_threshold_pct=_int(nvme.get("available_spare_threshold")),
        media_errors=_int(nvme.get("media_errors")),
        error_log_entries=error_log,
        critical_warning=decode_critical_warning(crit),
        ata_reallocated_sectors=ata_raw(ATA_REALLOCATED),
        ata_pending_sectors=ata_raw(ATA_PENDING),
        ata_offline_uncorrectable=ata_raw(ATA_OFFLINE_UNC),
        ata_crc_errors=ata_raw(ATA_CRC),
        scsi_grown_defects=_int(doc.get("scsi_grown_defect_list")),
        scsi_uncorrected_errors=sum(scsi_unc_known) if scsi_unc_known else None,
        sata_speed_current_gbps=speed_gbps("current"),
        sata_speed_max_gbps=speed_gbps("max"),
        lba_formats=tuple(formats),
        throttle=throttle,
        smartctl_version=".".join(str(v) for v in version if isinstance(v, (int, str)))
        if isinstance(version, list)
        else None,
        exit_status=status,
        exit_status_words=decode_exit_status(status),
        messages=messages,
        attributes=parse_attributes(doc),
        self_test=parse_running_self_test(doc) or parse_latest_self_test(doc),
        self_tests=parse_self_test_log(doc),
        self_test_log_read=has_self_test_log(doc),
        self_test_minutes=parse_self_test_minutes(doc),
        data_written_bytes=data_bytes(doc, "write"),
        data_read_bytes=data_bytes(doc, "read"),
        temperature_sensors_c=_temperature_sensors(nvme, table),
        percentage_used_source=wear_source,
        interface_error_counts=_interface_errors(doc, table),
        media_error_counts=_media_errors(doc, nvme, table),
        error_log=parse_error_log(doc),
        rotation_rate_rpm=_int(doc.get("rotation_rate")),
    )


def _temperature_limit(doc: dict[str, Any], key: str, nvme_key: str) -> int | None:
    """A limit the drive reports: `temperature.<key>`, else smartctl 7.4's `nvme_composite_temperature_threshold`
    (WCTEMP, CCTEMP); for the critical one also the ATA SCT `limit_max` and the SCSI `drive_trip`. 0 is "not
    reported" (NVMe leaves WCTEMP/CCTEMP 0; a RAID controller passes a trip of 0)."""
    keys = (key, "limit_max", "drive_trip") if nvme_key == "critical" else (key,)
    for value in [_int(_get(doc, "temperature", k)) for k in keys] + [
        _int(_get(doc, "nvme_composite_temperature_threshold", nvme_key))
    ]:
        if value:
            return value
    return None


def _attr_count(attr: Any) -> int | None:
    """The count smartctl shows for an attribute: the leading number of raw.string, formatted per drivedb
    (raw48, raw16(raw16), tempminmax: "31 (Min/Max 24/41)"); raw.value packs vendor bits for some."""
    if not isinstance(attr, dict):
        return None
    text = _get(attr, "raw", "string")
    if isinstance(text, str):
        # Bounded: a 10,000-digit raw value is past Python's int() limit and no counter (48 bits) needs it.
        m = re.match(r"\s*(0x[0-9a-fA-F]{1,16}(?![0-9a-fA-F])|\d{1,20}(?!\d))", text)
        if m:
            return int(m.group(1), 0)
    raw = _int(_get(attr, "raw", "value"))
    return raw & 0xFFFFFFFF if raw is not None else None


@dataclass(frozen=True)
class _AtaRow:
    """An ATA attribute as the warning-sign rules read it: smartctl's name (from drivedb.h for this model,
    since IDs mean different things on different drives) and the count smartctl shows."""

    id: int
    name: str
    value: int | None  # normalised, vendor scale (usually 100 or 200 = new); lower is worse
    raw: int | None
    worst: int | None = None
    thresh: int | None = None


def _attribute(a: dict[str, Any]) -> _AtaRow | None:
    attr_id = _int(a.get("id"))
    if attr_id is None:
        return None
    name = _str(a.get("name"))
    if name is None:
        name = f"Unknown_Attribute_{attr_id}"
    return _AtaRow(
        id=attr_id,
        name=name,
        value=_int(a.get("value")),
        raw=_attr_count(a),
        worst=_int(a.get("worst")),
        thresh=_int(a.get("thresh")),
    )


def _capacity_bytes(doc: dict[str, Any]) -> int | None:
    """user_capacity; else the first namespace's size; else the controller's total NVM capacity
    (nvmeprint.cpp: `nvme_total_capacity` = Identify Controller TNVMCAP, printed when namespaces are not)."""
    for path in (("user_capacity", "bytes"), ("nvme_namespaces", 0, "size", "bytes"), ("nvme_total_capacity",)):
        value = _int(_get(doc, *path))
        if value is not None and value > 0:
            return value
    return None


def _temperature_sensors(nvme: dict[str, Any], table: tuple[_AtaRow, ...]) -> tuple[float, ...]:
    """NVMe Temperature Sensors 1-8 (nvmeprint.cpp `temperature_sensors`, Kelvin - 273) and every ATA
    temperature attribute (DEFAULT 190 Airflow_Temperature_Cel, 194 Temperature_Celsius; Intel 190
    Drive_Temperature)."""
    sensors = nvme.get("temperature_sensors")
    if isinstance(sensors, list):
        return tuple(float(v) for v in sensors if _int(v) is not None)
    return tuple(float(a.raw) for a in table if "Temp" in a.name and a.raw is not None and 0 < a.raw < 150)


def _percentage_used(
    doc: dict[str, Any], nvme: dict[str, Any], table: tuple[_AtaRow, ...]
) -> tuple[int | None, str | None]:
    """Share of rated endurance used: NVMe percentage_used; else the standard ATA Device Statistics / SCSI
    log page 0x11 figure (smartctl sets `endurance_used.current_percent` from both); else the vendor wear
    attributes (WEAR_NAMES), as 100 minus the normalised value, the most worn one when there are several."""
    used = _int(nvme.get("percentage_used"))
    if used is not None:
        return used, None
    used = _int(_get(doc, "endurance_used", "current_percent"))
    if used is not None:
        return used, "the drive's Percentage Used Endurance Indicator (device statistics)"
    best: tuple[int, str] | None = None
    for a in table:
        # Normalised values above 100 are on another scale (or 253, "not yet computed"): not a percentage.
        # Value, worst and threshold all 0: the firmware keeps no normalised values (they run 1-253), so 0 is
        # no reading (linuxhw 2E256-TU2-510B00: every vendor attribute 000/000/000, 177 and 233 among them).
        # Micron's 202 at 0 has threshold 1, and is a real end of life.
        unset = a.value == 0 and not a.worst and not a.thresh
        if a.name in WEAR_NAMES and a.value is not None and 0 <= a.value <= 100 and not unset:
            worn = 100 - a.value
            if best is None or worn > best[0]:
                best = (worn, f"ATA {a.id} {a.name} (normalised value {a.value})")
    return best if best else (None, None)


def _interface_errors(doc: dict[str, Any], table: tuple[_AtaRow, ...]) -> dict[str, int]:
    out = {f"{a.name} (ATA {a.id})": a.raw for a in table if _INTERFACE_NAME.search(a.name) and a.raw is not None}
    for row in _list(_get(doc, "sata_phy_event_counters", "table")):
        counter_id, value = _int(_get(row, "id")), _int(_get(row, "value"))
        if counter_id in SATA_PHY_CRC_IDS and value is not None:
            out[f"SATA phy {SATA_PHY_CRC_IDS[counter_id]} (0x{counter_id:03x})"] = value
    for key, port in doc.items():
        if isinstance(key, str) and key.startswith("scsi_sas_port_") and isinstance(port, dict):
            for phy_key, phy in port.items():
                if not (isinstance(phy_key, str) and phy_key.startswith("phy_") and isinstance(phy, dict)):
                    continue
                for counter in SAS_PHY_COUNTERS:
                    value = _int(phy.get(counter))
                    if value is not None:
                        out[f"SAS port {key.removeprefix('scsi_sas_port_')} {phy_key} {counter}"] = value
    return out


# The most a 175 count printed under drivedb's DEFAULT name (Program_Fail_Count_Chip) can be and still be a count:
# above it the raw value uses more than its low 16-bit word, the packed fields of a drive smartctl did not know.
_PLAIN_COUNT_MAX = 0xFFFF


def _media_count(row: _AtaRow, model: str, firmware: str | None) -> int | None:
    """The count of failures an attribute with a media name stands for; None when it is no such count.

    Attribute 175 is what each family makes it (drivedb.h): Intel's Power_Loss_Cap_Test ("4170 (247 9539)", packed
    test results), SanDisk's PwrLoss_ProtectionFail, SSSTC's PLP_Failure... A smartctl whose drivedb lacks the drive
    prints the DEFAULT name Program_Fail_Count_Chip over that packed raw value (linuxhw/EnterpriseDrive INTEL
    SSDSC2BB012T7 with smartctl 6.6: 447027690206; HPE's VK000480GWSXF, an Intel DC S3x10: 1349124162158). The
    installed drive database decides where it names the drive (its name, and the first word of a raw16 format);
    else a DEFAULT-named value past one 16-bit word is packed, not counted (issue 40)."""
    if row.id != 175 or row.raw is None:
        return row.raw
    if model.upper().startswith("INTEL SSD"):
        return None
    preset = attribute_preset(model, firmware, 175)
    if preset is not None:
        fmt, name = preset
        return first_word(row.raw, fmt) if name is None or _MEDIA_NAME.search(name) else None
    if row.name == "Program_Fail_Count_Chip" and row.raw > _PLAIN_COUNT_MAX:
        return None
    return row.raw


def _media_errors(doc: dict[str, Any], nvme: dict[str, Any], table: tuple[_AtaRow, ...]) -> dict[str, int]:
    model = str(doc.get("model_name") or "")
    firmware = _str(doc.get("firmware_version"))
    counts = {a: _media_count(a, model, firmware) for a in table if _MEDIA_NAME.search(a.name) and "Rate" not in a.name}
    out = {f"{a.name} (ATA {a.id})": count for a, count in counts.items() if count is not None}
    # NVMe Media and Data Integrity Errors (SMART / Health log bytes 160-175).
    if (nvme_media := _int(nvme.get("media_errors"))) is not None:
        out["NVMe media and data integrity errors"] = nvme_media
    # SCSI: the grown defect list (READ DEFECT DATA) and errors the drive could not correct (error counter
    # log pages 0x02/0x03/0x05, scsiprint.cpp `total_uncorrected_errors`); pending defects (SBC-4 0x15,0x01).
    if (grown := _int(doc.get("scsi_grown_defect_list"))) is not None:
        out["SCSI grown defects"] = grown
    for direction in ("read", "write", "verify"):
        value = _int(_get(doc, "scsi_error_counter_log", direction, "total_uncorrected_errors"))
        if value is not None:
            out[f"SCSI uncorrected {direction} errors"] = value
    if (pending := _int(_get(doc, "scsi_pending_defects", "count"))) is not None:
        out["SCSI pending defects"] = pending
    return out


def parse_nvme_id_ns_json(text: str) -> tuple[LbaFormat, ...]:
    """LBA formats from `nvme id-ns DEV -o json` (nvme-cli), for smartctl older than 7.3.

    nvme-cli prints "flbas" (bits 0-3: the format in use) and "lbafs": [{"ms", "ds", "rp"}], with
    ds as a power of two (NVMe base spec, Identify Namespace, LBA Format Data Structure)."""
    return nvme_id_ns_formats(load_json(text, "nvme id-ns", " (run nvme id-ns with -o json)"))


def nvme_id_ns_formats(doc: Any) -> tuple[LbaFormat, ...]:
    """The LBA formats of a decoded `nvme id-ns -o json` value, or ParseError."""
    if not isinstance(doc, dict) or not isinstance(doc.get("lbafs"), list):
        raise ParseError("nvme id-ns output has no lbafs list")
    in_use = (_int(doc.get("flbas")) or 0) & 0x0F
    out = []
    for i, f in enumerate(doc["lbafs"]):
        ds = _int(f.get("ds")) if isinstance(f, dict) else None
        # LBADS is log2 of the sector size; the spec allows 9 (512 B) and up, real drives use 9 or 12.
        if ds is None or not 9 <= ds <= 32:
            continue
        out.append(LbaFormat(i, 1 << ds, _int(f.get("ms")) or 0, _int(f.get("rp")) or 0, i == in_use))
    return tuple(out)
