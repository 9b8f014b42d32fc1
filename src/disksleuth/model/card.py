"""What an SD card or eMMC says about itself: its registers as the kernel shows them, and their decoding.

`CardRegisters` is what probe reads (text, as sysfs and debugfs print it); `Card` is what
analysis.card_registers decodes from it. A Device carries the registers; the card is derived, so a
capture, a store and a document all keep the one source and the decoding can only improve.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CardRegisters:
    """The card's attributes under /sys/bus/mmc/devices/mmcN:RCA/ (drivers/mmc/core/{sd,mmc,bus}.c) and the
    host's under debugfs /sys/kernel/debug/mmcN/. Each is the attribute's text, stripped, or None when absent
    or unreadable. Hex registers are printed most significant word first ("%08x" per 32-bit word)."""

    card_type: str | None = None  # "SD", "MMC", "SDIO", "SDcombo"
    cid: str | None = None  # 128 bits
    csd: str | None = None  # 128 bits
    scr: str | None = None  # SD: 64 bits
    ssr: str | None = None  # SD: the 512-bit SD Status (ACMD13), since Linux 5.x
    name: str | None = None
    manfid: str | None = None  # "0x000003"
    oemid: str | None = None  # "0x5344"
    date: str | None = None  # "11/2017" (the kernel's decoding of the CID's MDT)
    prv: str | None = None
    fwrev: str | None = None
    hwrev: str | None = None
    rev: str | None = None  # eMMC: EXT_CSD_REV ("0x8")
    life_time: str | None = None  # eMMC 5.0+: "0x01 0x02" (DEVICE_LIFE_TIME_EST_TYP_A, _TYP_B)
    pre_eol_info: str | None = None  # eMMC 5.0+: "0x01"
    cmdq_en: str | None = None  # eMMC: "1" when the kernel runs the card's command queue
    preferred_erase_size: str | None = None
    ext_csd: str | None = None  # debugfs mmcN/mmcN:RCA/ext_csd: 512 bytes as hex (root only)
    ios: str | None = None  # debugfs mmcN/ios (root only)
    host_caps: str | None = None  # debugfs mmcN/caps: "0x...", include/linux/mmc/host.h MMC_CAP_*
    host_caps2: str | None = None  # debugfs mmcN/caps2: MMC_CAP2_*
    kernel_release: str | None = None  # /proc/sys/kernel/osrelease: whether the kernel uses an SD card's cache


@dataclass(frozen=True)
class Card:
    """An SD card's or eMMC's claims, decoded (SD Physical Layer Simplified Specification 9.10: CID 5.2,
    CSD 5.3, SCR 5.6, SD Status 4.10.2; JEDEC JESD84-B51 for eMMC). None: not stated or not readable."""

    kind: str  # "sd", "mmc" (eMMC), "sdio", "unknown"
    manufacturer_id: int | None = None
    manufacturer: str | None = None  # only where the id is well known
    oem_id: str | None = None  # SD: two ASCII characters ("SD"); eMMC: "0x00"
    product: str | None = None
    revision: str | None = None  # PRV as "major.minor"
    date: str | None = None  # "YYYY-MM"
    capacity_bytes: int | None = None  # CSD (SD), else the block device's (eMMC: EXT_CSD SEC_COUNT)
    capacity_class: str | None = None  # SDSC, SDHC, SDXC, SDUC
    spec_version: str | None = None  # SD: "6.XX" (SCR); eMMC: "5.1" (EXT_CSD_REV)
    bus_widths: tuple[int, ...] = ()  # SD: SCR SD_BUS_WIDTHS
    speed_class: int | None = None  # 0, 2, 4, 6, 10 (MB/s)
    uhs_grade: int | None = None  # 0, 1, 3 (U1 = 10 MB/s, U3 = 30 MB/s)
    video_class: int | None = None  # 0, 6, 10, 30, 60, 90 (MB/s)
    app_class: int | None = None  # 0, 1 (A1), 2 (A2)
    au_size_bytes: int | None = None  # the allocation unit the speed class is measured in
    uhs_au_size_bytes: int | None = None
    command_queue: int | None = None  # queue depth the card offers; 0: none
    cache: bool | None = None
    # Whether this host and kernel use them: A2's figures assume both (SD 4.16.2.2).
    command_queue_used: bool | None = None
    cache_used: bool | None = None
    # eMMC health (EXT_CSD 267-269): 0x01 = 0-10% of the life used ... 0x0A = 90-100%, 0x0B = exceeded.
    life_time_a: int | None = None  # SLC areas (and pseudo-SLC)
    life_time_b: int | None = None  # MLC/TLC areas
    pre_eol: int | None = None  # reserved blocks: 0x01 normal, 0x02 warning (80% used), 0x03 urgent (90%)
    # Bus modes: what runs now (debugfs ios), the best the host controller offers (caps), the best the card
    # is known to take (eMMC: EXT_CSD DEVICE_TYPE; SD: implied by its UHS speed grade or speed class).
    timing: str | None = None  # debugfs ios name, "sd uhs SDR104"
    clock_hz: int | None = None
    bus_width_bits: int | None = None
    host_max_timing: str | None = None
    card_max_timing: str | None = None
    notes: tuple[str, ...] = ()  # what was malformed or unreadable, in plain words
