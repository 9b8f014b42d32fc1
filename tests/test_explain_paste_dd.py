"""dd's summary lines from coreutils' own manual (tests/data/paste/dd, SOURCES.md there) through `explain FILE`:
bytes over seconds, and a copy from /dev/zero to /dev/null is not a drive's figure (it was taken for a read of a
device named "zero")."""

from __future__ import annotations

import io
import json
import os

import pytest
from conftest import DATA

from disksleuth.cli import main
from disksleuth.cli.env import Environment
from disksleuth.probe.bench_text import command_device, parse_dd_text

DD = os.path.join(DATA, "paste", "dd", "coreutils-texi-dd-usr1-stats.txt")
SLOW_SATA = os.path.join(DATA, "paste", "smartctl", "linuxhw-ata-HDS721010DLE630-E2B8EB3D132B.txt")
# The command the manual runs to print DD (coreutils.texi, "dd invocation").
MANUAL_COMMAND = "dd iflag=fullblock if=/dev/zero of=/dev/null count=5000000 bs=1000"


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_dd_summaries_are_bytes_over_seconds() -> None:
    figs = parse_dd_text(_read(DD))
    assert [(f.line, f.measure) for f in figs] == [(3, "unknown_mbps"), (6, "unknown_mbps")]
    assert figs[0].value == pytest.approx(3_441_325_000 / 1.00036 / 1e6)
    assert figs[1].value == pytest.approx(5_000_000_000 / 1.44433 / 1e6)


def test_zero_to_null_names_no_drive_and_is_not_judged() -> None:
    assert command_device(MANUAL_COMMAND) is None
    figs = parse_dd_text(_read(DD), 1, MANUAL_COMMAND)
    assert {(f.measure, f.device) for f in figs} == {("unknown_mbps", None)}
    assert "measures memory" in (figs[0].note or "")
    (write,) = parse_dd_text(_read(DD).splitlines()[2], 1, "dd if=/dev/zero of=/dev/sdb bs=1M")
    assert (write.measure, write.device) == ("seq_write_mbps", "sdb")


def test_through_the_cli_the_manuals_dd_is_shown_not_judged() -> None:
    paste = _read(SLOW_SATA) + f"\n$ {MANUAL_COMMAND}\n" + _read(DD)
    out = io.StringIO()
    env = Environment(io.StringIO(paste), out, io.StringIO(), dict(os.environ), False, False, False)
    main(["explain", "-", "--json"], env=env)
    doc = json.loads(out.getvalue())
    given = doc["devices"][0]["given"]
    assert [g["measure"] for g in given] == ["unknown_mbps", "unknown_mbps"]
    codes = {f["code"] for f in doc["findings"]}
    assert "cache_suspected" not in codes and "link_limited" not in codes  # 3,440 MB/s over a 1.5 Gb/s link
