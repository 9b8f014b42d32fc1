"""The store's tables and their numbered migrations.

Schema changes are numbered migrations recorded in `schema_migrations`; opening a store applies the
missing ones in order (Store.migrate). The tables below them are the current schema, for queries.
"""

from __future__ import annotations

import json
import uuid as uuid_mod
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from disksleuth import serials
from disksleuth.errors import StoreError
from disksleuth.store.documents import legacy_uuid, without_health_serials

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


def _v3(conn: Connection) -> None:
    """A stable identity per run (kept by export and import, so an import never duplicates), and an
    index for `runs --host` and the fleet view."""
    conn.execute(sa.text("ALTER TABLE runs ADD COLUMN uuid VARCHAR(36)"))
    seen: set[str] = set()
    rows = conn.execute(sa.text("SELECT id, kind, started_at, hostname, target, profile FROM runs ORDER BY id"))
    for run_id, kind, started_at, hostname, target, profile in rows.fetchall():
        run = {"kind": kind, "started_at": started_at, "host": {"hostname": hostname}, "target": target}
        ident = legacy_uuid({**run, "profile": profile})
        if ident in seen:  # an earlier import duplicated this run: keep both, each with its own identity
            ident = str(uuid_mod.uuid4())
        seen.add(ident)
        conn.execute(sa.text("UPDATE runs SET uuid = :u WHERE id = :i"), {"u": ident, "i": run_id})
    conn.execute(sa.text("CREATE UNIQUE INDEX ux_runs_uuid ON runs (uuid)"))
    conn.execute(sa.text("CREATE INDEX ix_runs_hostname ON runs (hostname)"))


def _v4(conn: Connection) -> None:
    """Serial hashes become keyed ids (serials.py). The key, DISKSLEUTH_SERIAL_KEY if set else a new random
    one, is kept in the store, so every host sharing it gives a drive the same id; the plain SHA-256 each
    run kept is signed with it, which is exactly the id the same serial gets from now on. A serial that an
    imported run carried in the clear inside its health is dropped."""
    conn.execute(sa.text("CREATE TABLE meta (name VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL)"))
    key = serials.key_from_env() or serials.new_key()
    conn.execute(sa.text("INSERT INTO meta (name, value) VALUES (:n, :v)"), {"n": SERIAL_KEY_NAME, "v": key.hex()})
    rows = conn.execute(
        sa.text("SELECT id, device_serial_sha256 FROM runs WHERE device_serial_sha256 IS NOT NULL")
    ).fetchall()
    if rows:
        conn.execute(
            sa.text("UPDATE runs SET device_serial_sha256 = :v WHERE id = :i"),
            [{"v": serials.id_from_plain_digest(digest, key), "i": run_id} for run_id, digest in rows],
        )
    pattern = '%"serial"%'
    for run_id, health_json in conn.execute(
        sa.text("SELECT id, health_json FROM runs WHERE health_json LIKE :p"), {"p": pattern}
    ).fetchall():
        health = without_health_serials(from_json(health_json))
        conn.execute(sa.text("UPDATE runs SET health_json = :h WHERE id = :i"), {"h": to_json(health), "i": run_id})


