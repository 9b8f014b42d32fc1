"""`list` shows what lsblk users expect (mount points, file system, rotational, which sector size is
which), and link labels read the way people name the links."""

from __future__ import annotations

import os
import shutil

from conftest import SYSFS

from disksleuth.analysis import ceilings
from disksleuth.analysis.safety import identity_line
from disksleuth.model import Device, SataHop, UsbHop
from disksleuth.probe import block


def _list(cli, tree: str, *extra: str):
    res = cli("list", *extra, "--sysfs-root", tree if os.path.isabs(tree) else os.path.join(SYSFS, tree))
    assert res.code == 0, res.err
    return res


def test_list_table_shows_mounts_fs_rotational_and_labelled_sector_sizes(cli):
    out = _list(cli, "scenario_usb_stick_root").out
    header, row = out.splitlines()[:2]
    for col in ("rota", "log-sec", "phy-sec", "fs", "mounts"):
        assert col in header.split(), header
    cells = row.split()
    # The root file system lives on the partition sdb1; the disk's row still says where and what it is.
    assert "ext4" in cells and "/" in cells
    assert header.index("rota") < header.index("log-sec") < header.index("phy-sec")


def test_list_json_adds_fstype_and_all_mountpoints(cli):
    doc = _list(cli, "scenario_usb_stick_root", "--json", "--all").json()
    sdb = next(d for d in doc["devices"] if d["name"] == "sdb")
    assert sdb["fstype"] is None  # the disk itself holds a partition table, not a file system
    assert sdb["all_mountpoints"] == ["/"]
    assert sdb["fstypes"] == ["ext4"]
    assert sdb["partitions"][0]["fstype"] == "ext4"
    assert sdb["rotational"] is False and sdb["logical_block_size"] == 512  # existing fields stay


def test_unmounted_file_system_comes_from_the_udev_database(cli, tmp_path):
    tree = tmp_path / "sata"
    shutil.copytree(os.path.join(SYSFS, "sata_3g_on_6g"), tree, symlinks=True)
    (tree / "run/udev/data").mkdir(parents=True)
    # A real entry, as systemd-udevd writes it (trimmed): one property per line.
    (tree / "run/udev/data/b8:0").write_text(
        "S:disk/by-id/ata-Samsung_SSD_860\nW:12\nI:1863021\nE:ID_FS_UUID=1b7c-9f2e\n"
        "E:ID_FS_VERSION=FAT32\nE:ID_FS_TYPE=vfat\nE:ID_FS_USAGE=filesystem\nG:systemd\n"
    )
    doc = _list(cli, str(tree), "--json").json()
    assert doc["devices"][0]["fstype"] == "vfat"
    assert "vfat" in _list(cli, str(tree)).out


def test_parse_udev_fstype():
    assert block.parse_udev_fstype("E:ID_FS_TYPE=crypto_LUKS\nE:ID_FS_USAGE=crypto") == "crypto_LUKS"
    assert block.parse_udev_fstype("E:ID_FS_TYPE=\n") is None
    assert block.parse_udev_fstype(None) is None
    assert block.parse_udev_fstype("E:ID_PART_TABLE_TYPE=gpt") is None


# --- labels ----------------------------------------------------------------------------------


def test_sata_label_is_a_rate_not_a_revision(cli):
    assert ceilings.sata_label(3.0) == "SATA 3 Gb/s link"
    assert ceilings.sata_label(1.5) == "SATA 1.5 Gb/s link"
    chain = ceilings.link_chain((SataHop("link3", "ata3", 3.0, None, 6.0),))
    assert chain.hops[0].label == "SATA 3 Gb/s link" and chain.hops[0].capable_label == "SATA 6 Gb/s link"
    out = _list(cli, "sata_3g_on_6g").out
    assert "SATA 3.0" not in out and "6.0 Gb/s" not in out
    assert "SATA 3 Gb/s link" in out


def test_usb_version_reads_as_marketing_name_and_rate(cli):
    assert ceilings.usb_version_label("3.10") == "USB 3.2 Gen 1 or Gen 2 (5 or 10 Gb/s)"
    assert ceilings.usb_version_label(" 3.00") == "USB 3.2 Gen 1 (5 Gb/s)"
    assert ceilings.usb_version_label("2.10") == "USB 2.0 (480 Mb/s)"
    assert ceilings.usb_version_label("9.99") == "USB (bcdUSB 9.99)"
    hop = UsbHop("2-1", 5000.0, "3.10", "uas", 5000.0, 10000.0)
    assert ceilings.link_chain((hop,)).hops[0].label == "USB 3.2 Gen 1 (5 Gb/s), uas"
    out = _list(cli, "usb3_enclosure_on_480").out  # a bcdUSB 3.20 bridge stuck at 480 Mb/s
    assert "USB 3.20" not in out and "USB 3.10" not in out
    assert "USB 3.2 Gen 1, Gen 2 or Gen 2x2 (5 to 20 Gb/s)" in out
    assert "capable: USB 3.2 Gen 1 (5 Gb/s), uas" in out


def test_identity_line_says_no_serial_once():
    dev = Device(name="loop9", path="/dev/loop9", transport="loop", size_bytes=1 << 20)
    assert "serial no serial" not in identity_line(dev)
    assert ", no serial," in identity_line(dev)
    assert "serial ABC123" in identity_line(Device(name="sda", path="/dev/sda", transport="sata", serial="ABC123"))
