"""The results store: SQLite by default, PostgreSQL by URL, one SQLAlchemy Core code path.

Schema changes are numbered migrations recorded in `schema_migrations`; opening a store applies the
missing ones in order, each in its own transaction. A run is written in one transaction when it ends,
so a run killed half-way never leaves a trace, and never harms earlier runs (SQLite in WAL mode).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import stat
import urllib.parse
import uuid as uuid_mod
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from disksleuth import serials
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
        health = _without_health_serials(_unj(health_json))
        conn.execute(sa.text("UPDATE runs SET health_json = :h WHERE id = :i"), {"h": _j(health), "i": run_id})


MIGRATIONS: list[Callable[[Connection], None]] = [_v1, _v2, _v3, _v4]
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
SERIAL_KEY_NAME = "serial_key"
# The oldest schema read-only commands can read as it is, when the store cannot be written to upgrade it.
READABLE_SCHEMA = 3


def default_url() -> str:
    url = os.environ.get("DISKSLEUTH_DB")
    if url:
        return url
    return f"sqlite:///{os.path.join(data_dir(), 'results.sqlite')}"


def data_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "disksleuth")


SUPPORTED = "a file path, sqlite:///PATH or postgresql://USER@HOST/DB"


class StoreMissing(UsageError):
    """A read-only command was pointed at a store that does not exist (we never create one to read it)."""


class StoreError(EnvironmentProblem):
    """The store could not be read or written (locked, unreachable, refused); one line, no SQL."""


def resolve_url(text: str) -> str:
    """--db / DISKSLEUTH_DB as given -> a SQLAlchemy URL. A plain path is a SQLite file, as the README says."""
    if "://" not in text:
        if not text.strip():
            raise UsageError(f"--db {text!r}: give {SUPPORTED}")
        return "sqlite:///" + os.path.abspath(os.path.expanduser(text))
    scheme, _, rest = text.partition("://")
    scheme = scheme.lower()
    if scheme == "sqlite":
        return text
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        try:
            import psycopg  # noqa: F401  (psycopg 3: `pip install 'disksleuth[postgres]'`)
        except ImportError:
            raise EnvironmentProblem(
                "--db postgresql://...: the PostgreSQL driver is not installed; pip install 'disksleuth[postgres]'"
            ) from None
        return "postgresql+psycopg://" + rest
    what = f"{scheme}:// is not supported" if scheme else "a URL needs a scheme"
    raise UsageError(f"--db {redact_url(text)}: {what}; give {SUPPORTED}")


# libpq's secret connection parameters (the ones PQconndefaults marks "*", shown hidden in its own
# dialogs): password and sslpassword, and PostgreSQL 18's OAuth client secret. A URL may carry any of them
# in its query string (postgresql://u@h/db?password=...), which libpq and SQLAlchemy both accept.
_SECRET_QUERY_KEYS = ("password", "sslpassword", "oauth_client_secret")
MASK = "***"


def _secret_key(key: str) -> bool:
    key = key.lower()
    return key in _SECRET_QUERY_KEYS or "password" in key or "secret" in key


def redact_url(url: str) -> str:
    """A store URL fit for a message, a JSON field or a header: the userinfo password and every secret
    query parameter shown as ***. The one function every place that shows a store URL goes through."""
    if "://" not in url:
        return url  # a plain path holds no credentials
    try:
        parsed = sa.engine.make_url(url)
    except Exception:  # not even URL-shaped: the scheme is all we need to name
        return url.split("://", 1)[0] + "://..."
    secret_keys = [key for key in parsed.query if _secret_key(key)]
    if parsed.password is None and not secret_keys:
        return url  # nothing to hide: shown as the user typed it
    base = parsed.set(query={}).render_as_string(hide_password=True)
    if not parsed.query:
        return base
    pairs = []
    for key, values in parsed.query.items():  # kept in the order given, values quoted as SQLAlchemy reads them
        for value in values if isinstance(values, tuple) else (values,):
            shown = MASK if key in secret_keys else urllib.parse.quote_plus(value)
            pairs.append(f"{urllib.parse.quote_plus(key)}={shown}")
    return base + "?" + "&".join(pairs)


def redact_urls_in(text: str) -> str:
    """Text that may quote a store URL (a usage error echoing --db, an unexpected exception) with every
    URL in it passed through redact_url."""
    if "://" not in text:
        return text
    import re

    def redacted(match: re.Match[str]) -> str:
        url = match.group()
        # A message of ours already shows the URL masked, often followed by ':' — leave it as it reads.
        if _already_masked(url):
            return url
        # The punctuation after a URL that hides nothing is the sentence's, not the URL's: "--db http://...:"
        # came out as "--db http://..." (the colon taken as an empty port, the URL unparseable). A URL
        # with something to hide is masked whole, its last characters included.
        bare = url.rstrip(":,;.)")
        if bare != url and redact_url(bare) == bare:
            return url
        return redact_url(url)

    def quoted(match: re.Match[str]) -> str:
        # A quoted argument (argparse echoes repr()) is one URL even with a space or the other quote
        # in its password: "postgresql://u:hun ter2@h/db" leaked " ter2@h/db" to the plain pattern.
        quote = match.group(1) or match.group(3)
        url = match.group(2) if match.group(1) else match.group(4)
        return quote + (url if _already_masked(url) else redact_url(url)) + quote

    text = re.sub(r"(')([^']*://[^']*)'|(\")([^\"]*://[^\"]*)\"", quoted, text)
    return re.sub(r"[^\s'\"]+://[^\s'\"]+", redacted, text)


def _already_masked(url: str) -> bool:
    try:
        parsed = sa.engine.make_url(url)
    except Exception:
        return False
    values = [
        value
        for key, given in parsed.query.items()
        if _secret_key(key)
        for value in (given if isinstance(given, tuple) else (given,))
    ]
    masked = (MASK, *(MASK + end for end in ":,;.)"))
    return parsed.password in (None, MASK) and all(value in masked for value in values)


def _sqlite_path(url: sa.engine.URL) -> str | None:
    path = url.database
    return None if not path or path == ":memory:" or path.startswith("file:") else path


def _create_private(path: str) -> None:
    """The store holds host names, targets, notes and serial hashes: its directory 0700 when we make it,
    the file 0600. SQLite gives -wal and -shm the mode of the database file (unix VFS, robust_open)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    try:  # never through a dangling symlink someone planted where the store will be
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        if os.path.islink(path) and not os.path.exists(path):
            raise StoreError(f"{path} is a symbolic link to nothing; not creating a store through it") from None
        return  # another process made it a moment ago (concurrent first use)
    os.close(fd)


