"""A mixed read/write test keeps its read and its write latency apart in every output of a stored run: `show`,
`compare` (a row per direction) and the exporter (a series per direction). Its one headline latency is the
direction that did a few more I/Os, so it could compare reads with writes from one run to the next."""

from __future__ import annotations

import os
import socket

import pytest
from conftest import SYSFS, metric_value

from disksleuth.store.db import Store

BADLY_SEATED = os.path.join(SYSFS, "scenario_badly_seated")  # has nvme0n1


def _mixed(read_p99_us: float, write_p99_us: float, reads_busier: bool) -> dict:
    """SEQ1M_Q32T2_rw as the homelab stored it: 50/50, the headline from whichever side did more I/Os."""
    head = read_p99_us if reads_busier else write_p99_us
    test = {
        "id": "SEQ1M_Q32T2_rw",
        "rw": "rw",
        "bs_bytes": 1 << 20,
        "iodepth": 32,
        "numjobs": 2,
        "rwmixread": 50,
        "read_mbps": 310.0,
        "read_iops": 295.6,
        "write_mbps": 305.0,
        "write_iops": 290.9,
        "lat_mean_us": head / 2,
        "lat_p50_us": head / 2,
        "lat_p99_us": head,
        "lat_p999_us": head,
        "lat_max_us": head * 1.5,
    }
    for d, p99 in (("read", read_p99_us), ("write", write_p99_us)):
        test.update(
            {
                f"{d}_lat_mean_us": p99 / 2,
                f"{d}_lat_p50_us": p99 / 2,
                f"{d}_lat_p99_us": p99,
                f"{d}_lat_p999_us": p99,
                f"{d}_lat_max_us": p99 * 1.5,
            }
        )
    return test


def _doc(started_at: str, test: dict) -> dict:
    run = {
        "kind": "bench",
        "target": "/dev/nvme0n1",
        "profile": "mixed",
        "started_at": started_at,
        "host": {"hostname": socket.gethostname()},  # the exporter shows this host's runs
        "device": "nvme0n1",
    }
    return {"run": run, "device": {"name": "nvme0n1", "model": "Samsung SSD 970 EVO Plus"}, "tests": [test]}


@pytest.fixture
def db(tmp_path) -> tuple[str, int, int]:
    url = f"sqlite:///{tmp_path}/mixed.sqlite"
    with Store(url) as store:
        a = store.save(_doc("2026-11-20T10:00:00+0000", _mixed(57066.0, 97498.0, reads_busier=True)))
        b = store.save(_doc("2026-11-21T10:00:00+0000", _mixed(60000.0, 99000.0, reads_busier=False)))
    return url, a, b


def test_show_keeps_both_directions(cli, db):
    url, a, _ = db
    test = cli("show", str(a), "--db", url, "--json").json()["tests"][0]
    assert (test["read_lat_p99_us"], test["write_lat_p99_us"]) == (57066.0, 97498.0)
    out = cli("show", str(a), "--db", url).out
    read = next(line for line in out.splitlines() if "read latency" in line)
    write = next(line for line in out.splitlines() if "write latency" in line)
    assert "57,066.0" in read and "97,498.0" in write, out


def test_compare_has_a_latency_row_per_direction(cli, db):
    url, a, b = db
    rows = cli("compare", str(a), str(b), "--db", url, "--json").json()["comparison"]["rows"]
    by_metric = {r["metric"]: r for r in rows}
    # The old single row compared run a's reads (57,066) with run b's writes (99,000): "1.73x worse".
    assert "lat_p99_us" not in by_metric
    assert by_metric["read_lat_p99_us"]["values"] == [57066.0, 60000.0]
    assert by_metric["write_lat_p99_us"]["values"] == [97498.0, 99000.0]
    assert not by_metric["write_lat_p99_us"]["higher_is_better"]
    out = cli("compare", str(a), str(b), "--db", url).out
    assert "read p99 latency µs" in out and "write p99 latency µs" in out and "97,498" in out, out


def test_exporter_has_a_latency_series_per_direction(cli, db, tmp_path):
    url, _, _ = db
    res = cli("exporter", "--textfile", str(tmp_path), "--db", url, "--sysfs-root", BADLY_SEATED)
    assert res.code == 0, res.err
    text = (tmp_path / "disksleuth.prom").read_text()
    labels = {"device": "nvme0n1", "test": "SEQ1M_Q32T2_rw", "stat": "p99"}
    name = "disksleuth_bench_direction_latency_seconds"
    # The newest run (b): its writes were busier, so the old headline series switched from reads to writes.
    assert metric_value(text, name, direction="read", **labels) == pytest.approx(0.060)
    assert metric_value(text, name, direction="write", **labels) == pytest.approx(0.099)
    assert metric_value(text, "disksleuth_bench_latency_seconds", **labels) is None
