"""Schema 6 (issue 27): each run's link ceiling and best sequential figures as columns, filled on save and by the
migration from what a stored run holds; the index that answers each device's newest run by itself, and the index
on the serial id. The migration runs on a real schema-5 store file (tests/data/store/schema5-fleet.sqlite, made by
disksleuth at schema 5 from benchmarks/fleet_store.py's runs, the newest of one drive a write-only run) and on a
real PostgreSQL server holding the same rows at schema 5."""

from __future__ import annotations

import os
import shutil
import sqlite3

import sqlalchemy as sa
from conftest import DATA
from test_fleet_summary import _doc

from disksleuth.store.db import Store
from disksleuth.store.latest import latest_runs_per_host_device
from disksleuth.store.schema import FLEET_COLUMNS, SCHEMA_VERSION, fleet_figures

SCHEMA5_STORE = os.path.join(DATA, "store", "schema5-fleet.sqlite")
WRITE_ONLY = ("host-0002", "nvme3n1")  # its newest run (#25) has only a sequential write


def _expected(store: Store) -> dict[int, dict[str, float | None]]:
    """Each stored run's fleet columns as computed from its whole document (Store.load)."""
    with store.engine.connect() as conn:
        ids = conn.execute(sa.text("SELECT id FROM runs ORDER BY id")).scalars().all()
    return {i: fleet_figures(store.load(i)) for i in ids}


def _columns(store: Store) -> dict[int, dict[str, float | None]]:
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT id, {', '.join(FLEET_COLUMNS)} FROM runs ORDER BY id")).all()
    return {row[0]: dict(zip(FLEET_COLUMNS, row[1:], strict=True)) for row in rows}


def _check_fleet_rows(url: str) -> None:
    runs = {(r["hostname"], r["device_name"]): r for r in latest_runs_per_host_device(url)}
    assert len(runs) == 12  # 3 hosts x 4 drives, 2 runs each, plus the write-only run
    assert all(r["id"] > 12 for r in runs.values())  # the second round of runs: the newest
    odd = runs[WRITE_ONLY]
    assert odd["id"] == 25 and odd["seq_write_run_id"] == 25 and odd["seq_read_run_id"] == 24
    assert odd["seq_read_mbps"] and odd["seq_read_started_at"] != odd["started_at"]
    assert all(r["ceiling_mbps"] in (570.0, 7090.0, 3545.0) for r in runs.values())
    # Each run's findings above ok (an "ok" finding is the absence of one, and is not read)
    with Store(url) as store, store.engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT run_id, code, severity FROM findings WHERE severity != 'ok'")).all()
    for r in runs.values():
        assert r["findings"] == [{"code": c, "severity": s} for i, c, s in stored if i == r["id"]]


def test_migration_of_a_real_schema5_sqlite_store(tmp_path):
    path = tmp_path / "v5.sqlite"
    shutil.copyfile(SCHEMA5_STORE, path)
    os.chmod(path, 0o600)  # a store is written only when private (copyfile gives 0644)
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT MAX(version) FROM schema_migrations").fetchone() == (5,)
        assert "ceiling_mbps" not in {row[1] for row in con.execute("PRAGMA table_info(runs)")}
    url = f"sqlite:///{path}"
    with Store(url) as store:  # opening migrates
        assert store.version() == SCHEMA_VERSION  # migrated through every later schema
        assert _columns(store) == _expected(store)
        assert _columns(store)[25]["seq_read_mbps"] is None and _columns(store)[25]["seq_write_mbps"]
    _check_fleet_rows(url)
    with sqlite3.connect(path) as con:
        indexes = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"ix_runs_fleet", "ix_runs_serial_id"} <= indexes
        plan = " ".join(
            row[3] for row in con.execute("EXPLAIN QUERY PLAN SELECT MAX(id) FROM runs GROUP BY hostname, device_name")
        )
        assert "COVERING INDEX ix_runs_fleet" in plan, plan
        plan = " ".join(
            row[3]
            for row in con.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE device_serial_sha256 = 'x' ORDER BY id DESC"
            )
        )
        assert "ix_runs_serial_id" in plan, plan


