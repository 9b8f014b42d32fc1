"""`links` names vendors and devices from the system's pci.ids, as lspci does."""

from __future__ import annotations

import gzip
import os
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import DATA, SYSFS

from disksleuth.present import text
from disksleuth.probe.pci import list_pci_functions


def _pciids():  # imported per test, so each one fails on its own where the module is missing
    from disksleuth.probe import pciids

    return pciids


def lookup_pci_names(*args):
    return _pciids().lookup_pci_names(*args)


def pci_names(*args):
    return _pciids().pci_names(*args)


def find_pci_ids(*args):
    return _pciids().find_pci_ids(*args)


def _system_pci_ids() -> str | None:
    try:
        return find_pci_ids()
    except ImportError:
        return None


EXCERPT = os.path.join(DATA, "pciids", "pci.ids")  # verbatim lines of a real pci.ids (see README.md there)


@pytest.fixture(scope="module")
def excerpt() -> bytes:
    with open(EXCERPT, "rb") as fh:
        return fh.read()


def test_lookup_vendor_and_device(excerpt):
    names = lookup_pci_names(excerpt, [("144d", "a808"), ("1022", "1483"), ("10b5", "8747")])
    assert names[("144d", "a808")] == ("Samsung Electronics Co Ltd", "NVMe SSD Controller SM981/PM981/PM983")
    assert names[("1022", "1483")] == ("Advanced Micro Devices, Inc. [AMD]", "Starship/Matisse GPP Bridge")
    assert names[("10b5", "8747")][1] == "PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch"


def test_device_ids_stay_inside_their_vendor(excerpt):
    # 1042 is a device of 103c (HP) and of 1af4 (Red Hat) in the file; each vendor gets its own.
    names = lookup_pci_names(excerpt, [("1af4", "1042"), ("103c", "1042"), ("10b5", "1042"), ("144d", "0710")])
    assert names[("1af4", "1042")] == ("Red Hat, Inc.", "Virtio 1.0 block device")
    assert names[("103c", "1042")] == ("Hewlett-Packard Company", "J2970A DeskDirect 10BaseT/2 NIC")
    assert names[("10b5", "1042")] == ("PLX Technology, Inc.", None)  # not PLX's: no name borrowed from 144d
    assert names[("144d", "0710")] == ("Samsung Electronics Co Ltd", None)  # fffe's device, later in the file


def test_subsystem_lines_comments_and_the_class_section_are_not_devices(excerpt):
    # "\t\t144d a801  SSD 970 EVO" is a subsystem line under a808; "C 01" / "\t00" are classes.
    names = lookup_pci_names(excerpt, [("144d", "a801"), ("ffff", "0000"), ("0010", "8139"), ("ffff", None)])
    assert names[("144d", "a801")] == ("Samsung Electronics Co Ltd", None)
    assert names[("ffff", "0000")] == ("Illegal Vendor ID", None)
    assert names[("0010", "8139")] == ("Allied Telesis, Inc (Wrong ID)", "AT-2500TX V3 Ethernet")  # after a comment
    assert names[("ffff", None)] == ("Illegal Vendor ID", None)


def test_unknown_and_odd_ids(excerpt):
    names = lookup_pci_names(excerpt, [("dead", "beef"), ("8086", "0d57"), ("144D", "A808"), ("1", "2"), ("", None)])
    assert names[("dead", "beef")] == (None, None)
    assert names[("8086", "0d57")] == ("Intel Corporation", None)
    assert names[("144D", "A808")][1] == "NVMe SSD Controller SM981/PM981/PM983"  # sysfs is lower case; be lenient
    assert names[("1", "2")] == (None, None) and names[("", None)] == (None, None)
    assert lookup_pci_names(b"", [("8086", "a36d")]) == {("8086", "a36d"): (None, None)}
    assert lookup_pci_names(b"\xff\xfe garbage\n\t\x00", [("8086", None)]) == {("8086", None): (None, None)}


def test_display_name_like_lspci():
    assert text.pci_display_name("Intel Corporation", None, "8086:0d57") == "Intel Corporation Device 0d57"
    assert text.pci_display_name("Red Hat, Inc.", "Virtio 1.0 block device", "1af4:1042") == (
        "Red Hat, Inc. Virtio 1.0 block device"
    )
    assert text.pci_display_name(None, None, "dead:beef") == "dead:beef"


