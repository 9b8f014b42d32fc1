"""The one normaliser in front of every pasted-text parser (pure): undo what pasting did, then split the paste
into the commands it holds, recognised by content (docs: DESIGN.md, "Reading pasted text").

What pasting does, and what is undone here:
- CRLF or CR line ends (Windows, some web forms): every line end becomes one line.
- e-mail quoting: "> ", ">> ", "> > " prefixes (mail clients, forum replies).
- shell prompts: "$ lspci -vv", "root@nas:~# smartctl -x /dev/sda": the prompt is dropped and the command kept
  as the hint of the section below it.
- wrapped lines: a line a mail client broke is joined back only where the break is certain (lspci's LnkSta/LnkCap
  line whose "Width ..." or "(downgraded)" went to the next line).
- terminal control sequences: colours from `grep --color=always`, `ls --color`, a `script` or tmux capture
  (CSI "ESC [ ... m", OSC window titles "ESC ] ... BEL"): removed, or the lines they start would match nothing.
Each line keeps its number in the original paste, so every fact a parser reads can name its line.

Bounded (issue 35): every line is cut to MAX_LINE_CHARS here, once, so no parser sees a longer one (a JSON value
keeps its whole lines: it is decoded, not matched); at most MAX_LINES lines are read; no pattern backtracks over a
run of one character class (runs are possessive, or stripped in Python); where each JSON value ends is found in one
pass over the paste. Linear in the size of the paste.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate

from disksleuth.errors import ParseError
from disksleuth.model.paste import Paste, PasteLine, Section

# The most of a paste read: a 100 MB paste is refused in one line instead of read for minutes.
MAX_PASTE_BYTES = 64 << 20
# Lines longer than this are not command output (binary junk, a minified page): cut for every parser.
MAX_LINE_CHARS = 4096
# The most lines read: each costs about 180 bytes as a line object (64 MiB of newlines held 9.4 GB), and a million
# is some 3,000 `smartctl -x` reports. The rest of a longer paste is not read, and a note says so.
MAX_LINES = 1 << 20
LINES_CUT_WORDS = "lines were read"  # in the note a longer paste gets: "the paste has N lines: the first M lines..."

_QUOTE = re.compile(r"^[ ]{0,3}(?:>[ ]?)+")
# mmc-utils (`mmc extcsd read`, "./mmcutils" where it was built in place: linux-mmc, 2025-04), and cat/grep/head/tail
# of a card's sysfs or debugfs files (issue 39): only with /sys/, mmc or a register's name within 200 characters,
# so `$ cat notes.txt` stays prose. The quick test before the prompt pattern is the words alone.
_CARD_FILES = (
    r"(?:cat|grep|head|tail)(?=[ \t][^\n]{0,200}?(?:/sys/|mmc|\b(?:cid|csd|scr|ssr|life_time|pre_eol_info|ext_csd)\b))"
)
_COMMANDS = r"(?:lspci|smartctl|nvme|fio|hdparm|dd|lsblk|dmidecode|(?:\./)?mmc(?:utils)?|" + _CARD_FILES + ")"
_COMMAND_WORD = re.compile(r"lspci|smartctl|nvme|fio|hdparm|dd|lsblk|dmidecode|mmc|cat|grep|head|tail")
# "$ cmd", "# cmd", "user@host:~$ cmd", "[user@host dir]# cmd", "host ~ # cmd", "PS C:\> cmd" (smartctl on Windows).
# Each run is possessive or of a class the next part cannot start with, so a line of 4,095 "@" fails in one pass
# (`\S+@\S+` tried every split of it: 16 such lines took 6 s).
_PROMPT = re.compile(
    r"^\s*+(?:[^\s@]++@[^\s#$%>]++(?:[ \t]++[^\s#$%>]++)?[ \t]*+[#$%>]|\[[^\]]{1,80}\][ \t]*+[#$%]|[#$%]|"
    r"[^\s#]{1,40}+[ \t]++~?[^\s#]*+[ \t]*+#|PS [^>]{1,80}>|-?(?:ba|da|k|z)?sh-[\d.]{1,8}+[#$])\s*+"
    r"(?P<cmd>(?:sudo\s++(?:-\S++\s++)*)?" + _COMMANDS + r"\b.*)"
)
# A benchmark's command line pasted without a prompt ("./fio --filename=...", "dd if=/dev/sda of=/dev/null ..."):
# only with an option or operand that shows it is a command, so prose naming the tool is not taken for one.
_BARE_COMMAND = re.compile(
    r"^\s*+(?P<cmd>(?:sudo\s++)?(?:\.?/\S*/|\./)?(?:fio\s++(?:--?\w|\S+\.fio\b)|hdparm\s++-[tT]{1,2}\b|"
    r"dd\s++(?:\w++=\S++\s++)*(?:if|of)=|cat\s++/sys/|"  # `cat /sys/...`: a card's file (BeagleBoard report)
    # "smartctl -a /dev/sdb", "smartctl -d sat -x /dev/sdb", "nvme smart-log /dev/nvme0": a forum post's command
    # line, up to its device (one possessive run of a class that stops at the first "/")
    r"(?:smartctl|nvme\s++[a-z][a-z-]*+)\s++[^/\n]*+/dev/).*)"
)
# Terminal control sequences (ECMA-48), 7-bit and 8-bit: CSI "ESC [ params intermediates final" (colours:
# "\x1b[01;31m\x1b[K" from grep --color=always), OSC "ESC ] ... BEL or ESC \" (the window titles `script` and tmux
# record; one never closed ends at its line's end), and the short escapes ("\x1b(B" that `tput sgr0` prints,
# "\x1b=" from `script`). The classes follow one another without overlap: one pass.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*+[ -/]*+[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]*+(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*+[0-~]"
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
# A continuation of the drawing: "|           +-02.0", a lone "|", or a branch. The margin is one possessive run (it
# was `\s*[ |]*`, then `\s*[ |]+\s*`: two and three runs over the same spaces, and a 64 KiB line of spaces did not
# finish in a minute).
_LSPCI_TREE_CONT = re.compile(r"^[ \t|]*+[+\\]-[0-9a-fA-F]{2}\.[0-7]|^[ \t]*+\|[ \t]*+$|^[ \t|]++[+\\]-")
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
_DD_LINE = re.compile(r"^\s*(?:\d+\+\d+ records (?:in|out)|\d+ bytes(?: \([^)]{1,40}\))?(?: \([^)]{1,40}\))? copied,)")
_DD_COPIED = re.compile(r"^\s*\d+ bytes(?: \([^)]{1,40}\))?(?: \([^)]{1,40}\))? copied,")
_DMIDECODE = re.compile(r"^\s*(?:# dmidecode \d|Handle 0x[0-9A-Fa-f]{4}, DMI type \d{1,3},)")
_DMIDECODE_VERSION = re.compile(r"^\s*# dmidecode \d{1,3}\.\d{1,3}\S{0,20}\s*$")
# mmc-utils `mmc extcsd read` (mmc_cmds.c): its banner, its first field, or the life-time lines people grep for.
_MMC_EXTCSD = re.compile(
    r"^\s*(?:Extended CSD rev 1\.\d|eMMC (?:Life Time Estimation [AB]|Pre EOL information) \[|"
    r"Card Supported Command sets \[S_CMD_SET)"
)
# A card's sysfs/debugfs file as grep -H (PATH:value), as a path alone on its line, or head's "==> PATH <==". The
# path's parts are possessive runs without "/", so a line of slashes fails in one pass; "date:04/2023" is not a start,
# nor `type` or `name`, which a SCSI disk's /sys/block/sda/device/ has too.
_MMC_SYSFS = re.compile(
    r"^\s*(?:/sys/(?:[^/\s]++/)*+(?:cid|csd|scr|ssr|life_time|pre_eol_info|manfid|oemid|ext_csd|ios|caps2?)"
    r"(?::|$)|(?:cid|csd|scr|ssr):[0-9a-fA-F]{16}|==> /sys/\S++ <==$)"
)
_JSON_START = re.compile(r"^\s*[{\[]\s*$|^\s*\{\s*\"")


@dataclass(frozen=True)
class _LongLine(PasteLine):
    """A line cut to MAX_LINE_CHARS, with the whole of it for a JSON value (decoded, never matched)."""

    whole: str = ""


def normalise(text: str) -> tuple[list[PasteLine], list[str]]:
    """The paste's lines with quoting, prompts' prefixes, terminal escapes and CR removed, each with its original
    number and cut to MAX_LINE_CHARS; and notes on what was undone. A prompt line is kept as "$ cmd" so the splitter
    can use it as a hint."""
    if len(text) > MAX_PASTE_BYTES:
        limit_mib = MAX_PASTE_BYTES >> 20
        raise ParseError(f"the paste is {len(text) / 1e6:,.0f} MB; disksleuth reads at most {limit_mib} MiB")
    if "\x00" in text[:65536] or _binary_share(text[:65536]) > 0.05:
        raise ParseError("this is binary data, not the text output of a command")
    notes: list[str] = []
    if "\x1b" in text or "\x9b" in text or "\x9d" in text:
        text, escapes = _ESCAPES.subn("", text)
        if escapes:
            notes.append(f"{escapes:,} terminal colour or control sequence(s) removed")
    if "\r" in text:
        notes.append("CRLF or CR line ends")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    raw = text.split("\n", MAX_LINES)
    if len(raw) > MAX_LINES:
        raw.pop()  # the rest of the paste, unread
        notes.append(f"the paste has {total:,} lines: the first {MAX_LINES:,} {LINES_CUT_WORDS}")
    elif raw and raw[-1] == "":
        raw.pop()
    quoted = sum(1 for line in raw if line[:1] == ">" or line[:2] == " >")
    strip_quotes = quoted > 0 and quoted * 2 >= sum(1 for line in raw if line and not line.isspace())
    if quoted and strip_quotes:
        notes.append("e-mail quoting ('> ') removed")
    lines: list[PasteLine] = []
    # A reply that quotes command output among prose: once a quoted line is output, the quoted lines after it are
    # too (an lspci record's property lines, a smartctl report's body), through a line the reply's own wrapping left
    # unquoted (a short tail at the margin), up to a blank or other unquoted line.
    quoted_run = False
    for no, line in enumerate(raw, start=1):
        if not line:
            quoted_run = False
            lines.append(PasteLine(no, line))
            continue
        if quoted and strip_quotes:
            line = _QUOTE.sub("", line, count=1)
        elif quoted:
            if line[:1] == ">" or line[:2] == " >":
                if quoted_run or _quoted_output(line[:MAX_LINE_CHARS]):
                    quoted_run = True
                    line = _QUOTE.sub("", line, count=1)
            elif quoted_run:
                quoted_run = not line[:1].isspace() and len(line) <= _QUOTED_TAIL_CHARS
        if "\u00a0" in line:
            line = line.replace("\u00a0", " ")
        short = line[:MAX_LINE_CHARS]
        # "# dmidecode 3.4" is dmidecode's own first line (its version), not a root prompt running dmidecode.
        m = _prompt(short)
        if m:
            lines.append(PasteLine(no, "$ " + m.group("cmd").strip()))
        elif len(line) > MAX_LINE_CHARS:
            lines.append(_LongLine(no, short, line))
        else:
            lines.append(PasteLine(no, line))
    del raw
    joined = _join_wrapped(lines)
    if len(joined) != len(lines):
        notes.append(f"{len(lines) - len(joined)} wrapped line(s) joined")
    return joined, notes


def _prompt(line: str) -> re.Match[str] | None:
    """A shell prompt and the command after it, or a benchmark's command line pasted without one."""
    if not _COMMAND_WORD.search(line):  # both need a command's name: one search turns away nearly every line
        return None
    if ("#" in line or "$" in line or "%" in line or ">" in line) and not _DMIDECODE_VERSION.match(line):
        m = _PROMPT.match(line)
        if m:
            return m
    return _BARE_COMMAND.match(line)