def _v5(conn: Connection) -> None:
    """Health over time: every reading of a drive's counters worth keeping (store.health decides which), and
    the counter values a person acknowledged. Both are keyed by the drive (its keyed serial id, else host and
    device), not by run: the exporter and `health` read drives without any run. Only new tables: nothing in an
    existing store changes, so the step is safe to repeat on SQLite and PostgreSQL alike (DDL in a transaction)."""
    md = sa.MetaData()
    sa.Table(
        "health_readings",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("drive_key", sa.String(320), nullable=False),
        sa.Column("read_at_s", sa.Float, nullable=False),  # epoch seconds: sorting and age
        sa.Column("read_at", sa.String(40), nullable=False),  # the same instant, ISO 8601 UTC, for people
        sa.Column("stored_at", sa.String(40), nullable=False),  # when written: tells clock skew from old files
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("device_name", sa.String(64)),
        sa.Column("serial_id", sa.String(64)),
        sa.Column("model", sa.String(255)),
        sa.Column("firmware", sa.String(64)),
        sa.Column("protocol", sa.String(16)),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("smart_passed", sa.Boolean),
        sa.Column("temperature_c", sa.Float),
        sa.Column("percentage_used", sa.Integer),
        sa.Column("available_spare_pct", sa.Integer),
        sa.Column("power_on_hours", sa.BigInteger),
        sa.Column("counters_json", sa.Text, nullable=False),
    )
    sa.Table(
        "health_acks",
        md,
        sa.Column("drive_key", sa.String(320), primary_key=True),
        sa.Column("attribute", sa.String(255), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
        sa.Column("acked_at_s", sa.Float, nullable=False),
        sa.Column("hostname", sa.String(255)),
        sa.Column("device_name", sa.String(64)),
    )
    md.create_all(conn)
    conn.execute(sa.text("CREATE INDEX ix_health_readings_drive ON health_readings (drive_key, read_at_s)"))
    conn.execute(
        sa.text("CREATE INDEX ix_health_readings_device ON health_readings (hostname, device_name, read_at_s)")
    )


def _v6(conn: Connection) -> None:
    """The fleet at scale: the few figures `fleet` shows of a run, as columns (they were inside device_json and the
    tests, so finding each device's newest ones read every run), filled by Store.save and here from what each
    stored run already holds; an index that answers "each device's newest run" and its figures by itself, and one
    on the serial id (baselines and history by serial)."""
    for column in FLEET_COLUMNS:
        conn.execute(sa.text(f"ALTER TABLE runs ADD COLUMN {column} FLOAT"))
    for column, figure in (("seq_read_mbps", "read_mbps"), ("seq_write_mbps", "write_mbps")):
        conn.execute(
            sa.text(
                f"UPDATE runs SET {column} = (SELECT MAX(t.{figure}) FROM tests t WHERE t.run_id = runs.id "
                "AND t.is_reference = :no AND t.test_id LIKE 'SEQ%')"
            ),
            {"no": False},
        )
    last_id = 0
    while True:  # in slices: a store of 100,000 runs never holds every device document at once
        rows = conn.execute(
            sa.text("SELECT id, device_json FROM runs WHERE id > :last ORDER BY id LIMIT 2000"), {"last": last_id}
        ).fetchall()
        if not rows:
            break
        last_id = rows[-1][0]
        ceilings = [
            {"c": c, "i": run_id} for run_id, device_json in rows if (c := link_ceiling_mbps(from_json(device_json)))
        ]
        if ceilings:
            conn.execute(sa.text("UPDATE runs SET ceiling_mbps = :c WHERE id = :i"), ceilings)
    conn.execute(
        sa.text(
            "CREATE INDEX ix_runs_fleet ON runs "
            "(hostname, device_name, id, seq_read_mbps, seq_write_mbps, ceiling_mbps)"
        )
    )
    conn.execute(sa.text("CREATE INDEX ix_runs_serial_id ON runs (device_serial_sha256, id)"))


def _v7(conn: Connection) -> None:
    """Run ids are never reused (issue 40): a report that cites #14 keeps meaning that run after `runs delete` or
    `prune`. SQLite hands out max(id)+1 unless the table says AUTOINCREMENT, which only a rebuild adds (the
    rebuild needs foreign keys off, which Store.migrate sets before the transaction begins); PostgreSQL's serial
    sequence already never goes back, and becomes an identity column started past both the sequence and the ids."""
    if conn.dialect.name == "sqlite":
        _sqlite_autoincrement_runs(conn)
    elif conn.dialect.name == "postgresql":
        _postgres_identity_runs(conn)


def _sqlite_autoincrement_runs(conn: Connection) -> None:
    if conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one():
        # DROP TABLE runs would delete every test, finding and tag through ON DELETE CASCADE.
        raise StoreError("the run-id migration needs SQLite's foreign keys off")
    columns = conn.exec_driver_sql("PRAGMA table_info(runs)").fetchall()  # cid, name, type, notnull, default, pk
    indexes = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' AND sql IS NOT NULL"
    ).fetchall()
    defs = ["id INTEGER PRIMARY KEY AUTOINCREMENT"]
    for _cid, name, type_, notnull, default, _pk in columns:
        if name == "id":
            continue
        defs.append(
            f'"{name}" {type_}' + (" NOT NULL" if notnull else "") + (f" DEFAULT {default}" if default else "")
        )
    names = ", ".join(f'"{c[1]}"' for c in columns)
    conn.exec_driver_sql(f"CREATE TABLE runs_v7 ({', '.join(defs)})")
    conn.exec_driver_sql(f"INSERT INTO runs_v7 ({names}) SELECT {names} FROM runs")  # sets sqlite_sequence
    conn.exec_driver_sql("DROP TABLE runs")
    conn.exec_driver_sql("ALTER TABLE runs_v7 RENAME TO runs")
    for (sql,) in indexes:
        conn.exec_driver_sql(sql)
    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise StoreError(f"the run-id migration broke {len(broken)} references to runs")


def _postgres_identity_runs(conn: Connection) -> None:
    sequence = conn.execute(sa.text("SELECT pg_get_serial_sequence('runs', 'id')")).scalar_one()
    high = int(conn.execute(sa.text("SELECT COALESCE(MAX(id), 0) FROM runs")).scalar_one())
    conn.execute(sa.text("ALTER TABLE runs ALTER COLUMN id DROP DEFAULT"))
    if sequence:
        last, called = conn.execute(sa.text(f"SELECT last_value, is_called FROM {sequence}")).one()
        high = max(high, int(last) if called else int(last) - 1)
        conn.execute(sa.text(f"DROP SEQUENCE {sequence}"))
    conn.execute(
        sa.text(f"ALTER TABLE runs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (START WITH {high + 1})")
    )


