"""Pasted text: the sections a paste was split into, and what each parser read from them, with source lines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disksleuth.model.run import Health, PciFunction


@dataclass(frozen=True)
class PasteLine:
    no: int  # 1-based line number in the original paste, so a helper can point at it
    text: str  # after quote prefixes, prompts and CR were removed


@dataclass(frozen=True)
class Section:
    """One command's output found in a paste, recognised by its content."""

    kind: str  # lspci, lspci_tree, smartctl, smartctl_json, nvme_list, nvme_list_json, nvme_id_ns, ...
    lines: tuple[PasteLine, ...]
    command: str | None = None  # the command line pasted above it ("smartctl -x /dev/sda"), when there was one

    @property
    def first_line(self) -> int:
        return self.lines[0].no if self.lines else 0

    @property
    def last_line(self) -> int:
        return self.lines[-1].no if self.lines else 0

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


@dataclass(frozen=True)
class Paste:
    sections: tuple[Section, ...]
    skipped: tuple[tuple[int, int], ...] = ()  # line ranges (first, last) no parser recognised
    notes: tuple[str, ...] = ()  # what the normaliser undid: "e-mail quoting removed", "CRLF line ends"


@dataclass(frozen=True)
class PastedPci:
    """A PCI function read from `lspci -vv`, with the line of each fact."""

    fn: PciFunction
    source_lines: Mapping[str, int] = field(default_factory=dict)  # "header", "LnkCap", "LnkSta", "Bus" -> line
    # pciutils 3.8+ marks LnkSta "(downgraded)"/"(ok)" itself; None when this lspci printed no tag.
    lspci_speed_downgraded: bool | None = None
    lspci_width_downgraded: bool | None = None
    chain_known: bool = True  # False: the bridge above it was not in the paste (lspci -s), its path is partial


@dataclass(frozen=True)
class PastedHealth:
    """A drive's health read from smartctl text, with the line of each fact."""

    health: Health
    source_lines: Mapping[str, int] = field(default_factory=dict)  # Health field or "attribute 5" -> line


@dataclass(frozen=True)
class PastedFigure:
    """A figure read from pasted benchmark output (fio, hdparm, dd), with the line it was read from."""

    tool: str  # "fio", "fio --output-format=json", "hdparm -t", "hdparm -T", "dd"
    # seq_read_mbps, seq_write_mbps, rand_read_iops, rand_write_iops: what verdicts judge. Anything else is
    # shown and not judged: cached_read_mbps (hdparm -T: memory), unknown_mbps (a dd whose direction is not
    # known), other_mbps (a random test with blocks other than 4 KiB).
    measure: str
    value: float
    line: int
    read_as: str  # how the number was read, shown back: "1,701.12 MiB/s (hdparm's MB) = 1,784 MB/s"
    device: str | None = None  # the device the output names ("sda" from "/dev/sda:"), when it names one
    note: str | None = None  # why it is not judged, or what was assumed
