"""Builds the binary SMBIOS test tables from the text in tests/data/smbios (SOURCES.md says which).

Two kinds of structure go in: real bytes, read from the hex text of structures.txt; and type 9 / 41
structures encoded here (DSP0134 7.10 / 7.42) from the fields of real dmidecode text, so that
`dmidecode --from-dump` can decode them back and be compared with the text they came from. Entry
points are built here too (5.2.1 `_SM_`, 5.2.2 `_SM3_`), except where a real one is used as it is.

    python tests/smbios_tables.py     # rewrites tests/data/smbios/<name>.dmidecode-3.4.txt (needs dmidecode)
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from disksleuth.probe import smbios
from disksleuth.probe.dmidecode_text import parse_dmidecode_slots
from disksleuth.probe.smbios import OnboardDevice, SmbiosSlot

DATA = Path(__file__).parent / "data" / "smbios"
END_OF_TABLE = bytes([127, 4, 0xFF, 0xFE, 0, 0])  # 7.45, handle 0xFEFF as firmware writes it
DUMP_TABLE_AT = 0x20  # where `dmidecode --dump-bin` puts the table


@cache
def real_structures() -> dict[str, bytes]:
    """The [name] blocks of structures.txt: their hex bytes, as bytes."""
    blocks: dict[str, bytes] = {}
    name = None
    for line in (DATA / "structures.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "source:")):
            continue
        if line.startswith("["):
            name = line.strip("[]")
            blocks[name] = b""
        elif name is not None:
            blocks[name] += bytes.fromhex(line)
    return blocks


def _strings(*values: str | None) -> tuple[bytes, list[int]]:
    """The string set and each value's index (0 for None), as 6.1.3 lays them out."""
    out, indexes = b"", []
    present = [v for v in values if v]
    for v in values:
        indexes.append(present.index(v) + 1 if v else 0)
    for v in present:
        out += v.encode() + b"\0"
    return (out or b"\0") + b"\0", indexes


def _address(bus_address: str | None) -> bytes:
    if bus_address is None:
        return struct.pack("<HBB", 0xFFFF, 0xFF, 0xFF)
    seg, bus, devfn = bus_address.split(":")
    dev, fn = devfn.split(".")
    return struct.pack("<HBB", int(seg, 16), int(bus, 16), int(dev, 16) << 3 | int(fn, 16))


def _code(table: dict[int, object], value: object) -> int:
    return next((c for c, v in table.items() if v == value), 0x02 if value is None else 0x01)


def _type_code(name: str | None) -> int:
    return next((c for c in range(256) if smbios.slot_type_name(c) == name), 0x02)


def encode_slot(slot: SmbiosSlot) -> bytes:
    """A type 9 structure stating the fields a dmidecode text record gave."""
    strings, (designation,) = _strings(slot.designation)
    body = struct.pack(
        "<BBBBHBB",
        _type_code(slot.type_name),
        _code(smbios._WIDTH_LANES, slot.width_lanes) if slot.width_lanes else 0x02,
        _code(smbios._USAGE, slot.current_usage),
        _code(smbios._LENGTH, slot.length),
        slot.slot_id or 0,
        0x04,  # 3.3 V is provided
        0x01,  # PME signal is supported
    )
    body += _address(slot.bus_address)
    newer = slot.base_width_lanes or slot.generation or slot.physical_width_lanes or slot.height
    if newer:  # 3.2 base width and peers, 3.4 slot information .. pitch, 3.5 height
        body += bytes([_code(smbios._WIDTH_LANES, slot.base_width_lanes) if slot.base_width_lanes else 0])
        body += bytes([len(slot.peers)])
        for peer in slot.peers:
            body += _address(peer.bus_address) + bytes([peer.width or 0])
        info = slot.generation if slot.generation and "Express" in (slot.type_name or "") else 0  # 7.10.9
        physical = _code(smbios._WIDTH_LANES, slot.physical_width_lanes) if slot.physical_width_lanes else 0
        pitch = round(slot.pitch_mm * 100) if slot.pitch_mm else 0
        body += struct.pack("<BBHB", info, physical, pitch, _code(smbios._HEIGHT, slot.height))
    header = struct.pack("<BBH", 9, 4 + 1 + len(body), slot.handle)
    return header + bytes([designation]) + body + strings


def encode_onboard(device: OnboardDevice) -> bytes:
    """A type 41 structure stating what a dmidecode text record gave."""
    strings, (designation,) = _strings(device.designation)
    kind = next(i + 1 for i, n in enumerate(smbios._ONBOARD_TYPES) if n == device.type_name)
    body = bytes([designation, kind | (0x80 if device.enabled else 0), device.instance or 0])
    body += _address(device.bus_address)
    return struct.pack("<BBH", 41, 4 + len(body), device.handle) + body + strings


def entry_point_64(version: tuple[int, int, int], max_bytes: int, address: int = DUMP_TABLE_AT) -> bytes:
    ep = bytearray(struct.pack("<5sBBBBBBBIQ", b"_SM3_", 0, 0x18, *version, 1, 0, max_bytes, address))
    ep[5] = -sum(ep) & 0xFF
    return bytes(ep)


