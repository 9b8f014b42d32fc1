"""Steady-state decisions on per-second series recorded with real fio (tests/data/series/record.py)."""

from __future__ import annotations

import json
import os

import pytest
from conftest import DATA, result_with_series

from disksleuth.analysis.steady import annotate, burst_and_sustained, decide, spread_pct
from disksleuth.profiles import PROFILES


def _series(name: str) -> list[float]:
    with open(os.path.join(DATA, "series", f"{name}.json")) as fh:
        return json.load(fh)["mbps"]


def _write_spec():
    return next(t for t in PROFILES["standard"].tests if t.writes)


def _first_settled(values: list[float], min_samples: int = 2) -> int | None:
    """How many samples it took to settle, feeding them one by one as the status stream does."""
    for n in range(1, len(values) + 1):
        if decide(values[:n], min_samples=min_samples).settled:
            return n
    return None


def test_stable_series_settles_at_the_first_full_window():
    values = _series("stable")
    assert _first_settled(values) == 3
    assert spread_pct(values[:3]) < 5
    assert burst_and_sustained(values) is None
    result = annotate(result_with_series(values[:3], start_s=2.0), ramp_s=1.0, stopped_early=True, adaptive=True)
    assert result.settled is True and result.stability_pct < 5 and not result.notes


def test_noisy_series_never_settles_and_says_so():
    values = _series("noisy")
    assert max(values) / min(values) > 3  # really noisy: 18 to 64 MB/s
    assert _first_settled(values) is None
    result = annotate(result_with_series(values, start_s=2.0), ramp_s=1.0, stopped_early=False, adaptive=True)
    assert result.settled is False and result.stability_pct > 20
    assert any(n.startswith("did not reach within its maximum time") for n in result.notes)


def test_cliff_is_reported_and_settles_only_after_it():
    values = _series("cliff")
    cliff_at = next(i for i, v in enumerate(values) if v < 100)
    burst, sustained = burst_and_sustained(values)
    assert burst > 2000 and 29 < sustained < 31
    # With a 2-sample minimum the steady burst before the cliff looks settled: no rule can see a cliff
    # that has not happened yet. That is why write tests get a longer minimum (standard: 4 s).
    assert _first_settled(values, min_samples=2) == 3
    n = _first_settled(values, min_samples=PROFILES["standard"].min_samples(_write_spec()))
    assert n is not None and n >= cliff_at + 3  # settles on the sustained rate, after the cliff
    result = annotate(result_with_series(values, start_s=2.0), ramp_s=1.0, stopped_early=False, adaptive=True)
    assert result.burst_mbps == pytest.approx(burst, abs=0.1) and result.sustained_mbps == pytest.approx(
        sustained, abs=0.1
    )
    assert any("fell to 30 MB/s sustained" in n for n in result.notes)


def test_slow_quantized_media_settles_on_its_running_mean():
    # 2 MB/s with 1 MiB blocks: every second holds one or two I/Os.
    values = [1.05, 2.1, 2.1, 1.05, 2.1, 2.1, 1.05, 2.1, 2.1, 1.05, 2.1, 2.1, 1.05, 2.1, 2.1]
    assert all(spread_pct(values[i : i + 3]) > 5 for i in range(len(values) - 2))
    n = _first_settled(values)
    assert n is not None and n <= len(values)
    assert abs(sum(values[:n]) / n - 1.75) / 1.75 < 0.05


def test_minimum_samples_are_respected():
    values = _series("stable")
    assert _first_settled(values, min_samples=6) == 6


def test_fixed_length_tests_report_stability_without_a_verdict_on_too_few_samples():
    one = annotate(result_with_series([100.0], start_s=2.0), ramp_s=1.0, stopped_early=False, adaptive=False)
    assert one.settled is None and one.stability_pct is None and not one.notes
