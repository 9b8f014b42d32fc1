"""Slots by name (pure): how a hop's slot is said, and the firmware's slot table against the link.

Firmware slot tables are often wrong: a post this project grew from had SMBIOS call a slot "x1 PCI
Express 3" while its link, after a BIOS change, ran PCIe 2.0 x4. The link's own capability registers
(LnkCap) are read from the hardware, so they win for every ceiling; a disagreement is only worth an
info finding, so the user knows which to believe.
"""

from __future__ import annotations

from disksleuth.analysis.ceilings import pcie_label, pcie_mbps
from disksleuth.model import BoardPeer, ChipsetUplink, Finding, PcieHop, Slot

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


# --- who shares a chipset uplink (the behind_chipset finding's words) ---------------------------------

DMI_UPLINKS = "DMI 2.0 ≈ 2,000 MB/s, DMI 3.0 ≈ 3,900 MB/s"
# PCI class (include/linux/pci_ids.h) -> what to call a function that shares the uplink.
_PEER_SUBCLASS = {
    0x0106: "SATA controller",
    0x0104: "RAID controller",
    0x0107: "SAS controller",
    0x0108: "NVMe drive",
    0x0C03: "USB controller",
}
_PEER_CLASS = {0x01: "storage controller", 0x02: "network controller"}
_MAX_NAMED = 6  # peers named in a sentence; the evidence lists them all


def _peer_kind(class_code: int | None) -> str:
    if class_code is None:
        return "device"
    return _PEER_SUBCLASS.get(class_code >> 8) or _PEER_CLASS.get(class_code >> 16, "device")


def peer_phrase(peer: BoardPeer) -> str:
    """'the SATA controller at 0000:00:17.0'; 'slot PCIEX1_1 (network controller 0000:03:00.0)'."""
    if peer.slot is not None:
        return f"slot {peer.slot.name} ({_peer_kind(peer.class_code)} {peer.bdf})"
    return f"the {_peer_kind(peer.class_code)} at {peer.bdf}"


def _cpu_slot_phrase(peer: BoardPeer) -> str:
    name = slot_name(peer.slot) if peer.slot is not None else peer.bdf
    if peer.root_port and peer.bdf != peer.root_port:
        return f"{name} (root port {peer.root_port}, holding {peer.bdf})"
    return f"{name} (root port {peer.root_port or peer.bdf})"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def uplink_phrase(uplink: ChipsetUplink) -> str:
    """The chipset's link to the CPU, as far as the tree shows it."""
    if uplink.chipset == "pcie" and uplink.uplink_port:
        label = pcie_label(uplink.uplink_speed_gtps, uplink.uplink_width)
        _, mbps = pcie_mbps(uplink.uplink_speed_gtps, uplink.uplink_width)
        speed = f", ~{mbps:,.0f} MB/s" if mbps else ""
        return f"{label} from the CPU's root port {uplink.uplink_port}{speed}"
    # Intel: DMI is no PCIe link sysfs shows; which generation a board has is in no file read here.
    return f"DMI on Intel: {DMI_UPLINKS}, by chipset generation"


def chipset_sharing(hops: list[PcieHop], uplink: ChipsetUplink | None) -> tuple[str | None, str | None]:
    """Who shares the uplink (a sentence for the message) and where a drive would not (one for the hint);
    None where the tree names nothing. Never which lanes a slot shares with SATA ports: no source here says."""
    if uplink is None:
        return None, None
    slot = next((h.slot for h in hops if names_physical_slot(h.slot)), None)
    who = slot.name if slot is not None else "This drive"
    shared = None
    if uplink.peers:
        named = [peer_phrase(p) for p in uplink.peers[:_MAX_NAMED]]
        if len(uplink.peers) > _MAX_NAMED:
            named.append(f"{len(uplink.peers) - _MAX_NAMED} more")
        shared = (
            f"{who} is behind the chipset: it shares the chipset's one uplink to the CPU "
            f"({uplink_phrase(uplink)}) with {_and(named)}."
        )
    cpu = None
    if uplink.cpu_slots:
        wired = [_cpu_slot_phrase(p) for p in uplink.cpu_slots[:_MAX_NAMED]]
        verb = "is" if len(wired) == 1 else "are"
        cpu = (
            f"{_and(wired)} {verb} wired to the CPU: a drive there does not share the chipset's uplink "
            "(the board manual's block diagram says what each slot shares and whether this drive fits there)."
        )
    return shared, cpu


def chipset_summary(uplink: ChipsetUplink, member: BoardPeer) -> str:
    """`links`: one line per chipset, from one function behind it (`member`) and the peers it shares with."""
    everyone = sorted({p.bdf: p for p in (member, *uplink.peers)}.values(), key=lambda p: p.bdf)
    line = (
        f"behind the chipset, sharing one uplink to the CPU ({uplink_phrase(uplink)}): "
        f"{_and([peer_phrase(p) for p in everyone])}."
    )
    if uplink.cpu_slots:
        line += f" Wired to the CPU: {_and([_cpu_slot_phrase(p) for p in uplink.cpu_slots])}."
    return line
