"""The results store: SQLite by default, PostgreSQL by URL, one SQLAlchemy Core code path.

Opening a store applies the missing migrations (store.schema) in order, each in its own transaction. A
run is written in one transaction when it ends, so a run killed half-way never leaves a trace, and never
harms earlier runs (SQLite in WAL mode).
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import math
import operator
import os
import sqlite3
import time
import uuid as uuid_mod
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from disksleuth import serials
from disksleuth.errors import ParseError, StoreError, StoreMissing, UsageError, first_line
from disksleuth.store.documents import (
    capped_latencies,
    legacy_uuid,
    now_stamp,
    without_health_serials,
    without_serial,
)
from disksleuth.store.engine import BUSY_TIMEOUT_MS, FIRST_RUN, make_engine, sqlite_path, writable
from disksleuth.store.schema import (
    FINDINGS,
    FLEET_COLUMNS,
    META,
    MIGRATIONS,
    READABLE_SCHEMA,
    RUNS,
    SCHEMA_VERSION,
    SERIAL_KEY_NAME,
    SERIES,
    TAGS,
    TEST_FIGURES,
    TESTS,
    fleet_figures,
    from_json,
    to_json,
    version_of,
)
from disksleuth.store.urls import default_url, redact_url, resolve_url

IMPORT_BATCH_RUNS = 500  # runs per transaction on import: the lock is held ~0.5 s at a time
# ...or fewer, when their series are long: a batch's rows are held in memory until written (500 runs of
# 5,000 points each took 270 MB). A fleet's run has ~120 points.
IMPORT_BATCH_POINTS = 60_000


@dataclasses.dataclass
class Imports:
    """What an import did, in the file's order: the ids of the runs it stored, and of those already stored."""

    new_ids: array.array[int] = dataclasses.field(default_factory=lambda: array.array("q"))
    skipped: array.array[int] = dataclasses.field(default_factory=lambda: array.array("q"))


# Any fixed 64-bit number: the key of the advisory lock that serialises disksleuth's writers on PostgreSQL.
_PG_LOCK_KEY = int.from_bytes(b"dsleuth1", "big") & 0x7FFFFFFFFFFFFFFF


