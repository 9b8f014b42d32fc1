"""Phase detection of the sustained fill on series recorded with real fio (tests/data/series/record_sustained.py),
and the bandwidth-log parser on fio's own output."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from disksleuth.analysis import sustained as S
from disksleuth.errors import ParseError
from disksleuth.probe.fio_bwlog import parse_bw_log

HERE = os.path.dirname(os.path.abspath(__file__))
SERIES = os.path.join(HERE, "data", "series")
MB = 1_000_000


def recorded(name: str, with_temperature: bool = True):
    with open(os.path.join(SERIES, f"sustained-{name}.json")) as fh:
        doc = json.load(fh)
    points = S.fill_points(parse_bw_log(doc["bw_log"]), total_bytes=doc["fio_write_bytes"])
    temps = [tuple(t) for t in doc["temperature"]] if with_temperature else []
    return doc, S.analyse(points, temps, doc["warning_c"])


def switch_at(doc: dict, rate: int) -> int:
    """Where the emulator lowered the throttle to `rate` (bytes written by then)."""
    return next(at for at, bps in doc["throttle_switches"] if bps == rate)


def test_one_cliff_found_where_the_cache_ran_out():
    doc, s = recorded("cliff")
    cache = switch_at(doc, 50 * MB)
    assert s.cause == "cache"
    assert s.cache_exhausted_at_bytes == pytest.approx(cache, rel=0.10)
    assert s.sustained_mbps == pytest.approx(50, rel=0.10)
    assert s.burst_mbps > 4 * s.sustained_mbps
    assert len(s.phases) == 2
    assert s.phases[0].start_bytes == 0 and s.phases[-1].end_bytes == s.written_bytes == doc["fio_write_bytes"]
    assert s.phases[0].end_bytes == s.phases[1].start_bytes == s.cache_exhausted_at_bytes
    # The emulated temperature rose ~8 °C, far from its 70 °C warning level: the cache, not heat.
    assert "below the 70 °C warning threshold" in s.reason
    (finding,) = S.findings(s)
    assert finding.code == "write_cache_cliff" and finding.severity == "info"
    assert finding.message.startswith(f"Writes ran at {s.burst_mbps:,.0f} MB/s for the first ")
    assert f"then {s.sustained_mbps:,.0f} MB/s" in finding.message


def test_two_cliffs_cache_then_folding():
    doc, s = recorded("two-cliffs")
    assert s.cache_exhausted_at_bytes == pytest.approx(switch_at(doc, 100 * MB), rel=0.10)
    rates = [p.mbps for p in s.phases]
    # Somewhere after the cache: ~100 MB/s, then ~30 MB/s from the fold on, to the end.
    assert any(p.mbps == pytest.approx(100, rel=0.15) for p in s.phases[1:-1])
    assert s.phases[-1].mbps == pytest.approx(30, rel=0.10)
    assert s.phases[-1].start_bytes == pytest.approx(switch_at(doc, 30 * MB), rel=0.10)
    assert rates[0] > 4 * max(rates[1:])
    _, cliffs = S.find_phases(S.binned(s.points))
    assert len(cliffs) == 2  # the cache, then the fold
    assert "Phases:" in S.findings(s)[0].message


def test_flat_series_has_no_cliff():
    _, s = recorded("flat")
    assert s.cause is None and s.cache_exhausted_at_bytes is None
    assert len(s.phases) == 1
    assert s.burst_mbps == s.sustained_mbps == pytest.approx(120, rel=0.05)
    assert S.findings(s) == []


@pytest.mark.parametrize("name", ["noisy", "unthrottled"])
def test_noisy_flat_series_has_no_cliff(name):
    # noisy: a neighbour moves the throttle between 60 and 150 MB/s; unthrottled: a RAM loop device as
    # jittery as the CPU time left on a busy machine. Phases may be many; none is a cliff.
    _, s = recorded(name)
    assert s.cause is None and s.cache_exhausted_at_bytes is None
    assert S.findings(s) == []


def test_thermal_drop_is_heat_not_cache():
    doc, s = recorded("thermal")
    assert s.cause == "thermal"
    assert s.cache_exhausted_at_bytes is None  # not the cache
    assert s.cliff_at_bytes == pytest.approx(switch_at(doc, 40 * MB), rel=0.10)
    assert s.sustained_mbps == pytest.approx(40, rel=0.10)
    assert s.temperature_at_cliff_c >= 70
    (finding,) = S.findings(s)
    assert finding.code == "thermal_throttling" and finding.severity == "warn"
    assert "(warning threshold 70 °C)" in finding.message and "heat, not the write cache" in finding.message


def test_same_drop_without_temperatures_is_the_cache_with_a_caveat():
    _, s = recorded("thermal", with_temperature=False)
    assert s.cause == "cache"
    assert "heat cannot be ruled out" in s.reason


def test_thermal_needs_the_warning_threshold():
    doc, _ = recorded("thermal")
    points = S.fill_points(parse_bw_log(doc["bw_log"]), total_bytes=doc["fio_write_bytes"])
    s = S.analyse(points, [tuple(t) for t in doc["temperature"]], warning_c=None)
    assert s.cause == "cache" and "no warning threshold" in s.reason


def test_binning_keeps_bytes_and_time():
    _, s = recorded("unthrottled")
    few = S.binned(s.points, max_points=7)
    assert len(few) <= 7
    assert few[-1].written_bytes == s.points[-1].written_bytes and few[-1].t_s == s.points[-1].t_s
    total_s = few[-1].t_s
    mean = sum(p.mbps * (p.t_s - (few[i - 1].t_s if i else 0)) for i, p in enumerate(few)) / total_s
    assert mean == pytest.approx(s.written_bytes / total_s / 1e6, rel=0.01)


def test_recovery_counts_the_fast_bytes_again():
    doc, fill = recorded("cliff")
    # The same recorded fill stands in for the second burst: everything up to the cliff ran fast again.
    back = S.recovery(fill.points, idle_s=30, fill=fill)
    assert back.fell and back.fast_bytes == fill.cache_exhausted_at_bytes and back.recovered_pct == 100.0


# --- the bandwidth log parser -----------------------------------------------------------------------


def test_parse_fio_333_bw_log():
    with open(os.path.join(HERE, "data", "fio", "fio-3.33-write_bw_log-avg100ms.log")) as fh:
        entries = parse_bw_log(fh.read())
    assert entries[0].t_ms == 144 and entries[0].direction == "write"
    assert entries[0].bytes_per_s == 1479111 * 1024  # KiB/s
    assert all(e.t_ms <= f.t_ms for e, f in zip(entries, entries[1:], strict=False))


def test_parse_bw_log_other_fio_versions():
    # fio 2.x: four fields; fio >= 3.35: a sixth, the command priority (fio HOWTO, "Log File Formats").
    entries = parse_bw_log("100, 2048, 1, 0\n200, 4096, 1, 0, 0, 0\n300, 1024, 0, 0, 0\n")
    assert [(e.t_ms, e.bytes_per_s, e.direction) for e in entries] == [
        (100, 2048 * 1024, "write"),
        (200, 4096 * 1024, "write"),
        (300, 1024 * 1024, "read"),
    ]
    points = S.fill_points(entries)
    assert [p.written_bytes for p in points] == [round(2048 * 102.4), round((2048 + 4096) * 102.4)]


@pytest.mark.parametrize(
    "text",
    [
        "100, 2048",
        "100, 2048, 1, 0, 0, 0, 0",
        "abc, 2048, 1, 0, 0",
        "100, -5, 1, 0, 0",
        "100, 2048, 7, 0, 0",
        "200, 1, 1, 0, 0\n100, 1, 1, 0, 0",
        "fio: some error text\n",
    ],
)
def test_parse_bw_log_rejects_what_fio_does_not_write(text):
    with pytest.raises(ParseError):
        parse_bw_log(text)


def test_switch_inside_a_brief_step_is_placed_by_the_mix_of_rates():
    from disksleuth.model.sustained import Phase

    fast = Phase(0, 500 * MB, 0.0, 1.0, 500.0)
    settled = Phase(540 * MB, 1040 * MB, 1.3, 11.3, 50.0)
    # The 40 MB step over 0.3 s is 500 MB/s for x s and 50 MB/s after: x = (40 - 15) / 450 s.
    at_bytes, at_s = S._switch_point(fast, settled, 50.0)
    assert at_bytes == pytest.approx(500 * MB + 500 * MB * 25 / 450, rel=1e-6)
    assert at_s == pytest.approx(1.0 + 25 / 450, abs=1e-3)
    assert S._switch_point(fast, fast, 50.0) == (500 * MB, 1.0)  # no step: the phase boundary itself


def test_fill_round_trips_through_the_store_into_show_and_report(tmp_path):
    """The sustained object is kept with its test in the store; show and report read it back."""
    from dataclasses import replace

    from conftest import result_with_series

    from disksleuth.doc.run import run_from_dict, run_to_dict
    from disksleuth.model.run import Run
    from disksleuth.present.report import render_report
    from disksleuth.store.db import Store

    _, s = recorded("thermal")
    test = replace(result_with_series([100.0, 50.0]), id="SEQ1M_Q4T1_fill", rw="write", sustained=s)
    run = Run("/dev/loopN", "sustained", "2026-11-21T18:00:00+0000", "fio-3.33", "libaio", {}, (test,))
    doc = run_to_dict(run)
    assert doc["sustained"]["cause"] == "thermal" and doc["tests"][0]["sustained"] == doc["sustained"]
    with Store(f"sqlite:///{tmp_path}/r.sqlite") as store:
        loaded = store.load(store.save(doc))
    back = run_from_dict(loaded).tests[0].sustained
    assert back is not None and back.cause == "thermal" and back.phases == s.phases
    assert back.points == s.points
    html = render_report([loaded])
    assert "sustained write" in html and "thermal throttling at" in html and "GB written" in html


# A real short fill (fio 3.33, 1 MiB QD4 io_uring, --size=300000000 on a RAM loop device): fio's JSON gave
# io_bytes 300,941,312 in runtime 384 ms (783.7 MB/s); its bandwidth log stopped at the last whole window.
SHORT_FILL_LOG = "137, 545635, 1, 0, 0\n300, 810404, 1, 0, 0\n"
SHORT_FILL_BYTES, SHORT_FILL_S = 300_941_312, 0.384


def test_a_fill_has_one_rate_the_bytes_written_over_the_fill_time():
    """Review: tests[0].write_mbps 1,475 but burst = sustained = 2,181 for the same fill (the log's bytes were
    scaled to fio's total but not its time). Now the points end at fio's runtime and every rate agrees."""
    points = S.fill_points(parse_bw_log(SHORT_FILL_LOG), total_bytes=SHORT_FILL_BYTES, total_s=SHORT_FILL_S)
    assert points[-1].t_s == SHORT_FILL_S and points[-1].written_bytes == SHORT_FILL_BYTES
    fio_mbps = round(SHORT_FILL_BYTES / SHORT_FILL_S / 1e6, 1)  # 783.7, what the table shows
    s = S.analyse(points)
    assert s.mbps == fio_mbps and s.duration_s == SHORT_FILL_S and s.written_bytes == SHORT_FILL_BYTES
    (phase,) = s.phases
    assert phase.mbps == fio_mbps and phase.end_s == SHORT_FILL_S
    # Each point's rate is its own bytes over its own time.
    previous = S.FillPoint(0.0, 0, 0.0)
    for p in points:
        own = (p.written_bytes - previous.written_bytes) / (p.t_s - previous.t_s) / MB
        assert p.mbps == pytest.approx(own, abs=0.01)
        previous = p


def test_a_fill_too_short_to_judge_says_so_and_claims_no_cliff():
    """Review: "too soon to show phases" beside "no cliff: 510 MB/s throughout". Too few windows is no verdict."""
    points = S.fill_points(parse_bw_log(SHORT_FILL_LOG), total_bytes=SHORT_FILL_BYTES, total_s=SHORT_FILL_S)
    s = S.analyse(points)
    assert s.judged is False and "too short to judge" in s.reason and "held" not in s.reason
    assert s.cache_exhausted_at_bytes is None and s.cause is None
    assert s.burst_mbps is None and s.sustained_mbps is None  # no claim about before or after a cliff
    assert S.findings(s) == []
    from disksleuth.doc.sustained import sustained_from_dict, sustained_to_dict

    d = sustained_to_dict(s)
    assert d["judged"] is False and d["mbps"] == s.mbps and d["cache_exhausted_at_bytes"] is None
    assert sustained_from_dict(d) == s
    # A long recorded series is judged, and its rate is still its bytes over its time.
    doc, flat = recorded("flat")
    assert flat.judged is True and flat.mbps == pytest.approx(flat.burst_mbps, abs=0.1)


def test_the_text_view_of_a_short_fill_says_not_judged_not_no_cliff(capsys):
    from disksleuth.present.sustained_view import render_sustained

    points = S.fill_points(parse_bw_log(SHORT_FILL_LOG), total_bytes=SHORT_FILL_BYTES, total_s=SHORT_FILL_S)
    render_sustained(S.analyse(points))
    out = capsys.readouterr().out
    assert "no cliff" not in out and "too short to judge" in out
    assert "783.7 MB/s (bytes written / fill time)" in out and "783.7 MB/s  (0.38 s)" in out


def test_the_report_labels_the_levels_the_curve_shows():
    """Review: the curve rose from ~360 to 510 MB/s but was labelled a flat 510 MB/s. A run stored before the fix
    (points' rates raw from the log, the phase's rate from scaled bytes) and a new one: each label is the mean of
    the drawn windows, inside the curve's range; a short fill is labelled as an average, too short to judge."""
    from disksleuth.present.report import fill_levels, sustained_chart

    old = {  # as stored by 560e4cf for `--size 300M` (shape of the review's run)
        "written_bytes": 314_572_800,
        "phases": [{"start_bytes": 0, "end_bytes": 314_572_800, "start_s": 0.0, "end_s": 0.617, "mbps": 509.8}],
        "points": [
            {"t_s": 0.2, "written_bytes": 76_000_000, "mbps": 360.0},
            {"t_s": 0.4, "written_bytes": 176_000_000, "mbps": 420.0},
            {"t_s": 0.617, "written_bytes": 314_572_800, "mbps": 510.0},
        ],
    }
    ((x0, x1, level, label),) = fill_levels(old)
    assert 360 < level < 510 and "too short to judge" in label and label.startswith(f"{level:,.0f} MB/s")
    assert (x0, x1) == (0, 314_572_800)
    doc, s = recorded("cliff")
    from disksleuth.doc.sustained import sustained_to_dict

    new = sustained_to_dict(s)
    levels = fill_levels(new)
    assert [round(lv, 0) for _, _, lv, _ in levels] == pytest.approx([p.mbps for p in s.phases], abs=1.0)
    svg = sustained_chart({"run": {"id": 1}, "sustained": new})
    assert svg and "<svg" in svg


def test_sustained_without_its_analysis_library_stops_before_writing(tmp_path) -> None:
    """A venv without ruptures ran the whole fill, then lost it to ModuleNotFoundError."""
    code = (
        "import sys; sys.modules['ruptures'] = None\n"
        "from disksleuth.cli import main\n"
        f"sys.exit(main(['bench', {str(tmp_path)!r}, '--profile', 'sustained', '--size', '64M', '--no-save']))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "ruptures" in res.stderr and "internal error" not in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written: no scratch directory was made
