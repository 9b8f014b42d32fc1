"""The results store adopts no one else's file (issue 35, defects 1 and 15).

Before, `store/engine.py` refused only a dangling link or a file that was not regular: root's `import --db P`
turned a file another user made (0666) into a store owned by that user, holding root's runs and the key of the
serial ids; a link planted to a root-owned file made that file a store; a link to (or the path of) another
application's SQLite database got disksleuth's tables beside its own and its journal_mode switched to wal. A
reader as another user was told "no results store ... yet" of a store it only could not reach. Every case here
is the reproduction, with real SQLite files and the command line (in-process, or as user nobody via runuser).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, sample_export
from test_store import _doc

import disksleuth
from disksleuth.errors import StoreError
from disksleuth.store.db import Store
from disksleuth.store.engine import make_engine
from disksleuth.store.schema import SCHEMA_VERSION

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: files owned by another user")
SCHEMA3_STORE = os.path.join(DATA, "store", "schema3-plain-serials.sqlite")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(res) -> str:  # noqa: ANN001
    assert res.code == 2, (res.out, res.err)
    assert res.err.count("\n") == 1 and "Traceback" not in res.err, res.err
    return res.err


def _store(path: Path, runs: int = 1) -> Path:
    with Store(str(path)) as store:
        for i in range(runs):
            store.save(_doc(100.0 + i, 1000.0, f"drive {i}", started=f"2026-11-21T10:00:{i:02d}+0000"))
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)) == [path.name]
    return path


def _app_database(path: Path, journal_mode: str = "delete") -> Path:
    """Another application's database: its own tables and rows, in its own journal mode."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"PRAGMA journal_mode={journal_mode}")
    con.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    con.execute("CREATE TABLE moz_bookmarks (id INTEGER PRIMARY KEY, fk INTEGER)")
    con.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
    con.close()
    os.chmod(path, 0o600)  # private and root's: only its tables say it is not a store
    return path


def _look(path: Path) -> tuple[str, str, list[str]]:
    """A database's bytes, journal mode and tables, read without changing anything."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        mode = con.execute("PRAGMA journal_mode").fetchone()[0]
        tables = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    finally:
        con.close()
    # immutable: the header's own word (bytes 18-19: 1 rollback, 2 WAL) is the persistent mode
    persistent = {1: "delete", 2: "wal"}[path.read_bytes()[18]]
    assert mode in ("delete", "wal", persistent)
    return _digest(path), persistent, tables


def _beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


@contextlib.contextmanager
def _open_folder() -> Iterator[Path]:
    """A folder user nobody can enter (pytest's tmp_path is root's 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="disksleuth-adoption-"))
    try:
        os.chmod(folder, 0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs root and runuser")
    src = os.path.dirname(os.path.dirname(os.path.abspath(disksleuth.__file__)))
    env = ["env", "-i", f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}", f"PYTHONPATH={src}", "HOME=/nonexistent"]
    cmd = ["runuser", "-u", "nobody", "--", *env, sys.executable, "-m", "disksleuth", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/")


# --- defect 1: files the store must not adopt ----------------------------------------------------------


@as_root
def test_a_file_another_user_made_is_not_adopted(cli, tmp_path):
    """`runuser -u nobody -- sh -c 'umask 000; : > /tmp/shared.sqlite'`, then root's import: it became a 0666
    store owned by nobody, holding root's runs and meta.serial_key."""
    shared = tmp_path / "shared.sqlite"
    shared.write_bytes(b"")
    os.chown(shared, NOBODY, NOBODY)
    os.chmod(shared, 0o666)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(shared)))
    assert err.startswith(f"disksleuth: not writing the results store {shared}: it belongs to nobody, not root; ")
    assert "others may read and write it (mode 0666)" in err
    assert f"chown root {shared}" in err and f"chmod 600 {shared}" in err
    st = shared.stat()
    assert (st.st_size, st.st_uid, stat.S_IMODE(st.st_mode)) == (0, NOBODY, 0o666)
    assert _beside(shared) == ["shared.sqlite"]


def test_a_store_readable_by_others_is_not_written_until_mended(cli, tmp_path):
    """A store of one's own that others may read (cp under umask 022) would hand them the runs and the
    serial key written into it: refused, with the chmod that mends it, and accepted once mended."""
    store = _store(tmp_path / "results.sqlite")
    os.chmod(store, 0o644)
    before = _digest(store)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(store)))
    assert f"others may read it (mode 0644); to use it as yours: chmod 600 {store}" in err, err
    assert _digest(store) == before and _beside(store) == ["results.sqlite"]
    os.chmod(store, 0o600)
    assert cli("import", sample_export(tmp_path), "--db", str(store)).code == 0
    assert cli("runs", "--db", str(store), "--json").json()["total"] == 2


