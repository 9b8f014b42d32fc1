"""Regenerate the array trees (issue 24): `python tests/data/sysfs/make_array_trees.py`.

Laid out as the kernel lays out /sys for md (Documentation/admin-guide/md.rst: /sys/block/mdN/md/ with
level, raid_disks, chunk_size, degraded, array_state, sync_action, sync_completed, and dev-X/{state,errors,
slot,block} per member), device mapper (/sys/block/dm-N/dm/{name,uuid}, slaves/ and holders/ links, the
striped target's I/O hints in queue/), and btrfs (/sys/fs/btrfs/<fsid>/{label,devices/,devinfo/,
allocation/data/<profile>/}, as seen on this machine's kernel with a real two-loop raid1). The physical
disks reuse make_trees.py's builders: SATA behind AHCI, NVMe behind a root port, USB behind a hub.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_trees import Tree, cpu_port, nvme_ep, root_complex  # noqa: E402

SEP6, SEP3, SEP15 = "6.0 Gbps", "3.0 Gbps", "1.5 Gbps"


def ahci(t: Tree, rc: str, bdf: str = "0000:00:17.0", device: str = "a352") -> str:
    return t.pci(rc, bdf, "8086", device, "010601", driver="ahci")


def sata_disk(
    t: Tree, ctrl: str, port: int, name: str, dev: str, spd: str = SEP6, hw: str = SEP6, model: str = "WDC WD40EFRX",
    size_sectors: int = 7814037168, rotational: int = 1, scheduler: str = "[mq-deadline] none",
) -> str:
    ata = f"{ctrl}/ata{port}"
    t.file(f"{ata}/ata_port/ata{port}/port_no", str(port))
    link = f"{ata}/link{port}/ata_link/link{port}"
    t.file(f"{link}/sata_spd", spd)
    t.file(f"{link}/sata_spd_limit", "<unknown>")
    t.file(f"{link}/hw_sata_spd_limit", hw)
    host = port - 1
    sdev = f"{ata}/host{host}/target{host}:0:0/{host}:0:0:0"
    t.file(f"{sdev}/vendor", "ATA")
    t.file(f"{sdev}/model", model)
    t.file(f"{sdev}/rev", "0A82")
    t.file(f"{sdev}/vpd_pg80", b"\x00\x80\x00\x10WD-WCC7K0" + name.encode().ljust(7, b"0"))
    b = t.block(sdev, name, size_sectors=size_sectors, rotational=rotational, scheduler=scheduler, dev=dev)
    t.link(f"{b}/device", sdev)
    return b


def md_array(
    t: Tree,
    name: str,
    dev: str,
    level: str,
    members: list[tuple[str, str]],  # (member name, its block dir in the tree)
    *,
    chunk: int = 524288,
    degraded: int = 0,
    sync_action: str = "idle",
    sync_completed: str = "none",
    array_state: str = "clean",
    states: dict[str, str] | None = None,
    errors: dict[str, int] | None = None,
    raid_disks: int | None = None,
    size_sectors: int = 15627784192,
) -> str:
    path = t.block("/sys/devices/virtual", name, size_sectors=size_sectors, dev=dev, scheduler="none")
    md = f"{path}/md"
    t.file(f"{md}/level", level)
    t.file(f"{md}/raid_disks", str(raid_disks if raid_disks is not None else len(members)))
    t.file(f"{md}/chunk_size", str(chunk if level not in ("raid1", "linear") else 0))
    if level != "raid0":
        t.file(f"{md}/degraded", str(degraded))
        t.file(f"{md}/sync_action", sync_action)
        t.file(f"{md}/sync_completed", sync_completed)
    t.file(f"{md}/array_state", array_state)
    t.file(f"{md}/metadata_version", "1.2")
    slot = 0
    for member, member_dir in members:
        state = (states or {}).get(member, "in_sync")
        d = f"{md}/dev-{member}"
        t.file(f"{d}/state", state)
        t.file(f"{d}/errors", str((errors or {}).get(member, 0)))
        if "spare" in state or "faulty" in state:
            t.file(f"{d}/slot", "none")
        else:
            t.file(f"{d}/slot", str(slot))
            t.link(f"{md}/rd{slot}", d)
            slot += 1
        t.link(f"{d}/block", member_dir)
        t.link(f"{path}/slaves/{member}", member_dir)
        t.link(f"{member_dir}/holders/{name}", path)
    return path


def dm_device(
    t: Tree,
    name: str,
    dev: str,
    dm_name: str,
    uuid: str,
    slaves: list[tuple[str, str]],
    *,
    io_min: int = 512,
    io_opt: int = 0,
    size_sectors: int = 1000000,
) -> str:
    path = t.block("/sys/devices/virtual", name, size_sectors=size_sectors, dev=dev, scheduler="none")
    t.file(f"{path}/dm/name", dm_name)
    t.file(f"{path}/dm/uuid", uuid)
    t.file(f"{path}/dm/suspended", "0")
    t.file(f"{path}/queue/minimum_io_size", str(io_min))
    t.file(f"{path}/queue/optimal_io_size", str(io_opt))
    for slave, slave_dir in slaves:
        t.link(f"{path}/slaves/{slave}", slave_dir)
        t.link(f"{slave_dir}/holders/{name}", path)
    return path


def raid1_tree() -> None:
    """md0 raid1 over two partitions (sda1, sdb1) on two SATA disks; / is on md0."""
    t = Tree("array_raid1")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    parts = []
    for i, (disk, major_minor) in enumerate((("sda", "8:0"), ("sdb", "8:16")), 1):
        b = sata_disk(t, ctrl, i, disk, major_minor)
        minor = int(major_minor.split(":")[1]) + 1
        parts.append((f"{disk}1", t.partition(b, f"{disk}1", 1, 2048, 7814035087, f"8:{minor}")))
    md_array(t, "md0", "9:0", "raid1", parts, size_sectors=7814033408)
    t.mountinfo(["28 1 9:0 / / rw,relatime shared:1 - ext4 /dev/md0 rw"])


def raid5_tree() -> None:
    """md0 raid5 over four whole SATA disks; sdc's link trained at 1.5 Gb/s on a 6 Gb/s port."""
    t = Tree("array_raid5")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    members = []
    for i, disk in enumerate(("sdb", "sdc", "sdd", "sde"), 2):
        spd = SEP15 if disk == "sdc" else SEP6
        members.append((disk, sata_disk(t, ctrl, i, disk, f"8:{(i - 1) * 16}", spd=spd)))
    md_array(t, "md0", "9:0", "raid5", members)
    t.mountinfo(["40 1 9:0 / /srv rw,relatime shared:1 - xfs /dev/md0 rw"])


