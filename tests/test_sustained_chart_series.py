"""Issue 37: the sustained fill's chart from the same accounting as the tests' series: stretches of a second or
more, each at its bytes over its time, so a fill held by a cap draws no spike above it.

tests/data/series/sustained-flat.json is real fio (the sustained profile's fill, 100 ms bandwidth log) on a loop
device whose writes a blkio throttle held to 120 MB/s (tests/data/series/record_sustained.py)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

from disksleuth.analysis.sustained import fill_points
from disksleuth.present import charts
from disksleuth.probe.fio_bwlog import parse_bw_log

FLAT = os.path.join(os.path.dirname(__file__), "data", "series", "sustained-flat.json")
CAP_MBPS = 120.0


def _points() -> list[dict]:
    with open(FLAT) as fh:
        rec = json.load(fh)
    return [asdict(p) for p in fill_points(parse_bw_log(rec["bw_log"]), rec["fio_write_bytes"])]


def test_the_fill_under_a_cap_draws_no_spike_above_it():
    windows = _points()
    assert max(p["mbps"] for p in windows) > CAP_MBPS * 1.5  # fio's 100 ms windows: 198 MB/s at a 120 MB/s cap
    curve = charts.per_second(windows)
    assert max(p["mbps"] for p in curve) <= CAP_MBPS * 1.03, [round(p["mbps"], 1) for p in curve]
    # The same bytes over the same time: the curve ends where the fill ended, each stretch a second or more.
    assert curve[-1]["written_bytes"] == windows[-1]["written_bytes"] and curve[-1]["t_s"] == windows[-1]["t_s"]
    starts = [0.0] + [p["t_s"] for p in curve[:-1]]
    assert all(p["t_s"] - t0 >= charts.PER_SECOND_S - 1e-9 for p, t0 in zip(curve, starts, strict=True))
    total_s = curve[-1]["t_s"]
    mean = sum(p["mbps"] * (p["t_s"] - t0) for p, t0 in zip(curve, starts, strict=True)) / total_s
    assert abs(mean - windows[-1]["written_bytes"] / total_s / 1e6) < 0.01


def test_a_fill_shorter_than_a_second_is_one_point_and_the_chart_draws_it():
    from disksleuth.present.report import sustained_chart

    short = [p for p in _points() if p["t_s"] <= 0.75]
    curve = charts.per_second(short)
    assert len(curve) == 1 and curve[0]["written_bytes"] == short[-1]["written_bytes"]
    doc = {"run": {"id": 1}, "sustained": {"points": short, "phases": [], "judged": False}}
    assert sustained_chart(doc) is not None
