"""The newest stored figures per host, device and test: what the exporter and `fleet` show."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from disksleuth.store.db import Store
from disksleuth.store.documents import capped_latencies
from disksleuth.store.schema import (
    FINDINGS,
    FLEET_COLUMNS,
    FLEET_SCHEMA,
    RUNS,
    TEST_FIGURES,
    TESTS,
    from_json,
    link_ceiling_mbps,
)


def _existing_store(db_url: str | None, timeout_s: int | None = None) -> Store:
    """Readers never create a store (a missing one is StoreMissing, one line), nor write to one."""
    return Store(db_url, create=False, read_only=True, timeout_s=timeout_s)


def epoch_s(iso: str | None) -> float | None:
    """Seconds since the epoch of a stored `started_at` ("%Y-%m-%dT%H:%M:%S%z")."""
    if not iso:
        return None
    try:
        return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        try:
            return datetime.fromisoformat(iso).timestamp()
        except ValueError:
            return None


def latest_tests(db_url: str | None, hostname: str, timeout_s: int | None = None) -> list[dict[str, Any]]:
    """For each device and test id of `hostname`, the figures of its newest stored test (reference
    tests excluded). Each dict: device, test_id, run_id, started_at_s and the TEST_FIGURES. `timeout_s`
    bounds the connection and each statement (PostgreSQL)."""
    with _existing_store(db_url, timeout_s) as store:
        newest = (
            sa.select(sa.func.max(TESTS.c.id))
            .select_from(TESTS.join(RUNS, RUNS.c.id == TESTS.c.run_id))
            .where(RUNS.c.hostname == hostname, TESTS.c.is_reference == sa.false(), RUNS.c.device_name.is_not(None))
            .group_by(RUNS.c.device_name, TESTS.c.test_id)
        )
        query = (
            sa.select(
                RUNS.c.device_name,
                RUNS.c.started_at,
                TESTS.c.run_id,
                TESTS.c.test_id,
                *(TESTS.c[name] for name in TEST_FIGURES),
                TESTS.c.extra_json,
            )
            .select_from(TESTS.join(RUNS, RUNS.c.id == TESTS.c.run_id))
            .where(TESTS.c.id.in_(newest))
            .order_by(RUNS.c.device_name, TESTS.c.test_id)
        )
        with store._errors("read"), store.engine.connect() as conn:  # a failing query is one line, not SQL
            rows = conn.execute(query).mappings().all()
    out = []
    for row in rows:
        item = {"device": row["device_name"], "test_id": row["test_id"], "run_id": row["run_id"]}
        item["started_at_s"] = epoch_s(row["started_at"])
        item.update({name: row[name] for name in TEST_FIGURES})
        item.update(_direction_latency(row["extra_json"]))
        out.append(capped_latencies(item))
    return out


DIRECTION_LATENCY_FIGURES = tuple(
    f"{d}_lat_{stat}_us" for d in ("read", "write") for stat in ("mean", "p50", "p99", "p999", "max")
)


def _direction_latency(extra_json: str | None) -> dict[str, float]:
    """A mixed test's latency per direction (kept with the test's other fields in extra_json); {} otherwise,
    and for a stored value that is not a number."""
    import json

    try:
        extra = json.loads(extra_json or "{}")
    except ValueError:
        return {}
    if not isinstance(extra, dict):
        return {}
    return {
        k: float(v)
        for k in DIRECTION_LATENCY_FIGURES
        if isinstance(v := extra.get(k), (int, float)) and not isinstance(v, bool)
    }


def latest_runs_per_host_device(db_url: str | None, group: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """The newest run of every (host, device) pair, with its findings' codes and severities (those above ok) and
    its newest sequential figures: the rows of `fleet`; with `group` (model, firmware), only the devices whose
    newest run is of that drive. Only the columns the view shows are read, never a run's documents: one query picks
    the newest runs (GROUP BY on the index ix_runs_fleet alone: at 240,000 runs 0.11 s in SQLite, where
    ROW_NUMBER() OVER (PARTITION BY host, device ORDER BY id DESC) took 0.5-0.75 s, sorting each partition), one
    more reads their findings."""
    with _existing_store(db_url) as store, store._errors("read"), store.engine.connect() as conn:
        current = store.schema >= FLEET_SCHEMA
        postgresql = conn.dialect.name == "postgresql"
        if postgresql:
            # The newest-run query reads (host, device, id) of every run. PostgreSQL's default random_page_cost
            # (4, a spinning disk's) made it scan the whole table, 375 MB at 240,000 runs (their JSON columns),
            # instead of the 19 MB index ix_runs_fleet: 0.36 s against 0.14 s. SSD's usual 1.1, for this
            # read-only transaction only.
            conn.execute(sa.text("SET LOCAL random_page_cost = 1.1"))
        figures = (
            [RUNS.c[name] for name in FLEET_COLUMNS]
            if current
            else [RUNS.c.device_json, _best_seq("read_mbps"), _best_seq("write_mbps")]
        )
        newest = sa.select(sa.func.max(RUNS.c.id)).group_by(RUNS.c.hostname, RUNS.c.device_name)
        query = sa.select(
            RUNS.c.id,
            RUNS.c.hostname,
            RUNS.c.device_name,
            RUNS.c.device_model,
            RUNS.c.device_firmware,
            RUNS.c.device_serial_sha256,
            RUNS.c.device_transport,
            RUNS.c.started_at,
            RUNS.c.kind,
            RUNS.c.profile,
            RUNS.c.summary,
            *figures,
        ).where(RUNS.c.id.in_(newest))
        if group:
            query = query.where(RUNS.c.device_model == group[0], RUNS.c.device_firmware == group[1])
        result = conn.execute(query)
        names = list(result.keys())
        runs = [dict(zip(names, row, strict=True)) for row in result.all()]  # one fetchall, not a fetch per row
        findings: dict[int, list[dict[str, Any]]] = {r["id"]: [] for r in runs}
        if postgresql:
            # The ids just read, as one array: asking the newest runs again cost PostgreSQL a second pass over
            # the index (0.15 s of a 1.0 s `fleet` at 240,000 runs).
            from sqlalchemy.dialects.postgresql import ARRAY

            # as one array literal: psycopg's list dumper looked at each of 24,000 ids (25 ms)
            ids = sa.cast(sa.literal("{" + ",".join(map(str, findings)) + "}", sa.Text), ARRAY(sa.Integer))
            chosen = FINDINGS.c.run_id == sa.any_(ids)
        else:  # SQLite answers the subquery from the covering index faster than it binds 24,000 values
            chosen = FINDINGS.c.run_id.in_(sa.select(query.subquery().c.id) if group else newest)
        # An "ok" finding says only that there is nothing to say: most runs have one, and leaving them out
        # leaves the view the same (no findings is ok) with a fifteenth of the rows at fleet scale.
        for run_id, code, severity in conn.execute(
            sa.select(FINDINGS.c.run_id, FINDINGS.c.code, FINDINGS.c.severity).where(
                chosen, FINDINGS.c.severity != "ok"
            )
        ).all():
            findings[run_id].append({"code": code, "severity": severity})
        older = _older_seq_figures(conn, runs) if current else {}
    keys = [(f"seq_{d}_mbps", f"seq_{d}_run_id", f"seq_{d}_started_at", d) for d in ("read", "write")]
    for r in runs:  # 24,000 devices at fleet scale: the key names are made once, not per device
        if not current:  # a store that could not be upgraded (read-only): the ceiling from the device document
            r["ceiling_mbps"] = link_ceiling_mbps(from_json(r.pop("device_json")))
        r["findings"] = findings[r["id"]]
        for figure, run_id, started_at, direction in keys:
            if r[figure] is not None:
                r[run_id], r[started_at] = r["id"], r["started_at"]
            else:
                held = older.get((r["hostname"], r["device_name"], direction))
                r[figure], r[run_id], r[started_at] = held or (None, None, None)
    return runs


def _best_seq(figure: str) -> sa.Label[Any]:
    """A run's best sequential figure from its tests, as the v6 migration stores it (FLEET_COLUMNS)."""
    best = sa.select(sa.func.max(TESTS.c[figure])).where(
        TESTS.c.run_id == RUNS.c.id, TESTS.c.is_reference == sa.false(), TESTS.c.test_id.like("SEQ%")
    )
    return best.scalar_subquery().label(f"seq_{figure}")


