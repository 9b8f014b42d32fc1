"""link_limited and cache_suspected decide on the 95% interval, not the point, and say when it straddles.

The x1 chipset slot of DESIGN.md: PCIe 2.0 x1, ~450 MB/s usable, so 80% is 360 MB/s and the cache line
(the ceiling plus its 5% tolerance) is 472.5 MB/s."""

from __future__ import annotations

import os
from dataclasses import replace

from conftest import SYSFS, result_with_series

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.verdicts import Figures, figures_from_tests, verdicts
from disksleuth.probe.block import read_device


def _findings(mbps: float, ci95_pct: float | None) -> dict:
    dev = read_device("nvme0n1", os.path.join(SYSFS, "scenario_x1_chipset_slot"))
    figures = Figures(seq_read_mbps=mbps, seq_read_ci95_pct=ci95_pct)
    return {f.code: f for f in verdicts(dev, link_chain(dev.hops), figures)}


def test_an_interval_wholly_past_80_percent_is_link_limited_as_before():
    found = _findings(373, 3.0)  # 362-384 MB/s, all of it >= 360
    ll = found["link_limited"]
    assert ll.severity == "warn" and ll.evidence["straddles_threshold"] is False
    assert ll.evidence["seq_interval_mbps"] == [361.8, 384.2]
    assert "straddles" not in ll.message


def test_an_interval_across_80_percent_says_so_even_when_the_point_is_below():
    # 350 MB/s is 78%: on the point alone nothing is said. Its interval, 332-368, reaches past 360.
    found = _findings(350, 5.0)
    ll = found["link_limited"]
    assert ll.severity == "info" and ll.evidence["straddles_threshold"] is True
    assert "332-368 MB/s (74-82% of the link), straddles the 80% line" in ll.message
    assert "--time 10" in ll.hint and "--precision 1 (or --repeat 3)" not in ll.hint
    # A point above the line with a wide interval is undecided too, not a warning.
    assert _findings(373, 8.0)["link_limited"].severity == "info"
    # Wholly below: nothing; no interval at all (explain's given figures): the point decides, as before.
    assert "link_limited" not in _findings(340, 2.0)
    assert _findings(373, None)["link_limited"].severity == "warn"
    assert "link_limited" not in _findings(350, None)


def test_cache_suspected_decides_on_the_interval_too():
    sure = _findings(520, 3.0)  # 504-536 MB/s: all above 472.5
    assert sure["cache_suspected"].severity == "warn" and "link_limited" not in sure
    maybe = _findings(480, 3.0)  # 466-494 MB/s: across the line
    cs = maybe["cache_suspected"]
    assert cs.severity == "info" and cs.evidence["straddles_threshold"] is True
    assert "may be above" in cs.message and "straddles 472 MB/s (the ceiling plus 5%" in cs.message
    assert maybe["link_limited"].severity == "warn"  # its low end is still a link-limited figure


def test_figures_carry_the_interval_of_the_best_sequential_test():
    slow = result_with_series([300.0] * 3)
    fast = result_with_series([400.0] * 3)
    tests = [replace(slow, read_mbps=300.0, ci95_pct=9.0), replace(fast, read_mbps=400.0, ci95_pct=2.5)]
    figures = figures_from_tests(tests)
    assert figures.seq_read_ci95_pct == 2.5
    assert figures.best_seq_interval == (390.0, 410.0)


def test_writes_beat_reads_on_a_virtual_disk_is_decided_on_the_intervals():
    # `disksleuth check` on this project's virtio disk (2026-11-21): SEQ1M write 1,457.1 MB/s ± 51.4%,
    # read 941.3 MB/s ± 2.0%. The old rule called the host's cache certain (warn) on the points alone.
    from disksleuth.model import Device

    disk = Device("vdz", "/dev/vdz", "virtio", size_bytes=1 << 30)

    def cache(write_ci: float) -> object:
        figures = Figures(
            seq_read_mbps=941.3, seq_write_mbps=1457.1, seq_read_ci95_pct=2.0, seq_write_ci95_pct=write_ci,
            measured_direct=True,
        )  # fmt: skip
        return next(f for f in verdicts(disk, link_chain(disk.hops), figures) if f.code == "cache_suspected")

    unsure = cache(51.4)
    assert unsure.severity == "info" and unsure.evidence["writes_beat_reads_within_intervals"] is False
    assert unsure.message.startswith("Sequential writes (1,457 MB/s) may beat reads (941 MB/s)")
    assert "overlap" in unsure.message
    sure = cache(5.0)  # 1,384-1,530 MB/s, all of it above 941 x 1.02 x 1.10
    assert sure.severity == "warn" and sure.evidence["writes_beat_reads_within_intervals"] is True
    assert sure.message.startswith("Sequential writes (1,457 MB/s) beat reads (941 MB/s)")


def test_compare_calls_a_change_within_the_two_intervals_the_same():
    # Newcomer review of issue 13: `compare 2 8` on two runs of a 50 MB/s throttle said "51.4 -> 50.7
    # -1% slower" while the figures were ±7.8% and ±12.1%: chance alone explains 14%.
    from disksleuth.analysis.compare import compare, table_cells

    def doc(run_id: int, mbps: float, ci: float | None) -> dict:
        test = {"id": "SEQ1M_Q8T1_read", "read_mbps": mbps, "read_iops": mbps / 1.048576, "ci95_pct": ci}
        return {"run": {"id": run_id, "started_at": "2026-11-21T22:00:00", "target": "/dev/loop0"}, "tests": [test]}

    _, rows = table_cells(compare([doc(2, 51.4, 7.8), doc(8, 50.7, 12.1)]))
    mbps = next(r for r in rows if r[1] == "read MB/s")
    assert mbps[-1] == "0.99x same"  # the old code: "-1% slower"
    _, rows = table_cells(compare([doc(2, 51.4, 1.0), doc(8, 45.0, 1.5)]))
    assert next(r for r in rows if r[1] == "read MB/s")[-1] == "0.88x slower"  # beyond the intervals: a change
    _, rows = table_cells(compare([doc(2, 51.4, None), doc(8, 50.7, 12.1)]))
    assert next(r for r in rows if r[1] == "read MB/s")[-1] == "0.99x slower"  # no interval: the 1% rule alone
