"""`explain FILE...` on pasted nvme-cli output (list, smart-log, id-ns, id-ctrl) and `lspci -tv` trees (issue 21),
through the CLI, on the real texts in tests/data/paste/nvme, lspci-tree and lspci/rendered (SOURCES.md there)."""

from __future__ import annotations

import io
import json
import os

from conftest import DATA
from test_json_schema import assert_valid

from disksleuth.cli import main
from disksleuth.cli.env import Environment

PASTE = os.path.join(DATA, "paste")
NVME = os.path.join(PASTE, "nvme")
SMART_LOG = os.path.join(NVME, "pippim-swap-smart-log.txt")
SMART_LOG_QUOTED = os.path.join(NVME, "pippim-greyed-smart-log-quoted.txt")
ID_NS = os.path.join(NVME, "anduinos-id-ns-H.txt")
EBS = os.path.join(NVME, "oogali-ebs-nvme-cli-0.7-list-id-ctrl.txt")
READ_ONLY_NVME = os.path.join(PASTE, "smartctl", "linuxhw-nvme-SSDPED1D280GA-876D2C84863D.txt")
PHY32_VV = os.path.join(PASTE, "lspci", "rendered", "lspci390-vvnn-cap-phy32.txt")
PHY32_TV = os.path.join(PASTE, "lspci", "rendered", "lspci390-tv-cap-phy32.txt")
WRX90_TV = os.path.join(PASTE, "lspci-tree", "stelline-puget-wrx90-tv.txt")
EBS_SERIALS = ("vol11111111111111111", "vol22222222222222222")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(stdin), out, err, dict(os.environ), False, False, False)
    code = main(["explain", *argv], env=env)
    return code, out.getvalue(), err.getvalue()


def run_json(*argv: str, stdin: str = "") -> tuple[int, dict]:
    code, out, err = run(*argv, "--json", stdin=stdin)
    assert not err, err
    doc = json.loads(out)
    assert_valid(doc, "explain")
    return code, doc


def _statuses(doc: dict) -> list[tuple[str, str | None, str]]:
    return [(s["kind"], s["device"], s["status"]) for s in doc["source"]["sections"]]


def _codes(findings: list[dict]) -> list[str]:
    return sorted(f["code"] for f in findings)


# --- nvme-cli alone ------------------------------------------------------------------------------------------


def test_smart_log_alone_is_a_drive_named_by_its_header() -> None:
    """pippim's Samsung 960 PRO log: critical_warning 0, 0% used, spare 100% over 10%: nothing wrong; the device
    is the one the command and the "Smart Log for NVME device:nvme0" header name."""
    for path in (SMART_LOG, SMART_LOG_QUOTED):
        code, doc = run_json(path)
        assert code == 0
        assert _statuses(doc) == [("nvme_smart_log", "nvme0", "read")]
        assert doc["device"]["name"] == "nvme0" and doc["device"]["transport"] == "nvme"
        assert _codes(doc["findings"]) == ["ok"]


def test_smart_log_critical_warning_gives_the_smartctl_findings_and_lines() -> None:
    """The same log with the read-only bit (0x08) set and 106% used, as the real smartctl report of the
    SSDPED1D280GA says: the same findings as that report, each citing the smart-log line it rests on."""
    text = _read(SMART_LOG).replace("critical_warning                    : 0", "critical_warning : 0x08")
    text = text.replace("percentage_used                     : 0%", "percentage_used : 106%")
    code, doc = run_json("-", stdin=text)
    code_smartctl, doc_smartctl = run_json(READ_ONLY_NVME)
    assert code == code_smartctl == 1
    assert _codes(doc["findings"]) == _codes(doc_smartctl["findings"]) == ["health_critical", "health_worn"]
    by = {f["code"]: f for f in doc["findings"]}
    assert by["health_critical"]["source"]["line"] == 3  # the critical_warning line
    assert by["health_worn"]["source"]["line"] == 7 and by["health_worn"]["evidence"]["percentage_used"] == 106


