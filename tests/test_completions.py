"""The completions-only window of a test (analysis/completions.py) on a real per-request log of fio (issue 37)."""

from __future__ import annotations

import os

import pytest

from disksleuth.analysis import completions
from disksleuth.errors import ParseError
from disksleuth.probe.fio_bwlog import parse_lat_log, read_lat_logs

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fio")
THROTTLED_LOG = os.path.join(DATA, "fio-3.33-write_lat_log-seq1m-q8-50mbps-throttle.log")
MIB = 1 << 20


def _captured() -> tuple[tuple[int, int, str, int], ...]:
    with open(THROTTLED_LOG) as fh:
        return parse_lat_log(fh.read())


def test_a_throttled_log_gives_the_cap_with_mbps_equal_to_iops_times_block_size():
    # blk-throttle released five 1 MiB reads in the same millisecond every ~100 ms; fio's JSON for this run said
    # 112 MiB in 2.305 s (50.95 MB/s) beside 105 requests (45.6 IOPS = 47.8 MB/s).
    entries = _captured()
    assert len(entries) == 112 and all(e[2] == "read" and e[3] == MIB for e in entries)
    w = completions.window(entries)
    assert w is not None
    assert w.completed_ios == w.read_ios and w.write_ios == 0 and w.read_bytes == w.read_ios * MIB
    assert w.mbps("read") == pytest.approx(w.iops("read") * MIB / 1e6, rel=1e-9)
    assert w.mbps("read") == pytest.approx(50.0, rel=0.02), w
    assert w.ci95_pct is not None and abs(w.mbps("read") - 50.0) / 50.0 * 100 <= max(3.0, w.ci95_pct)
    # The drain after the last issue is left out: the window ends before fio's runtime does.
    assert w.window_s < 2.2


def test_the_window_opens_and_closes_at_the_end_of_a_burst():
    # Bursts of five every 100 ms: from the first of one burst to the last of another would count one burst
    # too many (+4% over 1 s); from the end of a burst to the end of another it is exact.
    entries = [(100 * k + (0 if k % 2 else 1), 0, "read", MIB) for k in range(12) for _ in range(5)]
    w = completions.window([(t, 10**6, d, b) for t, _, d, b in entries])
    assert w is not None
    assert w.completed_ios / w.window_s == pytest.approx(50.0, rel=0.03)


def test_too_few_completions_are_said_and_none_for_a_log_of_one():
    assert completions.window([(5, 1000, "read", MIB)]) is None
    assert completions.too_few_note(completions.MIN_COMPLETIONS, 2.0) is None
    note = completions.too_few_note(23, 2.4)
    assert note is not None and "23 requests completed in its 2.4 s window" in note


def test_a_bad_latency_log_is_one_parse_error(tmp_path):
    for text in ("1, 2, 0\n", "a, 2, 0, 4096, 0\n", "1, 2, 9, 4096, 0\n", "-1, 2, 0, 4096, 0\n"):
        with pytest.raises(ParseError):
            parse_lat_log(text)
    with pytest.raises(ParseError, match="wrote no latency log"):
        read_lat_logs(str(tmp_path / "none"), 1)


def test_the_series_from_the_same_completions_holds_no_spike_above_the_cap():
    # fio's own status documents made a point of 76 MB/s under this 50 MB/s cap (issue 37).
    from disksleuth.model.fio import StatusSample

    w = completions.window(_captured())
    assert w is not None
    after_ramp = [StatusSample(0.8 + k / 10, 0, 0, 0, None, runtime_ms=100 * k) for k in range(1, 20)]
    points = completions.series(w, after_ramp, 0.1)
    assert len(points) >= 2  # points of a second or more (SERIES_MIN_S)
    assert all(p.read_mbps <= 50 * 1.03 for p in points), [p.read_mbps for p in points]
    times = [p.t_s for p in points]
    assert times == sorted(set(times)) and times[0] > 0.8
    # The points are of the window: their requests over their time are the figure.
    mean = sum(p.read_mbps for p in points) / len(points)
    assert mean == pytest.approx(w.mbps("read"), rel=0.05)
