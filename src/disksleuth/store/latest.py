"""The newest stored figures per host, device and test: what the exporter and `fleet` show."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from disksleuth.store.db import Store
from disksleuth.store.documents import capped_latencies
from disksleuth.store.schema import FINDINGS, RUNS, TEST_FIGURES, TESTS


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


def latest_runs_per_host_device(db_url: str | None, host: str | None = None) -> list[dict[str, Any]]:
    """The newest run of every (host, device) pair, with its findings: the rows of `fleet`."""
    with _existing_store(db_url) as store:
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
            RUNS.c.device_json,
        ).where(RUNS.c.id.in_(newest))
        if host:
            query = query.where(RUNS.c.hostname == host)
        with store.engine.connect() as conn:
            runs = [dict(r) for r in conn.execute(query).mappings().all()]
            ids = [r["id"] for r in runs]
            findings: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
            if ids:
                for f in conn.execute(
                    sa.select(FINDINGS.c.run_id, FINDINGS.c.code, FINDINGS.c.severity, FINDINGS.c.message).where(
                        FINDINGS.c.run_id.in_(ids)
                    )
                ).mappings():
                    findings[f["run_id"]].append(
                        {"code": f["code"], "severity": f["severity"], "message": f["message"]}
                    )
            figures = _newest_seq_figures(conn, host) if ids else {}
    import json

    for r in runs:
        r["device"] = json.loads(r.pop("device_json") or "null") or {}
        r["findings"] = findings[r["id"]]
        mine = figures.get((r["hostname"], r["device_name"])) or {}
        for direction in ("read", "write"):
            value, run_id, started_at = mine.get(direction) or (None, None, None)
            r[f"seq_{direction}_mbps"] = value
            r[f"seq_{direction}_run_id"] = run_id
            r[f"seq_{direction}_started_at"] = started_at
    return runs


def _newest_seq_figures(
    conn: sa.Connection, host: str | None
) -> dict[tuple[str | None, str | None], dict[str, tuple[float, int, str | None]]]:
    """Per (host, device) and direction: the best sequential MB/s of the newest run that has one, with that
    run's id and start. Not simply the newest run's: a write-only sustained run has no read figure, and the
    fleet showed "—" for a device whose read speed an earlier run had measured."""
    query = (
        sa.select(
            RUNS.c.hostname,
            RUNS.c.device_name,
            RUNS.c.started_at,
            TESTS.c.run_id,
            TESTS.c.read_mbps,
            TESTS.c.write_mbps,
        )
        .select_from(TESTS.join(RUNS, RUNS.c.id == TESTS.c.run_id))
        .where(TESTS.c.is_reference == sa.false(), TESTS.c.test_id.like("SEQ%"))
    )
    if host:
        query = query.where(RUNS.c.hostname == host)
    out: dict[tuple[str | None, str | None], dict[str, tuple[float, int, str | None]]] = {}
    for t in conn.execute(query).mappings():
        mine = out.setdefault((t["hostname"], t["device_name"]), {})
        for direction in ("read", "write"):
            value = t[f"{direction}_mbps"]
            if value is None:
                continue
            held = mine.get(direction)
            # The newest run (highest id, as the fleet's newest run is chosen) wins; within it, the best test.
            if held is None or t["run_id"] > held[1] or (t["run_id"] == held[1] and value > held[0]):
                mine[direction] = (value, t["run_id"], t["started_at"])
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