def _v8(conn: Connection) -> None:
    """`watch` (issue 38): each pass's state per host (what the next pass is compared with), and the messages it
    made, per notification target (a keyed hash of its URL: a password in a URL never reaches the store), until
    they are sent. Only new tables, in SQLAlchemy types: the same step on SQLite and PostgreSQL."""
    md = sa.MetaData()
    sa.Table(
        "watch_passes",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("at_s", sa.Float, nullable=False),  # epoch seconds of the pass
        sa.Column("at", sa.String(40), nullable=False),  # the same instant, ISO 8601 UTC, for people
        sa.Column("drives", sa.Integer, nullable=False),
        sa.Column("worst", sa.String(16), nullable=False),
        sa.Column("state_json", sa.Text, nullable=False),  # every drive's findings and counters, as diffed
    )
    sa.Table(
        "watch_outbox",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("created_at_s", sa.Float, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),  # change, heartbeat, overdue
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("held", sa.String(32)),  # why it waits (quiet_hours, failed); None once sent
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("sent_at_s", sa.Float),
        sa.Column("last_error", sa.Text),
    )
    md.create_all(conn)
    conn.execute(sa.text("CREATE INDEX ix_watch_passes_host ON watch_passes (hostname, at_s)"))
    conn.execute(sa.text("CREATE INDEX ix_watch_outbox_pending ON watch_outbox (hostname, target, sent_at_s)"))


# What `fleet` reads of a run besides its names: columns since schema 6 (FLEET_SCHEMA).
FLEET_COLUMNS = ("ceiling_mbps", "seq_read_mbps", "seq_write_mbps")
FLEET_SCHEMA = 6


def link_ceiling_mbps(device: Any) -> float | None:
    """The current ceiling of a device document's link chain, None when unknown or not a number. A run under a
    cgroup I/O limit (issue 36) counts it in current_ceiling_mbps; the device's own is its links' alone."""
    link = device.get("link") if isinstance(device, dict) else None
    key = "link_ceiling_mbps" if isinstance(link, dict) and "link_ceiling_mbps" in link else "current_ceiling_mbps"
    value = link.get(key) if isinstance(link, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def fleet_figures(doc: dict[str, Any]) -> dict[str, float | None]:
    """The FLEET_COLUMNS of a run document: its link ceiling and its best sequential read and write (the
    sequential tests, reference runs left out), as the v6 migration computes them for stored runs."""
    out: dict[str, float | None] = {"ceiling_mbps": link_ceiling_mbps(doc.get("device"))}
    for column, figure in (("seq_read_mbps", "read_mbps"), ("seq_write_mbps", "write_mbps")):
        values = [
            float(v)
            for t in doc.get("tests") or []
            if str(t.get("id") or "").startswith("SEQ")
            and isinstance(v := t.get(figure), (int, float))
            and not isinstance(v, bool)
        ]
        out[column] = max(values) if values else None
    return out


MIGRATIONS: list[Callable[[Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8]
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
            "device_serial_sha256",  # the name from schema 1; keyed ids (serials.py) since schema 4
            "device_transport",
            "size_bytes",
            "summary",
            "host_json",
            "device_json",
            "health_json",
            "notes_json",
            "note",
            "uuid",
            *FLEET_COLUMNS,
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
META = sa.Table("meta", _md, sa.Column("name"), sa.Column("value"))
HEALTH_READINGS = sa.Table(
    "health_readings",
    _md,
    *[
        sa.Column(n)
        for n in (
            "id",
            "drive_key",
            "read_at_s",
            "read_at",
            "stored_at",
            "hostname",
            "device_name",
            "serial_id",
            "model",
            "firmware",
            "protocol",
            "source",
            "smart_passed",
            "temperature_c",
            "percentage_used",
            "available_spare_pct",
            "power_on_hours",
            "counters_json",
        )
    ],
)
HEALTH_ACKS = sa.Table(
    "health_acks",
    _md,
    *[sa.Column(n) for n in ("drive_key", "attribute", "value", "acked_at_s", "hostname", "device_name")],
)
HEALTH_SCHEMA = 5  # the first schema with health_readings and health_acks
WATCH_PASSES = sa.Table(
    "watch_passes", _md, *[sa.Column(n) for n in ("id", "hostname", "at_s", "at", "drives", "worst", "state_json")]
)
WATCH_OUTBOX = sa.Table(
    "watch_outbox",
    _md,
    *[
        sa.Column(n)
        for n in (
            "id", "hostname", "target", "created_at_s", "kind", "severity", "title", "body", "held", "attempts",
            "sent_at_s", "last_error",
        )
    ],
)
WATCH_SCHEMA = 8  # the first schema with watch_passes and watch_outbox
SERIAL_KEY_NAME = "serial_key"
# The oldest schema read-only commands can read as it is, when the store cannot be written to upgrade it.
READABLE_SCHEMA = 3


def version_of(conn: Connection) -> int:
    """The schema a store is at: 0 for a database without disksleuth's tables."""
    if not sa.inspect(conn).has_table("schema_migrations"):
        return 0
    return int(conn.execute(sa.text("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")).scalar_one())


def to_json(value: Any) -> str | None:
    """A value for a *_json column."""
    return json.dumps(value, default=str) if value is not None else None


def from_json(text: str | None, default: Any = None) -> Any:
    """A *_json column's value, `default` when empty."""
    return json.loads(text) if text else default
