"""The HTML report keeps its caveats, and its charts stay readable (checked on the matplotlib figures)."""

from __future__ import annotations

import copy

import pytest

from disksleuth.doc.run import is_memory_backed
from disksleuth.present import report
from disksleuth.present.report import bar_chart, render_report


def _test(test_id: str, **kw) -> dict:
    base = {
        "id": test_id,
        "rw": "randread" if "RND" in test_id else "read",
        "bs_bytes": 4096 if "RND" in test_id else 1 << 20,
        "read_mbps": None,
        "write_mbps": None,
        "read_iops": None,
        "write_iops": None,
        "lat_mean_us": 100.0,
        "lat_p50_us": 80.0,
        "lat_p99_us": 400.0,
        "lat_p999_us": 900.0,
        "cache_affected": False,
        "notes": [],
        "series": [],
    }
    base.update(kw)
    return base


def _doc(run_id: int, tests: list[dict], **kw) -> dict:
    doc = {
        "run": {
            "id": run_id,
            "kind": "bench",
            "target": "/dev/loop7",
            "profile": "riscos",
            "started_at": "2026-11-21T18:00:00+0000",
            "fio_version": "fio-3.33",
            "engine": "io_uring",
            "host": {"hostname": "vm", "kernel": "6.18"},
            "device": "loop7",
            "notes": [],
            "tags": [],
        },
        "device": {"name": "loop7", "transport": "loop", "model": None},
        "tests": tests,
        "reference": [],
        "findings": [],
        "health": None,
    }
    for key, value in kw.items():  # top-level members first (device, findings, ...), then the run's
        (doc if key in doc or key not in doc["run"] else doc["run"])[key] = value
    return doc


def _caveat_doc() -> dict:
    return _doc(
        7,
        [
            _test(
                "SEQ8M_Q1T1_read",
                read_mbps=1671.5,
                read_iops=199,
                pct_of_reference={"read_mbps": 73.8},
                settled=False,
                stability_pct=22.0,
                notes=["did not settle within its maximum time"],
            ),
            _test(
                "RND4K_Q1T1_randrw80",
                rw="randrw",
                read_mbps=25.0,
                write_mbps=6.2,
                read_iops=6100,
                write_iops=1523,
                cache_affected=True,
                read_lat_mean_us=131.0,
                read_lat_p50_us=12.5,
                read_lat_p99_us=3162.1,
                read_lat_p999_us=8978.4,
                write_lat_mean_us=129.0,
                write_lat_p50_us=13.2,
                write_lat_p99_us=2932.7,
                write_lat_p999_us=8093.7,
                pct_of_reference={"read_mbps": 92.7, "write_mbps": 93.7},
            ),
        ],
        notes=["skipped write tests: SEQ8M_Q1T1_write"],
        findings=[
            {
                "code": "memory_backed",
                "severity": "warn",
                "message": "The target is backed by memory",
                "hint": "test a real disk",
                "evidence": {},
            }
        ],
        reference=[_test("SEQ8M_Q1T1_read", read_mbps=2265.3, read_iops=270)],
        health={"changes": {"media_errors": [0, 2]}},
    )


def test_report_keeps_every_caveat():
    html = render_report([_caveat_doc()])
    assert "memory-backed" in html and "Memory-backed target" in html  # badge and caveat
    assert "<tr class='cache'>" in html and "Cache-affected (*)" in html  # marker on the row, and why
    assert "Skipped:</b> write tests: SEQ8M_Q1T1_write" in html  # the word once (issue 40)
    assert "Not settled:</b> SEQ8M_Q1T1_read" in html and "not settled (spread 22%)" in html
    assert "% of RAM ref" in html and "read 74%" in html and "read 93% · write 94%" in html
    assert "RAM-disk reference" in html and "2,265.3" in html
    assert "<span class='code'>memory_backed</span>" in html and "<b>fix:</b> test a real disk" in html
    assert "media_errors 0 → 2" in html
    assert "└ read latency" in html and "3,162.1" in html and "2,932.7" in html  # randrw: each direction


def test_memory_backed_is_the_verdicts_rule_alone():
    """One memory_backed rule (issue 19): the report no longer guesses from names and notes, where the
    verdicts decide from the probe's memory record, so the badge and the finding never disagree."""
    doc = _doc(1, [_test("SEQ1M_Q8T1_read", read_mbps=3000.0)])
    doc["device"]["backing_file"] = "/dev/shm/disk.img"  # the old name rule said memory; the verdicts did not
    zram = _doc(2, [], device={"name": "zram0", "transport": "zram"})
    assert not is_memory_backed(doc) and not is_memory_backed(zram)
    doc["findings"] = [{"code": "memory_backed", "severity": "warn", "message": "", "evidence": {}, "hint": ""}]
    assert is_memory_backed(doc) and "(memory)" in report.series_label(doc)


