"""Physical slot names, read live under a root, and which PCIe link each one is.

Sources, best first:
  /sys/firmware/dmi/tables/{smbios_entry_point,DMI}  the raw SMBIOS table (root only): System Slots
      (type 9) with the bus address the firmware gives each slot, Onboard Devices (type 41);
      /sys/firmware/dmi/entries/{9,41}-*/raw when the tables are absent (older kernels).
  /sys/bus/pci/slots/NAME/address  the kernel's slots (pciehp, ACPI _SUN): "0000:03:00", the bus and
      device number of what sits in the slot.
  /sys/bus/pci/devices/BDF/label, acpi_index  the firmware's name for a device ("Onboard - NVMe").
`dmidecode -t 9` is run as a cross-check only on the live system, only where installed.

Which end of a link a type 9 address names differs by firmware, as the real data in tests/data/smbios
shows: the root port (J6B2 at 0000:00:01.0; a riser server's slots at 0000:80:02.2) or the device in the
slot, that is the first function on the port's secondary bus (a Supermicro's RSC-WR-6 SLOT1 at
0000:01:00.0). So a link (port -> function) matches a slot whose address is the function, the port, or
function 0 of the function's bus. An address that several slots share (0000:ff:00.0 on that Supermicro),
bus FFh (an empty slot) or 0000:00:00.0 (the host bridge, laptops' card readers) names no link, and is
never matched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from disksleuth.errors import DisksleuthError
from disksleuth.model import Slot
from disksleuth.probe.sysfs import Sysfs

# The table's parser (six dataclasses) is imported where there is a table to parse: not on a machine or capture
# without one (issue 37: start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from disksleuth.probe.smbios import OnboardDevice, SmbiosSlot, SmbiosTable

_KERNEL_SLOT_ADDR_RE = re.compile(r"^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2})?$")
_ENTRY_RE = re.compile(r"^(9|10|41)-\d{1,5}$")
_MAX_ENTRIES = 4096  # a table has at most a few hundred structures
_MAX_DEVICES = 8192


@dataclass(frozen=True)
class SlotTable:
    smbios_slots: tuple[SmbiosSlot, ...] = ()
    onboard: tuple[OnboardDevice, ...] = ()
    kernel_slots: tuple[tuple[str, str], ...] = ()  # (name, "0000:03:00")
    labels: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)  # bdf -> (label, acpi_index)
    smbios_version: str | None = None
    notes: tuple[str, ...] = ()  # what could not be read, and what the table parser skipped

    def __post_init__(self) -> None:
        # Addresses several slots claim are placeholders, not facts (see the module's docstring).
        counts: dict[str, int] = {}
        for s in self.smbios_slots:
            if s.bus_address:
                counts[s.bus_address] = counts.get(s.bus_address, 0) + 1
        usable = {
            s.bus_address: s
            for s in self.smbios_slots
            if s.bus_address and counts[s.bus_address] == 1 and _names_a_link(s.bus_address)
        }
        object.__setattr__(self, "_by_address", usable)

    def slot_for(self, port: str | None, function: str) -> Slot | None:
        """The slot of the link from `port` down to `function` (both BDFs), or None."""
        by_address: dict[str, SmbiosSlot] = self.__dict__["_by_address"]
        function = function.lower()
        first_on_bus = function.rsplit(":", 1)[0] + ":00.0"
        for address, matched in ((function, "device"), ((port or "").lower(), "port"), (first_on_bus, "secondary_bus")):
            slot = by_address.get(address)
            if slot is not None and slot.designation:
                return Slot(
                    name=slot.designation,
                    source="smbios",
                    bus_address=slot.bus_address,
                    matched=matched,
                    firmware_type=slot.type_name,
                    firmware_width=slot.width_lanes,
                    firmware_generation=slot.generation,
                    physical_width=slot.physical_width_lanes,
                    current_usage=slot.current_usage,
                )
        for dev in self.onboard:
            if dev.bus_address and dev.bus_address == function and dev.designation:
                return Slot(dev.designation, "smbios_onboard", dev.bus_address, "device")
        device_address = function.rsplit(".", 1)[0]  # "0000:03:00"
        for name, address in self.kernel_slots:
            if address.lower() == device_address:
                return Slot(name, "pci_slot", address, "slot_address")
        label, acpi_index = self.labels.get(function, (None, None))
        if label:
            return Slot(label, "label", function, "label", acpi_index=acpi_index)
        return None


def _names_a_link(address: str) -> bool:
    bus = address.split(":")[1]
    return bus.lower() != "ff" and not address.endswith(":00:00.0")


def smbios_table(fs: Sysfs) -> tuple[SmbiosTable | None, list[str]]:
    """The SMBIOS table under the root, or None with a note saying why not."""
    notes: list[str] = []
    tables = fs.p("/sys/firmware/dmi/tables")
    entries_dir = fs.p("/sys/firmware/dmi/entries")
    if not fs.isfile(os.path.join(tables, "DMI")) and not fs.listdir(entries_dir):
        return None, notes
    from disksleuth.probe.smbios import MAX_TABLE_BYTES, parse_smbios, walk_structures

    entry = fs.read_bytes(os.path.join(tables, "smbios_entry_point"), limit=64)
    table = fs.read_bytes(os.path.join(tables, "DMI"), limit=MAX_TABLE_BYTES)
    if entry is not None and table is not None:
        try:
            return parse_smbios(table, entry), notes
        except DisksleuthError as err:
            notes.append(f"SMBIOS table: {err}")
            return None, notes
    if fs.isfile(os.path.join(tables, "DMI")):
        notes.append("the SMBIOS table (/sys/firmware/dmi/tables/DMI) is not readable: slot names need root")
        return None, notes
    # Older kernels export each structure on its own: entries/T-N/raw (formatted area and strings).
    raw = b""
    for name in sorted(fs.listdir(entries_dir))[:_MAX_ENTRIES]:
        if _ENTRY_RE.match(name):
            one = fs.read_bytes(os.path.join(entries_dir, name, "raw"), limit=64 * 1024)
            if one is not None:
                structures, _ = walk_structures(one, 1)
                if structures:
                    raw += one[: structures[0].offset + len(structures[0].data)] + _string_set(structures[0].strings)
    if raw:
        return parse_smbios(raw + b"\x7f\x04\xff\xff\0\0"), notes
    return None, notes


def _string_set(strings: tuple[str, ...]) -> bytes:
    return b"".join(s.encode("latin-1", "replace") + b"\0" for s in strings) + b"\0" if strings else b"\0\0"


def read_slot_table(sysfs_root: str = "/", fs: Sysfs | None = None) -> SlotTable:
    fs = fs or Sysfs(sysfs_root)
    table, notes = smbios_table(fs)
    if table is not None:
        notes.extend(f"SMBIOS: {n}" for n in table.notes)
    kernel_slots = []
    slots_dir = fs.p("/sys/bus/pci/slots")
    for name in fs.listdir(slots_dir)[:_MAX_DEVICES]:
        address = fs.read(os.path.join(slots_dir, name, "address"))
        if address and _KERNEL_SLOT_ADDR_RE.match(address.strip()):
            kernel_slots.append((name, address.strip()))
    labels: dict[str, tuple[str | None, int | None]] = {}
    devices = fs.p("/sys/bus/pci/devices")
    for bdf in fs.listdir(devices)[:_MAX_DEVICES]:
        label = fs.read(os.path.join(devices, bdf, "label"))
        index = fs.read(os.path.join(devices, bdf, "acpi_index"))
        if label or index:
            labels[bdf.lower()] = (
                label.strip() if label and label.strip() else None,
                int(index) if index and index.strip().isdigit() and len(index) < 10 else None,
            )
    slots = SlotTable(
        smbios_slots=table.slots if table else (),
        onboard=table.onboard if table else (),
        kernel_slots=tuple(kernel_slots),
        labels=labels,
        smbios_version=table.entry.version_text if table and table.entry else None,
        notes=tuple(notes),
    )
    if table is not None and table.slots and not fs.confined:
        # The live machine only: a captured tree's dmidecode would read this machine's table, not its.
        disagreements = cross_check_dmidecode(slots)
        if disagreements:
            slots = replace(slots, notes=slots.notes + disagreements)
    return slots


def cross_check_dmidecode(table: SlotTable, timeout_s: float = 10.0) -> tuple[str, ...]:
    """On the live system, where dmidecode is installed: the slots `dmidecode -t 9` names that the
    table read here does not (designation and bus address), as notes. Empty when they agree."""
    from disksleuth.probe import runner
    from disksleuth.probe.dmidecode_text import parse_dmidecode_slots

    if runner.which("dmidecode") is None:
        return ()
    try:
        result = runner.run(["dmidecode", "-t", "9"], timeout_s=timeout_s, check=False)
        theirs = parse_dmidecode_slots(result.stdout).slots if result.returncode == 0 else ()
    except DisksleuthError as err:
        return (f"dmidecode -t 9 cross-check failed: {err}",)
    ours = {(s.designation, s.bus_address) for s in table.smbios_slots}
    missing = [f"{s.designation} at {s.bus_address}" for s in theirs if (s.designation, s.bus_address) not in ours]
    return tuple(f"dmidecode -t 9 names a slot this reader did not: {m}" for m in missing[:10])
