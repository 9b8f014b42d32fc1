"""Nothing lost: a store locked by another process, and many processes opening a new store at once."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time

import pytest
from conftest import needs_fio, ok_but_for_each_others_io
from test_store import _doc

from disksleuth.store.db import Store
from disksleuth.store.schema import SCHEMA_VERSION

# Both tests run real fio while they wait out a lock or race each other: the slow lane's, whole.
pytestmark = pytest.mark.slow

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]

# Holds SQLite's write lock (WAL mode: EXCLUSIVE shuts out every other writer) until killed.
HOLD_LOCK = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
con.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (1000, 'held')")
print("locked", flush=True)
time.sleep(120)
"""


@needs_fio
def test_a_locked_store_never_loses_the_measurement(tmp_path):
    """Another process holds the write lock past the busy timeout: `bench` printed no figures and died
    with a multi-line SQLAlchemy error (SQL and parameters). Now the figures come out, one warning line
    says where the run was kept, and `disksleuth import` of that file stores it."""
    url = f"sqlite:///{tmp_path}/results.sqlite"
    Store(url).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "results.sqlite")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}
        runs = {}
        for mode in ("text", "json"):
            target = tmp_path / f"{mode}.img"  # an existing file: read tests only, which is all this needs
            target.write_bytes(os.urandom(16 << 20))
            argv = [*DISKSLEUTH, "bench", str(target), "--time", "1", "--db", url, "--tag", mode]
            runs[mode] = subprocess.Popen(
                argv + (["--json"] if mode == "json" else []),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        results = {mode: (p.wait(timeout=180), *p.communicate()) for mode, p in runs.items()}
    finally:
        holder.kill()
        holder.wait()
    kept = []
    for mode, (code, out, err) in results.items():
        assert ok_but_for_each_others_io(code, out), err  # the two benches read one disk at once
        assert err.count("\n") == 1, err
        assert err.startswith("disksleuth: warning: the run was not saved (the results store ")
        assert "is locked by another process" in err
        assert "INSERT" not in err and "SELECT" not in err and "[SQL" not in err
        path = re.search(r"kept in (\S+), add it later with: disksleuth import \1$", err.strip()).group(1)
        assert path.startswith(str(tmp_path / "xdg" / "disksleuth" / "unsaved") + "/")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        kept.append(path)
        if mode == "text":
            assert "SEQ1M_Q8T1_read" in out and "saved as run" not in out
        else:
            doc = json.loads(out)
            assert doc["tests"][0]["read_mbps"] > 0 and doc["run"]["id"] is None
            assert doc["store"]["saved"] is False and doc["store"]["kept_in"] == path
    for path in kept:
        res = subprocess.run([*DISKSLEUTH, "import", path, "--db", url, "--json"], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    with Store(url) as store:
        rows, total = store.list_runs()
        assert total == 2 and sorted(t for r in rows for t in r["tags"]) == ["json", "text"]
        assert all(store.load(r["id"])["tests"][0]["read_mbps"] > 0 for r in rows)


def test_many_processes_opening_a_new_store_at_once_all_save(tmp_path):
    """Several processes opening a new store together lost runs ("table runs already exists",
    "duplicate column name: note") while exiting 0. Every one must save, each migration applied once.
    Four new stores, five processes each, all started in the same instant."""
    stores, per_store = 4, 5
    script = (
        "import sys, time\n"
        "from disksleuth.cli import main\n"
        "from disksleuth.store import db\n"
        "time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
        "sys.exit(main(sys.argv[2:]))\n"
    )
    start = time.time() + 3.0  # every process past its imports, then all open their store at once
    procs = []
    for s in range(stores):
        url = f"sqlite:///{tmp_path}/new{s}.sqlite"
        for i in range(per_store):
            doc = _doc(100.0 + i, 1000.0, f"drive {i}", started=f"2026-11-21T10:00:{i:02d}+0000")
            export = tmp_path / f"run{s}-{i}.json"
            export.write_text(json.dumps({"schema": "disksleuth/1", "runs": [doc]}))
            argv = [sys.executable, "-c", script, str(start), "import", str(export), "--db", url]
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert [(code, err) for code, _out, err in outcomes] == [(0, "")] * len(procs)
    assert all(out.startswith("imported 1 run, #") for _code, out, _err in outcomes)
    for s in range(stores):
        with Store(f"sqlite:///{tmp_path}/new{s}.sqlite") as store:
            rows, total = store.list_runs(limit=None)
            assert total == per_store
            assert sorted(r["device_model"] for r in rows) == [f"drive {i}" for i in range(per_store)]
            with store.engine.connect() as conn:
                versions = conn.exec_driver_sql("SELECT version FROM schema_migrations ORDER BY version")
                assert versions.scalars().all() == list(range(1, SCHEMA_VERSION + 1))