def test_id_ns_in_use_512_with_a_better_4k_format_gives_lba_format() -> None:
    code, doc = run_json(ID_NS)
    assert code == 0  # info only
    (f,) = doc["findings"]
    assert f["code"] == "lba_format" and f["severity"] == "info"
    assert f["evidence"] == {
        "lba_format_in_use": 0,
        "in_use_data_bytes": 512,
        "better_lba_format": 1,
        "better_data_bytes": 4096,
    }
    assert f["source"] == {"file": ID_NS, "line": 1}  # the "(in use)" row


def test_nvme_list_rows_are_devices_with_model_capacity_firmware_and_no_serial() -> None:
    """nvme-cli 0.7's list of two EBS volumes, then `nvme id-ctrl /dev/nvme1n1`: two devices; the id-ctrl joins
    nvme1n1 (its command names it). Serials are in the list and in id-ctrl's "sn": never in the output."""
    code, doc = run_json(EBS)
    assert code == 0
    assert _statuses(doc) == [("nvme_list", "nvme0n1, nvme1n1", "read"), ("nvme_id_ctrl", "nvme1n1", "read")]
    devices = [d["device"] for d in doc["devices"]]
    assert [(d["name"], d["model"], d["size_bytes"], d["firmware"]) for d in devices] == [
        ("nvme0n1", "Amazon Elastic Block Store", 8_590_000_000, "1.0"),
        ("nvme1n1", "Amazon Elastic Block Store", 10_740_000_000, "1.0"),
    ]
    assert any("nvme list at" in n and "same drive" in n for n in devices[1]["notes"])
    for argv in ((EBS,), (EBS, "--json")):
        _, out, err = run(*argv)
        for serial in EBS_SERIALS:
            assert serial not in out and serial not in err
    assert all(d["serial"] is None for d in devices)


def test_a_keyed_serial_id_is_the_same_from_nvme_list_and_id_ctrl(monkeypatch) -> None:
    monkeypatch.setenv("DISKSLEUTH_SERIAL_KEY", "k" * 32)
    _, doc = run_json(EBS)
    ids = [d["device"]["serial_id"] for d in doc["devices"]]
    assert len(set(ids)) == 2 and all(ids) and not any(s in json.dumps(doc) for s in EBS_SERIALS)


# --- lspci -tv ---------------------------------------------------------------------------------------------


def _wrx90_with_drive() -> str:
    """The real WRX90 tree, then the real -vvnn of pciutils' cap-phy32 NVMe (PCIe 4.0 x2 of 5.0 x2) re-addressed
    to 05:00.0, one of the tree's Samsung drives behind two switches (the tree's machine has no -vv published)."""
    drive = _read(PHY32_VV).replace("2e:00.0 ", "0000:05:00.0 ", 1)
    return _read(WRX90_TV) + "\n$ sudo lspci -vvnn -s 05:00.0\n" + drive


def test_tree_names_the_bridge_above_a_drive_pasted_alone() -> None:
    paste = _wrx90_with_drive()
    code, doc = run_json("-", stdin=paste)
    assert code == 1
    assert [k for k, _, st in _statuses(doc) if st == "read"] == ["lspci_tree", "lspci"]
    dev = doc["device"]
    (hop,) = dev["link"]["hops"]
    assert (hop["name"], hop["port"], hop["speed_gtps"], hop["max_speed_gtps"]) == (
        "0000:05:00.0", "0000:04:10.0", 16.0, 32.0,
    )  # fmt: skip
    assert hop["port_max_speed_gtps"] is None  # the port's own lspci -vv is not in the paste
    assert dev["chain_known"] is False
    (note,) = [n for n in dev["notes"] if "0000:04:10.0" in n]
    assert "the bridge above it is 0000:04:10.0 (lspci -t at stdin:2)" in note and "unknown" in note
    (f,) = [f for f in doc["findings"] if f["code"] == "link_downgraded"]
    assert "switch port 0000:04:10.0" in f["message"] and f["source"]["line"] == paste.count("\n", 0, paste.index(
        "LnkSta:")) + 1  # fmt: skip