def raid1_failing_member_tree() -> None:
    """md0 raid1 over two whole SATA disks, each with its saved `smartctl --json` beside the tree (smartctl/<name>.json,
    where readers of a --sysfs-root look for a member's SMART): sdb a healthy WD20EFRX (smartctl_exporter's
    capture), sdc a failing Hitachi HDS721050DLE630 (scrutiny's smart-fail2.json: SMART FAILED, 1,975 sectors
    reallocated, 8 pending; see tests/data/SOURCES.md). md itself still counts both members in_sync."""
    t = Tree("array_raid1_failing_member")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    members = []
    for i, (disk, model) in enumerate((("sdb", "WDC WD20EFRX-68EUZN0"), ("sdc", "Hitachi HDS721050DLE630")), 2):
        members.append((disk, sata_disk(t, ctrl, i, disk, f"8:{(i - 1) * 16}", model=model)))
    md_array(t, "md0", "9:0", "raid1", members, size_sectors=976771072)
    t.mountinfo(["40 1 9:0 / /srv rw,relatime shared:1 - ext4 /dev/md0 rw"])
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    captures = (("sdb", "smartctl/WDC_WD20EFRX-68EUZN0_17.json"), ("sdc", "smartctl-failing/scrutiny-smart-fail2.json"))
    for disk, capture in captures:
        with open(os.path.join(data, capture), "rb") as fh:
            t.file(f"smartctl/{disk}.json", fh.read())