def _binary_share(sample: str) -> float:
    if not sample:
        return 0.0
    bad = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f\x1b" or ch == "\ufffd")
    return bad / len(sample)


_QUOTED_TAIL_CHARS = 40  # the longest unquoted wrap tail a quoted run goes on through


def _quoted_output(line: str) -> bool:
    """A quoted line that is command output, in a paste that is mostly not quoted (a reply quoting one paste)."""
    body = _QUOTE.sub("", line, count=1)
    return bool(
        _LSPCI_HEADER.match(body)
        or body.startswith("\t")
        or _SMARTCTL_HEADER.match(body)
        or _SMARTCTL_BANNER.match(body)
    )


_WRAP_TAIL = re.compile(r"^\s*+(?:Width x\d+|\((?:downgraded|ok)\)|Width x\d+ \((?:downgraded|ok)\))")
_WIDTH_AT_END = re.compile(r"Width x\d++$")
# A field of `lspci -vv` at the start of a line: "Control:", "Kernel driver in use:", "Region 0:", "LnkSta:". A name
# of letters, digits, spaces and a few marks, then a colon and a space: one possessive run, so it fails in one pass.
_LSPCI_FIELD = re.compile(r"[A-Za-z][A-Za-z0-9 /.#()-]{0,40}+:(?:[ \t]|$)")
# Where a mail client or forum wraps: at 72 to 80 columns, at the last space before the limit. A line is taken as cut
# when the first word of the next line would have taken it past WRAP_MIN_COLUMNS; a line longer than WRAP_MAX_CHARS
# was not wrapped at 72-80 columns.
WRAP_MIN_COLUMNS = 64
WRAP_MAX_CHARS = 120


