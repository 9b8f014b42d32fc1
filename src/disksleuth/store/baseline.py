"""The earlier runs of a drive, measured the same way: what a baseline (analysis/baseline.py) is made of.

Fast at 100,000 runs without an index of its own: the candidates are read newest first by id (the order
they were stored), `LIMIT`ed, so SQLite walks the primary key (or ix_runs_device_name, whose entries are
ordered by rowid within a name) backwards and stops as soon as it has enough; only their tests are read.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from disksleuth import serials
from disksleuth.model.baseline import EarlierRun, Identity, Method, TestFigures
from disksleuth.store.db import Store
from disksleuth.store.latest import epoch_s
from disksleuth.store.schema import FINDINGS, RUNS, TESTS

# Earlier runs read per lookup: enough for median:50 with runs left out for clock skew.
CANDIDATES = 80


def _same(column: sa.ColumnElement[Any], value: Any) -> sa.ColumnElement[bool]:
    return column.is_(None) if value is None else column == value


def identity_condition(identity: Identity) -> sa.ColumnElement[bool]:
    if identity.serial_id:
        return RUNS.c.device_serial_sha256 == identity.serial_id
    return sa.and_(
        RUNS.c.device_name == identity.device_name,
        _same(RUNS.c.hostname, identity.hostname),
        _same(RUNS.c.device_model, identity.model),
        _same(RUNS.c.device_capacity_bytes, identity.capacity_bytes),
        RUNS.c.device_serial_sha256.is_(None),
        *(
            # As Store.save wrote it (json.dumps): a loop device's backing file, LIKE's wildcards escaped.
            [RUNS.c.device_json.contains(json.dumps({"backing_file": identity.backing_file})[1:-1], autoescape=True)]
            if identity.backing_file
            else []
        ),
    )


def method_condition(method: Method) -> sa.ColumnElement[bool]:
    return sa.and_(
        _same(RUNS.c.profile, method.profile),
        _same(RUNS.c.engine, method.engine),
        _same(RUNS.c.size_bytes, method.size_bytes),
    )


def serial_id_for(store: Store, device: dict[str, Any]) -> str | None:
    """The keyed serial id of a run's drive in this store: the one a stored or exported run carries, else
    its serial keyed with the store's key (as Store.save would key it)."""
    given = device.get("serial_id")
    if isinstance(given, str) and given:
        return given
    key = store.serial_key
    serial = device.get("serial")
    return serials.serial_id(serial, key) if isinstance(serial, str) and serial.strip() else None


def earlier_runs(
    store: Store, identity: Identity, method: Method, *, before_id: int | None = None, limit: int = CANDIDATES
) -> list[EarlierRun]:
    """Up to `limit` runs of the drive measured the same way, stored before run `before_id` (all runs when
    None: a run not yet saved), newest first, with their (non-reference) tests."""
    where = [identity_condition(identity), method_condition(method)]
    if before_id is not None:
        where.append(RUNS.c.id < before_id)
    query = (
        sa.select(RUNS.c.id, RUNS.c.started_at).where(sa.and_(*where)).order_by(RUNS.c.id.desc()).limit(limit)
    )
    with store._errors("read"), store.engine.connect() as conn:
        runs = conn.execute(query).all()
        ids = [int(r[0]) for r in runs]
        tests: dict[int, dict[str, TestFigures]] = {i: {} for i in ids}
        if ids:
            rows = conn.execute(
                sa.select(
                    TESTS.c.run_id,
                    TESTS.c.test_id,
                    TESTS.c.bs_bytes,
                    TESTS.c.read_mbps,
                    TESTS.c.write_mbps,
                    TESTS.c.read_iops,
                    TESTS.c.write_iops,
                    TESTS.c.cache_affected,
                    TESTS.c.extra_json,
                ).where(TESTS.c.run_id.in_(ids), TESTS.c.is_reference == sa.false())
            ).mappings()
            for t in rows:
                tests[int(t["run_id"])][str(t["test_id"])] = TestFigures(
                    bs_bytes=t["bs_bytes"],
                    read_mbps=t["read_mbps"],
                    write_mbps=t["write_mbps"],
                    read_iops=t["read_iops"],
                    write_iops=t["write_iops"],
                    ci95_pct=_ci95_pct(t["extra_json"]),
                    cache_affected=bool(t["cache_affected"]),
                )
    return [EarlierRun(int(i), s, epoch_s(s), tests[int(i)]) for i, s in runs]


def _ci95_pct(extra_json: str | None) -> float | None:
    try:
        value = json.loads(extra_json or "{}").get("ci95_pct")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def other_serial_runs(store: Store, identity: Identity, method: Method, before_id: int | None = None) -> int:
    """Earlier runs of the same host and device name measured the same way whose drive had another serial id:
    the drive was replaced, or its serial changed (new firmware, a new USB bridge). Counted (up to
    CANDIDATES), never compared."""
    if not identity.serial_id or not identity.device_name:
        return 0
    where = [
        RUNS.c.device_name == identity.device_name,
        _same(RUNS.c.hostname, identity.hostname),
        RUNS.c.device_serial_sha256 != identity.serial_id,
        method_condition(method),
    ]
    if before_id is not None:
        where.append(RUNS.c.id < before_id)
    query = sa.select(RUNS.c.id).where(sa.and_(*where)).order_by(RUNS.c.id.desc()).limit(CANDIDATES)
    with store._errors("read"), store.engine.connect() as conn:
        return len(conn.execute(query).all())


def finding_codes(store: Store, ids: list[int], codes: tuple[str, ...]) -> dict[int, set[str]]:
    """Which of `codes` each of these runs was stored with (ix_findings_run_id)."""
    out: dict[int, set[str]] = {}
    if not ids:
        return out
    with store._errors("read"), store.engine.connect() as conn:
        for run_id, code in conn.execute(
            sa.select(FINDINGS.c.run_id, FINDINGS.c.code).where(FINDINGS.c.run_id.in_(ids), FINDINGS.c.code.in_(codes))
        ):
            out.setdefault(int(run_id), set()).add(str(code))
    return out
