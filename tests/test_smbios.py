"""The SMBIOS table parser and the dmidecode text parser, on real tables and real dmidecode output
(tests/data/smbios/SOURCES.md), on damaged copies of them, and on anything hypothesis makes."""

from __future__ import annotations

import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from smbios_tables import dmidecode_text, dump_bin, tables

from disksleuth.errors import ParseError
from disksleuth.probe.dmidecode_text import parse_dmidecode_slots
from disksleuth.probe.smbios import parse_dump_bin, parse_entry_point, parse_smbios, walk_structures

DATA = Path(__file__).parent / "data" / "smbios"
FAST = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)

TABLES = tables()
GRACE = "csit-nvidia_grc_hw_bios_cfg.md"


def _key(s):  # type: ignore[no-untyped-def]
    return (
        s.designation,
        s.bus_address,
        s.width_lanes,
        s.type_name,
        s.current_usage,
        s.generation,
        s.physical_width_lanes,
        s.base_width_lanes,
    )


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_slot_of_every_table_reads_as_dmidecode_reads_it(name):
    """Designation, bus address, widths, type, usage and generation of every slot, from the bytes and from
    dmidecode 3.4's decoding of the same bytes, agree; and the table parses without a note."""
    built = TABLES[name]
    table = parse_smbios(built.table, built.entry)
    text = parse_dmidecode_slots(dmidecode_text(name))
    assert table.notes == ()
    assert len(table.slots) == dmidecode_text(name).count("DMI type 9,") > 0
    assert [_key(s) for s in table.slots] == [_key(s) for s in text.slots]
    assert [(o.designation, o.bus_address) for o in table.onboard] == [
        (o.designation, o.bus_address) for o in text.onboard
    ]


@pytest.mark.parametrize("name", sorted(n for n, b in TABLES.items() if b.from_text))
def test_encoded_tables_say_what_the_real_text_says(name):
    """The structures encoded from real dmidecode text decode (ours and dmidecode's) to that text."""
    built = TABLES[name]
    source = parse_dmidecode_slots((DATA / str(built.from_text)).read_text())
    table = parse_smbios(built.table, built.entry)
    assert [_key(s) for s in table.slots] == [_key(s) for s in source.slots]
    assert [(o.designation, o.bus_address) for o in table.onboard] == [
        (o.designation, o.bus_address) for o in source.onboard if o.bus_address
    ]


@pytest.mark.skipif(not shutil.which("dmidecode"), reason="dmidecode is not installed")
@pytest.mark.parametrize("name", sorted(TABLES))
def test_committed_dmidecode_output_is_of_these_bytes(name, tmp_path):
    """The committed dmidecode text is dmidecode's reading of the bytes the converter builds today."""
    dump = tmp_path / f"{name}.dump-bin"
    dump.write_bytes(dump_bin(TABLES[name].table, TABLES[name].entry))
    out = subprocess.run(["dmidecode", "--from-dump", str(dump)], capture_output=True, text=True, check=True)
    got = out.stdout.replace(str(dump), dump.name)
    if "dmidecode 3.4" in got.splitlines()[0]:
        assert got == dmidecode_text(name)
    else:  # another dmidecode words some fields its own way; the slots still read the same
        assert [_key(s) for s in parse_dmidecode_slots(got).slots] == [
            _key(s) for s in parse_dmidecode_slots(dmidecode_text(name)).slots
        ]


def test_slot_addressed_by_its_root_port_real_bytes():
    table = parse_smbios(TABLES["smbios-lib-real"].table, TABLES["smbios-lib-real"].entry)
    assert table.entry is not None and table.entry.anchor == "_SM3_" and table.entry.version == (3, 3, 0)
    (j6b2,) = table.slots
    assert (j6b2.designation, j6b2.bus_address, j6b2.width_lanes, j6b2.type_name) == (
        "J6B2",
        "0000:00:01.0",
        16,
        "PCI Express",
    )
    assert [(o.designation, o.type_name, o.bus_address) for o in table.onboard] == [
        ("i219", "Ethernet", "0000:00:1f.6")
    ]


