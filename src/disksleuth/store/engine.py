"""The database engine of a store: SQLite's pragmas and its private file, a read-only opening of a store
this process cannot write, PostgreSQL's timeouts; a bad URL or file is one line, never SQL.

A SQLite store holds host names, targets, notes and the key of its serial ids, and a root process writes
it, so it adopts no one else's file (issue 35). A new store is a file made here (O_EXCL, 0600). An existing
file is written only when it is this user's, private, one name, in a folder no one else can write, and a
SQLite database holding disksleuth's tables only; its -wal, -shm and -journal likewise. Everything is
checked on the path as it is (lstat, an O_NOFOLLOW descriptor), never through a link, before SQLite opens
the file read-write: no pragma, journal mode or table ever reaches a file that failed; and when SQLite
connects, the file it opened by name must still be the one checked. A reading command reads a store that
is not its own only when named (--db, DISKSLEUTH_DB), and as immutable: read-only, no lock, no -wal or
-shm opened or made."""

from __future__ import annotations

import dataclasses
import errno
import os
import pwd
import sqlite3
import stat
import urllib.parse
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from disksleuth.errors import EnvironmentProblem, StoreError, StoreMissing, UsageError, first_line
from disksleuth.store.schema import RUNS
from disksleuth.store.urls import SUPPORTED, data_dir, redact_url

# Every table a disksleuth store has held, whatever its schema version: the current schema's and the
# migrations' ledger. A table beyond these (sqlite_* aside) is another application's.
STORE_TABLES = frozenset(RUNS.metadata.tables) | {"schema_migrations"}
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite opens these by name beside the store, following links
_SQLITE_MAGIC = b"SQLite format 3\x00"
_SHARED_BITS = 0o066  # read or write for the group or others
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO swapped in never hangs


def sqlite_path(url: sa.engine.URL) -> str | None:
    path = url.database
    return None if not path or path == ":memory:" or path.startswith("file:") else path


@dataclasses.dataclass(frozen=True)
class _Found:
    """The store file the checks looked at (its device and inode, to know it again when SQLite connects),
    and why this process must not write it (None: it may)."""

    dev: int
    ino: int
    unfit: str | None


def _create_private(path: str, folder: str) -> None:
    """The store's folder 0700 when we make it, the file 0600: SQLite gives -wal and -shm the mode of the
    database file (unix VFS, robust_open). Never through a link (O_NOFOLLOW) nor over a file (O_EXCL)."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    unfit = _folder_unfit(folder)
    if unfit:  # refused before any file is made, so nothing is left behind there
        raise StoreError(f"not creating the results store {path}: {unfit}; {_better_folder()}")
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return  # another process made it a moment ago (concurrent first use), or a link is there: checked next
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
    finally:
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
    path: str | None = None
    found: _Found | None = None
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
        if path:
            found = _check_sqlite_file(path, create and not read_only)
            if not read_only:
                if found.unfit:
                    raise StoreError(f"not writing the results store {path}: {found.unfit}")
                if not _may_write(path):
                    # SQLite would only say "unable to open database file" (WAL needs its -shm beside the file).
                    raise StoreError(f"cannot write to the results store {path}: it is read-only here")
            elif found.unfit and not _named(path):
                raise StoreError(f"not reading the results store {path}: {found.unfit}")
            if read_only and (found.unfit or not _may_write(path)):
                uri = _read_only_uri(path, immutable=found.unfit is not None)
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
            if path and found:
                # The file SQLite just opened by name is the one checked, not one swapped in since.
                _still_the_checked_file(path, found)
            # Transactions are ours, not the driver's: pysqlite would otherwise run DDL outside any
            # transaction, and BEGIN IMMEDIATE (below) is how a writer takes the lock up front.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # first: the statements after it may wait too
            cur.execute("PRAGMA foreign_keys=ON")  # journal_mode=WAL: Store._wal(), never on a mere connect
            if read_only:
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


def _check_sqlite_file(path: str, create: bool) -> _Found:
    """The store file at `path` as it is: refused when it is a link, not a file, not SQLite, or another
    application's database; made (O_EXCL) when missing and `create`. Its `unfit` says why this process
    must not write it."""
    folder = os.path.dirname(os.path.abspath(path))
    st = _lstat(path)
    if st is None:
        if not create:
            raise StoreMissing(f"no results store at {path} yet; {FIRST_RUN}")
        try:
            _create_private(path, folder)
        except OSError as exc:
            raise StoreError(f"cannot create the results store {path}: {exc.strerror}") from None
        st = _lstat(path)
        if st is None:
            raise StoreError(f"the results store {path} went away while it was being made; not opening it")
    if stat.S_ISLNK(st.st_mode):
        target = "to nothing" if not os.path.exists(path) else "to another file"
        raise UsageError(
            f"--db {path} is a symbolic link {target}; a store is never opened through one (give the file itself)"
        )
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"--db {path} is a directory; give the store's file, e.g. {path}/results.sqlite")
    if not stat.S_ISREG(st.st_mode):
        # SQLite would write its pages straight onto a block device (a mounted file system included).
        raise UsageError(f"--db {path} is not a regular file (a device, FIFO or socket); the store is a file")
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"--db {path} is a symbolic link; a store is never opened through one") from None
        raise StoreError(f"cannot reach the results store {path}: {_denied(exc, st)}") from None
    try:
        fst = os.fstat(fd)
        header = os.pread(fd, 100, 0)
    finally:
        os.close(fd)
    if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(fst.st_mode):
        raise StoreError(f"the results store {path} was replaced while it was being opened; not opening it")
    unfit = _unfit(path, fst, folder)
    _check_content(path, header, fst.st_size, create, trusted=unfit is None)
    found = _Found(fst.st_dev, fst.st_ino, unfit)
    _still_the_checked_file(path, found)  # not swapped while its tables were read
    return found


def _lstat(path: str) -> os.stat_result | None:
    """The path's own status, None when nothing is there. EACCES on a folder of the path is not "missing"
    (os.path.exists says False to both): the store may well be there, out of this user's reach."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot reach the results store {path}: {exc.strerror}") from None


