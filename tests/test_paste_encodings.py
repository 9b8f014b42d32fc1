"""Pastes as terminals and Windows save them (issue 35, defect 14): colour codes from `grep --color=always` and a
`script` capture, a window title set by the prompt, and UTF-16 without a byte-order mark. Each is a real paste of
tests/data/paste made so by the real tool at test time (grep, script) or by the encoding itself."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess

import pytest
from conftest import DATA

from disksleuth.cli import main
from disksleuth.cli.env import Environment
from disksleuth.probe.paste_text import read_paste

PASTE = os.path.join(DATA, "paste")
FAILING_ATA = os.path.join(PASTE, "smartctl", "linuxhw-ata-HDS721010CLA332-8C32A7A982FE.txt")
DOWNGRADED = os.path.join(PASTE, "lspci", "rendered", "lspci390-vvnn-cap-phy32.txt")
# What a user greps for; "^" matches every line, so the whole report is printed, the matches coloured.
SMART_WORDS = "smartctl|START OF|Device Model|SMART overall-health|Reallocated_Sector_Ct|UDMA_CRC|^"
LSPCI_WORDS = "Non-Volatile|LnkSta|LnkCap|Express|^"


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    stream = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8", errors="strict")
    code = main(["explain", *args], env=Environment(stream, out, err, dict(os.environ), False, False, False))
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _write(tmp_path, name: str, data: bytes) -> str:
    path = os.path.join(str(tmp_path), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _grep_coloured(pattern: str, path: str) -> bytes:
    grep = shutil.which("grep")
    if grep is None:
        pytest.skip("grep is not installed")
    done = subprocess.run([grep, "--color=always", "-E", pattern, path], capture_output=True, check=True)
    return done.stdout


def _findings(out: str) -> set[str]:
    return {f["code"] for f in json.loads(out)["findings"]}


def test_grep_coloured_smartctl_is_read_as_the_plain_one(tmp_path) -> None:
    """`grep --color=always ... | tee paste.txt`: "\\x1b[01;31m\\x1b[Ksmartctl\\x1b[m\\x1b[K 7.1" started no section,
    and the report read as "no device in the paste" (exit 2)."""
    coloured = _grep_coloured(SMART_WORDS, FAILING_ATA)
    assert b"\x1b[01;31m\x1b[Ksmartctl\x1b[m\x1b[K 7.1" in coloured  # grep's own colouring, as pasted
    code, out, err = _run(_write(tmp_path, "coloured.txt", coloured), "--json")
    plain_code, plain_out, _ = _run(FAILING_ATA, "--json")
    assert code == plain_code == 1, err
    assert _findings(out) == _findings(plain_out) and "health_critical" in _findings(out)
    doc = json.loads(out)
    assert doc["device"]["model"] == "HDS721010CLA332"
    assert any("colour" in n for n in doc["source"]["notes"]), doc["source"]["notes"]


def test_grep_coloured_lspci_keeps_its_link(tmp_path) -> None:
    code, out, err = _run(_write(tmp_path, "lspci.txt", _grep_coloured(LSPCI_WORDS, DOWNGRADED)), "--json")
    plain_code, plain_out, _ = _run(DOWNGRADED, "--json")
    assert code == plain_code, err
    assert json.loads(out)["device"]["link"] == json.loads(plain_out)["device"]["link"]
    assert _findings(out) == _findings(plain_out)


def test_a_script_capture_is_read(tmp_path) -> None:
    """`script` records what the terminal got: CRLF line ends and the colours of grep --color=auto."""
    script = shutil.which("script")
    if script is None:
        pytest.skip("script (util-linux) is not installed")
    log = os.path.join(str(tmp_path), "typescript")
    command = f"grep --color=always -E '{SMART_WORDS}' {FAILING_ATA}"
    subprocess.run([script, "-q", "-c", command, log], capture_output=True, check=True, timeout=30)
    with open(log, "rb") as f:
        captured = f.read()
    assert b"\r\n" in captured and b"\x1b[" in captured
    code, out, err = _run(log, "--json")
    assert code == 1, err
    assert "health_critical" in _findings(out)


def test_a_prompt_that_sets_the_window_title_still_names_the_drive() -> None:
    """Debian's bash prompt in an xterm starts with OSC 0 (the window title: "\\x1b]0;user@host: dir\\x07"); a
    `script` or tmux capture keeps it, and the prompt, then its command, went unrecognised."""
    prompt = "\x1b]0;root@nas: ~\x07\x1b[01;32mroot@nas\x1b[00m:\x1b[01;34m~\x1b[00m# smartctl -x /dev/sdb\n"
    paste = read_paste(prompt + _read(FAILING_ATA))
    assert [(s.kind, s.command) for s in paste.sections] == [("smartctl", "smartctl -x /dev/sdb")]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16-le crlf"])
def test_utf16_without_a_byte_order_mark_is_read(tmp_path, encoding: str) -> None:
    """`iconv -t UTF-16LE`, Notepad++'s "UCS-2 LE w/o BOM", PowerShell's UTF-16 report cut by `tail`: no
    byte-order mark, a NUL beside every ASCII byte. It was refused as "binary data" (exit 2)."""
    text = _read(FAILING_ATA)
    data = {
        "utf-16-le": text.encode("utf-16-le"),
        "utf-16-be": text.encode("utf-16-be"),
        "utf-16-le crlf": text.replace("\n", "\r\n").encode("utf-16-le"),
    }[encoding]
    assert not data.startswith((b"\xff\xfe", b"\xfe\xff"))
    code, out, err = _run(_write(tmp_path, "report.txt", data), "--json")
    assert code == 1, err
    doc = json.loads(out)
    assert doc["source"]["sections"][0]["first_line"] == 1 and doc["source"]["skipped"] == [], doc["source"]
    assert "health_critical" in _findings(out)


def test_utf16_without_a_mark_on_standard_input_is_read() -> None:
    code, out, err = _run("-", "--json", stdin=_read(FAILING_ATA).encode("utf-16-le"))
    assert code == 1, err


@pytest.mark.parametrize(
    "data",
    [
        (b"A\x00" * 19 + b"\x00\xd8") * 200,  # NUL in most odd bytes, and lone UTF-16 surrogates: not text
        b"\x41\x00" * 4095 + b"\x41",  # odd length: not UTF-16
        bytes(range(256)) * 64,
    ],
    ids=["surrogates", "odd length", "all bytes"],
)
def test_binary_with_nuls_is_still_refused(tmp_path, data: bytes) -> None:
    code, _out, err = _run(_write(tmp_path, "junk.bin", data))
    assert code == 2 and "binary data" in err and len(err.strip().splitlines()) == 1, err