@pytest.mark.parametrize("victim_bytes", [b"", b"precious\n"])
def test_a_link_planted_at_the_path_is_refused(cli, tmp_path, victim_bytes):
    """A link to a root-owned file made that file a store (mode 0644). Dangling or not, a link is refused."""
    victim = tmp_path / "victim"
    victim.write_bytes(victim_bytes)
    link = tmp_path / "link.sqlite"
    link.symlink_to(victim)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(link)))
    assert f"--db {link} is a symbolic link" in err and "never opened through one" in err, err
    assert victim.read_bytes() == victim_bytes and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert _beside(victim) == ["victim"] and _beside(link) == ["link.sqlite"]
    victim.unlink()  # dangling now
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(link)))
    assert "is a symbolic link to nothing" in err and not victim.exists()
    err = _one_line(cli("runs", "--db", str(link)))  # a reader does not follow one either
    assert "is a symbolic link" in err


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
@pytest.mark.parametrize("through", ["link", "path"])
def test_another_applications_database_is_never_written(cli, tmp_path, through, journal_mode):
    """Through a link or at the path itself: disksleuth's tables were added beside the application's own and
    its journal_mode became wal. Now nothing of it changes: bytes, journal mode, tables, no side files."""
    app = _app_database(tmp_path / "places.sqlite", journal_mode)
    before = _look(app)
    db = app
    if through == "link":
        db = tmp_path / "results.sqlite"
        db.symlink_to(app)
    for argv in (("import", sample_export(tmp_path)), ("runs",), ("runs", "delete", "1"), ("fleet",)):
        err = _one_line(cli(*argv, "--db", str(db)))
        if through == "link":
            assert "is a symbolic link" in err, err
        else:
            assert "another application's SQLite database (tables moz_bookmarks, moz_places)" in err, err
            assert "not a disksleuth results store; it is left as it is" in err
    assert _look(app) == before
    assert before[1] == journal_mode and before[2] == ["moz_bookmarks", "moz_places"]
    assert _beside(app) == ["places.sqlite"]


def test_an_application_database_with_its_tables_still_in_its_wal_is_never_written(cli, tmp_path):
    """An application's new WAL database, held open: its main file is a bare header, its tables are in
    its -wal only. Read as immutable it looked empty, and became a store (found by hand on the new code)."""
    app = tmp_path / "app.sqlite"
    os.close(os.open(app, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # -wal and -shm get its mode
    con = sqlite3.connect(app, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode=wal")
        con.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        con.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
        assert Path(f"{app}-wal").stat().st_size > 0
        err = _one_line(cli("import", sample_export(tmp_path), "--db", str(app)))
        assert "another application's SQLite database (tables moz_places)" in err, err
        assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["moz_places"]
    finally:
        con.close()


def test_a_database_marked_with_another_application_id_is_never_written(cli, tmp_path):
    app = tmp_path / "app.sqlite"
    con = sqlite3.connect(app)
    con.execute("PRAGMA application_id = 0x4d504b47")  # set before any table, as an application does
    con.commit()
    con.close()
    os.chmod(app, 0o600)
    before = _digest(app)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(app)))
    assert "another application's SQLite database (application id 0x4d504b47)" in err, err
    assert _digest(app) == before and _beside(app) == ["app.sqlite"]


def test_a_file_that_is_not_sqlite_is_not_written(cli, tmp_path):
    notes = tmp_path / "notes.sqlite"
    notes.write_bytes(b"my notes, not a database\n" * 100)
    os.chmod(notes, 0o600)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(notes)))
    assert "is not a disksleuth results store (not a SQLite database); it is left as it is" in err, err
    assert notes.read_bytes() == b"my notes, not a database\n" * 100 and _beside(notes) == ["notes.sqlite"]


def test_an_older_store_is_still_accepted_and_upgraded(cli, tmp_path):
    """Its tables are disksleuth's (schema 3): migrated on first write, as before."""
    old = tmp_path / "old.sqlite"
    shutil.copyfile(SCHEMA3_STORE, old)
    os.chmod(old, 0o600)
    assert cli("import", sample_export(tmp_path), "--db", str(old)).code == 0
    with Store(str(old), create=False, read_only=True) as store:
        assert store.version() == SCHEMA_VERSION and store.serial_key is not None


