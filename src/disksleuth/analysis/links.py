"""Static link findings, from the link chain alone (pure). Codes and severities: DESIGN.md "Verdicts"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from disksleuth.analysis.card_claims import card_static_findings
from disksleuth.analysis.ceilings import (
    pcie_capable,
    pcie_fact,
    pcie_label,
    pcie_mbps,
    sata_mbps,
    usb_mbps,
    usb_version_label,
)
from disksleuth.analysis.slots import (
    DMI_UPLINKS,
    chipset_sharing,
    names_physical_slot,
    slot_firmware_mismatch,
    slot_phrase,
)
from disksleuth.model import ChipsetUplink, Device, Finding, PcieHop, SataHop, UsbHop


def _mb(v: float | None) -> str:
    return f"{v:,.0f} MB/s" if v is not None else "unknown"


def port_phrase(hop: PcieHop) -> str:
    if hop.port is None:  # pasted text without the bridge above it (lspci -s): which port is not known
        port = "port above it (not in the paste)"
    else:
        port = f"root port {hop.port}" if hop.port_is_root else f"switch port {hop.port}"
    if hop.slot is not None and names_physical_slot(hop.slot):
        # "the slot marked PCIEX16_2 (root port 0000:00:1c.4)": what to look for on the board, and where
        return f"{slot_phrase(hop.slot)} ({port})"
    return f"the {port}"


def static_findings(device: Device) -> list[Finding]:
    pcie = [h for h in device.hops if isinstance(h, PcieHop)]
    candidates: list[Finding | None] = [_link_downgraded(h) for h in pcie]
    candidates.append(slot_limited(pcie))
    candidates.extend(slot_firmware_mismatch(h) for h in pcie)
    for hop in device.hops:
        if isinstance(hop, UsbHop):
            candidates.extend(_usb_findings(hop))
        elif isinstance(hop, SataHop):
            candidates.append(sata_link_finding(hop))
    candidates.append(behind_chipset(pcie, device.chipset_uplink))
    candidates.extend(card_static_findings(device))  # an SD card's or eMMC's own claims and wear (issue 39)
    return [replace(f, device=device.name) for f in candidates if f is not None]


def _link_downgraded(hop: PcieHop) -> Finding | None:
    cap_speed, cap_width = pcie_capable(hop)
    slow = hop.speed_gtps is not None and cap_speed is not None and hop.speed_gtps < cap_speed
    narrow = hop.width is not None and cap_width is not None and hop.width < cap_width
    if not (slow or narrow):
        return None
    now_label = pcie_label(hop.speed_gtps, hop.width)
    cap_label = pcie_label(cap_speed, cap_width)
    _, now_mbps = pcie_mbps(hop.speed_gtps, hop.width)
    _, cap_mbps = pcie_mbps(cap_speed, cap_width)
    what = " and ".join(w for w, flag in (("speed", slow), ("width", narrow)) if flag)
    hint = (
        "Reseat the drive or card and check any riser or adapter cable; try another slot. "
        "Check the BIOS for the slot's link speed, bandwidth or lane-sharing (bifurcation) setting."
    )
    if slow and not narrow:
        hint += (
            " A lower speed can also be signal integrity on long traces or risers, power saving at idle "
            "(check again under load), or thermal link-speed cooling "
            "(/sys/class/thermal/cooling_device*/type = PCIe_Port_Link_Speed)."
        )
    return Finding(
        code="link_downgraded",
        severity="warn",
        message=(
            f"The PCIe link from {port_phrase(hop)} to {hop.name} runs at {now_label}"
            + (f" (~{_mb(now_mbps)})" if now_mbps is not None else "")  # a LnkSta cut before its width
            + f", but both ends support {cap_label}"
            + (f" (~{_mb(cap_mbps)})" if cap_mbps is not None else "")
            + f": the link {what} was negotiated down."
        ),
        evidence={
            "port": hop.port,
            "function": hop.name,
            "speed_gtps": hop.speed_gtps,
            "width": hop.width,
            "capable_speed_gtps": cap_speed,
            "capable_width": cap_width,
            "current_mbps": _round(now_mbps),
            "capable_mbps": _round(cap_mbps),
            **({"slot": hop.slot.name} if hop.slot is not None else {}),
        },
        hint=hint,
    )


def slot_limited(pcie: Sequence[PcieHop]) -> Finding | None:
    """The device can do more than the best the path to the CPU can carry (its port, or a switch or
    bridge further up). `list` (a block device's hops) and `links` (a PCI function's path) both ask here."""
    if not pcie:
        return None
    endpoint = pcie[0]  # device first
    if endpoint.is_bridge or endpoint.max_speed_gtps is None or endpoint.max_width is None:
        return None
    _, device_mbps = pcie_mbps(endpoint.max_speed_gtps, endpoint.max_width)
    path = []
    for hop in pcie:
        cap_speed, cap_width = pcie_capable(hop)
        _, cap_mbps = pcie_mbps(cap_speed, cap_width)
        if cap_mbps is not None:
            path.append((cap_mbps, cap_speed, cap_width, hop))
    if device_mbps is None or not path:
        return None
    path_mbps, cap_speed, cap_width, limiting = min(path, key=lambda p: p[0])
    if path_mbps >= device_mbps * 0.999:
        return None
    device_label = pcie_label(endpoint.max_speed_gtps, endpoint.max_width)
    offered = pcie_label(cap_speed, cap_width)
    where = _limiting_end(limiting)
    if cap_width is not None and cap_width < endpoint.max_width:
        hint = (
            f"{where[0].upper()}{where[1:]} offers only x{cap_width}. If the slot is physically wider, "
            "check the BIOS for a slot bandwidth, slot mode or lane-sharing setting: lanes shared with USB 3, "
            "SATA ports or another M.2/PCIe slot are common. Otherwise move the drive to a slot wired to the CPU."
        )
    else:
        hint = (
            f"{where[0].upper()}{where[1:]} is an older PCIe generation than the drive. This is a design "
            "limit, not a fault: a CPU-attached slot of the drive's generation would lift it."
        )
    return Finding(
        code="slot_limited",
        severity="info",
        message=(
            f"The drive supports {device_label} (~{_mb(device_mbps)}), but {where} "
            f"offers only {offered} (~{_mb(path_mbps)}). {pcie_fact(cap_speed, cap_width) or ''}".strip()
        ),
        evidence={
            "device_max": device_label,
            "device_max_mbps": _round(device_mbps),
            "path_capable": offered,
            "path_capable_mbps": _round(path_mbps),
            "limiting_port": limiting.port,
            "port_max_speed_gtps": limiting.port_max_speed_gtps,
            "port_max_width": limiting.port_max_width,
            **({"slot": limiting.slot.name} if limiting.slot is not None else {}),
        },
        hint=hint,
    )


def _limiting_end(hop: PcieHop) -> str:
    """Which end of a link sets its capability: the port, or a switch's own upstream port."""

    def below(a: float | None, b: float | None) -> bool:
        return a is not None and b is not None and a < b

    if hop.is_bridge and (
        below(hop.max_width, hop.port_max_width) or below(hop.max_speed_gtps, hop.port_max_speed_gtps)
    ):
        return f"the switch upstream port {hop.name}"
    return port_phrase(hop)


