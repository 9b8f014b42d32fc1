"""Slots by name (pure): how a hop's slot is said, and the firmware's slot table against the link.

Firmware slot tables are often wrong: a post this project grew from had SMBIOS call a slot "x1 PCI
Express 3" while its link, after a BIOS change, ran PCIe 2.0 x4. The link's own capability registers
(LnkCap) are read from the hardware, so they win for every ceiling; a disagreement is only worth an
info finding, so the user knows which to believe.
"""

from __future__ import annotations

from disksleuth.analysis.ceilings import pcie_label
from disksleuth.model import Finding, PcieHop, Slot

# Sources whose name is a physical slot on the board (the others name a device: "Onboard - NVMe").
_PHYSICAL = ("smbios", "pci_slot")
# PCIe generation -> its rate (GT/s), to compare the firmware's generation with LnkCap's speed.
_GEN_GTPS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}


def slot_name(slot: Slot) -> str:
    """As a table cell: 'PCIEX16_2', 'slot 3' (the kernel's), 'Onboard - NVMe' (a firmware label)."""
    if slot.source == "pci_slot":
        return f"slot {slot.name}"
    return slot.name


def slot_phrase(slot: Slot) -> str:
    """As a sentence names it: 'the slot marked PCIEX16_2', 'the device the firmware calls 'Onboard - NVMe''."""
    if slot.source == "smbios":
        return f"the slot marked {slot.name}"
    if slot.source == "pci_slot":
        return f"PCI slot {slot.name}"
    return f"the device the firmware calls '{slot.name}'"


def names_physical_slot(slot: Slot | None) -> bool:
    return slot is not None and slot.source in _PHYSICAL


def _generation(gtps: float | None) -> int | None:
    for gen, rate in _GEN_GTPS.items():
        if gtps is not None and abs(gtps - rate) < 0.01:
            return gen
    return None


def slot_firmware_mismatch(hop: PcieHop) -> Finding | None:
    """`slot_firmware_mismatch` (info): the SMBIOS slot table states a width or PCIe generation for the
    hop's slot that the link's capability (the port's LnkCap, which feeds the slot) contradicts."""
    slot = hop.slot
    if slot is None or slot.source != "smbios":
        return None
    link_width, link_gtps = hop.port_max_width, hop.port_max_speed_gtps
    link_gen = _generation(link_gtps)
    width_differs = slot.firmware_width is not None and link_width is not None and slot.firmware_width != link_width
    gen_differs = slot.firmware_generation is not None and link_gen is not None and slot.firmware_generation != link_gen
    if not (width_differs or gen_differs):
        return None
    said = slot.firmware_type or "a PCIe slot"
    if slot.firmware_width is not None:
        said = f"x{slot.firmware_width} {said}"
    where = f"the root port {hop.port}" if hop.port_is_root else f"the switch port {hop.port}"
    differs = " and ".join(w for w, flag in (("width", width_differs), ("generation", gen_differs)) if flag)
    differs = f"{differs}s disagree" if differs.count(" and ") == 0 else f"{differs} disagree"
    return Finding(
        code="slot_firmware_mismatch",
        severity="info",
        message=(
            f"The firmware's slot table (SMBIOS) calls {slot.name} \"{said}\", but the link's capability "
            f"(LnkCap of {where}) is {pcie_label(link_gtps, link_width)}: the {differs} disagree. "
            "Ceilings here use the link."
        ),
        evidence={
            "slot": slot.name,
            "slot_bus_address": slot.bus_address,
            "firmware_type": slot.firmware_type,
            "firmware_width": slot.firmware_width,
            "firmware_generation": slot.firmware_generation,
            "port": hop.port,
            "port_max_speed_gtps": link_gtps,
            "port_max_width": link_width,
        },
        hint=(
            f"Believe the link: the slot table is written once by the board maker and is often wrong or out of "
            f"date (BIOS lane-sharing and slot-mode settings change the link, not the table). The board manual "
            f"says which lanes {slot.name} shares."
        ),
    )
