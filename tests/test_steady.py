"""Stability and burst/sustained figures on series recorded with real fio (tests/data/series/record.py).

When a test stops is the confidence interval's business now (tests/test_confidence.py)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from conftest import DATA, result_with_series

from disksleuth.analysis.steady import annotate, burst_and_sustained, per_second_values, spread_pct
from disksleuth.model.run import SeriesPoint


def _series(name: str) -> list[float]:
    with open(os.path.join(DATA, "series", f"{name}.json")) as fh:
        return json.load(fh)["mbps"]


def _per_second(values: list[float]) -> list[float]:
    return [sum(values[i : i + 4]) / 4 for i in range(0, len(values) - 3, 4)]


def test_stable_series_is_stable_and_has_no_cliff():
    values = _series("stable")
    assert spread_pct(values[:3]) < 5
    assert burst_and_sustained(values) is None
    result = annotate(result_with_series(values[:3], start_s=2.0), ramp_s=1.0, stopped_early=True, adaptive=True)
    assert result.settled is True and result.stability_pct < 5 and not result.notes


def test_noisy_series_that_never_got_sure_says_so():
    values = _series("noisy")
    assert max(values) / min(values) > 3  # really noisy: 18 to 64 MB/s
    result = annotate(
        result_with_series(values, start_s=2.0), ramp_s=1.0, stopped_early=False, adaptive=True, target_pct=3.0
    )
    assert result.settled is False and result.stability_pct > 20 and result.ci95_pct > 10
    assert any(n.startswith("did not reach ±3% in the time it had") for n in result.notes)


def test_cliff_is_reported_with_burst_and_sustained_figures():
    values = _series("cliff")
    burst, sustained = burst_and_sustained(values)
    assert burst > 2000 and 29 < sustained < 31
    result = annotate(result_with_series(values, start_s=2.0), ramp_s=1.0, stopped_early=False, adaptive=True)
    assert result.burst_mbps == pytest.approx(burst, abs=0.1) and result.sustained_mbps == pytest.approx(
        sustained, abs=0.1
    )
    assert any("fell to 30 MB/s sustained" in n for n in result.notes)


def test_a_noisy_neighbour_is_not_a_cliff():
    # The first 4 and 8 s of the 250 ms noisy recording, per second: the first two seconds and the last
    # three differ by more than 20% on average, but single seconds swing both ways. The old rule (means
    # only) called these "a write cache running out" and "warmed up"; a level change must not overlap.
    per_second = _per_second(_series("noisy-250ms"))
    for seconds in (4, 8):
        window = per_second[:seconds]
        first, last = sum(window[:2]) / 2, sum(window[-3:]) / 3
        assert abs(first - last) / first > 0.2
        assert burst_and_sustained(window) is None
    assert burst_and_sustained(_per_second(_series("cliff-250ms"))) is not None


def test_per_second_values_average_fast_samples():
    points = tuple(SeriesPoint(round(0.75 + i * 0.25, 2), float(i), 0.0, 0.0) for i in range(10))
    result = result_with_series([1.0])
    averaged = per_second_values(replace(result, series=points), ramp_s=0.5)
    assert averaged == [1.5, 5.5]  # (0+1+2+3)/4, (4+5+6+7)/4; the incomplete last second is left out


def test_fixed_length_tests_report_stability_without_a_verdict_on_too_few_samples():
    one = annotate(result_with_series([100.0], start_s=2.0), ramp_s=1.0, stopped_early=False, adaptive=False)
    assert one.settled is None and one.stability_pct is None and one.ci95_pct is None and not one.notes
