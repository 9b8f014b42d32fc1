"""The one normaliser in front of every pasted-text parser (pure): undo what pasting did, then split the paste
into the commands it holds, recognised by content (docs: DESIGN.md, "Reading pasted text").

What pasting does, and what is undone here:
- CRLF or CR line ends (Windows, some web forms): every line end becomes one line.
- e-mail quoting: "> ", ">> ", "> > " prefixes (mail clients, forum replies).
- shell prompts: "$ lspci -vv", "root@nas:~# smartctl -x /dev/sda": the prompt is dropped and the command kept
  as the hint of the section below it.
- wrapped lines: a line a mail client broke is joined back only where the break is certain (lspci's LnkSta/LnkCap
  line whose "Width ..." or "(downgraded)" went to the next line).
Each line keeps its number in the original paste, so every fact a parser reads can name its line.

Parsing is one pass over the lines with anchored patterns: linear in the size of the paste.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from disksleuth.errors import ParseError
from disksleuth.model.paste import Paste, PasteLine, Section

# The most of a paste read: a 100 MB paste is refused in one line instead of read for minutes.
MAX_PASTE_BYTES = 64 << 20
# Lines longer than this are not command output (binary junk, a minified page): cut for the detectors.
MAX_LINE_CHARS = 4096

_LINE_END = re.compile(r"\r\n|\r|\n")
_QUOTE = re.compile(r"^[ ]{0,3}(?:>[ ]?)+")
_COMMANDS = r"(?:lspci|smartctl|nvme|fio|hdparm|dd|lsblk|dmidecode)"
# "$ cmd", "# cmd", "user@host:~$ cmd", "[user@host dir]# cmd", "host ~ # cmd", "PS C:\> cmd" (smartctl on Windows)
_PROMPT = re.compile(
    r"^\s*(?:\S+@\S+(?:\s+\S+)?\s*[#$%>]|\[[^\]]{1,80}\]\s*[#$%]|[#$%]|\S{1,40}\s+~?\S*\s*#|PS [^>]{1,80}>)\s*"
    r"(?P<cmd>(?:sudo\s+(?:-\S+\s+)*)?" + _COMMANDS + r"\b.*)$"
)
# A benchmark's command line pasted without a prompt ("./fio --filename=...", "dd if=/dev/sda of=/dev/null ..."):
# only with an option or operand that shows it is a command, so prose naming the tool is not taken for one.
_BARE_COMMAND = re.compile(
    r"^\s*(?P<cmd>(?:sudo\s+)?(?:\.?/\S*/|\./)?(?:fio\s+(?:--?\w|\S+\.fio\b)|hdparm\s+-[tT]{1,2}\b|"
    r"dd\s+(?:\w+=\S+\s+)*(?:if|of)=).*)$"
)

_BDF = r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_LSPCI_HEADER = re.compile(r"^\s*" + _BDF + r" [^:\n]{2,80}(?: \[[0-9a-fA-F]{4}\])?: ")
# The first property lines of an `lspci -v` record. A record whose next line starts so, unindented, is a paste that
# lost its indentation (a Gmail message to linux-rdma, 2022-02-13, "sysfs: cannot create duplicate filename": every
# line of `lspci -s 04:00.0 -vv` flush left): its LnkCap/LnkSta lines were cut off with the indentation.
_LSPCI_FLAT_FIRST = re.compile(
    r"^(?:Subsystem|Control|Status|Physical Slot|DeviceName|IOMMU group|Latency|Interrupt|Region \d|Capabilities|"
    r"Flags|Kernel driver in use|Kernel modules|Bus|NUMA node): "
)
_LSPCI_TREE = re.compile(r"^\s*[-+\\]{0,3}\+?-?\[[0-9a-fA-F]{4}:[0-9a-fA-F]{2}\]-")
_LSPCI_TREE_CONT = re.compile(r"^\s*[ |]*[+\\]-[0-9a-fA-F]{2}\.[0-7]|^\s*\|\s*$|^\s*[ |]+\s*[+\\]-")
_SMARTCTL_HEADER = re.compile(r"^\s*smartctl (?:pre-)?\d+\.\d+\b")  # "pre-7.4": a pre-release build
_SMARTCTL_BANNER = re.compile(r"^\s*=== START OF [A-Z /]+ SECTION ===")
_NVME_LIST = re.compile(r"^\s*Node\s+(?:Generic\s+)?SN\s+Model\b")
_NVME_ID_NS = re.compile(r"^\s*NVME Identify Namespace \S+:")
# `nvme id-ns -H | grep "LBA Format"` is how guides show the formats (AnduinOS-Docs' Change-NVME-LBA-Size.md): the
# format rows alone, without the "NVME Identify Namespace" header, are still id-ns output.
_NVME_LBAF = re.compile(r"^\s*(?:LBA Format\s{1,4}\d{1,2}\s*: Metadata Size:|lbaf\s{1,4}\d{1,2}\s*: ms:)")
_NVME_ID_CTRL = re.compile(r"^\s*NVME Identify Controller:")
_NVME_SMART_LOG = re.compile(r"^\s*Smart Log for NVME device:")
_FIO_START = re.compile(
    r"^\s*(?:\S{1,64}: \(g=\d+\): rw=|fio-\d+\.\d+|Starting \d+ (?:process|thread)|\S{1,64}: \(groupid=\d+, jobs=\d+\)|"
    r"Run status group \d+ \(all jobs\):)"  # the group summary alone is what many posts quote
)
_FIO_LINE = re.compile(
    r"^\s*(?:\S{1,64}: \((?:g|groupid)=|fio-\d|Starting \d|Jobs: \d|read:|write:|trim:|READ:|WRITE:|TRIM:|"
    r"Run status group|Disk stats|(?:s|c|clat|slat|lat) ?(?:\(|percentiles)|\|\s+\d|bw \(|iops\s+:|"
    r"lat \(|cpu\s+:|IO depths|submit\s+:|complete\s+:|issued rwts|latency\s+:|\d+(?:\.\d+)?%|\S+: ios=|"
    r"fio: |clat percentiles|\S{1,64}: Laying out IO file)"
)
_HDPARM_DEV = re.compile(r"^\s*/dev/\S+:\s*$")
_HDPARM_TIMING = re.compile(r"^\s*Timing (?:O_DIRECT )?(?:cached|buffered disk|buffer-cache) reads:")
_DD_LINE = re.compile(
    r"^\s*(?:\d+\+\d+ records (?:in|out)|\d+ bytes(?: \([^)]{1,40}\))?(?: \([^)]{1,40}\))? copied,)"
)
_DD_COPIED = re.compile(r"^\s*\d+ bytes(?: \([^)]{1,40}\))?(?: \([^)]{1,40}\))? copied,")
_DMIDECODE = re.compile(r"^\s*(?:# dmidecode \d|Handle 0x[0-9A-Fa-f]{4}, DMI type \d{1,3},)")
_DMIDECODE_VERSION = re.compile(r"^\s*# dmidecode \d{1,3}\.\d{1,3}\S{0,20}\s*$")
_JSON_START = re.compile(r"^\s*[{\[]\s*$|^\s*\{\s*\"")


def normalise(text: str) -> tuple[list[PasteLine], list[str]]:
    """The paste's lines with quoting, prompts' prefixes and CR removed, each with its original number; and
    notes on what was undone. A prompt line is kept as "$ cmd" so the splitter can use it as a hint."""
    if len(text) > MAX_PASTE_BYTES:
        limit_mib = MAX_PASTE_BYTES >> 20
        raise ParseError(f"the paste is {len(text) / 1e6:,.0f} MB; disksleuth reads at most {limit_mib} MiB")
    if "\x00" in text[:65536] or _binary_share(text[:65536]) > 0.05:
        raise ParseError("this is binary data, not the text output of a command")
    notes: list[str] = []
    if "\r" in text:
        notes.append("CRLF or CR line ends")
    raw = _LINE_END.split(text)
    if raw and raw[-1] == "":
        raw.pop()
    quoted = sum(1 for line in raw if line.startswith(">") or line.startswith(" >"))
    strip_quotes = quoted > 0 and quoted * 2 >= sum(1 for line in raw if line.strip())
    if quoted and strip_quotes:
        notes.append("e-mail quoting ('> ') removed")
    lines: list[PasteLine] = []
    for no, line in enumerate(raw, start=1):
        if strip_quotes or (quoted and _quoted_output(line)):
            line = _QUOTE.sub("", line, count=1)
        line = line.replace("\u00a0", " ")
        # "# dmidecode 3.4" is dmidecode's own first line (its version), not a root prompt running dmidecode.
        m = None if _DMIDECODE_VERSION.match(line) else _PROMPT.match(line[:MAX_LINE_CHARS])
        m = m or _BARE_COMMAND.match(line[:MAX_LINE_CHARS])
        if m:
            line = "$ " + m.group("cmd").strip()
        lines.append(PasteLine(no, line))
    joined = _join_wrapped(lines)
    if len(joined) != len(lines):
        notes.append(f"{len(lines) - len(joined)} wrapped line(s) joined")
    return joined, notes


def _binary_share(sample: str) -> float:
    if not sample:
        return 0.0
    bad = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f\x1b" or ch == "\ufffd")
    return bad / len(sample)


def _quoted_output(line: str) -> bool:
    """A quoted line that is command output, in a paste that is mostly not quoted (a reply quoting one paste)."""
    body = _QUOTE.sub("", line, count=1)
    return bool(
        _LSPCI_HEADER.match(body)
        or body.startswith("\t")
        or _SMARTCTL_HEADER.match(body)
        or _SMARTCTL_BANNER.match(body)
    )


_WRAP_TAIL = re.compile(r"^\s*(?:Width x\d+|\((?:downgraded|ok)\)|Width x\d+ \((?:downgraded|ok)\))")
_WRAPPABLE = re.compile(r"^\s*Lnk(?:Sta|Cap):\s.*(?:GT/s|\(downgraded\)|\(ok\)|Speed \S+),?\s*$")


def _join_wrapped(lines: list[PasteLine]) -> list[PasteLine]:
    """Join a LnkSta/LnkCap line a mail client wrapped before its "Width" or "(downgraded)" (certain breaks only)."""
    out: list[PasteLine] = []
    for line in lines:
        if out and _WRAP_TAIL.match(line.text) and _WRAPPABLE.match(out[-1].text) and "Width" not in out[-1].text:
            prev = out[-1]
            out[-1] = PasteLine(prev.no, prev.text.rstrip() + " " + line.text.strip())
            continue
        if (
            out
            and line.text.strip().startswith("(downgraded)")
            and re.search(r"Width x\d+\s*$", out[-1].text)
            and "LnkSta" in out[-1].text
        ):
            prev = out[-1]
            out[-1] = PasteLine(prev.no, prev.text.rstrip() + " " + line.text.strip())
            continue
        out.append(line)
    return out


def _start_kind(text: str) -> str | None:
    """Which command's output starts on this line, judged by its content alone."""
    t = text[:MAX_LINE_CHARS]
    if _SMARTCTL_HEADER.match(t):
        return "smartctl"
    if _SMARTCTL_BANNER.match(t):
        return "smartctl"
    if _DMIDECODE.match(t):
        return "dmidecode"
    if _LSPCI_HEADER.match(t):
        return "lspci"
    if _LSPCI_TREE.match(t):
        return "lspci_tree"
    if _NVME_LIST.match(t):
        return "nvme_list"
    if _NVME_ID_NS.match(t) or _NVME_LBAF.match(t):
        return "nvme_id_ns"
    if _NVME_ID_CTRL.match(t):
        return "nvme_id_ctrl"
    if _NVME_SMART_LOG.match(t):
        return "nvme_smart_log"
    if _FIO_START.match(t):
        return "fio"
    if _HDPARM_DEV.match(t) or _HDPARM_TIMING.match(t):
        return "hdparm"
    if _DD_LINE.match(t):
        return "dd"
    if _JSON_START.match(t):
        return "json"
    return None


