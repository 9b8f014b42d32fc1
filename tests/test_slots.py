"""Slots by name: machine trees laid out as the kernel lays them out, with an SMBIOS table under
sys/firmware/dmi/tables (built by tests/smbios_tables.py from tests/data/smbios, SOURCES.md), read by list,
links, check/explain and the exporter."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from conftest import SYSFS, metric_value
from smbios_tables import END_OF_TABLE, entry_point_64, real_structures, tables

from disksleuth.probe.slots import SlotTable, read_slot_table
from disksleuth.probe.smbios import parse_smbios, walk_structures

REAL = tables()["smbios-lib-real"]  # J6B2 (x16) at the root port 0000:00:01.0, i219 at 0000:00:1f.6
ZN2 = tables()["csit-sm_zn2-encoded"]  # RSC-WR-6 SLOT1 (PCI Express 3 x16) at 0000:01:00.0, the device


def _chipset_x1_table() -> tuple[bytes, bytes]:
    """The scenario trees' x1 chipset slot sits at the root port 0000:00:1c.4: the real J6B2 structure
    with its address (devfn 0xE4) and width (08h, x1) set to that; a fixture, not a real table."""
    slot = bytearray(real_structures()["j6b2-type9"])
    slot[0x06], slot[0x10] = 0x08, 0xE4
    table = bytes(slot) + END_OF_TABLE
    return table, entry_point_64((3, 3, 0), len(table))


X1_TABLE, X1_ENTRY = _chipset_x1_table()


def _tree(tmp_path: Path, scenario: str) -> Path:
    root = tmp_path / scenario
    shutil.copytree(os.path.join(SYSFS, scenario), root, symlinks=True)
    return root


def _tables(root: Path) -> Path:
    tables = root / "sys/firmware/dmi/tables"
    tables.mkdir(parents=True)
    return tables


def _with_table(root: Path, table: bytes, entry: bytes) -> Path:
    tables = _tables(root)
    (tables / "smbios_entry_point").write_bytes(entry)  # as the kernel exports them: entry point ...
    (tables / "DMI").write_bytes(table)  # ... and the table alone
    return root


def _with_x1(root: Path) -> Path:
    return _with_table(root, X1_TABLE, X1_ENTRY)


def _nvme(cli, root: Path, *extra: str) -> dict:
    res = cli("list", "--json", "--sysfs-root", str(root), *extra)
    assert res.code == 0, res.err
    return next(d for d in res.json()["devices"] if d["name"] == "nvme0n1")


def test_slot_at_the_root_port_names_the_hop_and_the_hints(cli, tmp_path):
    """The issue's case: SMBIOS says the slot is x1, the link can do x4 (LnkCap) after the BIOS change."""
    root = _with_x1(_tree(tmp_path, "scenario_x4_after_bios"))
    dev = _nvme(cli, root)
    (hop,) = dev["link"]["hops"]
    assert hop["slot"] == {
        "name": "J6B2",
        "source": "smbios",
        "bus_address": "0000:00:1c.4",
        "matched": "port",
        "firmware_type": "PCI Express",
        "firmware_width": 1,
        "firmware_generation": None,
        "physical_width": None,
        "current_usage": "In Use",
        "acpi_index": None,
    }
    findings = {f["code"]: f for f in dev["findings"]}
    mismatch = findings["slot_firmware_mismatch"]
    assert mismatch["severity"] == "info"
    assert '"x1 PCI Express"' in mismatch["message"] and "PCIe 2.0 x4" in mismatch["message"]
    assert mismatch["evidence"]["firmware_width"] == 1 and mismatch["evidence"]["port_max_width"] == 4
    # the link wins for ceilings: PCIe 2.0 x4, not x1
    assert dev["link"]["current_ceiling_mbps"] == 1800.0
    assert "the slot marked J6B2 (root port 0000:00:1c.4)" in findings["slot_limited"]["message"]
    assert findings["slot_limited"]["hint"].startswith("The slot marked J6B2 (root port 0000:00:1c.4)")
    assert findings["slot_limited"]["evidence"]["slot"] == "J6B2"


def test_firmware_and_link_agreeing_say_nothing(cli, tmp_path):
    root = _with_x1(_tree(tmp_path, "scenario_x1_chipset_slot"))  # the slot x1, the port x1
    dev = _nvme(cli, root)
    assert dev["link"]["hops"][0]["slot"]["name"] == "J6B2"
    assert "slot_firmware_mismatch" not in {f["code"] for f in dev["findings"]}