def _wrappable(text: str) -> bool:
    """A LnkSta/LnkCap line that ends where a mail client could have broken it: after "GT/s", "(downgraded)",
    "(ok)" or "Speed X", with or without its comma."""
    t = text.strip()
    if not t.startswith(("LnkSta:", "LnkCap:")) or not t[7:8].isspace():
        return False
    t = t.removesuffix(",")
    if t.endswith(("GT/s", "(downgraded)", "(ok)")):
        return True
    head, _, last = t.rpartition(" ")
    return head.endswith("Speed") and last.split() == [last]


def _cut_before(piece: str, text: str) -> bool:
    """Whether `piece` (one line as pasted) ends where a wrap at 72-80 columns would have broken it, `text` being
    the next line: the next line's first word did not fit after it."""
    length = len(piece)
    if length > WRAP_MAX_CHARS + 8 or length + 1 + WRAP_MAX_CHARS <= WRAP_MIN_COLUMNS:
        return False
    length = len(piece.rstrip())
    if not 0 < length <= WRAP_MAX_CHARS:
        return False
    if length + 1 + len(text) <= WRAP_MIN_COLUMNS:
        return False  # the whole next line would have fitted
    space = text.find(" ", 0, WRAP_MAX_CHARS)
    first_word = space if space >= 0 else min(len(text), WRAP_MAX_CHARS)
    return length + 1 + first_word > WRAP_MIN_COLUMNS


