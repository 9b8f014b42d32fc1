"""The drive's own error log from smartctl's JSON (pure): the ATA SMART error log or the NVMe Error Information log.

Keys, from smartmontools src/ataprint.cpp (print_error_log / PrintSmartExtErrorLog) and nvmeprint.cpp
(print_error_log), 7.0 to 7.5:
- ATA: `ata_smart_error_log.{extended,summary}` {count (errors over the drive's life), logged_count, table[] newest
  first {error_number, lifetime_hours, error_description ("Error: UNC at LBA = 0x00123456 = 1193046"),
  previous_commands[] (the command that failed first) {command_name}}}. `-x` reads the extended log, `-a` the
  summary one; both carry the same count.
- NVMe: `nvme_error_information_log` {size, read, unread, table[] newest first {error_count, submission_queue_id,
  command_id, status_field {value, do_not_retry, status_code_type, status_code, string}, parm_error_location,
  lba {value}, nsid}}, and the lifetime count in `nvme_smart_health_information_log.num_err_log_entries`.
Every member is optional; an odd one is left out, never raised.
"""

from __future__ import annotations

import re
from typing import Any

from disksleuth.model.drive_logs import ErrorLog, ErrorLogEntry

# The newest entries kept: enough to see what keeps failing, small enough for a terminal and a stored document.
MAX_ENTRIES = 8
# "Error: UNC at LBA = 0x06f57ae8 = 116751080": the decimal LBA after the hex one (bounded runs, no backtracking).
_ATA_LBA = re.compile(r"LBA = 0x[0-9a-fA-F]{1,16} = (\d{1,20})(?!\d)")
_MAX_TEXT = 200  # smartctl's longest error description is well under this


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    return v if 0 <= v < 1 << 64 else None  # counts, numbers, hours, LBAs: a negative one ("-3 error(s)") is none


def _str(v: Any) -> str | None:
    return v[:_MAX_TEXT] if isinstance(v, str) and v.strip() else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def ata_entry(row: dict[str, Any]) -> ErrorLogEntry:
    what = _str(row.get("error_description"))
    lba = None
    if what:
        m = _ATA_LBA.search(what)
        lba = int(m.group(1)) if m else None
    else:  # no description (smartctl_exporter ST3200820AS_16): the completion registers still hold the address
        lba = _int(_dict(row.get("completion_registers")).get("lba"))
    first = next((c for c in _list(row.get("previous_commands")) if isinstance(c, dict)), {})
    return ErrorLogEntry(
        number=_int(row.get("error_number")),
        what=what,
        power_on_hours=_int(row.get("lifetime_hours")),
        lba=lba,
        command=_str(first.get("command_name")),
    )


def nvme_entry(row: dict[str, Any]) -> ErrorLogEntry:
    status = _dict(row.get("status_field"))
    return ErrorLogEntry(
        number=_int(row.get("error_count")),
        what=_str(status.get("string")),
        lba=_int(_dict(row.get("lba")).get("value")),
        status=_nvme_status(status),
    )


def _nvme_status(status: dict[str, Any]) -> int | None:
    """The status field as smartctl's text prints it (phase bit included: "0x4004"), rebuilt from the JSON's
    decoded members when they are there, so text and JSON give one number."""
    printed = _int(status.get("printed"))  # the text's own "0xc005" (ErrorLogText), More and phase bits kept
    if printed is not None and 0 <= printed <= 0xFFFF:
        return printed
    sct, sc = _int(status.get("status_code_type")), _int(status.get("status_code"))
    if sct is not None and sc is not None and 0 <= sct < 8 and 0 <= sc < 256:
        dnr = 0x8000 if status.get("do_not_retry") is True else 0
        return dnr | (sct << 9) | (sc << 1)
    value = _int(status.get("value"))
    return value << 1 if value is not None and 0 <= value < 0x8000 else None


def parse_error_log(doc: dict[str, Any]) -> ErrorLog | None:
    """The error log of a smartctl JSON document (or one built in its shape from text), or None without one."""
    nvme = doc.get("nvme_error_information_log")
    nvme_count = _int(_dict(doc.get("nvme_smart_health_information_log")).get("num_err_log_entries"))
    if isinstance(nvme, dict) or nvme_count is not None:
        rows = [r for r in _list(_dict(nvme).get("table")) if isinstance(r, dict)]
        entries = [nvme_entry(r) for r in rows]
        entries = [e for e in entries if e.number]  # error_count 0: an unused slot
        entries.sort(key=lambda e: -(e.number or 0))
        return ErrorLog("NVMe", nvme_count, tuple(entries[:MAX_ENTRIES]))
    ata = _dict(doc.get("ata_smart_error_log"))
    if not ata:
        return None
    count = None
    entries = []
    for which in ("extended", "summary"):
        part = _dict(ata.get(which))
        if count is None:
            count = _int(part.get("count"))
        if not entries:
            entries = [ata_entry(r) for r in _list(part.get("table")) if isinstance(r, dict)]
    entries.sort(key=lambda e: -(e.number or 0))
    return ErrorLog("ATA", count, tuple(entries[:MAX_ENTRIES]))


