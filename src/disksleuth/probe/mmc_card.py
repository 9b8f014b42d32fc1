"""An SD card's or eMMC's registers, read under a sysfs root: the card's attributes and the host's debugfs files.

Layout (drivers/mmc/core/bus.c, sd.c, mmc.c, debugfs.c):
  /sys/block/mmcblk0/device -> .../mmc_host/mmc0/mmc0:aaaa   cid csd scr ssr name manfid oemid date type
                                                               life_time pre_eol_info rev cmdq_en ...
  /sys/kernel/debug/mmc0/{ios,caps,caps2}                    the host (root only)
  /sys/kernel/debug/mmc0/mmc0:aaaa/ext_csd                   an eMMC's EXT_CSD (root only)
Each file is read bounded by the Sysfs reader and cut to the longest the kernel writes before any decoding.
Decoding is analysis.card_registers's.
"""

from __future__ import annotations

import os

from disksleuth.model.card import CardRegisters
from disksleuth.probe.sysfs import Sysfs

# The longest text each attribute holds: 128 hex digits (ssr), 1,024 (ext_csd), a page of ios.
_SHORT = 256
_LIMITS = {"ssr": 512, "ext_csd": 4096, "ios": 4096}
_CARD_ATTRS = (
    ("card_type", "type"),
    ("cid", "cid"),
    ("csd", "csd"),
    ("scr", "scr"),
    ("ssr", "ssr"),
    ("name", "name"),
    ("manfid", "manfid"),
    ("oemid", "oemid"),
    ("date", "date"),
    ("prv", "prv"),
    ("fwrev", "fwrev"),
    ("hwrev", "hwrev"),
    ("rev", "rev"),
    ("life_time", "life_time"),
    ("pre_eol_info", "pre_eol_info"),
    ("cmdq_en", "cmdq_en"),
    ("preferred_erase_size", "preferred_erase_size"),
)


def read_card_registers(fs: Sysfs, card_dir: str, host: str | None) -> CardRegisters:
    """The registers of the card whose sysfs directory (a host path under fs's root) is card_dir."""

    def attr(path: str, name: str) -> str | None:
        limit = _LIMITS.get(name, _SHORT)
        text = fs.read(path, limit)
        return text[:limit] if text is not None else None

    values = {field: attr(os.path.join(card_dir, name), name) for field, name in _CARD_ATTRS}
    if host:
        debug = fs.p("/sys/kernel/debug", host)
        values["ios"] = attr(os.path.join(debug, "ios"), "ios")
        values["host_caps"] = attr(os.path.join(debug, "caps"), "caps")
        values["host_caps2"] = attr(os.path.join(debug, "caps2"), "caps2")
        values["ext_csd"] = attr(os.path.join(debug, os.path.basename(card_dir), "ext_csd"), "ext_csd")
    values["kernel_release"] = attr(fs.p("/proc/sys/kernel/osrelease"), "osrelease")
    return CardRegisters(**values)