class _Joiner:
    """The line being built from a line and the continuations joined to it, kept as pieces and joined once, so a run
    of continuations costs their length, not the square of it."""

    __slots__ = ("no", "pieces", "chars", "whole")

    def __init__(self, line: PasteLine):
        self.no = line.no
        self.whole = line
        self.pieces = [line.text]
        self.chars = len(line.text)

    def add(self, text: str) -> bool:
        if self.chars + 1 + len(text) > MAX_LINE_CHARS:
            return False
        self.pieces.append(text)
        self.chars += 1 + len(text)
        return True

    @property
    def last(self) -> str:
        return self.pieces[-1]

    def text(self) -> str:
        return " ".join(self.pieces) if len(self.pieces) > 1 else self.pieces[0]

    def line(self) -> PasteLine:
        if len(self.pieces) == 1:
            return self.whole
        return PasteLine(self.no, self.text())


def _join_wrapped(lines: list[PasteLine]) -> list[PasteLine]:
    """Lines a mail client or forum wrapped, joined back (issue 40):
    - in `lspci -vv` output, a line at the left margin that is no lspci field, no device header and no other
      command's start, right after a line that was cut (see _cut_before): a device header continued on the next line
      ("... ASM1062 Serial ATA" / "Controller [1b21:0612] (rev 02)"), a capability cut before its last flags
      ("DevSta: ... AuxPwr-" / "TransPend-"). Property lines of lspci are indented, so a line at the margin inside a
      record is a wrapped tail; in a record pasted without indentation the field names tell the lines apart.
    - a LnkSta/LnkCap line wrapped before its "Width ..." or "(downgraded)" (indented or not).
    One pass; each line is looked at a bounded number of times."""
    out: list[PasteLine] = []
    cur: _Joiner | None = None
    in_lspci = False
    blanks = 0
    for line in lines:
        text = line.text
        if cur is not None:
            if text and not text[0].isspace() and in_lspci and _lspci_tail(cur.last, text) and cur.add(text.strip()):
                continue
            if "Lnk" in cur.pieces[0] and _lnk_tail(cur.text(), text) and cur.add(text.strip()):
                continue
            out.append(cur.line())
        cur = _Joiner(line)
        if not text.strip():
            blanks += 1
            in_lspci = in_lspci and blanks <= 2
            continue
        blanks = 0
        if text.startswith("$ "):
            in_lspci = False
        elif _LSPCI_HEADER.match(text, 0, MAX_LINE_CHARS):
            in_lspci = True
        elif in_lspci and not text[0].isspace() and _start_kind(text) is not None:
            in_lspci = False
    if cur is not None:
        out.append(cur.line())
    return out


