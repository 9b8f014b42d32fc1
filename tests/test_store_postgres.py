"""The shared store on a real PostgreSQL server (started by the `postgres_server` fixture in conftest):
migrations under concurrent first use, several hosts writing at once, each run's host, `runs --host`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from conftest import needs_fio, ok_but_for_each_others_io
from test_store import _doc

from disksleuth.store.db import Store
from disksleuth.store.schema import SCHEMA_VERSION

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
START_TOGETHER = (
    "import sys, time\n"
    "from disksleuth.cli import main\n"
    "from disksleuth.store import db\n"
    "import psycopg\n"
    "time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def _doc_from(host: str, second: int) -> dict:
    doc = _doc(100.0 + second, 1000.0, f"drive on {host}", started=f"2025-06-01T10:00:{second:02d}+0000")
    doc["run"]["host"]["hostname"] = host
    return doc


@pytest.mark.slow
def test_concurrent_first_use_of_a_new_database(tmp_path, postgres_server):
    """Processes ("hosts") open a new database in the same instant and save: every run is stored, every
    migration applied once (pg_advisory_xact_lock around the check-and-apply). Before, some died with
    "column note of relation runs already exists". Three new databases, six processes each."""
    databases, per_db = 3, 6
    urls = [postgres_server.create_database() for _ in range(databases)]
    start = time.time() + 3.0
    procs = []
    for d, url in enumerate(urls):
        for i in range(per_db):
            export = tmp_path / f"run{d}-{i}.json"
            export.write_text(json.dumps({"schema": "disksleuth/1", "runs": [_doc_from(f"host{i % 3}", i)]}))
            argv = [sys.executable, "-c", START_TOGETHER, str(start), "import", str(export), "--db", url]
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert [(code, err) for code, _out, err in outcomes] == [(0, "")] * len(procs)
    for url in urls:
        with Store(url) as store:
            rows, total = store.list_runs(limit=None)
            assert total == per_db
            assert sorted(r["hostname"] for r in rows) == sorted(f"host{i % 3}" for i in range(per_db))
            with store.engine.connect() as conn:
                versions = conn.exec_driver_sql("SELECT version FROM schema_migrations ORDER BY version")
                assert versions.scalars().all() == list(range(1, SCHEMA_VERSION + 1))


def _can_unshare() -> str | None:
    if os.geteuid() != 0:
        return "needs root for unshare --uts"
    if shutil.which("unshare") is None:
        return "unshare missing"
    return None


@pytest.mark.root
@pytest.mark.slow
@needs_fio
@pytest.mark.skipif(_can_unshare() is not None, reason=_can_unshare() or "")
def test_two_hosts_bench_into_one_store_at_once(tmp_path, fresh_postgres_url):
    """Two machines (UTS namespaces with their own host names) run a real `bench` into the shared store
    at the same time; each run records the host it ran on, and `runs --host` tells them apart."""
    procs = {}
    for host in ("alpha-node", "beta-node"):
        target = tmp_path / host  # an existing file: read tests only, enough to record a run
        target.write_bytes(os.urandom(16 << 20))
        bench = [*DISKSLEUTH, "bench", str(target), "--time", "1", "--db", fresh_postgres_url, "--json"]
        argv = ["unshare", "--uts", "sh", "-c", f'hostname {host} && exec "$@"', "sh", *bench]
        procs[host] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for host, proc in procs.items():
        out, err = proc.communicate(timeout=240)
        assert ok_but_for_each_others_io(proc.returncode, out), err  # both read one disk at once
        doc = json.loads(out)
        assert doc["run"]["host"]["hostname"] == host and doc["store"]["saved"] is True
    res = subprocess.run([*DISKSLEUTH, "runs", "--db", fresh_postgres_url, "--json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert sorted(r["host"] for r in json.loads(res.stdout)["runs"]) == ["alpha-node", "beta-node"]
    only = subprocess.run(
        [*DISKSLEUTH, "runs", "--host", "beta-node", "--db", fresh_postgres_url, "--json"],
        capture_output=True,
        text=True,
    )
    runs = json.loads(only.stdout)["runs"]
    assert [r["host"] for r in runs] == ["beta-node"] and runs[0]["target"].endswith("/beta-node")


def test_store_commands_on_postgresql(cli, tmp_path, fresh_postgres_url):
    """The same command surface as on SQLite: import without duplicates, show, compare, export,
    runs --host, delete, prune; a missing database is one line."""
    url = fresh_postgres_url
    export = tmp_path / "e.json"
    export.write_text(json.dumps({"schema": "disksleuth/1", "runs": [_doc_from("a", 1), _doc_from("b", 2)]}))
    assert cli("import", str(export), "--db", url, "--json").json()["imported"] == [1, 2]
    assert cli("import", str(export), "--db", url, "--json").json()["skipped"] == [1, 2]
    assert cli("show", "2", "--db", url, "--json").json()["run"]["host"]["hostname"] == "b"
    assert cli("compare", "1", "2", "--db", url, "--format", "json").json()["comparison"]["rows"][0]["ratios"] == [
        1.0,
        round(102.0 / 101.0, 4),
    ]
    out = tmp_path / "back.json"
    assert cli("export", "1", "2", "-o", str(out), "--db", url).code == 0
    assert [r["host"] for r in cli("runs", "--host", "a", "--db", url, "--json").json()["runs"]] == ["a"]
    assert cli("runs", "delete", "1", "--db", url, "--json").json()["deleted"] == [1]
    assert cli("runs", "prune", "--older-than", "1d", "--db", url, "--json").json()["deleted"] == [2]
    assert cli("runs", "--db", url, "--json").json()["total"] == 0
    assert cli("import", str(out), "--db", url, "--json").json()["imported"] == [3, 4]  # deleted, so new again
    missing = url.rsplit("/", 1)[0] + "/no_such_database"
    res = cli("runs", "--db", missing)
    assert res.code == 2 and res.err.count("\n") == 1 and "no_such_database" in res.err, res.err
