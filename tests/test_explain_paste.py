"""`explain FILE...` (issue 21): pasted lspci, smartctl, fio, hdparm, dd and dmidecode text through the CLI, on the
real captures in tests/data/paste/ (SOURCES.md there), with the findings a live probe gives and their source lines."""

from __future__ import annotations

import io
import json
import os

import pytest
from conftest import DATA
from test_json_schema import assert_valid

from disksleuth.cli import main
from disksleuth.cli.env import Environment
from disksleuth.probe.bench_text import parse_dd_text, parse_fio_text, parse_hdparm_text
from disksleuth.probe.paste_text import read_paste

PASTE = os.path.join(DATA, "paste")
BAD = os.path.join(DATA, "paste-bad")
FAILING_ATA = os.path.join(PASTE, "smartctl", "linuxhw-ata-HDS721010CLA332-8C32A7A982FE.txt")
SLOW_SATA = os.path.join(PASTE, "smartctl", "linuxhw-ata-HDS721010DLE630-E2B8EB3D132B.txt")
READ_ONLY_NVME = os.path.join(PASTE, "smartctl", "linuxhw-nvme-SSDPED1D280GA-876D2C84863D.txt")
DOWNGRADED = os.path.join(PASTE, "lspci", "rendered", "lspci390-vvnn-cap-phy32.txt")
HDPARM = os.path.join(PASTE, "hdparm", "pippim-askubuntu-1033986-hdparm-tT.txt")
FIO_JOB = os.path.join(PASTE, "fio", "fio-howto-client1-write-7k.txt")
FIO_GROUP = os.path.join(PASTE, "fio", "fio-howto-run-status-group.txt")
# The command fio's HOWTO.rst names (in a comment above it) as the one that printed FIO_JOB.
FIO_JOB_COMMAND = (
    "$ fio --iodepth=16 --ioengine=posixaio --filename=/tmp/fiofile --direct=1 --size=100M --time_based "
    "--runtime=50s --rate_iops=89 --bs=7K --name=Client1 --rw=write"
)
DMIDECODE = os.path.join(DATA, "smbios", "csit-grace-encoded.dmidecode-3.4.txt")


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def run_json(*argv: str, stdin: str = "") -> tuple[int, dict]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(stdin), out, err, dict(os.environ), False, False, False)
    code = main(["explain", *argv, "--json"], env=env)
    return code, json.loads(out.getvalue())


def _codes(doc: dict) -> set[str]:
    return {f["code"] for f in doc["findings"]}


# --- the figures' readers, on real captures --------------------------------------------------------------


def test_hdparm_reads_binary_megabytes_and_keeps_cached_reads_apart() -> None:
    figures = [f for s in read_paste(_read(HDPARM)).sections for f in parse_hdparm_text(s.text, s.first_line)]
    by = {(f.device, f.measure): f for f in figures}
    disk = by[("nvme0n1", "seq_read_mbps")]
    assert disk.line == 5 and disk.value == pytest.approx(1701.12 * 1.048576)  # hdparm's MB is 2^20 bytes
    assert by[("nvme0n1", "cached_read_mbps")].note == "cached reads measure memory, not the drive"
    assert by[("sdb", "seq_read_mbps")].value == pytest.approx(26.01 * 1.048576)


def test_fio_text_gives_the_job_figure_and_its_line() -> None:
    """fio's HOWTO sample: "write: IOPS=88, BW=623KiB/s (638kB/s)" with no job line ("rw=, bs=") above it: the
    command line pasted above says rw=write (7 KiB blocks), else sequential or random is unknown."""
    (section,) = read_paste(FIO_JOB_COMMAND + "\n" + _read(FIO_JOB)).sections
    (fig,) = parse_fio_text(section.text, section.first_line, section.command)
    assert (fig.measure, fig.line, fig.value) == ("seq_write_mbps", 3, 0.638)  # the decimal rate fio prints
    (section,) = read_paste(_read(FIO_JOB)).sections
    (fig,) = parse_fio_text(section.text, section.first_line, section.command)
    assert (fig.measure, fig.line, fig.value) == ("unknown_mbps", 2, 0.638)


def test_fio_group_lines_alone_are_recognised_and_read() -> None:
    """Only the "Run status group" summary pasted (fio's HOWTO sample, a read job and a write job)."""
    (section,) = read_paste(_read(FIO_GROUP)).sections
    assert (section.kind, section.first_line, section.last_line) == ("fio", 1, 6)
    figs = parse_fio_text(section.text, section.first_line, section.command)
    assert [(f.measure, f.line, f.value) for f in figs] == [("unknown_mbps", 2, 21.9), ("unknown_mbps", 3, 1.261)]


