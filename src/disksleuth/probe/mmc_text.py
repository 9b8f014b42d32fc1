"""Pasted SD-card and eMMC register text read into the CardRegisters model probe/mmc_card.py reads from sysfs, so a
paste is decoded (analysis.card_registers) and judged (analysis.card_claims: emmc_worn, host_limits_card) as a live
card is. Pure; each line is cut by the normaliser (probe/paste_text.py) before it gets here; one pass, no regex
that backtracks over a run of one character class.

Two kinds of text, as people post them:
- mmc-utils `mmc extcsd read /dev/mmcblkN` (mmc_cmds.c do_read_extcsd): a banner "Extended CSD rev 1.N (MMC x.y)"
  whose N is EXT_CSD_REV, then one field a line, "Name [FIELD: 0xVV]" or "Name [FIELD]: 0xVV", with the exceptions
  noted where they are read. Often only `| grep -i life` of it: the "eMMC Life Time Estimation A" lines alone.
- the card's sysfs attributes (drivers/mmc/core/{sd,mmc,bus}.c; Documentation/ABI mmc-dev-attrs) and the host's
  debugfs files, in the shapes a shell prints them:
    `grep -H . /sys/class/mmc_host/mmc0/mmc0:5048/*`  "PATH:value" (and "grep: PATH: Is a directory")
    `head /sys/block/mmcblk0/device/*`                "==> PATH <==" then the value
    `cat /sys/block/mmcblk0/device/{cid,csd}`          the values alone, in the order of the command's names
    a path on a line of its own, its value below     (how a linux-mmc post of 2025-04 laid out debugfs files)
  and "name: value" lines ("eMMC life_time: 0x01 0x01", a BeagleBoard script's report quoted on linux-mmc).
The card's serial (the `serial` attribute) is never kept; the CID that holds it is decoded and dropped by
analysis.card_registers like a live card's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from disksleuth.errors import ParseError
from disksleuth.model.card import CardRegisters
from disksleuth.probe.paste_text import iter_lines

# sysfs/debugfs file name -> CardRegisters field (probe/mmc_card.py reads the same files).
ATTRS = {
    "type": "card_type",
    "cid": "cid",
    "csd": "csd",
    "scr": "scr",
    "ssr": "ssr",
    "name": "name",
    "manfid": "manfid",
    "oemid": "oemid",
    "date": "date",
    "prv": "prv",
    "fwrev": "fwrev",
    "hwrev": "hwrev",
    "rev": "rev",
    "life_time": "life_time",
    "pre_eol_info": "pre_eol_info",
    "cmdq_en": "cmdq_en",
    "preferred_erase_size": "preferred_erase_size",
    "ext_csd": "ext_csd",
    "ios": "ios",
    "caps": "host_caps",
    "caps2": "host_caps2",
}
_MULTI_LINE = frozenset({"ios", "ext_csd"})  # debugfs ios is a page of lines; ext_csd 1,024 hex digits, often wrapped
_MAX_VALUE_CHARS = 4096  # the longest a register's text is (probe/mmc_card.py's limits)
_MAX_ATTR_CHARS = 24  # "preferred_erase_size" is the longest name read
_HOST_CARD = re.compile(r"mmc\d{1,3}")  # "mmc0" before ":5048" in /sys/class/mmc_host/mmc0/mmc0:5048/cid
_BLOCK = re.compile(r"/(mmcblk\d{1,3})\b")
_CARD_DIR = re.compile(r"/(mmc\d{1,3}:[0-9a-fA-F]{4})/")

# mmc-utils: "Extended CSD rev 1.%d (MMC %s)" (the %d is EXT_CSD_REV, byte 192).
_BANNER = re.compile(r"^\s*+Extended CSD rev 1\.(\d{1,2})\b")
# "Sector Count [SEC_COUNT: 0x00eb8000]", "eMMC Pre EOL information [EXT_CSD_PRE_EOL_INFO]: 0x01",
# "Command Queue Depth [CMDQ_DEPTH]: 16" (printed as (byte & 0x1f) + 1, in decimal). The tag is one run of a class
# the "]" or ":" after it is not in: one pass.
_FIELD = re.compile(
    r"\[([A-Z][A-Z0-9_]{1,48}+)(?:: (0x[0-9a-fA-F]{1,8}+))?\](?::[ \t]*+(0x[0-9a-fA-F]{1,8}+|\d{1,6}+))?"
)
# "Cache Size [CACHE_SIZE] is 128 KiB" (mmc-utils prints the KiB in decimal, no colon).
_CACHE = re.compile(r"\[CACHE_SIZE\] is (\d{1,10}+) KiB")
# EXT_CSD bytes analysis.card_registers reads (JESD84-B51 7.4): the tag mmc-utils prints -> (first byte, length).
_EXT_BYTES = {
    "CARD_TYPE": (196, 1),
    "SEC_COUNT": (212, 4),
    "EXT_CSD_PRE_EOL_INFO": (267, 1),
    "EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_A": (268, 1),
    "EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_B": (269, 1),
    "CMDQ_SUPPORT": (308, 1),
}


@dataclass(frozen=True)
class PastedCard:
    """A card's registers read from pasted text, with the line each came from."""

    registers: CardRegisters
    device: str | None = None  # "mmcblk0" (from /sys/block/ or /dev/), else the card's directory "mmc0:5048"
    size_bytes: int | None = None  # EXT_CSD SEC_COUNT x 512, from mmc-utils' text
    source_lines: dict[str, int] = field(default_factory=dict)  # CardRegisters field -> line
    notes: tuple[str, ...] = ()