BUSY_TIMEOUT_MS = 5000
_FIRST_RUN = "`disksleuth check` or `disksleuth bench` saves the first run"


def _engine(url: str, create: bool, read_only: bool = False, timeout_s: int | None = None) -> Engine:
    try:
        parsed = sa.engine.make_url(url)
        backend = parsed.get_backend_name()
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise UsageError(f"--db {redact_url(url)}: not a database URL disksleuth can use ({SUPPORTED})") from exc
    kwargs: dict[str, Any] = {}
    if backend == "postgresql":
        # An unreachable server is one line after 10 s, not a hang of minutes (libpq waits forever by default).
        # A reader that must answer sooner (the exporter's scrape) gives its own bound, in whole seconds.
        connect_args: dict[str, Any] = {"connect_timeout": timeout_s or 10}
        if read_only:  # the server itself refuses any write of a read-only command
            connect_args["options"] = "-c default_transaction_read_only=on"
        kwargs["connect_args"] = connect_args
    elif backend == "sqlite":
        if (parsed.database or "").startswith("file:"):
            # A SQLite URI could name any file or device with any open mode; the checks below need a plain path.
            raise UsageError(f"--db {redact_url(url)}: give the store as a plain path, not a SQLite file: URI")
        path = _sqlite_path(parsed)
        query_only = read_only
        if path:
            _check_sqlite_file(path, create and not read_only)
            if not read_only and not _writable(path):
                # SQLite would only say "unable to open database file" (WAL needs its -shm beside the file).
                raise StoreError(f"cannot write to the results store {path}: it is read-only here")
            if read_only and not _writable(path):
                uri = _read_only_uri(path)
                kwargs["creator"] = lambda: sqlite3.connect(uri, uri=True, check_same_thread=False)
                kwargs["poolclass"] = sa.pool.NullPool
    try:
        engine = sa.create_engine(parsed, **kwargs)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ValueError) as exc:
        raise UsageError(f"--db {redact_url(url)}: not a database URL disksleuth can use ({SUPPORTED})") from exc
    except ImportError as exc:
        raise EnvironmentProblem(
            f"--db {redact_url(url)}: the database driver is missing ({exc.name}); pip install 'disksleuth[postgres]'"
        ) from exc
    if timeout_s and engine.dialect.name == "postgresql":

        @sa.event.listens_for(engine, "connect")
        def _pg_statement_timeout(dbapi_conn: Any, _record: Any) -> None:
            # Server side: a query stuck behind a lock ends after timeout_s. A SET (not libpq's `options`)
            # so a connection pooler that refuses startup options still works; committed, or a rollback undoes it.
            dbapi_conn.execute(f"SET statement_timeout = {int(timeout_s * 1000)}")
            dbapi_conn.commit()

    if engine.dialect.name == "sqlite":

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # Transactions are ours, not the driver's: pysqlite would otherwise run DDL outside any
            # transaction, and BEGIN IMMEDIATE (below) is how a writer takes the lock up front.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # first: the statements after it may wait too
            cur.execute("PRAGMA foreign_keys=ON")  # journal_mode=WAL: Store._wal(), never on a mere connect
            if query_only:
                # A reader of a store it could write opens it read-write, so the -wal and -shm files go when
                # it closes (a mode=ro reader leaves them behind); SQLite refuses every write on it.
                cur.execute("PRAGMA query_only=ON")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            # A writer takes the write lock when it begins (IMMEDIATE), so two writers never deadlock
            # upgrading read locks, and a migration's check-and-apply is one critical section.
            mode = conn.get_execution_options().get("sqlite_begin", "")
            conn.exec_driver_sql(f"BEGIN {mode}".strip())

    return engine


