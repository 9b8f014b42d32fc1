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
from typing import Any

from disksleuth.errors import ParseError
from disksleuth.model import Health, LbaFormat
from disksleuth.probe.smart_attributes import parse_attributes, parse_latest_self_test

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


def _dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list:
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
            raise ParseError(f"the {what} JSON is truncated or malformed ({exc.msg} at line {exc.lineno})") from None
        raise ParseError(f"this is not {what} JSON output{hint}") from None
    except RecursionError:
        raise ParseError(f"the {what} JSON is nested too deeply") from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise ParseError(f"the {what} JSON holds an impossible value ({str(exc).split(':')[0][:80]})") from None


def load_smartctl_json(text: str) -> dict:
    """The JSON object, or ParseError with one plain reason."""
    if not text.strip():
        raise ParseError("the smartctl output is empty")
    doc = load_json(text, "smartctl", " (was it saved without --json?)")
    if not isinstance(doc, dict):
        raise ParseError("this is not smartctl JSON output (expected an object)")
    version = doc.get("json_format_version")
    if not (isinstance(version, list) and version and version[0] == 1):
        raise ParseError(f"unsupported smartctl json_format_version {version!r} (disksleuth reads version 1)")
    return doc


def parse_smartctl_json(text: str) -> Health:
    doc = load_smartctl_json(text)
    smartctl = _dict(doc.get("smartctl"))
    status = _int(smartctl.get("exit_status"))
    messages = tuple(
        m["string"] for m in _list(smartctl.get("messages")) if isinstance(m, dict) and _str(m.get("string"))
    )
    device = _str(_get(doc, "device", "name"))
    protocol = _str(_get(doc, "device", "protocol"))
    has_data = any(
        k in doc
        for k in (
            "smart_status",
            "nvme_smart_health_information_log",
            "ata_smart_attributes",
            "temperature",
            "model_name",
            "scsi_model_name",
            "power_on_time",
        )
    )
    if not has_data:
        why = "; ".join(messages) or "; ".join(decode_exit_status(status)) or "no device data in the output"
        raise ParseError(f"no SMART data: {why}")
    nvme = _dict(doc.get("nvme_smart_health_information_log"))
    table = _list(_get(doc, "ata_smart_attributes", "table"))
    attrs = {a["id"]: a for a in table if isinstance(a, dict) and _int(a.get("id"))}

    def ata_raw(attr_id: int) -> int | None:
        # raw.value holds vendor-packed bits for some attributes; the low 32 bits are the count.
        raw = _int(_get(attrs.get(attr_id), "raw", "value"))
        return raw & 0xFFFFFFFF if raw is not None and raw >= 0 else None

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
        if (value := _int(nvme.get(key))) is not None
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
        capacity_bytes=_int(_get(doc, "user_capacity", "bytes")),
        smart_passed=_bool(_get(doc, "smart_status", "passed")),
        temperature_c=_int(_get(doc, "temperature", "current"))
        if _get(doc, "temperature", "current") is not None
        else _int(nvme.get("temperature")),
        temperature_warning_c=_int(_get(doc, "temperature", "op_limit_max")),
        temperature_critical_c=_int(_get(doc, "temperature", "critical_limit_max"))
        or _int(_get(doc, "temperature", "drive_trip")),
        power_on_hours=_int(_get(doc, "power_on_time", "hours")),
        power_cycles=_int(doc.get("power_cycle_count"))
        if doc.get("power_cycle_count") is not None
        else _int(nvme.get("power_cycles")),
        unsafe_shutdowns=_int(nvme.get("unsafe_shutdowns")),
        percentage_used=_int(nvme.get("percentage_used")),
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
        self_test=parse_latest_self_test(doc),
    )


def parse_nvme_id_ns_json(text: str) -> tuple[LbaFormat, ...]:
    """LBA formats from `nvme id-ns DEV -o json` (nvme-cli), for smartctl older than 7.3.

    nvme-cli prints "flbas" (bits 0-3: the format in use) and "lbafs": [{"ms", "ds", "rp"}], with
    ds as a power of two (NVMe base spec, Identify Namespace, LBA Format Data Structure)."""
    doc = load_json(text, "nvme id-ns", " (run nvme id-ns with -o json)")
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