def _usb_findings(hop: UsbHop) -> list[Finding]:
    out = []
    label, _, ceiling = usb_mbps(hop.speed_mbps, hop.driver)
    if hop.speed_mbps is not None and hop.speed_mbps <= 480:
        device_usb3 = (hop.device_max_mbps or 0) >= 5000
        host_usb3 = (hop.host_max_mbps or 0) >= 5000
        msg = f"USB device {hop.name} is attached at {hop.speed_mbps:g} Mb/s ({label}), ~{_mb(ceiling)} at best."
        if device_usb3:
            msg += f" The device itself is {usb_version_label(hop.version)} and could run at 5 Gb/s or more."
        hint = (
            "Plug it into a USB 3 port (blue or teal, or marked SS) with a USB 3 cable, and avoid USB 2 hubs "
            "and extension leads."
        )
        if not host_usb3:
            hint += " This host controller has no USB 3 root hub: a USB 3 card or another port is needed."
        out.append(
            Finding(
                code="usb2_link",
                severity="warn",
                message=msg,
                evidence={
                    "usb_device": hop.name,
                    "speed_mbps": hop.speed_mbps,
                    "device_usb_version": hop.version,
                    "host_max_mbps": hop.host_max_mbps,
                    "ceiling_mbps": ceiling,
                },
                hint=hint,
            )
        )
    if hop.driver == "usb-storage" and hop.speed_mbps is not None and hop.speed_mbps >= 5000:
        _, _, uas = usb_mbps(hop.speed_mbps, "uas")
        out.append(
            Finding(
                code="usb_bot",
                severity="info",
                message=(
                    f"USB device {hop.name} uses the usb-storage (Bulk-Only Transport) driver on a "
                    f"{hop.speed_mbps:g} Mb/s link: ~{_mb(ceiling)} instead of ~{_mb(uas)} with UAS, "
                    "and one command at a time, which hurts random I/O."
                ),
                evidence={
                    "usb_device": hop.name,
                    "driver": hop.driver,
                    "speed_mbps": hop.speed_mbps,
                    "bot_ceiling_mbps": ceiling,
                    "uas_ceiling_mbps": uas,
                },
                hint=(
                    "Use a UAS-capable enclosure or adapter. If the bridge supports UAS but a quirk disabled it, "
                    "check `usb-storage.quirks` on the kernel command line and dmesg for 'UAS is ignored'."
                ),
            )
        )
    return out