def entry_point_32(version: tuple[int, int], table: bytes, structures: int, address: int = DUMP_TABLE_AT) -> bytes:
    biggest = max(len(s) for s in split(table))
    dmi = bytearray(struct.pack("<5sBHIHB", b"_DMI_", 0, len(table), address, structures, version[0] << 4 | version[1]))
    dmi[5] = -sum(dmi) & 0xFF
    ep = bytearray(struct.pack("<4sBBBBHB5s", b"_SM_", 0, 0x1F, *version, biggest, 0, b"\0" * 5) + dmi)
    ep[4] = -sum(ep[:0x1F]) & 0xFF
    return bytes(ep)


def split(table: bytes) -> list[bytes]:
    """The structures of a table, each from its header to its double NUL."""
    out, at = [], 0
    while at < len(table):
        end = table.index(b"\0\0", at + table[at + 1]) + 2
        out.append(table[at:end])
        at = end
    return out


def with_address(entry: bytes, address: int) -> bytes:
    """The same entry point, its table address changed (and its checksums made right again)."""
    ep = bytearray(entry)
    if ep.startswith(b"_SM3_"):
        struct.pack_into("<Q", ep, 0x10, address)
        ep[5] = 0
        ep[5] = -sum(ep[:0x18]) & 0xFF
    else:
        struct.pack_into("<I", ep, 0x18, address)
        ep[0x15] = 0
        ep[0x15] = -sum(ep[0x10:0x1F]) & 0xFF
        ep[4] = 0
        ep[4] = -sum(ep[:0x1F]) & 0xFF
    return bytes(ep)


def dump_bin(table: bytes, entry: bytes) -> bytes:
    """The `dmidecode --dump-bin` layout: the entry point at 0 pointing at the table at 0x20."""
    ep = with_address(entry, DUMP_TABLE_AT)
    return ep + b"\0" * (DUMP_TABLE_AT - len(ep)) + table


@dataclass(frozen=True)
class Built:
    name: str
    table: bytes  # as /sys/firmware/dmi/tables/DMI
    entry: bytes  # as /sys/firmware/dmi/tables/smbios_entry_point
    from_text: str | None  # the real dmidecode text its structures were encoded from, if any


def _from_text(name: str, text_file: str, version: tuple[int, int, int], bits: int) -> Built:
    text = (DATA / text_file).read_text()
    parsed = parse_dmidecode_slots(text)
    table = b"".join(encode_slot(s) for s in parsed.slots)
    table += b"".join(encode_onboard(d) for d in parsed.onboard if d.bus_address)
    table += END_OF_TABLE
    count = len(split(table))
    entry = entry_point_64(version, len(table)) if bits == 64 else entry_point_32(version[:2], table, count)
    return Built(name, table, entry, text_file)


@cache
def tables() -> dict[str, Built]:
    real = real_structures()
    laptop = real["surface-laptop-3-type0-type1"] + real["j6b2-type9"] + real["i219-type41"] + END_OF_TABLE
    built = [
        # Real structures; the real entry point of the Surface Laptop 3, whose 1,155-byte maximum is more
        # than this table (3.x allows it: the maximum is an upper bound).
        Built("smbios-lib-real", laptop, real["surface-laptop-3-entry-point"], None),
        Built("smbios-lib-real-32bit", laptop, entry_point_32((2, 8), laptop, len(split(laptop))), None),
        _from_text("csit-sm_zn2-encoded", "csit-sm_zn2.dmidecode-t-slot.txt", (3, 2, 0), 64),
        _from_text("dmiparser-encoded", "dmiparser-dmidecode_9.txt", (2, 7, 0), 32),
        _from_text("csit-grace-encoded", "csit-nvidia_grc_hw_bios_cfg.md", (3, 6, 0), 64),
        # Whole real dmidecode outputs of three machines (netbox-agent's fixtures, SOURCES.md).
        _from_text("netbox-qct-encoded", "netbox-agent-QCT_X10E-9N.txt", (3, 0, 0), 64),
        _from_text("netbox-sm5039-encoded", "netbox-agent-SYS-5039MS-H12TRF-OS012.txt", (3, 0, 0), 64),
        _from_text("netbox-onlinelabs-encoded", "netbox-agent-unknown.txt", (2, 8, 0), 32),
    ]
    return {b.name: b for b in built}


def dmidecode_text(name: str) -> str:
    return (DATA / f"{name}.dmidecode-3.4.txt").read_text()


def _write_dmidecode_outputs() -> None:
    for b in tables().values():
        with tempfile.NamedTemporaryFile(suffix=".bin") as f:
            f.write(dump_bin(b.table, b.entry))
            f.flush()
            out = subprocess.run(["dmidecode", "--from-dump", f.name], capture_output=True, text=True, check=True)
        text = out.stdout.replace(f.name, f"{b.name}.dump-bin")
        (DATA / f"{b.name}.dmidecode-3.4.txt").write_text(text)
        print(b.name, len(b.table), "bytes")


if __name__ == "__main__":  # pragma: no cover - run by hand, see the module docstring
    sys.exit(_write_dmidecode_outputs())