def _continues(kind: str, text: str) -> bool:
    """Whether a non-blank line still belongs to the section of this kind."""
    t = text[:MAX_LINE_CHARS]
    if kind in ("smartctl", "dmidecode"):
        return True  # smartctl's text has free-form lines; another command's start ends it
    if kind == "lspci":
        return t[:1] in ("\t", " ") or bool(_LSPCI_HEADER.match(t))
    if kind == "lspci_tree":
        return bool(_LSPCI_TREE_CONT.match(t) or _LSPCI_TREE.match(t))
    if kind == "nvme_list":
        return t.lstrip().startswith(("/dev/", "nvme", "-"))
    if kind in ("nvme_id_ns", "nvme_id_ctrl", "nvme_smart_log"):
        return ":" in t
    if kind == "fio":
        return bool(_FIO_LINE.match(t)) or t[:1] in (" ", "\t")
    if kind == "hdparm":
        return bool(_HDPARM_TIMING.match(t) or _HDPARM_DEV.match(t))
    if kind == "dd":
        return bool(_DD_LINE.match(t))
    return False


# Blank lines a section may contain before it is considered ended (smartctl and lspci use single blank lines
# between blocks; fio uses one before "Run status group").
_MAX_BLANKS = {"smartctl": 3, "dmidecode": 2, "lspci": 2, "fio": 2, "hdparm": 2, "lspci_tree": 0, "dd": 1}


