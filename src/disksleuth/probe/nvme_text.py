"""nvme-cli's text output (pure): `nvme smart-log`, `nvme list`, `nvme id-ns [-H]`, `nvme id-ctrl`.

`smart-log` is read into the shape of smartctl's JSON and then into Health by the same code as `smartctl --json`
(probe/smart_parse.py), so a pasted nvme-cli log gives the same model and the same warning signs as smartctl's.

Formats, from nvme-cli's nvme-print.c (0.x, 1.x, 2.x) and the real texts in tests/data/paste/nvme:
- smart-log: "key : value" lines. nvme-cli 1.x: snake_case keys, "temperature : 36 C", "8,743,226";
  2.x: "Data Units Read : 7,871 (4.03 GB)", "33°C (306 Kelvin)", tabs between key and colon.
- list: fixed-width columns under a "----" ruler; 0.x adds "Version", 2.x adds "Generic" and prints the NSID in hex.
- id-ns: "lbaf  0 : ms:0   lbads:9  rp:0x2 (in use)"; with -H "LBA Format  0 : Metadata Size: 0   bytes - Data
  Size: 512 bytes - Relative Performance: 0x2 Good (in use)".
Every pattern is anchored and bounded, and every line is read once: linear in the text. Lines come cut to the
normaliser's limit (probe/paste_text.py, MAX_LINE_CHARS).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from disksleuth.errors import ParseError
from disksleuth.model.paste import PastedHealth, PastedNvmeController, PastedNvmeNamespace
from disksleuth.model.run import LbaFormat
from disksleuth.probe.paste_text import iter_lines
from disksleuth.probe.smart_parse import health_from_smartctl_doc
from disksleuth.probe.smartctl_text import NVME_HEALTH_FIELDS

# Counters are 128-bit in the NVMe log (39 digits, 51 with thousands separators); a longer run is not a counter.
_NUM = re.compile(r"^\s*(0x[0-9a-fA-F]{1,32}|-?\d{1,3}(?:,\d{3}){1,16}|-?\d{1,40})(?![\d,])")
# The key and the spaces before its colon are one possessive run (stripped in Python): as two runs over the same
# spaces, every split of them was tried.
_KV = re.compile(r"^\s*+([A-Za-z][A-Za-z0-9 _.\t]{0,100}+):(.*)")
_DEVICE = re.compile(r"^\s*Smart Log for NVME device:\s*(\S{1,64})")
# "36 C", "33°C (306 Kelvin)", "-273 °C (0 K, -459 °F)", "309 K" (nvme-cli before 1.0 printed Kelvin).
_TEMPERATURE = re.compile(r"^\s*(-?\d{1,5})\s?(?:°\s?)?(C|K|F)\b")

# smart-log keys (lowercased, spaces and tabs as "_") -> the key of smartctl's nvme_smart_health_information_log.
_SMART_KEYS = {
    "critical_warning": "critical_warning",
    "temperature": "temperature",
    "available_spare": "available_spare",
    "available_spare_threshold": "available_spare_threshold",
    "percentage_used": "percentage_used",
    "data_units_read": "data_units_read",
    "data_units_written": "data_units_written",
    "host_read_commands": "host_reads",
    "host_write_commands": "host_writes",
    "controller_busy_time": "controller_busy_time",
    "power_cycles": "power_cycles",
    "power_on_hours": "power_on_hours",
    "unsafe_shutdowns": "unsafe_shutdowns",
    "media_errors": "media_errors",
    "num_err_log_entries": "num_err_log_entries",
    "warning_temperature_time": "warning_temp_time",
    "critical_composite_temperature_time": "critical_comp_time",
    "thermal_management_t1_trans_count": "thermal_mgmt_temperature_1_transition_count",
    "thermal_management_t2_trans_count": "thermal_mgmt_temperature_2_transition_count",
    "thermal_management_t1_total_time": "thermal_mgmt_temperature_1_total_time",
    "thermal_management_t2_total_time": "thermal_mgmt_temperature_2_total_time",
}
_SENSOR = re.compile(r"^temperature_sensor_(\d)$")


def _num(text: str) -> int | None:
    m = _NUM.match(text)
    if not m:
        return None
    raw = m.group(1).replace(",", "")
    return int(raw, 16) if raw.startswith("0x") else int(raw)


def _celsius(text: str) -> int | None:
    """A temperature as nvme-cli prints it, in °C; None for a sensor that reports nothing (0 K)."""
    m = _TEMPERATURE.match(text)
    if not m:
        return None
    value, unit = int(m.group(1)), m.group(2)
    if unit == "K":
        value -= 273
    elif unit == "F":
        value = round((value - 32) * 5 / 9)
    # A controller that reports no temperature reads 0 K, which nvme-cli 2.x prints as "-273 °C (0 K, -459 °F)"
    # (a VirtualBox NVMe controller's smart-log); below -60 °C no drive runs.
    return value if value > -60 else None


def parse_nvme_smart_log(text: str, device: str | None = None, first_line: int = 1) -> PastedHealth:
    """Health from `nvme smart-log` text; ParseError when no log field is in it.

    `device` names the drive when the caller knows it; else it comes from the log's "Smart Log for NVME device:"
    header. `first_line` is the text's first line in the paste, so each fact names its paste line."""
    nvme: dict[str, Any] = {}
    where: dict[str, int] = {}
    sensors: list[int] = []
    name = device
    for offset, line in enumerate(iter_lines(text)):
        no = first_line + offset
        dm = _DEVICE.match(line)
        if dm:
            if name is None:
                name = dm.group(1)
            continue
        kv = _KV.match(line)
        if not kv:
            continue
        key = re.sub(r"[\s_]+", "_", kv.group(1).strip().lower())
        value = kv.group(2).strip()
        sm = _SENSOR.match(key)
        if sm:
            # nvme-cli 1.x prints all 8 sensors, the absent ones as "0 C" (pippim's Samsung 960 PRO log: sensors
            # 3-8 at "0 C" beside 36 and 43): smartctl leaves out sensors that report 0 K, so 0 °C is left out too.
            celsius = _celsius(value)
            if celsius:
                sensors.append(celsius)
            continue
        target = _SMART_KEYS.get(key)
        if target is None:
            continue
        n = _celsius(value) if target == "temperature" else _num(value)
        if n is None or (n < 0 and target != "temperature"):
            continue
        nvme[target] = n
        where[target] = no
    if not nvme:
        raise ParseError(f"no NVMe SMART log fields in the text (from line {first_line}; is it `nvme smart-log`?)")
    if sensors:
        nvme["temperature_sensors"] = sensors
    doc: dict[str, Any] = {"json_format_version": [1, 0], "nvme_smart_health_information_log": nvme}
    if name is not None:
        doc["device"] = {"name": name if name.startswith("/") else f"/dev/{name}", "protocol": "NVMe"}
    else:
        doc["device"] = {"protocol": "NVMe"}
    if "temperature" in nvme:
        doc["temperature"] = {"current": nvme["temperature"]}
    if "power_on_hours" in nvme:
        doc["power_on_time"] = {"hours": nvme["power_on_hours"]}
    if "critical_warning" in nvme:
        # smartctl's NVMe verdict (nvmeprint.cpp): the overall health is FAILED exactly when a critical warning
        # bit is set; it is built the same way here so a pasted nvme-cli log fires the same findings.
        doc["smart_status"] = {"passed": nvme["critical_warning"] == 0, "nvme": {"value": nvme["critical_warning"]}}
        where["smart_passed"] = where["critical_warning"]
    health = health_from_smartctl_doc(doc)
    lines = dict(where)
    for key, field_name in NVME_HEALTH_FIELDS.items():
        if key in where:
            lines[field_name] = where[key]
    return PastedHealth(health, lines)