def test_an_empty_file_of_ones_own_still_becomes_a_store(cli, tmp_path):
    """What _create_private makes first, and what a concurrent first user finds: accepted."""
    empty = tmp_path / "new.sqlite"
    fd = os.open(empty, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    assert cli("import", sample_export(tmp_path), "--db", str(empty)).code == 0
    assert stat.S_IMODE(empty.stat().st_mode) == 0o600


@as_root
def test_a_hard_link_to_a_root_file_is_refused(cli, tmp_path):
    """An empty, private, root-owned file with a second name: owner and mode pass, its other name could
    be anything of root's. Refused for its link count."""
    victim = tmp_path / "victim"
    fd = os.open(victim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    store = tmp_path / "store.sqlite"
    os.link(victim, store)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(store)))
    assert "it has 2 names (hard links)" in err, err
    assert victim.stat().st_size == 0 and _beside(store) == ["store.sqlite"]


# --- the side files SQLite opens by name: -wal, -shm, -journal -----------------------------------------


def _plant(store: Path, suffix: str, how: str, victim: Path) -> None:
    side = Path(str(store) + suffix)
    if how == "link":
        side.symlink_to(victim)
    elif how == "nobody":
        side.write_bytes(b"")
        os.chown(side, NOBODY, NOBODY)
        os.chmod(side, 0o600)
    elif how == "group-writable":
        side.write_bytes(b"")
        os.chmod(side, 0o660)
    elif how == "fifo":
        os.mkfifo(side, 0o600)


@pytest.mark.parametrize(
    ("suffix", "how"),
    [
        ("-wal", "link"),
        ("-shm", "link"),
        ("-journal", "link"),
        ("-wal", "nobody"),
        ("-shm", "nobody"),
        ("-wal", "group-writable"),
        ("-shm", "group-writable"),
        ("-shm", "fifo"),
    ],
)
def test_side_files_that_are_links_or_not_private_are_refused(cli, tmp_path, suffix, how):
    if how == "nobody" and os.geteuid() != 0:
        pytest.skip("needs root")
    store = _store(tmp_path / "results.sqlite")
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n" * 1000)
    _plant(store, suffix, how, victim)
    before = _digest(store)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(store)))
    assert err.startswith(f"disksleuth: not writing the results store {store}: "), err
    side = f"{store}{suffix}"
    expected = {
        "link": f"its {suffix} file {side} is a symbolic link",
        "fifo": f"its {suffix} file {side} is not a regular file",
        "nobody": f"its {suffix} file belongs to nobody, not root",
        "group-writable": f"its group may read and write its {suffix} file (mode 0660)",
    }[how]
    assert expected in err, err
    assert _digest(store) == before and victim.read_bytes() == b"precious\n" * 1000
    # A reading command names the store: it reads it, as immutable, and opens no side file at all.
    res = cli("runs", "--db", str(store), "--json")
    assert res.code == 0 and res.json()["total"] == 1, res.err
    assert _digest(store) == before and victim.read_bytes() == b"precious\n" * 1000
    assert _beside(store) == sorted(["results.sqlite", Path(side).name])


# --- folders and readers ---------------------------------------------------------------------------------


def test_a_store_in_a_folder_anyone_may_write_is_not_made_or_written(cli, tmp_path):
    """There, anyone could put a file of theirs where SQLite makes its -wal or -shm (O_CREAT without
    O_EXCL) between any check and SQLite's own open, and read the pages root writes into it;
    fs.protected_regular is 0 on this very machine."""
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    new = folder / "results.sqlite"
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(new)))
    assert f"not creating the results store {new}: anyone may write its folder {folder} (mode 1777)" in err, err
    assert "keep the store in a folder only you can write" in err and list(folder.iterdir()) == []
    os.chmod(folder, 0o700)
    _store(new)
    os.chmod(folder, 0o1777)
    before = _digest(new)
    err = _one_line(cli("import", sample_export(tmp_path), "--db", str(new)))
    assert f"anyone may write its folder {folder} (mode 1777)" in err and _digest(new) == before
    assert cli("runs", "--db", str(new), "--json").json()["total"] == 1  # read, as immutable
    assert _beside(new) == ["results.sqlite"]