def _check_sqlite_file(path: str, create: bool) -> None:
    if not os.path.exists(path):
        if not create:
            raise StoreMissing(f"no results store at {path} yet; {_FIRST_RUN}")
        try:
            _create_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create the results store {path}: {exc.strerror}") from None
    elif os.path.isdir(path):
        raise UsageError(f"--db {path} is a directory; give the store's file, e.g. {path}/results.sqlite")
    elif not stat.S_ISREG(os.stat(path).st_mode):
        # SQLite would write its pages straight onto a block device (a mounted file system included).
        raise UsageError(f"--db {path} is not a regular file (a device, FIFO or socket); the store is a file")


def _writable(path: str) -> bool:
    """The store file and its folder (for -wal and -shm) can be written: not a read-only mount, and ours."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)


def _read_only_uri(path: str) -> str:
    """A store this process cannot write (a read-only mount, a file not ours) is opened read-only (mode=ro).
    A WAL database needs its -shm file, which a reader creates when missing; where it cannot (the folder is
    not writable) and none is there, no process is writing the store, so it is read as immutable: no
    -shm, no locks. An -shm that is there is used, so a WAL left behind on a read-only mount is read whole."""
    folder = os.path.dirname(os.path.abspath(path))
    immutable = not os.access(folder, os.W_OK) and not os.path.exists(path + "-shm")
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro" + ("&immutable=1" if immutable else "")


def _j(value: Any) -> str | None:
    return json.dumps(value, default=str) if value is not None else None


def _unj(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


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
        self.engine = _engine(resolve_url(given), create and not read_only, read_only, timeout_s)
        self.dialect = self.engine.dialect.name
        self._sqlite_file = _sqlite_path(self.engine.url) if self.dialect == "sqlite" else None
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
        if self._sqlite_file is None or _writable(self._sqlite_file):
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
            raise StoreMissing(f"no results store in {self.url} yet; {_FIRST_RUN}")
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
        except sa.exc.DBAPIError as exc:
            reason = _first_line(exc.orig)
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
            raise StoreError(f"cannot {action} the results store {self.url}: {_first_line(exc)}") from None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction that holds the store's write lock from its first statement: SQLite's
        BEGIN IMMEDIATE, PostgreSQL's transaction-scoped advisory lock. Check-then-write inside it is safe
        against other processes (migrations on first use, duplicate checks on import)."""
        with self.engine.connect() as conn:
            conn.execution_options(sqlite_begin="IMMEDIATE")
            with conn.begin():
                if self.dialect == "postgresql":
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
                yield conn

    # --- migrations ---------------------------------------------------------------------------

    def version(self) -> int:
        with self.engine.connect() as conn:
            return _version(conn)

    def _wal(self) -> None:
        """WAL mode (persistent in the file): readers never block the writer; a killed writer is rolled back.
        Set here, once the file is known to be a store or to become one, never by merely connecting: setting
        it writes the header, and a read of a 0-byte file once turned it into a 4 KiB database. On the raw
        connection, because the mode cannot change inside the transaction SQLAlchemy would begin."""
        with self.engine.connect() as conn:
            conn.connection.dbapi_connection.execute("PRAGMA journal_mode=WAL")  # type: ignore[union-attr]

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
        with self._writing() as conn:
            conn.execute(
                sa.text(
                    "CREATE TABLE IF NOT EXISTS schema_migrations "
                    "(version INTEGER PRIMARY KEY, applied_at VARCHAR(40) NOT NULL)"
                )
            )
            for version in range(_version(conn) + 1, target + 1):
                MIGRATIONS[version - 1](conn)
                conn.execute(
                    sa.text("INSERT INTO schema_migrations (version, applied_at) VALUES (:v, :t)"),
                    {"v": version, "t": _now()},
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

    def import_runs(self, docs: Sequence[dict[str, Any]]) -> list[tuple[int, bool]]:
        """Runs from an export, all or none, each once: a run whose identity (run.uuid, or for exports
        made before runs had one, its kind, start, host, target and profile) is already stored is
        skipped. Returns (run id, newly imported) per document."""
        out: list[tuple[int, bool]] = []
        with self._errors("write to"), self._writing() as conn:
            for doc in docs:
                run = doc["run"]
                run_uuid = run.get("uuid") or legacy_uuid(run)
                existing = conn.execute(sa.select(RUNS.c.id).where(RUNS.c.uuid == run_uuid)).scalar()
                if existing is not None:
                    out.append((int(existing), False))
                    continue
                doc = {**doc, "run": {**run, "uuid": run_uuid}}
                out.append((self._insert(conn, doc, run.get("tags") or (), run.get("note")), True))
        return out

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
    ) -> list[int]:
        """Delete the runs that match every criterion given (at least one is needed): started more than
        `older_than_s` ago, carrying `tag`, recorded on `host`; with `within`, only those of these ids (the
        ones a person was shown and agreed to). Returns their ids."""
        with self._errors("write to"), self._writing() as conn:
            ids = [run_id for run_id, _started in self._prunable(conn, older_than_s, tag, host, now)]
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
    ) -> list[tuple[int, str]]:
        """(id, started_at) of the runs prune() would delete, oldest first; nothing is deleted."""
        with self._errors("read"), self.engine.connect() as conn:
            return self._prunable(conn, older_than_s, tag, host, now)

    @staticmethod
    def _prunable(
        conn: Connection, older_than_s: float | None, tag: str | None, host: str | None, now: float | None
    ) -> list[tuple[int, str]]:
        if older_than_s is None and not tag and not host:
            raise UsageError("runs prune needs --older-than, --tag or --host (it never deletes everything)")
        import time
        from datetime import datetime

        cutoff = (now if now is not None else time.time()) - older_than_s if older_than_s is not None else None
        found = []
        for run_id, started_at in conn.execute(
            sa.select(RUNS.c.id, RUNS.c.started_at).where(_filters(tag=tag, host=host))
        ):
            try:
                started = datetime.fromisoformat(started_at).timestamp()
            except (TypeError, ValueError, OverflowError):
                if cutoff is not None:
                    continue  # no readable start time: never pruned by age
                started = math.inf
            if cutoff is not None and started >= cutoff:
                continue
            found.append((started, int(run_id), started_at))
        return [(run_id, started_at) for _t, run_id, started_at in sorted(found)]

    def _insert(self, conn: Connection, doc: dict[str, Any], tags: Sequence[str], note: str | None) -> int:
        run = doc["run"]
        device = doc.get("device") or {}
        host = run.get("host") or {}
        inserted = conn.execute(
            RUNS.insert().values(
                uuid=run.get("uuid") or str(uuid_mod.uuid4()),
                kind=run.get("kind") or "bench",  # null reads as the default, as legacy_uuid reads it
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
                device_serial_sha256=self._serial_id_of(device),  # load() reads it back
                device_transport=device.get("transport"),
                size_bytes=run.get("size_bytes"),
                summary=doc.get("summary"),
                host_json=_j(host),
                device_json=_j(_without_serial(device)),
                health_json=_j(_without_health_serials(doc.get("health"))),
                notes_json=_j(run.get("notes") or []),
                note=note,
            )
        ).inserted_primary_key
        assert inserted is not None  # an INSERT of one row always has its key
        run_id = inserted[0]
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
        inserted = conn.execute(
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
        ).inserted_primary_key
        assert inserted is not None  # an INSERT of one row always has its key
        row_id = inserted[0]
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
                **_unj(t["extra_json"], {}),
                "series": series.get(t["id"], []),
            }
            (reference if t["is_reference"] else tests).append(capped_latencies(doc))
        device = _unj(r["device_json"], {})
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
            "health": _without_health_serials(_unj(r["health_json"])),  # a store not yet at schema 4 may hold one
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