# --- nvme list ---

_SI = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_SIZE = r"(\d{1,6}(?:[.,]\d{1,3})?)\s{1,4}([kKMGTPE]?)B"
_FORMAT = r"(\d{1,6})\s{1,4}([KMG]?)i?B\s{0,3}\+\s{0,3}(\d{1,6})\s{1,4}B"
# The columns right of the model; they never hold spaces inside a value except Usage and Format, whose shapes are
# fixed: "Usage" is "USED  UNIT /   SIZE  UNIT" and "Format" "SIZE UNIT + META B".
_TAIL = re.compile(
    r"\s{1,40}(0x[0-9a-fA-F]{1,8}|\d{1,10})\s{1,40}"
    + _SIZE
    + r"\s{0,4}/\s{0,4}"
    + _SIZE
    + r"\s{1,40}"
    + _FORMAT
    + r"(?:\s{1,40}(\S{1,16}))?$"
)
# AWS's EC2 guide prints a narrowed list (Node, SN, Model, Namespace) with "..." after the last row.
_NARROW_TAIL = re.compile(r"\s{1,40}(0x[0-9a-fA-F]{1,8}|\d{1,10})(?:\s{1,40}\.\.\.)?$")
_NODE = re.compile(r"^\s*(/dev/\S{1,64}|nvme\S{1,60})")
_RULER = re.compile(r"^\s*+-{4,}+(?:\s++-{2,}+)+\s*+$")
_VERSION = re.compile(r"^\d++\.\d++(?:\.\d++)?")


