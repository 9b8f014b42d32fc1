"""`explain FILE` attacked through the CLI (issue 21, "Bad input"): what a hostile or merely odd paste did before
these tests. Each input is a real capture of the corpus with one thing changed, made at test time."""

from __future__ import annotations

import io
import json
import os
import time

import pytest
from conftest import DATA

from disksleuth.cli import main
from disksleuth.cli.env import Environment

PASTE = os.path.join(DATA, "paste")
ATA_FAILED = os.path.join(PASTE, "smartctl", "linuxhw-ata-HDS721010CLA332-8C32A7A982FE.txt")
NVME_SMARTCTL = os.path.join(PASTE, "smartctl", "linuxhw-nvme-SSD_970_PRO_1TB-5D0B0072D502.txt")
LSPCI = os.path.join(PASTE, "lspci", "pciutils-cap-phy32.txt")


def _run(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(stdin), out, err, dict(os.environ), False, False, False)
    code = main(["explain", *args], env=env)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    assert "internal error" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _write(tmp_path, name: str, data: str | bytes) -> str:
    path = os.path.join(str(tmp_path), name)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def _real(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _codes(out: str) -> set[str]:
    return {f["code"] for f in json.loads(out)["findings"]}


# --- numbers no drive prints -----------------------------------------------------------------------------------


def test_a_10000_digit_attribute_loses_that_attribute_not_the_report(tmp_path) -> None:
    """Current_Pending_Sector's raw value with 10,000 digits made the whole report 'not read: ValueError' (Python's
    4,300-digit int limit), and with it the FAILED verdict: exit 2 'no device in the paste'."""
    text = _real(ATA_FAILED).replace("    -    180\n", "    -    " + "9" * 10_000 + "\n")
    code, out, _ = _run(_write(tmp_path, "smart.txt", text), "--json")
    assert code == 1, out
    assert {"health_critical", "interface_crc_errors"} <= _codes(out)


def test_a_10000_digit_nvme_sensor_loses_that_sensor_not_the_report(tmp_path) -> None:
    text = _real(NVME_SMARTCTL)
    assert "Temperature Sensor 1:" in text
    at = text.index("Temperature Sensor 1:")
    end = text.index(" Celsius", at)
    text = text[:at] + "Temperature Sensor 1:               " + "9" * 10_000 + text[end:]
    code, out, _ = _run(_write(tmp_path, "nvme.txt", text), "--json")
    assert code in (0, 1), out
    assert json.loads(out)["source"]["sections"][0]["status"] == "read"


def test_an_impossible_sata_speed_is_unknown_not_a_crash(tmp_path) -> None:
    """'SATA ..., 6.0 Gb/s (current: 999...9 Gb/s)' overflowed to infinity: 'internal error: OverflowError'."""
    text = _real(ATA_FAILED).replace(
        "SATA Version is:  SATA 2.6, 3.0 Gb/s", "SATA Version is:  SATA 2.6, 3.0 Gb/s (current: " + "9" * 400 + " Gb/s)"
    )
    code, out, _ = _run(_write(tmp_path, "smart.txt", text), "--json")
    assert code == 1, out
    assert "health_critical" in _codes(out)


def test_a_zero_sata_speed_is_no_ceiling_of_zero(tmp_path) -> None:
    """'(current: 0.0 Gb/s)' drew a link with a ceiling of 0 MB/s; smartctl never prints it for a live link."""
    text = _real(ATA_FAILED).replace(
        "SATA Version is:  SATA 2.6, 3.0 Gb/s", "SATA Version is:  SATA 2.6, 3.0 Gb/s (current: 0.0 Gb/s)"
    )
    code, out, _ = _run(_write(tmp_path, "smart.txt", text), "--json")
    link = json.loads(out)["device"]["link"]
    assert link["current_ceiling_mbps"] != 0, link


@pytest.mark.parametrize(
    "lnksta, lnkcap",
    [
        ("LnkSta: Speed 16GT/s, Width x" + "9" * 10_000, "LnkCap: Port #0, Speed 32GT/s, Width x2"),
        ("LnkSta: Speed 16GT/s, Width x2", "LnkCap: Port #0, Speed 32GT/s, Width x99999999999999999999"),
        ("LnkSta: Speed 0GT/s, Width x2", "LnkCap: Port #0, Speed 32GT/s, Width x2"),
        ("LnkSta: Speed 16GT/s, Width x64", "LnkCap: Port #0, Speed 32GT/s, Width x64"),
    ],
    ids=["width 10000 digits", "width 10^20", "speed 0", "width x64"],
)
def test_a_pcie_speed_or_width_lspci_never_prints_is_unknown(tmp_path, lnksta: str, lnkcap: str) -> None:
    """lspci prints 2.5-64 GT/s and widths x1-x32; anything else drew links of 354,464,999,999,999,968,280,576 MB/s
    (x10^20), PCIe '0 GT/s', or lost the whole lspci paste (a 10,000-digit width: ValueError)."""
    text = (
        _real(LSPCI)
        .replace("LnkSta: Speed 16GT/s (downgraded), Width x2", lnksta)
        .replace("LnkCap: Port #0, Speed 32GT/s, Width x2", lnkcap)
    )
    code, out, _ = _run(_write(tmp_path, "lspci.txt", text), "--json")
    doc = json.loads(out)
    assert doc["source"]["sections"][0]["status"] == "read", doc["source"]
    for hop in doc["device"]["link"]["hops"]:
        assert hop.get("width") in (None, 1, 2, 4, 8, 12, 16, 32), hop
        assert hop.get("max_width") in (None, 1, 2, 4, 8, 12, 16, 32), hop
        assert hop.get("speed_gtps") in (None, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0), hop
    for ceiling in (doc["device"]["link"]["current_ceiling_mbps"], doc["device"]["link"]["capable_ceiling_mbps"]):
        assert ceiling is None or 0 < ceiling < 300_000


# --- sizes ---------------------------------------------------------------------------------------------------


def test_a_megabyte_long_model_name_is_cut_and_linear(tmp_path, capsys) -> None:
    """A 60 MB lspci header line (one 'model name') ran for over 10 minutes: the whole name went to the terminal and
    rich wraps a long word in quadratic time (2 MB: 0.8 s, 4 MB: 1.9 s, 8 MB: 7.7 s). A name is cut to a screen."""
    name = "A" * 1_000_000
    path = _write(tmp_path, "lspci.txt", "01:00.0 Non-Volatile memory controller: " + name + "\n")
    capsys.readouterr()
    start = time.perf_counter()
    code, out, _ = _run(path)
    out += capsys.readouterr().out  # the text view is printed by rich's console, to sys.stdout
    assert time.perf_counter() - start < 5.0
    assert code == 0 and len(out) < 5_000, len(out)
    code, out, _ = _run(path, "--json")
    assert len(out) < 20_000, len(out)


def test_a_huge_reason_is_one_short_line(tmp_path) -> None:
    """smartctl JSON whose error message is 30 MB: the reason given is cut, not printed whole."""
    doc = {"json_format_version": [1, 0], "smartctl": {"exit_status": 2, "messages": [{"string": "A" * 3_000_000}]}}
    code, out, err = _run(_write(tmp_path, "s.json", json.dumps(doc)))
    assert code == 2
    assert len(err) < 2_000 and len(err.strip().splitlines()) == 1, len(err)


# --- what could not be read is said --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc, reason",
    [
        ('{"json_format_version":[1,0],"smart_status":{"passed":true},"x":' + "[" * 100_000 + "]" * 100_000 + "}",
         "nested too deeply"),
        ('{"json_format_version":[1,0],"smart_status":{"passed":true},"temperature":{"current":' + "9" * 10_000 + "}}",
         "impossible value"),
    ],
    ids=["nesting 100000", "10000 digits"],
)  # fmt: skip
def test_no_device_says_which_section_was_not_read_and_why(tmp_path, doc: str, reason: str) -> None:
    """A smartctl --json paste that was recognised but could not be read ended in 'no device in the paste ...;
    paste lspci -vv, smartctl -x or nvme list output too': the user had pasted smartctl output, and the reason
    (nested too deeply, a 10,000-digit number) was nowhere."""
    code, out, err = _run(_write(tmp_path, "s.json", "$ smartctl -x --json /dev/sda\n" + doc + "\n"))
    assert code == 2
    assert reason in err and "smartctl_json" in err and "line 2" in err, err
    assert len(err.strip().splitlines()) == 1


