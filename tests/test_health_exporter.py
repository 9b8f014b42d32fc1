"""The exporter's health: gauges per drive, readings kept in the store by its background reads, and
acknowledgements honoured, with smartctl a real executable on PATH that prints real captures (the WD20EFRX
capture, only ATA 199's raw value and smartctl's local_time changed between readings: test_health_history)."""

from __future__ import annotations

import os
import sqlite3

import pytest
from conftest import SYSFS, metric_value
from test_health_history import capture

from disksleuth.probe.block import list_devices
from disksleuth.run import exporter

SATA = os.path.join(SYSFS, "sata_3g_on_6g")


@pytest.fixture
def fake_smartctl(tmp_path, monkeypatch):
    """`smartctl` on PATH printing the capture named by DISKSLEUTH_TEST_CAPTURE, as smartctl prints JSON."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "smartctl"
    script.write_text('#!/bin/sh\nexec cat "$DISKSLEUTH_TEST_CAPTURE"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")

    def show(path: str) -> None:
        monkeypatch.setenv("DISKSLEUTH_TEST_CAPTURE", path)

    return show


def _metrics(devices, cache) -> str:
    from disksleuth.present.prometheus import exposition

    snap = exporter.Snapshot(exporter.disk_states(devices, cache), (), None, "h")
    return exposition(snap).decode()


def test_background_reads_keep_history_and_honour_acks(cli, tmp_path, fake_smartctl):
    db = f"sqlite:///{tmp_path}/store.sqlite"
    devices = list_devices(SATA)
    disk = next(d for d in devices if d.transport == "sata")
    clock = {"t": 1_793_000_000.0}  # 2026-10-26
    cache = exporter.HealthCache(max_age_s=3600, history_db=db, with_history=True)

    def read(crc: int, hours_later: float) -> str:
        clock["t"] += hours_later * 3600
        fake_smartctl(capture(tmp_path, crc, "2026-11-02 08:00"))
        cache.refresh([disk.path], now=lambda: clock["t"])
        return _metrics(devices, cache)

    text = read(108, 0)
    name = disk.name
    crc = {"device": name, "kind": "interface", "counter": "UDMA_CRC_Error_Count (ATA 199)"}
    assert metric_value(text, "disksleuth_health_errors", **crc) == 108
    assert metric_value(text, "disksleuth_health_temperature_celsius", device=name) is not None
    assert metric_value(text, "disksleuth_health_power_on_seconds", device=name) % 3600 == 0
    assert metric_value(text, "disksleuth_health_smart_passed", device=name) == 1
    assert metric_value(text, "disksleuth_finding", device=name, code="interface_crc_errors", severity="warn") == 1

    for _ in range(3):  # the same reading, hourly: kept once (readings differ only by when the exporter read them)
        read(108, 1)
    assert cli("health", "--ack", name, "199", "--db", db).code == 0
    text = read(108, 0.02)  # a minute later: the ack is read back without reading the drive again
    assert metric_value(text, "disksleuth_finding", device=name, code="interface_crc_errors", severity="info") == 1
    assert metric_value(text, "disksleuth_health_errors_acknowledged", **crc) == 108

    text = read(131, 1)
    assert metric_value(text, "disksleuth_finding", device=name, code="interface_crc_errors", severity="warn") == 1
    con = sqlite3.connect(f"{tmp_path}/store.sqlite")
    sources = con.execute("SELECT source, counters_json FROM health_readings ORDER BY read_at_s").fetchall()
    con.close()
    assert [s for s, _ in sources] == ["exporter", "exporter"]
    assert '"interface.UDMA_CRC_Error_Count (ATA 199)": 131' in sources[-1][1]


def test_health_gauges_pass_promtool_lint(tmp_path, fake_smartctl):
    import shutil
    import subprocess

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool missing (Debian package prometheus)")
    devices = list_devices(SATA)
    fake_smartctl(capture(tmp_path, 7, "2026-11-02 08:00"))
    cache = exporter.HealthCache(max_age_s=3600)
    cache.refresh([d.path for d in devices if d.transport == "sata"])
    text = _metrics(devices, cache)
    res = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), res.stdout + res.stderr