def test_slot_addressed_by_the_device_in_it(cli, tmp_path):
    """Supermicro (FD.io CSIT): RSC-WR-6 SLOT1 (PCIe 3, x16) at 0000:01:00.0, the drive itself; its port does
    x4."""
    root = _with_table(_tree(tmp_path, "nvme_new_format"), ZN2.table, ZN2.entry)
    dev = _nvme(cli, root)
    slot = dev["link"]["hops"][0]["slot"]
    assert (slot["name"], slot["matched"], slot["firmware_generation"], slot["firmware_width"]) == (
        "RSC-WR-6 SLOT1 PCI-E 4.0 X16",
        "device",
        3,
        16,
    )
    (mismatch,) = [f for f in dev["findings"] if f["code"] == "slot_firmware_mismatch"]
    assert "PCIe 3.0 x4" in mismatch["message"] and "widths disagree" in mismatch["message"]


def test_list_and_check_text_show_the_slot(cli, tmp_path):
    root = _with_x1(_tree(tmp_path, "scenario_x1_chipset_slot"))
    listed = cli("list", "--sysfs-root", str(root))
    assert listed.code == 0, listed.err
    assert "0000:03:00.0 ← 0000:00:1c.4 [J6B2]" in listed.out
    explained = cli("explain", "nvme0n1", "--read", "373MB/s", "--sysfs-root", str(root))
    assert "[J6B2]" in explained.out and "the slot marked J6B2" in explained.out


def test_links_shows_the_slot(cli, tmp_path):
    root = _with_x1(_tree(tmp_path, "scenario_x1_chipset_slot"))
    res = cli("links", "--json", "--sysfs-root", str(root))
    assert res.code == 0, res.err
    by_bdf = {f["bdf"]: f for f in res.json()["functions"]}
    assert by_bdf["0000:03:00.0"]["slot"] == "J6B2"
    assert by_bdf["0000:00:1c.4"]["slot"] is None
    text = cli("links", "--sysfs-root", str(root))
    assert "J6B2" in text.out


def test_exporter_hop_info_has_a_slot_label(cli, tmp_path):
    root = _with_x1(_tree(tmp_path, "scenario_x1_chipset_slot"))
    out = tmp_path / "prom"
    out.mkdir()
    res = cli("exporter", "--textfile", str(out), "--sysfs-root", str(root), "--no-bench")
    assert res.code == 0, res.err
    text = (out / "disksleuth.prom").read_text()
    assert metric_value(text, "disksleuth_link_hop_info", device="nvme0n1", slot="J6B2") == 1
    plain = tmp_path / "plain"
    plain.mkdir()
    cli(
        "exporter",
        "--textfile",
        str(plain),
        "--sysfs-root",
        os.path.join(SYSFS, "scenario_x1_chipset_slot"),
        "--no-bench",
    )
    assert metric_value((plain / "disksleuth.prom").read_text(), "disksleuth_link_hop_info", slot="") == 1


def test_slot_at_the_root_port_real_table(cli, tmp_path):
    """The real J6B2 structure (x16) at 0000:00:01.0, the port of the drive at 0000:01:00.0."""
    root = _with_table(_tree(tmp_path, "nvme_new_format"), REAL.table, REAL.entry)
    slot = _nvme(cli, root)["link"]["hops"][0]["slot"]
    assert (slot["name"], slot["matched"], slot["bus_address"], slot["firmware_width"]) == (
        "J6B2",
        "port",
        "0000:00:01.0",
        16,
    )


def test_placeholder_addresses_name_no_link():
    """0000:ff:00.0 (CSIT's Supermicro's empty M.2 slots, twice) and 0000:00:00.0 are never matched."""
    slots = SlotTable(smbios_slots=parse_smbios(ZN2.table).slots)
    assert slots.slot_for("0000:ff:00.0", "0000:ff:00.0") is None
    assert slots.slot_for("0000:fe:1c.0", "0000:ff:00.1") is None
    # 0000:00:00.0, as laptops state for card readers: the rule, on a real slot given that address
    (j6b2,) = parse_smbios(REAL.table).slots
    laptop = SlotTable(smbios_slots=(dataclasses.replace(j6b2, bus_address="0000:00:00.0"),))
    assert laptop.slot_for("0000:00:1c.0", "0000:00:00.0") is None
    assert laptop.slot_for("0000:00:00.0", "0000:01:00.0") is None


