"""Run ids are never reused (issue 40, defect 1): after `runs delete` or `prune`, a new run gets an id no run ever
had, so a report that cites #3 keeps meaning that run. SQLite AUTOINCREMENT, PostgreSQL identity, and the schema-7
migration that gives an existing store either without losing a test, finding or tag."""

from __future__ import annotations

import shutil

import pytest
import sqlalchemy as sa
from test_store import _doc

from disksleuth.store.db import Store

DATA_STORE = "tests/data/store/schema5-fleet.sqlite"


def _counts(store: Store) -> tuple[int, ...]:
    with store.engine.connect() as conn:
        return tuple(
            int(conn.exec_driver_sql(f"SELECT COUNT(*) FROM {t}").scalar_one())
            for t in ("runs", "tests", "findings", "tags", "series")
        )


def _save(store: Store, n: int) -> list[int]:
    return [
        store.save(_doc(100.0 + i, 1000.0, "drive", started=f"2026-11-21T10:00:{i:02d}+0000"), tags=["t"])
        for i in range(n)
    ]


def test_sqlite_run_id_is_not_reused_after_delete(tmp_path):
    with Store(f"sqlite:///{tmp_path}/s.db") as store:
        ids = _save(store, 3)
        store.delete([ids[-1]])
        again = _save(store, 1)[0]
        assert again > ids[-1], f"run #{ids[-1]} was deleted, and its id went to a new run"


def test_migration_gives_an_old_sqlite_store_ids_that_never_return(tmp_path):
    """A store made before schema 7 (the checked-in schema-5 store): every row and index survives the rebuild,
    the runs' children still point at them, and from then on a deleted newest id is not handed out again."""
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA_STORE, path)
    path.chmod(0o600)
    with Store(f"sqlite:///{path}", migrate_to=5) as old:
        before = _counts(old)
        newest = max(r["id"] for r in old.list_runs(limit=None)[0])
        with old.engine.connect() as conn:
            indexes_before = set(
                conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE tbl_name='runs' AND type='index'").scalars()
            )
    with Store(f"sqlite:///{path}") as store:
        assert _counts(store) == before
        with store.engine.connect() as conn:
            table_sql = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name='runs'").scalar_one()
            assert "AUTOINCREMENT" in table_sql
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall() == []
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1  # back on for every later use
            indexes = set(
                conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE tbl_name='runs' AND type='index'").scalars()
            )
            assert indexes_before <= indexes
        assert store.load(newest)["tests"]
        store.delete([newest])
        assert _save(store, 1)[0] > newest


@pytest.mark.slow
def test_postgres_run_ids_never_return_and_old_stores_migrate(postgres_server):
    """A PostgreSQL store at schema 6 (serial ids) holding runs, some deleted: schema 7 makes the id an identity
    column that starts past every id the old sequence gave out, deleted ones included."""
    url = postgres_server.create_database()
    with Store(url, migrate_to=6) as old:
        ids = _save(old, 3)
        old.delete([ids[-1]])  # the sequence remembers #3; max(id) alone would hand it out again
        before = _counts(old)
    with Store(url) as store:
        assert _counts(store) == before
        with store.engine.connect() as conn:
            identity = conn.execute(
                sa.text(
                    "SELECT is_identity FROM information_schema.columns WHERE table_name='runs' AND column_name='id'"
                )
            ).scalar_one()
        assert identity == "YES"
        new = _save(store, 1)[0]
        assert new > ids[-1]
        store.delete([new])
        assert _save(store, 1)[0] > new
    fresh = postgres_server.create_database()
    with Store(fresh) as store:
        first = _save(store, 2)
        store.delete([first[-1]])
        assert _save(store, 1)[0] > first[-1]