# --- encodings -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le-bom", "utf-8-sig"])
def test_a_windows_saved_report_is_read(tmp_path, encoding: str) -> None:
    """`smartctl -x /dev/sda > report.txt` in Windows PowerShell 5 writes UTF-16LE with a BOM: it was refused as
    'binary data'. Notepad's UTF-8 with BOM lost the report's first line (its 'smartctl 7.1' header)."""
    text = _real(ATA_FAILED)
    data = {
        "utf-16": text.encode("utf-16"),
        "utf-16-le-bom": b"\xff\xfe" + text.replace("\n", "\r\n").encode("utf-16-le"),
        "utf-8-sig": text.encode("utf-8-sig"),
    }[encoding]
    code, out, _ = _run(_write(tmp_path, "report.txt", data), "--json")
    assert code == 1, out
    doc = json.loads(out)
    assert doc["source"]["sections"][0]["first_line"] == 1, doc["source"]
    assert doc["source"]["skipped"] == []
    assert "health_critical" in _codes(out)


def test_a_bom_on_standard_input_is_not_a_line(tmp_path) -> None:
    code, out, _ = _run("-", "--json", stdin="\ufeff" + _real(ATA_FAILED))
    doc = json.loads(out)
    assert doc["source"]["sections"][0]["first_line"] == 1 and doc["source"]["skipped"] == [], doc["source"]


