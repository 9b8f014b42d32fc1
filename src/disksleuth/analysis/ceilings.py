"""Usable bandwidth of each hop and of the whole chain (pure). MB = 10^6 bytes.

Facts (DESIGN.md "The link chain and its ceilings"):
  PCIe 1/2: 2.5/5 GT/s per lane, 8b/10b         -> 250/500 MB/s per lane
  PCIe 3/4/5: 8/16/32 GT/s per lane, 128b/130b  -> 984.6/1969.2/3938.5 MB/s per lane
  PCIe 6: 64 GT/s PAM4, FLIT mode 242/256        -> 7562.5 MB/s per lane (PCIe 6.0 spec, FLIT)
  Practical PCIe: x0.9 for TLP/DLLP overhead with 128-256 B payloads (Gen3 x4 NVMe ~ 3500).
  USB 2.0: 480 Mb/s, bulk max 13 x 512 B per 125 us microframe = 53.2 MB/s; 30-42 measured -> 40.
  USB 5 Gb/s: 8b/10b -> 500 MB/s; ~400 with UAS, ~280 with BOT (usb-storage).
  USB 10 Gb/s: 128b/132b -> 1212 MB/s; ~1050.
  SATA 1.5/3/6 Gb/s: 8b/10b -> 150/300/600 MB/s; x0.95 practical (~560 for the best 6G SSDs).
  SD bus: DS 12.5, HS 25, SDR12 12.5, SDR25 25, SDR50 50, DDR50 50, SDR104 104 MB/s (4-bit bus).
  eMMC: HS (52 MHz) 52, DDR52 104, HS200 200, HS400 400 MB/s (8-bit bus; JEDEC JESD84).
"""

from __future__ import annotations

from typing import TypeVar

from disksleuth.model import Hop, HopCeiling, LinkChain, MmcHop, PcieHop, SataHop, UsbHop, VirtualHop

PCIE_PRACTICAL_FACTOR = 0.9
SATA_PRACTICAL_FACTOR = 0.95

# GT/s per lane -> (generation label, encoding, encoded MB/s per lane)
PCIE_RATES: dict[float, tuple[str, str, float]] = {
    2.5: ("1.0", "8b/10b", 250.0),
    5.0: ("2.0", "8b/10b", 500.0),
    8.0: ("3.0", "128b/130b", 984.6),
    16.0: ("4.0", "128b/130b", 1969.2),
    32.0: ("5.0", "128b/130b", 3938.5),
    64.0: ("6.0", "FLIT 242/256", 7562.5),
}

# USB speed in Mb/s -> (label, encoded MB/s, practical UAS MB/s, practical BOT MB/s).
# SuperSpeed labels use the USB-IF names with the rate beside them ("USB 3.2 Specification Language
# Usage Guidelines", usb.org, 2019): USB 3.2 Gen 1 = 5 Gb/s (once "USB 3.0", then "USB 3.1 Gen 1"),
# Gen 2 = 10 Gb/s, Gen 2x2 = 20 Gb/s.
USB_RATES: dict[float, tuple[str, float, float, float]] = {
    1.5: ("USB 1.x low speed", 0.19, 0.15, 0.15),
    12.0: ("USB 1.1 12 Mb/s", 1.2, 1.0, 1.0),
    480.0: ("USB 2.0 480 Mb/s", 53.2, 40.0, 40.0),
    5000.0: ("USB 3.2 Gen 1 (5 Gb/s)", 500.0, 400.0, 280.0),
    10000.0: ("USB 3.2 Gen 2 (10 Gb/s)", 1212.0, 1050.0, 1050.0),
    # Not in the facts table: two 10 Gb/s lanes (USB 3.2 Gen 2x2), scaled from the 10 Gb/s row.
    20000.0: ("USB 3.2 Gen 2x2 (20 Gb/s)", 2424.0, 2100.0, 2100.0),
}

# A device's bcdUSB (sysfs `version`, e.g. " 3.10") names the spec release it follows, not its rate:
# a "USB 3.1" device may be Gen 1 (5 Gb/s) or Gen 2 (10 Gb/s). Same usb.org guidelines as above;
# 2.01/2.10 are USB 2.0 devices with a BOS descriptor (USB 2.0 LPM ECN).
USB_VERSION_NAMES: dict[str, str] = {
    "1.00": "USB 1.0 (12 Mb/s)",
    "1.10": "USB 1.1 (12 Mb/s)",
    "2.00": "USB 2.0 (480 Mb/s)",
    "2.01": "USB 2.0 (480 Mb/s)",
    "2.10": "USB 2.0 (480 Mb/s)",
    "3.00": "USB 3.2 Gen 1 (5 Gb/s)",
    "3.10": "USB 3.2 Gen 1 or Gen 2 (5 or 10 Gb/s)",
    "3.20": "USB 3.2 Gen 1, Gen 2 or Gen 2x2 (5 to 20 Gb/s)",
}