def split_sections(lines: list[PasteLine]) -> Paste:
    """Split normalised lines into sections by content; lines no section claims are reported as skipped."""
    sections: list[Section] = []
    skipped: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    command: str | None = None
    while i < n:
        text = lines[i].text
        if text.startswith("$ "):
            command = text[2:]
            i += 1
            continue
        kind = _start_kind(text)
        if kind is None:
            if text.strip():
                _skip(skipped, lines[i].no)
            i += 1
            continue
        if kind == "json":
            end = _json_end(lines, i)
            if end is None:
                _skip(skipped, lines[i].no)
                i += 1
                continue
            body = tuple(lines[i : end + 1])
            sections.append(Section(_json_kind("\n".join(x.text for x in body)), body, command))
            command = None
            i = end + 1
            continue
        start, i = i, i + 1
        blanks, last = 0, start
        flat = False  # an lspci record pasted without its indentation: its lines run until a blank line
        while i < n:
            t = lines[i].text
            if kind == "lspci" and i == last + 1 and not t[:1].isspace() and _LSPCI_FLAT_FIRST.match(t):
                flat = flat or bool(_LSPCI_HEADER.match(lines[last].text))
            if t.startswith("$ "):
                break
            if not t.strip():
                blanks += 1
                if blanks > _MAX_BLANKS.get(kind, 1):
                    break
                i += 1
                continue
            other = _start_kind(t)
            if other is not None and other != kind:
                break  # another command's output begins
            if kind == "smartctl" and _SMARTCTL_HEADER.match(t):
                break  # a second drive's report
            if not _continues(kind, t) and not (flat and blanks == 0):
                break
            blanks, last = 0, i
            i += 1
        sections.append(Section(kind, tuple(lines[start : last + 1]), command))
        command = None
        i = last + 1
    return Paste(tuple(sections), tuple(skipped))


