"""`explain FILE...`: a machine explained from pasted command output (issue 21).

Each file (or standard input) is read bounded, normalised and split into sections by content
(probe/paste_text.py); each section goes to the reader of its kind (HANDLERS, a table: a kind without a reader yet
is reported "recognised, not read yet"); the devices built from them are judged by the same functions as a live
`explain` (analysis/verdicts.verdicts), and every finding names the file and line it rests on.

Devices: every storage function in `lspci -vv` (its PCIe path from the bridges' bus numbers or an `lspci -t`
tree; pasted alone, its own link only, and the chain above it is unknown) and every drive in smartctl text or
JSON and nvme-cli output (list, smart-log, id-ctrl, id-ns). Reports on one drive (`smartctl -x /dev/nvme0`,
`nvme smart-log /dev/nvme0`, the `nvme list` row of nvme0n1) are one device when their command lines or headers
name it. A drive and a controller are one device only where the paste leaves no choice (the only NVMe drive and
the only NVMe controller; SATA drives and the only SATA controller), and the output says so. Figures from fio,
hdparm and dd go to the device their output or command line names, else to the paste's only device, else nowhere (said).
Serial numbers and WWNs are never kept: a pasted device has no serial, only its hashed id where a key is set.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.verdicts import Figures, summary_line, verdicts, with_drive_sata_max
from disksleuth.errors import DisksleuthError, ParseError, UsageError, json_problem
from disksleuth.infile import read_user_file
from disksleuth.model import Device, Finding, HopCeiling, LinkChain, PcieHop, SataHop
from disksleuth.model.paste import PastedFigure, PastedHealth, PastedPci, Section
from disksleuth.model.run import Health
from disksleuth.probe.bench_text import (
    command_device,
    fio_json_figures,
    fio_json_target,
    parse_dd_text,
    parse_fio_text,
    parse_hdparm_text,
)
from disksleuth.probe.dmidecode_text import parse_dmidecode_slots
from disksleuth.probe.lspci_text import MAX_FUNCTIONS, parse_lspci_vv
from disksleuth.probe.lspci_tree import parse_lspci_tree
from disksleuth.probe.mmc_text import PastedCard, merge_cards, parse_mmc_extcsd, parse_mmc_sysfs
from disksleuth.probe.nvme_text import parse_nvme_id_ctrl, parse_nvme_id_ns, parse_nvme_list, parse_nvme_smart_log
from disksleuth.probe.paste_text import LINES_CUT_WORDS, MAX_PASTE_BYTES, read_paste
from disksleuth.probe.slots import SlotTable
from disksleuth.probe.smart_parse import health_from_smartctl_doc, nvme_id_ns_formats, smartctl_document
from disksleuth.probe.smartctl_text import parse_smartctl_text
from disksleuth.serials import key_from_env, serial_id
from disksleuth.store import boundedjson
from disksleuth.units import parse_count, parse_rate

STDIN = "-"
STDIN_MAX_CHARS = MAX_PASTE_BYTES + 1  # read one more than the paste reader takes, so too much is said, not cut
_STORAGE_CLASS = 0x01
_NVME_SUBCLASS, _SATA_SUBCLASS = 0x0108, 0x0106
_JUDGED = ("seq_read_mbps", "seq_write_mbps", "rand_read_iops", "rand_write_iops")
# A pasted name (model, firmware) or a reason longer than this is not a tool's: cut, so a megabyte-long "model" in
# one line is neither printed whole nor wrapped by the terminal view (rich wraps a long word in quadratic time).
_MAX_NAME_CHARS = 200
# Above these a pasted figure is no measurement (a corrupt or made-up file): 1 TB/s is more than a host's memory
# moves, a billion IOPS a hundred times the fastest arrays. Listed as not used, never judged or printed as a rate.
_MAX_MBPS = 1e6
_MAX_IOPS = 1e9
_IMPLAUSIBLE = "more than any storage path or memory gives: not a measurement"
_MAX_REASON_CHARS = 300
# JSON in a paste is decoded as `import` decodes a run (store/exportstream.py): by json's C decoder when it is small
# (its values take at most ~25 times the text), else by store.boundedjson within a budget proportional to the text
# (a 63 MiB `[{},{},...]` paste took 1.6 GB). A real smartctl -x --json is ~100 KB and takes about 3 times that.
_FAST_DECODE_BYTES = 1 << 20
_VALUES_PER_BYTE = 4
_VALUES_FLOOR_BYTES = 16 << 20
_MAX_JSON_DEPTH = 64  # smartctl's and fio's documents are 6 deep
# The most devices judged and shown from one paste: four shelves of 60 drives and their controllers. A paste of
# 1,604 repeated smartctl reports spent 80% of its 3 s printing 20,000 lines of device blocks.
MAX_DEVICES = 256


def _clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text):,} characters, cut)"


@dataclass(frozen=True)
class Where:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class SectionRead:
    kind: str
    file: str
    first_line: int
    last_line: int
    device: str | None
    status: str  # "read", "recognised, not read yet", "not read: <reason>"
    command: str | None = None


@dataclass(frozen=True)
class PastedDevice:
    device: Device
    chain: LinkChain
    figures: Figures
    findings: list[Finding]
    summary: str
    sources: list[Where | None]  # one per finding
    given: list[dict[str, Any]]
    chain_known: bool | None  # None: no PCIe link pasted for it
    notes: list[str]
    serial_id: str | None = None


@dataclass(frozen=True)
class PasteExplained:
    files: list[str]
    devices: list[PastedDevice]
    sections: list[SectionRead]
    skipped: list[dict[str, Any]]  # {"file", "first_line", "last_line"}
    notes: list[str]
    figures_unused: list[dict[str, Any]]
    # dmidecode's slots and onboard devices, when pasted: shown as a table when the paste holds no device to put them
    # on (issue 40).
    slots: SlotTable | None = None
    slots_file: str | None = None

    @property
    def findings(self) -> list[Finding]:
        return [f for d in self.devices for f in d.findings]


@dataclass
class _Drive:
    """One report on a drive; reports naming the same drive are merged into one (_merge_drives)."""

    where: Where
    name: str | None
    health: Health
    lines: dict[str, Where]  # Health field or "attribute 5" -> where it was read
    what: str  # "smartctl", "nvme smart-log", "nvme list", "nvme id-ctrl", "nvme id-ns"

    @classmethod
    def of(cls, file: str, line: int, name: str | None, pasted: PastedHealth, what: str) -> _Drive:
        lines = {k: Where(file, int(v)) for k, v in pasted.source_lines.items()}
        return cls(Where(file, line), name, pasted.health, lines, what)


@dataclass
class _Context:
    """What the sections of all files add up to, before devices are built."""

    pci: list[tuple[PastedPci, str]] = field(default_factory=list)  # (function, file)
    lspci: list[tuple[list[Section], str]] = field(default_factory=list)  # read once every tree is known
    tree: dict[str, str | None] = field(default_factory=dict)  # lspci -t: BDF -> parent bridge BDF
    tree_where: list[Where] = field(default_factory=list)
    drives: list[_Drive] = field(default_factory=list)
    figures: list[tuple[PastedFigure, str]] = field(default_factory=list)
    slots: SlotTable | None = None
    slots_file: str | None = None
    notes: list[str] = field(default_factory=list)
    figure_notes: list[tuple[str | None, str]] = field(default_factory=list)  # (device, what a benchmark says of it)
    fio_targets: dict[int, str] = field(default_factory=dict)  # id(figure) -> the device its fio JSON ran on
    headless_link: tuple[str, int] | None = None  # (file, line) of a LnkSta: line with no lspci record around it
    cards: list[tuple[PastedCard, str]] = field(default_factory=list)  # SD/eMMC registers (issue 39), (card, file)


Handler = Callable[[_Context, Section, str], str | None]  # returns the device the section is about, if named


def _device_name(command: str | None) -> str | None:
    """'smartctl -x /dev/sda' -> 'sda'; a /dev/disk/by-id/ path holds the serial and is never kept."""
    if not command:
        return None
    m = re.search(r"(?<![\w=])/dev/([A-Za-z0-9_!-]{1,40})(?=\s|$)", command)
    return m.group(1) if m else None


def _read_smartctl(ctx: _Context, section: Section, file: str) -> str | None:
    name = _device_name(section.command)
    pasted = parse_smartctl_text(section.text, device=name, first_line=section.first_line)
    ctx.drives.append(_Drive.of(file, section.first_line, name, pasted, "smartctl report"))
    return name


def _refuse_constant(word: str) -> None:
    raise boundedjson.Constant(word)


def _decode(section: Section) -> tuple[Any, int]:
    """The section's JSON value, and the budget it was decoded within (0: json's own decoder, for a small one).
    Text after the value on its last line is left out (the splitter ends a section at the line where its value
    closes, whatever follows on that line)."""
    if sum(len(x.text) + 1 for x in section.lines) <= _FAST_DECODE_BYTES:
        text = section.text
        try:
            return json.loads(text, parse_constant=_refuse_constant), 0
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise
            return json.loads(text[: exc.pos], parse_constant=_refuse_constant), 0
    # Bytes made from the section's parts, never a joined str beside them: a 60 MiB paste holds its text once.
    data = b"\n".join([x.text.encode("utf-8", "replace") for x in section.lines])
    budget = max(_VALUES_FLOOR_BYTES, _VALUES_PER_BYTE * len(data))
    try:
        return boundedjson.loads(data, budget, _MAX_JSON_DEPTH), budget
    except boundedjson.JsonError as exc:
        if exc.msg != "Extra data":
            raise
        return boundedjson.loads(data[: exc.pos], budget, _MAX_JSON_DEPTH), budget
    except boundedjson.OverBudget:
        raise _OverBudget(budget) from None


class _OverBudget(Exception):
    def __init__(self, budget: int):
        self.budget = budget


def _decode_json(section: Section, what: str) -> Any:
    """The JSON value a section holds, decoded within a memory budget; ParseError with one plain reason."""
    try:
        return _decode(section)[0]
    except (json.JSONDecodeError, boundedjson.JsonError) as exc:
        raise ParseError(f"the {what} JSON is truncated or malformed ({json_problem(exc.msg, exc.lineno)})") from None
    except (RecursionError, boundedjson.TooDeep):
        raise ParseError(f"the {what} JSON is nested too deeply") from None
    except _OverBudget as exc:
        raise ParseError(
            f"the {what} JSON's values would take over {exc.budget >> 20:,} MiB of memory, more than "
            f"{_VALUES_PER_BYTE} times its size: not a tool's output"
        ) from None
    except boundedjson.Constant as exc:
        raise ParseError(f"the {what} JSON holds an impossible value ({exc.word} is not a JSON number)") from None
    except ValueError as exc:  # an integer past Python's 4,300-digit limit
        raise ParseError(f"the {what} JSON holds an impossible value ({str(exc).split(':')[0][:80]})") from None


def _read_smartctl_json(ctx: _Context, section: Section, file: str) -> str | None:
    health = health_from_smartctl_doc(smartctl_document(_decode_json(section, "smartctl")))
    name = _device_name(section.command) or _device_name(f" {health.device} " if health.device else None)
    health = replace(health, device=name)
    ctx.drives.append(_Drive.of(file, section.first_line, name, PastedHealth(health, {}), "smartctl report"))
    return name


def _read_nvme_smart_log(ctx: _Context, section: Section, file: str) -> str | None:
    # The command's device first ("nvme smart-log /dev/nvme0n1"), else the log's own "Smart Log for NVME device:".
    name = _device_name(section.command)
    pasted = parse_nvme_smart_log(section.text, f"/dev/{name}" if name else None, section.first_line)
    name = name or _device_name(f" {pasted.health.device} " if pasted.health.device else None)
    ctx.drives.append(_Drive.of(file, section.first_line, name, pasted, "nvme smart-log"))
    return name


def _read_nvme_list(ctx: _Context, section: Section, file: str) -> str | None:
    names = []
    for row in parse_nvme_list(section.text, section.first_line):
        name = row.node.removeprefix("/dev/")
        health = Health(device=name, protocol="NVMe", model=row.model, serial=row.serial, firmware=row.firmware,
                        capacity_bytes=row.capacity_bytes)  # fmt: skip
        lines = {k: row.source_line for k in ("model", "firmware", "capacity_bytes")}
        ctx.drives.append(_Drive.of(file, row.source_line, name, PastedHealth(health, lines), "nvme list"))
        names.append(name)
    return ", ".join(names)


def _read_nvme_id_ctrl(ctx: _Context, section: Section, file: str) -> str | None:
    name = _device_name(section.command)
    c = parse_nvme_id_ctrl(section.text, section.first_line)
    health = Health(device=name, protocol="NVMe", model=c.model, serial=c.serial, firmware=c.firmware,
                    capacity_bytes=c.total_capacity_bytes)  # fmt: skip
    lines = {"capacity_bytes" if k == "total_capacity_bytes" else k: v for k, v in c.source_lines.items()}
    ctx.drives.append(_Drive.of(file, section.first_line, name, PastedHealth(health, lines), "nvme id-ctrl"))
    return name


def _read_nvme_id_ns(ctx: _Context, section: Section, file: str) -> str | None:
    name = _device_name(section.command)
    if section.kind == "nvme_id_ns_json":
        formats = nvme_id_ns_formats(_decode_json(section, "nvme id-ns"))
        in_use_line = section.first_line
    else:
        formats = parse_nvme_id_ns(section.text, section.first_line)
        in_use_line = next((x.no for x in section.lines if "(in use)" in x.text), section.first_line)
    if not formats:
        raise ParseError("no LBA format in it")
    pasted = PastedHealth(Health(device=name, protocol="NVMe", lba_formats=formats),
                          {"lba_formats": in_use_line, "lba_format_in_use": in_use_line})  # fmt: skip
    ctx.drives.append(_Drive.of(file, section.first_line, name, pasted, "nvme id-ns"))
    return name


def _read_lspci_tree(ctx: _Context, section: Section, file: str) -> str | None:
    for bdf, parent in parse_lspci_tree(section.text, section.first_line).items():
        ctx.tree.setdefault(bdf, parent)
    ctx.tree_where.append(Where(file, section.first_line))
    return None


def _read_lspci_sections(ctx: _Context, sections: list[Section], file: str) -> None:
    """All lspci sections of one file read together, line numbers kept, so a bridge in one `lspci -s` and the
    drive in another still link up (blank lines stand in for what lies between them)."""
    parts: list[str] = []
    line = sections[0].first_line
    for s in sections:
        parts.append("\n" * (s.first_line - line) + s.text)
        line = s.last_line
    found = parse_lspci_vv("\n".join(parts), sections[0].first_line, ctx.tree)
    if len(found) == MAX_FUNCTIONS:
        ctx.notes.append(f"{file}: the first {MAX_FUNCTIONS:,} PCI functions of its lspci text were read, no more")
    for p in found:
        ctx.pci.append((p, file))


def _figures(parse: Callable[[Section], list[PastedFigure]]) -> Handler:
    def handler(ctx: _Context, section: Section, file: str) -> str | None:
        found = parse(section)
        if not found:
            raise ParseError("no figure in it (no 'read:/write:', 'Timing ... reads:' or 'bytes ... copied' line)")
        ctx.figures.extend((f, file) for f in found)
        return next((f.device for f in found if f.device), None)

    return handler


def _read_dmidecode(ctx: _Context, section: Section, file: str) -> str | None:
    table = parse_dmidecode_slots(section.text)
    if not table.slots and not table.onboard:
        raise ParseError("no System Slots (type 9) or onboard device record in it")
    old = ctx.slots or SlotTable()
    ctx.slots_file = ctx.slots_file or file
    ctx.slots = SlotTable(
        smbios_slots=old.smbios_slots + table.slots,
        onboard=old.onboard + table.onboard,
        smbios_version=table.smbios_version,
    )
    return None


def _read_fio_json(ctx: _Context, section: Section, file: str) -> str | None:
    """A fio JSON result's figures, per job, and where it ran: each job's file and the devices disk_util names."""
    doc = _decode_json(section, "fio")
    found = fio_json_figures(doc, section.first_line, section.command)
    if not found:
        raise ParseError("no figure in it (no job with read or write I/O)")
    ctx.figures.extend((f, file) for f in found)
    device = next((f.device for f in found if f.device), None)
    target = fio_json_target(doc)
    if target.device:  # where it ran, for a paste of this result alone (_bench_only)
        ctx.fio_targets.update((id(f), target.device) for f in found if f.device is None)
        device = device or target.device
    where = Where(file, section.first_line)
    for name, path in target.jobs[:8]:
        if path:
            ctx.figure_notes.append(
                (device, f"fio job {_clip(name, 64)} ran on {_clip(path, _MAX_NAME_CHARS)} ({where})")
            )
    if target.disks:
        members = f" (then {', '.join(target.disks[1:9])}: the devices under it)" if len(target.disks) > 1 else ""
        ctx.figure_notes.append((device, f"fio's disk_util names {target.disks[0]}{members} ({where})"))
    return device


def _read_card(ctx: _Context, section: Section, file: str, parse: Callable[..., PastedCard]) -> str | None:
    """mmc-utils' extcsd text or a card's sysfs files (probe/mmc_text.py): judged as a live card (issue 39)."""
    card = parse(section.text, section.first_line, section.command)
    ctx.cards.append((card, file))
    return card.device


# kind -> reader; None: recognised, no reader yet (nvme-cli's list and smart-log JSON: no parser yet).
HANDLERS: dict[str, Handler | None] = {
    "smartctl": _read_smartctl,
    "smartctl_json": _read_smartctl_json,
    "fio": _figures(lambda s: parse_fio_text(s.text, s.first_line, s.command)),
    "fio_json": _read_fio_json,
    "hdparm": _figures(lambda s: parse_hdparm_text(s.text, s.first_line)),
    "dd": _figures(lambda s: parse_dd_text(s.text, s.first_line, s.command)),
    "dmidecode": _read_dmidecode,
    "lspci_tree": _read_lspci_tree,
    "nvme_list": _read_nvme_list,
    "nvme_list_json": None,
    "nvme_id_ns": _read_nvme_id_ns,
    "nvme_id_ns_json": _read_nvme_id_ns,
    "nvme_id_ctrl": _read_nvme_id_ctrl,
    "nvme_smart_log": _read_nvme_smart_log,
    "nvme_smart_log_json": None,
    "mmc_extcsd": lambda ctx, s, file: _read_card(ctx, s, file, parse_mmc_extcsd),
    "mmc_sysfs": lambda ctx, s, file: _read_card(ctx, s, file, parse_mmc_sysfs),
}


# A byte-order mark says the encoding: Windows PowerShell 5's `smartctl -x > report.txt` writes UTF-16LE with one,
# Notepad UTF-8 with one. UTF-32's marks first: they begin with UTF-16's.
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
)


def decode_paste(raw: bytes) -> str:
    """A paste's bytes as text: the encoding its byte-order mark names, else UTF-16 when every other byte is NUL
    (see _utf16_without_bom), else UTF-8; bytes that do not decode become U+FFFD (the normaliser refuses a paste
    that is mostly such), never an exception."""
    codec = next((c for bom, c in _BOMS if raw.startswith(bom)), None)
    if codec is None and (utf16 := _utf16_without_bom(raw)) is not None:
        try:
            return raw.decode(utf16)
        except UnicodeDecodeError:
            pass  # NULs where UTF-16 has them, and yet not UTF-16: read as UTF-8 (and refused as binary)
    return raw.decode(codec or "utf-8", errors="replace")


# Of the bytes that are NUL in ASCII text as UTF-16 (every other one), at least this share in the first 64 KiB.
_UTF16_NUL_SHARE = 0.9


def _utf16_without_bom(raw: bytes) -> str | None:
    """The codec of text saved as UTF-16 without a byte-order mark (`iconv -t UTF-16LE`, Notepad++'s "UCS-2 LE
    w/o BOM", or PowerShell's UTF-16 report cut anywhere but at its start by `tail` or `split`): even in length, and
    NUL in nearly every odd (LE) or even (BE) byte and in almost no other. Command output is ASCII, so its UTF-16 is
    so; UTF-8 text has no NUL at all."""
    if len(raw) < 4 or len(raw) % 2:
        return None
    sample = raw[:65536]
    half = len(sample) // 2
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    if odd >= _UTF16_NUL_SHARE * half and even <= (1 - _UTF16_NUL_SHARE) * half:
        return "utf-16-le"
    if even >= _UTF16_NUL_SHARE * half and odd <= (1 - _UTF16_NUL_SHARE) * half:
        return "utf-16-be"
    return None


def read_input(path: str, stdin_text: str | bytes | None) -> str:
    """The text of one input: bounded, decoded leniently; one line for what cannot be read. Standard input comes
    as bytes (decoded here as a file is, whatever the locale's strictness) or, from a text stream, as text."""
    if path == STDIN:
        if stdin_text is None:
            raise UsageError("'-' reads the paste from standard input, and there was none")
        if isinstance(stdin_text, bytes):
            if len(stdin_text) > MAX_PASTE_BYTES:
                raise ParseError(f"standard input: larger than {MAX_PASTE_BYTES >> 20} MiB, not pasted command output")
            return decode_paste(stdin_text)
        return stdin_text.removeprefix("\ufeff")
    return decode_paste(read_user_file(path, MAX_PASTE_BYTES, "pasted command output"))


def explain_paste(
    paths: list[str],
    *,
    stdin_text: str | bytes | None = None,
    read: str | None = None,
    write: str | None = None,
    read_iops: str | None = None,
    write_iops: str | None = None,
) -> PasteExplained:
    ctx = _Context()
    sections: list[SectionRead] = []
    skipped: list[dict[str, Any]] = []
    for path in paths:
        name = "stdin" if path == STDIN else path
        text = read_input(path, stdin_text)
        paste = read_paste(text)
        ctx.notes.extend(f"{name}: {n}" for n in paste.notes)
        skipped.extend({"file": name, "first_line": a, "last_line": b} for a, b in paste.skipped)
        lspci = [s for s in paste.sections if s.kind == "lspci"]
        if lspci:
            ctx.lspci.append((lspci, name))
        elif ctx.headless_link is None and (at := text.find("LnkSta:")) >= 0:  # `lspci -vv | grep Speed`
            ctx.headless_link = (name, text.count("\n", 0, at) + 1)
        for s in paste.sections:
            if s.kind == "lspci":
                continue
            handler = HANDLERS.get(s.kind)
            device = _device_name(s.command) or command_device(s.command)
            if handler is None:
                known = s.kind in HANDLERS
                status = "recognised, not read yet" if known else "JSON of no known tool, not read"
            else:
                try:
                    device = handler(ctx, s, name) or device
                    status = "read"
                except DisksleuthError as exc:
                    status = f"not read: {_clip(str(exc), _MAX_REASON_CHARS)}"
                except (ValueError, KeyError, TypeError, IndexError) as exc:  # a reader's blind spot: say it, go on
                    status = f"not read: {type(exc).__name__}"
            sections.append(SectionRead(s.kind, name, s.first_line, s.last_line, device, status, s.command))
    for lspci, name in ctx.lspci:  # after every file's -t tree is known: it places what Bus: lines do not
        try:
            _read_lspci_sections(ctx, lspci, name)
            status = "read"
        except DisksleuthError as exc:
            status = f"not read: {_clip(str(exc), _MAX_REASON_CHARS)}"
        sections.extend(SectionRead(s.kind, name, s.first_line, s.last_line, None, status, s.command) for s in lspci)
    names = ["stdin" if p == STDIN else p for p in paths]
    sections.sort(key=lambda s: (names.index(s.file) if s.file in names else 0, s.first_line))
    given_figures = _given(read, write, read_iops, write_iops)
    devices, unused = _devices(ctx, given_figures)
    if not devices and ctx.slots is not None and (ctx.slots.smbios_slots or ctx.slots.onboard):
        # dmidecode alone: its slot table is what the paste holds (shown, with what would put it on the links).
        return PasteExplained(names, [], sections, skipped, ctx.notes, unused, ctx.slots, ctx.slots_file)
    if not devices:
        read_kinds = sorted({s.kind for s in sections if s.status == "read"})
        what = f" (read: {', '.join(read_kinds)})" if read_kinds else ""
        # A recognised section that could not be read is why, when there is one: say it, not "paste smartctl too".
        failed = [s for s in sections if s.status.startswith("not read")]
        if failed:
            why = "; ".join(f"{s.kind} at {s.file} line {s.first_line} {s.status}" for s in failed[:3])
            more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
            raise ParseError(f"no device in the paste: {why}{more}")
        cut = next((f" ({n})" for n in ctx.notes if LINES_CUT_WORDS in n), "")  # why the rest was not seen
        if ctx.headless_link is not None and not read_kinds:
            file, line = ctx.headless_link
            raise ParseError(
                f"no device in the paste: the PCIe link lines at {file} line {line} have no lspci device line above "
                "them ('01:00.0 Non-Volatile memory controller: ...'), so whose link it is is unknown; paste the "
                "whole record (lspci -vv -s BDF), not a grep of it"
            )
        raise ParseError(
            "no device in the paste: no storage controller in lspci -vv, no smartctl report, no nvme-cli drive, "
            "no SD or eMMC register"
            + what
            + cut
            + "; paste lspci -vv, smartctl -x or nvme list output too"
        )
    return PasteExplained(names, devices, sections, skipped, ctx.notes, unused, ctx.slots, ctx.slots_file)


def smartctl_text_health(raw: bytes) -> Health:
    """The drive in a saved smartctl text report (`smartctl -x > file`, a paste): `health --from-smartctl` reads
    it as `explain` does (issue 40). ParseError when it holds no smartctl report, or several."""
    paste = read_paste(decode_paste(raw))
    reports = [s for s in paste.sections if s.kind == "smartctl"]
    if not reports:
        kinds = sorted({s.kind for s in paste.sections})
        held = f" (it holds {', '.join(kinds)} output)" if kinds else ""
        raise ParseError(f"not smartctl output: neither smartctl --json nor smartctl's text report{held}")
    if len(reports) > 1:
        raise ParseError(f"it holds {len(reports)} smartctl reports: give one (explain FILE reads them all)")
    section = reports[0]
    return parse_smartctl_text(section.text, device=_device_name(section.command), first_line=section.first_line).health


def _given(read: str | None, write: str | None, read_iops: str | None, write_iops: str | None) -> list[PastedFigure]:
    out = []
    for option, text, measure in (("--read", read, "seq_read_mbps"), ("--write", write, "seq_write_mbps")):
        if text:
            rate = parse_rate(text)
            out.append(PastedFigure(option, measure, rate.mbps, 0, rate.read_as, None, text))
    for option, text, measure in (("--read-iops", read_iops, "rand_read_iops"),
                                  ("--write-iops", write_iops, "rand_write_iops")):  # fmt: skip
        if text:
            iops = parse_count(text, option)
            out.append(PastedFigure(option, measure, iops, 0, f"{iops:,g} IOPS", None, text))
    return out


def _same(a: str | None, b: str | None) -> bool:
    """sda == sda; nvme0n1 == nvme0 (smartctl names the controller, hdparm the namespace)."""
    if not a or not b:
        return False
    strip = re.compile(r"^(nvme\d+)n\d+$")
    return strip.sub(r"\1", a) == strip.sub(r"\1", b)


@dataclass
class _Building:
    name: str
    transport: str
    hops: tuple[Any, ...] = ()
    pci: tuple[PastedPci, str] | None = None
    drive: _Drive | None = None
    notes: list[str] = field(default_factory=list)
    figures: list[tuple[PastedFigure, str]] = field(default_factory=list)
    bench_only: bool = False  # made from a benchmark's figures alone: nothing of its path or health is known
    card: tuple[PastedCard, str] | None = None  # an SD card's or eMMC's registers and the file they came from


def _card_buildings(cards: list[tuple[PastedCard, str]]) -> list[_Building]:
    """One device per card the pastes name (mmcblk0, or the card's sysfs directory); reports that name none join
    the only named card, else make one card of their own (a paste is mostly about one card)."""
    named: dict[str, list[tuple[PastedCard, str]]] = {}
    unnamed: list[tuple[PastedCard, str]] = []
    for c, file in cards:
        (named.setdefault(c.device, []) if c.device else unnamed).append((c, file))
    only = len(named) == 1  # the only named card takes the unnamed reports
    out = [(name, group + unnamed if only else group) for name, group in named.items()]
    if unnamed and len(named) != 1:
        c, file = unnamed[0]
        first = min(c.source_lines.values(), default=0)
        out.append((f"card at {os.path.basename(file)}:{first}", unnamed))
    buildings = []
    for name, group in out:
        card = merge_cards([c for c, _ in group])
        notes = list(card.notes)
        if len(group) > 1:
            notes.append(f"{len(group)} reports on the card read as one")
        buildings.append(_Building(name, "mmc", notes=notes, card=(card, group[0][1])))
    return buildings


UNNAMED = "(no device named)"


def _bench_only(ctx: _Context, given: list[PastedFigure]) -> list[_Building]:
    """A paste of one benchmark alone (fio, hdparm, dd): a device for each one its figures name (else one unnamed),
    so what needs no path is judged: a 4K random write rate, a figure above any link a drive has."""
    # A fio JSON figure names no device in a paste with others (it joins the only one); alone, where it ran.
    ctx.figures = [(replace(f, device=ctx.fio_targets.get(id(f))) if f.device is None else f, file)
                   for f, file in ctx.figures]  # fmt: skip
    names: list[str | None] = []
    for fig in [*given, *(f for f, _ in ctx.figures)]:
        if fig.device not in names:
            names.append(fig.device)
    if None in names and len(names) > 1:
        names.remove(None)  # an unnamed figure with named ones: said not used (it names no device), as before
    out = []
    for name in names:
        about = "it" if name else "this figure"
        notes = [f"only benchmark output about {about} in the paste: no lspci, smartctl or nvme-cli output, so its "
                 "link and health are unknown and only what needs no path is judged"]  # fmt: skip
        notes += [n for d, n in ctx.figure_notes if _same(d, name) or (d is None and name is None)]
        out.append(_Building(name or UNNAMED, "unknown", notes=notes, bench_only=True))
    return out


def _devices(ctx: _Context, given: list[PastedFigure]) -> tuple[list[PastedDevice], list[dict[str, Any]]]:
    storage = [(p, f) for p, f in ctx.pci if p.fn.class_code is not None and p.fn.class_code >> 16 == _STORAGE_CLASS]
    building: list[_Building] = []
    for p, f in storage:
        transport = "nvme" if p.fn.class_code and p.fn.class_code >> 8 == _NVME_SUBCLASS else "pci"
        b = _Building(p.fn.bdf, transport, _own_hops(p), (p, f))
        if not p.chain_known:
            b.notes.append(_chain_note(p, ctx.tree_where))
        elif not p.fn.path and p.fn.role == "endpoint" and p.fn.bdf in ctx.tree and ctx.tree[p.fn.bdf] is None:
            b.notes.append(f"{p.fn.bdf}: lspci -t draws it on a root bus with no bridge above it (a virtual machine "
                           "or a one-device dump): its own link is all there is to judge")  # fmt: skip
        building.append(b)
    nvme_ctrls = [b for b in building if b.transport == "nvme"]
    sata_ctrls = [(p, f) for p, f in storage if p.fn.class_code and p.fn.class_code >> 8 == _SATA_SUBCLASS]
    drives, drive_notes = _merge_drives(ctx.drives)
    nvme_drives = [d for d in drives if d.health.protocol == "NVMe"]
    for d in drives:
        h = d.health
        if h.protocol == "NVMe" and len(nvme_drives) == 1 and len(nvme_ctrls) == 1:
            b = nvme_ctrls[0]
            b.drive = d
            b.notes.extend(drive_notes.get(id(d), []))
            b.notes.append(f"the {d.what} at {d.where} and the NVMe controller {b.name} are taken as one "
                           "drive: each is the only one of its kind in the paste")  # fmt: skip
            b.name = d.name or b.name
            continue
        hops: tuple[Any, ...] = ()
        notes: list[str] = list(drive_notes.get(id(d), []))
        if h.sata_speed_current_gbps is not None:
            # The port is not known from smartctl: "smartctl/link" in the header says where the speeds came from.
            hops = (SataHop("link", "smartctl", h.sata_speed_current_gbps, None, None, h.sata_speed_max_gbps),)
            if len(sata_ctrls) == 1:
                p, _ = sata_ctrls[0]
                hops += _own_hops(p)
                notes.append(f"taken to hang below {p.fn.bdf}, the only SATA controller in the paste")
        if not any(isinstance(x, PcieHop) for x in hops):
            notes.append("no lspci of its controller in the paste: the path to the CPU is unknown")
        name = d.name or f"drive at {os.path.basename(d.where.file)}:{d.where.line}"
        transport = {"NVMe": "nvme", "ATA": "sata", "SCSI": "scsi"}.get(h.protocol or "", "unknown")
        building.append(_Building(name, transport, hops, None, d, notes))
    building.extend(_card_buildings(ctx.cards))
    if not building:
        building = _bench_only(ctx, given)
    if ctx.slots is not None:
        for b in building:
            b.hops = tuple(_with_slot(h, ctx.slots) for h in b.hops)
    unused = _attach_figures(building, ctx.figures, given)
    if len(building) > MAX_DEVICES:
        ctx.notes.append(f"{len(building):,} devices in the paste: reading the first {MAX_DEVICES:,}")
    key = key_from_env()
    return [_judge(b, key) for b in building[:MAX_DEVICES]], unused


def _chain_note(p: PastedPci, trees: list[Where]) -> str:
    """What is known of the chain above a function whose path does not reach a root port."""
    if p.bridge_above is None:
        return (f"{p.fn.bdf}: the bridge above it is not in the paste; its own link is judged, the chain above it "
                "to the CPU is unknown")  # fmt: skip
    top = p.fn.path[-1].name if p.fn.path else p.fn.bdf
    where = f" (lspci -t at {trees[0]})" if trees else ""
    return (f"{p.fn.bdf}: the bridge above {'it' if top == p.fn.bdf else top} is {p.bridge_above}{where}; its "
            "lspci -vv is not in the paste, so its links and the chain above it to the CPU are unknown")  # fmt: skip


# Which report's fact wins where two name the same drive: smartctl's exact figures before nvme-cli's rounded ones.
_RANK = {"smartctl report": 0, "nvme smart-log": 1, "nvme id-ctrl": 2, "nvme id-ns": 3, "nvme list": 4}


_NAMESPACE = re.compile(r"(nvme\d+)n\d+")


def _controller(name: str) -> str:
    return _NAMESPACE.sub(r"\1", name)


class _DriveNames:
    """The drives merged so far, by name and by the controller their name is a namespace of, so a report finds its
    drive in one look-up (a scan of every drive so far for each report was quadratic in the drives pasted).

    One drive: sda and sda; nvme0 (the controller smartctl and smart-log name) and nvme0n1 (its namespace); not
    nvme0n1 and nvme0n2. Where several would do, the first made."""

    def __init__(self) -> None:
        self.made: dict[int, int] = {}  # id(drive) -> when it was made
        self.by_name: dict[str, list[_Drive]] = {}
        self.by_controller: dict[str, list[_Drive]] = {}

    def add(self, drive: _Drive) -> None:
        self.made.setdefault(id(drive), len(self.made))
        if drive.name:
            self.by_name.setdefault(drive.name, []).append(drive)
            if _controller(drive.name) != drive.name:
                self.by_controller.setdefault(_controller(drive.name), []).append(drive)

    def remove(self, drive: _Drive) -> None:
        if drive.name:
            self.by_name[drive.name].remove(drive)
            if _controller(drive.name) != drive.name:
                self.by_controller[_controller(drive.name)].remove(drive)

    def find(self, name: str | None) -> _Drive | None:
        if not name:
            return None
        found = [
            *self.by_name.get(name, ()),
            *self.by_name.get(_controller(name), ()),
            *self.by_controller.get(name, ()),
        ]
        return min(found, key=lambda m: self.made[id(m)]) if found else None


def _fill(a: Health, b: Health) -> Health:
    """a, with what it lacks taken from b."""
    empty: tuple[Any, ...] = (None, (), {})
    changes = {f.name: getattr(b, f.name) for f in fields(Health)
               if getattr(a, f.name) in empty and getattr(b, f.name) not in empty}  # fmt: skip
    return replace(a, **changes)


def _merge_drives(drives: list[_Drive]) -> tuple[list[_Drive], dict[int, list[str]]]:
    """Reports naming the same drive as one drive (facts of the better source first); an nvme-cli report that
    names no drive joins the paste's only NVMe drive, said in a note. Returns the drives and notes by id()."""
    order = {id(d): i for i, d in enumerate(drives)}
    merged: list[_Drive] = []
    first: dict[int, int] = {}
    notes: dict[int, list[str]] = {}
    nameless: list[_Drive] = []
    names = _DriveNames()
    for d in sorted(drives, key=lambda d: _RANK.get(d.what, 9)):
        if d.name is None and d.what.startswith("nvme"):
            nameless.append(d)
            continue
        into = names.find(d.name)
        if into is None:
            merged.append(replace(d, lines=dict(d.lines)))
            first[id(merged[-1])] = order[id(d)]
            names.add(merged[-1])
            continue
        into.health = _fill(into.health, d.health)
        for k, v in d.lines.items():
            into.lines.setdefault(k, v)
        if into.name and d.name and re.fullmatch(r"nvme\d+", into.name) and d.name.startswith(into.name):
            names.remove(into)
            into.name = d.name  # the namespace is the block device the user knows
            names.add(into)
        notes.setdefault(id(into), []).append(f"the {d.what} at {d.where} is about the same drive")
    merged.sort(key=lambda m: first[id(m)])
    nvme = [m for m in merged if m.health.protocol == "NVMe"]
    for d in nameless:
        if len(nvme) == 1:
            nvme[0].health = _fill(nvme[0].health, d.health)
            for k, v in d.lines.items():
                nvme[0].lines.setdefault(k, v)
            notes.setdefault(id(nvme[0]), []).append(
                f"the {d.what} at {d.where} names no device: taken as {nvme[0].name}'s, the only NVMe drive in the "
                "paste"
            )
        else:
            merged.append(d)
            first[id(d)] = order[id(d)]
    return merged, notes


def _own_hops(p: PastedPci) -> tuple[PcieHop, ...]:
    """The function's path; pasted alone, one hop judged against its own LnkCap (the port's is unknown)."""
    if p.fn.path:
        return p.fn.path
    if p.fn.speed_gtps is None and p.fn.width is None:
        return ()
    fn = p.fn
    return (PcieHop(fn.bdf, fn.parent, fn.vendor_device, None, fn.speed_gtps, fn.width, fn.max_speed_gtps,
                    fn.max_width, None, None),)  # fmt: skip


def _with_slot(hop: Any, slots: SlotTable) -> Any:
    if isinstance(hop, PcieHop) and hop.slot is None:
        slot = slots.slot_for(hop.port, hop.name)
        return replace(hop, slot=slot) if slot is not None else hop
    return hop


def _attach_figures(
    building: list[_Building], figures: list[tuple[PastedFigure, str]], given: list[PastedFigure]
) -> list[dict[str, Any]]:
    unused: list[dict[str, Any]] = []
    if given and len(building) != 1:
        names = ", ".join(b.name for b in building)
        raise UsageError(f"--read/--write apply to one device, and the paste holds {len(building)}: {names}")
    for fig, file in [*((g, "command line") for g in given), *figures]:
        if not fig.value < (_MAX_IOPS if fig.measure.endswith("_iops") else _MAX_MBPS):  # NaN and inf too
            unit = "IOPS" if fig.measure.endswith("_iops") else "MB/s"
            said = f"{fig.value:.3g} {unit}"  # not 300 digits
            unused.append(_figure_dict(replace(fig, read_as=said, note=None), file) | {"not_used": _IMPLAUSIBLE})
            continue
        named = [b for b in building if _same(b.name, fig.device)]
        if named:
            named[0].figures.append((fig, file))
        elif fig.device is None and len(building) == 1:
            building[0].figures.append((fig, file))
        else:
            why = (f"it names {fig.device}, which the paste holds nothing else about" if fig.device
                   else f"it names no device and the paste holds {len(building)}")  # fmt: skip
            unused.append(_figure_dict(fig, file) | {"not_used": why})
    return unused


def _figure_dict(fig: PastedFigure, file: str) -> dict[str, Any]:
    unit = "iops" if fig.measure.endswith("_iops") else "mbps"
    out: dict[str, Any] = {
        "option": fig.tool,
        "text": fig.note if fig.line == 0 and fig.note else fig.read_as,
        unit: round(fig.value, 3),
        "read_as": fig.read_as,
        "measure": fig.measure,
    }
    if fig.line:
        out["source"] = {"file": file, "line": fig.line}
    if fig.device:
        out["device"] = fig.device
    if fig.note and fig.line:
        out["note"] = fig.note
    return out


def _judge(b: _Building, key: bytes | None) -> PastedDevice:
    health: Health | None = b.drive.health if b.drive else None
    sid = serial_id(health.serial, key) if health else None
    if health is not None:
        health = replace(health, serial=None)  # never kept in the clear, never echoed
    best: dict[str, tuple[PastedFigure, str]] = {}
    for fig, file in b.figures:
        if fig.measure in _JUDGED and (fig.measure not in best or fig.value > best[fig.measure][0].value):
            best[fig.measure] = (fig, file)
    figures = Figures(**{m: best[m][0].value for m in best})  # type: ignore[arg-type]
    device = Device(
        name=b.name,
        path=f"/dev/{b.name}" if re.fullmatch(r"[A-Za-z0-9_!-]+", b.name) else "",
        transport=b.transport,
        model=_clip(health.model if health else _pci_model(b.pci[0]) if b.pci else None, _MAX_NAME_CHARS),
        firmware=_clip(health.firmware if health else None, _MAX_NAME_CHARS),
        size_bytes=health.capacity_bytes if health else None,
        hops=b.hops,
    )
    if b.card is not None:  # the card's own claims and wear, decoded and judged as a live card's (issue 39)
        card = b.card[0]
        device = replace(device, card_registers=card.registers, size_bytes=device.size_bytes or card.size_bytes,
                         model=device.model or _clip(card.registers.name, _MAX_NAME_CHARS))  # fmt: skip
    device = with_drive_sata_max(device, health)
    chain = link_chain(device.hops)
    findings = verdicts(device, chain, figures, health=health)
    summary = summary_line(device, chain, figures)
    if b.bench_only and not figures.any():
        # Only figures no verdict reads (hdparm -T's memory, a dd of unknown direction): nothing judged, not "ok".
        findings = []
        why = next((f.note for f, _ in b.figures if f.note), None)
        summary = NOTHING_TO_JUDGE + (f": {why}" if why else "")
    elif not figures.any() and (link := link_summary(chain)):
        summary = f"{link}; {summary}"
    sources = [_source(f, b, best) for f in findings]
    given = [_figure_dict(fig, file) for fig, file in b.figures]
    if sum(1 for fig, _ in b.figures if fig.measure in _JUDGED) > len(best):  # hdparm -T's memory is no kind judged
        b.notes.append("several figures of one kind: the best of each is judged")
    chain_known = b.pci[0].chain_known if b.pci else None
    return PastedDevice(device, chain, figures, findings, summary, sources, given, chain_known, b.notes, sid)


NOTHING_TO_JUDGE = "no figure a verdict reads"
# A name lspci prints for an id pci.ids does not know: "Device a811", "Samsung Electronics Co Ltd Device a811".
_UNNAMED_ID = re.compile(r"(?:^|\s)Device [0-9a-fA-F]{4}$")


def _pci_model(p: PastedPci) -> str | None:
    """The drive's model from lspci: an NVMe function's "Subsystem:" names the drive ("SSD 970 EVO Plus 1TB") where
    the header names the controller chip; the header's names when the subsystem's id is one pci.ids lacks, and for a
    controller (a SATA or SAS HBA's subsystem names the card or the board, not a drive)."""
    sub = p.subsystem_name
    is_drive = p.fn.class_code is not None and p.fn.class_code >> 8 == _NVME_SUBCLASS  # a SATA/SAS HBA's is the card's
    if is_drive and sub and not _UNNAMED_ID.search(sub):
        return sub
    return p.fn.device_name


def link_summary(chain: LinkChain) -> str | None:
    """'PCIe 3.0 x2 of x4: ceiling 1,772 MB/s, capable 3,545': the link that sets the ceiling, against what its
    ends could do, for a paste with no figures to judge."""
    hop = chain.bottleneck
    if not isinstance(hop, HopCeiling) or chain.current_ceiling_mbps is None:
        return None
    label, capable = hop.label.removesuffix(" link"), (hop.capable_label or "").removesuffix(" link") or None
    if capable and capable != label:
        same_speed = capable.rsplit(" ", 1)[0] == label.rsplit(" ", 1)[0]
        label += f" of {capable.rsplit(' ', 1)[1] if same_speed else capable}"
    text = f"{label}: ceiling {chain.current_ceiling_mbps:,.0f} MB/s"
    if chain.capable_ceiling_mbps is not None and round(chain.capable_ceiling_mbps) != round(
        chain.current_ceiling_mbps
    ):
        text += f", capable {chain.capable_ceiling_mbps:,.0f}"
    return text


# The register lines a card's finding rests on, the first pasted one named.
_CARD_LINES = {"emmc_worn": ("life_time", "pre_eol_info", "ext_csd"), "host_limits_card": ("ios", "ext_csd")}
_PCI_CODES = ("link_downgraded", "slot_limited", "behind_chipset", "slot_firmware_mismatch")


def _source(f: Finding, b: _Building, best: dict[str, tuple[PastedFigure, str]]) -> Where | None:
    """The file and line a finding rests on: the figure's line, the lspci LnkSta line, the smartctl field."""
    figure_measures = [m for m in _JUDGED if m in best]
    if b.card is not None and f.code in _CARD_LINES:
        card, file = b.card
        line = next((card.source_lines[k] for k in _CARD_LINES[f.code] if k in card.source_lines), None)
        if line is not None:
            return Where(file, line)
    if b.pci and (f.code in _PCI_CODES or f.code.startswith(("pcie", "slot"))):
        p, file = b.pci
        text = " ".join(str(v) for v in f.evidence.values())
        line = p.source_lines.get("LnkSta") or p.source_lines.get("header")
        if p.fn.bdf not in text and f.code != "link_downgraded":
            line = p.source_lines.get("header", line)
        return Where(file, line) if line else None
    if b.drive is not None:
        where = _health_line(f, b.drive.lines)
        if where is not None:
            return where
        if f.code.startswith(("sata_link", "health", "media", "interface", "temperature", "lba", "wear", "spare")):
            return b.drive.where
    if figure_measures:
        fig, file = best[figure_measures[0]]
        return Where(file, fig.line) if fig.line else Where("command line", 0)
    if b.drive is not None:
        return b.drive.where
    if b.pci:
        p, file = b.pci
        return Where(file, p.source_lines.get("header", 0))
    return None


def _health_line(f: Finding, lines: Mapping[str, Where]) -> Where | None:
    """The smartctl line of the first fact a health finding names: a Health field in its evidence, or an ATA
    attribute among its counts ("Current_Pending_Sector (ATA 197)")."""
    for key, value in f.evidence.items():
        if key in lines and value is not None and value != [] and value != {}:
            return lines[key]
    counts = f.evidence.get("counts")
    if isinstance(counts, dict):
        for label in counts:
            m = re.search(r"\(ATA (\d+)\)", str(label))
            if m and f"attribute {m.group(1)}" in lines:
                return lines[f"attribute {m.group(1)}"]
    return None


def is_paste_argument(arg: str) -> bool:
    """How `explain ARG` is told apart: '-' or an existing file is a paste; so is a name that cannot be a
    device (a '.' or a '/' outside /dev/: paste.txt, ./out). Anything else is a device name (sda, /dev/nvme0n1)."""
    if arg == STDIN or os.path.isfile(arg) or os.path.isdir(arg):
        return True
    if arg.startswith("/dev/"):
        return False
    return "/" in arg or "." in arg