def test_entry_point_maximum_larger_than_the_table_is_no_note():
    """3.x's maximum is an upper bound: the real Surface Laptop 3 entry point says 1,155 bytes."""
    built = TABLES["smbios-lib-real"]
    entry = parse_entry_point(built.entry)
    assert entry.table_bytes == 0x483 > len(built.table)
    assert parse_smbios(built.table, built.entry).notes == ()


def test_32_bit_entry_point():
    built = TABLES["smbios-lib-real-32bit"]
    table = parse_smbios(built.table, built.entry)
    assert table.entry is not None and table.entry.anchor == "_SM_" and table.entry.version_text == "2.8"
    assert table.entry.table_bytes == len(built.table) and table.entry.structure_count == 5
    assert [s.designation for s in table.slots] == ["J6B2"]
    assert parse_dump_bin(dump_bin(built.table, built.entry)).slots == table.slots


def test_slots_addressed_by_the_device_and_empty_slots_at_bus_ff():
    table = parse_smbios(TABLES["csit-sm_zn2-encoded"].table, TABLES["csit-sm_zn2-encoded"].entry)
    assert [s.bus_address for s in table.slots] == [
        "0000:ff:00.0",
        "0000:ff:00.0",
        "0000:41:00.0",
        "0000:81:00.0",
        "0000:01:00.0",
    ]
    assert table.slots[0].current_usage == "Available" and table.slots[4].current_usage == "In Use"


def test_3_4_fields_from_the_grace_table():
    table = parse_smbios(TABLES["csit-grace-encoded"].table, TABLES["csit-grace-encoded"].entry)
    s1, _, m2, _, _ = table.slots
    assert (s1.generation, s1.width_lanes, s1.physical_width_lanes, s1.height, s1.base_width_lanes) == (
        5,
        16,
        16,
        "Full height",
        16,
    )
    assert (m2.type_name, m2.width_lanes, m2.base_width_lanes, m2.bus_address) == ("M.2 Socket 3", 4, 4, "0004:01:00.0")


# --- dmidecode text ---------------------------------------------------------------------------


def test_text_of_dmidecode_3_5_with_3_4_fields_and_spaces():
    got = parse_dmidecode_slots((DATA / GRACE).read_text())
    assert got.smbios_version == "3.6.0" and got.dmidecode_version == "3.5"
    assert [s.designation for s in got.slots] == [
        "PCIe Slot 1",
        "PCIe Slot 2",
        "M.2 NVMe Drive Slot 1",
        "M.2 NVMe Drive Slot 2",
        "PCIe Slot 3",
    ]
    s1, _, m2, _, _ = got.slots
    assert (s1.generation, s1.width_lanes, s1.physical_width_lanes, s1.height, s1.base_width_lanes) == (
        5,
        16,
        16,
        "Full height",
        16,
    )
    assert (m2.type_name, m2.width_lanes, m2.bus_address) == ("M.2 Socket 3", 4, "0004:01:00.0")
    assert got.onboard[0].bus_address == "0008:02:00.0"


def test_text_pasted_with_prompt_indentation():
    got = parse_dmidecode_slots((DATA / "csit-sm_zn2.dmidecode-t-slot.txt").read_text())
    assert [(s.designation, s.bus_address) for s in got.slots][:3] == [
        ("M.2-HC1 CPU PCI-E 4.0 X4/X2", "0000:ff:00.0"),
        ("M.2-HC2 CPU PCI-E 4.0 X2", "0000:ff:00.0"),
        ("RSC-W-66G4 SLOT1 PCI-E 4.0 X16", "0000:41:00.0"),
    ]
    assert got.slots[0].generation == 3  # the firmware's word; the board says 4.0


def test_text_riser_slots():
    riser = parse_dmidecode_slots((DATA / "dmiparser-dmidecode_9.txt").read_text())
    assert len(riser.slots) == 8
    assert riser.slots[6].designation == "J6B2 - Riser 3, slot 1" and riser.slots[6].width_lanes == 4
    assert riser.slots[4].bus_address == "0000:80:02.2" and riser.slots[4].line == 57