def test_search_order_and_gzip(tmp_path, excerpt):
    gz = tmp_path / "pci.ids.gz"
    gz.write_bytes(gzip.compress(excerpt))
    assert find_pci_ids([str(tmp_path / "missing"), str(gz)]) == str(gz)
    assert pci_names(["144d:a808", None], [str(gz)]) == {
        "144d:a808": ("Samsung Electronics Co Ltd", "NVMe SSD Controller SM981/PM981/PM983")
    }
    assert pci_names(["144d:a808"], [str(tmp_path / "missing")]) is None
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"not gzip")
    assert pci_names(["144d:a808"], [str(bad)]) is None


def test_functions_named_from_a_tree(excerpt):
    fns = {f.bdf: f for f in list_pci_functions(os.path.join(SYSFS, "scenario_badly_seated"), [EXCERPT])}
    assert fns["0000:03:00.0"].vendor_name == "Samsung Electronics Co Ltd"
    assert fns["0000:03:00.0"].device_name == "NVMe SSD Controller SM981/PM981/PM983"
    plain = list_pci_functions(os.path.join(SYSFS, "scenario_badly_seated"), [])
    assert all(f.vendor_name is None for f in plain)


def test_links_shows_names_in_table_and_json(cli, monkeypatch):
    monkeypatch.setattr(_pciids(), "PCI_IDS_PATHS", (EXCERPT,))
    tree = os.path.join(SYSFS, "pcie_switch_middle")
    human = cli("links", "--sysfs-root", tree)
    assert human.code == 0, human.err
    assert "Advanced Micro Devices, Inc. [AMD]" in human.out  # a pci.ids name is not rich markup
    assert "PLX Technology, Inc." in human.out
    doc = cli("links", "--json", "--sysfs-root", tree).json()
    ep = next(f for f in doc["functions"] if f["bdf"] == "0000:04:00.0")
    assert ep["vendor_name"] == "Samsung Electronics Co Ltd" and ep["device_name"] is None  # a80c: newer than the file


def test_links_without_pci_ids_says_how_to_get_names(cli, monkeypatch, tmp_path):
    monkeypatch.setattr(_pciids(), "PCI_IDS_PATHS", (str(tmp_path / "none"),))
    res = cli("links", "--sysfs-root", os.path.join(SYSFS, "scenario_badly_seated"))
    assert res.code == 0 and "install pciutils" in res.out
    doc = cli("links", "--json", "--sysfs-root", os.path.join(SYSFS, "scenario_badly_seated")).json()
    assert all(f["vendor_name"] is None for f in doc["functions"])


@pytest.mark.skipif(_system_pci_ids() is None, reason="no pci.ids installed (pciutils or hwdata)")
def test_links_on_this_machine_matches_lspci(cli):
    if not shutil.which("lspci"):
        pytest.skip("lspci is not installed")
    doc = cli("links", "--json").json()
    lspci = subprocess.run(["lspci", "-D", "-mm", "-n"], capture_output=True, text=True, check=True).stdout
    named = subprocess.run(["lspci", "-D", "-mm"], capture_output=True, text=True, check=True).stdout

    ours = {f["bdf"]: f for f in doc["functions"]}
    for ids_line, name_line in zip(lspci.splitlines(), named.splitlines(), strict=True):
        ids, names = shlex.split(ids_line), shlex.split(name_line)
        fn = ours[ids[0]]
        assert fn["vendor_name"] == names[2], (fn, names)
        # lspci -mm prints "Device 0d57" when pci.ids knows the vendor only.
        assert (fn["device_name"] or f"Device {ids[3]}") == names[3], (fn, names)


def test_links_and_list_fit_narrow_terminals_without_cutting_a_figure():
    """At 60 and 80 columns every line fits; the negotiated and capable links and the flag stay whole;
    what was left out is named."""
    for columns in (60, 80, 120):
        env = {**os.environ, "COLUMNS": str(columns)}
        tree = os.path.join(SYSFS, "scenario_badly_seated")
        run = [sys.executable, "-m", "disksleuth"]
        links = subprocess.run([*run, "links", "--sysfs-root", tree], capture_output=True, text=True, env=env).stdout
        listed = subprocess.run([*run, "list", "--sysfs-root", tree], capture_output=True, text=True, env=env).stdout
        for line in (links + listed).splitlines():
            assert len(line) <= columns and line == line.rstrip(), (columns, line)
        row = next(line for line in links.splitlines() if line.startswith("0000:03:00.0"))
        assert "PCIe 3.0 x2" in row and "PCIe 3.0 x4" in row and "DOWNGRADED" in row
        assert ("Samsung" in row) == (columns >= 80)  # the name goes before any link figure
        table = listed.split("\n\n")[0]
        assert "/dev/nvme0n1" in table and "1,772 MB/s" in table  # the device and its ceiling, never cut
        if columns < 120:
            assert "hidden at" in links + table
