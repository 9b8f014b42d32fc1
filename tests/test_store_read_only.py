"""Commands that only read the results store never write to it, and read a store on a read-only mount:
a real ext4 file system on a loop device, remounted read-only. Before, WAL mode made every one of them
fail there ("unable to open database file"), and a read of a 0-byte file made it a 4 KiB database."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from conftest import DATA, loop_device, mounted_ext4, needs_loop, sha256_of
from test_store import _doc

from disksleuth import serials
from disksleuth.store.db import Store
from disksleuth.store.schema import SCHEMA_VERSION

SCHEMA3_STORE = os.path.join(DATA, "store", "schema3-plain-serials.sqlite")
SD_SERIAL = "0x0008c31f"  # the SD card's serial in that store, kept there as sha256(serial)


@pytest.fixture(autouse=True)
def _no_fleet_key(monkeypatch):
    monkeypatch.delenv(serials.ENV_KEY, raising=False)


@contextlib.contextmanager
def _read_only_mount() -> Iterator[tuple[str, callable]]:
    """An ext4 file system on a loop device, mounted read-write; the callable remounts it read-only."""
    with loop_device(size_mb=32) as dev, mounted_ext4(dev) as mnt:

        def remount_read_only() -> None:
            subprocess.run(["mount", "-o", "remount,ro", mnt], check=True, capture_output=True)

        yield mnt, remount_read_only


def _read_commands(db: str, out_dir: str) -> list[tuple[str, ...]]:
    return [
        ("runs", "--db", db),
        ("runs", "--db", db, "--json"),
        ("runs", "--device", "nvme", "--db", db),
        ("show", "1", "--db", db),
        ("show", "2", "--db", db, "--json"),
        ("compare", "1", "2", "--db", db),
        ("export", "1", "2", "-o", os.path.join(out_dir, "e.json"), "--db", db),
        ("report", "1", "2", "-o", os.path.join(out_dir, "r.html"), "--db", db),
        ("fleet", "--db", db),
        ("report", "--fleet", "-o", os.path.join(out_dir, "f.html"), "--db", db),
    ]


@needs_loop
def test_read_commands_work_on_a_read_only_mount(cli, tmp_path):
    with _read_only_mount() as (mnt, remount_read_only):
        db = os.path.join(mnt, "results.sqlite")
        with Store(db) as store:
            store.save(_doc(100.0, 1000.0, "Samsung 990"))
            store.save(_doc(200.0, 2000.0, "Samsung 990"))
        remount_read_only()
        before = sorted(os.listdir(mnt)), sha256_of(db)
        for argv in _read_commands(db, str(tmp_path)):
            res = cli(*argv)
            assert res.code in (0, 1), (argv, res.err)  # fleet exits 1 on a warn finding
        assert cli("show", "2", "--db", db, "--json").json()["tests"][0]["read_mbps"] == 200.0
        assert (sorted(os.listdir(mnt)), sha256_of(db)) == before
        # Writing is refused in one line, and nothing is lost (a run is kept in a file to import).
        res = cli("runs", "delete", "1", "--db", db)
        assert res.code == 2 and res.err.count("\n") == 1 and "read-only" in res.err, res.err


@needs_loop
def test_a_wal_left_on_a_read_only_mount_is_read_whole(cli, tmp_path):
    """A writer killed after its commit leaves the last run in the -wal file. Read-only, the store is read
    with that -wal (mode=ro with its -shm), not as immutable (which would not see the run)."""
    with _read_only_mount() as (mnt, remount_read_only):
        db = os.path.join(mnt, "results.sqlite")
        with Store(db) as store:
            store.save(_doc(100.0, 1000.0, "first"))
        killed_writer = (
            "import os, sys, json\n"
            "from disksleuth.store.db import Store\n"
            "store = Store(sys.argv[1])\n"
            "store.save(json.loads(sys.argv[2]))\n"
            "os._exit(0)  # no checkpoint, no close: the run is only in the -wal\n"
        )
        doc = json.dumps(_doc(300.0, 3000.0, "in the wal"))
        subprocess.run([sys.executable, "-c", killed_writer, db, doc], check=True, env={**os.environ})
        assert os.path.getsize(db + "-wal") > 0
        remount_read_only()
        runs = cli("runs", "--db", db, "--json")
        assert runs.code == 0, runs.err
        assert [r["device_model"] for r in runs.json()["runs"]] == ["in the wal", "first"]


@needs_loop
def test_a_schema3_store_on_a_read_only_mount_is_read_without_its_plain_digests(cli, tmp_path, monkeypatch):
    """A store from before keyed ids cannot be upgraded on a read-only mount: it is read as it is, and the
    plain SHA-256 it holds is never shown: no id without a key, the fleet key's id with one."""
    with _read_only_mount() as (mnt, remount_read_only):
        db = os.path.join(mnt, "old.sqlite")
        shutil.copyfile(SCHEMA3_STORE, db)
        remount_read_only()
        plain = hashlib.sha256(SD_SERIAL.encode()).hexdigest()
        shown = cli("show", "2", "--db", db, "--json")
        assert shown.code == 0, shown.err
        assert shown.json()["device"]["serial_id"] is None and plain not in shown.out
        fleet_key = "a fleet key long enough to use"
        monkeypatch.setenv(serials.ENV_KEY, fleet_key)
        device = cli("show", "2", "--db", db, "--json").json()["device"]
        assert device["serial_id"] == device["serial_sha256"] == serials.serial_id(SD_SERIAL, fleet_key.encode())
        export = tmp_path / "e.json"
        assert cli("export", "1", "2", "3", "-o", str(export), "--db", db).code == 0
        assert plain not in export.read_text() and SD_SERIAL not in export.read_text()