# --- the text a newcomer reads -------------------------------------------------------------------------------


def test_each_device_block_names_its_device(tmp_path, capsys) -> None:
    """Two NVMe controllers pasted from lspci: each block began '  nvme  ?  Samsung ...', naming neither; which
    block was which had to be guessed from the chain line below it."""
    one = _real(LSPCI)
    two = one.replace("2e:00.0 Non-Volatile", "2f:00.0 Non-Volatile")
    code, out, _ = _run(_write(tmp_path, "two.txt", one + "\n" + two))
    out += capsys.readouterr().out  # the text view is printed by rich's console, to sys.stdout
    headers = [line for line in out.splitlines() if "Samsung Electronics" in line and "nvme" in line]
    assert len(headers) == 2, out
    assert "0000:2e:00.0" in headers[0] and "0000:2f:00.0" in headers[1], headers


def test_an_empty_device_name_is_refused(tmp_path) -> None:
    """`explain ""` read /sys/block/ itself as a disk: '/dev/  unknown  ?', exit 0."""
    code, out, err = _run("")
    assert code == 2 and "no such block device" in err, (out, err)


def test_invalid_utf8_on_a_strict_standard_input_is_read(tmp_path) -> None:
    """Under a UTF-8 locale Python's stdin is strict: one byte 0xff in a piped paste was 'internal error:
    UnicodeDecodeError'. Standard input is now read as bytes and decoded as a file is."""
    data = _real(ATA_FAILED).encode()
    data = data[:500] + b"\xff\xfe\xc3\x28" + data[500:]
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict")
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdin, out, err, dict(os.environ), False, False, False)
    code = main(["explain", "-", "--json"], env=env)
    assert code == 1, err.getvalue()
    assert "health_critical" in _codes(out.getvalue())


def test_utf16_on_standard_input_is_read() -> None:
    data = _real(ATA_FAILED).encode("utf-16")
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict")
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "-", "--json"], env=Environment(stdin, out, err, dict(os.environ), False, False, False))
    assert code == 1, err.getvalue()


def test_a_negative_capacity_is_unknown(tmp_path) -> None:
    """smartctl JSON with user_capacity.bytes -5 was shown as a '-5 B' drive (in the text header and --json)."""
    doc = {"json_format_version": [1, 0], "device": {"name": "/dev/sda", "protocol": "ATA"}, "model_name": "X",
           "smart_status": {"passed": True}, "user_capacity": {"bytes": -5}}  # fmt: skip
    code, out, _ = _run(_write(tmp_path, "s.json", json.dumps(doc)), "--json")
    assert code == 0 and json.loads(out)["device"]["size_bytes"] is None, out