def _device_of(text: str) -> str | None:
    m = _BLOCK.search(text)
    if m:
        return m.group(1)
    m = _CARD_DIR.search(text)
    return m.group(1) if m else None


def _hex_byte(text: str) -> int | None:
    try:
        value = int(text, 16) if text.startswith("0x") else int(text)
    except ValueError:
        return None
    return value


def parse_mmc_extcsd(text: str, first_line: int = 1, command: str | None = None) -> PastedCard:
    """mmc-utils `mmc extcsd read` output, whole or grepped. ParseError when it holds none of the fields read."""
    rev: int | None = None
    found: dict[str, int] = {}
    lines: dict[str, int] = {}
    cache_kib: int | None = None
    extra: dict[str, str] = {}  # "eMMC name: MK2704": a BeagleBoard script's report of the sysfs files
    for offset, line in enumerate(iter_lines(text)):
        no = first_line + offset
        if rev is None and (b := _BANNER.match(line)):
            rev, lines["rev"] = int(b.group(1)), no
            continue
        if "[" not in line:
            split = _split_attr(line) if line.startswith("eMMC ") else None
            key = ATTRS.get(split[0]) if split else None
            if split and key and key not in ("ext_csd", "ios", "card_type") and key not in extra and split[1]:
                extra[key] = split[1][:_MAX_VALUE_CHARS]
                lines.setdefault(key, no)
            continue
        if "[CACHE_SIZE]" in line:
            c = _CACHE.search(line)
            cache_kib = int(c.group(1)) if c else cache_kib
            continue
        m = _FIELD.search(line)
        if m is None:
            continue
        tag, value = m.group(1), m.group(2) or m.group(3)
        if tag == "EXT_CSD_REV" and value is not None:  # printed by some mmc-utils versions beside the banner
            rev = _hex_byte(value) if rev is None else rev
            lines.setdefault("rev", no)
        elif tag in _EXT_BYTES and value is not None and tag not in found:
            number = _hex_byte(value)
            if number is not None and number < 1 << (8 * _EXT_BYTES[tag][1]):
                found[tag] = number
                lines[tag] = no
        elif tag == "CMDQ_DEPTH" and value is not None and value.isdigit():
            found.setdefault(tag, int(value))  # mmc-utils prints (CMDQ_DEPTH & 0x1f) + 1
    if rev is None and not found and cache_kib is None and not extra:
        raise ParseError("no EXT_CSD field in it (no 'Extended CSD rev' banner, no [FIELD: value] line)")
    notes: list[str] = []
    life_a = found.get("EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_A")
    life_b = found.get("EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_B")
    eol = found.get("EXT_CSD_PRE_EOL_INFO")
    sectors = found.get("SEC_COUNT")
    source: dict[str, int] = {}
    if life_a is not None or life_b is not None:
        source["life_time"] = (
            lines.get("EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_A") or lines["EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_B"]
        )
    if eol is not None:
        source["pre_eol_info"] = lines["EXT_CSD_PRE_EOL_INFO"]
    source.update((k, lines[k]) for k in extra if k not in source)
    ext_csd = _rebuilt_ext_csd(rev, found, cache_kib)
    if ext_csd is not None:
        source["ext_csd"] = lines.get("rev", first_line)
        notes.append(
            "EXT_CSD put together from the fields mmc extcsd read printed (revision, SEC_COUNT, CARD_TYPE, cache, "
            "life time, command queue); the bytes it did not print are read as 0"
        )
    if life_a is not None and life_b is not None:
        extra["life_time"] = f"0x{life_a:02x} 0x{life_b:02x}"
    if eol is not None:
        extra["pre_eol_info"] = f"0x{eol:02x}"
    if rev is not None:
        extra["rev"] = f"0x{rev:x}"
    # A grepped paste may hold one life time estimate: the other is unknown (the kernel's life_time has two).
    regs = CardRegisters(card_type="MMC", ext_csd=ext_csd, **extra)  # EXT_CSD exists only on (e)MMC
    if (life_a is None) != (life_b is None):
        notes.append("only one of the two life time estimates is in the paste: wear not judged from it")
    device = _device_of(command or "")
    return PastedCard(regs, device, sectors * 512 if sectors else None, source, tuple(notes))