def usb_version_label(version: str | None) -> str:
    """bcdUSB as people know it: "3.10" -> "USB 3.2 Gen 1 or Gen 2 (5 or 10 Gb/s)", never "USB 3.10"."""
    if not version:
        return "USB (version unknown)"
    v = version.strip()
    return USB_VERSION_NAMES.get(v) or f"USB (bcdUSB {v})"


def sata_label(gbps: float) -> str:
    """ "SATA 3 Gb/s link", not "SATA 3.0 Gb/s": SATA revision 3.0 is the 6 Gb/s one (SATA-IO naming:
    revision 1.0 = 1.5 Gb/s, 2.0 = 3 Gb/s, 3.0 = 6 Gb/s), so "SATA 3.0" reads as the wrong thing."""
    return f"SATA {gbps:g} Gb/s link"

# debugfs ios timing names (drivers/mmc/core/debugfs.c) -> (label, MB/s at full bus width, width)
MMC_TIMINGS: dict[str, tuple[str, float, int]] = {
    "legacy": ("SD default speed", 12.5, 4),
    "sd high-speed": ("SD high speed", 25.0, 4),
    "sd uhs SDR12": ("SD UHS-I SDR12", 12.5, 4),
    "sd uhs SDR25": ("SD UHS-I SDR25", 25.0, 4),
    "sd uhs SDR50": ("SD UHS-I SDR50", 50.0, 4),
    "sd uhs DDR50": ("SD UHS-I DDR50", 50.0, 4),
    "sd uhs SDR104": ("SD UHS-I SDR104", 104.0, 4),
    "mmc high-speed": ("eMMC high speed", 52.0, 8),
    "mmc DDR52": ("eMMC DDR52", 104.0, 8),
    "mmc HS200": ("eMMC HS200", 200.0, 8),
    "mmc high-speed SDR200": ("eMMC HS200", 200.0, 8),  # name used before Linux 4.x
    "mmc HS400": ("eMMC HS400", 400.0, 8),
    "mmc high-speed HS400": ("eMMC HS400", 400.0, 8),
    "mmc HS400 enhanced strobe": ("eMMC HS400ES", 400.0, 8),
}


def pcie_generation(speed_gtps: float | None) -> str | None:
    rate = PCIE_RATES.get(speed_gtps) if speed_gtps is not None else None
    return rate[0] if rate else None


def pcie_label(speed_gtps: float | None, width: int | None) -> str:
    gen = pcie_generation(speed_gtps)
    speed = f"PCIe {gen}" if gen else ("PCIe (speed unknown)" if speed_gtps is None else f"PCIe {speed_gtps:g} GT/s")
    return f"{speed} x{width}" if width else f"{speed} (width unknown)"


def pcie_mbps(speed_gtps: float | None, width: int | None) -> tuple[float | None, float | None]:
    """(encoded, practical) MB/s of a PCIe link, or (None, None) when unknown."""
    if speed_gtps is None or not width:
        return None, None
    rate = PCIE_RATES.get(speed_gtps)
    if rate is None:
        return None, None
    encoded = rate[2] * width
    return encoded, encoded * PCIE_PRACTICAL_FACTOR


def pcie_fact(speed_gtps: float | None, width: int | None) -> str | None:
    rate = PCIE_RATES.get(speed_gtps) if speed_gtps is not None else None
    if rate is None or not width:
        return None
    gen, encoding, per_lane = rate
    return (
        f"PCIe {gen} = {speed_gtps:g} GT/s, {encoding}, {per_lane:,.0f} MB/s per lane, "
        f"~{per_lane * width * PCIE_PRACTICAL_FACTOR:,.0f} MB/s usable on x{width}"
    )


_Number = TypeVar("_Number", int, float)


def _min_known(*values: _Number | None) -> _Number | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def pcie_capable(hop: PcieHop) -> tuple[float | None, int | None]:
    """Best speed and width both ends of the link support."""
    return (
        _min_known(hop.max_speed_gtps, hop.port_max_speed_gtps),
        _min_known(hop.max_width, hop.port_max_width),
    )


