"""Issue 37: tests of small blocks take one rate from fio's completed-request counts, as the logged ones do from
their completions: MB/s = IOPS x block size, the interval, the stop rule and the series from the same counts.

The capture (tests/data/fio_status/rnd4k-q32-10k-iops-cap.txt) is fio 3.33's stdout for RND4K Q32T1 read, 1.5 s
after a 0.25 s ramp, 100 ms status documents, on a RAM loop device that a cgroup v1 blkio group held to 10,000 read
IOPS (libaio), this machine, 2026-11-28."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from disksleuth.analysis import completions
from disksleuth.model.fio import StatusSample
from disksleuth.probe.fio import _sample
from disksleuth.probe.fio_parse import report_from_document, split_documents
from disksleuth.profiles import PROFILES

CAPTURE = os.path.join(os.path.dirname(__file__), "data", "fio_status", "rnd4k-q32-10k-iops-cap.txt")
CAP_IOPS = 10_000
BS = 4096


def _captured():
    with open(CAPTURE) as fh:
        docs, _, _ = split_documents(fh.read())
    reports = [report_from_document(d) for d in docs]
    samples = [_sample(r, 0.0) for r in reports]
    t0 = samples[0].timestamp_ms or 0
    # Our clock as run_job reads it (fio's start ~0.2 s before its first document); the final document repeats
    # the last status one, and run_job drops it.
    samples = [replace(s, elapsed_s=0.2 + ((s.timestamp_ms or 0) - t0) / 1000) for s in samples]
    return samples[:-1], reports[-1]


def test_a_small_block_rate_is_of_completed_requests_and_holds_the_cap():
    samples, final = _captured()
    w = completions.counted_window(samples, BS, ramp_s=0.25)
    assert w is not None and w.basis == completions.COUNTED
    assert w.read_bytes == w.read_ios * BS and w.mbps("read") == pytest.approx(w.iops("read") * BS / 1e6, rel=1e-9)
    assert w.ci95_pct is not None
    assert abs(w.iops("read") - CAP_IOPS) / CAP_IOPS * 100 <= max(3.0, w.ci95_pct)
    # After the ramp's reset and before the job ended: not fio's whole runtime, nor the documents after it.
    fio_read = final.jobs[0].read
    assert fio_read is not None
    assert w.window_s < fio_read.runtime_ms / 1000 and w.completed_ios < fio_read.io_bytes // BS
    assert w.iops("read") == pytest.approx(fio_read.io_bytes / BS / (fio_read.runtime_ms / 1000), rel=0.05)


def test_documents_printed_while_the_job_ends_count_no_time():
    # fio goes on printing documents while its job ends: the same bytes, later timestamps, runtime stopped.
    samples, _ = _captured()
    last = samples[-1]
    after = [replace(last, elapsed_s=last.elapsed_s + 0.1 * k, timestamp_ms=(last.timestamp_ms or 0) + 100 * k)
             for k in range(1, 4)]  # fmt: skip
    w = completions.counted_window(samples, BS, 0.25)
    late = completions.counted_window([*samples, *after], BS, 0.25)
    assert w is not None and late is not None
    assert (late.completed_ios, late.window_s) == (w.completed_ios, w.window_s)


def test_the_series_of_a_small_block_test_holds_no_spike_above_the_cap():
    # fio's 100 ms documents alone swing with the throttle's bursts (8.5 and 81 MB/s beside each other at 41).
    samples, _ = _captured()
    w = completions.counted_window(samples, BS, 0.25)
    points = completions.counted_series(samples, BS, 0.25, 0.1)
    assert w is not None and w.ci95_pct is not None and points
    cap_mbps = CAP_IOPS * BS / 1e6
    assert max(p.read_mbps for p in points) <= cap_mbps * (1 + max(3.0, w.ci95_pct) / 100)
    assert all(p.iops * BS / 1e6 == pytest.approx(p.read_mbps, rel=0.001) for p in points)
    times = [p.t_s for p in points]
    assert times == sorted(set(times))


def test_the_stop_rule_judges_the_interval_the_result_will_show():
    from disksleuth.run.bench import ConfidenceStop, analyse_timed, counts_completed
    from disksleuth.run.plan import TestStep

    spec = next(t for t in PROFILES["quick"].tests if t.id == "RND4K_Q32T1_read")
    step = TestStep(spec, 1, 1, 3.0, 0.25, True, 1, status_interval_s=0.1, min_s=1.0, precision_pct=25.0)
    assert counts_completed(step)
    samples, final = _captured()
    rule = ConfidenceStop(step)
    decided = next((i + 1 for i, s in enumerate(samples) if rule(s)), None)
    assert decided is not None
    w = completions.counted_window(samples[:decided], BS, 0.25)
    assert w is not None and w.ci95_pct is not None and w.ci95_pct <= 25.0 and w.window_s >= 1.0
    # The result shows that window: its figures, its interval, its basis.
    from disksleuth.run.bench import FioOutcome
    from disksleuth.run.context import Where

    where = Where("/dev/loop9", 256 << 20, None, "libaio", True, False, True)
    outcome = FioOutcome(step, where, final, tuple(samples), {}, True, "fio-3.33", decided_at=decided)
    result = analyse_timed(outcome)
    assert result.rate_basis == "completed_counts" and result.ci95_pct == w.ci95_pct
    assert result.read_mbps == pytest.approx(result.read_iops * BS / 1e6, rel=0.01)
    assert result.read_mbps == pytest.approx(w.mbps("read"), abs=0.01)
    assert (result.completed_ios, result.window_s) == (w.completed_ios, round(w.window_s, 3))


def test_a_window_needs_documents_after_the_ramp():
    ramp_only = [StatusSample(0.1 * k, 4096 * k, 0, k, 1000 + 100 * k, runtime_ms=100 * k) for k in range(1, 4)]
    assert completions.counted_window(ramp_only, BS, 0.25) is None  # no reset seen yet: still in the ramp
    assert completions.counted_series(ramp_only, BS, 0.25, 0.1) == ()
