"""member_slow is judged on intervals (issue 24): a member read too briefly for a 95% interval is not called slow.

Seen for real: `bench --members --time 1` on identical RAM-backed loops under load named loop3 slow at 1,951 MB/s
against 6,150 MB/s, with no interval behind either figure."""

from __future__ import annotations

from disksleuth.analysis.members import member_slow
from disksleuth.model.arrays import MemberReading


def _reading(name: str, mbps: float, ci: float | None) -> MemberReading:
    return MemberReading(name=name, path=f"/dev/{name}", alone_mbps=mbps, alone_ci95_pct=ci)


def test_one_figure_without_an_interval_is_named_at_info_not_warn():
    found = member_slow(
        [_reading("loop3", 1951.0, None), _reading("loop4", 6150.0, None), _reading("loop5", 6020.0, None)]
    )
    assert [(f.device, f.severity) for f in found] == [("loop3", "info")]
    assert "too few samples for an interval" in found[0].message
    assert "read longer" in found[0].message


def test_a_member_whose_interval_is_far_below_its_peers_is_a_warning():
    found = member_slow([_reading("sdc", 41.0, 3.0), _reading("sdb", 180.0, 2.0), _reading("sdd", 178.0, 2.5)])
    assert [(f.device, f.severity) for f in found] == [("sdc", "warn")]
    assert "an array waits for its slowest member" in found[0].message


def test_equal_members_with_intervals_are_not_named():
    assert member_slow([_reading("sdb", 180.0, 2.0), _reading("sdc", 176.0, 2.0), _reading("sdd", 182.0, 2.0)]) == []