def raid10_tree() -> None:
    """md0 raid10 over four NVMe drives, each on its own Gen3 x4 CPU root port."""
    t = Tree("array_raid10")
    rc = root_complex(t)
    members = []
    for i in range(4):
        port = cpu_port(t, rc, f"0000:00:0{i + 1}.0")
        ep = nvme_ep(t, port, f"0000:0{i + 1}:00.0", "8.0 GT/s PCIe", "4", "8.0 GT/s PCIe", "4")
        ctrl = f"{ep}/nvme/nvme{i}"
        t.file(f"{ctrl}/model", "Samsung SSD 970 EVO Plus 1TB")
        t.file(f"{ctrl}/serial", f"S4EUNX0N12345{i}")
        t.file(f"{ctrl}/firmware_rev", "2B2QEXM7")
        path = t.block(ctrl, f"nvme{i}n1", size_sectors=1953525168, dev=f"259:{i}", glue=False)
        t.link(f"{path}/device", ctrl)
        members.append((f"nvme{i}n1", path))
    md_array(t, "md0", "9:0", "raid10", members)


def lvm_striped_tree() -> None:
    """An LVM volume striped over four SATA disks (64 KiB stripes: io_min 65536, io_opt 4 x 65536)."""
    t = Tree("array_lvm_striped")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    slaves = [(d, sata_disk(t, ctrl, i, d, f"8:{(i - 1) * 16}")) for i, d in enumerate(("sda", "sdb", "sdc", "sdd"), 1)]
    dm_device(
        t, "dm-0", "253:0", "vg_data-stripes", "LVM-Jm0rX3aYqk9vTz2BfW1xHc7Qe4Nd8Ls5Ug6Pi0Ko3Ry9Mt2Wv1Zb4Cn7Ea5Df8Gh",
        slaves, io_min=65536, io_opt=262144, size_sectors=31255953408,
    )  # fmt: skip
    t.mountinfo(["41 1 253:0 / /data rw,relatime shared:1 - ext4 /dev/mapper/vg_data-stripes rw"])


def crypt_on_md_tree() -> None:
    """dm-crypt (LUKS2) on md0 raid1 over sda2 and sdb2."""
    t = Tree("array_crypt_on_md")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    parts = []
    for i, (disk, base) in enumerate((("sda", 0), ("sdb", 16)), 1):
        b = sata_disk(t, ctrl, i, disk, f"8:{base}", model="Samsung SSD 870 EVO 1TB")
        t.partition(b, f"{disk}1", 1, 2048, 1048576, f"8:{base + 1}")
        parts.append((f"{disk}2", t.partition(b, f"{disk}2", 2, 1050624, 1952473088, f"8:{base + 2}")))
    md = md_array(t, "md1", "9:1", "raid1", parts, size_sectors=1952338944)
    dm_device(
        t, "dm-0", "253:0", "cryptroot", "CRYPT-LUKS2-3f9c1b7e2a8d4c6f9e0b1a2c3d4e5f60-cryptroot", [("md1", md)],
        size_sectors=1952305152,
    )  # fmt: skip
    t.mountinfo(["28 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/cryptroot rw"])


def degraded_tree() -> None:
    """md0 raid5 of three SATA disks: sdc failed (faulty, 131 read errors), the array runs degraded."""
    t = Tree("array_degraded")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    members = [(d, sata_disk(t, ctrl, i, d, f"8:{(i - 1) * 16}")) for i, d in enumerate(("sdb", "sdc", "sdd"), 2)]
    md_array(t, "md0", "9:0", "raid5", members, degraded=1, states={"sdc": "faulty"}, errors={"sdc": 131})


def resyncing_tree() -> None:
    """md0 raid1 of two SATA disks in an initial resync (a quarter done)."""
    t = Tree("array_resyncing")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    members = [(d, sata_disk(t, ctrl, i, d, f"8:{(i - 1) * 16}")) for i, d in enumerate(("sdb", "sdc"), 2)]
    md_array(
        t, "md0", "9:0", "raid1", members, sync_action="resync", sync_completed="1953506304 / 7814033408",
        array_state="active",
    )  # fmt: skip