_HEX = frozenset("0123456789abcdefABCDEF")
_STARTS_FIRST = frozenset("s=#H-+\\|[{NLlSf/T0123456789EeCc")


def _lspci_tail(prev: str, text: str) -> bool:
    """A line at the margin that continues the cut line above it in lspci output: no longer than a wrap leaves (a
    longer remainder would have been wrapped again), no field, no device header, no other command's start."""
    if len(text) > WRAP_MAX_CHARS or not _cut_before(prev, text) or text.startswith("$ "):
        return False
    if _LSPCI_FIELD.match(text, 0, 64) or (text[0] in _HEX and _LSPCI_HEADER.match(text, 0, MAX_LINE_CHARS)):
        return False
    # Every other command's first line (_STARTS) holds a colon or starts with one of these; a tail without either
    # needs no look at the eighteen patterns.
    return (":" not in text and text[0] not in _STARTS_FIRST) or _start_kind(text) is None


def _lnk_tail(prev: str, text: str) -> bool:
    """A LnkSta/LnkCap line's "Width ..." or "(downgraded)" that a mail client moved to the next line."""
    if _WRAP_TAIL.match(text, 0, MAX_LINE_CHARS) and "Width" not in prev and _wrappable(prev):
        return True
    return text.lstrip().startswith("(downgraded)") and "LnkSta" in prev and bool(_WIDTH_AT_END.search(prev.rstrip()))


# Which command's output starts on a line, judged by its content alone: the detectors in the order they are
# tried, as one pattern (one call per line, not eighteen), each alternative named by its kind.
_ANCHOR = "^\\s*"  # each detector's own start, shared in the one pattern as a possessive run
_STARTS = (
    ("smartctl", _SMARTCTL_HEADER),
    ("smartctl", _SMARTCTL_BANNER),
    ("dmidecode", _DMIDECODE),
    ("lspci", _LSPCI_HEADER),
    ("lspci_tree", _LSPCI_TREE),
    ("nvme_list", _NVME_LIST),
    ("nvme_id_ns", _NVME_ID_NS),
    ("nvme_id_ns", _NVME_LBAF),
    ("nvme_id_ctrl", _NVME_ID_CTRL),
    ("nvme_smart_log", _NVME_SMART_LOG),
    ("fio", _FIO_START),
    ("hdparm", _HDPARM_DEV),
    ("hdparm", _HDPARM_TIMING),
    ("dd", _DD_LINE),
    ("mmc_extcsd", _MMC_EXTCSD),
    ("mmc_sysfs", _MMC_SYSFS),
    ("json", _JSON_START),
)
_START = re.compile(
    r"^\s*+(?:" + "|".join(f"(?P<k{i}>{p.pattern.replace(_ANCHOR, '')})" for i, (_k, p) in enumerate(_STARTS)) + ")"
)
_START_KINDS = {f"k{i}": kind for i, (kind, _p) in enumerate(_STARTS)}


