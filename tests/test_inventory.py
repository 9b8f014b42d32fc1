"""`list` and `links` against sysfs trees laid out like the kernel's, and on this machine."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest
from conftest import SYSFS, loop_device, needs_loop

from disksleuth.probe.capture import open_root
from disksleuth.probe.sysfs import Notes, parse_mmc_ios, parse_pcie_speed, parse_sata_speed

# tree: (device, transport, current ceiling MB/s, capable ceiling MB/s, finding codes)
TREES = {
    "nvme_old_format": ("nvme0n1", "nvme", 3544.6, 3544.6, set()),
    "nvme_new_format": ("nvme0n1", "nvme", 3544.6, 3544.6, set()),
    "nvme_multipath": ("nvme0n1", "nvme", 7089.1, 7089.1, set()),
    "pcie_switch_middle": ("nvme0n1", "nvme", 886.1, 886.1, {"slot_limited"}),
    "scenario_badly_seated": ("nvme0n1", "nvme", 1772.3, 3544.6, {"link_downgraded"}),
    "scenario_gen4_on_gen3": ("nvme0n1", "nvme", 3544.6, 3544.6, {"slot_limited"}),
    "scenario_x1_chipset_slot": ("nvme0n1", "nvme", 450.0, 450.0, {"slot_limited", "behind_chipset"}),
    "scenario_x4_after_bios": ("nvme0n1", "nvme", 1800.0, 1800.0, {"slot_limited", "behind_chipset"}),
    "scenario_nuc_wifi_slot": ("nvme0n1", "nvme", 450.0, 450.0, {"slot_limited", "behind_chipset"}),
    "scenario_usb2_caddy": ("sdb", "usb", 40.0, 280.0, {"usb2_link"}),
    "usb3_enclosure_on_480": ("sdb", "usb", 40.0, 400.0, {"usb2_link"}),
    "scenario_usb_stick_root": ("sdb", "usb", 280.0, 280.0, {"usb_bot"}),
    "sata_3g_on_6g": ("sda", "sata", 285.0, 570.0, {"sata_link_downgraded"}),
    "scenario_sd_card": ("mmcblk0", "mmc", None, None, set()),
    "sd_card_sdr104": ("mmcblk0", "mmc", 104.0, 104.0, set()),
    "unknown_link": ("nvme0n1", "nvme", None, None, set()),
}


def _device(cli, tree: str, name: str, *extra: str) -> dict:
    res = cli("list", "--json", "--sysfs-root", os.path.join(SYSFS, tree), *extra)
    assert res.code == 0, res.err
    doc = res.json()
    assert doc["schema"] == "disksleuth/1"
    return next(d for d in doc["devices"] if d["name"] == name)


@pytest.mark.parametrize("tree", sorted(TREES))
def test_tree_ceilings_and_findings(cli, tree):
    name, transport, current, capable, codes = TREES[tree]
    dev = _device(cli, tree, name)
    assert dev["transport"] == transport
    assert dev["link"]["current_ceiling_mbps"] == current
    assert dev["link"]["capable_ceiling_mbps"] == capable
    assert {f["code"] for f in dev["findings"]} == codes
    for f in dev["findings"]:
        assert f["severity"] in ("info", "warn")
        assert f["message"] and f["hint"] and f["evidence"]


def test_old_and_new_speed_formats_agree(cli):
    old = _device(cli, "nvme_old_format", "nvme0n1")["link"]["hops"]
    new = _device(cli, "nvme_new_format", "nvme0n1")["link"]["hops"]
    assert old == new
    assert old[0]["speed_gtps"] == 8.0 and old[0]["width"] == 4
    assert old[0]["label"] == "PCIe 3.0 x4"


def test_switch_chain_orders_hops_device_first_and_names_the_middle_hop(cli):
    dev = _device(cli, "pcie_switch_middle", "nvme0n1")
    hops = dev["link"]["hops"]
    assert [(h["name"], h["port"]) for h in hops] == [
        ("0000:04:00.0", "0000:03:08.0"),  # endpoint <- switch downstream port
        ("0000:02:00.0", "0000:00:01.1"),  # switch upstream port <- root port
    ]
    assert dev["link"]["bottleneck"] == "PCIe 3.0 x1"
    slot = next(f for f in dev["findings"] if f["code"] == "slot_limited")
    assert "switch upstream port 0000:02:00.0" in slot["message"]
    assert slot["evidence"]["path_capable_mbps"] == 886.1


def test_x1_slot_message_names_port_and_bios_setting(cli):
    dev = _device(cli, "scenario_x1_chipset_slot", "nvme0n1")
    slot = next(f for f in dev["findings"] if f["code"] == "slot_limited")
    assert "root port 0000:00:1c.4" in slot["message"]
    assert "PCIe 2.0 = 5 GT/s, 8b/10b, 500 MB/s per lane, ~450 MB/s usable on x1" in slot["message"]
    assert "offers only x1" in slot["hint"] and "BIOS" in slot["hint"] and "lane-sharing" in slot["hint"]


def test_width_downgrade_evidence(cli):
    dev = _device(cli, "scenario_badly_seated", "nvme0n1")
    (f,) = dev["findings"]
    assert f["evidence"]["width"] == 2 and f["evidence"]["capable_width"] == 4
    assert "x2" in f["message"] and "x4" in f["message"]


def test_usb_hop_fields(cli):
    hop = _device(cli, "scenario_usb2_caddy", "sdb")["link"]["hops"][0]
    assert hop["kind"] == "usb"
    assert hop["speed_mbps"] == 480 and hop["driver"] == "usb-storage" and hop["version"] == "3.10"
    assert hop["host_max_mbps"] == 10000
    usb2 = _device(cli, "scenario_usb2_caddy", "sdb")["findings"][0]
    assert "USB 3.2 Gen 1 or Gen 2 (5 or 10 Gb/s)" in usb2["message"]  # bcdUSB 3.10, named as people know it


def test_sata_hop_fields(cli):
    dev = _device(cli, "sata_3g_on_6g", "sda")
    hop = dev["link"]["hops"][0]
    assert (hop["sata_spd_gbps"], hop["sata_spd_limit_gbps"], hop["hw_sata_spd_limit_gbps"]) == (3.0, None, 6.0)
    assert dev["model"] == "Samsung SSD 860"  # libata's "ATA" vendor dropped
    assert dev["serial"] == "S3Z9NB0K123456X"  # from VPD page 0x80
    assert dev["findings"][0]["severity"] == "info"  # drive maximum unknown without smartctl


def test_sd_card_with_and_without_debugfs(cli):
    without = _device(cli, "scenario_sd_card", "mmcblk0")
    assert without["link"]["hops"][0]["card_type"] == "SD"
    assert any("debugfs" in n for n in without["notes"])
    hop = _device(cli, "sd_card_sdr104", "mmcblk0")["link"]["hops"][0]
    assert (hop["timing"], hop["bus_width_bits"], hop["clock_hz"]) == ("sd uhs SDR104", 4, 200000000)


def test_multipath_follows_the_controller(cli):
    dev = _device(cli, "nvme_multipath", "nvme0n1")
    assert dev["model"] == "Micron_7450_MTFDKCC3T2TFS"
    assert dev["link"]["hops"][0]["name"] == "0000:01:00.0"


def test_unknown_link_is_a_note_not_a_number(cli):
    dev = _device(cli, "unknown_link", "nvme0n1")
    assert dev["link"]["hops"][0]["speed_gtps"] is None
    assert any("'Unknown'" in n for n in dev["notes"])


def test_partitions_and_mounts_only_with_all(cli):
    assert "partitions" not in _device(cli, "scenario_usb_stick_root", "sdb")
    dev = _device(cli, "scenario_usb_stick_root", "sdb", "--all")
    assert dev["partitions"][0]["name"] == "sdb1"
    assert dev["partitions"][0]["mountpoints"] == ["/"]


def test_malformed_values_become_notes(cli):
    res = cli("list", "--json", "--all", "--sysfs-root", os.path.join(SYSFS, "malformed"))
    assert res.code == 0 and "Traceback" not in res.err
    devs = {d["name"]: d for d in res.json()["devices"]}
    nvme = devs["nvme0n1"]
    assert nvme["size_bytes"] is None
    notes = " | ".join(nvme["notes"])
    assert "unreadable value 'not-a-number'" in notes
    assert "garbage GT/s" in notes and "empty value" in notes and "link down" in notes
    assert nvme["mountpoints"] == ["/data"]  # the good mountinfo line survives the garbage one
    assert "dangling" in devs["sdz"]["notes"][0]
    human = cli("list", "--all", "--sysfs-root", os.path.join(SYSFS, "malformed"))
    assert human.code == 0 and "note:" in human.out


def test_links_flags_downgrade_and_port_limit(cli):
    res = cli("links", "--json", "--sysfs-root", os.path.join(SYSFS, "scenario_badly_seated"))
    fns = {f["bdf"]: f for f in res.json()["functions"]}
    assert fns["0000:03:00.0"]["downgraded"] is True
    assert fns["0000:00:01.0"]["role"] == "root_port"
    assert fns["0000:03:00.0"]["role"] == "endpoint" and fns["0000:03:00.0"]["kind"] == "NVMe"
    res = cli("links", "--json", "--sysfs-root", os.path.join(SYSFS, "pcie_switch_middle"))
    fns = {f["bdf"]: f for f in res.json()["functions"]}
    assert fns["0000:02:00.0"]["role"] == "upstream_port"
    assert fns["0000:03:08.0"]["role"] == "downstream_port"
    assert fns["0000:04:00.0"]["downgraded"] is False
    assert fns["0000:02:00.0"]["port_limited"] is False  # x1 both ends: not a downgrade
    res = cli("links", "--json", "--sysfs-root", os.path.join(SYSFS, "scenario_gen4_on_gen3"))
    fns = {f["bdf"]: f for f in res.json()["functions"]}
    assert fns["0000:03:00.0"]["port_limited"] is True and fns["0000:03:00.0"]["downgraded"] is False
    human = cli("links", "--sysfs-root", os.path.join(SYSFS, "scenario_badly_seated"))
    assert "DOWNGRADED" in human.out


def test_links_handles_dangling_pci_link(cli):
    res = cli("links", "--json", "--sysfs-root", os.path.join(SYSFS, "malformed"))
    fns = {f["bdf"]: f for f in res.json()["functions"]}
    assert "dangling" in fns["0000:09:00.0"]["notes"][0]


# --- pure parsers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("8 GT/s", 8.0),
        ("8.0 GT/s PCIe", 8.0),
        ("2.5 GT/s", 2.5),
        ("2.5 GT/s PCIe", 2.5),
        ("16.0 GT/s PCIe", 16.0),
        ("64.0 GT/s PCIe", 64.0),
        ("Unknown", None),
        ("Unknown speed", None),
        ("", None),
        ("fast", None),
    ],
)
def test_parse_pcie_speed(text, expected):
    notes = Notes()
    assert parse_pcie_speed(text, "x", notes) == expected
    assert bool(notes.items) == (expected is None)


@pytest.mark.parametrize("text,expected", [("6.0 Gbps", 6.0), ("1.5 Gbps", 1.5), ("<unknown>", None)])
def test_parse_sata_speed(text, expected):
    notes = Notes()
    assert parse_sata_speed(text, "x", notes) == expected
    assert not notes.items  # "<unknown>" is the kernel's word for "no limit", not an error


def test_parse_mmc_ios_old_hs200_name():
    text = "clock:\t\t52000000 Hz\nbus width:\t3 (8 bits)\ntiming spec:\t9 (mmc high-speed SDR200)\n"
    assert parse_mmc_ios(text) == ("mmc high-speed SDR200", 52000000, 8)


# --- this machine ----------------------------------------------------------------------------


def test_list_on_this_machine_shows_vda_as_virtio(cli):
    if not os.path.exists("/sys/block/vda"):
        pytest.skip("this machine has no vda")
    res = cli("list", "--json")
    assert res.code == 0
    vda = next(d for d in res.json()["devices"] if d["name"] == "vda")
    assert vda["transport"] == "virtio"
    assert vda["link"]["current_ceiling_mbps"] is None and vda["link"]["hops"][0]["kind"] == "virtual"
    assert vda["size_bytes"] > 0


@pytest.mark.root
@needs_loop
def test_list_shows_loop_and_zram_devices(cli):
    with loop_device(64) as dev:
        name = os.path.basename(dev)
        res = cli("list", "--json")
        loop = next(d for d in res.json()["devices"] if d["name"] == name)
        assert loop["transport"] == "loop" and loop["backing_file"].startswith("/dev/shm/")
        assert loop["link"]["current_ceiling_mbps"] is None
        assert name in cli("list").out
    zram = _configure_zram()
    if zram is None:
        pytest.skip("no free zram device")
    try:
        res = cli("list", "--json")
        z = next(d for d in res.json()["devices"] if d["name"] == zram)
        assert z["transport"] == "zram" and z["size_bytes"] == 64 << 20
    finally:
        with open(f"/sys/block/{zram}/reset", "w") as fh:
            fh.write("1")


def _configure_zram() -> str | None:
    if not os.path.exists("/sys/class/zram-control") and not os.path.exists("/sys/block/zram0"):
        subprocess.run(["modprobe", "zram"], check=False, capture_output=True)
    for name in sorted(os.listdir("/sys/block")):
        if name.startswith("zram"):
            with open(f"/sys/block/{name}/disksize") as fh:
                if fh.read().strip() != "0":
                    continue
            try:
                with open(f"/sys/block/{name}/disksize", "w") as fh:
                    fh.write(str(64 << 20))
            except OSError:
                continue
            return name
    return None


@pytest.mark.root
@needs_loop
def test_capture_round_trip(cli, tmp_path):
    with loop_device(64) as dev:
        bundle = tmp_path / "capture.tar.gz"
        listed_before = {d["name"]: d for d in cli("list", "--json", "--all").json()["devices"]}
        res = cli("capture", "-o", str(bundle), "--keep-serials", "--keep-names")
        assert res.code == 0, res.err
        listed_after = {d["name"]: d for d in cli("list", "--json", "--all").json()["devices"]}
        # Other tests (pytest-xdist workers) attach and detach loop devices meanwhile: compare the devices that
        # were the same before and after the capture, this test's own among them.
        live = {name: d for name, d in listed_after.items() if listed_before.get(name) == d}
        assert os.path.basename(dev) in live
        # Unpacked by disksleuth itself: tarfile's extraction filters are missing from Debian 12's Python 3.11.2.
        unpacked = open_root(str(bundle))
        try:
            assert os.path.islink(os.path.join(unpacked, "sys", "block", os.path.basename(dev)))
            back = cli("list", "--json", "--all", "--sysfs-root", unpacked).json()["devices"]
        finally:
            shutil.rmtree(unpacked)
        back = {d["name"]: d for d in back}
        assert {name: back.get(name) for name in live} == live
        # The .tar.gz itself is accepted too.
        again = {d["name"]: d for d in cli("list", "--json", "--all", "--sysfs-root", str(bundle)).json()["devices"]}
        assert again == back


# The captured array trees; array_raid1_failing_member's members carry smartctl JSON beside the tree, which a
# capture (sysfs only) does not hold.
ARRAY_TREES = sorted(
    d for d in os.listdir(SYSFS) if d.startswith("array_") and d != "array_raid1_failing_member"
)


@pytest.mark.parametrize("tree", ARRAY_TREES)
def test_a_capture_of_an_array_reads_back_the_same(cli, tmp_path, tree):
    """A capture kept no md state, member slots and errors, chunk size or btrfs membership: a degraded raid5
    read back as healthy, and a btrfs member as a member of nothing (CI: a test's btrfs beside the round trip)."""
    root = os.path.join(SYSFS, tree)
    bundle = tmp_path / "c.tar.gz"
    assert cli("capture", "-o", str(bundle), "--keep-serials", "--keep-names", "--sysfs-root", root).code == 0
    live = cli("list", "--json", "--all", "--sysfs-root", root).json()
    back = cli("list", "--json", "--all", "--sysfs-root", str(bundle)).json()
    assert live["arrays"] and back["arrays"] == live["arrays"]
    assert back["devices"] == live["devices"]


def test_capture_masks_serials(cli, tmp_path):
    bundle = tmp_path / "c.tar.gz"
    assert cli("capture", "-o", str(bundle), "--sysfs-root", os.path.join(SYSFS, "sata_3g_on_6g")).code == 0
    dev = next(d for d in cli("list", "--json", "--sysfs-root", str(bundle)).json()["devices"] if d["name"] == "sda")
    assert dev["serial"].startswith("MASKED-")
    assert dev["link"]["current_ceiling_mbps"] == 285.0  # the rest survives the round trip


def test_bad_sysfs_root_is_one_line(cli, tmp_path):
    res = cli("list", "--sysfs-root", str(tmp_path / "nope"))
    assert res.code == 2 and res.err.count("\n") == 1 and "no such directory" in res.err
    junk = tmp_path / "junk.tar.gz"
    junk.write_text("not a tarball")
    res = cli("list", "--sysfs-root", str(junk))
    assert res.code == 2 and "not a readable capture" in res.err


def test_cli_startup_imports_nothing_heavy():
    """--version and list --json must not import rich, SQLAlchemy or matplotlib."""
    code = (
        "import sys, io, contextlib\n"
        "from disksleuth.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['list', '--json'])\n"
        "heavy = [m for m in ('rich', 'sqlalchemy', 'matplotlib') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_version(cli):
    res = cli("--version")
    assert res.code == 0 and res.out.startswith("disksleuth ")


def test_unknown_command_is_one_line(cli):
    res = cli("frobnicate")
    assert res.code == 2 and res.err.count("\n") == 1


def test_capture_without_fio_smartctl_or_nvme_records_no_versions(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # none of the tools can be found
    bundle = tmp_path / "c.tar.gz"
    res = cli("capture", "-o", str(bundle), "--sysfs-root", os.path.join(SYSFS, "sata_3g_on_6g"))
    assert res.code == 0, res.err
    with tarfile.open(bundle) as tar:
        meta = json.load(tar.extractfile("disksleuth-capture.json"))
    assert meta["tools"] == {"fio": None, "smartctl": None, "nvme": None}


def _list_slot_limited(cli, tree: str) -> dict[str, dict]:
    """{endpoint BDF: list's slot_limited finding} for each block device of a tree."""
    out = {}
    for dev in cli("list", "--json", "--sysfs-root", tree).json()["devices"]:
        hops = [h for h in (dev.get("link") or {}).get("hops") or [] if h.get("kind") == "pcie"]
        for f in dev.get("findings") or []:
            if f["code"] == "slot_limited" and hops:
                out[hops[0]["name"]] = f
    return out


def test_links_flags_the_slot_limit_list_reports_on_the_switch_tree(cli):
    """pcie_switch_middle: a PCIe 4.0 x4 drive whose own link runs at 4.0 x4, behind a switch whose uplink
    is 3.0 x1. By DESIGN.md, slot_limited is "the device supports more than the path to the CPU can carry:
    its port, or a switch or bridge further up": list is right, and links must say it too."""
    tree = os.path.join(SYSFS, "pcie_switch_middle")
    human = cli("links", "--sysfs-root", tree).out
    row = next(line for line in human.splitlines() if line.startswith("0000:04:00.0"))
    assert "slot-limited" in row, human  # the old links flagged nothing here
    assert "switch upstream port 0000:02:00.0 offers only PCIe 3.0 x1" in human
    fns = {f["bdf"]: f for f in cli("links", "--json", "--sysfs-root", tree).json()["functions"]}
    drive = fns["0000:04:00.0"]
    assert drive["slot_limited"] is True and drive["downgraded"] is False
    listed = _list_slot_limited(cli, tree)["0000:04:00.0"]
    (finding,) = drive["findings"]
    assert finding["code"] == "slot_limited"
    assert finding["message"] == listed["message"] and finding["evidence"] == listed["evidence"]
    assert finding["evidence"]["path_capable"] == "PCIe 3.0 x1"
    assert all(f["slot_limited"] is False for bdf, f in fns.items() if bdf != "0000:04:00.0")


@pytest.mark.parametrize(
    "tree", sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(SYSFS, "*", "sys")))
)
def test_links_and_list_agree_on_slot_limited_in_every_tree(cli, tree):
    root = os.path.join(SYSFS, tree)
    listed = _list_slot_limited(cli, root)
    doc = cli("links", "--json", "--sysfs-root", root).json()
    flagged = {f["bdf"]: f["findings"][0] for f in doc["functions"] if f["slot_limited"]}
    assert flagged.keys() == listed.keys(), tree
    for bdf, finding in flagged.items():
        assert finding["message"] == listed[bdf]["message"]
