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
        if self.kind.endswith("json") or len(self.lines) < 2 or self.last_line - self.first_line < len(self.lines):
            return "\n".join(line.text for line in self.lines)
        # A line the normaliser joined from wrapped pieces stands for several: an empty line for each piece after the
        # first keeps the numbers of the lines below right for a parser that counts from first_line.
        parts: list[str] = []
        prev = self.lines[0].no - 1
        for line in self.lines:
            if line.no > prev + 1:
                parts.extend([""] * (line.no - prev - 1))
            parts.append(line.text)
            prev = line.no
        return "\n".join(parts)


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
    chain_known: bool = True  # False: a bridge above it was not in the paste (lspci -s), its path is partial
    # The bridge an `lspci -t` tree draws above the highest pasted function of its chain, when that bridge's own
    # lspci -vv is not in the paste (so the link into it is unknown).
    bridge_above: str | None = None
    # The "Subsystem:" line's names: for a drive on its own card or M.2 module, its model ("Samsung Electronics Co Ltd
    # SSD 970 EVO Plus 1TB"), where the header names only the controller chip.
    subsystem_name: str | None = None


@dataclass(frozen=True)
class PastedHealth:
    """A drive's health read from smartctl text, with the line of each fact."""

    health: Health
    source_lines: Mapping[str, int] = field(default_factory=dict)  # Health field or "attribute 5" -> line


@dataclass(frozen=True)
class PastedNvmeNamespace:
    """One row of `nvme list` (nvme-cli 0.x to 2.x). `serial` is the drive's serial number as printed: callers hash
    it before it is shown or stored, and never log it."""

    node: str  # "/dev/nvme0n1" (the block device; nvme-cli 2.x also prints the generic "/dev/ng0n1" beside it)
    serial: str | None
    model: str | None
    namespace: int | None  # NSID: "1" in nvme-cli 1.x, "0x1" in 2.x
    usage_bytes: int | None  # nvme-cli prints SI units to 3 significant digits ("1.92  TB"): approximate
    capacity_bytes: int | None
    sector_bytes: int | None  # the LBA format in use ("512   B +  0 B", "4 KiB + 16 B")
    metadata_bytes: int | None
    firmware: str | None
    generic: str | None = None  # "/dev/ng0n1" (nvme-cli 2.x "Generic" column)
    source_line: int = 0  # the row's line in the paste


@dataclass(frozen=True)
class PastedNvmeController:
    """What `nvme id-ctrl` says about a controller. `serial` as for PastedNvmeNamespace: hash it, never log it."""

    model: str | None
    serial: str | None
    firmware: str | None
    total_capacity_bytes: int | None  # tnvmcap; 0 (not reported) is None
    source_lines: Mapping[str, int] = field(default_factory=dict)  # "model", "serial", "firmware" -> line


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
