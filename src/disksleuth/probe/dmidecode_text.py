"""dmidecode's text output (whole, `-t 9`, `-t slot`): the System Slots and onboard devices in it. Pure.

dmidecode has printed slots three ways: up to 3.5 the width and type on one line ("Type: x8 PCI
Express 3 x16", "Type: 32-bit PCI"), 3.5 with the 3.2 base width as a bare number ("Data Bus Width:
13"), and newer ones with a line of their own ("Data Bus Width: 8x or x8", "Data Bus Width (Base): 13").
All three are read. Indentation may be tabs or spaces (a paste, a Markdown page), lines may carry a
prompt's indentation; only the "Handle 0x..., DMI type N" lines start records. Linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from disksleuth.errors import ParseError
from disksleuth.probe.smbios import OnboardDevice, SlotPeer, SmbiosSlot

_HANDLE_RE = re.compile(r"^\s*Handle 0x([0-9A-Fa-f]{1,4}), DMI type (\d{1,3}), (\d{1,3}) bytes?\.?\s*$")
_ATTR_RE = re.compile(r"^\s+([A-Za-z0-9][A-Za-z0-9 ./()+-]{0,60}?):\s?(.*)$")
_BDF_RE = re.compile(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
_PEER_RE = re.compile(r"^([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*\(Width (\d{1,3})\)$")
_VERSION_RE = re.compile(r"^\s*# dmidecode (\d+\.\d+(?:\.\d+)?)")
_SMBIOS_RE = re.compile(r"^\s*SMBIOS (\d+\.\d+(?:\.\d+)?) present")
# "x8 PCI Express 3 x16", "32-bit PCI", "8x or x8 PCI" (never printed so, but harmless)
_TYPE_WIDTH_RE = re.compile(r"^(x\d{1,2}|\d{1,3}-bit|\d{1,3} bit)\s+(.+)$")
_LANES_RE = re.compile(r"(?:^|\s)x(\d{1,2})$")
_GEN_RE = re.compile(r"PCI Express (\d)")
_PITCH_RE = re.compile(r"^(\d{1,3}(?:\.\d{1,2})?) mm$")
_INT_RE = re.compile(r"^\d{1,5}$")
_MAX_TEXT_CHARS = 16 * 1024 * 1024  # a whole dmidecode of a big server is ~300 KB


@dataclass(frozen=True)
class DmidecodeSlots:
    dmidecode_version: str | None
    smbios_version: str | None
    slots: tuple[SmbiosSlot, ...]
    onboard: tuple[OnboardDevice, ...]
    notes: tuple[str, ...] = ()


def _bus_address(value: str) -> str | None:
    m = _BDF_RE.match(value.strip())
    return value.strip().lower() if m else None


def _lanes(value: str) -> int | None:
    m = _LANES_RE.search(value.strip())
    return int(m.group(1)) if m else None


def _int(value: str) -> int | None:
    return int(value) if _INT_RE.match(value.strip()) else None


class _Record:
    def __init__(self, handle: int, dmi_type: int, line: int):
        self.handle = handle
        self.type = dmi_type
        self.line = line
        self.title: str | None = None
        self.attrs: list[tuple[str, str]] = []


def _records(lines: list[str]) -> tuple[list[_Record], str | None, str | None]:
    records: list[_Record] = []
    cur: _Record | None = None
    version = smbios = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n ")
        m = _HANDLE_RE.match(line)
        if m:
            cur = _Record(int(m.group(1), 16), int(m.group(2)), number)
            records.append(cur)
            continue
        if cur is None:
            vm = _VERSION_RE.match(line)
            if vm:
                version = vm.group(1)
            sm = _SMBIOS_RE.match(line)
            if sm:
                smbios = sm.group(1)
            continue
        if not line.strip():
            continue
        if cur.title is None:
            cur.title = line.strip()
            # Type 10 holds several devices, each under its own "On Board Device N Information" title.
            if cur.type == 10:
                cur.attrs.append(("__device__", line.strip()))
            continue
        if cur.type == 10 and line.strip().startswith("On Board Device"):
            cur.attrs.append(("__device__", line.strip()))
            continue
        am = _ATTR_RE.match(line)
        if am:
            cur.attrs.append((am.group(1).strip(), am.group(2).strip()))
        else:
            cur.attrs.append(("", line.strip()))  # a list item (Characteristics) or a peer line
    return records, version, smbios


def _slot(rec: _Record, notes: list[str]) -> SmbiosSlot:
    designation = type_name = width_name = usage = length = address = height = None
    width = slot_id = generation = physical = base_width = None
    pitch = None
    peers: list[SlotPeer] = []
    for key, value in rec.attrs:
        if key == "Designation":
            designation = value
        elif key == "Type":
            m = _TYPE_WIDTH_RE.match(value)
            if m:
                width_name, type_name = m.group(1), m.group(2)
                width = _lanes(width_name)
            else:
                type_name = value
        elif key == "Data Bus Width":
            if _INT_RE.match(value):  # dmidecode 3.5: the 3.2 base width's raw code
                base_width = _lanes_from_code(int(value))
            else:
                width_name = value.split(" or ")[-1]
                width = _lanes(value)
        elif key == "Data Bus Width (Base)":
            code = _int(value)
            base_width = _lanes_from_code(code) if code is not None else None
        elif key == "Current Usage":
            usage = value
        elif key == "Length":
            length = value
        elif key == "ID":
            slot_id = _int(value)
        elif key == "Bus Address":
            address = _bus_address(value)
            if address is None:
                notes.append(f"line {rec.line}: slot bus address {value[:40]!r} is not dddd:bb:dd.f")
        elif key.startswith("Peer Device ") or (key == "" and _PEER_RE.match(value)):
            pm = _PEER_RE.match(value)
            if pm:
                peers.append(SlotPeer(pm.group(1).lower(), int(pm.group(2)) or None))
        elif key == "PCI Express Generation":
            generation = _int(value)
        elif key == "Slot Physical Width":
            physical = _lanes(value)
        elif key == "Pitch":
            pm = _PITCH_RE.match(value)
            pitch = float(pm.group(1)) if pm else None
        elif key == "Height":
            height = value
    if type_name is not None and generation is None:
        gm = _GEN_RE.search(type_name)
        generation = int(gm.group(1)) if gm else None
    return SmbiosSlot(
        handle=rec.handle,
        designation=designation,
        type_code=None,
        type_name=type_name,
        bus_width_code=None,
        width_lanes=width,
        width_name=width_name,
        current_usage=usage,
        length=length,
        slot_id=slot_id,
        bus_address=address,
        generation=generation,
        base_width_lanes=base_width,
        peers=tuple(peers),
        physical_width_lanes=physical,
        pitch_mm=pitch,
        height=height,
        line=rec.line,
    )


def _lanes_from_code(code: int) -> int | None:
    # 7.10.2: 0x08 = x1 ... 0x0E = x32
    return {0x08: 1, 0x09: 2, 0x0A: 4, 0x0B: 8, 0x0C: 12, 0x0D: 16, 0x0E: 32}.get(code)


def _onboard41(rec: _Record, notes: list[str]) -> OnboardDevice:
    attrs = dict(rec.attrs)
    address = attrs.get("Bus Address")
    return OnboardDevice(
        handle=rec.handle,
        designation=attrs.get("Reference Designation"),
        type_name=attrs.get("Type"),
        enabled=attrs.get("Status") == "Enabled",
        instance=_int(attrs.get("Type Instance", "")),
        bus_address=_bus_address(address) if address else None,
        line=rec.line,
    )


def _onboard10(rec: _Record) -> list[OnboardDevice]:
    out: list[OnboardDevice] = []
    current: dict[str, str] | None = None
    for key, value in [*rec.attrs, ("__device__", "")]:
        if key == "__device__":
            if current:
                out.append(
                    OnboardDevice(
                        handle=rec.handle,
                        designation=current.get("Description"),
                        type_name=current.get("Type"),
                        enabled=current.get("Status") == "Enabled",
                        line=rec.line,
                    )
                )
            current = {}
        elif current is not None:
            current[key] = value
    return out


def parse_dmidecode_slots(text: str) -> DmidecodeSlots:
    """The slots (type 9) and onboard devices (types 10, 41) in dmidecode's text. Raises ParseError for
    text with no dmidecode record in it; a record cut short gives the fields it has."""
    if len(text) > _MAX_TEXT_CHARS:
        raise ParseError(f"dmidecode text: {len(text)} characters is more than any dmidecode prints")
    records, version, smbios = _records(text.splitlines())
    if not records:
        raise ParseError("dmidecode text: no 'Handle 0x..., DMI type N, M bytes' line found")
    notes: list[str] = []
    slots: list[SmbiosSlot] = []
    onboard: list[OnboardDevice] = []
    for rec in records:
        if rec.type == 9:
            slots.append(_slot(rec, notes))
        elif rec.type == 41:
            onboard.append(_onboard41(rec, notes))
        elif rec.type == 10:
            onboard.extend(_onboard10(rec))
    return DmidecodeSlots(version, smbios, tuple(slots), tuple(onboard), tuple(notes))
