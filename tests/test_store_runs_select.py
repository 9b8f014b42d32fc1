"""Which runs `runs --device` and `runs prune` select: text matched as written (LIKE's % and _ are not
wildcards), ages only in units nobody misreads, and a prune of more than a few runs shown and agreed to
first. Through the CLI runner on real SQLite; the terminal case on a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest
from test_store import _doc

from disksleuth.store.db import Store

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _store_with(db: str, models: list[str], started: list[str] | None = None) -> None:
    with Store(db) as store:
        for i, model in enumerate(models):
            doc = _doc(1.0 + i, 1.0, model, started=(started or [])[i] if started else "2026-11-21T10:00:00+0000")
            doc["run"]["target"] = f"target{i}"
            store.save(doc)


@pytest.mark.parametrize(
    "given,expected",
    [
        ("%", ["50% full"]),
        ("_", ["under_score"]),
        ("/", ["slash/name"]),
        ("\\", ["back\\slash"]),
        ("50%", ["50% full"]),
        ("%full", []),
        ("under_", ["under_score"]),
        ("Samsung", ["Samsung 990"]),
    ],
)
def test_device_text_is_matched_as_written(cli, tmp_path, given, expected):
    """`runs --device %` listed every run: the text went into LIKE unescaped."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _store_with(db, ["Samsung 990", "50% full", "under_score", "slash/name", "back\\slash", "plain"])
    res = cli("runs", "--device", given, "--db", db, "--json", "--limit", "0")
    assert res.code == 0, res.err
    assert sorted(r["device_model"] for r in res.json()["runs"]) == sorted(expected)


def test_the_same_on_postgresql(cli, fresh_postgres_url):
    _store_with(fresh_postgres_url, ["Samsung 990", "50% full", "under_score"])
    for given, expected in (("%", ["50% full"]), ("_", ["under_score"]), ("9", ["Samsung 990"])):
        res = cli("runs", "--device", given, "--db", fresh_postgres_url, "--json")
        assert [r["device_model"] for r in res.json()["runs"]] == expected


def _aged(db: str, ages_days: list[float]) -> None:
    now = time.time()
    started = [time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(now - d * 86400)) for d in ages_days]
    _store_with(db, [f"run{i}" for i in range(len(ages_days))], started)


@pytest.mark.parametrize("age", ["6m", "6M", "1 m"])
def test_m_is_refused_as_minutes_or_months(cli, tmp_path, age):
    """`--older-than 6m` deleted every run older than six minutes from someone who meant six months."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _aged(db, [1, 40, 400])
    res = cli("runs", "prune", "--older-than", age, "--db", db, "--yes")
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    number = age.rstrip("mM ").strip()
    assert f"{number}min" in res.err and f"{number}mo" in res.err
    assert cli("runs", "--db", db, "--json").json()["total"] == 3


@pytest.mark.parametrize(
    "age,kept",
    [
        ("6mo", 2),
        ("6 months", 2),
        ("1y", 2),
        ("2years", 3),
        ("30d", 1),
        ("4w", 1),
        ("2h", 0),
        ("90min", 0),
        ("90 minutes", 0),
        ("30", 1),  # a bare number is days, as before
    ],
)
def test_unambiguous_units(cli, tmp_path, age, kept):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _aged(db, [0.5, 40, 400])  # 12 hours, 40 days, 400 days old
    res = cli("runs", "prune", "--older-than", age, "--db", db)
    assert res.code == 0, res.err
    assert cli("runs", "--db", db, "--json").json()["total"] == kept


def test_unknown_units_are_one_line(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _aged(db, [1])
    for age in ("6q", "six months", "-1d", "6 mo nths"):
        res = cli("runs", "prune", "--older-than", age, "--db", db)
        assert res.code == 2 and res.err.count("\n") == 1, (age, res.err)


def test_more_than_a_few_runs_need_yes_without_a_terminal(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _aged(db, [10, 20, 30, 40, 50, 60, 1])
    res = cli("runs", "prune", "--older-than", "5d", "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "would delete 6 runs" in res.err and "--yes" in res.err
    first, last = (time.strftime("%Y-%m-%d", time.gmtime(time.time() - d * 86400)) for d in (60, 10))
    assert f"started {first} to {last}" in res.err
    assert cli("runs", "--db", db, "--json").json()["total"] == 7  # nothing deleted
    assert cli("runs", "prune", "--older-than", "5d", "--db", db, "--json").code == 2  # --json cannot ask either
    dry = cli("runs", "prune", "--older-than", "5d", "--db", db, "--dry-run", "--json")
    assert dry.code == 0 and len(dry.json()["would_delete"]) == 6
    done = cli("runs", "prune", "--older-than", "5d", "--db", db, "--yes", "--json")
    assert done.code == 0 and len(done.json()["deleted"]) == 6
    assert cli("runs", "--db", db, "--json").json()["total"] == 1


def test_a_few_runs_go_without_asking(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _aged(db, [10, 20, 30, 40, 50, 1])
    res = cli("runs", "prune", "--older-than", "5d", "--db", db, "--json")
    assert res.code == 0 and len(res.json()["deleted"]) == 5, res.err


def _prune_on_a_terminal(db: str, answer: bytes) -> tuple[int, str]:
    """`runs prune` with stdin and stderr on a real pseudo-terminal; `answer` typed at the question."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*DISKSLEUTH, "runs", "prune", "--older-than", "5d", "--db", db],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"Type 'yes'" not in seen and time.monotonic() < deadline:
            if select.select([leader], [], [], 1)[0]:
                seen += os.read(leader, 4096)
        os.write(leader, answer)
        out, _ = proc.communicate(timeout=60)
        while select.select([leader], [], [], 0.2)[0]:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return proc.returncode, seen.decode(errors="replace") + out.decode()


def test_on_a_terminal_the_count_and_dates_are_shown_and_yes_is_asked(tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    _aged(db, [10, 20, 30, 40, 50, 60, 1])
    code, text = _prune_on_a_terminal(db, b"no\n")
    assert code == 2 and "would delete 6 runs" in text and "nothing was deleted" in text, text
    with Store(db) as store:
        assert store.count() == 7
    code, text = _prune_on_a_terminal(db, b"yes\n")
    assert code == 0 and "deleted 6 runs, #1-#6" in text, text
    with Store(db) as store:
        assert store.count() == 1
