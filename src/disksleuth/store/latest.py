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
        out.append(capped_latencies(item))
    return out


def latest_runs_per_host_device(db_url: str | None, host: str | None = None) -> list[dict[str, Any]]:
    """The newest run of every (host, device) pair, with its findings: the rows of `fleet`."""
    with _existing_store(db_url) as store:
        newest = sa.select(sa.func.max(RUNS.c.id)).group_by(RUNS.c.hostname, RUNS.c.device_name)
        query = sa.select(
            RUNS.c.id,
            RUNS.c.hostname,
            RUNS.c.device_name,
            RUNS.c.device_model,
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
            figures: dict[int, dict[str, float | None]] = {i: {} for i in ids}
            if ids:
                for t in conn.execute(
                    sa.select(TESTS.c.run_id, TESTS.c.test_id, TESTS.c.read_mbps, TESTS.c.write_mbps).where(
                        TESTS.c.run_id.in_(ids), TESTS.c.is_reference == sa.false()
                    )
                ).mappings():
                    best = figures[t["run_id"]]
                    if t["test_id"].startswith("SEQ"):
                        for key in ("read_mbps", "write_mbps"):
                            if t[key] is not None and (best.get(key) is None or t[key] > best[key]):
                                best[key] = t[key]
    import json

    for r in runs:
        r["device"] = json.loads(r.pop("device_json") or "null") or {}
        r["findings"] = findings[r["id"]]
        r["seq_read_mbps"] = figures[r["id"]].get("read_mbps")
        r["seq_write_mbps"] = figures[r["id"]].get("write_mbps")
    return runs


def store_serial_key(db_url: str | None, timeout_s: int | None = None) -> bytes | None:
    """The key the store's serial ids are made with, so the exporter's ids agree with the store's. Never
    creates a store; `timeout_s` bounds a PostgreSQL server that does not answer."""
    with _existing_store(db_url, timeout_s) as store:
        return store.serial_key