def test_newer_dmidecode_layout_with_its_own_width_line():
    text = (
        "Handle 0x0009, DMI type 9, 28 bytes\nSystem Slot Information\n\tDesignation: M.2_2\n"
        "\tType: M.2 Socket 3\n\tData Bus Width: 4x or x4\n\tCurrent Usage: In Use\n\tLength: Other\n"
        "\tCharacteristics: None\n\tBus Address: 0000:04:00.0\n\tData Bus Width (Base): 10\n\tPeer Devices: 1\n"
        "\tPeer Device 1: 0000:04:00.1 (Width 4)\n\tPCI Express Generation: 4\n\tSlot Physical Width: 4x or x4\n"
        "\tPitch: 12.50 mm\n\tHeight: Not applicable\n"
    )
    (slot,) = parse_dmidecode_slots(text).slots
    assert (slot.designation, slot.width_lanes, slot.generation, slot.physical_width_lanes) == ("M.2_2", 4, 4, 4)
    assert slot.peers[0].bus_address == "0000:04:00.1" and slot.pitch_mm == 12.5 and slot.base_width_lanes == 4


@pytest.mark.parametrize("text", ["", "hello", "Handle zero", "\x00" * 50, "SMBIOS 3.0 present.\n"])
def test_text_without_records_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_dmidecode_slots(text)


# --- damaged tables ---------------------------------------------------------------------------


def _slot_offset() -> tuple[bytes, bytes, int]:
    """The real table, its real entry point, and where its slot (J6B2, handle 0x1C) starts."""
    built = TABLES["smbios-lib-real"]
    (s,) = [s for s in walk_structures(built.table)[0] if s.type == 9 and s.handle == 0x1C]
    return built.table, built.entry, s.offset


def test_truncated_inside_a_slot_keeps_what_came_before_and_says_so():
    table, entry, at = _slot_offset()
    for cut in range(at, at + 20):
        got = parse_smbios(table[:cut], entry)
        assert got.slots == ()
        assert got.notes and any("cut short" in n or "too few" in n for n in got.notes), got.notes


def test_truncated_after_the_slot_keeps_it():
    table, entry, at = _slot_offset()
    end = table.index(b"\0\0", at + 17) + 2
    got = parse_smbios(table[: end + 10], entry)
    assert [s.designation for s in got.slots] == ["J6B2"]
    assert any("cut short" in n for n in got.notes)


def test_structure_length_below_its_header_stops_the_walk():
    table, entry, at = _slot_offset()
    bad = bytearray(table)
    bad[at + 1] = 2
    got = parse_smbios(bytes(bad), entry)
    assert got.slots == () and any("says it is 2 bytes long" in n for n in got.notes)


def test_string_index_out_of_range_reads_as_none_with_a_note():
    table, entry, at = _slot_offset()
    bad = bytearray(table)
    bad[at + 4] = 9
    got = parse_smbios(bytes(bad), entry)
    assert got.slots[0].designation is None and got.slots[0].bus_address == "0000:00:01.0"
    assert any("string 9 asked for, 1 present" in n for n in got.notes)


def test_table_larger_than_the_entry_point_says():
    built = TABLES["csit-sm_zn2-encoded"]  # an entry point stating exactly its table's size
    got = parse_smbios(built.table + b"\x09\x11\x00\x99" + b"\0" * 40, built.entry)
    assert len(got.slots) == 5
    assert any("more than the entry point's" in n for n in got.notes)


def test_32_bit_table_shorter_than_its_entry_point_says():
    built = TABLES["smbios-lib-real-32bit"]
    got = parse_smbios(built.table[:-100], built.entry)
    assert any("cut short" in n for n in got.notes)


@pytest.mark.parametrize("entry", [b"", b"_SM3_", b"_SM_\x00\x1f", b"_DMI_", b"\x00" * 31, b"_sm3_" + b"\0" * 30])
def test_no_entry_point_is_a_parse_error(entry):
    with pytest.raises(ParseError):
        parse_entry_point(entry)


def test_bad_checksum_is_a_note_not_an_error():
    bad = bytearray(TABLES["smbios-lib-real"].entry)
    bad[5] ^= 0xFF
    assert parse_entry_point(bytes(bad)).notes == ("_SM3_ entry point checksum is wrong",)


def test_dump_bin_whose_table_address_is_past_the_file():
    raw = bytearray(dump_bin(TABLES["csit-sm_zn2-encoded"].table, TABLES["csit-sm_zn2-encoded"].entry))
    struct.pack_into("<Q", raw, 0x10, 1 << 40)
    with pytest.raises(ParseError):
        parse_dump_bin(bytes(raw))