def test_dd_reads_bytes_over_seconds_in_any_locale_and_needs_its_command_for_a_direction() -> None:
    line = "1073741824 bytes (1,1 GB, 1,0 GiB) copied, 8,04312 s, 133 MB/s"
    (read,) = parse_dd_text(line, 7, "dd if=/dev/sda of=/dev/null bs=1M iflag=direct")
    assert (read.measure, read.device, read.line) == ("seq_read_mbps", "sda", 7)
    assert read.value == pytest.approx(1073741824 / 8.04312 / 1e6)
    (unknown,) = parse_dd_text(line)
    assert unknown.measure == "unknown_mbps" and "read or write is unknown" in (unknown.note or "")


# --- explain FILE through the CLI -----------------------------------------------------------------------


def test_failing_ata_drive_gives_health_warnings_with_their_lines(cli) -> None:
    r = cli("explain", FAILING_ATA)
    assert r.code == 1, r.err
    for code in ("health_critical", "media_errors", "interface_crc_errors"):
        assert code in r.out
    assert f"source: {FAILING_ATA}:24" in r.out  # "SMART overall-health self-assessment test result: FAILED!"
    code, doc = run_json(FAILING_ATA)
    assert code == 1
    sources = {f["code"]: f["source"]["line"] for f in doc["findings"]}
    assert sources["media_errors"] == 66 and sources["interface_crc_errors"] == 78  # ATA 5 and ATA 199 rows


def test_nvme_read_only_and_worn_is_critical(cli) -> None:
    code, doc = run_json(READ_ONLY_NVME)
    assert code == 1 and {"health_critical", "health_worn"} <= _codes(doc)
    assert doc["device"]["transport"] == "nvme"


def test_downgraded_link_pasted_alone_is_judged_and_the_chain_above_is_unknown(cli) -> None:
    r = cli("explain", DOWNGRADED)
    assert r.code == 1, r.err
    assert "link_downgraded" in r.out and "chain above it to the CPU is unknown" in r.out
    assert f"source: {DOWNGRADED}:22" in r.out  # its LnkSta line
    code, doc = run_json(DOWNGRADED)
    (hop,) = doc["device"]["link"]["hops"]
    assert doc["device"]["chain_known"] is False and hop["speed_gtps"] == 16.0 and hop["max_speed_gtps"] == 32.0
    assert "link_downgraded" in _codes(doc)
    assert_valid(doc, "explain")


def test_sata_link_downgraded_from_smartctl_and_a_figure_gives_link_limited() -> None:
    code, doc = run_json(SLOW_SATA, "--read", "140MB/s")
    assert code == 1
    assert {"sata_link_downgraded", "link_limited"} <= _codes(doc)
    assert doc["given"][0]["option"] == "--read"
    assert_valid(doc, "explain")


def test_a_mixed_paste_with_mail_quoting_reads_every_part() -> None:
    """lspci, smartctl and hdparm in one mail reply ('> ' quoting, CRLF): one device per storage function and
    drive, the hdparm figure on the drive its '/dev/sdb:' line names."""
    parts = [
        "Hi, here is what you asked for:",
        "$ sudo lspci -vvnn",
        *_read(DOWNGRADED).splitlines(),
        "$ sudo smartctl -x /dev/sdb",
        *_read(SLOW_SATA).splitlines(),
        "",
        *_read(HDPARM).splitlines(),
    ]
    mail = "\r\n".join("> " + line for line in parts)
    code, doc = run_json("-", stdin=mail)
    assert code == 1
    names = [d["device"]["name"] for d in doc["devices"]]
    assert names == ["0000:2e:00.0", "sdb"]
    sdb = doc["devices"][1]
    given = {(g["device"], g["measure"]) for g in sdb["given"]}
    assert given == {("sdb", "seq_read_mbps"), ("sdb", "cached_read_mbps")}
    # 26.01 hdparm-MB/s = 27.3 MB/s on a 1.5 Gb/s link: the slow link is found, and it is not what limits 27 MB/s
    assert "sata_link_downgraded" in {f["code"] for f in sdb["findings"]}
    assert sdb["summary"].startswith("reads 27.3 MB/s")
    assert "link_downgraded" in {f["code"] for f in doc["devices"][0]["findings"]}
    kinds = [(s["kind"], s["status"]) for s in doc["source"]["sections"]]
    assert ("lspci", "read") in kinds and ("smartctl", "read") in kinds and ("hdparm", "read") in kinds
    unused = {f["device"] for f in doc["source"]["figures_not_used"]}
    assert unused == {"nvme0n1"}  # the hdparm of nvme0n1: the paste holds no nvme0n1
    assert doc["source"]["kind"] == "pasted" and doc["source"]["files"] == ["stdin"]
    assert any("quoting" in n for n in doc["source"]["notes"])
    assert_valid(doc, "explain")