def _ax(fig):
    fig.canvas.draw()
    return fig.axes[0]


def _inside(ax, artist) -> bool:
    box, frame = artist.get_window_extent(), ax.get_window_extent()
    return box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1 and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1


def test_log_axis_when_values_span_decades_and_no_bar_below_its_floor():
    docs = [
        _doc(1, [_test("RND4K_Q1T1_write", write_iops=19.0)]),  # an SD card
        _doc(2, [_test("RND4K_Q1T1_write", write_iops=92_000.0)]),  # a RAM disk
    ]
    ax = _ax(report.bar_figure(docs, "write_iops", "Random write IOPS", lambda t: True))
    assert ax.get_xscale() == "log"
    left, right = ax.get_xlim()
    bars = [p for c in ax.containers for p in c.patches]
    assert len(bars) == 2
    for bar in bars:
        assert left <= bar.get_x() < bar.get_x() + bar.get_width() <= right  # drawn, and above the floor
        assert bar.get_x() + bar.get_width() >= 19.0
    assert "log scale" in bar_chart(docs, "write_iops", "Random write IOPS", lambda t: True)  # said on the axis
    close = [
        _doc(1, [_test("RND4K_Q1T1_write", write_iops=300.0)]),
        _doc(2, [_test("RND4K_Q1T1_write", write_iops=900.0)]),
    ]
    assert _ax(report.bar_figure(close, "write_iops", "x", lambda t: True)).get_xscale() == "linear"


@pytest.mark.parametrize("values", [(19.0, 92_000.0), (300.0, 900.0), (5.0, 5.0)])
def test_value_labels_stay_inside_the_frame(values):
    docs = [_doc(i, [_test("SEQ1M_Q8T1_read", read_mbps=v, cache_affected=i == 1)]) for i, v in enumerate(values)]
    ax = _ax(report.bar_figure(docs, "read_mbps", "Sequential read MB/s", lambda t: True))
    labels = [t for t in ax.texts if t.get_gid() != "footnote"]  # the footnote sits under the legend
    assert labels and all(_inside(ax, t) for t in labels), [t.get_text() for t in labels]
    lat = _ax(report.latency_figure(docs))
    assert lat.get_xscale() == "linear" or lat.get_xscale() == "log"
    assert all(_inside(lat, t) for t in lat.texts)


def test_latency_spanning_decades_is_log():
    doc = _doc(1, [_test("RND4K_Q1T1_read", lat_p50_us=12.5, lat_p99_us=3000.0, lat_p999_us=9000.0)])
    assert _ax(report.latency_figure([doc])).get_xscale() == "log"


def test_value_labels_clear_the_error_bars_inside_the_frame():
    docs = [_doc(i, [_test("SEQ1M_Q8T1_read", read_mbps=v, ci95_pct=30.0)]) for i, v in enumerate((900.0, 1000.0))]
    ax = _ax(report.bar_figure(docs, "read_mbps", "x", lambda t: True))
    labels = [t for t in ax.texts if t.get_gid() != "footnote"]
    assert all(_inside(ax, t) for t in labels)
    assert ax.get_xlim()[1] > 1300.0  # past the longest whisker


def test_error_bars_when_tests_carry_ci95():
    docs = [_doc(1, [_test("SEQ1M_Q8T1_read", read_mbps=1000.0, ci95_pct=5.0)])]
    ax = _ax(report.bar_figure(docs, "read_mbps", "x", lambda t: True))
    bars = next(c for c in ax.containers if hasattr(c, "errorbar"))
    err = bars.errorbar
    assert err is not None
    segment = err.lines[2][0].get_segments()[0]  # the horizontal error line: 950 to 1050
    assert segment[0][0] == pytest.approx(950.0) and segment[1][0] == pytest.approx(1050.0)
    plain = _ax(
        report.bar_figure([_doc(1, [_test("SEQ1M_Q8T1_read", read_mbps=1000.0)])], "read_mbps", "x", lambda t: True)
    )
    assert next(c for c in plain.containers if hasattr(c, "errorbar")).errorbar is None


def test_six_runs_with_different_tests_leave_no_empty_slots():
    ids = ["SEQ1M_Q8T1_read", "SEQ1M_Q1T1_read", "SEQ8M_Q1T1_read"]
    docs = [_doc(i, [_test(ids[i % 3], read_mbps=100.0 * (i + 1))]) for i in range(6)]
    fig = report.bar_figure(docs, "read_mbps", "x", lambda t: True)
    ax = _ax(fig)
    assert sum(len(c.patches) for c in ax.containers) == 6
    assert fig.get_size_inches()[1] < 4.0  # 6 bars, not 3 tests x 6 run slots
    assert [t.get_text() for t in ax.get_yticklabels()] == ids


