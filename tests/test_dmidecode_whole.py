"""Whole real `dmidecode` outputs (every record type, not only -t 9): three machines from netbox-agent's test
fixtures (tests/data/smbios/SOURCES.md). Every slot's designation and bus address, and every onboard device,
as the text states them (read off the text by hand); the paste reader takes the whole output as one dmidecode
section with the same slots."""

from __future__ import annotations

from pathlib import Path

import pytest

from disksleuth.probe.dmidecode_text import parse_dmidecode_slots
from disksleuth.probe.paste_text import read_paste
from disksleuth.run.paste import HANDLERS

DATA = Path(__file__).parent / "data" / "smbios"

# file -> (SMBIOS version line, [(handle, designation, type, width, usage, ID, bus address)], [onboard])
MACHINES = {
    # Quanta QuantaMicro X10E-9N: two mezzanine slots, one on the CPU's port 00:01.0, one on PCH port 00:1d.0;
    # "x12 Proprietary", and no ID line.
    "netbox-agent-QCT_X10E-9N.txt": (
        "3.0",
        [
            (0x004C, "Mezz Slot(PCIex8 x4)", "Proprietary", 12, "In Use", None, "0000:00:01.0"),
            (0x004D, "OCP Mezz Slot(PCIex4)", "Proprietary", 4, "Available", None, "0000:00:1d.0"),
        ],
        [
            ("Intel(R) C236 chipset SATA Controller", "SATA Controller", "0000:00:17.0"),
            ("onboard VGA", "Video", "0000:03:00.0"),
        ],
    ),
    # Supermicro SYS-5039MS-H12TRF (X11SSE-F): one slot addressed by the device in it.
    "netbox-agent-SYS-5039MS-H12TRF-OS012.txt": (
        "3.0",
        [(0x0004, "CPU MICRO-LP PCI-E 3.0 X8", "PCI Express 3 x8", 8, "In Use", 1, "0000:01:00.0")],
        [("ASPEED Video AST2400", "Video", "0000:04:00.0")],
    ),
    # Online Labs (Atom C2750, Avoton) SMBIOS 2.8: two slots at root ports, two behind a bridge on bus 04.
    "netbox-agent-unknown.txt": (
        "2.8",
        [
            (0x000D, "PCI_E_1", "PCI Express x8", 8, "Available", 1, "0000:00:01.0"),
            (0x000E, "PCI_E_2", "PCI Express x4", 4, "Available", 2, "0000:00:02.0"),
            (0x000F, "PCI_E_3", "PCI Express x4", 4, "Available", 3, "0000:04:08.0"),
            (0x0010, "PCI_E_4", "PCI Express x16", 16, "Available", 4, "0000:04:09.0"),
        ],
        [],
    ),
}


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_slot_of_a_whole_dmidecode_output(name):
    version, slots, onboard = MACHINES[name]
    table = parse_dmidecode_slots((DATA / name).read_text())
    assert table.smbios_version == version
    got = [
        (s.handle, s.designation, s.type_name, s.width_lanes, s.current_usage, s.slot_id, s.bus_address)
        for s in table.slots
    ]
    assert got == slots
    assert [(d.designation, d.type_name, d.bus_address) for d in table.onboard] == onboard
    assert not table.notes


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_paste_reads_the_whole_output_as_one_dmidecode_section(name):
    paste = read_paste((DATA / name).read_text())
    sections = [s for s in paste.sections if s.kind == "dmidecode"]
    assert len(sections) == 1 and HANDLERS["dmidecode"] is not None
    table = parse_dmidecode_slots(sections[0].text)
    assert [(s.designation, s.bus_address) for s in table.slots] == [(s[1], s[6]) for s in MACHINES[name][1]]