_PERCENTILES = ("p50", "p99", "p999")


def capped_latencies(test: dict[str, Any]) -> dict[str, Any]:
    """A stored test with no percentile above its max, overall and per direction. New runs are capped
    when made (analysis.results: fio reports a bucket's middle, which can pass the largest latency seen);
    runs stored or exported before that, or imported from elsewhere, are capped here, where every
    reader (show, report, compare, exporter, fleet) gets them."""
    out = dict(test)
    for prefix in ("", "read_", "write_"):
        top = out.get(f"{prefix}lat_max_us")
        if not isinstance(top, (int, float)) or isinstance(top, bool):
            continue
        for p in _PERCENTILES:
            key = f"{prefix}lat_{p}_us"
            value = out.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > top:
                out[key] = top
    return out


def _without_serial(device: dict[str, Any]) -> dict[str, Any]:
    """Serial numbers never reach the store in the clear: the keyed id has its own column."""
    return {k: v for k, v in device.items() if k not in ("serial", "serial_sha256", "serial_id")}


def _without_health_serials(health: Any) -> Any:
    """`check` never puts the serial in its health (health_to_dict), but a run from elsewhere may."""
    if not isinstance(health, dict):
        return health
    out = dict(health)
    for key in ("before", "after"):
        if isinstance(out.get(key), dict) and "serial" in out[key]:
            out[key] = {k: v for k, v in out[key].items() if k != "serial"}
    return out