def recovering_tree() -> None:
    """md0 raid5 of three disks where sdd replaced a failed disk and is being rebuilt (recover)."""
    t = Tree("array_recovering")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    members = [(d, sata_disk(t, ctrl, i, d, f"8:{(i - 1) * 16}")) for i, d in enumerate(("sdb", "sdc", "sdd"), 2)]
    md_array(
        t, "md0", "9:0", "raid5", members, degraded=1, sync_action="recover", sync_completed="3907016704 / 7814033408",
        array_state="active", states={"sdd": "spare"},
    )  # fmt: skip


def btrfs_raid1_tree() -> None:
    """A mounted btrfs raid1 over two SATA disks, as /sys/fs/btrfs shows it (5.x and later)."""
    t = Tree("array_btrfs_raid1")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    disks = [(d, sata_disk(t, ctrl, i, d, f"8:{(i - 1) * 16}")) for i, d in enumerate(("sdb", "sdc"), 2)]
    fsid = "/sys/fs/btrfs/e3fcde7e-f629-4a26-8eb1-e5df6a249216"
    t.file(f"{fsid}/label", "tank")
    for devid, (name, path) in enumerate(disks, 1):
        t.link(f"{fsid}/devices/{name}", path)
        info = f"{fsid}/devinfo/{devid}"
        t.file(f"{info}/missing", "0")
        t.file(f"{info}/in_fs_metadata", "1")
        t.file(f"{info}/replace_target", "0")
        t.file(f"{info}/writeable", "1")
        t.file(f"{info}/error_stats", "write_errs 0\nread_errs 0\nflush_errs 0\ncorruption_errs 0\ngeneration_errs 0")
    t.file(f"{fsid}/allocation/data/raid1/total_bytes", "1073741824")
    t.file(f"{fsid}/allocation/data/total_bytes", "1073741824")
    t.file(f"{fsid}/allocation/metadata/raid1/total_bytes", "268435456")
    t.mountinfo(["45 1 0:48 / /tank rw,relatime shared:1 - btrfs /dev/sdb rw,space_cache=v2,subvolid=5,subvol=/"])


def shared_x1_tree() -> None:
    """Four SATA disks on an ASMedia ASM1064 AHCI card whose PCIe link is Gen2 x1 (~450 MB/s for all four),
    in md0 raid5."""
    t = Tree("array_shared_x1")
    rc = root_complex(t)
    port = t.pci(rc, "0000:00:1c.4", "8086", "a294", "060400", "5.0 GT/s PCIe", "1", "5.0 GT/s PCIe", "1", "pcieport")
    card = t.pci(port, "0000:05:00.0", "1b21", "1064", "010601", "5.0 GT/s PCIe", "1", "5.0 GT/s PCIe", "1", "ahci")
    members = [
        (d, sata_disk(t, card, i, d, f"8:{(i - 1) * 16}", model="Samsung SSD 870 EVO 2TB"))
        for i, d in enumerate(("sda", "sdb", "sdc", "sdd"), 1)
    ]
    md_array(t, "md0", "9:0", "raid5", members)


def shared_usb2_tree() -> None:
    """Three USB 3 SATA enclosures behind one USB 2 hub (1-1) on a USB 2 root hub: one 480 Mb/s bus for all."""
    t = Tree("array_shared_usb2")
    rc = root_complex(t)
    xhci = t.pci(rc, "0000:00:14.0", "8086", "a36d", "0c0330", driver="xhci_hcd")
    for bus, speed, ver in (("usb1", "480", " 2.00"), ("usb2", "10000", " 3.10")):
        t.file(f"{xhci}/{bus}/speed", speed)
        t.file(f"{xhci}/{bus}/version", ver)
    hub = f"{xhci}/usb1/1-1"
    t.file(f"{hub}/speed", "480")
    t.file(f"{hub}/version", " 2.00")
    t.file(f"{hub}/product", "USB2.0 Hub")
    t.file(f"{hub}/bDeviceClass", "09")
    members = []
    for n, disk in enumerate(("sdb", "sdc", "sdd"), 1):
        dev = f"{hub}/1-1.{n}"
        t.file(f"{dev}/speed", "480")
        t.file(f"{dev}/version", " 3.20")
        t.file(f"{dev}/idVendor", "152d")
        t.file(f"{dev}/idProduct", "0583")
        t.file(f"{dev}/product", "USB3 SATA enclosure")
        iface = f"{dev}/1-1.{n}:1.0"
        t.link(f"{iface}/driver", "/sys/bus/usb/drivers/uas")
        host = 5 + n
        sdev = f"{iface}/host{host}/target{host}:0:0/{host}:0:0:0"
        t.file(f"{sdev}/vendor", "WDC")
        t.file(f"{sdev}/model", "WD40EFRX")
        t.file(f"{sdev}/rev", "0204")
        b = t.block(sdev, disk, size_sectors=7814037168, rotational=1, dev=f"8:{n * 16}")
        t.link(f"{b}/device", sdev)
        members.append((disk, b))
    md_array(t, "md0", "9:0", "raid0", members)


