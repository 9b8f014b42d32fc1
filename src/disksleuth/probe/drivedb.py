"""smartmontools' drive database (drivedb.h): what it says an ATA attribute of a drive is, and how its raw value is
packed (issue 40). Read from the copy smartmontools installed, at run time; never copied into this project.

drivedb.h (smartmontools, GPL-2.0-or-later) is a C array of entries, each five string fields, every field possibly
several adjacent C string literals: { "family", "model regex", "firmware regex", "warning", "presets" }. The presets
hold "-v ID,FORMAT[,NAME[,TYPE]]" options (smartctl's -v): FORMAT raw48 is one 48-bit count; raw16(raw16) is three
16-bit words shown "w0 (w2 w1)" (Intel's 175 Power_Loss_Cap_Test: "622 (314 7697)"); raw16 is the low word.
The first entry, "DEFAULT", names what an attribute is on a drive no other entry matches (175 Program_Fail_Count_Chip);
smartctl uses the first other entry whose model regex matches the whole model (and firmware regex, when set).

A smartctl older than its drive prints the DEFAULT name over a packed value: an HPE-branded Intel DC S3x10
(VK000480GWSXF) shows "175 Program_Fail_Count_Chip ... 1349124162158", which is 0x13A_1E11_026E, three packed fields,
not 1.3 trillion failed programs. The installed database, newer, names it.

Parsing is one pass of one tokenizer (no pattern backtracks over a run), bounded by MAX_DRIVEDB_BYTES."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

DRIVEDB_PATHS = (
    "/var/lib/smartmontools/drivedb/drivedb.h",  # update-smart-drivedb's copy, newer than the package's
    "/usr/share/smartmontools/drivedb.h",  # Debian's smartmontools
    "/usr/local/share/smartmontools/drivedb.h",
)
MAX_DRIVEDB_BYTES = 4 << 20  # smartmontools 7.5's is ~300 KB
_MAX_REGEX_CHARS = 4096

# A C string literal, a comment, or a brace or comma: the tokens of drivedb.h. A literal or block comment left open
# runs to its line's or the text's end, so every one is a token and matched once (an open literal that failed to
# match was tried again from each later quote: 50,000 of '"\\' took 14 s).
_TOKEN = re.compile(r'"((?:[^"\\\n]|\\[^\n])*+)(?:"|\\?(?=\n|\Z))|//[^\n]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/|\Z)|([{},])')
_PRESET = re.compile(r"-v\s++(\d{1,3}),([^,\s]++)(?:,([^,\s]++))?")


@dataclass(frozen=True)
class DriveEntry:
    family: str
    model: str  # an extended regular expression over the whole model
    firmware: str
    presets: str

    def attribute(self, attr_id: int) -> tuple[str, str | None] | None:
        """(format, name) of this entry's "-v ID,FORMAT,NAME" for the attribute, if it sets one."""
        found = None
        for m in _PRESET.finditer(self.presets):
            if int(m.group(1)) == attr_id:
                found = (m.group(2), m.group(3))
        return found


def parse_drivedb(text: str) -> tuple[DriveEntry, ...]:
    """The entries of a drivedb.h text; entries that are not five strings are skipped."""
    entries: list[DriveEntry] = []
    depth = 0
    fields: list[str] = []
    current: list[str] = []
    for m in _TOKEN.finditer(text[:MAX_DRIVEDB_BYTES]):
        literal, mark = m.group(1), m.group(2)
        if literal is not None:
            if depth == 2:
                current.append(_unescape(literal))
        elif mark == "{":
            depth += 1
            if depth == 2:
                fields, current = [], []
        elif mark == "}":
            if depth == 2:
                fields.append("".join(current))
                if len(fields) == 5:
                    entries.append(DriveEntry(fields[0], fields[1], fields[2], fields[4]))
            depth = max(depth - 1, 0)
        elif mark == "," and depth == 2:
            fields.append("".join(current))
            current = []
    return tuple(entries)


def _unescape(literal: str) -> str:
    return literal.replace('\\"', '"').replace("\\\\", "\\") if "\\" in literal else literal


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    if len(pattern) > _MAX_REGEX_CHARS:
        return None
    try:
        return re.compile(pattern)
    except re.error:
        return None


def matching_entry(entries: tuple[DriveEntry, ...], model: str, firmware: str | None) -> DriveEntry | None:
    """The entry smartctl would use for this drive: the first (VERSION, DEFAULT and the USB bridges' aside) whose
    model regex matches the whole model and whose firmware regex, when it has one, the whole firmware."""
    for entry in entries:
        if entry.family.startswith(("USB:", "VERSION:", "DEFAULT")) or not entry.model:
            continue
        model_re = _compiled(entry.model)
        if model_re is None or not model_re.fullmatch(model):
            continue
        if entry.firmware:
            firmware_re = _compiled(entry.firmware)
            if firmware_re is None or firmware is None or not firmware_re.fullmatch(firmware):
                continue
        return entry
    return None


@functools.lru_cache(maxsize=1)
def installed_drivedb() -> tuple[DriveEntry, ...]:
    """The installed drive database's entries; () when none is installed or it cannot be read."""
    for path in DRIVEDB_PATHS:
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_DRIVEDB_BYTES)
        except OSError:
            continue
        entries = parse_drivedb(raw.decode("utf-8", errors="replace"))
        if entries:
            return entries
    return ()


@functools.lru_cache(maxsize=256)
def attribute_preset(model: str, firmware: str | None, attr_id: int) -> tuple[str, str | None] | None:
    """(format, name) the installed drive database gives this drive's attribute, from its own family entry (the
    DEFAULT entry does not count: it is what a smartctl without the drive already printed); None if it gives none."""
    if not model or len(model) > 200:
        return None
    entry = matching_entry(installed_drivedb(), model, firmware)
    return entry.attribute(attr_id) if entry is not None else None


def first_word(raw: int, fmt: str) -> int:
    """The value a packed raw format shows first: the low 16 bits for raw16 and raw16(raw16), the whole raw48."""
    return raw & 0xFFFF if fmt.startswith("raw16") else raw
