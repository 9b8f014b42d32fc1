"""JSON inside a paste decoded within a memory budget (issue 35, defect 6): as `import` decodes a large run
(store.boundedjson), with a budget proportional to the JSON's size. A 63 MiB smartctl-like or fio-like JSON paste
peaked at 1.6 GB, and one of a million lines at 4.3 GB; now a 60 MiB one stays under 600 MB, and one whose values
would not fit is one line and exit 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from conftest import DATA, SMARTCTL_FIXTURES

from disksleuth.cli import main
from disksleuth.cli.env import Environment

SMART_HEAD = '{"json_format_version":[1,0],"smartctl":{"version":[7,4]},"device":{"name":"/dev/sda","protocol":"ATA"},'
FIO_HEAD = '{"fio version":"fio-3.33","timestamp_ms":1700000000000,"global options":{"rw":"read","bs":"1M"},'
PEAK_BAR_BYTES = 600 * 10**6
FIO_JSON = os.path.join(DATA, "fio", "fio-3.33-randread-io_uring.json")
SMART_JSON = os.path.join(SMARTCTL_FIXTURES, "SEAGATE_ST373453LC_26.json")


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", *args], env=Environment(io.StringIO(), out, err, dict(os.environ), False, False, False))
    assert "Traceback" not in out.getvalue() + err.getvalue() and "internal error" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _empty_containers(head: str, size: int) -> str:
    """`head` then a list of empty objects: 3 bytes of text, 72 bytes of Python each (the import attack's shape)."""
    return head + '"x":[' + ",".join(["{}"] * (size // 3)) + "]}\n"


@pytest.mark.parametrize("head, what", [(SMART_HEAD, "smartctl"), (FIO_HEAD, "fio")], ids=["smartctl", "fio"])
def test_json_whose_values_would_not_fit_is_one_line(tmp_path, head: str, what: str) -> None:
    """1.5 MiB of `{}` would take 36 MB as Python: over the budget (16 MiB here; four times the text above that)."""
    path = tmp_path / "paste.json"
    path.write_text(_empty_containers(head, 3 << 19))
    code, _out, err = _run(str(path))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert f"the {what} JSON's values would take over 16 MiB of memory" in err, err


def test_real_smartctl_and_fio_json_pastes_are_still_read(tmp_path) -> None:
    """Real documents are small: json's own decoder reads them, as before."""
    with open(FIO_JSON, encoding="utf-8") as f:
        fio = f.read()
    with open(SMART_JSON, encoding="utf-8") as f:
        smart = f.read()
    path = tmp_path / "paste.txt"
    path.write_text(
        f"$ smartctl -x --json /dev/sdb\n{smart}\n$ fio --output-format=json --filename=/dev/sdb --name=x\n{fio}"
    )
    code, out, err = _run(str(path), "--json")
    assert code in (0, 1), err
    doc = json.loads(out)
    assert [(s["kind"], s["status"]) for s in doc["source"]["sections"]] == [
        ("smartctl_json", "read"),
        ("fio_json", "read"),
    ]
    assert doc["device"]["name"] == "sdb" and doc["given"][0]["option"] == "fio --output-format=json", doc["given"]


def test_text_after_the_value_on_its_last_line_is_left_out(tmp_path) -> None:
    """The splitter ends a section at the line where its value closes: what follows on that line (a prompt pasted
    on the same line) made the whole document "not JSON" (Extra data)."""
    doc = {"json_format_version": [1, 0], "device": {"name": "/dev/sda", "protocol": "ATA"}, "model_name": "M1",
           "smart_status": {"passed": False}}  # fmt: skip
    path = tmp_path / "s.txt"
    path.write_text(json.dumps(doc, indent=2) + "user@host:~$\n")
    code, out, err = _run(str(path), "--json")
    assert code == 1, err
    assert "health_critical" in out


def _peak_rss_bytes(path: str) -> tuple[int, int, str]:
    """`disksleuth explain PATH` in a child of a fresh interpreter: its exit code, peak RSS and stderr. The fresh
    interpreter's only child is disksleuth, so RUSAGE_CHILDREN's maximum is disksleuth's own."""
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'disksleuth', 'explain', sys.argv[1]], capture_output=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
        "sys.stderr.write(done.stderr.decode())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, text=True, timeout=300)
    code, peak = done.stdout.split()
    return int(code), int(peak), done.stderr


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.parametrize("shape", ["empty containers", "one a line", "strings that fit"])
def test_a_60_mib_json_paste_stays_under_600_mb(tmp_path, shape: str) -> None:
    """Peak RSS of `explain` on a 60 MiB JSON paste (the child's maximum resident set, which /usr/bin/time -v also
    reports): under 600 MB. Before: 1.6 GB for the empty containers on one line, 4.3 GB for them one a line (a line
    object each, then the values). Now the first is refused in one line when its values would not fit, the second
    is read as far as the line cap and said so, and the strings are read."""
    size = 60 << 20
    if shape == "empty containers":
        text = _empty_containers(SMART_HEAD, size)
    elif shape == "one a line":
        text = SMART_HEAD + '"x":[\n' + ",\n".join(["{}"] * (size // 4)) + "\n]}\n"
    else:
        count = (size - len(SMART_HEAD)) // 23
        text = SMART_HEAD + '"model_name":"M","x":[' + ",".join(f'"{i:020d}"' for i in range(count)) + "]}\n"
    path = tmp_path / "big.json"
    path.write_text(text)
    del text
    code, peak, err = _peak_rss_bytes(str(path))
    assert peak < PEAK_BAR_BYTES, f"{shape}: peak {peak / 1e6:.0f} MB"
    if shape == "strings that fit":
        assert code == 0, err
        return
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert ("MiB of memory" if shape == "empty containers" else "the first 1,048,576 lines were read") in err, err
