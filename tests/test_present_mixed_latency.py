"""Mixed read/write tests (randrw) show read and write latency separately: bench table and --json."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import FIO_FIXTURES, findings_exit, loop_device, needs_fio, needs_loop

from disksleuth.analysis.results import result_from_fio
from disksleuth.doc.run import test_to_dict as result_to_dict
from disksleuth.model.run import Run
from disksleuth.present.bench_view import render_run
from disksleuth.probe.fio_parse import aggregate, parse_fio_json
from disksleuth.profiles import JobPlan, TestSpec


def _mixed_result():
    with open(os.path.join(FIO_FIXTURES, "fio-3.16-randrw-libaio.json")) as fh:
        job = aggregate(parse_fio_json(fh.read()))
    spec = TestSpec("RND8K_Q1T1_randrw", "randrw", 8192, 1, rwmixread=50)
    plan = JobPlan("/x", None, None, "libaio", True, 30, 5)
    return result_from_fio(
        spec, job, fio_version="fio-3.16", engine="libaio", fio_command="fio ...", plan=plan, cache_affected=False
    )


def test_each_direction_keeps_its_own_latency():
    t = _mixed_result()
    # Straight from the capture: read clat p99 2,408,448 ns, write p99 477,184 ns; means 531.4 / 66.3 us.
    assert t.read_lat_p99_us == pytest.approx(2408.45, abs=0.01)
    assert t.write_lat_p99_us == pytest.approx(477.18, abs=0.01)
    assert t.read_lat_mean_us == pytest.approx(531.39, abs=0.01)
    assert t.lat_p99_us == t.write_lat_p99_us  # the combined figure stays the busier direction's
    doc = result_to_dict(t)
    assert doc["read_lat_p99_us"] == t.read_lat_p99_us and doc["write_lat_p50_us"] == t.write_lat_p50_us


def test_bench_table_has_a_latency_line_per_direction(capsys):
    t = _mixed_result()
    run = Run(
        target="/x",
        profile="mixed",
        started_at="2026-11-21T18:00:00+00:00",
        fio_version="fio-3.16",
        engine="libaio",
        host={},
        tests=(t,),
    )
    render_run(run)
    lines = capsys.readouterr().out.splitlines()
    read = next(line for line in lines if "read latency" in line).split()
    write = next(line for line in lines if "write latency" in line).split()
    assert "2,408.4" in read or "2,408.5" in read
    assert "477.2" in write and "477.2" not in read


def test_read_only_test_has_no_direction_lines(capsys):
    t = _mixed_result()
    from dataclasses import replace

    fields = {f"{d}_lat_{k}_us": None for d in ("read", "write") for k in ("mean", "p50", "p99", "p999", "max")}
    run = Run(
        target="/x",
        profile="quick",
        started_at="2026-11-21T18:00:00+00:00",
        fio_version="fio-3.16",
        engine="libaio",
        host={},
        tests=(replace(t, **fields),),
    )
    render_run(run)
    out = capsys.readouterr().out
    assert "read latency" not in out and "write latency" not in out


@pytest.mark.root
@pytest.mark.slow
@needs_fio
@needs_loop
def test_real_randrw_run_reports_both_directions():
    with loop_device(64) as dev:
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "disksleuth",
                "bench",
                dev,
                "--profile",
                "mixed",
                "--time",
                "1",
                "--json",
                "--no-save",
                "--destructive",
                "--yes",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert res.returncode == findings_exit(res.stdout), res.stderr
    import json

    t = json.loads(res.stdout)["tests"][0]
    assert t["rw"] == "randrw"
    for d in ("read", "write"):
        assert t[f"{d}_lat_p50_us"] > 0 and t[f"{d}_lat_p99_us"] >= t[f"{d}_lat_p50_us"]
