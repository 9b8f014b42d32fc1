"""Regenerate the sysfs test trees in this folder: `python tests/data/sysfs/make_trees.py`.

Each tree is laid out as the kernel lays out /sys (relative symlinks included), following
Documentation/ABI/stable/sysfs-block, sysfs-bus-pci, sysfs-bus-usb and libata-transport.c. The trees
are committed; this script documents how they were made and keeps them consistent.
"""

from __future__ import annotations

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


class Tree:
    def __init__(self, name: str):
        self.root = os.path.join(HERE, name)
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)

    def abs(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def file(self, path: str, content: str | bytes) -> None:
        full = self.abs(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(full, mode) as fh:
            fh.write(content if isinstance(content, bytes) or content == "" else content + "\n")

    def link(self, path: str, target: str) -> None:
        """A relative symlink at `path` pointing at absolute sysfs path `target`."""
        full = self.abs(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        rel = os.path.relpath(self.abs(target), os.path.dirname(full))
        os.symlink(rel, full)

    def pci(
        self,
        parent: str,
        bdf: str,
        vendor: str,
        device: str,
        cls: str,
        speed: str | None = None,
        width: str | None = None,
        max_speed: str | None = None,
        max_width: str | None = None,
        driver: str | None = None,
    ) -> str:
        path = f"{parent}/{bdf}"
        self.file(f"{path}/vendor", f"0x{vendor}")
        self.file(f"{path}/device", f"0x{device}")
        self.file(f"{path}/class", f"0x{cls}")
        for attr, value in (
            ("current_link_speed", speed),
            ("current_link_width", width),
            ("max_link_speed", max_speed),
            ("max_link_width", max_width),
        ):
            if value is not None:
                self.file(f"{path}/{attr}", value)
        if driver:
            self.link(f"{path}/driver", f"/sys/bus/pci/drivers/{driver}")
        self.link(f"/sys/bus/pci/devices/{bdf}", path)
        return path

    def block(
        self,
        parent: str,
        name: str,
        size_sectors: int = 500118192,
        lbs: int = 512,
        pbs: int = 512,
        rotational: int = 0,
        scheduler: str = "[none] mq-deadline",
        dev: str = "259:0",
        glue: bool = True,
    ) -> str:
        # drivers/base/core.c get_device_parent(): a class device under a bus device sits in a "block"
        # glue dir (.../0:0:0:0/block/sda); under another class device (nvme0, nvme-subsys0) it does not.
        path = f"{parent}/block/{name}" if glue else f"{parent}/{name}"
        self.file(f"{path}/size", str(size_sectors))
        self.file(f"{path}/dev", dev)
        self.file(f"{path}/ro", "0")
        self.file(f"{path}/removable", "0")
        self.file(f"{path}/queue/logical_block_size", str(lbs))
        self.file(f"{path}/queue/physical_block_size", str(pbs))
        self.file(f"{path}/queue/rotational", str(rotational))
        self.file(f"{path}/queue/scheduler", scheduler)
        self.file(f"{path}/queue/write_cache", "write back")
        os.makedirs(self.abs(f"{path}/holders"), exist_ok=True)
        os.makedirs(self.abs(f"{path}/slaves"), exist_ok=True)
        self.link(f"/sys/block/{name}", path)
        self.link(f"/sys/class/block/{name}", path)
        self.link(f"/sys/dev/block/{dev}", path)
        return path

    def partition(self, disk_path: str, name: str, number: int, start: int, size: int, dev: str) -> str:
        path = f"{disk_path}/{name}"
        self.file(f"{path}/partition", str(number))
        self.file(f"{path}/start", str(start))
        self.file(f"{path}/size", str(size))
        self.file(f"{path}/dev", dev)
        os.makedirs(self.abs(f"{path}/holders"), exist_ok=True)
        self.link(f"/sys/class/block/{name}", path)
        self.link(f"/sys/dev/block/{dev}", path)
        return path

    def nvme(
        self,
        pci_path: str,
        ctrl: str = "nvme0",
        ns: str = "nvme0n1",
        model: str = "Samsung SSD 970 EVO Plus 250GB",
        serial: str = "S4EUNX0N123456",
        fw: str = "2B2QEXM7",
        dev: str = "259:0",
    ) -> str:
        ctrl_path = f"{pci_path}/nvme/{ctrl}"
        self.file(f"{ctrl_path}/model", model)
        self.file(f"{ctrl_path}/serial", serial)
        self.file(f"{ctrl_path}/firmware_rev", fw)
        self.file(f"{ctrl_path}/state", "live")
        self.file(f"{ctrl_path}/transport", "pcie")
        self.file(f"{ctrl_path}/hwmon1/name", "nvme")
        self.file(f"{ctrl_path}/hwmon1/temp1_input", "38850")
        self.file(f"{ctrl_path}/hwmon1/temp1_label", "Composite")
        self.file(f"{ctrl_path}/hwmon1/temp1_max", "81850")
        self.file(f"{ctrl_path}/hwmon1/temp1_crit", "84850")
        path = self.block(ctrl_path, ns, glue=False, dev=dev)
        self.link(f"{path}/device", ctrl_path)
        return path

    def mountinfo(self, lines: list[str]) -> None:
        self.file("/proc/self/mountinfo", "\n".join(lines))
        self.file("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority")


def root_complex(t: Tree) -> str:
    path = "/sys/devices/pci0000:00"
    t.pci(path, "0000:00:00.0", "8086", "3e30", "060000")  # host bridge, no link
    return path


def cpu_port(
    t: Tree,
    rc: str,
    bdf: str = "0000:00:01.0",
    speed: str = "8.0 GT/s PCIe",
    width: str = "4",
    max_speed: str = "8.0 GT/s PCIe",
    max_width: str = "4",
    device: str = "1901",
) -> str:
    return t.pci(rc, bdf, "8086", device, "060400", speed, width, max_speed, max_width, "pcieport")


def nvme_ep(
    t: Tree, port: str, bdf: str, speed: str, width: str, max_speed: str, max_width: str, device: str = "a808"
) -> str:
    return t.pci(port, bdf, "144d", device, "010802", speed, width, max_speed, max_width, "nvme")


def nvme_tree(name: str, fmt: str, serial: str = "S4EUNX0N123456") -> None:
    t = Tree(name)
    rc = root_complex(t)
    s = "8 GT/s" if fmt == "old" else "8.0 GT/s PCIe"  # kernel <= 5.6 vs >= 5.7
    port = cpu_port(t, rc, speed=s, max_speed=s)
    ep = nvme_ep(t, port, "0000:01:00.0", s, "4", s, "4")
    t.nvme(ep, serial=serial)


def scenario_pcie(
    name: str, port_bdf: str, port_dev: str, port: tuple[str, str, str, str], ep: tuple[str, str, str, str]
) -> None:
    """One NVMe drive behind one root port. Tuples: (speed, width, max_speed, max_width)."""
    t = Tree(name)
    rc = root_complex(t)
    p = cpu_port(t, rc, port_bdf, *port, device=port_dev)
    e = nvme_ep(t, p, "0000:03:00.0", *ep)
    t.nvme(e)


def switch_tree() -> None:
    """Gen4 drive behind a switch whose uplink is Gen3 x1: the middle hop is the bottleneck."""
    t = Tree("pcie_switch_middle")
    rc = root_complex(t)
    rp = t.pci(rc, "0000:00:01.1", "1022", "1483", "060400", "8.0 GT/s PCIe", "1", "16.0 GT/s PCIe", "4", "pcieport")
    usp = t.pci(rp, "0000:02:00.0", "10b5", "8747", "060400", "8.0 GT/s PCIe", "1", "8.0 GT/s PCIe", "1", "pcieport")
    dsp = t.pci(usp, "0000:03:08.0", "10b5", "8747", "060400", "16.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "4", "pcieport")
    ep = nvme_ep(t, dsp, "0000:04:00.0", "16.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "4", device="a80c")
    t.nvme(ep, model="Samsung SSD 990 PRO 1TB")


def desktop_chipset_tree() -> None:
    """An Intel 300-series (Cannon Lake PCH) desktop: one NVMe drive on an adapter in the CPU's x16 slot
    (root port 00:01.0), one in an M.2 socket on a PCH root port (00:1b.4), an I211 NIC on the PCH's x1 slot
    (00:1c.0), an empty PCH root port (00:1d.0), and the PCH's own xHCI (00:14.0), AHCI (00:17.0) and I219-V
    (00:1f.6). Device IDs as pci.ids names them for that PCH; slot names come from an SMBIOS table the
    tests add (tests/test_chipset_uplink.py)."""
    t = Tree("desktop_chipset_m2")
    g1, g3 = "2.5 GT/s PCIe", "8.0 GT/s PCIe"
    rc = root_complex(t)
    cpu = cpu_port(t, rc, "0000:00:01.0", g3, "4", g3, "16")
    nvme0 = nvme_ep(t, cpu, "0000:01:00.0", g3, "4", g3, "4")
    t.nvme(nvme0, serial="S4EUNX0N111111")
    t.pci(rc, "0000:00:14.0", "8086", "a36d", "0c0330", driver="xhci_hcd")
    t.pci(rc, "0000:00:17.0", "8086", "a352", "010601", driver="ahci")
    pch_m2 = t.pci(rc, "0000:00:1b.4", "8086", "a32c", "060400", g3, "4", g3, "4", "pcieport")
    nvme1 = nvme_ep(t, pch_m2, "0000:02:00.0", g3, "4", g3, "4", device="a809")
    t.nvme(nvme1, ctrl="nvme1", ns="nvme1n1", model="Samsung SSD 980 1TB", serial="S649NL0T222222", dev="259:1")
    pch_x1 = t.pci(rc, "0000:00:1c.0", "8086", "a338", "060400", g1, "1", "5.0 GT/s PCIe", "1", "pcieport")
    t.pci(pch_x1, "0000:03:00.0", "8086", "1539", "020000", g1, "1", g1, "1", "igb")
    # nothing in it: the kernel prints LnkSta as it is, a link that never trained
    t.pci(rc, "0000:00:1d.0", "8086", "a330", "060400", "Unknown", "0", g3, "4", "pcieport")
    t.pci(rc, "0000:00:1f.6", "8086", "15bc", "020000", driver="e1000e")


def amd_chipset_tree() -> None:
    """An AMD X570 desktop: one NVMe drive on a CPU root port (00:01.1), one behind the chipset, whose switch
    (Matisse Switch Upstream 57ad, GPP bridges 57a3/57a4) hangs from the CPU root port 00:01.2 over PCIe 4.0
    x4; the chipset's SATA (FCH AHCI) and USB (Matisse xHCI) controllers behind it too."""
    t = Tree("desktop_amd_chipset")
    g4 = "16.0 GT/s PCIe"
    rc = "/sys/devices/pci0000:00"
    t.pci(rc, "0000:00:00.0", "1022", "1480", "060000")  # host bridge, no link
    cpu_m2 = t.pci(rc, "0000:00:01.1", "1022", "1483", "060400", g4, "4", g4, "4", "pcieport")
    t.nvme(nvme_ep(t, cpu_m2, "0000:01:00.0", g4, "4", g4, "4", device="a80c"), serial="S6B0NL0W333333")
    uplink = t.pci(rc, "0000:00:01.2", "1022", "1483", "060400", g4, "4", g4, "4", "pcieport")
    usp = t.pci(uplink, "0000:02:00.0", "1022", "57ad", "060400", g4, "4", g4, "4", "pcieport")
    m2 = t.pci(usp, "0000:03:04.0", "1022", "57a3", "060400", g4, "4", g4, "4", "pcieport")
    ep = nvme_ep(t, m2, "0000:04:00.0", g4, "4", g4, "4", device="a80c")
    t.nvme(ep, ctrl="nvme1", ns="nvme1n1", model="Samsung SSD 980 PRO 1TB", serial="S5GXNX0R444444", dev="259:1")
    sata = t.pci(usp, "0000:03:08.0", "1022", "57a4", "060400", g4, "4", g4, "4", "pcieport")
    t.pci(sata, "0000:05:00.0", "1022", "7901", "010601", g4, "4", g4, "4", "ahci")
    usb = t.pci(usp, "0000:03:09.0", "1022", "57a4", "060400", g4, "4", g4, "4", "pcieport")
    t.pci(usb, "0000:06:00.0", "1022", "149c", "0c0330", g4, "4", g4, "4", "xhci_hcd")


def usb_tree(name: str, hub: str, dev_speed: str, version: str, driver: str, product: str) -> None:
    """xHCI 00:14.0 (integrated, no PCIe link) with a USB 2 root hub usb1 and a USB 3 root hub usb2."""
    t = Tree(name)
    rc = root_complex(t)
    xhci = t.pci(rc, "0000:00:14.0", "8086", "a36d", "0c0330", driver="xhci_hcd")
    for bus, speed, ver in (("usb1", "480", " 2.00"), ("usb2", "10000", " 3.10")):
        t.file(f"{xhci}/{bus}/speed", speed)
        t.file(f"{xhci}/{bus}/version", ver)
    port = "1-2" if hub == "usb1" else "2-1"
    dev = f"{xhci}/{hub}/{port}"
    t.file(f"{dev}/speed", dev_speed)
    t.file(f"{dev}/version", version)
    t.file(f"{dev}/idVendor", "152d")
    t.file(f"{dev}/idProduct", "0583")
    t.file(f"{dev}/product", product)
    t.file(f"{dev}/serial", "0123456789ABCDEF")
    iface = f"{dev}/{port}:1.0"
    t.link(f"{iface}/driver", f"/sys/bus/usb/drivers/{driver}")
    sdev = f"{iface}/host6/target6:0:0/6:0:0:0"
    t.file(f"{sdev}/vendor", "Generic")
    t.file(f"{sdev}/model", product)
    t.file(f"{sdev}/rev", "0204")
    b = t.block(sdev, "sdb", size_sectors=61440000, scheduler="[mq-deadline] none", dev="8:16")
    t.link(f"{b}/device", sdev)
    t.mountinfo(
        [
            "28 1 8:17 / / rw,relatime shared:1 - ext4 /dev/sdb1 rw",
        ]
    )
    t.partition(b, "sdb1", 1, 2048, 61437952, "8:17")


def sata_tree(name: str = "sata_3g_on_6g", spd: str = "3.0 Gbps") -> None:
    t = Tree(name)
    rc = root_complex(t)
    ahci = t.pci(rc, "0000:00:17.0", "8086", "a352", "010601", driver="ahci")
    ata = f"{ahci}/ata3"
    t.file(f"{ata}/ata_port/ata3/port_no", "3")
    link = f"{ata}/link3/ata_link/link3"
    t.file(f"{link}/sata_spd", spd)
    t.file(f"{link}/sata_spd_limit", "<unknown>")
    t.file(f"{link}/hw_sata_spd_limit", "6.0 Gbps")
    sdev = f"{ata}/host2/target2:0:0/2:0:0:0"
    t.file(f"{sdev}/vendor", "ATA")
    t.file(f"{sdev}/model", "Samsung SSD 860")
    t.file(f"{sdev}/rev", "4B6Q")
    t.file(f"{sdev}/vpd_pg80", b"\x00\x80\x00\x0fS3Z9NB0K123456X")
    b = t.block(sdev, "sda", size_sectors=976773168, dev="8:0")
    t.link(f"{b}/device", sdev)


def sd_tree(name: str, ios: str | None) -> None:
    t = Tree(name)
    host = "/sys/devices/platform/emmc2bus/fe340000.mmc/mmc_host/mmc0"
    card = f"{host}/mmc0:aaaa"
    t.file(f"{card}/type", "SD")
    t.file(f"{card}/name", "SC64G")
    t.file(f"{card}/serial", "0x12345678")
    t.file(f"{card}/manfid", "0x000003")
    t.file(f"{card}/oemid", "0x5344")
    b = t.block(card, "mmcblk0", size_sectors=124735488, dev="179:0", scheduler="[mq-deadline] none")
    t.link(f"{b}/device", card)
    if ios is not None:
        t.file("/sys/kernel/debug/mmc0/ios", ios)


SD_IOS_SDR104 = (
    "clock:\t\t200000000 Hz\nactual clock:\t187500000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\n"
    "chip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t2 (4 bits)\n"
    "timing spec:\t6 (sd uhs SDR104)\nsignal voltage:\t1 (1.80 V)\ndriver type:\t0 (driver type B)"
)


def unknown_link_tree() -> None:
    t = Tree("unknown_link")
    rc = root_complex(t)
    port = cpu_port(t, rc, speed="Unknown", width="4", max_speed="8.0 GT/s PCIe")
    ep = nvme_ep(t, port, "0000:01:00.0", "Unknown", "4", "8.0 GT/s PCIe", "4")
    t.nvme(ep)


def multipath_tree() -> None:
    """NVMe native multipath: the head disk lives under /sys/devices/virtual/nvme-subsystem."""
    t = Tree("nvme_multipath")
    rc = root_complex(t)
    port = cpu_port(t, rc, "0000:00:01.0", "16.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "4")
    ep = nvme_ep(t, port, "0000:01:00.0", "16.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "4", device="a80c")
    ctrl = f"{ep}/nvme/nvme0"
    t.file(f"{ctrl}/model", "Micron_7450_MTFDKCC3T2TFS")
    t.file(f"{ctrl}/state", "live")
    subsys = "/sys/devices/virtual/nvme-subsystem/nvme-subsys0"
    t.file(f"{subsys}/model", "Micron_7450_MTFDKCC3T2TFS")
    t.file(f"{subsys}/serial", "2139323A7B1C")
    t.file(f"{subsys}/firmware_rev", "E2MU200")
    t.link(f"{subsys}/nvme0", ctrl)
    b = t.block(subsys, "nvme0n1", size_sectors=6251233968, glue=False)
    t.link(f"{b}/device", subsys)
    # The per-path hidden disk nvme0c0n1 hangs off the controller.
    t.file(f"{ctrl}/nvme0c0n1/hidden", "1")


def malformed_tree() -> None:
    t = Tree("malformed")
    rc = root_complex(t)
    port = cpu_port(t, rc, speed="garbage GT/s", width="", max_speed="8.0 GT/s PCIe", max_width="x4")
    ep = nvme_ep(t, port, "0000:01:00.0", "", "0", "8.0 GT/s PCIe", "4")
    path = t.nvme(ep)
    t.file(f"{path}/size", "not-a-number")
    t.file(f"{path}/queue/logical_block_size", "")
    # A /sys/block entry whose target is gone (a device removed while we read).
    t.link("/sys/block/sdz", "/sys/devices/pci0000:00/0000:00:17.0/ata9/host8/target8:0:0/8:0:0:0/block/sdz")
    t.link("/sys/bus/pci/devices/0000:09:00.0", "/sys/devices/pci0000:00/0000:00:1d.0/0000:09:00.0")
    t.mountinfo(["garbage line", "36 1 259:0 / /data rw - ext4 /dev/nvme0n1 rw"])


def main() -> None:
    nvme_tree("nvme_old_format", "old")
    nvme_tree("nvme_new_format", "new")
    switch_tree()
    # DESIGN.md "Scenarios from the field". Tuples are (speed, width, max_speed, max_width).
    g2, g3, g4 = "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe"
    # An x16-sized chipset slot wired x1 by a BIOS lane-sharing default (Intel PCH root port 00:1c.4).
    scenario_pcie("scenario_x1_chipset_slot", "0000:00:1c.4", "a294", (g2, "1", g2, "1"), (g2, "1", g3, "4"))
    # The same slot after the BIOS switch to x4 mode.
    scenario_pcie("scenario_x4_after_bios", "0000:00:1c.4", "a294", (g2, "4", g2, "4"), (g2, "4", g3, "4"))
    # Badly seated or poor riser: both ends do Gen3 x4, the link trained at x2 (CPU root port).
    scenario_pcie("scenario_badly_seated", "0000:00:01.0", "1901", (g3, "2", g3, "4"), (g3, "2", g3, "4"))
    # A Gen4 drive on a Gen3 CPU root port.
    scenario_pcie("scenario_gen4_on_gen3", "0000:00:01.0", "1901", (g3, "4", g3, "4"), (g3, "4", g4, "4"))
    # NUC: the M.2 Wi-Fi slot is a PCH root port at Gen2 x1.
    desktop_chipset_tree()
    amd_chipset_tree()
    scenario_pcie("scenario_nuc_wifi_slot", "0000:00:1c.0", "9dbf", (g2, "1", g2, "1"), (g2, "1", g3, "4"))
    usb_tree("scenario_usb2_caddy", "usb1", "480", " 3.10", "usb-storage", "NVMe USB caddy")
    usb_tree("scenario_usb_stick_root", "usb2", "5000", " 3.20", "usb-storage", "Flash Drive")
    usb_tree("usb3_enclosure_on_480", "usb1", "480", " 3.20", "uas", "USB3 SATA enclosure")
    sd_tree("scenario_sd_card", None)
    sd_tree("sd_card_sdr104", SD_IOS_SDR104)
    sata_tree()
    # Before and after (issue 28): the enclosure moved to a USB 3 port; a SATA link at 1.5 and at 6 Gb/s
    # (a cable change); the same model swapped in under the same name, told apart by its serial.
    usb_tree("usb3_enclosure_on_5g", "usb2", "5000", " 3.20", "uas", "USB3 SATA enclosure")
    sata_tree("sata_1g5_on_6g", "1.5 Gbps")
    sata_tree("sata_6g_on_6g", "6.0 Gbps")
    nvme_tree("nvme_swapped", "new", serial="S4EUNX0N654321")
    unknown_link_tree()
    multipath_tree()
    malformed_tree()


if __name__ == "__main__":
    main()
