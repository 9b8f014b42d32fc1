"""`runs` fits the terminal: one line per run at 80 columns, the target cut in the middle at directory
boundaries, the summary cut at a word with an ellipsis; a wider terminal shows more of both."""

from __future__ import annotations

import re

import pytest
from test_store import _doc

from disksleuth.store.db import Store

# Summaries and targets as `check` and `bench` record them.
RUNS = [
    (
        "/srv/media/library/disksleuth-scratch-area",
        "Samsung SSD 970 EVO Plus 1TB",
        ["nightly", "after-bios"],
        "reads 1,243.5 MB/s, 69% of its PCIe 2.0 x4 link (1,800 MB/s); 4K random 44,086 read IOPS; "
        "writes 830.2 MB/s, 4K random 31,337 write IOPS",
    ),
    (
        "/home/someone/projects/benchmarks/usb-stick",
        "SanDisk Ultra Fit",
        [],
        "reads 36.1 MB/s, 90% of its USB 2.0 link (40 MB/s); 4K random writes 26 IOPS: unfit for an OS",
    ),
    ("/dev/nvme0n1", "WDC WDS500G2B0C-00PXH0", ["sata"], "reads 3,041.0 MB/s, 86% of its PCIe 3.0 x4 link"),
]


@pytest.fixture
def store_with_runs(tmp_path) -> tuple[str, dict[int, tuple[str, str, list[str], str]]]:
    db = f"sqlite:///{tmp_path}/r.sqlite"
    saved = {}
    with Store(db) as store:
        for n, (target, model, tags, summary) in enumerate(RUNS):
            doc = _doc(1243.5, 44086.0, model, started=f"2026-11-2{n}T10:00:00+0000")
            doc["run"]["target"] = target
            doc["run"]["host"]["hostname"] = "media-server"
            doc["summary"] = summary
            saved[store.save(doc, tags=tags)] = (target, model, tags, summary)
    return db, saved


def _table(out: str) -> tuple[list[str], dict[int, dict[str, str]]]:
    """The header line's column names and each run's cells, read at the columns the header sets."""
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("id "))
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    starts[0] = 0  # the id is right-aligned under its header
    rows = {}
    for line in lines[lines.index(header) + 1 :]:
        m = re.match(r"\s*(\d+)\s", line)
        if not m:
            continue
        ends = [*starts[1:], len(line)]
        rows[int(m.group(1))] = {n: line[s:e].strip() for n, s, e in zip(names, starts, ends, strict=True)}
    return names, rows


def _assert_target_cut_at_directories(shown: str, target: str) -> None:
    if shown == target:
        return
    assert "…" in shown, shown
    head, _, tail = shown.partition("…")
    assert target.startswith(head) and (head == "" or head.endswith("/")), (shown, target)
    # What follows the ellipsis is the end of the path from a directory boundary on ("/disksleuth-scratch-area")
    # or the start of its last component cut after a dash ("/disksleuth-…").
    if tail.endswith("…"):
        assert target.rsplit("/", 1)[-1].startswith(tail.strip("/…")), (shown, target)
    else:
        assert target.endswith(tail) and tail.startswith("/"), (shown, target)


def _assert_summary_cut_at_a_word(shown: str, summary: str) -> None:
    if shown == summary:
        return
    assert shown.endswith("…"), shown
    kept = shown[:-1].split()
    full = summary.split()
    assert kept[:-1] == full[: len(kept) - 1] and full[len(kept) - 1].startswith(kept[-1]), (shown, "cut in a word")


def test_runs_at_80_columns_is_one_line_per_run(cli, store_with_runs, monkeypatch):
    db, saved = store_with_runs
    monkeypatch.setenv("COLUMNS", "80")
    out = cli("runs", "--db", db).out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), out
    names, rows = _table(out)
    assert set(rows) == set(saved), out
    # Nothing but the header, a line per run and the notes: no cell wrapped onto a second line.
    notes = [line for line in lines if line.startswith(("hidden at", "… summary cut"))]
    assert len(lines) == 1 + len(saved) + len(notes), out
    assert {"id", "started", "device", "target", "summary"} <= set(names)
    for run_id, (target, _model, _tags, summary) in saved.items():
        _assert_target_cut_at_directories(rows[run_id]["target"], target)
        _assert_summary_cut_at_a_word(rows[run_id]["summary"], summary)
        assert len(rows[run_id]["summary"]) >= 25, out  # a summary that still says something
    assert rows[1]["summary"] != RUNS[0][3] and "summary cut" in out
    assert "/srv/media/library/disksleuth-scratch-area" not in out  # cut: the column is narrower
    assert "hidden at 80 columns:" in out  # what was left out is named


def test_runs_at_200_columns_shows_more(cli, store_with_runs, monkeypatch):
    db, saved = store_with_runs
    monkeypatch.setenv("COLUMNS", "80")
    narrow = _table(cli("runs", "--db", db).out)[1]
    monkeypatch.setenv("COLUMNS", "200")
    out = cli("runs", "--db", db).out
    assert all(len(line) <= 200 for line in out.splitlines()), out
    names, rows = _table(out)
    assert names == ["id", "started", "host", "kind", "profile", "device", "target", "tags", "summary"], out
    assert "hidden at" not in out
    for run_id, (target, model, tags, summary) in saved.items():
        assert rows[run_id]["target"] == target, out  # every target whole at 200 columns
        assert rows[run_id]["device"] == model
        assert rows[run_id]["tags"] == ", ".join(sorted(tags))
        _assert_summary_cut_at_a_word(rows[run_id]["summary"], summary)
        assert len(rows[run_id]["summary"]) > len(narrow[run_id]["summary"]) or rows[run_id]["summary"] == summary
    assert len(out.splitlines()) == 2 + len(saved), out  # the header, a line per run, the "summary cut" note


@pytest.mark.parametrize(
    ("path", "width", "expected"),
    [
        ("/srv/media/library/disksleuth-scratch-area", 40, "/srv/…/library/disksleuth-scratch-area"),
        ("/srv/media/library/disksleuth-scratch-area", 30, "/srv/…/disksleuth-scratch-area"),
        ("/srv/media/library/disksleuth-scratch-area", 16, "…/disksleuth-…"),
        ("/home/someone/projects/bench/a", 16, "/home/…/bench/a"),
        ("/dev/nvme0n1", 16, "/dev/nvme0n1"),
    ],
)
def test_clip_path_cuts_in_the_middle_at_directories(path, width, expected):
    from disksleuth.present.text import clip_path

    assert clip_path(path, width) == expected
    assert len(expected) <= width
