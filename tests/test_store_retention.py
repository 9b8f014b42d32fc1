"""`runs prune --keep N` (issue 27): a store that takes a run per drive per day stays bounded. The newest N runs
of each drive (its keyed serial id) and profile stay; with --older-than too, a run goes only when it is both
beyond the newest N and older. On real SQLite and a real PostgreSQL server."""

from __future__ import annotations

import time

import pytest
from test_store import _doc

from disksleuth.store.db import Store

DAY_S = 86400


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/r.sqlite"
    return request.getfixturevalue("fresh_postgres_url")


def _fill(db: str) -> dict[tuple[str, str], list[int]]:
    """Two drives (serials), two profiles, five runs each a day apart, saved oldest last: ids do not follow
    time, so "newest" must be read from the start times. Returns the ids per (serial, profile), newest first."""
    now = time.time()
    groups: dict[tuple[str, str], list[tuple[float, int]]] = {}
    with Store(db) as store:
        for days_ago in range(5):
            for serial in ("S1", "S2"):
                for profile in ("quick", "standard"):
                    started = now - days_ago * DAY_S - 3600
                    doc = _doc(1.0, 1.0, "m", started=time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(started)))
                    doc["device"]["serial"] = serial
                    doc["run"]["profile"] = profile
                    groups.setdefault((serial, profile), []).append((started, store.save(doc)))
    return {key: [i for _t, i in sorted(runs, reverse=True)] for key, runs in groups.items()}


def _ids(cli, db: str) -> set[int]:
    return {r["id"] for r in cli("runs", "--limit", "0", "--db", db, "--json").json()["runs"]}


def test_keep_the_newest_n_per_drive_and_profile(cli, db):
    groups = _fill(db)
    beyond = sorted(i for ids in groups.values() for i in ids[2:])
    dry = cli("runs", "prune", "--keep", "2", "--dry-run", "--db", db, "--json").json()
    assert dry == {"schema": "disksleuth/1", "deleted": [], "would_delete": beyond}
    assert len(_ids(cli, db)) == 20
    said = cli("runs", "prune", "--keep", "2", "--dry-run", "--db", db)
    assert said.code == 0 and said.out.startswith("would delete 12 runs, #") and said.out.count("\n") == 1
    # More than a few runs: not without --yes off a terminal.
    refused = cli("runs", "prune", "--keep", "2", "--db", db)
    assert refused.code == 2 and "add --yes" in refused.err and len(_ids(cli, db)) == 20
    done = cli("runs", "prune", "--keep", "2", "--yes", "--db", db)
    assert done.code == 0 and done.out.startswith("deleted 12 runs, #"), done.out
    assert _ids(cli, db) == {i for ids in groups.values() for i in ids[:2]}
    again = cli("runs", "prune", "--keep", "2", "--db", db)
    assert again.code == 0 and "nothing deleted" in again.out


def test_keep_and_older_than_both_hold(cli, db):
    """--keep 1 --older-than 3d: beyond the newest one AND started over 3 days ago (the 4th and 5th days)."""
    groups = _fill(db)
    res = cli("runs", "prune", "--keep", "1", "--older-than", "3d", "--yes", "--db", db, "--json").json()
    assert res["deleted"] == sorted(i for ids in groups.values() for i in ids[3:])


def test_prune_refuses_without_a_criterion_and_a_keep_below_one(cli, db):
    _fill(db)
    for argv, words in (
        ((), "never deletes everything"),
        (("--keep", "0"), "keep at least 1 run"),
        (("--keep", "-3"), "keep at least 1 run"),
    ):
        res = cli("runs", "prune", *argv, "--db", db)
        assert res.code == 2 and res.err.count("\n") == 1 and words in res.err, res.err
    assert cli("runs", "--keep", "2", "--db", db).code == 2  # prune's option, not list's
    assert len(_ids(cli, db)) == 20
