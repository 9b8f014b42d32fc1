"""The results store: SQLite by default, PostgreSQL by URL, one SQLAlchemy Core code path.

Schema changes are numbered migrations recorded in `schema_migrations`; opening a store applies the
missing ones in order, each in its own transaction. A run is written in one transaction when it ends,
so a run killed half-way never leaves a trace, and never harms earlier runs (SQLite in WAL mode).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from disksleuth.errors import EnvironmentProblem, UsageError

# --- schema, version by version ----------------------------------------------------------------


def _v1(conn: Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        "runs",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40)),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("profile", sa.String(32), nullable=False),
        sa.Column("engine", sa.String(32)),
        sa.Column("fio_version", sa.String(32)),
        sa.Column("hostname", sa.String(255)),
        sa.Column("kernel", sa.String(255)),
        sa.Column("cpu", sa.String(255)),
        sa.Column("disksleuth_version", sa.String(32)),
        sa.Column("device_name", sa.String(64)),
        sa.Column("device_model", sa.String(255)),
        sa.Column("device_firmware", sa.String(64)),
        sa.Column("device_capacity_bytes", sa.BigInteger),
        sa.Column("device_serial_sha256", sa.String(64)),
        sa.Column("device_transport", sa.String(16)),
        sa.Column("size_bytes", sa.BigInteger),
        sa.Column("summary", sa.Text),
        sa.Column("host_json", sa.Text),
        sa.Column("device_json", sa.Text),  # the device with its link chain, as `list --json` shows it
        sa.Column("health_json", sa.Text),  # before, after, changes, temperature series
        sa.Column("notes_json", sa.Text),
    )
    sa.Table(
        "tests",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("is_reference", sa.Boolean, nullable=False, default=False),
        sa.Column("test_id", sa.String(64), nullable=False),
        sa.Column("rw", sa.String(16)),
        sa.Column("bs_bytes", sa.Integer),
        sa.Column("iodepth", sa.Integer),
        sa.Column("numjobs", sa.Integer),
        *(
            sa.Column(c, sa.Float)
            for c in (
                "read_mbps",
                "read_iops",
                "write_mbps",
                "write_iops",
                "lat_mean_us",
                "lat_p50_us",
                "lat_p99_us",
                "lat_p999_us",
                "lat_max_us",
                "runtime_s",
            )
        ),
        sa.Column("fio_command", sa.Text),
        sa.Column("cache_affected", sa.Boolean),
        sa.Column("engine", sa.String(32)),
        sa.Column("extra_json", sa.Text),  # every other field of the test, series included (v1)
    )
    sa.Table(
        "findings",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("code", sa.String(32), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("message", sa.Text),
        sa.Column("evidence_json", sa.Text),
        sa.Column("hint", sa.Text),
    )
    md.create_all(conn)
    conn.execute(sa.text("CREATE INDEX ix_runs_started_at ON runs (started_at)"))
    conn.execute(sa.text("CREATE INDEX ix_tests_run_id ON tests (run_id)"))
    conn.execute(sa.text("CREATE INDEX ix_findings_run_id ON findings (run_id)"))


def _v2(conn: Connection) -> None:
    """Tags and a note per run; the per-second series moves out of tests.extra_json into rows."""
    md = sa.MetaData()
    md.reflect(conn, only=["runs", "tests"])  # the foreign keys below point at them
    sa.Table(
        "tags",
        md,
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tag", sa.String(128), primary_key=True),
    )
    sa.Table(
        "series",
        md,
        sa.Column("test_row_id", sa.Integer, sa.ForeignKey("tests.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("t_s", sa.Float, primary_key=True),
        sa.Column("read_mbps", sa.Float),
        sa.Column("write_mbps", sa.Float),
        sa.Column("iops", sa.Float),
        sa.Column("temperature_c", sa.Float),
    )
    md.create_all(conn, tables=[md.tables["tags"], md.tables["series"]])
    conn.execute(sa.text("ALTER TABLE runs ADD COLUMN note TEXT"))
    conn.execute(sa.text("CREATE INDEX ix_tags_tag ON tags (tag)"))
    conn.execute(sa.text("CREATE INDEX ix_runs_device_name ON runs (device_name)"))
    rows = conn.execute(sa.text("SELECT id, extra_json FROM tests")).fetchall()
    for row_id, extra_json in rows:
        extra = json.loads(extra_json or "{}")
        points = extra.pop("series", []) or []
        if points:
            conn.execute(
                sa.text(
                    "INSERT INTO series (test_row_id, t_s, read_mbps, write_mbps, iops, temperature_c) "
                    "VALUES (:r, :t, :rm, :wm, :io, :tc)"
                ),
                [
                    {
                        "r": row_id,
                        "t": p["t_s"],
                        "rm": p.get("read_mbps"),
                        "wm": p.get("write_mbps"),
                        "io": p.get("iops"),
                        "tc": p.get("temperature_c"),
                    }
                    for p in points
                ],
            )
        conn.execute(sa.text("UPDATE tests SET extra_json = :e WHERE id = :i"), {"e": json.dumps(extra), "i": row_id})


MIGRATIONS: list[Callable[[Connection], None]] = [_v1, _v2]
SCHEMA_VERSION = len(MIGRATIONS)

# The current schema, for queries (matches the migrations above).
_md = sa.MetaData()
RUNS = sa.Table(
    "runs",
    _md,
    sa.Column("id", sa.Integer, primary_key=True),
    *[
        sa.Column(n)
        for n in (
            "kind",
            "started_at",
            "finished_at",
            "target",
            "profile",
            "engine",
            "fio_version",
            "hostname",
            "kernel",
            "cpu",
            "disksleuth_version",
            "device_name",
            "device_model",
            "device_firmware",
            "device_capacity_bytes",
            "device_serial_sha256",
            "device_transport",
            "size_bytes",
            "summary",
            "host_json",
            "device_json",
            "health_json",
            "notes_json",
            "note",
        )
    ],
)
TEST_FIGURES = (
    "read_mbps",
    "read_iops",
    "write_mbps",
    "write_iops",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p999_us",
    "lat_max_us",
    "runtime_s",
)
TESTS = sa.Table(
    "tests",
    _md,
    sa.Column("id", sa.Integer, primary_key=True),
    *(
        sa.Column(n)
        for n in (
            "run_id",
            "position",
            "is_reference",
            "test_id",
            "rw",
            "bs_bytes",
            "iodepth",
            "numjobs",
            *TEST_FIGURES,
            "fio_command",
            "cache_affected",
            "engine",
            "extra_json",
        )
    ),
)
FINDINGS = sa.Table(
    "findings", _md, *[sa.Column(n) for n in ("id", "run_id", "code", "severity", "message", "evidence_json", "hint")]
)
TAGS = sa.Table("tags", _md, sa.Column("run_id"), sa.Column("tag"))
SERIES = sa.Table(
    "series", _md, *[sa.Column(n) for n in ("test_row_id", "t_s", "read_mbps", "write_mbps", "iops", "temperature_c")]
)


def default_url() -> str:
    url = os.environ.get("DISKSLEUTH_DB")
    if url:
        return url
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return f"sqlite:///{os.path.join(base, 'disksleuth', 'results.sqlite')}"


def _engine(url: str) -> Engine:
    if url.startswith("postgresql://"):
        try:
            import psycopg  # noqa: F401  (psycopg 3: `pip install disksleuth[postgres]`)

            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        except ImportError:
            pass
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
        raise UsageError(
            f"--db {url!r}: not a database URL disksleuth can use (sqlite:///path, postgresql://...)"
        ) from exc
    except ImportError as exc:
        raise EnvironmentProblem(
            f"--db {url}: the database driver is missing ({exc.name}); pip install 'disksleuth[postgres]'"
        ) from exc
    if engine.dialect.name == "sqlite":
        path = engine.url.database
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")  # readers never block the writer; a killed writer is rolled back
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=5000")
            cur.close()

    return engine


def serial_hash(serial: str | None) -> str | None:
    return hashlib.sha256(serial.encode()).hexdigest() if serial else None


def _j(value: Any) -> str | None:
    return json.dumps(value, default=str) if value is not None else None


def _unj(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


class Store:
    def __init__(self, url: str | None = None, migrate_to: int = SCHEMA_VERSION):
        self.url = url or default_url()
        self.engine = _engine(self.url)
        try:
            self.migrate(migrate_to)
        except sa.exc.OperationalError as exc:
            raise EnvironmentProblem(f"cannot open the results store {self.url}: {exc.orig}") from None
        except sa.exc.DatabaseError as exc:
            raise EnvironmentProblem(f"{self.url} is not a disksleuth results store: {exc.orig}") from None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- migrations ---------------------------------------------------------------------------

    def version(self) -> int:
        with self.engine.connect() as conn:
            if not sa.inspect(conn).has_table("schema_migrations"):
                return 0
            return conn.execute(sa.text("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")).scalar_one()

    def migrate(self, target: int = SCHEMA_VERSION) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                sa.text(
                    "CREATE TABLE IF NOT EXISTS schema_migrations "
                    "(version INTEGER PRIMARY KEY, applied_at VARCHAR(40) NOT NULL)"
                )
            )
        current = self.version()
        if current > SCHEMA_VERSION:
            raise EnvironmentProblem(f"{self.url} was written by a newer disksleuth (schema {current})")
        for version in range(current + 1, target + 1):
            with self.engine.begin() as conn:
                MIGRATIONS[version - 1](conn)
                conn.execute(
                    sa.text("INSERT INTO schema_migrations (version, applied_at) VALUES (:v, :t)"),
                    {"v": version, "t": _now()},
                )

    # --- writing ------------------------------------------------------------------------------

    def save(self, doc: dict[str, Any], tags: Sequence[str] = (), note: str | None = None) -> int:
        """Write one run document (the shape `bench --json` / `check --json` print) in one transaction."""
        with self.engine.begin() as conn:
            return self._insert(conn, doc, tags, note)

    def save_many(self, docs: Iterable[tuple[dict[str, Any], Sequence[str], str | None]]) -> list[int]:
        """Several runs (document, tags, note) in one transaction: all or none."""
        with self.engine.begin() as conn:
            return [self._insert(conn, doc, tags, note) for doc, tags, note in docs]

    def _insert(self, conn: Connection, doc: dict[str, Any], tags: Sequence[str], note: str | None) -> int:
        run = doc["run"]
        device = doc.get("device") or {}
        host = run.get("host") or {}
        run_id = conn.execute(
            RUNS.insert().values(
                kind=run.get("kind", "bench"),
                started_at=run["started_at"],
                finished_at=run.get("finished_at"),
                target=run["target"],
                profile=run["profile"],
                engine=run.get("engine"),
                fio_version=run.get("fio_version"),
                hostname=host.get("hostname"),
                kernel=host.get("kernel"),
                cpu=host.get("cpu"),
                disksleuth_version=host.get("disksleuth_version"),
                device_name=device.get("name") or run.get("device"),
                device_model=device.get("model"),
                device_firmware=device.get("firmware"),
                device_capacity_bytes=device.get("size_bytes"),
                device_serial_sha256=device.get("serial_sha256")
                or serial_hash(device.get("serial")),  # load() reads it back
                device_transport=device.get("transport"),
                size_bytes=run.get("size_bytes"),
                summary=doc.get("summary"),
                host_json=_j(host),
                device_json=_j(_without_serial(device)),
                health_json=_j(doc.get("health")),
                notes_json=_j(run.get("notes") or []),
                note=note,
            )
        ).inserted_primary_key[0]
        for is_ref, tests in ((False, doc.get("tests") or []), (True, doc.get("reference") or [])):
            for pos, t in enumerate(tests):
                self._save_test(conn, run_id, pos, is_ref, t)
        for f in doc.get("findings") or []:
            conn.execute(
                FINDINGS.insert().values(
                    run_id=run_id,
                    code=f["code"],
                    severity=f["severity"],
                    message=f.get("message"),
                    evidence_json=_j(f.get("evidence")),
                    hint=f.get("hint"),
                )
            )
        for tag in dict.fromkeys(tags):
            conn.execute(TAGS.insert().values(run_id=run_id, tag=tag))
        return int(run_id)

    def _save_test(self, conn: Connection, run_id: int, pos: int, is_ref: bool, t: dict[str, Any]) -> None:
        base = {
            "test_id",
            "rw",
            "bs_bytes",
            "iodepth",
            "numjobs",
            "fio_command",
            "cache_affected",
            "engine",
            "series",
            "id",
            *TEST_FIGURES,
        }
        row_id = conn.execute(
            TESTS.insert().values(
                run_id=run_id,
                position=pos,
                is_reference=is_ref,
                test_id=t["id"],
                rw=t.get("rw"),
                bs_bytes=t.get("bs_bytes"),
                iodepth=t.get("iodepth"),
                numjobs=t.get("numjobs"),
                fio_command=t.get("fio_command"),
                cache_affected=bool(t.get("cache_affected")),
                engine=t.get("engine"),
                extra_json=_j({k: v for k, v in t.items() if k not in base}),
                **{k: t.get(k) for k in TEST_FIGURES},
            )
        ).inserted_primary_key[0]
        points = t.get("series") or []
        if points:
            conn.execute(
                SERIES.insert(),
                [
                    {
                        "test_row_id": row_id,
                        "t_s": p["t_s"],
                        "read_mbps": p.get("read_mbps"),
                        "write_mbps": p.get("write_mbps"),
                        "iops": p.get("iops"),
                        "temperature_c": p.get("temperature_c"),
                    }
                    for p in points
                ],
            )

    # --- reading ------------------------------------------------------------------------------

    def list_runs(
        self, device: str | None = None, tag: str | None = None, limit: int | None = 50
    ) -> tuple[list[dict[str, Any]], int]:
        """Newest first: (rows, total matching)."""
        cond = []
        if device:
            like = f"%{device}%"
            cond.append(
                sa.or_(
                    RUNS.c.device_name == device.removeprefix("/dev/"),
                    RUNS.c.device_model.like(like),
                    RUNS.c.target.like(like),
                )
            )
        if tag:
            cond.append(RUNS.c.id.in_(sa.select(TAGS.c.run_id).where(TAGS.c.tag == tag)))
        where = sa.and_(*cond) if cond else sa.true()
        q = (
            sa.select(
                RUNS.c.id,
                RUNS.c.kind,
                RUNS.c.started_at,
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
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(q)]
            total = conn.execute(sa.select(sa.func.count()).select_from(RUNS).where(where)).scalar_one()
            tags = self._tags(conn, [r["id"] for r in rows])
        for r in rows:
            r["tags"] = tags.get(r["id"], [])
        return rows, total

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
        """A stored run as a document shaped like `check --json` (plus id, tags, note)."""
        with self.engine.connect() as conn:
            r = conn.execute(sa.select(RUNS).where(RUNS.c.id == run_id)).mappings().first()
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
        tests, reference = [], []
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
                **_unj(t["extra_json"], {}),
                "series": series.get(t["id"], []),
            }
            (reference if t["is_reference"] else tests).append(doc)
        device = _unj(r["device_json"], {}) or {"name": r["device_name"], "model": r["device_model"]}
        device["serial_sha256"] = r["device_serial_sha256"]
        return {
            "run": {
                "id": r["id"],
                "kind": r["kind"],
                "target": r["target"],
                "profile": r["profile"],
                "started_at": r["started_at"],
                "finished_at": r["finished_at"],
                "fio_version": r["fio_version"],
                "engine": r["engine"],
                "host": _unj(r["host_json"], {}),
                "device": r["device_name"],
                "size_bytes": r["size_bytes"],
                "notes": _unj(r["notes_json"], []),
                "tags": tags,
                "note": r["note"],
            },
            "device": device,
            "tests": tests,
            "reference": reference,
            "health": _unj(r["health_json"]),
            "findings": [
                {
                    "code": f["code"],
                    "severity": f["severity"],
                    "message": f["message"],
                    "evidence": _unj(f["evidence_json"], {}),
                    "hint": f["hint"],
                }
                for f in findings
            ],
            "summary": r["summary"],
        }


def _without_serial(device: dict[str, Any]) -> dict[str, Any]:
    """Serial numbers never reach the store in the clear: the hash has its own column."""
    return {k: v for k, v in device.items() if k not in ("serial", "serial_sha256")}


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def parse_run_ids(values: Sequence[str]) -> list[int]:
    ids = []
    for v in values:
        try:
            ids.append(int(v.lstrip("#")))
        except ValueError:
            raise UsageError(f"not a run id: {v!r} (see `disksleuth runs`)") from None
    return ids


def read_export(text: str, name: str = "export") -> list[dict[str, Any]]:
    """Run documents from an `export` file, checked before anything is written."""
    from disksleuth import SCHEMA
    from disksleuth.errors import ParseError

    try:
        bundle = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{name}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(bundle, dict) or bundle.get("schema") != SCHEMA or not isinstance(bundle.get("runs"), list):
        raise ParseError(f"{name}: not a disksleuth export (expected schema {SCHEMA} and a runs list)")
    docs = bundle["runs"]
    for i, doc in enumerate(docs):
        if not (
            isinstance(doc, dict)
            and isinstance(doc.get("run"), dict)
            and all(k in doc["run"] for k in ("target", "profile", "started_at"))
        ):
            raise ParseError(f"{name}: run {i + 1} is incomplete")
        # An export never carries a serial in the clear; drop one if a hand-made file does.
        doc["device"] = {k: v for k, v in (doc.get("device") or {}).items() if k != "serial"}
    return docs
