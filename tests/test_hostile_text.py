"""Text from outside is shown, never interpreted: Rich markup in tags, notes, model strings and targets
prints as itself, and no control character (ANSI/OSC escapes) from a file reaches the terminal."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import SMARTCTL_FIXTURES, SYSFS, findings_exit, needs_fio

from disksleuth.present.text import safe_text

MARKUP = "[/]"
TAG_MARKUP = "[bold red]not bold[/]"
# OSC 0 (set the window title), CSI (clear the screen), a one-byte C1 CSI and a bidi override.
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"
CONTROL = [chr(c) for c in range(0x20) if chr(c) not in "\n"] + ["\x7f", "\x9b", "\u202e"]


def assert_no_control(text: str) -> None:
    found = sorted({repr(c) for c in text if c in CONTROL})
    assert not found, f"control characters reached the output: {found}"


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path}/results.sqlite"


def imported_run(tmp_path, cli, db_url, **run_fields) -> str:
    """Import one run document whose strings come from an attacker, through the real CLI."""
    doc = {
        "device": {"name": "nvme0n1", "model": f"EVIL{ESCAPES}{TAG_MARKUP}", "firmware": f"FW{MARKUP}"},
        "run": {
            "kind": "check",
            "target": f"/srv/{MARKUP}{ESCAPES}",
            "profile": "quick",
            "started_at": "2026-11-21T10:00:00+0000",
            "finished_at": "2026-11-21T10:00:05+0000",
            "fio_version": f"fio-3.33{MARKUP}",
            "engine": "io_uring",
            "notes": [f"run note {MARKUP}{ESCAPES}"],
            **run_fields,
        },
        "tests": [
            {
                "id": f"SEQ1M{MARKUP}",
                "rw": "read",
                "bs_bytes": 1 << 20,
                "iodepth": 8,
                "numjobs": 1,
                "read_mbps": 1234.5,
                "read_iops": 1177.3,
                "write_mbps": None,
                "write_iops": None,
                "lat_mean_us": 100.0,
                "lat_p50_us": 90.0,
                "lat_p99_us": 300.0,
                "lat_p999_us": 500.0,
                "lat_max_us": 900.0,
                "runtime_s": 2.0,
                "fio_command": f"fio --name=x {MARKUP}{ESCAPES}",
                "cache_affected": False,
                "engine": "io_uring",
                "series": [],
                "notes": [f"test note {MARKUP}"],
            }
        ],
        "reference": [],
        "findings": [
            {"code": "ok", "severity": "ok", "message": f"msg {MARKUP}{ESCAPES}", "evidence": {}, "hint": "h [/]"}
        ],
        "summary": f"summary {MARKUP}{ESCAPES}",
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": [doc]}))
    res = cli("import", str(path), "--db", db_url)
    assert res.code == 0, res.err
    return res.out.split("#")[-1].strip()


def test_markup_in_imported_strings_prints_literally(cli, tmp_path, db_url, monkeypatch):
    run_id = imported_run(tmp_path, cli, db_url, tags=[MARKUP, TAG_MARKUP], note=f"note {MARKUP}{ESCAPES}")
    monkeypatch.setenv("COLUMNS", "400")  # runs fits its cells to the width: room for the tags whole
    res = cli("runs", "--db", db_url)
    assert res.code == 0, res.err
    assert MARKUP in res.out and TAG_MARKUP in res.out
    assert_no_control(res.out)
    res = cli("show", run_id, "--db", db_url, "--commands")
    assert res.code == 0, res.err
    for text in (f"note {MARKUP}", TAG_MARKUP, f"SEQ1M{MARKUP}", f"summary {MARKUP}"):
        assert text in res.out
    # A stored command that is not one fio call (here: "[/]" and escapes as words) is not offered to paste.
    assert f"SEQ1M{MARKUP}: (not shown: the stored command is not one fio call)" in res.out
    assert "\\x1b]0;pwned" in res.out  # shown as visible escapes, not acted on
    assert_no_control(res.out)
    res = cli("compare", run_id, run_id, "--db", db_url)
    assert res.code == 0, res.err
    assert_no_control(res.out)


@pytest.mark.slow
@needs_fio
def test_a_real_bench_tagged_with_markup_keeps_the_store_usable(cli, tmp_path, db_url):
    res = cli(
        "bench", str(tmp_path), "--time", "1", "--size", "16M", "--db", db_url,
        "--tag", MARKUP, "--tag", TAG_MARKUP, "--note", f"[link=file:///etc/passwd]click{ESCAPES}",
    )  # fmt: skip
    assert res.code == findings_exit(res.out), res.err
    runs = cli("runs", "--db", db_url)
    assert runs.code == 0, runs.err
    assert MARKUP in runs.out and TAG_MARKUP in runs.out
    run_id = cli("runs", "--db", db_url, "--json").json()["runs"][0]["id"]
    show = cli("show", str(run_id), "--db", db_url)
    assert show.code == 0, show.err
    assert "[link=file:///etc/passwd]click" in show.out
    for out in (res.out, res.err, runs.out, show.out):
        assert_no_control(out)


def test_smartctl_strings_never_reach_the_terminal_raw(cli, tmp_path):
    with open(os.path.join(SMARTCTL_FIXTURES, "nvme-null-CT250P2SSD8-nvme0.json")) as fh:
        doc = json.load(fh)
    doc["model_name"] = f"CT250{ESCAPES}{TAG_MARKUP}"
    doc["firmware_version"] = f"P2CR{ESCAPES}[/]"
    doc["serial_number"] = f"SER{ESCAPES}"
    doc["device"]["name"] = f"/dev/nvme0{ESCAPES}"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc))
    res = cli("health", "--from-smartctl", str(path))
    assert res.code in (0, 1), res.err
    assert f"CT250\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202e{TAG_MARKUP}" in res.out
    assert_no_control(res.out + res.err)
    res = cli("health", "--from-smartctl", str(path), "--json")
    assert_no_control(res.out)


def test_error_messages_from_files_carry_no_control_characters(cli, tmp_path):
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"json_format_version": [1, 0], "smartctl": {"messages": [{"string": ESCAPES}]}}))
    res = cli("health", "--from-smartctl", str(path))
    assert res.code == 2 and res.err.count("\n") == 1
    assert_no_control(res.err)


def test_sysfs_strings_are_shown_not_interpreted(cli, tmp_path):
    root = str(tmp_path / "tree")
    shutil.copytree(os.path.join(SYSFS, "sata_3g_on_6g"), root, symlinks=True)
    model = os.path.join(root, "sys/block/sda/device/model")
    with open(os.path.realpath(model), "w") as fh:
        fh.write(f"DISK{ESCAPES}{TAG_MARKUP}\n")
    res = cli("list", "--sysfs-root", root)
    assert res.code == 0, res.err
    assert TAG_MARKUP in res.out
    assert_no_control(res.out)


def test_safe_text():
    assert safe_text("plain") == "plain"
    assert safe_text(None) == ""
    assert safe_text("a\x1bb", markup=False) == "a\\x1bb"
    assert safe_text("tab\tand\nnewline") == "tab and newline"
    assert safe_text("[/]") == "\\[/]"


def test_smartctl_attribute_table_strings_are_escaped(cli, tmp_path):
    name = "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"
    with open(os.path.join(SMARTCTL_FIXTURES, name)) as fh:
        doc = json.load(fh)
    attribute = doc["ata_smart_attributes"]["table"][0]
    attribute["name"] = f"Raw_Read{ESCAPES}{MARKUP}"
    attribute["raw"]["string"] = f"0{ESCAPES}{TAG_MARKUP}"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc))
    res = cli("health", "--from-smartctl", str(path), "--attributes")
    assert res.code in (0, 1), res.err
    assert "Raw_Read\\x1b]0;pwned" in res.out
    assert_no_control(res.out + res.err)
