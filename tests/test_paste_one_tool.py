"""A paste of one tool alone (issue 40 §2-3): dmidecode's slot table, a fio JSON result, hdparm or dd output each
read and shown, not refused with "no device in the paste"; an `lspci -vv` alone summarises its link, and names the
drive from its "Subsystem:" line.

Real pastes: fio-plot's published fio JSON results (tests/data/pastes/fio, SOURCES.md in tests/data/pastes), the
dmidecode dumps in tests/data/smbios, hdparm and dd in tests/data/paste, the XP941 lspci from linux-pci."""

from __future__ import annotations

import io
import json
import os

import pytest
from conftest import DATA
from test_json_schema import assert_valid

from disksleuth.cli import main
from disksleuth.cli.env import Environment
from disksleuth.run.paste import explain_paste

PASTES = os.path.join(DATA, "pastes")
FLOPPY_RANDWRITE = os.path.join(PASTES, "fio", "fioplot-floppy-randwrite-1-1.json")
FLOPPY_READ = os.path.join(PASTES, "fio", "fioplot-floppy-read-1-1.json")
MD6 = os.path.join(PASTES, "fio", "fioplot-m1015-raid5-md6-randread-1-1.json")
DMI_WHOLE = os.path.join(DATA, "smbios", "netbox-agent-SYS-5039MS-H12TRF-OS012.txt")
DMI_SLOT = os.path.join(DATA, "smbios", "csit-sm_zn2.dmidecode-t-slot.txt")
HDPARM = os.path.join(DATA, "paste", "hdparm", "pippim-askubuntu-1033986-hdparm-tT.txt")
DD = os.path.join(DATA, "paste", "dd", "coreutils-texi-dd-usr1-stats.txt")
XP941 = os.path.join(PASTES, "lspci-wrapped", "linux-pci-2021-09-13-davej-xp941-x2-of-x4.txt")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The terminal view (rich writes to the process's stdout, which capsys holds)."""
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(""), out, err, {**os.environ, "NO_COLOR": "1"}, False, False, False)
    capsys.readouterr()
    code = main(["explain", *argv], env=env)
    cap = capsys.readouterr()
    return code, out.getvalue() + cap.out, err.getvalue() + cap.err


def test_dmidecode_alone_shows_its_slot_table(capsys: pytest.CaptureFixture[str]) -> None:
    """`dmidecode -t slot` alone: five slots with designation, type, width, usage and bus address, and the hint that
    an lspci -vv beside it puts them on the links; exit 0, not "no device in the paste" (exit 2)."""
    x = explain_paste([DMI_SLOT])
    assert x.devices == [] and x.slots is not None
    assert [s.designation for s in x.slots.smbios_slots][:2] == [
        "M.2-HC1 CPU PCI-E 4.0 X4/X2",
        "M.2-HC2 CPU PCI-E 4.0 X2",
    ]
    code, out, err = _run(capsys, DMI_SLOT)
    assert code == 0, err
    assert "System slots" in out and "RSC-W-66G4 SLOT1" in out and "0000:41:00.0" in out and "In Use" in out
    assert "lspci -vv" in out
    assert all(len(line) <= 80 for line in out.splitlines() if line.startswith("  ") and "0000:" in line)


def test_whole_dmidecode_alone_shows_slots_and_onboard_devices_as_json() -> None:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(""), out, err, dict(os.environ), False, False, False)
    assert main(["explain", DMI_WHOLE, "--json"], env=env) == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert_valid(doc, "explain_slots")
    assert doc["slots"][0]["designation"] == "CPU MICRO-LP PCI-E 3.0 X8"
    assert doc["slots"][0]["width_lanes"] == 8 and doc["slots"][0]["current_usage"] == "In Use"
    assert doc["onboard"][0]["designation"] == "ASPEED Video AST2400"
    assert doc["onboard"][0]["bus_address"] == "0000:04:00.0"


def test_fio_json_alone_is_judged_without_its_path() -> None:
    """fio-plot's floppy randwrite result: 2.5 IOPS at 4 KiB on /dev/sde is poor_random_write, the one verdict that
    needs no path; the job, its file and disk_util's device are said."""
    x = explain_paste([FLOPPY_RANDWRITE])
    (d,) = x.devices
    assert d.device.name == "sde"
    assert [f.code for f in d.findings] == ["poor_random_write"]
    assert d.figures.rand_write_iops is not None and round(d.figures.rand_write_iops, 1) == 2.5
    assert any("job iotest" in g["read_as"] for g in d.given)
    assert any("/dev/sde" in n for n in d.notes) and any("disk_util names sde" in n for n in d.notes)
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(""), out, err, dict(os.environ), False, False, False)
    assert main(["explain", FLOPPY_RANDWRITE, "--json"], env=env) == 1
    assert_valid(json.loads(out.getvalue()), "explain")


def test_fio_json_on_a_file_names_disk_utils_device(capsys: pytest.CaptureFixture[str]) -> None:
    """A job on test.bin in /server/test: its device is md6, the first device fio's disk_util names; its members
    are listed after it."""
    (d,) = explain_paste([MD6]).devices
    assert d.device.name == "md6"
    assert any("/server/test/test.bin" in n for n in d.notes)
    assert any("then sdf, sdd" in n for n in d.notes)
    code, out, _ = _run(capsys, MD6)
    assert code == 0 and "106 IOPS (randread, 4 KiB)" in out


def test_hdparm_alone_is_shown_per_device() -> None:
    x = explain_paste([HDPARM])
    assert [d.device.name for d in x.devices] == ["nvme0n1", "sdb"]
    assert round(x.devices[0].figures.seq_read_mbps or 0) == 1784


def test_dd_alone_is_shown_and_not_called_ok(capsys: pytest.CaptureFixture[str]) -> None:
    """coreutils' dd example: no command line says read or write: shown, nothing judged (no "ok")."""
    (d,) = explain_paste([DD]).devices
    assert d.findings == []
    assert len(d.given) == 2
    code, out, _ = _run(capsys, DD)
    assert code == 0 and "no figure a verdict reads" in out


def test_lspci_alone_summarises_its_link_and_names_the_drive_from_subsystem() -> None:
    (d,) = explain_paste([XP941]).devices
    assert [f.code for f in d.findings] == ["link_downgraded"]
    assert d.summary.startswith("PCIe 2.0 x2 of x4: ceiling 900 MB/s, capable 1,800")
    assert d.device.model == "Samsung Electronics Co Ltd XP941 PCIe SSD"


def test_subsystem_names_the_drive_where_the_header_names_the_chip(tmp_path) -> None:
    path = tmp_path / "lspci.txt"
    path.write_text(
        "01:00.0 Non-Volatile memory controller: Samsung Electronics Co Ltd NVMe SSD Controller SM981/PM981/PM983\n"
        "\tSubsystem: Samsung Electronics Co Ltd SSD 970 EVO Plus 1TB\n"
        "\tCapabilities: [70] Express (v2) Endpoint, MSI 00\n"
        "\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x4, ASPM L1, Exit Latency L1 <64us\n"
        "\t\tLnkSta:\tSpeed 8GT/s (ok), Width x2 (downgraded)\n"
    )
    (d,) = explain_paste([str(path)]).devices
    assert d.device.model == "Samsung Electronics Co Ltd SSD 970 EVO Plus 1TB"
    assert d.summary.startswith("PCIe 3.0 x2 of x4: ceiling 1,772 MB/s, capable 3,545")