def test_dmidecode_names_the_slot_of_a_pasted_device() -> None:
    """The firmware's slot whose bus address is the pasted function's (matched as live slot code matches it).
    The real table's 'PCIe Slot 1' sits at 0000:01:00.0; it is moved to the pasted drive's address here."""
    dmi = _read(DMIDECODE).replace("Bus Address: 0000:01:00.0", "Bus Address: 0000:2e:00.0")
    paste = _read(DOWNGRADED) + "\n\n$ sudo dmidecode -t 9\n" + dmi
    code, doc = run_json("-", stdin=paste)
    (hop,) = doc["device"]["link"]["hops"]
    assert hop["slot"]["name"] == "PCIe Slot 1" and hop["slot"]["matched"] == "device"
    assert ("dmidecode", "read") in [(s["kind"], s["status"]) for s in doc["source"]["sections"]]
    assert "PCIe Slot 1" in json.dumps([f["message"] for f in doc["findings"]])


def test_lspci_tree_sections_are_read() -> None:
    # more in test_explain_paste_nvme.py (trees and nvme-cli through the CLI)
    tree = _read(os.path.join(PASTE, "lspci", "rendered", "lspci390-tv-cap-phy32.txt"))
    code, doc = run_json("-", stdin=_read(SLOW_SATA) + "\n" + tree)
    statuses = {s["kind"]: s["status"] for s in doc["source"]["sections"]}
    assert statuses["lspci_tree"] == "read"


def test_serials_and_wwns_are_never_echoed() -> None:
    serial, wwn = "S3Z9NB0K123456A", "5 002538 e40a1b2c3"
    text = _read(SLOW_SATA)
    text = text.replace("Device Model:", f"Serial Number:    {serial}\nLU WWN Device Id: {wwn}\nDevice Model:", 1)
    cmd = f"$ sudo smartctl -x /dev/disk/by-id/ata-HDS721010DLE630_{serial}\n"
    for argv_json in (False, True):
        out = io.StringIO()
        env = Environment(io.StringIO(cmd + text), out, io.StringIO(), dict(os.environ), False, False, False)
        main(["explain", "-", *(["--json"] if argv_json else [])], env=env)
        shown = out.getvalue()
        assert serial not in shown and "e40a1b2c3" not in shown and "ata-HDS721010DLE630" not in shown
    code, doc = run_json("-", stdin=cmd + text)
    assert doc["device"]["serial"] is None


def test_a_keyed_serial_id_replaces_the_serial(monkeypatch) -> None:
    monkeypatch.setenv("DISKSLEUTH_SERIAL_KEY", "k" * 32)
    text = _read(SLOW_SATA).replace("Device Model:", "Serial Number:    S3Z9NB0K123456A\nDevice Model:", 1)
    code, doc = run_json("-", stdin=text)
    sid = doc["device"]["serial_id"]
    assert sid and len(sid) == 64 and "S3Z9NB0K123456A" not in json.dumps(doc)


def test_a_device_name_is_still_a_live_device(cli, tmp_path) -> None:
    """`explain sda` is a device; `explain x.txt` (missing) is a paste that cannot be read: one line each."""
    r = cli("explain", "nosuchdev", "--sysfs-root", str(tmp_path))
    assert r.code == 2 and "Traceback" not in r.err
    r = cli("explain", str(tmp_path / "missing.txt"))
    assert r.code == 2 and "cannot read" in r.err and len(r.err.strip().splitlines()) == 1


def test_read_applies_to_one_device_only(cli) -> None:
    r = cli("explain", DOWNGRADED, SLOW_SATA, "--read", "100MB/s")
    assert r.code == 2 and "apply to one device" in r.err


def test_fio_json_with_text_around_it_gives_its_random_figure() -> None:
    """fio --output-format=json as captured in tests/data/fio (a note line printed after the document)."""
    with open(os.path.join(DATA, "fio", "fio-3.33-note-line-before-json.json")) as f:
        fio = f.read()
    code, doc = run_json("-", stdin=_read(SLOW_SATA) + "\nfio: terminating on signal 2\n" + fio)
    (fig,) = doc["devices"][0]["given"]
    assert fig["measure"] == "rand_read_iops" and fig["option"] == "fio --output-format=json"
    assert fig["iops"] == pytest.approx(70994, rel=1e-3)
    assert "cache_suspected" in _codes(doc)  # 71k x 4 KiB = 291 MB/s through a 142 MB/s link


def test_a_port_not_in_the_paste_is_not_named_none() -> None:
    code, doc = run_json(DOWNGRADED)
    (f,) = [f for f in doc["findings"] if f["code"] == "link_downgraded"]
    assert "None" not in f["message"] and "not in the paste" in f["message"]