def _filters(
    device: str | None = None, tag: str | None = None, host: str | None = None
) -> sa.ColumnElement[bool]:
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


def _version(conn: Connection) -> int:
    if not sa.inspect(conn).has_table("schema_migrations"):
        return 0
    return int(conn.execute(sa.text("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")).scalar_one())


def _first_line(exc: object) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


# Any fixed 64-bit number: the key of the advisory lock that serialises disksleuth's writers on PostgreSQL.
_PG_LOCK_KEY = int.from_bytes(b"dsleuth1", "big") & 0x7FFFFFFFFFFFFFFF

_RUN_NAMESPACE = uuid_mod.UUID("6d1f8a52-7c2e-4b7e-9a35-0d15c5e1e7a1")


def legacy_uuid(run: dict[str, Any]) -> str:
    """The identity of a run recorded before runs carried a uuid: what it ran, where and when. The v3
    migration gives stored runs the same value, so an old export imported twice is still found."""
    host = run["host"] if isinstance(run.get("host"), dict) else {}
    key = [
        run.get("kind") or "bench",
        run.get("started_at"),
        host.get("hostname"),
        run.get("target"),
        run.get("profile"),
    ]
    return str(uuid_mod.uuid5(_RUN_NAMESPACE, json.dumps(key)))


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


MAX_RUN_ID = 2**63 - 1  # SQLite's and PostgreSQL's largest integer key


def parse_run_ids(values: Sequence[str]) -> list[int]:
    ids = []
    for v in values:
        shown = v if len(v) <= 40 else v[:37] + "..."
        try:
            run_id = int(v.lstrip("#"))
        except ValueError:
            raise UsageError(f"not a run id: {shown!r} (see `disksleuth runs`)") from None
        if not 1 <= run_id <= MAX_RUN_ID:
            raise UsageError(f"no run {shown} (run ids are whole numbers from 1; see `disksleuth runs`)")
        ids.append(run_id)
    return ids