def _start_kind(text: str) -> str | None:
    """Which command's output starts on this line, judged by its content alone."""
    m = _START.match(text, 0, MAX_LINE_CHARS)
    return _START_KINDS[m.lastgroup or ""] if m else None


def _continues(kind: str, text: str) -> bool:
    """Whether a non-blank line still belongs to the section of this kind."""
    t = text[:MAX_LINE_CHARS]
    if kind in ("smartctl", "dmidecode", "mmc_extcsd", "mmc_sysfs"):
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
_MAX_BLANKS = {"smartctl": 3, "dmidecode": 2, "lspci": 2, "fio": 2, "hdparm": 2, "lspci_tree": 0, "dd": 1,
               "mmc_extcsd": 2}  # fmt: skip


def split_sections(lines: list[PasteLine]) -> Paste:
    """Split normalised lines into sections by content; lines no section claims are reported as skipped."""
    sections: list[Section] = []
    skipped: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    command: str | None = None
    ends: _JsonEnds | None = None  # made at the first JSON value: where each value ends, in one pass
    while i < n:
        text = lines[i].text
        if text.startswith("$ "):
            command = text[2:]
            i += 1
            continue
        kind = _start_kind(text) or (_hinted_kind(command) if text.strip() else None)
        if kind is None:
            if text.strip():
                _skip(skipped, lines[i].no)
            i += 1
            continue
        if kind == "json":
            ends = ends or _JsonEnds(lines, i)
            end = ends.end(i)
            if end is None:
                _skip(skipped, lines[i].no)
                i += 1
                continue
            body = _json_body(lines, i, end)
            sections.append(Section(_json_kind(body), body, command))
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


def _hinted_kind(command: str | None) -> str | None:
    """The kind a prompt's command says its output is, where the output alone does not: `cat` of a card's sysfs
    files prints bare values (issue 39)."""
    return "mmc_sysfs" if command and _CARD_FILES_COMMAND.match(command) else None


_CARD_FILES_COMMAND = re.compile(r"(?:sudo\s++)?" + _CARD_FILES)


def _skip(skipped: list[tuple[int, int]], no: int) -> None:
    if skipped and skipped[-1][1] >= no - 2:
        skipped[-1] = (skipped[-1][0], no)
    else:
        skipped.append((no, no))


# A JSON string, or one left open, which runs to its line's end (JSON strings hold no line break). Possessive
# runs and no alternative inside the repeat: one pass, even over ten million escapes (store/exportstream.py).
_JSON_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)')
_OPENS = re.compile(r"^\s*+[{\[]")  # as _JSON_START begins
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")
_STEP = {ord("{"): 1, ord("["): 1, ord("}"): -1, ord("]"): -1}


class _JsonEnds:
    """Where the JSON value each line opens (its first character a bracket) closes, for every line from the
    first JSON value on, found in one pass: the old splitter scanned from each opening line to the end of the paste
    when the value never closed, and 32,768 lines of "{" took 33 s.

    Brackets are matched as a stack of the lines still open, by depth: a value opened at depth d closes at the first
    bracket that brings the depth back to d. Strings are skipped (their brackets are text); a string never spans a
    line, as in JSON."""

    def __init__(self, lines: list[PasteLine], first: int):
        self.first = first
        self.ends = array("q", [-1]) * (len(lines) - first)
        open_lines: list[tuple[int, int]] = []  # (depth before its bracket, line index), deepest last
        depth = 0
        for idx in range(first, len(lines)):
            line = lines[idx]
            text = line.whole if isinstance(line, _LongLine) else line.text
            if not ("{" in text or "[" in text or "}" in text or "]" in text):
                continue
            brackets = _brackets(text)
            if not brackets:
                continue
            if _OPENS.match(text):
                open_lines.append((depth, idx))
                depth += 1
                brackets = brackets[1:]
            if not open_lines:
                depth = 0  # nothing open: where the depth stands does not matter
                continue
            if len(brackets) == 1:  # the common line of an indented document: one step, up or down
                net = lowest = _STEP[brackets[0]]
            elif brackets:
                net, lowest = _net(brackets), _lowest(brackets)
            else:
                continue
            while open_lines and open_lines[-1][0] >= depth + lowest:
                self.ends[open_lines.pop()[1] - first] = idx
            depth = depth + net if open_lines else 0

    def end(self, idx: int) -> int | None:
        """The index of the line where the value line `idx` opens closes; None if it never does."""
        end = self.ends[idx - self.first] if idx >= self.first else -1
        return end if end >= 0 else None


