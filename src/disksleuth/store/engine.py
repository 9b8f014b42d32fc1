"""The database engine of a store: SQLite's pragmas and its private file, a read-only opening of a store
this process cannot write, PostgreSQL's timeouts; a bad URL or file is one line, never SQL."""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from disksleuth.errors import EnvironmentProblem, StoreError, StoreMissing, UsageError
from disksleuth.store.urls import SUPPORTED, redact_url


def sqlite_path(url: sa.engine.URL) -> str | None:
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
FIRST_RUN = "`disksleuth check` or `disksleuth bench` saves the first run"


def make_engine(url: str, create: bool, read_only: bool = False, timeout_s: int | None = None) -> Engine:
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
        path = sqlite_path(parsed)
        query_only = read_only
        if path:
            _check_sqlite_file(path, create and not read_only)
            if not read_only and not writable(path):
                # SQLite would only say "unable to open database file" (WAL needs its -shm beside the file).
                raise StoreError(f"cannot write to the results store {path}: it is read-only here")
            if read_only and not writable(path):
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
            raise StoreMissing(f"no results store at {path} yet; {FIRST_RUN}")
        try:
            _create_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create the results store {path}: {exc.strerror}") from None
    elif os.path.isdir(path):
        raise UsageError(f"--db {path} is a directory; give the store's file, e.g. {path}/results.sqlite")
    elif not stat.S_ISREG(os.stat(path).st_mode):
        # SQLite would write its pages straight onto a block device (a mounted file system included).
        raise UsageError(f"--db {path} is not a regular file (a device, FIFO or socket); the store is a file")


def writable(path: str) -> bool:
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