MAX_EXPORT_BYTES = 256 << 20
# What the decoded values of an export may take in memory, per byte of the file (plus a floor, so a
# small file is never refused for it). A real export takes 2x (as `export` indents it) to 3.6x (compact):
# series points are small dicts of floats. `{}` or a unique key took 25x with json.loads.
EXPORT_VALUES_PER_BYTE = 5
EXPORT_VALUES_FLOOR_BYTES = 64 << 20
_EXPORT_ENVELOPE_DEPTH = 2  # the bundle and its runs list, above each run document


def read_export(text: str | bytes, name: str = "export") -> list[dict[str, Any]]:
    """Run documents from an `export` file, checked deeply before anything is written: what passes
    renders in show, compare and report. Anything else is a ParseError with one line."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    bundle = _decode_export(data, name)
    del data, text  # the caller's bytes are the caller's; read_export_file keeps none
    return _export_docs(bundle, name)


def _decode_export(data: bytes, name: str) -> Any:
    """The export's JSON, decoded within a memory budget (store.boundedjson): a file whose values would
    take far more memory than any export's is refused as soon as that is clear, not after."""
    from disksleuth.doc import SCHEMA
    from disksleuth.doc.validate import MAX_DEPTH
    from disksleuth.errors import ParseError, json_problem
    from disksleuth.store import boundedjson

    not_export = f"{name}: not a disksleuth export (expected schema {SCHEMA} and a runs list)"
    start = boundedjson.skip_ws(data, 0)
    if data[start : start + 1] == b"[":
        raise ParseError(not_export)  # a list is never an export: refused before decoding any of it
    budget = max(EXPORT_VALUES_FLOOR_BYTES, EXPORT_VALUES_PER_BYTE * len(data))
    try:
        return boundedjson.loads(data, budget, MAX_DEPTH + _EXPORT_ENVELOPE_DEPTH)
    except boundedjson.JsonError as exc:
        raise ParseError(f"{name}: not JSON ({json_problem(exc.msg, exc.lineno)})") from None
    except boundedjson.Constant as exc:
        raise ParseError(f"{name}: not JSON ({exc.word} is not a number JSON allows)") from None
    except boundedjson.NotUtf8:
        raise ParseError(f"{name}: not UTF-8 text, not a disksleuth export") from None
    except boundedjson.TooDeep:
        raise ParseError(f"{name}: nested too deeply to be a disksleuth export") from None
    except boundedjson.OverBudget:
        raise ParseError(
            f"{name}: not a disksleuth export (its values would take over {budget >> 20} MiB of memory, "
            f"more than {EXPORT_VALUES_PER_BYTE} times its size)"
        ) from None
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise ParseError(f"{name}: not a disksleuth export ({_first_line(exc)[:80]})") from None


def _export_docs(bundle: Any, name: str) -> list[dict[str, Any]]:
    from disksleuth.doc import SCHEMA
    from disksleuth.doc.validate import check_run_doc
    from disksleuth.errors import ParseError

    if not isinstance(bundle, dict) or bundle.get("schema") != SCHEMA or not isinstance(bundle.get("runs"), list):
        raise ParseError(f"{name}: not a disksleuth export (expected schema {SCHEMA} and a runs list)")
    docs: list[dict[str, Any]] = bundle["runs"]
    for i, doc in enumerate(docs):
        if not (
            isinstance(doc, dict)
            and isinstance(doc.get("run"), dict)
            and all(k in doc["run"] for k in ("target", "profile", "started_at"))
        ):
            raise ParseError(f"{name}: run {i + 1} is incomplete")
        try:
            check_run_doc(doc, f"runs[{i}]")
        except RecursionError:
            raise ParseError(f"{name}: run {i + 1} is nested too deeply") from None
        except ParseError as exc:
            raise ParseError(f"{name}: run {i + 1} is not valid: {_clip(str(exc))}") from None
        # An export never carries a serial in the clear; drop one if a hand-made file does.
        doc["device"] = {k: v for k, v in (doc.get("device") or {}).items() if k != "serial"}
        if doc.get("health") is not None:
            doc["health"] = _without_health_serials(doc["health"])
    return docs


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_export_file(path: str) -> list[dict[str, Any]]:
    from disksleuth.infile import read_user_file

    data = read_user_file(path, MAX_EXPORT_BYTES, "a disksleuth export")
    bundle = _decode_export(data, path)
    del data  # the file's bytes are not needed beside its values
    return _export_docs(bundle, path)