# --- the same logs in smartctl's text --------------------------------------------------------------------------
# ATA (ataprint.cpp): "Error 56 occurred at disk power-on lifetime: 61957 hours (2581 days + 13 hours)" (-a) or
# "Error 1 [0] occurred at ..." (-x), a register row ending "Error: UNC at LBA = 0x00000009 = 9", then "Commands
# leading to the command that caused the error were:", a header, and the failing command's row first, its name
# after the last run of spaces. NVMe (nvmeprint.cpp): "Error Information (NVMe Log 0x01, 16 of 64 entries)", the
# header "Num   ErrCount  SQId   CmdId  Status  PELoc          LBA  NSID    VS  [Message]", rows
# "  0       2888     0  0x0015  0xc005  0x028            -     0     -  Invalid Field in Command".
_ATA_ERROR_HEAD = re.compile(r"^Error (\d{1,10}) (?:\[\d{1,3}\] )?occurred at disk power-on lifetime: (\d{1,10}) hours")
_NVME_ROW = re.compile(r"^(\d{1,3})\s++(\d{1,20})\s++\S++\s++\S++\s++(0x[0-9a-fA-F]{1,4})\s++\S++\s++(\S++)\s++\S++")
_SPACES = re.compile(r"\s{2,}+")


class ErrorLogText:
    """Reads the error log sections of smartctl's text one line at a time (probe/smartctl_text.py feeds it every
    line), into the JSON's shape (`into`)."""

    def __init__(self) -> None:
        self.ata: list[dict[str, Any]] = []
        self.nvme: list[dict[str, Any]] = []
        self._in_nvme = False
        self._await_command = 0  # 2: the header lines to skip; 1: the next row is the failing command

    def feed(self, stripped: str) -> None:
        if not stripped:
            self._in_nvme = False
            return
        if stripped.startswith("Error Information (NVMe Log"):
            self._in_nvme = True
            return
        if self._in_nvme:
            m = _NVME_ROW.match(stripped)
            if m and len(self.nvme) < MAX_ENTRIES:
                tail = _SPACES.split(stripped[m.end() :].strip(), maxsplit=1)
                raw = int(m.group(3), 16)
                lba = m.group(4)
                self.nvme.append(
                    {
                        "error_count": int(m.group(2)),
                        "status_field": {
                            "status_code_type": (raw >> 9) & 7,
                            "status_code": (raw >> 1) & 0xFF,
                            "do_not_retry": bool(raw & 0x8000),
                            "printed": raw,
                            **({"string": tail[-1][:_MAX_TEXT]} if tail and tail[-1] and tail[-1] != "-" else {}),
                        },
                        **({"lba": {"value": int(lba)}} if lba.isdecimal() and len(lba) <= 20 else {}),
                    }
                )
            return
        head = _ATA_ERROR_HEAD.match(stripped)
        if head:
            if len(self.ata) < MAX_ENTRIES:
                self.ata.append({"error_number": int(head.group(1)), "lifetime_hours": int(head.group(2))})
            self._await_command = 0
            return
        if not self.ata:
            return
        at = stripped.find("Error: ")
        if at >= 0 and "error_description" not in self.ata[-1]:
            self.ata[-1]["error_description"] = stripped[at : at + _MAX_TEXT]
        elif stripped.startswith("Commands leading to the command"):
            self._await_command = 3
        elif self._await_command:
            self._await_command -= 1
            if self._await_command == 0:
                name = _SPACES.split(stripped)[-1]
                if name and not name.startswith(("--", "CR ")):
                    self.ata[-1]["previous_commands"] = [{"command_name": name[:_MAX_TEXT]}]

    def into(self, doc: dict[str, Any]) -> None:
        if self.nvme:
            doc.setdefault("nvme_error_information_log", {})["table"] = self.nvme
        if self.ata:
            log = doc.setdefault("ata_smart_error_log", {})
            which = "extended" if "extended" in log else "summary"
            log.setdefault(which, {})["table"] = self.ata
