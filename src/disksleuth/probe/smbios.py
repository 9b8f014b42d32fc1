"""The raw SMBIOS table (DMTF DSP0134, 2.x and 3.x), as the kernel exports it in
/sys/firmware/dmi/tables/{smbios_entry_point,DMI} or as `dmidecode --dump-bin` writes it: pure parsers.

Only what a storage tool needs: System Slots (type 9), On Board Devices (type 10) and Onboard Devices
Extended Information (type 41). Firmware tables are often wrong or cut short, so the walk never trusts
a length: every read is bounds-checked, a structure shorter than its header or running past the end
stops the walk with a note, a string index past the string set reads as None with a note. The walk
moves forward on every structure, so it ends in time linear in the table's size.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from disksleuth.errors import ParseError

# DSP0134 5.2.1 (32-bit entry point, "_SM_", 0x1F bytes; its intermediate "_DMI_" anchor at 0x10) and
# 5.2.2 (64-bit entry point, "_SM3_", 0x18 bytes). A legacy DMI 2.0 entry point is "_DMI_" alone (0x0F).
_SM2_LEN = 0x1F
_SM3_LEN = 0x18
_DMI_LEN = 0x0F
# The 32-bit entry point's table length is a WORD and the 64-bit one's maximum a DWORD; no real table
# comes near 1 MiB (the largest servers' are ~100 KiB), and a reader stops there whatever it says.
MAX_TABLE_BYTES = 1 << 20
# Type 127 is End-of-Table (7.45).
_END_OF_TABLE = 127

# 7.10.1 Slot Type. Indexes are the codes; the words are dmidecode's, so text and table read alike.
_SLOT_TYPES_LOW = (
    "Other",
    "Unknown",
    "ISA",
    "MCA",
    "EISA",
    "PCI",
    "PC Card (PCMCIA)",
    "VLB",
    "Proprietary",
    "Processor Card",
    "Proprietary Memory Card",
    "I/O Riser Card",
    "NuBus",
    "PCI-66",
    "AGP",
    "AGP 2x",
    "AGP 4x",
    "PCI-X",
    "AGP 8x",
    "M.2 Socket 1-DP",
    "M.2 Socket 1-SD",
    "M.2 Socket 2",
    "M.2 Socket 3",
    "MXM Type I",
    "MXM Type II",
    "MXM Type III",
    "MXM Type III-HE",
    "MXM Type IV",
    "MXM 3.0 Type A",
    "MXM 3.0 Type B",
    "PCI Express 2 SFF-8639 (U.2)",
    "PCI Express 3 SFF-8639 (U.2)",
    "PCI Express Mini 52-pin with bottom-side keep-outs",
    "PCI Express Mini 52-pin without bottom-side keep-outs",
    "PCI Express Mini 76-pin",
    "PCI Express 4 SFF-8639 (U.2)",
    "PCI Express 5 SFF-8639 (U.2)",
    "OCP NIC 3.0 Small Form Factor (SFF)",
    "OCP NIC 3.0 Large Form Factor (LFF)",
    "OCP NIC Prior to 3.0",
)  # 0x01..0x28
_SLOT_TYPES_HIGH = (
    "PC-98/C20",
    "PC-98/C24",
    "PC-98/E",
    "PC-98/Local Bus",
    "PC-98/Card",
    "PCI Express",
    "PCI Express x1",
    "PCI Express x2",
    "PCI Express x4",
    "PCI Express x8",
    "PCI Express x16",
    "PCI Express 2",
    "PCI Express 2 x1",
    "PCI Express 2 x2",
    "PCI Express 2 x4",
    "PCI Express 2 x8",
    "PCI Express 2 x16",
    "PCI Express 3",
    "PCI Express 3 x1",
    "PCI Express 3 x2",
    "PCI Express 3 x4",
    "PCI Express 3 x8",
    "PCI Express 3 x16",
    None,
    "PCI Express 4",
    "PCI Express 4 x1",
    "PCI Express 4 x2",
    "PCI Express 4 x4",
    "PCI Express 4 x8",
    "PCI Express 4 x16",
    "PCI Express 5",
    "PCI Express 5 x1",
    "PCI Express 5 x2",
    "PCI Express 5 x4",
    "PCI Express 5 x8",
    "PCI Express 5 x16",
    "PCI Express 6+",
    "EDSFF E1",
    "EDSFF E3",
)  # 0xA0..0xC6
# PCI Express generation a slot type code states (7.10.1): 0xA5-0xAA say none, U.2 codes say theirs.
_SLOT_TYPE_GENERATION = {
    0x1F: 2,
    0x20: 3,
    0x24: 4,
    0x25: 5,
    **{c: 2 for c in range(0xAB, 0xB1)},
    **{c: 3 for c in range(0xB1, 0xB7)},
    **{c: 4 for c in range(0xB8, 0xBE)},
    **{c: 5 for c in range(0xBE, 0xC4)},
    0xC4: 6,
}
# Codes whose slot information byte (3.4) is the PCI Express generation (7.10.9).
_PCIE_CODES = frozenset([*range(0x1F, 0x24), *range(0xA5, 0xB7), *range(0xB8, 0xC5)])
# 7.10.2 Slot Data Bus Width: code -> lanes (0x08 = x1 ... 0x0E = x32); 0x03-0x07 are parallel bus bits.
_WIDTH_LANES = {0x08: 1, 0x09: 2, 0x0A: 4, 0x0B: 8, 0x0C: 12, 0x0D: 16, 0x0E: 32}
_WIDTH_WORDS = {
    0x01: "Other",
    0x02: "Unknown",
    0x03: "8 bit",
    0x04: "16 bit",
    0x05: "32 bit",
    0x06: "64 bit",
    0x07: "128 bit",
    **{c: f"x{n}" for c, n in _WIDTH_LANES.items()},
}
_USAGE = {0x01: "Other", 0x02: "Unknown", 0x03: "Available", 0x04: "In Use", 0x05: "Unavailable"}  # 7.10.3
_LENGTH = {
    0x01: "Other",
    0x02: "Unknown",
    0x03: "Short",
    0x04: "Long",
    0x05: '2.5" drive form factor',
    0x06: '3.5" drive form factor',
}  # 7.10.4
_HEIGHT = {0x00: "Not applicable", 0x01: "Other", 0x02: "Unknown", 0x03: "Full height", 0x04: "Low-profile"}
# 7.11.1 / 7.42.2 device types (bit 7 is "enabled").
_ONBOARD_TYPES = (
    "Other",
    "Unknown",
    "Video",
    "SCSI Controller",
    "Ethernet",
    "Token Ring",
    "Sound",
    "PATA Controller",
    "SATA Controller",
    "SAS Controller",
    "Wireless LAN",
    "Bluetooth",
    "WWAN",
    "eMMC",
    "NVMe Controller",
    "UFS Controller",
)


def slot_type_name(code: int) -> str | None:
    if 0x01 <= code <= 0x28:
        return _SLOT_TYPES_LOW[code - 1]
    if code == 0x30:
        return "CXL Flexbus 1.0"
    if 0xA0 <= code <= 0xC6:
        return _SLOT_TYPES_HIGH[code - 0xA0]
    return None


def onboard_type_name(code: int) -> str | None:
    code &= 0x7F
    return _ONBOARD_TYPES[code - 1] if 1 <= code <= len(_ONBOARD_TYPES) else None


def bdf(segment: int, bus: int, devfn: int) -> str | None:
    """'0000:03:00.0', or None where the firmware says 'no address' (7.10.8: all FFh)."""
    if segment == 0xFFFF and bus == 0xFF and devfn == 0xFF:
        return None
    return f"{segment:04x}:{bus:02x}:{devfn >> 3:02x}.{devfn & 7:x}"


@dataclass(frozen=True)
class EntryPoint:
    anchor: str  # "_SM_", "_SM3_" or "_DMI_"
    version: tuple[int, int, int]  # (major, minor, docrev); docrev 0 where the entry point has none
    table_bytes: int  # the table's length (2.x) or maximum size (3.x)
    table_address: int
    structure_count: int | None  # 2.x only
    notes: tuple[str, ...] = ()

    @property
    def version_text(self) -> str:
        major, minor, rev = self.version
        return f"{major}.{minor}.{rev}" if rev else f"{major}.{minor}"


@dataclass(frozen=True)
class Structure:
    type: int
    handle: int
    offset: int  # of its header in the table
    data: bytes  # the formatted area, header included
    strings: tuple[str, ...]  # 1-based in the specification; strings[0] is string 1

    def byte(self, at: int) -> int | None:
        return self.data[at] if at < len(self.data) else None

    def word(self, at: int) -> int | None:
        return int(struct.unpack_from("<H", self.data, at)[0]) if at + 2 <= len(self.data) else None

    def string(self, at: int, notes: list[str]) -> str | None:
        index = self.byte(at)
        if not index:
            return None
        if index > len(self.strings):
            notes.append(
                f"structure type {self.type} handle 0x{self.handle:04X}: string {index} asked for, "
                f"{len(self.strings)} present"
            )
            return None
        return self.strings[index - 1]


@dataclass(frozen=True)
class SlotPeer:
    bus_address: str | None
    width: int | None  # lanes, the peer's electrical width (7.10.9: data bus width of the peer)


@dataclass(frozen=True)
class SmbiosSlot:
    """One System Slots structure (7.10), as the firmware states it."""

    handle: int
    designation: str | None  # "PCIEX16_2", "M.2_1", "J6C1"
    type_code: int | None  # None when read from dmidecode's text
    type_name: str | None  # dmidecode's words: "PCI Express 3 x16", "M.2 Socket 3"
    bus_width_code: int | None
    width_lanes: int | None  # data bus width, electrical lanes: x1 .. x32
    width_name: str | None  # "x8", "32 bit", "Other"
    current_usage: str | None  # "Available", "In Use", ...
    length: str | None
    slot_id: int | None
    bus_address: str | None  # 2.6+: "0000:00:1c.4"; None when absent or all FFh
    generation: int | None  # PCIe generation stated by the type code, else by 3.4's slot information
    base_width_lanes: int | None = None  # 3.2: data bus width of the base (the slot itself)
    peers: tuple[SlotPeer, ...] = ()  # 3.2 peer grouping (bifurcated functions sharing the slot)
    slot_information: int | None = None  # 3.4 raw byte
    physical_width_lanes: int | None = None  # 3.4: the connector's width, "x16" for an x8 slot in an x16 body
    pitch_mm: float | None = None  # 3.4
    height: str | None = None  # 3.5 slot height
    line: int | None = None  # 1-based line of its "Handle" line, when read from text


@dataclass(frozen=True)
class OnboardDevice:
    """Type 10 (no address) or type 41 (with one): 'Onboard - NVMe', 'Integrated NIC 1'."""

    handle: int
    designation: str | None
    type_name: str | None
    enabled: bool
    instance: int | None = None
    bus_address: str | None = None  # type 41 only
    line: int | None = None  # when read from text


@dataclass(frozen=True)
class SmbiosTable:
    entry: EntryPoint | None
    structure_count: int
    slots: tuple[SmbiosSlot, ...]
    onboard: tuple[OnboardDevice, ...]
    notes: tuple[str, ...] = ()  # what was skipped and why, in plain words
    structures: tuple[Structure, ...] = field(default=(), repr=False)


def parse_entry_point(raw: bytes) -> EntryPoint:
    """The SMBIOS entry point structure (smbios_entry_point, or the first bytes of a --dump-bin file).
    Raises ParseError for one that is no entry point at all; a bad checksum is a note (dmidecode warns
    too, and firmware with a wrong checksum exists)."""
    notes: list[str] = []
    if raw.startswith(b"_SM3_"):
        if len(raw) < _SM3_LEN:
            raise ParseError(f"SMBIOS entry point: _SM3_ needs {_SM3_LEN} bytes, got {len(raw)}")
        length = raw[6]
        if length < _SM3_LEN or length > len(raw):
            notes.append(f"_SM3_ entry point says it is {length} bytes long; read {_SM3_LEN}")
            length = _SM3_LEN
        if sum(raw[:length]) & 0xFF:
            notes.append("_SM3_ entry point checksum is wrong")
        major, minor, rev = raw[7], raw[8], raw[9]
        max_size, address = struct.unpack_from("<IQ", raw, 0x0C)
        return EntryPoint("_SM3_", (major, minor, rev), max_size, address, None, tuple(notes))
    if raw.startswith(b"_SM_"):
        if len(raw) < _SM2_LEN:
            raise ParseError(f"SMBIOS entry point: _SM_ needs {_SM2_LEN} bytes, got {len(raw)}")
        length = raw[5]
        if length < _SM2_LEN - 1 or length > len(raw):  # 2.1 entry points say 0x1E by an erratum
            notes.append(f"_SM_ entry point says it is {length} bytes long; read {_SM2_LEN}")
            length = _SM2_LEN
        if sum(raw[:length]) & 0xFF:
            notes.append("_SM_ entry point checksum is wrong")
        if raw[0x10:0x15] != b"_DMI_":
            notes.append("_SM_ entry point lacks its _DMI_ anchor at offset 0x10")
        major, minor = raw[6], raw[7]
        table_len, address, count = struct.unpack_from("<HIH", raw, 0x16)
        return EntryPoint("_SM_", (major, minor, 0), table_len, address, count, tuple(notes))
    if raw.startswith(b"_DMI_"):
        if len(raw) < _DMI_LEN:
            raise ParseError(f"SMBIOS entry point: _DMI_ needs {_DMI_LEN} bytes, got {len(raw)}")
        table_len, address, count = struct.unpack_from("<HIH", raw, 0x06)
        bcd = raw[0x0E]
        return EntryPoint("_DMI_", (bcd >> 4, bcd & 0x0F, 0), table_len, address, count, tuple(notes))
    raise ParseError("SMBIOS entry point: no _SM3_, _SM_ or _DMI_ anchor at its start")


def walk_structures(table: bytes, limit: int | None = None) -> tuple[list[Structure], list[str]]:
    """Every structure in order, up to End-of-Table, `limit` structures (2.x's count) or the end of
    the bytes, whichever comes first; plus notes on what was cut short."""
    out: list[Structure] = []
    notes: list[str] = []
    pos = 0
    size = len(table)
    while pos < size:
        if limit is not None and len(out) >= limit:
            break
        if pos + 4 > size:
            notes.append(f"{size - pos} bytes at offset {pos} are too few for a structure header; ignored")
            break
        stype, length, handle = struct.unpack_from("<BBH", table, pos)
        if length < 4:
            # A length under the header's own 4 bytes would never move the walk on (7.1.1).
            notes.append(
                f"structure type {stype} at offset {pos} says it is {length} bytes long (at least 4); "
                f"the {size - pos} bytes from there were skipped"
            )
            break
        if pos + length > size:
            notes.append(
                f"structure type {stype} handle 0x{handle:04X} at offset {pos} runs {pos + length - size} bytes "
                "past the end of the table (cut short); it and anything after it were skipped"
            )
            break
        # The string set ends with two NULs; a structure without strings has just those two (6.1.3).
        end = table.find(b"\0\0", pos + length)
        if end < 0:
            notes.append(
                f"structure type {stype} handle 0x{handle:04X} at offset {pos} has no end to its strings "
                "(cut short); it and anything after it were skipped"
            )
            break
        raw_strings = table[pos + length : end]
        strings = tuple(s.decode("latin-1").strip() for s in raw_strings.split(b"\0")) if raw_strings else ()
        out.append(Structure(stype, handle, pos, table[pos : pos + length], strings))
        pos = end + 2
        if stype == _END_OF_TABLE:
            break
    return out, notes


def _slot(s: Structure, notes: list[str]) -> SmbiosSlot | None:
    if len(s.data) < 0x0C:  # 2.0's fields end at 0x0B
        notes.append(f"slot structure handle 0x{s.handle:04X} is {len(s.data)} bytes, fewer than 12; skipped")
        return None
    type_code = s.data[0x05]
    width_code = s.data[0x06]
    slot_id = s.word(0x09)
    address = None
    if len(s.data) >= 0x11:
        seg, bus, devfn = s.word(0x0D), s.data[0x0F], s.data[0x10]
        address = bdf(seg if seg is not None else 0xFFFF, bus, devfn)
    generation = _SLOT_TYPE_GENERATION.get(type_code)
    base_width = peers_n = None
    peers: list[SlotPeer] = []
    info = physical = height = None
    pitch = None
    if len(s.data) >= 0x13:
        base_width = s.data[0x11]
        peers_n = s.data[0x12]
        end_of_peers = 0x13 + 5 * peers_n
        if len(s.data) < end_of_peers:
            notes.append(
                f"slot structure handle 0x{s.handle:04X} says it has {peers_n} peer devices but is too short "
                "for them; peers skipped"
            )
        else:
            for i in range(peers_n):
                at = 0x13 + 5 * i
                seg = s.word(at)
                peers.append(
                    SlotPeer(
                        bdf(seg if seg is not None else 0xFFFF, s.data[at + 2], s.data[at + 3]),
                        s.data[at + 4] or None,
                    )
                )
            if len(s.data) >= end_of_peers + 4:
                info = s.data[end_of_peers]
                physical = _WIDTH_LANES.get(s.data[end_of_peers + 1])
                pitch_raw = s.word(end_of_peers + 2) or 0
                pitch = pitch_raw / 100 if pitch_raw else None
                if generation is None and type_code in _PCIE_CODES and info:
                    generation = info
            if len(s.data) >= end_of_peers + 5:
                height = _HEIGHT.get(s.data[end_of_peers + 4])
    return SmbiosSlot(
        handle=s.handle,
        designation=s.string(0x04, notes),
        type_code=type_code,
        type_name=slot_type_name(type_code),
        bus_width_code=width_code,
        width_lanes=_WIDTH_LANES.get(width_code),
        width_name=_WIDTH_WORDS.get(width_code),
        current_usage=_USAGE.get(s.data[0x07]),
        length=_LENGTH.get(s.data[0x08]),
        slot_id=slot_id,
        bus_address=address,
        generation=generation,
        base_width_lanes=_WIDTH_LANES.get(base_width) if base_width else None,  # a width code, as 7.10.2
        peers=tuple(peers),
        slot_information=info,
        physical_width_lanes=physical,
        pitch_mm=pitch,
        height=height,
    )


def _onboard10(s: Structure, notes: list[str]) -> list[OnboardDevice]:
    count = (len(s.data) - 4) // 2
    out = []
    for i in range(count):
        code = s.data[4 + 2 * i]
        out.append(
            OnboardDevice(
                handle=s.handle,
                designation=s.string(5 + 2 * i, notes),
                type_name=onboard_type_name(code),
                enabled=bool(code & 0x80),
            )
        )
    return out


def _onboard41(s: Structure, notes: list[str]) -> OnboardDevice | None:
    if len(s.data) < 0x0B:
        notes.append(f"onboard device structure handle 0x{s.handle:04X} is {len(s.data)} bytes, fewer than 11; skipped")
        return None
    seg = s.word(0x07)
    return OnboardDevice(
        handle=s.handle,
        designation=s.string(0x04, notes),
        type_name=onboard_type_name(s.data[0x05]),
        enabled=bool(s.data[0x05] & 0x80),
        instance=s.data[0x06],
        bus_address=bdf(seg if seg is not None else 0xFFFF, s.data[0x09], s.data[0x0A]),
    )


def parse_smbios(table: bytes, entry_point: bytes | None = None) -> SmbiosTable:
    """The table (sysfs `DMI`), read as far as its entry point (sysfs `smbios_entry_point`) says.

    A table longer than the entry point says is read only that far (the rest is named in a note); a
    shorter one is read to its end (noted). Raises ParseError only for an entry point that is none."""
    notes: list[str] = []
    entry = parse_entry_point(entry_point) if entry_point is not None else None
    limit = None
    if entry is not None:
        notes.extend(entry.notes)
        if len(table) > entry.table_bytes:
            notes.append(
                f"the table holds {len(table)} bytes, {len(table) - entry.table_bytes} more than the entry point's "
                f"{entry.table_bytes}; the rest was ignored"
            )
            table = table[: entry.table_bytes]
        elif len(table) < entry.table_bytes and entry.anchor != "_SM3_":
            # 3.x gives a maximum, so a shorter table is normal there; 2.x gives the exact length.
            notes.append(f"the table holds {len(table)} bytes, the entry point says {entry.table_bytes} (cut short)")
        limit = entry.structure_count or None
    if len(table) > MAX_TABLE_BYTES:
        notes.append(f"the table is {len(table)} bytes; only the first {MAX_TABLE_BYTES} were read")
        table = table[:MAX_TABLE_BYTES]
    structures, walk_notes = walk_structures(table, limit)
    notes.extend(walk_notes)
    ended = bool(structures) and structures[-1].type == _END_OF_TABLE
    if not ended and not walk_notes and (limit is None or len(structures) < limit):
        notes.append("the table ends without an End-of-Table structure (type 127): it may be cut short")
    slots: list[SmbiosSlot] = []
    onboard: list[OnboardDevice] = []
    seen_handles: set[int] = set()
    for s in structures:
        if s.handle in seen_handles and s.type in (9, 10, 41):
            # Handles should be unique (6.1.2); dmidecode reads both, and so do we, but says so.
            notes.append(f"handle 0x{s.handle:04X} appears more than once (type {s.type})")
        seen_handles.add(s.handle)
        if s.type == 9:
            slot = _slot(s, notes)
            if slot is not None:
                slots.append(slot)
        elif s.type == 10:
            onboard.extend(_onboard10(s, notes))
        elif s.type == 41:
            dev = _onboard41(s, notes)
            if dev is not None:
                onboard.append(dev)
    return SmbiosTable(entry, len(structures), tuple(slots), tuple(onboard), tuple(notes), tuple(structures))


def parse_dump_bin(raw: bytes) -> SmbiosTable:
    """A `dmidecode --dump-bin` file: the entry point at offset 0, the table at the address it gives
    (dmidecode writes 0x20 there)."""
    entry = parse_entry_point(raw[:0x20])
    if entry.table_address > len(raw):
        raise ParseError(
            f"SMBIOS dump: the entry point puts the table at offset {entry.table_address}, past the file's "
            f"{len(raw)} bytes"
        )
    return parse_smbios(raw[entry.table_address :], raw[: max(_SM2_LEN, _SM3_LEN)])


# Fields that identify one machine or part (DSP0134): (string field offsets, (binary offset, length)...).
# 7.2 System (serial, UUID), 7.3 Baseboard and 7.4 Chassis (serial, asset tag), 7.5 Processor (serial,
# asset tag), 7.18 Memory Device (serial, asset tag), 7.23 Portable Battery (serial, SBDS serial),
# 7.40 System Power Supply (serial, asset tag).
_IDENTIFYING: dict[int, tuple[tuple[int, ...], tuple[tuple[int, int], ...]]] = {
    1: ((0x07,), ((0x08, 16),)),
    2: ((0x07, 0x08), ()),
    3: ((0x07, 0x08), ()),
    4: ((0x20, 0x21), ()),
    17: ((0x18, 0x19), ()),
    22: ((0x07,), ((0x10, 2),)),
    39: ((0x07, 0x08), ()),
}


def mask_identifiers(table: bytes, mask: Callable[[bytes], bytes]) -> bytes:
    """The table with every serial number, asset tag and UUID replaced by `mask(value)` cut or padded to
    the value's own length, so no offset, length or entry point changes and the table still parses.
    A UUID of all 00h or all FFh ("not present", "not set") is kept; so are empty strings. Structures
    after a damaged one (walk_structures stops there) are left as they are, being unreadable anyway."""
    out = bytearray(table)
    structures, _ = walk_structures(table)
    for s in structures:
        fields = _IDENTIFYING.get(s.type)
        if fields is None:
            continue
        string_fields, binary_fields = fields
        spans: list[tuple[int, int]] = []  # each string's (start, end) in the table
        start = s.offset + len(s.data)
        for _ in s.strings:
            end = table.index(b"\0", start)
            spans.append((start, end))
            start = end + 1
        for at in string_fields:
            index = s.byte(at)
            if index and index <= len(spans):
                a, b = spans[index - 1]
                if b > a:
                    out[a:b] = _fit(mask(table[a:b]), b - a, printable=True)
        for at, length in binary_fields:
            if at + length <= len(s.data):
                a = s.offset + at
                value = table[a : a + length]
                if value.strip(b"\x00") and value.strip(b"\xff"):
                    out[a : a + length] = _fit(mask(value), length, printable=False)
    return bytes(out)


def _fit(masked: bytes, length: int, printable: bool) -> bytes:
    if printable:
        masked = bytes(c if 0x20 < c < 0x7F else 0x2D for c in masked)  # never a NUL inside a string
    return (masked * (length // max(len(masked), 1) + 1))[:length]
