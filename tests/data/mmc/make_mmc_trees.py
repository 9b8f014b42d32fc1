"""Regenerate the SD card and eMMC sysfs trees (issue 39): `python tests/data/mmc/make_mmc_trees.py`.

Laid out as the kernel lays them out (drivers/mmc/core/bus.c, sd.c, mmc.c, debugfs.c): the card's
attributes under .../mmc_host/mmcN/mmcN:RCA/, the block device under it, the host's ios/caps/caps2 in
debugfs. Where each register value comes from: SOURCES.md beside this script.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sysfs"))

from make_trees import Tree  # noqa: E402  (the sysfs trees' own builder: same layout rules)


def ios(clock_hz: int, timing_code: int, timing: str, width_code: int = 2, volts: str = "0 (3.30 V)") -> str:
    bits = {0: 1, 2: 4, 3: 8}[width_code]
    return (
        f"clock:\t\t{clock_hz} Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\n"
        f"power mode:\t2 (on)\nbus width:\t{width_code} ({bits} bits)\ntiming spec:\t{timing_code} ({timing})\n"
        f"signal voltage:\t{volts}\ndriver type:\t0 (driver type B)"
    )


def card_tree(name: str, host_path: str, host: str, rca: str, block: str, size_sectors: int,
              attrs: dict[str, str], debug: dict[str, str], dev: str) -> None:  # fmt: skip
    t = Tree(os.path.join("..", "sysfs", name))
    card = f"{host_path}/{host}/{host}:{rca}"
    for key, value in attrs.items():
        t.file(f"{card}/{key}", value)
    b = t.block(card, block, size_sectors=size_sectors, dev=dev, scheduler="[mq-deadline] none")
    t.link(f"{b}/device", card)
    for key, value in debug.items():
        t.file(f"/sys/kernel/debug/{host}/{key}", value)
    t.file("/proc/sys/kernel/osrelease", "6.1.0-21-arm64")


# A real SanDisk Ultra 16 GB (SC16G) on a BeagleBone Black's omap_hsmmc host, which offers SD high speed
# at most: its attributes as `udevadm info -a` printed them (SOURCES.md). The ios and caps are the host's.
SANDISK_SC16G = {
    "type": "SD",
    "cid": "035344534331364780ecf4c851011b85",
    "csd": "400e00325b59000076b27f800a404013",
    "scr": "0235804300000000",
    "ssr": "0000000004000000040090000f051a00000000000001000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000",
    "name": "SC16G",
    "serial": "0xecf4c851",
    "manfid": "0x000003",
    "oemid": "0x5344",
    "date": "11/2017",
    "hwrev": "0x8",
    "fwrev": "0x0",
    "preferred_erase_size": "4194304",
    "erase_size": "512",
}
# The card: a Goodram IRDM V30 A2 whose SD Status reads C10 U3 V30 A2 (a command queue of depth 32
# and a cache), on a Raspberry Pi 4 at SDR104. The SD Status is written out field by field in SOURCES.md.
GOODRAM_SSR = "800000000000000004009000080a391e000000000002fc00" + "0" * 80
GOODRAM = {
    "type": "SD",
    "ssr": GOODRAM_SSR,
    "scr": "0245848700000000",
    "csd": "400e0032db790001dbd37f800a4040f9",
    "name": "IRDM ",
    "serial": "0x0badcafe",
    "date": "05/2021",
}
# An eMMC 5.1 with the wear: life_time 0x0b 0x02 (type A, the SLC areas, past their life).
EMMC_WORN = {
    "type": "MMC",
    "name": "8GTF4R",
    "manfid": "0x000015",
    "oemid": "0x0100",
    "date": "06/2019",
    "rev": "0x8",
    "serial": "0x1a2b3c4d",
    "life_time": "0x0b 0x02",
    "pre_eol_info": "0x01",
    "cmdq_en": "0",
}


def ext_csd(values: dict[int, int], words: dict[tuple[int, int], int]) -> str:
    """debugfs ext_csd: 512 bytes as "%02x" each, byte 0 first (drivers/mmc/core/debugfs.c)."""
    raw = bytearray(512)
    for index, value in values.items():
        raw[index] = value
    for (start, length), value in words.items():
        raw[start : start + length] = value.to_bytes(length, "little")
    return raw.hex()


# A real eMMC 5.1 (SLD64G) whose `mmc extcsd read` was posted to linux-mmc (SOURCES.md): EXT_CSD_REV 8,
# CARD_TYPE 0x57 (HS400 1.8 V, HS200 1.8 V, DDR52, HS52, HS26), HS_TIMING 3, CACHE_SIZE 8192 KiB,
# SEC_COUNT 0x0733c000; the life estimates were cut from the post, so they read 0 (not defined). Here on an
# RK3568-like host, which runs HS200 and offers no HS400 (the thread's own words: a chip design limit).
EMMC_SLD64G = {"type": "MMC", "name": "SLD64G", "rev": "0x8", "serial": "0x0c0ffee0", "date": "03/2023"}
EMMC_SLD64G_EXT_CSD = ext_csd({192: 8, 196: 0x57, 185: 3}, {(212, 4): 0x0733C000, (249, 4): 8192})


def main() -> None:
    card_tree(
        "sd_sandisk_sc16g_hs_host", "/sys/devices/platform/ocp/48060000.mmc/mmc_host", "mmc0", "aaaa", "mmcblk0",
        31116288, SANDISK_SC16G, {"ios": ios(48000000, 2, "sd high-speed"), "caps": "0x40000007"}, "179:0",
    )  # fmt: skip
    card_tree(
        "sd_goodram_irdm_v30_a2", "/sys/devices/platform/emmc2bus/fe340000.mmc/mmc_host", "mmc0", "59b4",
        "mmcblk0", 124735488, GOODRAM,
        {"ios": ios(208000000, 6, "sd uhs SDR104", volts="1 (1.80 V)"), "caps": "0x401f0007"}, "179:0",
    )  # fmt: skip
    card_tree(
        "emmc_worn", "/sys/devices/platform/fe310000.mmc/mmc_host", "mmc1", "0001", "mmcblk1", 15269888,
        EMMC_WORN,
        {"ios": ios(200000000, 9, "mmc HS200", 3, "1 (1.80 V)"), "caps": "0x40000847", "caps2": "0x00000060"},
        "179:32",
    )  # fmt: skip
    card_tree(
        "emmc_hs400_on_hs200_host", "/sys/devices/platform/fe310000.mmc/mmc_host", "mmc0", "0001", "mmcblk0",
        0x0733C000, EMMC_SLD64G,
        {"ios": ios(200000000, 9, "mmc HS200", 3, "1 (1.80 V)"), "caps": "0x40000847", "caps2": "0x00000060",
         "mmc0:0001/ext_csd": EMMC_SLD64G_EXT_CSD},
        "179:0",
    )  # fmt: skip


if __name__ == "__main__":
    main()