def sata_link_finding(hop: SataHop) -> Finding | None:
    """sata_spd below the port's hw limit. Warn when the drive is known to do more, info when its
    maximum is unknown, nothing when the drive itself is the limit."""
    now, port_max, drive_max = hop.sata_spd_gbps, hop.hw_sata_spd_limit_gbps, hop.drive_max_gbps
    if now is None or port_max is None or now >= port_max:
        return None
    if drive_max is not None and drive_max <= now:
        return None
    severity = "warn" if drive_max is not None else "info"
    _, now_mbps = sata_mbps(now)
    best = min(port_max, drive_max) if drive_max is not None else port_max
    _, best_mbps = sata_mbps(best)
    drive_txt = (
        f"the drive supports {drive_max:g} Gb/s" if drive_max is not None else "the drive's own maximum is unknown"
    )
    limit_txt = ""
    if hop.sata_spd_limit_gbps is not None and hop.sata_spd_limit_gbps <= now:
        limit_txt = f" A speed limit of {hop.sata_spd_limit_gbps:g} Gb/s is set on {hop.name} (libata.force?)."
    return Finding(
        code="sata_link_downgraded",
        severity=severity,
        message=(
            f"SATA {hop.name} ({hop.port}) runs at {now:g} Gb/s (~{_mb(now_mbps)}) on a {port_max:g} Gb/s "
            f"port; {drive_txt}.{limit_txt}"
        ),
        evidence={
            "link": hop.name,
            "sata_spd_gbps": now,
            "hw_sata_spd_limit_gbps": port_max,
            "sata_spd_limit_gbps": hop.sata_spd_limit_gbps,
            "drive_max_gbps": drive_max,
            "current_mbps": _round(now_mbps),
            "capable_mbps": _round(best_mbps),
        },
        hint=(
            "Replace the SATA cable (CRC errors in SMART point the same way), try another port, and check for a "
            "libata.force speed limit on the kernel command line."
        ),
    )


def behind_chipset(pcie: list[PcieHop], uplink: ChipsetUplink | None = None) -> Finding | None:
    chipset = [h for h in pcie if h.port_is_chipset]
    if not chipset:
        return None
    hop = chipset[-1]  # nearest the CPU
    shared, cpu = chipset_sharing(pcie, uplink)
    message = f"The path crosses the chipset at {hop.port}. " + (
        shared
        or f"Everything behind the chipset (SATA, USB, network, other slots) shares one uplink to the CPU "
        f"({DMI_UPLINKS} on Intel)."
    )
    hint = (
        "For the best sequential figures use a CPU-attached M.2 slot or PCIe slot (see the board manual's "
        "block diagram); traffic on other chipset devices lowers this drive's throughput."
    )
    if cpu:
        hint = f"{cpu} Traffic on the other chipset devices lowers this drive's throughput."
    evidence: dict[str, object] = {
        "chipset_port": hop.port,
        "port_vendor_device": hop.port_vendor_device,
        "uplinks": DMI_UPLINKS,
    }
    if uplink is not None:
        evidence |= {
            "uplink_port": uplink.uplink_port,
            "uplink_speed_gtps": uplink.uplink_speed_gtps,
            "uplink_width": uplink.uplink_width,
            "shares_uplink_with": [p.bdf for p in uplink.peers],
            "cpu_slots": [p.slot.name for p in uplink.cpu_slots if p.slot is not None],
        }
    return Finding(code="behind_chipset", severity="info", message=message, evidence=evidence, hint=hint)


def _round(v: float | None) -> float | None:
    return round(v, 1) if v is not None else None
