"""Runs dated where no clock was (issue 35, defect 8): an imported run dated year 1 or 9999 made `report` fail
("internal error: ValueError ... Matplotlib dates must be between year 0001 and 9999") for every later run of its
drive. Now `import` refuses a start before 1970 or more than a day ahead, in one line naming the run and its date;
and a store that already holds such a run (imported before, or by an older version) reports, leaving it out of
the charts as `show` leaves a run dated in the future out of a baseline, and saying so."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from test_store import _doc

from disksleuth.analysis.baseline import Baseline, Choice, History
from disksleuth.model.baseline import EarlierRun, TestFigures
from disksleuth.present.report_history import history_html
from disksleuth.store.db import Store

SEQ = "SEQ1M_Q8T1_read"


def _stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S%z")


def _from_now(**delta: float) -> str:
    return _stamp(dt.datetime.now(dt.UTC) + dt.timedelta(**delta))


def _bundle(*docs: dict) -> str:
    return json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": list(docs)})


# --- import refuses them ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "started,why",
    [
        ("0001-01-01T00:00:00+0000", "is before 1970 (was the clock never set?)"),
        ("0001-01-01T00:00:00+0100", "is before 1970 (was the clock never set?)"),  # before year 1 in UTC
        ("1969-12-31T23:59:59+0000", "is before 1970 (was the clock never set?)"),
        ("9999-12-31T23:59:59+0000", "is more than a day ahead of this machine's clock"),
        ("9999-12-31T23:59:59-0100", "is more than a day ahead of this machine's clock"),  # after 9999 in UTC
        (_from_now(days=2), "is more than a day ahead of this machine's clock"),
    ],
    # Fixed ids: pytest-xdist's workers each collect, and an id holding the clock differs between them.
    ids=["year 1", "year 1 at +0100", "1969", "year 9999", "year 9999 at -0100", "two days ahead"],
)
def test_import_refuses_a_start_no_clock_gave(cli, tmp_path, started, why) -> None:
    fine, bad = _doc(100.0, 1000.0, "fine"), _doc(100.0, 1000.0, "bad", started=started)
    path = tmp_path / "dated.json"
    path.write_text(_bundle(fine, bad))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    res = cli("import", str(path), "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert f"{path}: run 2 is not valid: runs[1].run.started_at: {started} {why}" in res.err
    with Store(db) as store:
        assert store.count() == 0


@pytest.mark.parametrize(
    "started",
    ["1970-01-01T00:00:00+0000", _from_now(hours=12), "2026-01-01T00:00:00"],
    ids=["1970", "half a day ahead", "no zone"],
)
def test_import_takes_a_start_from_1970_to_a_day_ahead(cli, tmp_path, started) -> None:
    """1970-01-01 is what a board without a clock battery says at boot; half a day ahead is a zone set wrong."""
    path = tmp_path / "dated.json"
    path.write_text(_bundle(_doc(100.0, 1000.0, "x", started=started)))
    res = cli("import", str(path), "--db", f"sqlite:///{tmp_path}/r.sqlite")
    assert res.code == 0, res.err


# --- a store that holds one already reports ---------------------------------------------------------------------

BAD_DATES = [
    "0001-01-01T00:00:00+0000",
    "0001-01-01T00:00:00+0100",
    "9999-12-31T23:59:59+0000",
    "1900-06-01T00:00:00+0000",
]


@pytest.mark.parametrize(
    "bad,args", [("0001-01-01T00:00:00+0000", ()), ("9999-12-31T23:59:59+0000", ("3",))], ids=["year 1", "year 9999"]
)
def test_report_leaves_out_of_its_charts_a_stored_run_no_clock_gave(cli, tmp_path, bad, args) -> None:
    """Stored as an older version's import stored it (Store.import_runs takes what it is given; `import`
    validates before): runs #1, #2 and #4 of the drive in November, #3 dated `bad`. The report of the newest run
    (#4), and of #3 itself."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    dates = ["2026-11-01T10:00:00+0000", "2026-11-02T10:00:00+0000", bad, "2026-11-03T10:00:00+0000"]
    with Store(db) as store:
        store.import_runs([_doc(100.0 + i, 1000.0, "m", started=when) for i, when in enumerate(dates)])
    out = tmp_path / "report.html"
    res = cli("report", *args, "-o", str(out), "--db", db)
    assert res.code == 0, res.err
    text = out.read_text()
    assert f"left out of the charts: 1 run(s) dated before 1970 or in the future (#3, e.g. {bad})." in text
    assert "nvme0n1 · SEQ1M Q8T1 read: over time" in text  # the other three are drawn


def _run(run_id: int, started_at: str, mbps: float) -> EarlierRun:
    when = dt.datetime.strptime(started_at, "%Y-%m-%dT%H:%M:%S%z").timestamp()
    return EarlierRun(run_id, started_at, when, {SEQ: TestFigures(1 << 20, read_mbps=mbps, ci95_pct=2.0)})


def _svgs(text: str) -> list[str]:
    """The charts, without the time each was drawn at (matplotlib's metadata)."""
    return [
        re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S) for svg in re.findall(r"<svg.*?</svg>", text, re.S)
    ]


@pytest.mark.parametrize("bad", BAD_DATES)
def test_the_chart_is_the_one_drawn_without_that_run(bad) -> None:
    good = [
        _run(5, "2026-03-04T10:00:00+0000", 500.0),
        _run(2, "2026-03-02T10:00:00+0000", 505.0),
        _run(1, "2026-03-01T10:00:00+0000", 498.0),
    ]
    b = Baseline(Choice("median"), None, status="too_little_history", reason="2 earlier runs")
    with_bad = history_html(History(5, (good[0], _run(4, bad, 9999.0), *good[1:]), b), "sda")
    without = history_html(History(5, tuple(good), b), "sda")
    assert len(_svgs(with_bad)) == 1 and _svgs(with_bad) == _svgs(without)
    assert f"(#4, e.g. {bad})." in with_bad