class Store:
    """One results store. `create=False` never creates a store: a missing one is StoreMissing.
    `read_only` (every command that only reads) opens it so that nothing can be written, and reads a store
    on a read-only mount. Every database failure surfaces as one line (StoreError), never SQL or parameters.
    `timeout_s` (PostgreSQL) bounds the connection and each statement, for readers that must answer soon."""

    def __init__(
        self,
        url: str | None = None,
        migrate_to: int = SCHEMA_VERSION,
        create: bool = True,
        read_only: bool = False,
        timeout_s: int | None = None,
    ):
        given = url if url is not None else default_url()  # an empty --db is a mistake, not the default
        self.url = redact_url(given)
        self.read_only = read_only
        self.engine = make_engine(resolve_url(given), create and not read_only, read_only, timeout_s)
        self.dialect = self.engine.dialect.name
        self._sqlite_file = sqlite_path(self.engine.url) if self.dialect == "sqlite" else None
        self.serial_key: bytes | None = None  # what the serial ids of this store are keyed with
        try:
            with self._errors("open"):
                if read_only:
                    self._open_read_only(given, migrate_to)
                else:
                    self.migrate(migrate_to, create=create)
                self.schema = self.version()
                if self.schema >= 4:
                    self.serial_key = self._stored_serial_key()
        except BaseException:
            self.engine.dispose()
            raise

    def _open_read_only(self, given: str, migrate_to: int) -> None:
        """An out-of-date store is upgraded once, by a separate writer, where it can be written (the one
        write a reading command makes: the keyed serial ids of schema 4 must not wait for a write command).
        Where it cannot (a read-only mount, a role without write rights), a schema-3 store is read as it is."""
        current = self.version()
        self._refuse_unusable(current, create=False)
        if current >= migrate_to:
            return
        if self._sqlite_file is None or writable(self._sqlite_file):
            try:
                Store(given, migrate_to=migrate_to, create=False).close()
                return
            except StoreError:
                if current < READABLE_SCHEMA:
                    raise
        if current < READABLE_SCHEMA:
            raise StoreError(
                f"{self.url} has schema {current} from an older disksleuth and cannot be upgraded here (read-only); "
                "open it once where it can be written"
            )

    def _refuse_unusable(self, current: int, create: bool) -> None:
        if current == 0 and not create:
            if self._sqlite_file and os.path.exists(self._sqlite_file):
                what = "an empty file" if os.path.getsize(self._sqlite_file) == 0 else "no disksleuth tables in it"
                raise StoreError(f"{self._sqlite_file} is not a disksleuth results store ({what})")
            raise StoreMissing(f"no results store in {self.url} yet; {FIRST_RUN}")
        if current > SCHEMA_VERSION:
            raise StoreError(f"{self.url} was written by a newer disksleuth (schema {current})")

    def _stored_serial_key(self) -> bytes:
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(META.c.value).where(META.c.name == SERIAL_KEY_NAME)).scalar()
        if not value:
            raise StoreError(f"{self.url} has lost its serial key (table meta); its serial ids cannot be checked")
        return bytes.fromhex(value)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Database exceptions -> one line that names the store and what went wrong, no SQL."""
        try:
            yield
        except (sa.exc.DBAPIError, sqlite3.Error) as exc:  # sqlite3's own: the raw connection of _wal()
            reason = first_line(exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc)
            if "locked" in reason or "busy" in reason:
                raise StoreError(
                    f"the results store {self.url} is locked by another process "
                    f"(waited {BUSY_TIMEOUT_MS / 1000:g} s to {action} it)"
                ) from None
            if isinstance(exc, sa.exc.OperationalError) or not isinstance(exc, sa.exc.DatabaseError):
                raise StoreError(f"cannot {action} the results store {self.url}: {reason}") from None
            if "not a database" in reason or "no such table" in reason or "no such column" in reason:
                raise StoreError(f"{self.url} is not a disksleuth results store: {reason}") from None
            raise StoreError(f"cannot {action} the results store {self.url}: {reason}") from None
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot {action} the results store {self.url}: {first_line(exc)}") from None

    @contextlib.contextmanager
    def _writing(self, foreign_keys: bool = True) -> Iterator[Connection]:
        """One write transaction that holds the store's write lock from its first statement: SQLite's
        BEGIN IMMEDIATE, PostgreSQL's transaction-scoped advisory lock. Check-then-write inside it is safe
        against other processes (migrations on first use, duplicate checks on import). `foreign_keys=False`
        (SQLite, migrations): a table rebuild must not cascade; the pragma only changes outside a transaction."""
        with self.engine.connect() as conn:
            conn.execution_options(sqlite_begin="IMMEDIATE")
            raw = conn.connection.dbapi_connection if self.dialect == "sqlite" and not foreign_keys else None
            if raw is not None:
                raw.execute("PRAGMA foreign_keys=OFF")
            try:
                with conn.begin():
                    if self.dialect == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
                    yield conn
            finally:
                if raw is not None:
                    raw.execute("PRAGMA foreign_keys=ON")

    # --- migrations ---------------------------------------------------------------------------

    def version(self) -> int:
        with self.engine.connect() as conn:
            return version_of(conn)

    def _wal(self) -> None:
        """WAL mode (persistent in the file): readers never block the writer; a killed writer is rolled back.
        Set here, once the file is known to be a store or to become one, never by merely connecting: setting
        it writes the header, and a read of a 0-byte file once turned it into a 4 KiB database. On the raw
        connection, because the mode cannot change inside the transaction SQLAlchemy would begin."""
        with self.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
            while True:
                try:
                    raw.execute("PRAGMA journal_mode=WAL")  # type: ignore[union-attr]
                    return
                except sqlite3.OperationalError as exc:
                    # Leaving rollback mode needs the file to itself, and SQLite answers "database is locked"
                    # at once, without its busy handler, while another process holds a lock on a new store
                    # (CI: two hosts' first `check` into one new file; one run was kept unsaved). Wait as a
                    # write would.
                    if "locked" not in str(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)

    def migrate(self, target: int = SCHEMA_VERSION, create: bool = True) -> None:
        """Apply the missing migrations. The common case (up to date) takes no lock; otherwise the
        check and every step run in one locked transaction, so N processes opening a new store at once
        apply each migration exactly once (DDL is transactional in SQLite and PostgreSQL)."""
        current = self.version()
        self._refuse_unusable(current, create)
        if self.dialect == "sqlite":
            self._wal()
        if current >= target:
            return
        with self._writing(foreign_keys=False) as conn:
            conn.execute(
                sa.text(
                    "CREATE TABLE IF NOT EXISTS schema_migrations "
                    "(version INTEGER PRIMARY KEY, applied_at VARCHAR(40) NOT NULL)"
                )
            )
            for version in range(version_of(conn) + 1, target + 1):
                MIGRATIONS[version - 1](conn)
                conn.execute(
                    sa.text("INSERT INTO schema_migrations (version, applied_at) VALUES (:v, :t)"),
                    {"v": version, "t": now_stamp()},
                )

    # --- writing ------------------------------------------------------------------------------

    def save(self, doc: dict[str, Any], tags: Sequence[str] = (), note: str | None = None) -> int:
        """Write one run document (the shape `bench --json` / `check --json` print) in one transaction."""
        with self._errors("write to"), self._writing() as conn:
            return self._insert(conn, doc, tags, note)

    def save_many(self, docs: Iterable[tuple[dict[str, Any], Sequence[str], str | None]]) -> list[int]:
        """Several runs (document, tags, note) in one transaction: all or none."""
        with self._errors("write to"), self._writing() as conn:
            return [self._insert(conn, doc, tags, note) for doc, tags, note in docs]

    def import_runs(self, docs: Iterable[dict[str, Any]], batch_runs: int = IMPORT_BATCH_RUNS) -> Imports:
        """Runs from an export, each once: a run whose identity (run.uuid, or for exports made before runs had
        one, its kind, start, host, target and profile) is already stored is skipped. `docs` is read as it
        comes (a stream), `batch_runs` runs per transaction, so neither memory nor a held lock grows with the
        file. All or none when the file is bad: a ParseError from `docs` (a run that is not valid, further on)
        deletes the runs this import already stored, then is raised. An import stopped half-way by anything
        else leaves whole batches stored: run it again and the stored runs are skipped."""
        done = Imports()
        try:
            batch: list[dict[str, Any]] = []
            points = 0
            for doc in docs:
                batch.append(doc)
                points += sum(
                    len(t.get("series") or ()) for t in (*(doc.get("tests") or ()), *(doc.get("reference") or ()))
                )
                if len(batch) >= batch_runs or points >= IMPORT_BATCH_POINTS:
                    self._import_batch(batch, done)
                    batch, points = [], 0
            if batch:
                self._import_batch(batch, done)
        except ParseError:
            if done.new_ids:
                with self._errors("write to"), self._writing() as conn:
                    _delete_runs(conn, list(done.new_ids))
            raise
        return done

    def _import_batch(self, batch: list[dict[str, Any]], done: Imports) -> None:
        uuids = [doc["run"].get("uuid") or legacy_uuid(doc["run"]) for doc in batch]
        with self._errors("write to"), self._writing() as conn:
            stored: dict[str, int] = {}
            for start in range(0, len(uuids), 500):  # bounded IN lists
                chunk = uuids[start : start + 500]
                for run_uuid, run_id in conn.execute(sa.select(RUNS.c.uuid, RUNS.c.id).where(RUNS.c.uuid.in_(chunk))):
                    stored[run_uuid] = int(run_id)
            fresh: dict[str, int] = {}  # uuid -> position in `rows`: a run twice in one batch is stored once
            rows: list[tuple[dict[str, Any], Sequence[str], str | None]] = []
            for doc, run_uuid in zip(batch, uuids, strict=True):
                if run_uuid in stored or run_uuid in fresh:
                    continue
                fresh[run_uuid] = len(rows)
                run = doc["run"]
                rows.append(({**doc, "run": {**run, "uuid": run_uuid}}, run.get("tags") or (), run.get("note")))
            ids = self._insert_many(conn, rows)
        placed: set[str] = set()
        for run_uuid in uuids:  # in the file's order
            if run_uuid in stored:
                done.skipped.append(stored[run_uuid])
            elif run_uuid in placed:  # the same run again in this batch
                done.skipped.append(ids[fresh[run_uuid]])
            else:
                done.new_ids.append(ids[fresh[run_uuid]])
                placed.add(run_uuid)

    def delete(self, ids: Sequence[int]) -> list[int]:
        """Delete these runs with their tests, series, findings and tags; all or none."""
        with self._errors("write to"), self._writing() as conn:
            found = set(conn.execute(sa.select(RUNS.c.id).where(RUNS.c.id.in_(list(ids)))).scalars())
            missing = [i for i in ids if i not in found]
            if missing:
                listed = ", ".join(str(i) for i in missing)
                raise UsageError(f"no run {listed} in {self.url}; nothing deleted (see `disksleuth runs`)")
            _delete_runs(conn, sorted(found))
        return sorted(found)

    def prune(
        self,
        older_than_s: float | None = None,
        tag: str | None = None,
        host: str | None = None,
        dry_run: bool = False,
        now: float | None = None,
        within: Sequence[int] | None = None,
        keep: int | None = None,
    ) -> list[int]:
        """Delete the runs that match every criterion given (at least one is needed): started more than
        `older_than_s` ago, carrying `tag`, recorded on `host`, not among the newest `keep` runs of their
        drive and profile; with `within`, only those of these ids (the ones a person was shown and agreed
        to). Returns their ids."""
        with self._errors("write to"), self._writing() as conn:
            ids = [run_id for run_id, _started in self._prunable(conn, older_than_s, tag, host, now, keep)]
            if within is not None:
                agreed = set(within)
                ids = [i for i in ids if i in agreed]
            if not dry_run:
                _delete_runs(conn, ids)
        return sorted(ids)

    def prunable(
        self,
        older_than_s: float | None = None,
        tag: str | None = None,
        host: str | None = None,
        now: float | None = None,
        keep: int | None = None,
    ) -> list[tuple[int, str]]:
        """(id, started_at) of the runs prune() would delete, oldest first; nothing is deleted."""
        with self._errors("read"), self.engine.connect() as conn:
            return self._prunable(conn, older_than_s, tag, host, now, keep)

    @staticmethod
    def _prunable(
        conn: Connection,
        older_than_s: float | None,
        tag: str | None,
        host: str | None,
        now: float | None,
        keep: int | None = None,
    ) -> list[tuple[int, str]]:
        if older_than_s is None and not tag and not host and keep is None:
            raise UsageError("runs prune needs --keep, --older-than, --tag or --host (it never deletes everything)")
        if keep is not None and keep < 1:
            raise UsageError(f"--keep {keep}: keep at least 1 run per drive and profile (`runs delete` removes runs)")
        import time

        cutoff = (now if now is not None else time.time()) - older_than_s if older_than_s is not None else None
        kept = _beyond_newest(conn, keep) if keep is not None else None
        found = []
        for run_id, started_at in conn.execute(
            sa.select(RUNS.c.id, RUNS.c.started_at).where(_filters(tag=tag, host=host))
        ):
            if kept is not None and run_id not in kept:
                continue
            started = _epoch_s(started_at)
            if cutoff is not None and not started < cutoff:
                continue  # newer, or no readable start time: never pruned by age
            found.append((math.inf if math.isnan(started) else started, int(run_id), started_at))
        return [(run_id, started_at) for _t, run_id, started_at in sorted(found)]

    def _insert(self, conn: Connection, doc: dict[str, Any], tags: Sequence[str], note: str | None) -> int:
        return self._insert_many(conn, [(doc, tags, note)])[0]

    def _insert_many(
        self, conn: Connection, docs: Sequence[tuple[dict[str, Any], Sequence[str], str | None]]
    ) -> list[int]:
        """Runs (document, tags, note) with their tests, series, findings and tags: one statement per table
        for them all (rows inserted one by one cost ~8 ms a run in SQLAlchemy, most of an import's time)."""
        if not docs:
            return []
        # Ids read back by the runs' uuids and the tests' places, not by RETURNING: the query tables here carry no
        # column types, and PostgreSQL's ordered multi-row RETURNING needs them; these two reads cost ~1%.
        run_rows = [self._run_row(doc, note) for doc, _tags, note in docs]
        _insert_rows(conn, RUNS, run_rows)
        uuids = [row["uuid"] for row in run_rows]
        id_of = {
            run_uuid: int(run_id)
            for run_uuid, run_id in conn.execute(sa.select(RUNS.c.uuid, RUNS.c.id).where(RUNS.c.uuid.in_(uuids)))
        }
        run_ids = [id_of[run_uuid] for run_uuid in uuids]
        test_rows: list[dict[str, Any]] = []
        test_series: list[list[dict[str, Any]]] = []
        finding_rows: list[dict[str, Any]] = []
        tag_rows: list[dict[str, Any]] = []
        for run_id, (doc, tags, _note) in zip(run_ids, docs, strict=True):
            for is_ref, tests in ((False, doc.get("tests") or []), (True, doc.get("reference") or [])):
                for pos, t in enumerate(tests):
                    test_rows.append(_test_row(run_id, pos, is_ref, t))
                    test_series.append(t.get("series") or [])
            finding_rows.extend(
                {
                    "run_id": run_id,
                    "code": f["code"],
                    "severity": f["severity"],
                    "message": f.get("message"),
                    "evidence_json": to_json(f.get("evidence")),
                    "hint": f.get("hint"),
                }
                for f in doc.get("findings") or []
            )
            tag_rows.extend({"run_id": run_id, "tag": tag} for tag in dict.fromkeys(tags))
        if test_rows:
            _insert_rows(conn, TESTS, test_rows)
            test_id_of = {
                (int(run_id), bool(is_ref), int(pos)): int(test_id)
                for test_id, run_id, is_ref, pos in conn.execute(
                    sa.select(TESTS.c.id, TESTS.c.run_id, TESTS.c.is_reference, TESTS.c.position).where(
                        TESTS.c.run_id.in_(run_ids)
                    )
                )
            }
            test_ids = [test_id_of[(row["run_id"], row["is_reference"], row["position"])] for row in test_rows]
            series_rows = _series_rows(test_ids, test_series)
            if series_rows:
                _insert_tuples(conn, SERIES, _SERIES_COLUMNS, series_rows)
        if finding_rows:
            _insert_rows(conn, FINDINGS, finding_rows)
        if tag_rows:
            _insert_rows(conn, TAGS, tag_rows)
        return run_ids

    def _run_row(self, doc: dict[str, Any], note: str | None) -> dict[str, Any]:
        run = doc["run"]
        device = doc.get("device") or {}
        host = run.get("host") or {}
        return {
            "uuid": run.get("uuid") or str(uuid_mod.uuid4()),
            "kind": run.get("kind") or "bench",  # null reads as the default, as legacy_uuid reads it
            "started_at": run["started_at"],
            "finished_at": run.get("finished_at"),
            "target": run["target"],
            "profile": run["profile"],
            "engine": run.get("engine"),
            "fio_version": run.get("fio_version"),
            "hostname": host.get("hostname"),
            "kernel": host.get("kernel"),
            "cpu": host.get("cpu"),
            "disksleuth_version": host.get("disksleuth_version"),
            "device_name": device.get("name") or run.get("device"),
            "device_model": device.get("model"),
            "device_firmware": device.get("firmware"),
            "device_capacity_bytes": device.get("size_bytes"),
            "device_serial_sha256": self._serial_id_of(device),  # load() reads it back
            "device_transport": device.get("transport"),
            "size_bytes": run.get("size_bytes"),
            "summary": doc.get("summary"),
            "host_json": to_json(host),
            "device_json": to_json(without_serial(device)),
            "health_json": to_json(without_health_serials(doc.get("health"))),
            "notes_json": to_json(run.get("notes") or []),
            "note": note,
            **fleet_figures(doc),  # what `fleet` shows, without reading device_json and the tests
        }

    def _serial_id_of(self, device: dict[str, Any]) -> str | None:
        """The keyed id a run's drive gets here: the one an export carried (serial_id), a plain SHA-256 from an
        export made before schema 4 signed with this store's key (as the v4 migration does), or the serial
        itself, keyed. Never a plain digest."""
        key = self.serial_key
        if key is None:
            return None
        self._check_fleet_key(key)
        given = device.get("serial_id")
        if isinstance(given, str) and given:
            return given
        legacy = device.get("serial_sha256")
        if isinstance(legacy, str) and legacy:
            return serials.id_from_plain_digest(legacy, key)
        return serials.serial_id(device.get("serial"), key)

    _fleet_key_checked = False

    def _check_fleet_key(self, key: bytes) -> None:
        if self._fleet_key_checked:
            return
        self._fleet_key_checked = True
        fleet = serials.key_from_env()
        if fleet is not None and fleet != key:
            warnings.warn(
                f"{serials.ENV_KEY} is not the key {self.url} was made with; its serial ids stay keyed with the "
                "store's own key, so they differ from the exporter's on this host",
                stacklevel=2,
            )

    def _shown_serial_id(self, stored: str | None) -> str | None:
        """The serial id as readers get it. A store older than schema 4 that could not be upgraded (read-only)
        holds plain digests: shown keyed with the fleet key, or not at all."""
        if stored is None or self.schema >= 4:
            return stored
        key = serials.key_from_env()
        return serials.id_from_plain_digest(stored, key) if key is not None else None

    # --- reading ------------------------------------------------------------------------------

    def list_runs(
        self, device: str | None = None, tag: str | None = None, limit: int | None = 50, host: str | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Newest first: (rows, total matching)."""
        where = _filters(device=device, tag=tag, host=host)
        q = (
            sa.select(
                RUNS.c.id,
                RUNS.c.uuid,
                RUNS.c.kind,
                RUNS.c.started_at,
                RUNS.c.hostname,
                RUNS.c.target,
                RUNS.c.device_name,
                RUNS.c.device_model,
                RUNS.c.profile,
                RUNS.c.summary,
                RUNS.c.note,
            )
            .where(where)
            .order_by(RUNS.c.id.desc())
        )
        if limit:
            q = q.limit(limit)
        with self._errors("read"), self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(q)]
            total = conn.execute(sa.select(sa.func.count()).select_from(RUNS).where(where)).scalar_one()
            tags = self._tags(conn, [r["id"] for r in rows])
        for r in rows:
            r["tags"] = tags.get(r["id"], [])
        return rows, total

    def count(self) -> int:
        """Every stored run, whatever the filters."""
        with self._errors("read"), self.engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(RUNS)).scalar_one()

    def _tags(self, conn: Connection, ids: Iterable[int]) -> dict[int, list[str]]:
        ids = list(ids)
        out: dict[int, list[str]] = {}
        if ids:
            for run_id, tag in conn.execute(
                sa.select(TAGS.c.run_id, TAGS.c.tag).where(TAGS.c.run_id.in_(ids)).order_by(TAGS.c.tag)
            ):
                out.setdefault(run_id, []).append(tag)
        return out

    def load(self, run_id: int, with_series: bool = True) -> dict[str, Any]:
        """A stored run as a document shaped like `check --json` (plus id, uuid, tags, note)."""
        with self._errors("read"), self.engine.connect() as conn:
            # Not the fleet's columns: a store below schema 6 that could not be upgraded (read-only) has none.
            stored = [c for c in RUNS.c if c.name not in FLEET_COLUMNS]
            r = conn.execute(sa.select(*stored).where(RUNS.c.id == run_id)).mappings().first()
            if r is None:
                raise UsageError(f"no run {run_id} in {self.url}")
            test_rows = (
                conn.execute(
                    sa.select(TESTS).where(TESTS.c.run_id == run_id).order_by(TESTS.c.is_reference, TESTS.c.position)
                )
                .mappings()
                .all()
            )
            series: dict[int, list[dict[str, Any]]] = {}
            if with_series and test_rows:
                for p in conn.execute(
                    sa.select(SERIES)
                    .where(SERIES.c.test_row_id.in_([t["id"] for t in test_rows]))
                    .order_by(SERIES.c.test_row_id, SERIES.c.t_s)
                ).mappings():
                    series.setdefault(p["test_row_id"], []).append(
                        {k: p[k] for k in ("t_s", "read_mbps", "write_mbps", "iops", "temperature_c")}
                    )
            findings = (
                conn.execute(sa.select(FINDINGS).where(FINDINGS.c.run_id == run_id).order_by(FINDINGS.c.id))
                .mappings()
                .all()
            )
            tags = self._tags(conn, [run_id]).get(run_id, [])
        tests: list[dict[str, Any]] = []
        reference: list[dict[str, Any]] = []
        for t in test_rows:
            doc = {
                "id": t["test_id"],
                "rw": t["rw"],
                "bs_bytes": t["bs_bytes"],
                "iodepth": t["iodepth"],
                "numjobs": t["numjobs"],
                "fio_command": t["fio_command"],
                "cache_affected": bool(t["cache_affected"]),
                "engine": t["engine"],
                **{k: t[k] for k in TEST_FIGURES},
                **from_json(t["extra_json"], {}),
                "series": series.get(t["id"], []),
            }
            (reference if t["is_reference"] else tests).append(capped_latencies(doc))
        device = from_json(r["device_json"], {})
        if not device and (r["device_name"] or r["device_model"]):
            device = {"name": r["device_name"], "model": r["device_model"]}
        if device:  # a run on tmpfs has no device: no stub of nulls that its own import would reject
            device["serial_id"] = self._shown_serial_id(r["device_serial_sha256"])
            # The field's name before schema 4, kept because fields are only ever added: the same keyed id.
            device["serial_sha256"] = device["serial_id"]
        return {
            "run": {
                "id": r["id"],
                "uuid": r["uuid"],
                "kind": r["kind"],
                "target": r["target"],
                "profile": r["profile"],
                "started_at": r["started_at"],
                "finished_at": r["finished_at"],
                "fio_version": r["fio_version"],
                "engine": r["engine"],
                "host": from_json(r["host_json"], {}),
                "device": r["device_name"],
                "size_bytes": r["size_bytes"],
                "notes": from_json(r["notes_json"], []),
                "tags": tags,
                "note": r["note"],
            },
            "device": device,
            "tests": tests,
            "reference": reference,
            "health": without_health_serials(from_json(r["health_json"])),  # a store not yet at schema 4 may hold one
            "findings": [
                {
                    "code": f["code"],
                    "severity": f["severity"],
                    "message": f["message"],
                    "evidence": from_json(f["evidence_json"], {}),
                    "hint": f["hint"],
                }
                for f in findings
            ],
            "summary": r["summary"],
        }


# Columns PostgreSQL types as integers in the tables _insert_rows copies to: COPY reads its text, where "4.0"
# is not an integer (a bound float is cast), so a row with anything but an int there goes by INSERT.
_INTEGER_COLUMNS = (
    *("run_id", "test_row_id", "position", "bs_bytes", "iodepth", "numjobs"),
    *("device_capacity_bytes", "size_bytes"),
)


def _insert_rows(conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    """Rows into `table` (every row with the same keys) in the import's transaction (see _insert_tuples)."""
    columns = tuple(rows[0])
    if not all(len(row) == len(columns) for row in rows):
        conn.execute(table.insert(), rows)  # never so today; SQLAlchemy reads each row's own keys
        return
    values = operator.itemgetter(*columns)  # one C call a row
    _insert_tuples(conn, table, columns, [values(row) for row in rows])


_SERIES_COLUMNS = ("test_row_id", "t_s", "read_mbps", "write_mbps", "iops", "temperature_c")
_POINT_FIGURES = operator.itemgetter("t_s", "read_mbps", "write_mbps", "iops")


def _series_rows(test_ids: list[int], test_series: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """The series' rows as tuples, not dicts (a quick run has ~120 points, most of an import's rows). A point
    holds its four figures (the run's checks require them); one without is read key by key, as before."""
    try:
        return [
            (test_id, *_POINT_FIGURES(p), p.get("temperature_c"))
            for test_id, points in zip(test_ids, test_series, strict=True)
            for p in points
        ]
    except KeyError:
        return [
            (test_id, p["t_s"], p.get("read_mbps"), p.get("write_mbps"), p.get("iops"), p.get("temperature_c"))
            for test_id, points in zip(test_ids, test_series, strict=True)
            for p in points
        ]


def _insert_tuples(conn: Connection, table: sa.Table, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    """Rows (values in the order of `columns`) into `table` in the import's transaction. On SQLite one
    executemany of the driver: SQLAlchemy's compiled insert built a parameter dict per row through its bind
    processors, ~40% of an import of runs with their series (none of these columns needs one on SQLite:
    booleans are ints to sqlite3). On PostgreSQL by COPY: psycopg 3's executemany still runs one INSERT per
    row on the server (an import of the fleet benchmark made 10 statements a run and stayed under 500 runs/s);
    SQLAlchemy's multi-row VALUES cost more CPU in psycopg's parsing of the long statement than it saved."""
    names = ", ".join(columns)
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"INSERT INTO {table.name} ({names}) VALUES ({', '.join('?' * len(columns))})", rows)
        return
    integers = [i for i, c in enumerate(columns) if c in _INTEGER_COLUMNS]
    if conn.dialect.name != "postgresql" or not all(
        type(row[i]) is int or row[i] is None for row in rows for i in integers
    ):
        conn.execute(table.insert(), [dict(zip(columns, row, strict=True)) for row in rows])
        return
    import psycopg

    statement = f"COPY {table.name} ({names}) FROM STDIN"
    try:
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        with cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    except psycopg.Error as exc:  # as SQLAlchemy would raise it, for Store._errors' one line
        raise sa.exc.DBAPIError.instance(statement, None, exc, psycopg.Error) from exc


_TEST_BASE_KEYS = frozenset(
    {"test_id", "rw", "bs_bytes", "iodepth", "numjobs", "fio_command", "cache_affected", "engine", "series", "id"}
    | set(TEST_FIGURES)
)


def _test_row(run_id: int, pos: int, is_ref: bool, t: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "position": pos,
        "is_reference": is_ref,
        "test_id": t["id"],
        "rw": t.get("rw"),
        "bs_bytes": t.get("bs_bytes"),
        "iodepth": t.get("iodepth"),
        "numjobs": t.get("numjobs"),
        "fio_command": t.get("fio_command"),
        "cache_affected": bool(t.get("cache_affected")),
        "engine": t.get("engine"),
        "extra_json": to_json({k: v for k, v in t.items() if k not in _TEST_BASE_KEYS}),
        **{k: t.get(k) for k in TEST_FIGURES},
    }


def _filters(device: str | None = None, tag: str | None = None, host: str | None = None) -> sa.ColumnElement[bool]:
    cond = []
    if device:
        # The text is matched as it is: LIKE's % and _ (and the escape character) escaped, so `--device %`
        # is a device named "%", not every run.
        cond.append(
            sa.or_(
                RUNS.c.device_name == device.removeprefix("/dev/"),
                RUNS.c.device_model.contains(device, autoescape=True),
                RUNS.c.target.contains(device, autoescape=True),
            )
        )
    if tag:
        cond.append(RUNS.c.id.in_(sa.select(TAGS.c.run_id).where(TAGS.c.tag == tag)))
    if host:
        cond.append(RUNS.c.hostname == host)
    return sa.and_(*cond) if cond else sa.true()


def _epoch_s(started_at: str | None) -> float:
    """A run's start as epoch seconds; NaN when unreadable (no comparison holds for it)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(started_at or "").timestamp()
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _beyond_newest(conn: Connection, keep: int) -> set[int]:
    """The runs that are not among the newest `keep` of their drive (its keyed serial id, else host and device
    or target) and profile: newest by start time, then by id. A run with no readable start time counts as
    the newest (it is never the one pruned for being old)."""
    groups: dict[tuple[Any, ...], list[tuple[float, int]]] = {}
    for run_id, started_at, serial_id, hostname, device_name, target, profile in conn.execute(
        sa.select(
            RUNS.c.id,
            RUNS.c.started_at,
            RUNS.c.device_serial_sha256,
            RUNS.c.hostname,
            RUNS.c.device_name,
            RUNS.c.target,
            RUNS.c.profile,
        )
    ):
        drive = (serial_id,) if serial_id else (hostname, device_name or target)
        started = _epoch_s(started_at)
        groups.setdefault((*drive, profile), []).append((math.inf if math.isnan(started) else started, int(run_id)))
    beyond: set[int] = set()
    for runs in groups.values():
        if len(runs) > keep:
            runs.sort(reverse=True)
            beyond.update(run_id for _started, run_id in runs[keep:])
    return beyond


def _delete_runs(conn: Connection, ids: Sequence[int]) -> None:
    """Children first: stores made by any version, on any database, without relying on ON DELETE CASCADE."""
    for start in range(0, len(ids), 500):  # bounded IN lists
        chunk = list(ids[start : start + 500])
        tests = sa.select(TESTS.c.id).where(TESTS.c.run_id.in_(chunk))
        conn.execute(SERIES.delete().where(SERIES.c.test_row_id.in_(tests)))
        conn.execute(TESTS.delete().where(TESTS.c.run_id.in_(chunk)))
        conn.execute(FINDINGS.delete().where(FINDINGS.c.run_id.in_(chunk)))
        conn.execute(TAGS.delete().where(TAGS.c.run_id.in_(chunk)))
        conn.execute(RUNS.delete().where(RUNS.c.id.in_(chunk)))
