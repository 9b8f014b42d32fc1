"""`check` and `bench` keep the drive's health reading in the store's health history, tell a counter that grew
against it, and honour `health --ack` (issue 23), end to end: real fio on a real loop device, a real SQLite store.

What is not real: SMART. A loop device has none, and real smartctl cannot read one, so a `smartctl` placed first
on PATH prints a real capture (the WD20EFRX of tests/data/smartctl, with only its CRC count and capture time
changed, as test_health_history does); and the loop device is taken as a physical drive (VIRTUAL without "loop"),
so check and bench ask smartctl for its health as they do for a SATA drive. Everything from there on is the code
a SATA drive goes through: HealthWatch, the parser, observe(), the store, the acknowledgements."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import loop_device, needs_fio, needs_loop
from test_health_history import CRC, capture

pytestmark = [needs_fio, needs_loop, pytest.mark.root, pytest.mark.slow]

RUN = ["--time", "2", "--engine", "libaio", "--json"]


@pytest.fixture
def smart_loop(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    """A loop device whose health reads come from the capture named in $REMAIN_SMARTCTL_CAPTURE."""
    from disksleuth.run import bench, check, plan

    physical_loops = tuple(t for t in plan.VIRTUAL if t != "loop")
    for module in (plan, bench, check):
        monkeypatch.setattr(module, "VIRTUAL", physical_loops)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "smartctl"
    fake.write_text('#!/bin/sh\nexec cat "$REMAIN_SMARTCTL_CAPTURE"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    with loop_device(128) as dev:
        yield dev


def _crc(doc: dict) -> dict:
    return next(f for f in doc["findings"] if f["code"] == "interface_crc_errors")


def test_check_and_bench_keep_health_warn_on_growth_and_honour_ack(smart_loop, cli, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    dev = smart_loop
    name = os.path.basename(dev)

    def measure(command: str, crc: int, at: str) -> tuple[int, dict]:
        monkeypatch.setenv("REMAIN_SMARTCTL_CAPTURE", capture(tmp_path, crc, at))
        extra = ["--profile", "quick"] if command == "bench" else []
        res = cli(command, dev, *extra, *RUN)
        assert "Traceback" not in res.err, res.err
        return res.code, res.json()

    code, doc = measure("check", 108, "2026-11-02 08:00")
    assert doc["health"]["before"] is not None, doc["health"]
    first_day = doc["run"]["started_at"][:10]  # a live reading is dated when it was read, not by the capture
    assert code == 1 and _crc(doc)["severity"] == "warn"

    code, doc = measure("bench", 131, "2026-11-05 08:00")  # grown since the check's reading
    f = _crc(doc)
    assert code == 1 and f["severity"] == "warn"
    assert f"UDMA_CRC_Error_Count (ATA 199) 108 → 131 since {first_day}" in f["message"], f["message"]

    hist = cli("health", "--history", name, "--json")
    assert hist.code == 1, hist.err  # the grown CRC count is a warn finding: 1, as `health` gives (issue 40)
    readings = hist.json()["health_history"]["readings"]
    assert [r["counters"][CRC] for r in readings] == [108, 131]
    assert [r["source"] for r in readings] == ["check", "bench"]

    res = cli("health", "--ack", name, "199")
    assert res.code == 0, res.err
    assert "acknowledged UDMA_CRC_Error_Count (ATA 199) at 131" in res.out

    code, doc = measure("check", 131, "2026-11-08 08:00")  # the same count: info, and no warn left
    f = _crc(doc)
    assert f["severity"] == "info" and "Acknowledged: UDMA_CRC_Error_Count (ATA 199) at 131" in f["message"]
    assert code == 0 or any(x["severity"] in ("warn", "critical") and x["code"] != f["code"] for x in doc["findings"])

    code, doc = measure("bench", 140, "2026-11-09 08:00")  # grown past the acknowledged value: warn again
    f = _crc(doc)
    assert code == 1 and f["severity"] == "warn"
    assert "131 → 140 since it was acknowledged on" in f["message"], f["message"]