def _denied(exc: OSError, st: os.stat_result) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"{exc.strerror} (it belongs to {_user(st.st_uid)}, mode {stat.S_IMODE(st.st_mode):04o})"
    return exc.strerror or str(exc)


def _check_content(path: str, header: bytes, size: int, create: bool, trusted: bool) -> None:
    """Refuse, before SQLite opens it read-write, a file that is not SQLite or is another application's
    database. A 0-byte file is what _create_private makes (and another process may be about to fill)."""
    if size == 0:
        if not create:
            raise StoreError(f"{path} is not a disksleuth results store (an empty file)")
        return
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise StoreError(f"{path} is not a disksleuth results store (not a SQLite database); it is left as it is")
    application_id = int.from_bytes(header[68:72], "big")
    if application_id:
        raise StoreError(
            f"{path} is another application's SQLite database (application id {application_id:#x}), "
            "not a disksleuth results store; it is left as it is"
        )
    tables = _tables(path, trusted)
    foreign = sorted(name for name in tables if name not in STORE_TABLES)
    if foreign or (tables and "schema_migrations" not in tables):
        shown = ", ".join((foreign or sorted(tables))[:5]) + (", ..." if len(foreign or tables) > 5 else "")
        raise StoreError(
            f"{path} is another application's SQLite database (tables {shown}), not a disksleuth results store; "
            "it is left as it is"
        )
    if not tables and not create:
        raise StoreError(f"{path} is not a disksleuth results store (no disksleuth tables in it)")