def _brackets(text: str) -> bytes:
    """The brackets of a line outside its strings, in order."""
    if '"' in text:
        text = _JSON_STRING.sub("", text)
    return text.encode("utf-8", "replace").translate(None, _NOT_BRACKETS)


def _net(brackets: bytes) -> int:
    return brackets.count(b"{") + brackets.count(b"[") - brackets.count(b"}") - brackets.count(b"]")


def _lowest(brackets: bytes) -> int:
    """The lowest the depth goes along these brackets, from 0 (accumulate runs in C: a megabyte line of
    brackets is one call, not a million turns of a Python loop)."""
    return min(accumulate(map(_STEP.__getitem__, brackets)))


def _json_body(lines: list[PasteLine], first: int, last: int) -> tuple[PasteLine, ...]:
    """A JSON value's lines whole (never cut), as at most two: all but its last line joined, then its last line.
    The value is decoded, never read line by line, and a line object each would outlive the splitting: a 60 MiB
    document of a million lines held 250 MB of them while it was decoded."""
    texts = [x.whole if isinstance(x, _LongLine) else x.text for x in lines[first : last + 1]]
    if len(texts) == 1:
        return (PasteLine(lines[first].no, texts[0]),)
    last_text = texts.pop()
    return PasteLine(lines[first].no, "\n".join(texts)), PasteLine(lines[last].no, last_text)


def _json_kind(body: tuple[PasteLine, ...]) -> str:
    """smartctl --json, nvme-cli -o json or fio --output-format=json, told apart by their keys (a key never spans
    the line break between the body's parts)."""
    head = "\n".join(x.text[:4096] for x in body)[:4096]

    def has(key: str) -> bool:
        return any(key in x.text for x in body)

    if '"json_format_version"' in head or '"smartctl"' in head:
        return "smartctl_json"
    if '"fio version"' in head:
        return "fio_json"
    if '"Devices"' in head:
        return "nvme_list_json"
    if has('"lbafs"'):
        return "nvme_id_ns_json"
    if '"critical_warning"' in head and has('"data_units_read"'):
        return "nvme_smart_log_json"
    return "json"


def read_paste(text: str) -> Paste:
    """Normalise a paste and split it into sections, with what the normaliser undid in `notes`."""
    lines, notes = normalise(text)
    paste = split_sections(lines)
    cut = _cut_outside_json(lines, paste.sections)
    if cut:
        notes.append(f"{cut:,} line(s) longer than {MAX_LINE_CHARS:,} characters cut to their first {MAX_LINE_CHARS:,}")
    return Paste(paste.sections, paste.skipped, tuple(notes))


def _cut_outside_json(lines: list[PasteLine], sections: tuple[Section, ...]) -> int:
    """How many lines a parser reads cut (a JSON value's lines are decoded whole): both in order, one pass."""
    ranges = iter([(s.first_line, s.last_line) for s in sections if s.kind.endswith("json")])
    first, last = next(ranges, (0, -1))
    cut = 0
    for x in lines:
        if not isinstance(x, _LongLine):
            continue
        while x.no > last and last >= 0:
            first, last = next(ranges, (0, -1))
        cut += not first <= x.no <= last
    return cut


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
