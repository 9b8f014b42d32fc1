"""Pasted `lspci -vv` records that lost their indentation (found while reading real pastes for the corpus, issue 21).

A message to linux-rdma (2022-02-13, "sysfs: cannot create duplicate filename", `lspci -s 04:00.0 -vv` of a QLogic
HCA) has every line of the record flush left, as a mail client sent it. The archive names no licence, so the text is
not in tests/data/paste: the lines below are minimal lines of the same shape (an NVMe endpoint instead of the HCA),
marked as such. Before the fix the section ended at the header, the NVMe was read as an integrated function with no
link, and its x2-of-x4 link was never judged.
"""

from __future__ import annotations

from disksleuth.analysis.pci import pasted_link_status
from disksleuth.model.paste import PastedPci
from disksleuth.probe.lspci_text import parse_lspci_vv
from disksleuth.probe.paste_text import read_paste

# Same shape as the linux-rdma paste: prompt line, header, every property and flag line flush left, then a blank
# line and prose. (Constructed lines, not a capture.)
FLAT = """$ sudo lspci -s 01:00.0 -vv
01:00.0 Non-Volatile memory controller: Example NVMe SSD Controller (rev 01) (prog-if 02 [NVM Express])
Subsystem: Example NVMe SSD Controller
Control: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr-
Stepping- SERR- FastB2B- DisINTx+
Expansion ROM at fc000000 [disabled] [size=128K]
Capabilities: [70] Express (v2) Endpoint, MSI 00
LnkCap: Port #0, Speed 8GT/s, Width x4, ASPM L1, Exit Latency L1 <64us
ClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+
LnkSta: Speed 8GT/s (ok), Width x2 (downgraded)
TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-
Kernel driver in use: nvme

Relevant /var/log/messages section:
Feb 13 09:43:29 localhost kernel: nvme nvme0: pci function 0000:01:00.0
"""


def _lspci(text: str) -> list[PastedPci]:
    out: list[PastedPci] = []
    for s in read_paste(text).sections:
        if s.kind == "lspci":
            out.extend(parse_lspci_vv(s.text, s.first_line))
    return out


def test_flush_left_record_keeps_its_link_lines() -> None:
    (nvme,) = _lspci(FLAT)
    assert nvme.fn.role == "endpoint"
    assert (nvme.fn.speed_gtps, nvme.fn.width, nvme.fn.max_width) == (8.0, 2, 4)
    assert nvme.source_lines["LnkSta"] == 10  # the line number in the paste
    assert pasted_link_status(nvme.fn, nvme.chain_known).downgraded


def test_flush_left_record_ends_at_the_blank_line() -> None:
    paste = read_paste(FLAT)
    (section,) = [s for s in paste.sections if s.kind == "lspci"]
    assert section.text.splitlines()[-1] == "Kernel driver in use: nvme"
    assert paste.skipped == ((14, 15),)  # the prose after the blank line is not lspci


def test_flush_left_records_one_after_another() -> None:
    second = FLAT.split("\n\n")[0].replace("01:00.0", "02:00.0").replace("$ sudo lspci -s 02:00.0 -vv\n", "")
    fns = _lspci(FLAT.split("\n\n")[0] + "\n\n" + second + "\n")
    assert [p.fn.bdf for p in fns] == ["0000:01:00.0", "0000:02:00.0"]
    assert all(p.fn.width == 2 for p in fns)


def test_indented_record_still_ends_at_prose() -> None:
    """Only a record whose first property line is flush left is read so: an indented paste followed directly by
    prose ends where it did."""
    text = "01:00.0 SATA controller: Example AHCI\n\tLnkSta:\tSpeed 5GT/s, Width x1\nThen I rebooted: it came back.\n"
    (section,) = [s for s in read_paste(text).sections if s.kind == "lspci"]
    assert section.text.splitlines()[-1] == "\tLnkSta:\tSpeed 5GT/s, Width x1"