def test_linear_time_on_a_megabyte_of_tiny_structures_and_of_unending_strings():
    tiny = b"\x80\x04\x00\x00\x00\x00" * (1 << 20 // 6)
    unending = b"\x09\x11\x00\x00" + b"\x01" * (1 << 20)
    for table in (tiny, unending):
        start = time.monotonic()
        got = parse_smbios(table)
        assert time.monotonic() - start < 3.0
        assert got.slots == ()


# --- properties -------------------------------------------------------------------------------

REAL_TABLES = [b.table for b in TABLES.values()]


@st.composite
def mutated_tables(draw):  # type: ignore[no-untyped-def]
    table = bytearray(draw(st.sampled_from(REAL_TABLES)))
    for _ in range(draw(st.integers(0, 8))):
        at = draw(st.integers(0, len(table) - 1))
        table[at] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(table)))
    return bytes(table[:cut])


@FAST
@given(st.one_of(st.binary(max_size=600), mutated_tables()), st.one_of(st.none(), st.binary(max_size=40)))
def test_any_bytes_give_a_table_or_a_parse_error(table, entry):
    try:
        got = parse_smbios(table, entry)
    except ParseError:
        assert entry is not None
        return
    for slot in got.slots:
        assert slot.bus_address is None or len(slot.bus_address) == 12


@st.composite
def slot_structures(draw):  # type: ignore[no-untyped-def]
    """A 3.4/3.5 type 9 structure with peers, as DSP0134 7.10 lays it out."""
    peers = draw(
        st.lists(
            st.tuples(st.integers(0, 0xFFFE), st.integers(0, 254), st.integers(0, 255), st.integers(1, 32)), max_size=4
        )
    )
    gen = draw(st.integers(1, 6))
    physical = draw(st.sampled_from([0x08, 0x0A, 0x0B, 0x0D]))
    pitch = draw(st.integers(0, 5000))
    height = draw(st.integers(0, 4))
    body = struct.pack(
        "<BBHBBBBBHBBHBBBB", 9, 0, 0x0909, 1, 0xA5, 0x0A, 0x04, 0x04, 7, 0x04, 0x01, 0, 0x3B, 0x00, 0x0A, len(peers)
    )
    for seg, bus, devfn, width in peers:
        body += struct.pack("<HBBB", seg, bus, devfn, width)
    body += struct.pack("<BBHB", gen, physical, pitch, height)
    body = body[:1] + bytes([len(body)]) + body[2:]
    return body + b"M.2_2\0\0" + b"\x7f\x04\xff\xfe\0\0", peers, gen, physical, pitch, height


@FAST
@given(slot_structures())
def test_3_4_fields_and_peer_groups(built):
    table, peers, gen, physical, pitch, height = built
    got = parse_smbios(table)
    assert got.notes == ()
    (slot,) = got.slots
    assert slot.designation == "M.2_2" and slot.bus_address == "0000:3b:00.0" and slot.width_lanes == 4
    assert slot.generation == gen  # 0xA5 ("PCI Express") states none; the 3.4 slot information does
    assert [p.bus_address for p in slot.peers] == [f"{s:04x}:{b:02x}:{d >> 3:02x}.{d & 7:x}" for s, b, d, _ in peers]
    assert slot.physical_width_lanes == {0x08: 1, 0x0A: 4, 0x0B: 8, 0x0D: 16}[physical]
    assert slot.pitch_mm == (pitch / 100 if pitch else None)
    assert slot.height == ["Not applicable", "Other", "Unknown", "Full height", "Low-profile"][height]


@FAST
@given(
    st.one_of(
        st.text(max_size=400),
        st.sampled_from([(DATA / "dmiparser-dmidecode_9.txt").read_text()]).flatmap(
            lambda t: st.integers(0, len(t)).map(lambda n: t[:n])
        ),
    )
)
def test_any_text_gives_slots_or_a_parse_error(text):
    try:
        got = parse_dmidecode_slots(text)
    except ParseError:
        return
    assert all(s.line is not None for s in got.slots)