def usb_mbps(speed_mbps: float | None, driver: str | None) -> tuple[str, float | None, float | None]:
    if speed_mbps is None:
        return "USB (speed unknown)", None, None
    rate = USB_RATES.get(speed_mbps)
    if rate is None:
        return f"USB {speed_mbps:g} Mb/s", None, None
    label, encoded, uas, bot = rate
    return label, encoded, bot if driver == "usb-storage" else uas


def sata_mbps(gbps: float | None) -> tuple[float | None, float | None]:
    if gbps is None:
        return None, None
    encoded = gbps * 100.0  # 8b/10b: 10 line bits per byte
    return encoded, encoded * SATA_PRACTICAL_FACTOR


def mmc_mbps(timing: str | None, bus_width_bits: int | None) -> tuple[str, float | None]:
    if timing is None or timing not in MMC_TIMINGS:
        return ("MMC/SD (bus timing unknown)" if timing is None else f"MMC/SD {timing}"), None
    label, full_mbps, full_width = MMC_TIMINGS[timing]
    width = bus_width_bits or full_width
    return f"{label} ({width}-bit)", full_mbps * min(width, full_width) / full_width


def hop_ceiling(hop: Hop) -> HopCeiling:
    if isinstance(hop, PcieHop):
        encoded, practical = pcie_mbps(hop.speed_gtps, hop.width)
        cap_speed, cap_width = pcie_capable(hop)
        _, cap_practical = pcie_mbps(cap_speed, cap_width)
        return HopCeiling(
            hop=hop,
            label=pcie_label(hop.speed_gtps, hop.width),
            encoded_mbps=encoded,
            current_mbps=practical,
            capable_mbps=_max_known(cap_practical, practical),
            capable_label=pcie_label(cap_speed, cap_width) if cap_speed or cap_width else None,
            fact=pcie_fact(hop.speed_gtps, hop.width),
        )
    if isinstance(hop, UsbHop):
        label, encoded, practical = usb_mbps(hop.speed_mbps, hop.driver)
        best = _min_known(hop.device_max_mbps, hop.host_max_mbps)
        cap_label, _, cap_practical = usb_mbps(best, hop.driver)
        driver = f", {hop.driver}" if hop.driver else ""
        return HopCeiling(
            hop=hop,
            label=label + driver,
            encoded_mbps=encoded,
            current_mbps=practical,
            capable_mbps=_max_known(cap_practical, practical),
            capable_label=cap_label + driver if best else None,
            fact=f"{label}: {encoded:g} MB/s after encoding, ~{practical:g} MB/s in practice{driver}"
            if encoded and practical
            else None,
        )
    if isinstance(hop, SataHop):
        encoded, practical = sata_mbps(hop.sata_spd_gbps)
        best = _min_known(hop.hw_sata_spd_limit_gbps, hop.drive_max_gbps)
        _, cap_practical = sata_mbps(best)
        label = sata_label(hop.sata_spd_gbps) if hop.sata_spd_gbps else "SATA (speed unknown)"
        return HopCeiling(
            hop=hop,
            label=label,
            encoded_mbps=encoded,
            current_mbps=practical,
            capable_mbps=_max_known(cap_practical, practical),
            capable_label=sata_label(best) if best else None,
            fact=f"{label}, 8b/10b = {encoded:g} MB/s, ~{practical:g} MB/s usable" if encoded else None,
        )
    if isinstance(hop, MmcHop):
        label, mbps = mmc_mbps(hop.timing, hop.bus_width_bits)
        return HopCeiling(
            hop, label, mbps, mbps, mbps, label if mbps else None, f"{label}: {mbps:g} MB/s bus rate" if mbps else None
        )
    assert isinstance(hop, VirtualHop)
    return HopCeiling(hop, f"{hop.driver} (virtual, no physical link)", None, None, None, None)


def _max_known(*values: float | None) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def link_chain(hops: tuple[Hop, ...] | list[Hop]) -> LinkChain:
    ceilings = tuple(hop_ceiling(h) for h in hops)
    if not ceilings or any(isinstance(c.hop, VirtualHop) for c in ceilings):
        return LinkChain(ceilings, None, None, None)
    known = [c for c in ceilings if c.current_mbps is not None]
    if not known:
        return LinkChain(ceilings, None, None, None)
    bottleneck = min(known, key=lambda c: c.current_mbps or 0.0)
    capable = [c.capable_mbps if c.capable_mbps is not None else c.current_mbps for c in known]
    return LinkChain(
        hops=ceilings,
        current_ceiling_mbps=round(bottleneck.current_mbps or 0.0, 1),
        capable_ceiling_mbps=round(min(v for v in capable if v is not None), 1),
        bottleneck=bottleneck,
    )