def test_tree_in_another_file_or_after_the_lspci_still_places_it(tmp_path) -> None:
    drive = tmp_path / "drive.txt"
    drive.write_text(_read(PHY32_VV).replace("2e:00.0 ", "0000:05:00.0 ", 1))
    for argv in ((str(drive), WRX90_TV), (WRX90_TV, str(drive))):
        _, doc = run_json(*argv)
        (hop,) = doc["device"]["link"]["hops"]
        assert hop["port"] == "0000:04:10.0"
    _, doc = run_json(str(drive))  # without the tree: the port is not known
    assert doc["device"]["link"]["hops"][0]["port"] is None


def test_a_tree_drawing_the_drive_on_a_root_bus_says_so() -> None:
    """pciutils' own one-device dump: `lspci -tv` draws 2e:00.0 on root bus [0000:2e]; nothing is above it."""
    code, doc = run_json(PHY32_VV, PHY32_TV)
    assert doc["device"]["chain_known"] is True
    assert any("root bus with no bridge above it" in n for n in doc["device"]["notes"])
    assert "link_downgraded" in _codes(doc["findings"])


# --- the README's collection one-liner -----------------------------------------------------------------------


def _readme_paste() -> str:
    """The shape the README's one-liner writes (`$ command` before each output), from real texts of several
    machines, all named nvme0n1/nvme0: lspci -vvnn and -tv (pciutils cap-phy32), nvme list (nvme-cli 0.7,
    its first row), smartctl -x (a read-only, worn Intel Optane 900P), id-ns -H (AnduinOS), smart-log (pippim)."""
    ebs = _read(EBS).splitlines()
    return "\n".join([
        "$ lspci -vvnn", _read(PHY32_VV),
        "$ lspci -tv", _read(PHY32_TV),
        "$ nvme list", *ebs[1:4],
        "$ smartctl -x /dev/nvme0n1", _read(READ_ONLY_NVME),
        "$ nvme id-ns -H /dev/nvme0n1", _read(ID_NS),
        "$ nvme smart-log /dev/nvme0n1", *_read(SMART_LOG).splitlines()[1:],
    ])  # fmt: skip


def test_readme_collection_paste_is_one_drive_with_every_finding() -> None:
    code, doc = run_json("-", stdin=_readme_paste())
    assert code == 1
    assert [(k, st) for k, _, st in _statuses(doc)] == [
        ("lspci", "read"), ("lspci_tree", "read"), ("nvme_list", "read"), ("smartctl", "read"),
        ("nvme_id_ns", "read"), ("nvme_smart_log", "read"),
    ]  # fmt: skip
    (d,) = doc["devices"]
    dev = d["device"]
    # smartctl's exact facts win over nvme list's rounded ones
    assert (dev["name"], dev["model"], dev["size_bytes"]) == ("nvme0n1", "INTEL SSDPED1D280GA", 280_065_171_456)
    assert _codes(d["findings"]) == ["health_critical", "health_worn", "lba_format", "link_downgraded"]
    sources = {f["code"]: f["source"]["line"] for f in d["findings"]}
    assert sources["lba_format"] == 121 and sources["link_downgraded"] == 23  # the "(in use)" row, LnkSta
    worn = next(f for f in d["findings"] if f["code"] == "health_worn")
    assert worn["evidence"]["percentage_used"] == 106
    assert sum("same drive" in n for n in dev["notes"]) == 3
    assert EBS_SERIALS[0] not in json.dumps(doc)


def test_readme_collection_paste_in_text(cli, tmp_path) -> None:
    storage = tmp_path / "storage.txt"
    storage.write_text(_readme_paste())
    r = cli("explain", str(storage))
    assert r.code == 1, r.err
    assert "/dev/nvme0n1  nvme  280.1 GB  INTEL SSDPED1D280GA" in r.out
    for line in ("nvme_list, nvme0n1: ", "lines 79-81: read", "nvme_smart_log, nvme0n1: ", "lines 125-150: read",
                 f"source: {storage}:121"):  # fmt: skip
        assert line in r.out
    assert EBS_SERIALS[0] not in r.out