def _rebuilt_ext_csd(rev: int | None, found: dict[str, int], cache_kib: int | None) -> str | None:
    """The 512-byte EXT_CSD as debugfs prints it, from a whole `mmc extcsd read`: only when every field
    analysis.card_registers reads from it that mmc-utils prints for this revision is in the paste (mmc_cmds.c: the
    life time estimates from revision 7, the command queue from 8), so a byte left 0 is one the card's revision
    has no field for, not one the paste lost."""
    if rev is None or "SEC_COUNT" not in found or "CARD_TYPE" not in found:
        return None
    needs = []
    if rev >= 7:
        needs += ["EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_A", "EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_B", "EXT_CSD_PRE_EOL_INFO"]
    if rev >= 8:
        needs += ["CMDQ_SUPPORT", "CMDQ_DEPTH"]
    if any(n not in found for n in needs) or (rev >= 7 and cache_kib is None) or rev > 0xFF:
        return None
    ext = bytearray(512)
    ext[192] = rev
    for tag, (start, size) in _EXT_BYTES.items():
        if tag in found:
            ext[start : start + size] = found[tag].to_bytes(size, "little")
    if cache_kib is not None and cache_kib < 1 << 32:
        ext[249:253] = cache_kib.to_bytes(4, "little")
    if "CMDQ_DEPTH" in found and 1 <= found["CMDQ_DEPTH"] <= 32:
        ext[307] = found["CMDQ_DEPTH"] - 1
    return ext.hex()


def _split_attr(line: str) -> tuple[str, str] | None:
    """'/sys/class/mmc_host/mmc0/mmc0:5048/cid:9f54...' -> ('cid', '9f54...'); 'cid:9f54...' likewise; None for a line
    that is no "PATH:value". The path ends at the first colon not inside a card's directory name ("mmc0:5048")."""
    start = 0
    while True:
        colon = line.find(":", start)
        if colon < 0:
            return None
        slash = line.rfind("/", max(0, colon - _MAX_ATTR_CHARS - 1), colon)
        name = line[slash + 1 : colon]
        if slash < 0 and colon > _MAX_ATTR_CHARS:
            return None
        if _HOST_CARD.fullmatch(name) and line[colon + 1 : colon + 5].isalnum() and line[colon + 5 : colon + 6] == "/":
            start = colon + 1  # the card's directory: the path goes on
            continue
        # "eMMC life_time: 0x01 0x01": a BeagleBoard script's report (linux-mmc, 2025-02-26) names each attribute
        # after "eMMC ".
        name = name.removeprefix("eMMC ").strip()
        return name, line[colon + 1 :].strip()


def _names_in_command(command: str | None) -> list[str]:
    """The attribute files a `cat`/`grep`/`head` command names, in order: "cat .../device/{cid,csd}" -> [cid, csd].
    A glob names no order (an empty list)."""
    if not command or "*" in command or "?" in command:
        return []
    names: list[str] = []
    for word in command.split()[1:16]:
        if word.startswith("-"):
            continue
        base = word.rsplit("/", 1)[-1].strip("'\"")
        if base.startswith("{") and base.endswith("}"):
            names.extend(b.strip() for b in base[1:-1].split(",")[:32])
        elif "/" in word or base in ATTRS:
            names.append(base)
    return names


@dataclass
class _Reading:
    values: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    device: str | None = None

    def add(self, name: str, value: str, no: int) -> None:
        key = ATTRS.get(name)
        if key is None:
            return
        parts = self.values.setdefault(key, [])
        if parts and name not in _MULTI_LINE:
            return  # one line per attribute; the first is the kernel's
        if sum(len(p) + 1 for p in parts) + len(value) <= _MAX_VALUE_CHARS:
            parts.append(value)
        self.lines.setdefault(key, no)