def test_a_schema3_store_that_can_be_written_is_upgraded_by_a_read(cli, tmp_path):
    db = tmp_path / "old.sqlite"
    shutil.copyfile(SCHEMA3_STORE, db)
    os.chmod(db, 0o600)  # upgraded only when private (copyfile gives 0644)
    assert cli("runs", "--db", str(db)).code == 0
    with Store(str(db), create=False, read_only=True) as store:
        assert store.version() == SCHEMA_VERSION and store.serial_key is not None


@pytest.mark.parametrize(
    "argv",
    [
        ("runs",),
        ("runs", "--json"),
        ("show", "1"),
        ("compare", "1", "2"),
        ("export", "1", "-o", "{tmp}/e.json"),
        ("report", "1", "-o", "{tmp}/r.html"),
        ("fleet",),
        ("runs", "delete", "1"),
        ("runs", "prune", "--older-than", "1d"),
    ],
)
def test_a_zero_byte_file_is_not_a_store_and_stays_empty(cli, tmp_path, argv):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    res = cli(*(a.format(tmp=tmp_path) for a in argv), "--db", str(empty))
    assert res.code == 2, res.out
    assert res.err.count("\n") == 1 and "is not a disksleuth results store (an empty file)" in res.err, res.err
    assert empty.stat().st_size == 0
    assert sorted(os.listdir(tmp_path)) == ["empty.sqlite"]  # no -wal, -shm or -journal either


def test_read_commands_leave_a_writable_store_as_it_was(cli, tmp_path):
    db = tmp_path / "results.sqlite"
    with Store(str(db)) as store:
        store.save(_doc(100.0, 1000.0, "a"))
        store.save(_doc(200.0, 2000.0, "b"))
    out = tmp_path / "out"
    out.mkdir()
    before = sorted(os.listdir(tmp_path)), sha256_of(str(db)), os.stat(db).st_mtime_ns
    for argv in _read_commands(str(db), str(out)):
        assert cli(*argv).code in (0, 1), argv
    assert (sorted(os.listdir(tmp_path)), sha256_of(str(db)), os.stat(db).st_mtime_ns) == before
