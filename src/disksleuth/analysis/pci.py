"""Link status of each PCI function for `links` (pure)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from disksleuth.analysis.ceilings import pcie_label, pcie_mbps
from disksleuth.analysis.links import behind_chipset, slot_limited
from disksleuth.model import Finding
from disksleuth.model.run import PciFunction

# include/linux/pci_ids.h base classes, for a readable kind without pci.ids.
PCI_CLASS_NAMES = {
    0x01: "storage",
    0x02: "network",
    0x03: "display",
    0x04: "multimedia",
    0x06: "bridge",
    0x0C: "serial bus",
    0x0D: "wireless",
    0x12: "accelerator",
}
PCI_SUBCLASS_NAMES = {
    0x0108: "NVMe",
    0x0106: "SATA",
    0x0107: "SAS",
    0x0104: "RAID",
    0x0C03: "USB",
    0x0604: "PCI bridge",
    0x0200: "Ethernet",
    0x0280: "network",
    0x0207: "InfiniBand",
}


@dataclass(frozen=True)
class LinkStatus:
    fn: PciFunction
    kind: str
    current: str | None
    capable: str | None  # best both ends support (own LnkCap for ports)
    current_mbps: float | None
    capable_mbps: float | None
    downgraded: bool
    port_limited: bool  # the function could do more than its upstream port offers
    # slot_limited (DESIGN.md verdicts): an endpoint that could do more than the whole path to the CPU
    # carries, judged by the same function as `list`'s finding; None otherwise.
    slot_limited: Finding | None = None
    # behind_chipset (info): an endpoint whose path crosses the chipset, with who shares its uplink.
    behind_chipset: Finding | None = None


def class_name(class_code: int | None) -> str:
    if class_code is None:
        return "unknown"
    return PCI_SUBCLASS_NAMES.get(class_code >> 8) or PCI_CLASS_NAMES.get(class_code >> 16, f"class {class_code:06x}")


def link_status(fn: PciFunction) -> LinkStatus:
    has_link = fn.speed_gtps is not None or fn.max_speed_gtps is not None
    current = pcie_label(fn.speed_gtps, fn.width) if has_link else None
    _, current_mbps = pcie_mbps(fn.speed_gtps, fn.width)
    faces_up = fn.role in ("endpoint", "upstream_port") and fn.parent is not None
    partner_speed = fn.parent_max_speed_gtps if faces_up else None
    partner_width = fn.parent_max_width if faces_up else None
    cap_speed = (
        min(v for v in (fn.max_speed_gtps, partner_speed) if v is not None)
        if (fn.max_speed_gtps or partner_speed)
        else None
    )
    cap_width = (
        min(v for v in (fn.max_width, partner_width) if v is not None) if (fn.max_width or partner_width) else None
    )
    _, capable_mbps = pcie_mbps(cap_speed, cap_width)
    downgraded = faces_up and (
        (fn.speed_gtps is not None and cap_speed is not None and fn.speed_gtps < cap_speed)
        or (fn.width is not None and cap_width is not None and fn.width < cap_width)
    )
    _, own_mbps = pcie_mbps(fn.max_speed_gtps, fn.max_width)
    port_limited = bool(faces_up and own_mbps and capable_mbps and capable_mbps < own_mbps * 0.999)
    return LinkStatus(
        fn=fn,
        kind=class_name(fn.class_code),
        current=current,
        capable=pcie_label(cap_speed, cap_width) if has_link else None,
        current_mbps=round(current_mbps, 1) if current_mbps else None,
        capable_mbps=round(capable_mbps, 1) if capable_mbps else None,
        downgraded=downgraded,
        port_limited=port_limited,
        slot_limited=slot_limited(fn.path) if fn.role == "endpoint" else None,
        behind_chipset=behind_chipset(list(fn.path), fn.chipset_uplink) if fn.role == "endpoint" else None,
    )


def pasted_link_status(fn: PciFunction, chain_known: bool) -> LinkStatus:
    """link_status for a function read from pasted lspci text. Pasted alone (`lspci -s`, the bridge above not in
    the paste), its link is judged against its own LnkCap, as lspci's own "(downgraded)" tag is; the port's
    limit stays unknown, so it is never called port-limited."""
    status = link_status(fn)
    if chain_known or fn.parent is not None or fn.role not in ("endpoint", "upstream_port"):
        return status
    slower = fn.speed_gtps is not None and fn.max_speed_gtps is not None and fn.speed_gtps < fn.max_speed_gtps
    narrower = fn.width is not None and fn.max_width is not None and fn.width < fn.max_width
    downgraded = slower or narrower
    return replace(status, downgraded=downgraded)