def _older_seq_figures(
    conn: sa.Connection, runs: list[dict[str, Any]]
) -> dict[tuple[str | None, str | None, str], tuple[float, int, str | None]]:
    """(host, device, direction) -> (MB/s, run id, start) of the newest run that has the figure, for the devices
    whose newest run has none (a write-only sustained run has no read figure, and the fleet showed "—" for a
    device whose read speed an earlier run had measured). Only asked when such a device exists."""
    out: dict[tuple[str | None, str | None, str], tuple[float, int, str | None]] = {}
    for direction in ("read", "write"):
        column = RUNS.c[f"seq_{direction}_mbps"]
        wanted = {(r["hostname"], r["device_name"]) for r in runs if r[f"seq_{direction}_mbps"] is None}
        if not wanted:
            continue
        newest = (
            sa.select(sa.func.max(RUNS.c.id)).where(column.is_not(None)).group_by(RUNS.c.hostname, RUNS.c.device_name)
        )
        for host, device, run_id, value, started_at in conn.execute(
            sa.select(RUNS.c.hostname, RUNS.c.device_name, RUNS.c.id, column, RUNS.c.started_at).where(
                RUNS.c.id.in_(newest)
            )
        ):
            if (host, device) in wanted:
                out[(host, device, direction)] = (value, run_id, started_at)
    return out


def known_hosts(db_url: str | None) -> list[str]:
    """Every host name the store has a run of, sorted."""
    with _existing_store(db_url) as store, store._errors("read"), store.engine.connect() as conn:
        names = conn.execute(sa.select(RUNS.c.hostname).distinct().where(RUNS.c.hostname.is_not(None))).scalars()
        return sorted(str(n) for n in names)


def store_serial_key(db_url: str | None, timeout_s: int | None = None) -> bytes | None:
    """The key the store's serial ids are made with, so the exporter's ids agree with the store's. Never
    creates a store; `timeout_s` bounds a PostgreSQL server that does not answer."""
    with _existing_store(db_url, timeout_s) as store:
        return store.serial_key