def util_linux_lvm_tree() -> None:
    """util-linux's lsblk dump `simple-lvm` (tests/ts/lsblk/dumps/simple-lvm.tar.xz), rebuilt from what lsblk
    printed for it (tests/expected/lsblk/lsblk-simple-lvm-basic and -state; see tests/data/SOURCES.md):
    one LVM volume vg_foo.4059-lv_foo.4059 (dm-0, 253:0, 32M) over loop0..loop3 (7:0..7:3, 10M each,
    rotational, mq-deadline). lsblk's TYPE "lvm" is its reading of a dm uuid starting "LVM-"; the uuid's
    remainder is not in those files, so it is a placeholder here."""
    t = Tree("util_linux_simple_lvm")
    slaves = []
    for i in range(4):
        path = t.block("/sys/devices/virtual", f"loop{i}", size_sectors=20480, rotational=1,
                       scheduler="[mq-deadline] none", dev=f"7:{i}")  # fmt: skip
        t.file(f"{path}/loop/backing_file", f"/home/test/loop{i}.img")
        t.file(f"{path}/loop/dio", "0")
        slaves.append((f"loop{i}", path))
    dm_device(t, "dm-0", "253:0", "vg_foo.4059-lv_foo.4059", "LVM-placeholder", slaves, size_sectors=65536)


def util_linux_bcachefs_tree() -> None:
    """util-linux's lsblk dump `multi-devs-bcachefs` (tests/ts/lsblk/dumps/multi-devs-bcachefs.tar.xz), rebuilt
    from what lsblk printed for it (tests/expected/lsblk/lsblk-multi-devs-bcachefs-basic, -mnt and -state; see
    tests/data/SOURCES.md): sdc (8:32, 500M, not rotational, bfq) with sdc1 (8:33, 250M) and sdc2 (8:34, 249M),
    both FSTYPE bcachefs, both mounted at /mnt/test: one bcachefs over two devices. A multi-device bcachefs is
    mounted with its devices joined by ':' as the source (mount -t bcachefs /dev/sdc1:/dev/sdc2), which is how
    lsblk gives both the one mount point; the mountinfo line is written that way (its ids and options are
    placeholders). The dump's other disks (sda, sdb, sr0, nvme0n1) are left out: no part of the set."""
    t = Tree("util_linux_bcachefs")
    rc = root_complex(t)
    ctrl = ahci(t, rc)
    b = sata_disk(t, ctrl, 3, "sdc", "8:32", model="placeholder", size_sectors=1024000, rotational=0,
                  scheduler="mq-deadline kyber [bfq] none")  # fmt: skip
    t.partition(b, "sdc1", 1, 2048, 512000, "8:33")
    t.partition(b, "sdc2", 2, 514048, 509952, "8:34")
    t.mountinfo(["80 1 8:33 / /mnt/test rw,relatime shared:40 - bcachefs /dev/sdc1:/dev/sdc2 rw"])


def main() -> None:
    raid1_tree()
    raid5_tree()
    raid1_failing_member_tree()
    raid10_tree()
    lvm_striped_tree()
    crypt_on_md_tree()
    degraded_tree()
    resyncing_tree()
    recovering_tree()
    btrfs_raid1_tree()
    shared_x1_tree()
    shared_usb2_tree()
    util_linux_lvm_tree()
    util_linux_bcachefs_tree()


if __name__ == "__main__":
    main()
