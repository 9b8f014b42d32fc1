"""A finding that comes and goes (a temperature at its limit, a link that renegotiates) is told once a week at most,
not at every return: "never the same thing twice" (the review of issue 38 item 4)."""

from __future__ import annotations

from disksleuth.doc.watch import state_from_dict, state_to_dict
from disksleuth.model.watch import DriveSeen, SeenFinding, WatchConfig
from disksleuth.run.watch import _plan

DAY = 86400.0
HOT = SeenFinding("temperature_high", "warn", "sda is at 71 °C, over its warning limit of 70 °C")


def _passes(findings_by_day: list[tuple[SeenFinding, ...]]) -> list[int]:
    """The number of messages each daily pass would send, the state kept through the store's JSON as it is."""
    config = WatchConfig(heartbeat_days=None)
    before = None
    sent = []
    for day, findings in enumerate(findings_by_day):
        drive = DriveSeen("k", "sda", "M", findings, {}, True)
        plan = _plan(config, before, 0.0, [drive], {}, day * DAY, "h")
        sent.append(len(plan.messages))
        before = state_from_dict(state_to_dict(plan.state))
    return sent


def test_a_finding_that_comes_and_goes_is_told_once_a_week() -> None:
    hot, cool = (HOT,), ()
    # Day 0 told; back on days 2, 4 and 6: not again; back on day 8, a week after it was told: told.
    assert _passes([hot, cool, hot, cool, hot, cool, hot, cool, hot]) == [1, 0, 0, 0, 0, 0, 0, 0, 1]


def test_a_return_at_a_higher_severity_is_told_at_once() -> None:
    critical = SeenFinding("temperature_high", "critical", "sda is at 86 °C, over its critical limit of 85 °C")
    assert _passes([(HOT,), (), (critical,), (), (HOT,)]) == [1, 0, 1, 0, 0]
