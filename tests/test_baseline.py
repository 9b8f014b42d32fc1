"""Baselines (issue 23): each run against the same drive's earlier runs of the same test, measured the same
way. The rule and its words on their own, then through a real SQLite store (show, runs, --baseline), the
edges (clock skew, a changed serial, deleted runs), and real throttled loop devices."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import uuid

import pytest
from conftest import (
    SAMPLE_RUN,
    blkio_throttle,
    findings_exit,
    have_blkio,
    in_cgroup,
    loop_device,
    needs_fio,
    needs_loop,
)

from disksleuth.analysis.baseline import (
    FASTER,
    MIN_RUNS,
    SLOWER,
    Choice,
    describe,
    findings,
    judge,
    parse_choice,
)
from disksleuth.errors import UsageError
from disksleuth.model.baseline import EarlierRun, Identity, TestFigures
from disksleuth.store.db import Store

DRIVE = Identity("ab" * 32, "nas", "sda", "Samsung SSD 870", 1_000_204_886_016)
T0 = 1_790_000_000.0  # 2026-09-21, the earlier runs an hour apart after it
NOW = T0 + 100 * 3600


def earlier(run_id: int, read_mbps: float, *, hours: float | None = None, ci: float | None = 2.0) -> EarlierRun:
    at = T0 + (hours if hours is not None else run_id) * 3600
    tests = {"SEQ1M_Q8T1_read": TestFigures(bs_bytes=1 << 20, read_mbps=read_mbps, ci95_pct=ci)}
    return EarlierRun(run_id, f"@{at:.0f}", at, tests)


def current(read_mbps: float, ci: float | None = 2.0, cache: bool = False) -> list[dict]:
    return [
        {"id": "SEQ1M_Q8T1_read", "bs_bytes": 1 << 20, "read_mbps": read_mbps, "ci95_pct": ci, "cache_affected": cache}
    ]


# --- the rule and its words ------------------------------------------------------------------------


def test_the_issues_example_in_its_words():
    past = [earlier(i, v) for i, v in zip(range(5, 0, -1), (2340, 2290, 2400, 2340, 2320), strict=True)]
    b = judge(current(1612), past, Choice("median", 5), DRIVE, current_started_s=NOW - 60, now_s=NOW)
    (j,) = b.figures
    assert j.verdict == "slower"
    assert describe(j, b.choice) == (
        "SEQ1M Q8T1 read 1,612 MB/s ± 2% is 31% below its median of the last 5 runs (2,340 MB/s, spread ±3%)"
    )
    (f,) = findings(b, "sda")
    assert (f.code, f.severity) == (SLOWER, "warn")
    assert f.evidence["figures"][0]["runs"] == [5, 4, 3, 2, 1]


def test_faster_is_info_and_within_the_band_is_usual():
    past = [earlier(i, 500.0 + i) for i in range(1, 6)]
    fast = judge(current(700), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert [(f.code, f.severity) for f in findings(fast)] == [(FASTER, "info")]
    # 4% below: inside the 5% floor of the band, however tight the earlier runs were.
    usual = judge(current(483, ci=0.5), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert [j.verdict for j in usual.figures] == ["usual"] and findings(usual) == []


def test_a_wide_interval_of_the_run_itself_is_no_alarm():
    """12% below the median but measured to +-10%: the run's interval reaches into the band, so no verdict."""
    past = [earlier(i, 1000.0) for i in range(1, 6)]
    b = judge(current(880, ci=10.0), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert [j.verdict for j in b.figures] == ["usual"]
    narrow = judge(current(880, ci=1.0), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert [j.verdict for j in narrow.figures] == ["slower"]


def test_too_little_history_is_said_with_counts():
    past = [earlier(2, 1000.0), earlier(1, 1000.0)]
    b = judge(current(500), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert b.status == "too_little_history" and b.figures == () and findings(b) == []
    assert "2 earlier runs of the same drive (by its serial number) measured this way; a baseline needs 3" in b.reason
    none = judge(current(500), [], Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert none.status == "no_history" and none.reason.startswith("no earlier runs")
    # `last` needs one run only.
    last = judge(current(500), past, Choice("last"), DRIVE, current_started_s=NOW, now_s=NOW)
    assert [j.verdict for j in last.figures] == ["slower"] and last.figures[0].run_ids == (2,)


def test_runs_dated_in_the_future_are_left_out_and_said():
    """A clock that ran a year ahead once: those runs (slow ones here) never make the baseline, and the
    baseline says they were left out and why; what is left is too little, so there is no verdict at all."""
    future = [earlier(10 + i, 300.0, hours=100 + 24 * 365) for i in range(5)]
    past = [earlier(2, 1000.0), earlier(1, 1000.0)]
    b = judge(current(1000), future + past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert b.status == "too_little_history" and findings(b) == []
    assert any("5 earlier run(s) dated in the future" in n and "clock" in n for n in b.notes), b.notes


def test_a_figure_without_an_interval_is_not_judged_and_says_why():
    """A 1 s test has no interval: on an unchanged throttled loop such reads came out 15-39% below their median
    (5 false alarms in 20 runs before this rule)."""
    past = [earlier(i, 52.0) for i in range(1, 6)]
    b = judge(current(32.0, ci=None), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert b.figures == () and findings(b) == []
    assert any("no 95% interval" in n for n in b.notes)


def test_cache_affected_figures_are_not_compared():
    past = [earlier(i, 1000.0) for i in range(1, 6)]
    b = judge(current(100, cache=True), past, Choice("median", 5), DRIVE, current_started_s=NOW, now_s=NOW)
    assert b.figures == () and findings(b) == []
    assert any("through a cache" in n for n in b.notes)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (None, Choice("median", 5)),
        ("last", Choice("last", 1)),
        ("median:3", Choice("median", 3)),
        ("12", Choice("run", 1, 12)),
        ("#12", Choice("run", 1, 12)),
    ],
)
def test_baseline_choices(text, want):
    assert parse_choice(text) == want


@pytest.mark.parametrize("text", ["median:0", "median:x", "median:51", "previous", "-3", ""])
def test_bad_baseline_choices_are_one_usage_line(text):
    with pytest.raises(UsageError, match="--baseline"):
        parse_choice(text)


# --- through a real store ------------------------------------------------------------------------------


def _doc(read_mbps: float, started_at: str, serial: str | None = "SERIAL-A", name: str = "vda") -> dict:
    with open(SAMPLE_RUN) as fh:
        doc = json.load(fh)
    doc = copy.deepcopy(doc)
    doc["run"]["started_at"] = started_at
    doc["run"]["uuid"] = str(uuid.uuid4())
    doc["device"]["serial"] = serial
    doc["device"]["name"] = name
    for t in doc["tests"]:
        scale = read_mbps / 1549.07
        for k in ("read_mbps", "read_iops", "write_mbps", "write_iops"):
            if t.get(k) is not None:
                t[k] = t[k] * scale
        t["ci95_pct"] = 1.5
    doc["findings"] = []
    return doc


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/results.sqlite"


def _save(db: str, *docs: dict) -> list[int]:
    with Store(db) as store:
        return [store.save(d) for d in docs]


def test_show_compares_a_stored_run_with_the_runs_before_it(cli, db):
    ids = _save(
        db,
        *(_doc(1550 + i, f"2026-11-0{i + 1}T10:00:00+0000") for i in range(5)),
        _doc(1000, "2026-11-07T10:00:00+0000"),
    )
    res = cli("show", str(ids[-1]), "--json", "--db", db)
    assert res.code == 0, res.err
    b = res.json()["baseline"]
    assert (b["status"], b["verdict"], b["by_serial"], b["earlier_runs"]) == ("compared", "slower", True, 5)
    seq = next(f for f in b["figures"] if f["test_id"] == "SEQ1M_Q8T1_read")
    assert seq["runs"] == ids[4::-1] and seq["verdict"] == "slower" and round(seq["ratio"], 2) == 0.64
    # The first run has no earlier runs: said, not judged.
    first = cli("show", str(ids[0]), "--json", "--db", db).json()["baseline"]
    assert first["status"] == "no_history" and first["figures"] == []
    text = cli("show", str(ids[-1]), "--db", db).out
    assert "Baseline: slower than usual against the median of 5 earlier runs" in text
    # --baseline last and RUN choose another baseline.
    last = cli("show", str(ids[-1]), "--json", "--baseline", "last", "--db", db).json()["baseline"]
    assert {tuple(f["runs"]) for f in last["figures"]} == {(ids[4],)}
    chosen = cli("show", str(ids[-1]), "--json", "--baseline", str(ids[1]), "--db", db).json()["baseline"]
    assert {tuple(f["runs"]) for f in chosen["figures"]} == {(ids[1],)}


def test_a_deleted_baseline_run_is_one_usage_line_and_the_median_uses_what_is_left(cli, db):
    ids = _save(
        db, *(_doc(1550, f"2026-11-0{i + 1}T10:00:00+0000") for i in range(5)), _doc(1550, "2026-11-08T10:00:00+0000")
    )
    assert cli("runs", "delete", str(ids[1]), str(ids[2]), "--db", db).code == 0
    res = cli("show", str(ids[-1]), "--baseline", str(ids[1]), "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1 and f"--baseline {ids[1]}" in res.err, res.err
    b = cli("show", str(ids[-1]), "--json", "--db", db).json()["baseline"]
    assert b["verdict"] == "usual" and b["earlier_runs"] == 3
    assert {tuple(f["runs"]) for f in b["figures"]} == {(ids[4], ids[3], ids[0])}


def test_a_drive_whose_serial_changed_is_not_compared_with_the_old_serial_and_says_so(cli, db):
    """A new USB bridge reports another serial: the old runs (much faster) are not this drive's history, so
    there is no slower_than_usual, and the baseline says why there is none."""
    ids = _save(
        db,
        *(_doc(1550, f"2026-11-0{i + 1}T10:00:00+0000", serial="OLD-BRIDGE") for i in range(5)),
        _doc(800, "2026-11-08T10:00:00+0000", serial="NEW-BRIDGE"),
    )
    b = cli("show", str(ids[-1]), "--json", "--db", db).json()["baseline"]
    assert b["status"] == "no_history" and b["verdict"] is None
    assert any(
        "5 earlier run(s) of vda on this host were of a drive with another serial number" in n for n in b["notes"]
    )


def test_a_drive_keeps_its_history_when_its_device_name_changes(cli, db):
    """sdb yesterday, sdc today (a reboot reordered them): the serial id is the drive."""
    ids = _save(
        db,
        *(_doc(1550, f"2026-11-0{i + 1}T10:00:00+0000", name="sdb") for i in range(3)),
        _doc(900, "2026-11-08T10:00:00+0000", name="sdc"),
    )
    b = cli("show", str(ids[-1]), "--json", "--db", db).json()["baseline"]
    assert b["verdict"] == "slower" and b["earlier_runs"] == 3


def test_a_run_stored_with_a_future_date_never_raises_an_alarm(cli, db):
    """Five fast runs dated 2099 (a clock gone wrong), then two honest ones: the next run is compared with
    too little honest history, no alarm, and the future runs are named as left out."""
    ids = _save(
        db,
        *(_doc(3000, f"2099-01-0{i + 1}T10:00:00+0000") for i in range(5)),
        _doc(1550, "2026-11-01T10:00:00+0000"),
        _doc(1550, "2026-11-02T10:00:00+0000"),
        _doc(1550, "2026-11-03T10:00:00+0000"),
    )
    b = cli("show", str(ids[-1]), "--json", "--db", db).json()["baseline"]
    assert b["status"] == "too_little_history" and b["verdict"] is None
    assert any("dated in the future" in n for n in b["notes"]), b["notes"]


def test_runs_lists_which_runs_were_slower_than_usual(cli, db):
    slow = _doc(1000, "2026-11-07T10:00:00+0000")
    slow["findings"] = [{"code": SLOWER, "severity": "warn", "message": "m", "evidence": {}, "hint": "h"}]
    ids = _save(db, _doc(1550, "2026-11-06T10:00:00+0000"), slow)
    rows = {r["id"]: r["baseline"] for r in cli("runs", "--json", "--db", db).json()["runs"]}
    assert rows == {ids[0]: None, ids[1]: "slower"}
    assert "vs usual" in cli("runs", "--db", db).out


def test_a_missing_store_gives_a_reason_not_an_error(db):
    from disksleuth.run.baseline import baseline_for

    b = baseline_for(db, _doc(1000, "2026-11-07T10:00:00+0000"))
    assert b.status == "no_history" and "no results store" in (b.reason or "")
    assert MIN_RUNS == 3


# --- real devices ----------------------------------------------------------------------------------------

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _bench(dev: str, db: str, procs: str) -> dict:
    # libaio: io_uring swings under cgroup v1 blk-throttle on this kernel (docs/PERFORMANCE.md). Two read tests
    # on a raw device, each stopping when its 95% interval is within 3%: about 8 s a run. Not --time 1: a test
    # that short has no interval, and its figure is not judged (1 s reads moved 15-39% between unchanged runs).
    argv = in_cgroup(procs, [*DISKSLEUTH, "bench", dev, "--engine", "libaio", "--size", "64MiB",
                             "--db", db, "--json"])  # fmt: skip
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert res.returncode == findings_exit(res.stdout), res.stderr
    return json.loads(res.stdout)


def _set_read_limit(procs: str, dev: str, bps: int) -> None:
    st = os.stat(dev)
    with open(os.path.join(os.path.dirname(procs), "blkio.throttle.read_bps_device"), "w") as fh:
        fh.write(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {bps}")


def _codes(doc: dict) -> list[str]:
    return [f["code"] for f in doc["findings"]]


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.long  # five benches one after another (each judged against the ones before): 42-52 s loaded
@needs_fio
@needs_loop
def test_an_unchanged_throttled_loop_is_usual_and_one_whose_limit_is_lowered_is_slower(tmp_path):
    """Three runs of history, a fourth of the unchanged device (judged on both tests, no alarm), then the
    limit lowered from 50 to 30 MB/s: slower than usual. The 20-run count of false alarms on the unchanged
    device (none) comes from benchmarks/baseline_false_alarms.py (docs/RELIABILITY.md)."""
    reason = have_blkio()
    if reason:
        pytest.skip(reason)
    db = f"sqlite:///{tmp_path}/results.sqlite"
    with loop_device(128) as dev, blkio_throttle(dev, read_bps=50_000_000) as procs:
        first = [_bench(dev, db, procs) for _ in range(3)]
        unchanged = _bench(dev, db, procs)
        _set_read_limit(procs, dev, 30_000_000)
        slowed = _bench(dev, db, procs)
    assert all(SLOWER not in _codes(d) for d in first), [d["baseline"] for d in first]
    assert first[-1]["baseline"]["status"] == "too_little_history"
    b = unchanged["baseline"]
    assert b["status"] == "compared" and not {SLOWER, FASTER} & set(_codes(unchanged)), b
    assert len(b["figures"]) == 2 and all(j["verdict"] == "usual" for j in b["figures"]), b
    assert SLOWER in _codes(slowed), slowed["baseline"]
    f = next(f for f in slowed["findings"] if f["code"] == SLOWER)
    assert "below its median of the last 4 runs" in f["message"], f["message"]
    # Each test judged on its own: one right after the limit changed may have an interval too wide to judge.
    slower = [j for j in slowed["baseline"]["figures"] if j["verdict"] == "slower"]
    assert slower and all(j["ratio"] < 0.8 for j in slower), slowed["baseline"]
    print(f["message"], slowed["baseline"]["summary"], slowed["baseline"]["notes"])


def test_the_exporter_publishes_each_figures_ratio_to_its_baseline(cli, db, tmp_path):
    import socket

    from conftest import SYSFS, metric_value

    docs = [_doc(1550, f"2026-11-0{i + 1}T10:00:00+0000", name="nvme0n1") for i in range(3)]
    docs.append(_doc(1000, "2026-11-08T10:00:00+0000", name="nvme0n1"))
    for d in docs:
        d["run"]["host"]["hostname"] = socket.gethostname()
    _save(db, *docs)
    tree = os.path.join(SYSFS, "scenario_badly_seated")
    res = cli("exporter", "--textfile", str(tmp_path), "--db", db, "--sysfs-root", tree)
    assert res.code == 0, res.err
    text = (tmp_path / "disksleuth.prom").read_text()
    ratio = metric_value(
        text, "disksleuth_bench_baseline_ratio", device="nvme0n1", test="SEQ1M_Q8T1_read", direction="read"
    )
    assert ratio == pytest.approx(1000 / 1550, rel=1e-3)
    iops = metric_value(
        text, "disksleuth_bench_baseline_ratio", device="nvme0n1", test="RND4K_Q32T1_write", direction="write"
    )
    assert iops == pytest.approx(1000 / 1550, rel=1e-3)