def test_a_second_function_of_the_card_in_the_slot():
    slots = SlotTable(smbios_slots=parse_smbios(ZN2.table).slots)
    slot = slots.slot_for("0000:40:01.1", "0000:41:00.1")  # RSC-W-66G4 SLOT1 names 0000:41:00.0
    assert slot is not None and (slot.name, slot.matched) == ("RSC-W-66G4 SLOT1 PCI-E 4.0 X16", "secondary_bus")


def test_kernel_slots_labels_and_acpi_index(tmp_path):
    root = _tree(tmp_path, "scenario_x1_chipset_slot")
    slot_dir = root / "sys/bus/pci/slots/3"
    slot_dir.mkdir(parents=True)
    (slot_dir / "address").write_text("0000:03:00\n")
    table = read_slot_table(str(root))
    got = table.slot_for("0000:00:1c.4", "0000:03:00.0")
    assert got is not None and (got.name, got.source, got.matched) == ("3", "pci_slot", "slot_address")
    shutil.rmtree(slot_dir)
    device = root / "sys/bus/pci/devices/0000:03:00.0"
    (device / "label").write_text(" Onboard - NVMe\n")
    (device / "acpi_index").write_text("5\n")
    got = read_slot_table(str(root)).slot_for("0000:00:1c.4", "0000:03:00.0")
    assert got is not None and (got.name, got.source, got.acpi_index) == ("Onboard - NVMe", "label", 5)


def test_older_kernels_entries_directory(tmp_path):
    """No tables/ directory: /sys/firmware/dmi/entries/T-N/raw, one structure each, as the kernel splits them."""
    root = _tree(tmp_path, "scenario_x1_chipset_slot")
    table = REAL.table
    structures, _ = walk_structures(table)
    counts: dict[int, int] = {}
    for s in structures:
        n = counts.get(s.type, 0)
        counts[s.type] = n + 1
        entry = root / f"sys/firmware/dmi/entries/{s.type}-{n}"
        entry.mkdir(parents=True)
        end = table.index(b"\0\0", s.offset + len(s.data)) + 2
        (entry / "raw").write_bytes(table[s.offset : end])
    got = read_slot_table(str(root))
    assert [s.designation for s in got.smbios_slots] == ["J6B2"]
    assert got.slot_for("0000:00:01.0", "0000:01:00.0").name == "J6B2"  # type: ignore[union-attr]


def test_a_damaged_table_is_a_note_not_a_failure(cli, tmp_path):
    root = _with_x1(_tree(tmp_path, "scenario_x1_chipset_slot"))
    dmi = root / "sys/firmware/dmi/tables/DMI"
    dmi.write_bytes(dmi.read_bytes()[:20])  # cut inside the slot
    (root / "sys/firmware/dmi/tables/smbios_entry_point").write_bytes(b"garbage")
    dev = _nvme(cli, root)
    assert dev["link"]["hops"][0]["slot"] is None
    assert any("SMBIOS entry point: no _SM3_, _SM_ or _DMI_ anchor" in n for n in dev["notes"])
    table = read_slot_table(str(root))
    assert any("no _SM3_, _SM_ or _DMI_ anchor" in n for n in table.notes)


def test_a_table_link_out_of_the_root_is_refused(tmp_path):
    root = _tree(tmp_path, "scenario_x1_chipset_slot")
    tables = _tables(root)
    outside = tmp_path / "outside-DMI"
    outside.write_bytes(X1_TABLE)
    (tables / "DMI").symlink_to(outside)
    (tables / "smbios_entry_point").write_bytes(X1_ENTRY)
    assert read_slot_table(str(root)).smbios_slots == ()


def test_this_machine(capsys):
    """Whatever this machine's firmware says: read for real, printed for the report."""
    table = read_slot_table("/")
    with capsys.disabled():
        print(f"\nthis machine: SMBIOS {table.smbios_version}, {len(table.smbios_slots)} slots, notes {table.notes}")
    for s in table.smbios_slots:
        assert s.designation is None or isinstance(s.designation, str)


@pytest.mark.skipif(not os.path.exists("/sys/firmware/dmi/tables/DMI"), reason="this machine exports no SMBIOS table")
def test_this_machine_against_dmidecode():  # pragma: no cover - depends on the machine
    from disksleuth.probe.slots import cross_check_dmidecode

    assert cross_check_dmidecode(read_slot_table("/")) == ()


def test_report_chain_names_the_slot(cli, tmp_path):
    from disksleuth.present.report import chain_figure

    root = _with_x1(_tree(tmp_path, "scenario_x1_chipset_slot"))
    fig = chain_figure(_nvme(cli, root))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("slot J6B2" in t for t in texts), texts