@as_root
def test_a_store_of_another_user_is_read_only_read_when_named(cli, tmp_path, monkeypatch):
    """Reading commands read a store that is not one's own when it is named (--db), read-only: no
    migration, no WAL switch, no side file made. Writing commands never write it; the default store
    (not named) that is not one's own is refused."""
    store = _store(tmp_path / "theirs.sqlite", runs=2)
    os.chown(store, NOBODY, NOBODY)
    os.chmod(store, 0o644)
    before = _digest(store), store.stat().st_mtime_ns
    out = tmp_path / "out"
    out.mkdir()
    for argv in (
        ("runs",),
        ("show", "1"),
        ("compare", "1", "2"),
        ("export", "1", "-o", str(out / "e.json")),
        ("report", "1", "-o", str(out / "r.html")),
        ("fleet",),
    ):
        res = cli(*argv, "--db", str(store))
        assert res.code in (0, 1), (argv, res.err)
    assert (_digest(store), store.stat().st_mtime_ns) == before and _beside(store) == ["theirs.sqlite"]
    for argv in (("runs", "delete", "1"), ("import", sample_export(tmp_path))):
        err = _one_line(cli(*argv, "--db", str(store)))
        assert "not writing the results store" in err and "belongs to nobody" in err, err
    assert (_digest(store), store.stat().st_mtime_ns) == before
    # The default store, not named: not read as if it were this user's own.
    data = tmp_path / "data"
    (data / "disksleuth").mkdir(parents=True)
    shutil.copyfile(store, data / "disksleuth" / "results.sqlite")
    os.chown(data / "disksleuth" / "results.sqlite", NOBODY, NOBODY)
    monkeypatch.delenv("DISKSLEUTH_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    err = _one_line(cli("runs"))
    assert "not reading the results store" in err and "belongs to nobody" in err, err


def test_an_old_store_not_ones_own_is_read_as_it_is(cli, tmp_path):
    """A schema-3 store others may read: read (schema 3 is readable) and not upgraded, so unchanged."""
    old = tmp_path / "old.sqlite"
    shutil.copyfile(SCHEMA3_STORE, old)
    os.chmod(old, 0o644)
    before = _digest(old)
    assert cli("runs", "--db", str(old)).code == 0
    assert _digest(old) == before and _beside(old) == ["old.sqlite"]


def test_a_store_swapped_after_its_checks_is_not_opened(tmp_path):
    """The checks look at the path's file (lstat, O_NOFOLLOW); SQLite opens it by name later. A file put
    in its place in between is refused when SQLite connects, before any pragma."""
    store = _store(tmp_path / "results.sqlite")
    other = _app_database(tmp_path / "other.sqlite")
    before = _look(other)
    engine = make_engine(f"sqlite:///{store}", create=False)
    try:
        os.replace(other, store)
        with pytest.raises(StoreError, match="was replaced while it was being opened"), engine.connect():
            pass
    finally:
        engine.dispose()
    assert _look(store) == before


# --- defect 15: cannot reach is not "no store yet" -------------------------------------------------------


def test_another_user_is_told_the_store_cannot_be_reached(tmp_path):
    """`runuser -u nobody -- disksleuth runs --db /root/.local/share/disksleuth/results.sqlite` said
    "no results store ... yet": os.path.exists is False on EACCES. A store in root's 0700 folder, and one in
    an open folder that is root's 0600, cannot be reached; only a path that is not there is "no store yet"."""
    hidden = _store(tmp_path / "results.sqlite")  # tmp_path: root's, 0700
    res = _as_nobody("runs", "--db", str(hidden))
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr == f"disksleuth: cannot reach the results store {hidden}: Permission denied\n"
    res = _as_nobody("import", sample_export(tmp_path).replace(str(tmp_path), "/nonexistent"), "--db", str(hidden))
    assert res.returncode == 2 and "cannot" in res.stderr and "yet" not in res.stderr, res.stderr
    with _open_folder() as folder:
        private = _store(folder / "results.sqlite")
        res = _as_nobody("runs", "--db", str(private))
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert res.stderr == (
            f"disksleuth: cannot reach the results store {private}: Permission denied (it belongs to root, mode 0600)\n"
        )
        missing = folder / "none.sqlite"
        res = _as_nobody("runs", "--db", str(missing))
        assert res.returncode == 2 and f"no results store at {missing} yet" in res.stderr, res.stderr