def parse_mmc_sysfs(text: str, first_line: int = 1, command: str | None = None) -> PastedCard:
    """A card's sysfs and debugfs attributes as a shell printed them. ParseError when no attribute is named."""
    r = _Reading(device=_device_of(command or ""))
    pending = _names_in_command(command)
    current: str | None = pending[0] if len(pending) == 1 else None  # one file named: every line is its value
    queue = pending if len(pending) > 1 else []
    for offset, raw in enumerate(iter_lines(text)):
        no = first_line + offset
        line = raw.strip()
        if not line:
            current = None if not pending else current
            continue
        if line.startswith(("grep: ", "cat: ", "head: ", "tail: ")):
            # "cat: /sys/.../ssr: No such file or directory" (stderr in the paste): that name printed nothing.
            if queue and "No such file" in line:
                queue.pop(0)
            continue
        if line.startswith("==> ") and line.endswith(" <=="):  # head/tail's header per file
            current = line[4:-4].rsplit("/", 1)[-1]
            r.device = r.device or _device_of(line)
            continue
        if line.startswith("/") and " " not in line and ":" not in line.rsplit("/", 1)[-1]:
            current = line.rsplit("/", 1)[-1]  # a path alone on its line, its value below
            r.device = r.device or _device_of(line)
            continue
        if current is not None:
            if not _value_of(current, line):  # a prompt left alone on its line after the value ("-bash-4.2#")
                current = None
                continue
            r.add(current, line, no)
            if current not in _MULTI_LINE and not pending:
                current = None
            continue
        if queue:
            r.add(queue.pop(0), line, no)
            continue
        split = _split_attr(line)
        if split is not None:
            name, value = split
            if name == "uevent" and value.startswith("MMC_TYPE="):  # the type, where `type` was not pasted
                name, value = "type", value[9:]
            if name in ATTRS:
                r.add(name, value, no)
                if line.startswith("/"):
                    r.device = r.device or _device_of(line)
    if not r.values:
        raise ParseError("no SD or eMMC register in it (no cid, csd, scr, ssr, life_time or ext_csd value)")
    values = {k: "\n".join(v) if k in ("ios", "ext_csd") else v[0] for k, v in r.values.items()}
    card_type = values.pop("card_type", None) or _type_guess(values)
    # A SCSI disk's /sys/block/sda/device/ has `type` ("0") and `rev` too: only a card's own files make a card.
    if card_type not in _CARD_TYPES or not _CARD_OWN.intersection(values):
        why = f"its type is {card_type[:20]!r}" if card_type and card_type not in _CARD_TYPES else "no card register"
        raise ParseError(f"not an SD card's or eMMC's files ({why}: cid, csd, life_time, ext_csd, debugfs ios...)")
    regs = CardRegisters(card_type=card_type, **values)
    return PastedCard(regs, r.device, None, dict(r.lines))


_CARD_TYPES = frozenset({"SD", "MMC", "SDIO", "SDcombo", None})  # drivers/mmc/core/bus.c mmc_type_show
_CARD_OWN = frozenset({"cid", "csd", "scr", "ssr", "life_time", "pre_eol_info", "ext_csd", "ios", "host_caps",
                       "host_caps2", "manfid", "oemid"})  # fmt: skip
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _value_of(name: str, line: str) -> bool:
    """Whether a line can be this file's value: ext_csd is hex digits only, each line of ios "key: value"."""
    if name == "ext_csd":
        return _HEX_DIGITS.issuperset(line)
    if name == "ios":
        return ":" in line
    return True


def _type_guess(values: dict[str, str]) -> str | None:
    """The kind of card, where `type` was not pasted: only eMMC has life_time, pre_eol_info, rev and ext_csd
    (drivers/mmc/core/mmc.c), only SD an scr and ssr (sd.c)."""
    if any(k in values for k in ("life_time", "pre_eol_info", "rev", "ext_csd")):
        return "MMC"
    if "scr" in values or "ssr" in values:
        return "SD"
    return None


_FIELDS = tuple(f.name for f in fields(CardRegisters))


def merge_cards(cards: list[PastedCard]) -> PastedCard:
    """Reports on one card as one: each register from the first report that has it, a raw debugfs ext_csd before
    one put together from mmc-utils' text (which is the only report that knows SEC_COUNT's size)."""
    ordered = sorted(cards, key=lambda c: c.size_bytes is not None)  # stable: the paste's order otherwise
    values: dict[str, object] = {}
    lines: dict[str, int] = {}
    notes: list[str] = []
    for c in ordered:
        for name in _FIELDS:
            value = getattr(c.registers, name)
            if value is not None and values.get(name) is None:
                values[name] = value
                if name in c.source_lines:
                    lines[name] = c.source_lines[name]
        for k, v in c.source_lines.items():
            lines.setdefault(k, v)
        used_own = c.registers.ext_csd is None or values.get("ext_csd") is c.registers.ext_csd
        notes.extend(n for n in c.notes if n not in notes and (used_own or not n.startswith("EXT_CSD put")))
    size = next((c.size_bytes for c in cards if c.size_bytes), None)
    device = next((c.device for c in cards if c.device), None)
    regs = CardRegisters(**values)  # type: ignore[arg-type]
    return PastedCard(regs, device, size, lines, tuple(notes))
