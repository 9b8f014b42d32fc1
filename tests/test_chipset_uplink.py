"""Who shares a drive's chipset uplink (behind_chipset), on the desktop_chipset_m2 tree (an Intel Cannon Lake
PCH desktop laid out as the kernel lays it out; tests/data/sysfs/make_trees.py) with an SMBIOS slot table
added under sys/firmware/dmi/tables. The table is encoded here (tests/smbios_tables.encode_slot): a
fixture naming this tree's root ports, not a real board's table."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import SYSFS
from smbios_tables import END_OF_TABLE, encode_slot, entry_point_64

from disksleuth.probe.smbios import SmbiosSlot

TREE = "desktop_chipset_m2"


def _slot(handle: int, name: str, type_name: str, width: int, usage: str, address: str | None) -> SmbiosSlot:
    return SmbiosSlot(
        handle=handle,
        designation=name,
        type_code=None,
        type_name=type_name,
        bus_width_code=None,
        width_lanes=width,
        width_name=None,
        current_usage=usage,
        length="Long",
        slot_id=handle,
        bus_address=address,
        generation=None,
    )


SLOTS = (
    _slot(0x20, "PCIEX16_1", "PCI Express 3 x16", 16, "In Use", "0000:00:01.0"),  # the CPU's x16
    _slot(0x21, "M.2_2", "M.2 Socket 3", 4, "In Use", "0000:00:1b.4"),  # PCH
    _slot(0x22, "PCIEX1_1", "PCI Express 3 x1", 1, "In Use", "0000:00:1c.0"),  # PCH
    _slot(0x23, "M.2_1", "M.2 Socket 3", 4, "Available", "0000:00:1d.0"),  # PCH, empty
    _slot(0x24, "PCIEX16_2", "PCI Express 3 x16", 16, "Available", None),  # no address (bus FFh)
)


def _tree(tmp_path: Path, slots: tuple[SmbiosSlot, ...] = SLOTS) -> Path:
    root = tmp_path / TREE
    shutil.copytree(os.path.join(SYSFS, TREE), root, symlinks=True)
    if slots:
        table = b"".join(encode_slot(s) for s in slots) + END_OF_TABLE
        tables = root / "sys/firmware/dmi/tables"
        tables.mkdir(parents=True)
        (tables / "smbios_entry_point").write_bytes(entry_point_64((3, 2, 0), len(table)))
        (tables / "DMI").write_bytes(table)
    return root


def _findings(cli, root: Path, name: str) -> dict[str, dict]:
    res = cli("list", "--json", "--sysfs-root", str(root))
    assert res.code == 0, res.err
    dev = next(d for d in res.json()["devices"] if d["name"] == name)
    return {f["code"]: f for f in dev["findings"]}


SHARED = (
    "M.2_2 is behind the chipset: it shares the chipset's one uplink to the CPU (DMI on Intel: DMI 2.0 ≈ 2,000 "
    "MB/s, DMI 3.0 ≈ 3,900 MB/s, by chipset generation) with the USB controller at 0000:00:14.0, the SATA "
    "controller at 0000:00:17.0, the network controller at 0000:00:1f.6 and slot PCIEX1_1 (network controller "
    "0000:03:00.0)."
)
CPU = (
    "PCIEX16_1 (root port 0000:00:01.0, holding 0000:01:00.0) is wired to the CPU: a drive there does not share "
    "the chipset's uplink (the board manual's block diagram says what each slot shares and whether this drive "
    "fits there)."
)


def test_drive_in_a_chipset_m2_slot_names_what_shares_the_uplink(cli, tmp_path):
    found = _findings(cli, _tree(tmp_path), "nvme1n1")
    chipset = found["behind_chipset"]
    assert chipset["message"] == f"The path crosses the chipset at 0000:00:1b.4. {SHARED}"
    assert chipset["hint"] == f"{CPU} Traffic on the other chipset devices lowers this drive's throughput."
    ev = chipset["evidence"]
    assert ev["shares_uplink_with"] == ["0000:00:14.0", "0000:00:17.0", "0000:00:1f.6", "0000:03:00.0"]
    assert ev["cpu_slots"] == ["PCIEX16_1"]
    assert ev["uplink_port"] is None and ev["uplink_width"] is None  # DMI: no link sysfs shows
    # no claim of lane sharing: no source read here says which lanes a slot shares
    assert "lanes" not in chipset["message"] and "SATA port" not in chipset["message"] + chipset["hint"]


def test_cpu_drive_has_no_chipset_finding(cli, tmp_path):
    found = _findings(cli, _tree(tmp_path), "nvme0n1")
    assert "behind_chipset" not in found


def test_without_slot_names_the_functions_are_still_named(cli, tmp_path):
    found = _findings(cli, _tree(tmp_path, slots=()), "nvme1n1")
    chipset = found["behind_chipset"]
    assert "This drive is behind the chipset: it shares the chipset's one uplink" in chipset["message"]
    assert "the network controller at 0000:03:00.0" in chipset["message"]
    # no named CPU slot: the general advice stays
    assert chipset["hint"].startswith("For the best sequential figures use a CPU-attached M.2 slot")
    assert chipset["evidence"]["cpu_slots"] == []


def test_list_and_explain_text_show_the_sharing(cli, tmp_path):
    root = _tree(tmp_path)
    listed = cli("list", "--sysfs-root", str(root))
    assert listed.code == 0, listed.err
    flat = " ".join(listed.out.split())
    assert "M.2_2 is behind the chipset" in flat and "PCIEX16_1 (root port 0000:00:01.0" in flat
    explained = cli("explain", "nvme1n1", "--read", "3000MB/s", "--sysfs-root", str(root))
    flat = " ".join(explained.out.split())
    assert " ".join(SHARED.split()) in flat
    assert "is wired to the CPU: a drive there does not share the chipset's uplink" in flat


def test_links_says_once_what_shares_the_chipset_uplink(cli, tmp_path):
    root = _tree(tmp_path)
    res = cli("links", "--json", "--sysfs-root", str(root))
    assert res.code == 0, res.err
    codes = {f["bdf"]: [x["code"] for x in f["findings"]] for f in res.json()["functions"]}
    assert codes["0000:02:00.0"] == ["behind_chipset"] and codes["0000:03:00.0"] == ["behind_chipset"]
    assert codes["0000:01:00.0"] == []  # on the CPU's root port
    text = " ".join(cli("links", "--sysfs-root", str(root)).out.split())
    assert text.count("behind the chipset, sharing one uplink") == 1
    assert (
        "the SATA controller at 0000:00:17.0, the network controller at 0000:00:1f.6, slot M.2_2 (NVMe drive "
        "0000:02:00.0) and slot PCIEX1_1 (network controller 0000:03:00.0). Wired to the CPU: PCIEX16_1 (root port "
        "0000:00:01.0, holding 0000:01:00.0)."
    ) in text


def test_amd_chipset_uplink_is_the_link_sysfs_shows(cli, tmp_path):
    """X570: the chipset hangs from the CPU root port 0000:00:01.2 over a PCIe link the tree shows; the kernel's
    slot "1" (/sys/bus/pci/slots/1/address) holds the CPU-attached drive."""
    root = tmp_path / "amd"
    shutil.copytree(os.path.join(SYSFS, "desktop_amd_chipset"), root, symlinks=True)
    (root / "sys/bus/pci/slots/1").mkdir(parents=True)
    (root / "sys/bus/pci/slots/1/address").write_text("0000:01:00\n")
    chipset = _findings(cli, root, "nvme1n1")["behind_chipset"]
    assert chipset["message"] == (
        "The path crosses the chipset at 0000:00:01.2. This drive is behind the chipset: it shares the chipset's "
        "one uplink to the CPU (PCIe 4.0 x4 from the CPU's root port 0000:00:01.2, ~7,089 MB/s) with the SATA "
        "controller at 0000:05:00.0 and the USB controller at 0000:06:00.0."
    )
    assert chipset["hint"].startswith("slot 1 (root port 0000:00:01.1, holding 0000:01:00.0) is wired to the CPU")
    ev = chipset["evidence"]
    assert (ev["uplink_port"], ev["uplink_speed_gtps"], ev["uplink_width"]) == ("0000:00:01.2", 16.0, 4)
    assert ev["shares_uplink_with"] == ["0000:05:00.0", "0000:06:00.0"]
    assert "behind_chipset" not in _findings(cli, root, "nvme0n1")