def _skip(skipped: list[tuple[int, int]], no: int) -> None:
    if skipped and skipped[-1][1] >= no - 2:
        skipped[-1] = (skipped[-1][0], no)
    else:
        skipped.append((no, no))


def _json_end(lines: list[PasteLine], start: int) -> int | None:
    """The line where the JSON value opened at `start` closes (strings and escapes respected), or None."""
    depth = 0
    in_string = escaped = False
    for idx in range(start, len(lines)):
        for ch in lines[idx].text:
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return idx
    return None


def _json_kind(text: str) -> str:
    """smartctl --json, nvme-cli -o json or fio --output-format=json, told apart by their keys."""
    head = text[:4096]
    if '"json_format_version"' in head or '"smartctl"' in head:
        return "smartctl_json"
    if '"fio version"' in head:
        return "fio_json"
    if '"Devices"' in head:
        return "nvme_list_json"
    if '"lbafs"' in text:
        return "nvme_id_ns_json"
    if '"critical_warning"' in head and '"data_units_read"' in text:
        return "nvme_smart_log_json"
    return "json"


def read_paste(text: str) -> Paste:
    """Normalise a paste and split it into sections, with what the normaliser undid in `notes`."""
    lines, notes = normalise(text)
    paste = split_sections(lines)
    return Paste(paste.sections, paste.skipped, tuple(notes))


def section_kinds(paste: Paste) -> Iterator[str]:
    return (s.kind for s in paste.sections)


def iter_lines(text: str) -> Iterator[str]:
    """A section's lines one at a time (the normaliser ends every line with "\\n"): the parsers of pasted text read
    them so, since a list of a 64 MiB paste's lines costs more than reading them."""
    start, n = 0, len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            end = n
        yield text[start:end].rstrip("\r")
        start = end + 1