def _si_bytes(number: str, prefix: str) -> int:
    # nvme-cli prints with the C locale's "." unless LC_NUMERIC says otherwise: a Ceph NVMe-oF guide's list shows
    # "10,49  MB /  10,49  MB" (a comma locale). The column holds at most 3 significant digits, never thousands.
    return round(float(number.replace(",", ".")) * _SI[prefix.upper()])


def parse_nvme_list(text: str, first_line: int = 1) -> list[PastedNvmeNamespace]:
    """Rows of `nvme list` text (nvme-cli 0.x/1.x/2.x); ParseError when the text has no row."""
    header = ""
    rows: list[PastedNvmeNamespace] = []
    for offset, line in enumerate(iter_lines(text)):
        if line.lstrip().startswith("Node"):
            header = line
            continue
        if _RULER.match(line):
            continue
        m = _NODE.match(line)
        if not m:
            continue
        row = _list_row(line, m.end(), header, first_line + offset)
        if row is not None:
            rows.append(dataclasses.replace(row, node=m.group(1)))
    if not rows:
        raise ParseError(f"no device rows in the nvme list text (from line {first_line})")
    return rows


def _list_row(line: str, start: int, header: str, no: int) -> PastedNvmeNamespace | None:
    rest = line[start:].rstrip()
    generic: str | None = None
    # nvme-cli 2.x: "Node  Generic  SN ..." (the generic char device, /dev/ngXnY, second).
    if "Generic" in header or re.match(r"\s+/dev/ng\d", rest):
        gm = re.match(r"\s+(/dev/ng\S{1,60}|-)(?=\s)", rest)
        if gm:
            generic = None if gm.group(1) == "-" else gm.group(1)
            rest = rest[gm.end() :]
    sm = re.match(r"\s+(\S{1,64})", rest)
    if not sm:
        return None
    serial, rest = sm.group(1), rest[sm.end() :]
    tail = _TAIL.search(rest)
    if tail is not None:
        ns, used, used_p, size, size_p, sector, sector_p, meta, firmware = tail.groups()
        model = rest[: tail.start()].strip()
        # nvme-cli 0.x had a "Version" column (the NVMe version, "1.0") between Model and Namespace: the
        # EBS list in oogali/ebs-automatic-nvme-mapping ("Amazon Elastic Block Store  1.0  1  0.00   B /   8.59  GB").
        if "Version" in header:
            words = model.rsplit(None, 1)
            if len(words) == 2 and _VERSION.fullmatch(words[1]):
                model = words[0]
        return PastedNvmeNamespace(
            node="",
            serial=serial,
            model=model or None,
            namespace=int(ns, 0),
            usage_bytes=_si_bytes(used, used_p),
            capacity_bytes=_si_bytes(size, size_p),
            sector_bytes=int(sector) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[sector_p],
            metadata_bytes=int(meta),
            firmware=firmware,
            generic=generic,
            source_line=no,
        )
    narrow = _NARROW_TAIL.search(rest)
    if narrow is None:
        return None
    return PastedNvmeNamespace(
        node="",
        serial=serial,
        model=rest[: narrow.start()].strip() or None,
        namespace=int(narrow.group(1), 0),
        usage_bytes=None,
        capacity_bytes=None,
        sector_bytes=None,
        metadata_bytes=None,
        firmware=None,
        generic=generic,
        source_line=no,
    )