def _tables(path: str, trusted: bool) -> set[str]:
    """The file's tables, read as immutable: read-only, no lock, no -wal, -shm or -journal opened or made
    (SQLite reads an immutable file as it would a temporary one). A file whose side files passed the checks
    (`trusted`) is read with them where its -wal holds pages (an application's new WAL database has its
    tables there only, its main file a bare header), and again so when the immutable read fails (a store
    of ours that another process is turning into a WAL database this instant may be read torn)."""
    base = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    uris = [base + "&immutable=1"]
    if trusted:
        uris = [base] if _size(path + "-wal") else [*uris, base]
    for n, uri in enumerate(uris, 1):
        try:
            rows = _schema_rows(uri)
        except sqlite3.Error as exc:
            if n == len(uris):
                raise StoreError(f"{path} is not a disksleuth results store: {first_line(exc)}") from None
            continue
        return {name for name in rows if not name.startswith("sqlite_")}
    return set()  # not reached: the last attempt returns or raises


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _schema_rows(uri: str) -> list[str]:
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        return [str(name) for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    finally:
        con.close()


def _unfit(path: str, st: os.stat_result, folder: str) -> str | None:
    """Why this process must not write the store file `st` (None: it may): another user's file, one the
    group or others may read or write, a file with a second name (a hard link to a file of someone's),
    side files (-wal, -shm, -journal) that are links or not private, a folder anyone else can write
    (where a link could be put in place of a side file, which SQLite opens by name). One phrase for each,
    then how to mend them."""
    why: list[str] = []
    mend: list[str] = []
    _file_unfit(path, st, "it", why, mend)
    for suffix in SIDE_FILES:
        side = path + suffix
        try:
            sst = os.lstat(side)
        except FileNotFoundError:
            continue
        except OSError as exc:
            why.append(f"its {suffix} file cannot be checked ({exc.strerror})")
            continue
        if not stat.S_ISREG(sst.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(sst.st_mode) else "not a regular file"
            why.append(f"its {suffix} file {side} is {kind}")
            mend.append(f"rm {side}")
        else:
            _file_unfit(side, sst, f"its {suffix} file", why, mend)
    folder_unfit = _folder_unfit(folder)
    if folder_unfit:
        why.append(folder_unfit)
        mend.append(_better_folder())
    if not why:
        return None
    return "; ".join(why) + (f"; to use it as yours: {'; '.join(mend)}" if mend else "")


def _file_unfit(path: str, st: os.stat_result, name: str, why: list[str], mend: list[str]) -> None:
    me = os.geteuid()
    if st.st_uid != me:
        why.append(f"{name} belongs to {_user(st.st_uid)}, not {_user(me)}")
        mend.append(f"chown {_user(me)} {path}")
    shared = st.st_mode & _SHARED_BITS
    if shared:
        who = "its group" if not shared & 0o006 else "others" if not shared & 0o060 else "its group and others"
        can = " and ".join(w for w, bits in (("read", 0o044), ("write", 0o022)) if shared & bits)
        why.append(f"{who} may {can} {name} (mode {stat.S_IMODE(st.st_mode):04o})")
        mend.append(f"chmod 600 {path}")
    if st.st_nlink > 1:
        why.append(f"{name} has {st.st_nlink} names (hard links): another could be anyone's file")
        mend.append(f"use a copy of its own (cp {path} NEW)")


def _folder_unfit(folder: str) -> str | None:
    """A folder another user owns or anyone may write: between any check here and SQLite's own open they
    could put a file of theirs where SQLite makes the -wal, -shm or -journal (O_CREAT without O_EXCL), and
    read the store's pages written into it. SQLite opens them O_NOFOLLOW, so a link there fails, but a
    sticky /tmp is no help against a file: fs.protected_regular may be off (it is on this very machine).
    The group is not counted (often a user's private group)."""
    try:
        st = os.stat(folder)
    except OSError as exc:
        return f"its folder {folder} cannot be checked ({exc.strerror})"
    if st.st_mode & 0o002:
        return f"anyone may write its folder {folder} (mode {stat.S_IMODE(st.st_mode):04o})"
    if st.st_uid not in (os.geteuid(), 0):
        return f"its folder {folder} belongs to {_user(st.st_uid)}"
    return None


def _better_folder() -> str:
    return f"keep the store in a folder only you can write, such as {data_dir()}"


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _named(path: str) -> bool:
    """The store was named (--db, DISKSLEUTH_DB), not found at the default place: only then is a store
    that is not this user's own read (read-only)."""
    return os.path.abspath(path) != os.path.abspath(os.path.join(data_dir(), "results.sqlite"))


def _still_the_checked_file(path: str, found: _Found) -> None:
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise StoreError(f"cannot reach the results store {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or (st.st_dev, st.st_ino) != (found.dev, found.ino):
        raise StoreError(f"the results store {path} was replaced while it was being opened; not opening it")


def _may_write(path: str) -> bool:
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)


def writable(path: str) -> bool:
    """The store file and its folder (for -wal and -shm) can be written (not a read-only mount), and the
    store is this user's own to write (see _unfit): a reader upgrades an old store only then."""
    st = _lstat_quiet(path)
    if st is None or not stat.S_ISREG(st.st_mode) or not _may_write(path):
        return False
    return _unfit(path, st, os.path.dirname(os.path.abspath(path))) is None


def _lstat_quiet(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _read_only_uri(path: str, immutable: bool = False) -> str:
    """A store this process cannot write (a read-only mount, a file not ours) is opened read-only (mode=ro).
    A WAL database needs its -shm file, which a reader creates when missing; where it cannot (the folder is
    not writable) and none is there, no process is writing the store, so it is read as immutable: no
    -shm, no locks. An -shm that is there is used, so a WAL left behind on a read-only mount is read whole.
    A store that is not this user's own (`immutable`) is always read so: its side files are never opened,
    whoever may have put what there (runs still in its -wal are not seen)."""
    folder = os.path.dirname(os.path.abspath(path))
    immutable = immutable or (not os.access(folder, os.W_OK) and not os.path.exists(path + "-shm"))
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro" + ("&immutable=1" if immutable else "")