def export_bundle(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from disksleuth.doc import SCHEMA

    return {"schema": SCHEMA, "kind": "export", "exported_at": _now(), "runs": list(docs)}


def write_export(path: str, docs: Sequence[dict[str, Any]]) -> None:
    """An export file that `import` reads back whole: each run meets the bounds import applies (the same
    check_run_doc), or nothing is written and the run is named."""
    from disksleuth.doc.validate import check_run_doc
    from disksleuth.errors import ParseError
    from disksleuth.outfile import write_private_text

    for doc in docs:
        try:
            check_run_doc(doc, "run")
        except ParseError as exc:
            shown = doc.get("run", {}).get("id")
            raise UsageError(
                f"run {shown} cannot be exported: import would refuse it ({_clip(str(exc))}); nothing written"
            ) from None
    write_private_text(path, json.dumps(export_bundle(docs), indent=1))


def unsaved_dirs() -> tuple[str, str]:
    """Where keep_unsaved puts a run the store refused: the data directory's, else the temporary one's."""
    import tempfile

    return os.path.join(data_dir(), "unsaved"), os.path.join(tempfile.gettempdir(), f"disksleuth-unsaved-{os.getuid()}")


def is_unsaved_file(path: str) -> bool:
    """Is this a file keep_unsaved wrote (it lies directly in one of its directories)?"""
    folder = os.path.dirname(os.path.realpath(path))
    return any(folder == os.path.realpath(d) for d in unsaved_dirs())


def keep_unsaved(doc: dict[str, Any], tags: Sequence[str], note: str | None) -> str:
    """A run the store refused, kept as an export file (0600, in a 0700 directory) that `disksleuth import`
    reads: under the data directory (~/.local/share/disksleuth/unsaved), else the temporary directory."""
    import time

    run = {**doc["run"], "tags": list(tags), "note": note}
    bundle = export_bundle([{**doc, "run": run}])
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"run-{stamp}-{(run.get('uuid') or uuid_mod.uuid4().hex)[:8]}.json"
    problems = []
    for folder in unsaved_dirs():
        path = os.path.join(folder, name)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                problems.append(f"{folder}: not a private directory of ours")  # e.g. planted in /tmp by another user
                continue
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(bundle, fh, indent=1, default=str)
            return path
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror}")
    raise StoreError("cannot keep the run in a file either (" + "; ".join(problems) + ")")


_DAY_S = 86400
# Only units nobody misreads: `m` is minutes to some and months to others (`--older-than 6m` deleted
# everything older than six minutes from someone who meant six months), so it is refused.
_AGE_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), _DAY_S),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 7 * _DAY_S),
    **dict.fromkeys(("mo", "mon", "mons", "month", "months"), 30 * _DAY_S),
    **dict.fromkeys(("y", "yr", "yrs", "year", "years"), 365 * _DAY_S),
}


def parse_age_s(text: str) -> float:
    """'30d', '12h', '2w', '90min', '6mo', '1y', '3 days' -> seconds (a bare number is days; a month is 30
    days, a year 365)."""
    import re

    shown = text if len(text or "") <= 40 else text[:37] + "..."
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text or "")
    if not m:
        raise UsageError(f"--older-than {shown!r}: give an age such as 30d, 12h, 2w, 90min, 6mo or 1y")
    unit = m.group(2).lower()
    if unit == "m":
        number = m.group(1)
        raise UsageError(f"--older-than {shown!r}: m could be minutes or months; write {number}min or {number}mo")
    if unit and unit not in _AGE_UNITS:
        raise UsageError(f"--older-than {shown!r}: unknown unit {m.group(2)!r}; use min, h, d, w, mo or y")
    value = float(m.group(1)) * _AGE_UNITS[unit or "d"]
    if not math.isfinite(value):
        raise UsageError(f"--older-than {shown!r}: too large")
    return value