def test_short_series_is_drawn_as_a_line_not_a_dot():
    doc = _doc(
        1,
        [
            _test("SEQ1M_Q8T1_read", read_mbps=3000.0, series=[{"t_s": 1.0, "read_mbps": 3000.0, "write_mbps": 0.0}]),
            _test(
                "RND4K_Q32T1_read",
                read_mbps=290.0,
                series=[
                    {"t_s": 1.2, "read_mbps": 290.0, "write_mbps": 0.0},
                    {"t_s": 2.2, "read_mbps": 300.0, "write_mbps": 0.0},
                ],
            ),
        ],
    )
    ax = _ax(report.timeline_figure(doc))
    lines = [line for line in ax.get_lines() if line.get_label().startswith(("SEQ", "RND"))]
    assert len(lines) == 2
    for line in lines:
        xs = list(line.get_xdata())
        assert len(set(xs)) >= 2 and max(xs) - min(xs) >= 0.9  # a segment a second long at least
        assert line.get_linestyle() == "-"
    first, second = lines
    assert max(first.get_xdata()) <= min(second.get_xdata())  # tests back to back, in order


def test_link_chain_runs_from_the_device_to_the_cpu():
    device = {
        "name": "nvme0n1",
        "model": "Samsung SSD 970 EVO Plus",
        "transport": "nvme",
        "link": {
            "hops": [
                {
                    "kind": "pcie",
                    "name": "0000:04:00.0",
                    "port": "0000:03:08.0",
                    "label": "PCIe 4.0 x4",
                    "ceiling_mbps": 7089.1,
                },
                {
                    "kind": "pcie",
                    "name": "0000:02:00.0",
                    "port": "0000:00:01.1",
                    "label": "PCIe 3.0 x1",
                    "ceiling_mbps": 886.1,
                },
            ],
            "bottleneck": "PCIe 3.0 x1",
        },
    }
    ax = _ax(report.chain_figure(device))
    names = [t for t in ax.texts if t.get_fontweight() == "bold"]
    ordered = [t.get_text() for t in sorted(names, key=lambda t: t.get_position()[0])]
    assert ordered == ["nvme0n1", "0000:04:00.0", "0000:02:00.0", "CPU"]
    arrows = [a for a in ax.texts if getattr(a, "arrow_patch", None) is not None]
    assert len(arrows) == 3
    for arrow in arrows:  # every arrow points right: towards the CPU
        (x_to, _), (x_from, _) = arrow.xy, arrow.xyann
        assert x_to > x_from
    assert all(_inside(ax, t) for t in names)


def test_report_of_runs_without_anything_to_chart():
    doc = _doc(3, [], device={})
    html = render_report([doc, copy.deepcopy(doc)])
    assert "Run #3" in html and "<svg" not in html


def test_a_fixed_length_test_is_never_called_unsettled_and_a_short_one_says_what_it_missed():
    # Review of issue 13: `bench --time 2` stored settled=false with precision_target_pct=null, and the
    # report said "Not settled: ... still moved at the end of the test" of tests that had no target at all.
    doc = _caveat_doc()
    doc["tests"][0] |= {"settled": False, "precision_target_pct": None}
    html = render_report([doc])
    assert "Not settled" not in html and "Not within" not in html
    doc["tests"][0] |= {"settled": False, "precision_target_pct": 3.0, "ci95_pct": 8.2}
    html = render_report([doc])
    assert "Not within ±3%:</b> SEQ8M_Q1T1_read did not reach ±3% in the time they had" in html
    assert "still moved" not in html


def test_stored_text_with_escapes_and_bidi_overrides_is_shown_not_obeyed():
    # Attacker review of issue 13: target, --note and --tag with "\x1b]0;TITLE\x07", "\x1b[31m" and U+202E
    # reached report.html raw (`cat` obeyed them; a browser reversed the header line).
    doc = _caveat_doc()
    evil = "ev\x1b]0;TITLE\x07il\x1b[31mRED\r\nfake line\u202e"
    doc["run"] |= {"target": "/tmp/" + evil, "note": evil, "tags": [evil]}
    html = render_report([doc])
    assert "\x1b" not in html and "\u202e" not in html and "\x07" not in html
    assert "\\x1b]0;TITLE\\x07il\\x1b[31mRED" in html and "\\u202e" in html


def test_error_bars_are_named_under_the_chart():
    # Newcomer review of issue 13: the report drew error bars that nothing said were 95% intervals.
    doc = _caveat_doc()
    doc["tests"][0]["ci95_pct"] = 4.2
    assert "error bars: 95% confidence interval of each figure over its run" in render_report([doc])
    assert "error bars:" not in render_report([_caveat_doc()])  # no interval, no bars, no legend