# --- nvme id-ns ---

_LBAF = re.compile(r"^\s*lbaf\s{1,4}(\d{1,2})\s*:\s*ms:(\d{1,5})\s+lbads:(\d{1,3})\s+rp:(0x[0-9a-fA-F]|\d)\b(.*)$")
_LBAF_H = re.compile(
    r"^\s*LBA Format\s{1,4}(\d{1,2})\s*:\s*Metadata Size:\s*(\d{1,5})\s+bytes\s*-\s*Data Size:\s*(\d{1,10})\s+bytes"
    r"(?:\s*-\s*Relative Performance:\s*(0x[0-9a-fA-F]|\d)\b)?(.*)$"
)
_RP_ONLY = re.compile(r"^\s*Relative Performance:\s*(0x[0-9a-fA-F]|\d)\b(.*)$")


def parse_nvme_id_ns(text: str, first_line: int = 1) -> tuple[LbaFormat, ...]:
    """LBA formats from `nvme id-ns` (with or without -H); ParseError when the text lists none.

    Relative performance (NVMe base spec, LBA Format Data Structure): 0 best, 1 better, 2 good, 3 degraded."""
    formats: list[LbaFormat] = []
    pending: tuple[int, int, int] | None = None  # an -H line a mail client broke before "Relative Performance"
    for line in iter_lines(text):
        if pending is not None:
            rp = _RP_ONLY.match(line)
            if rp:
                formats.append(LbaFormat(pending[0], pending[1], pending[2], int(rp.group(1), 0), _in_use(rp.group(2))))
                pending = None
                continue
            formats.append(LbaFormat(pending[0], pending[1], pending[2], 0, False))
            pending = None
        m = _LBAF.match(line)
        if m:
            index, ms, lbads, rp_text, rest = m.groups()
            # LBADS is log2 of the sector size; 9 (512 B) and up (same bound as parse_nvme_id_ns_json).
            if 9 <= int(lbads) <= 32:
                formats.append(LbaFormat(int(index), 1 << int(lbads), int(ms), int(rp_text, 0), _in_use(rest)))
            continue
        h = _LBAF_H.match(line)
        if h:
            index, ms, ds, rp_text, rest = h.groups()
            if not 512 <= int(ds) <= 1 << 32:
                continue
            if rp_text is None:
                # Coly Li's reply on linux-bcache (2019) quotes `nvme id-ns -H` wrapped after "Data Size: 512
                # bytes -"; the relative performance and "(in use)" are on the next line.
                pending = (int(index), int(ds), int(ms))
                continue
            formats.append(LbaFormat(int(index), int(ds), int(ms), int(rp_text, 0), _in_use(rest)))
    if pending is not None:
        formats.append(LbaFormat(pending[0], pending[1], pending[2], 0, False))
    if not formats:
        raise ParseError(f"no LBA formats in the nvme id-ns text (from line {first_line})")
    return tuple(formats)


def _in_use(rest: str) -> bool:
    return "(in use)" in rest


# --- nvme id-ctrl ---

_CTRL_KV = re.compile(r"^\s*(sn|mn|fr|tnvmcap)[ \t]{0,40}:(.*)$")


def parse_nvme_id_ctrl(text: str, first_line: int = 1) -> PastedNvmeController:
    """Model, serial, firmware and total capacity from `nvme id-ctrl`; ParseError when none is in the text."""
    found: dict[str, str] = {}
    lines: dict[str, int] = {}
    names = {"sn": "serial", "mn": "model", "fr": "firmware", "tnvmcap": "total_capacity_bytes"}
    for offset, raw in enumerate(iter_lines(text)):
        m = _CTRL_KV.match(raw)
        if m and m.group(1) not in found:
            found[m.group(1)] = m.group(2).strip()[:256]
            lines[names[m.group(1)]] = first_line + offset
    if not found:
        raise ParseError(f"no model, serial or firmware in the nvme id-ctrl text (from line {first_line})")
    capacity = _num(found.get("tnvmcap", ""))
    return PastedNvmeController(
        model=found.get("mn") or None,
        serial=found.get("sn") or None,
        firmware=found.get("fr") or None,
        total_capacity_bytes=capacity or None,
        source_lines=lines,
    )
