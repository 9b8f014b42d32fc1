"""Who shares a drive's chipset uplink, from the PCI tree alone (pure over functions probe.block read).

A chipset (Intel's PCH, AMD's Promontory) reaches the CPU over one link: Intel's DMI, which sysfs does not
show, or on AMD a PCIe link from a CPU root port to the chipset's switch. Everything behind it shares that
link: the drive, the chipset's SATA and USB controllers, and whatever sits in the chipset's other slots.
The tree says which functions those are, and which named slots hang from the CPU's own root ports. It does
not say which lanes a board muxes between a slot and SATA ports (that is in the board manual only), so
nothing here claims it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from disksleuth.model import BoardPeer, ChipsetUplink, PcieHop, Slot

_MAX_PEERS = 32
# Intel puts the PCH's own functions at device numbers 10h-1Fh of the root bus (xHCI 14h, SATA 17h, root
# ports 1Bh-1Dh, LPC/GbE 1Fh; a server PCH's sSATA at 11h); the CPU's at 00h-0Fh (host bridge, PEG and
# CPU root ports, graphics, VMD).
_INTEL_PCH_FIRST_DEVICE = 0x10


@dataclass(frozen=True)
class BoardFn:
    """One PCI function of the machine, as the uplink question needs it."""

    bdf: str
    vendor_device: str | None
    class_code: int | None
    is_bridge: bool
    top_level: bool  # on a root bus: a root port, or a function integrated in the root complex
    is_chipset_port: bool  # a root port that is the chipset's (Intel PCH)
    hops: tuple[PcieHop, ...]  # its path to the CPU, its own link first (probe.block.pcie_hops)
    own_slot: Slot | None = None  # an SMBIOS slot the firmware addresses at this function itself


def moves_data(class_code: int | None) -> bool:
    """Storage, network and USB controllers: what puts traffic on the uplink (include/linux/pci_ids.h)."""
    if class_code is None:
        return False
    return class_code >> 16 in (0x01, 0x02) or class_code >> 8 == 0x0C03


def _physical(slot: Slot | None) -> Slot | None:
    return slot if slot is not None and slot.source in ("smbios", "pci_slot") else None


def _root_bus(bdf: str) -> str:
    return bdf.rsplit(":", 1)[0].lower()  # "0000:00"


def _device_number(bdf: str) -> int | None:
    try:
        return int(bdf.rsplit(":", 1)[1].split(".")[0], 16)
    except (IndexError, ValueError):
        return None


def uplink_key(hops: Sequence[PcieHop]) -> tuple[str, str] | None:
    """Which chipset uplink a path crosses: ("intel_pch", its root bus) or ("pcie", the CPU root port the
    chipset hangs from); None when the path crosses no chipset."""
    chipset = [h for h in hops if h.port_is_chipset]
    if not chipset or hops[-1].port is None:
        return None
    nearest_cpu = chipset[-1]
    if nearest_cpu.port_is_root and (nearest_cpu.port_vendor_device or "").startswith("8086:"):
        return ("intel_pch", _root_bus(nearest_cpu.port or ""))
    return ("pcie", hops[-1].port.lower())


def _own_slot(fn: BoardFn) -> Slot | None:
    own = [h for h in fn.hops[:1] if h.name.lower() == fn.bdf.lower()]
    return _physical(own[0].slot) if own else None


def _key_of(fn: BoardFn, intel_buses: set[str]) -> tuple[str, str] | None:
    key = uplink_key(fn.hops)
    if key is not None:
        return key
    bus = _root_bus(fn.bdf)
    device = _device_number(fn.bdf)
    if (
        fn.top_level
        and not fn.is_bridge
        and bus in intel_buses
        and (fn.vendor_device or "").startswith("8086:")
        and device is not None
        and device >= _INTEL_PCH_FIRST_DEVICE
    ):
        return ("intel_pch", bus)
    return None


def chipset_uplink(hops: Sequence[PcieHop], board: Iterable[BoardFn]) -> ChipsetUplink | None:
    """The drive whose path is `hops` (device first): what else shares its chipset uplink, and the named
    slots wired to the CPU. None when the path crosses no chipset."""
    key = uplink_key(hops)
    if key is None:
        return None
    fns = list(board)
    own = {h.name.lower() for h in hops} | {(h.port or "").lower() for h in hops}
    own_devices = {h.name.lower().rsplit(".", 1)[0] for h in hops}  # other functions of the drive's device
    intel_buses = {key[1]} if key[0] == "intel_pch" else set()
    peers: list[BoardPeer] = []
    cpu_slots: dict[str, BoardPeer] = {}
    for fn in fns:
        bdf = fn.bdf.lower()
        slot = _own_slot(fn)
        mine = bdf in own or bdf.rsplit(".", 1)[0] in own_devices
        if not fn.is_bridge and not mine and _key_of(fn, intel_buses) == key and (moves_data(fn.class_code) or slot):
            peers.append(BoardPeer(fn.bdf, fn.class_code, slot, fn.hops[-1].port if fn.hops else None))
        cpu_path = bool(fn.hops) and fn.hops[-1].port_is_root and not any(h.port_is_chipset for h in fn.hops)
        if slot is not None and cpu_path:
            known = cpu_slots.get(slot.name)
            if known is None or known.bdf == known.root_port:  # what is in the slot, over its empty port
                cpu_slots[slot.name] = BoardPeer(fn.bdf, fn.class_code, slot, fn.hops[-1].port)
        rp_slot = _physical(fn.own_slot)
        if fn.top_level and fn.is_bridge and not fn.is_chipset_port and rp_slot is not None:
            cpu_slots.setdefault(rp_slot.name, BoardPeer(fn.bdf, None, rp_slot, fn.bdf))
    uplink = hops[-1] if key[0] == "pcie" else None
    return ChipsetUplink(
        chipset=key[0],
        uplink_port=uplink.port if uplink else None,
        uplink_speed_gtps=uplink.speed_gtps if uplink else None,
        uplink_width=uplink.width if uplink else None,
        peers=tuple(sorted(peers, key=lambda p: p.bdf)[:_MAX_PEERS]),
        cpu_slots=tuple(sorted(cpu_slots.values(), key=lambda p: p.slot.name if p.slot else "")[:_MAX_PEERS]),
    )
