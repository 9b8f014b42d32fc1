"""A new SQLite store opened while another process holds a lock on it: SQLite refuses to leave rollback mode
at once ("database is locked", no busy wait), which CI hit with two hosts' first `check` into one new store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from disksleuth.errors import StoreError
from disksleuth.store import db
from disksleuth.store.db import Store

# Takes the write lock of a new, still empty store (rollback mode, as every new file starts), then lets go.
HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("ROLLBACK")
"""


def _hold(path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def test_a_new_store_waits_for_a_brief_lock(tmp_path):
    path = tmp_path / "new.sqlite"
    path.touch(mode=0o600)
    holder = _hold(path, 0.5)
    try:
        with Store(f"sqlite:///{path}") as store:  # was: sqlite3.OperationalError at once
            assert store.schema == db.SCHEMA_VERSION
    finally:
        holder.wait(timeout=30)
    with open(path, "rb") as f:
        assert f.read(20)[18:20] == b"\x02\x02"  # the header's read/write versions: WAL


def test_a_new_store_locked_past_the_timeout_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 300)
    path = tmp_path / "new.sqlite"
    path.touch(mode=0o600)
    holder = _hold(path, 10)
    try:
        with pytest.raises(StoreError, match=r"^the results store .* is locked by another process \(waited 0.3 s"):
            Store(f"sqlite:///{path}")
    finally:
        holder.kill()
        holder.wait()