def test_migration_on_postgresql(fresh_postgres_url):
    """The same schema-5 rows in a PostgreSQL store at schema 5, then opened by this disksleuth."""
    Store(fresh_postgres_url, migrate_to=5).close()
    source = sa.create_engine(f"sqlite:///{SCHEMA5_STORE}")
    target = sa.create_engine(fresh_postgres_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with source.connect() as src, target.begin() as dst:
            for table in ("runs", "tests", "series", "findings", "tags", "meta"):
                rows = [dict(r) for r in src.execute(sa.text(f"SELECT * FROM {table}")).mappings()]
                if table == "meta":
                    dst.execute(sa.text("DELETE FROM meta"))
                if table == "tests":
                    for r in rows:
                        r["is_reference"] = bool(r["is_reference"])
                        r["cache_affected"] = None if r["cache_affected"] is None else bool(r["cache_affected"])
                if rows:
                    names = list(rows[0])
                    dst.execute(
                        sa.text(
                            f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(':' + n for n in names)})"
                        ),
                        rows,
                    )
            for table in ("runs", "tests", "findings"):  # rows were copied with their ids: the sequences follow
                dst.execute(sa.text(f"SELECT setval('{table}_id_seq', (SELECT MAX(id) FROM {table}))"))
            assert dst.execute(sa.text("SELECT MAX(version) FROM schema_migrations")).scalar() == 5
    finally:
        source.dispose()
        target.dispose()
    with Store(fresh_postgres_url) as store:
        assert store.version() == SCHEMA_VERSION  # migrated through every later schema
        assert _columns(store) == _expected(store)
        with store.engine.connect() as conn:
            indexes = set(conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE tablename = 'runs'")).scalars())
        assert {"ix_runs_fleet", "ix_runs_serial_id"} <= indexes
        new = store.save(_doc("host-0002", "nvme3n1", "INTEL SSDPE2KX040T8", [], "2026-11-30T00:00:00+0000"))
    _check_fleet_rows_after_save(fresh_postgres_url, new)


def _check_fleet_rows_after_save(url: str, new: int) -> None:
    runs = {(r["hostname"], r["device_name"]): r for r in latest_runs_per_host_device(url)}
    fresh = runs[WRITE_ONLY]
    assert fresh["id"] == new and fresh["seq_read_run_id"] == new and fresh["ceiling_mbps"] == 570.0


def test_save_fills_the_columns_and_the_newest_run_wins(tmp_path):
    url = f"sqlite:///{tmp_path}/new.sqlite"
    with Store(url) as store:
        old = store.save(_doc("nas", "sda", "WDC", [("health_critical", "critical")], "2026-11-20T10:00:00+0000"))
        doc = _doc("nas", "sda", "WDC", [], "2026-11-19T10:00:00+0000")  # an earlier start, saved later
        doc["device"]["link"]["current_ceiling_mbps"] = 285.0
        doc["reference"] = [dict(doc["tests"][0], read_mbps=99999.0)]  # a reference run is not the drive's figure
        newer = store.save(doc)
        columns = _columns(store)
    best_read = max(t["read_mbps"] for t in doc["tests"] if t["id"].startswith("SEQ") and t["read_mbps"])
    assert columns[newer] == {
        "ceiling_mbps": 285.0,
        "seq_read_mbps": best_read,
        "seq_write_mbps": columns[old]["seq_write_mbps"],
    }
    (row,) = latest_runs_per_host_device(url)
    # The newest stored run (the highest id), as `runs` lists them, whatever its clock said.
    assert row["id"] == newer and row["findings"] == []  # its one finding is "ok": nothing to show
    assert row["ceiling_mbps"] == 285.0 and row["seq_read_run_id"] == newer
