"""Baseline lookups in a store of 100,000 runs (issue 23): how long finding a drive's earlier runs takes.

    .venv/bin/python benchmarks/bench_baseline.py [--runs 100000] [--keep PATH]

The store is built fast by bulk inserts of real-shaped rows: one real run document (sample_run.json, a
quick run on a virtio disk) is saved once through Store.save, its rows are read back, and copies of them
(new ids, hosts, drives, serial ids and start times) go in with executemany. 100 hosts x 4 drives share the
runs; one drive has only 2 runs, stored early, and one drive has none (both make the lookup read until the
oldest run). Target: every lookup (the earlier runs and the baseline's judgement) under 100 ms.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import sqlalchemy as sa  # noqa: E402

from disksleuth.store.db import Store  # noqa: E402
from disksleuth.store.schema import FINDINGS, RUNS, SERIES, TESTS  # noqa: E402

HOSTS = 100
DRIVES_PER_HOST = 4
RARE_SERIAL = "f" * 64  # a drive with 2 runs, stored among the first
NEW_SERIAL = "e" * 64  # a drive with none


def serial_of(host: int, drive: int) -> str:
    return f"{host:032x}{drive:032x}"


def sample_document() -> dict:
    with open(os.path.join(HERE, "sample_run.json")) as fh:
        doc = json.load(fh)
    for i, t in enumerate(doc["tests"]):
        t.setdefault("ci95_pct", 3.0 + i)  # runs made since issue 13 carry their interval
    return doc


def template_rows(doc: dict) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """The rows Store.save writes for `doc`, read back from a scratch store."""
    tmp = tempfile.mkdtemp(prefix="ds-bench-baseline-")
    try:
        with Store(f"sqlite:///{tmp}/t.sqlite") as store:
            store.save(doc)
            with store.engine.connect() as conn:
                run = dict(conn.execute(sa.select(RUNS)).mappings().one())
                tests = [dict(r) for r in conn.execute(sa.select(TESTS)).mappings()]
                series = [dict(r) for r in conn.execute(sa.select(SERIES)).mappings()]
                findings = [dict(r) for r in conn.execute(sa.select(FINDINGS)).mappings()]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return run, tests, series, findings


def build(url: str, runs: int, batch: int = 5000) -> float:
    """A store of `runs` runs; returns the seconds it took."""
    started = time.monotonic()
    run0, tests0, series0, findings0 = template_rows(sample_document())
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    test_id = 0
    with Store(url) as store, store.engine.begin() as conn:
        run_rows: list[dict] = []
        test_rows: list[dict] = []
        series_rows: list[dict] = []
        finding_rows: list[dict] = []

        def flush() -> None:
            for table, rows in ((RUNS, run_rows), (TESTS, test_rows), (SERIES, series_rows), (FINDINGS, finding_rows)):
                if rows:
                    conn.execute(table.insert(), rows)
                    rows.clear()

        for i in range(1, runs + 1):
            host, drive = (i // DRIVES_PER_HOST) % HOSTS, i % DRIVES_PER_HOST
            serial = RARE_SERIAL if i in (10, 20) else serial_of(host, drive)
            run_rows.append(
                {
                    **run0,
                    "id": i,
                    "uuid": str(uuid.UUID(int=i)),
                    "started_at": (start + dt.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%S+0000"),
                    "hostname": f"host{host:03d}",
                    "device_name": f"sd{'abcd'[drive]}",
                    "device_model": f"Model {drive}",
                    "device_serial_sha256": serial,
                }
            )
            spread = 1.0 + 0.02 * ((i * 7919) % 11 - 5) / 5  # +-2% run to run
            for t in tests0:
                test_id += 1
                row = {**t, "id": test_id, "run_id": i}
                for k in ("read_mbps", "write_mbps", "read_iops", "write_iops"):
                    if row[k] is not None:
                        row[k] = row[k] * spread
                test_rows.append(row)
                series_rows.extend({**p, "test_row_id": test_id} for p in series0 if p["test_row_id"] == t["id"])
            finding_rows.extend({**f, "id": None, "run_id": i} for f in findings0)
            if i % batch == 0:
                flush()
        flush()
    return time.monotonic() - started


def timed(fn, rounds: int = 7) -> float:  # noqa: ANN001
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def lookups(url: str) -> list[tuple[str, float, int]]:
    """(what, median seconds, runs found) for each kind of lookup."""
    from disksleuth.run.baseline import baseline_of

    with Store(url, create=False, read_only=True) as store:
        with store.engine.connect() as conn:
            newest = conn.execute(sa.select(sa.func.max(RUNS.c.id))).scalar_one()
        template = store.load(newest)

        def doc_for(serial: str | None, name: str = "sda", host: str = "host007") -> dict:
            doc = json.loads(json.dumps(template))
            doc["run"]["id"] = None
            doc["run"]["started_at"] = "2027-06-01T00:00:00+0000"
            doc["run"]["host"]["hostname"] = host
            doc["device"]["name"] = name
            doc["device"]["model"] = "Model 0"
            doc["device"]["serial_id"] = serial
            doc["device"].pop("serial_sha256", None)
            return doc

        cases = [
            ("a drive with 1,000 runs (by serial)", doc_for(serial_of(7, 0))),
            ("a drive with 2 early runs (by serial)", doc_for(RARE_SERIAL)),
            ("a drive with no runs (by serial)", doc_for(NEW_SERIAL)),
            ("a drive without a serial (by name, model, size, host)", doc_for(None, "sdz")),
        ]
        out = []
        for what, doc in cases:
            found = baseline_of(store, doc)
            out.append((what, timed(lambda doc=doc: baseline_of(store, doc)), found.earlier_runs))
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--keep", metavar="PATH", help="build (or reuse) the store at PATH and keep it")
    args = ap.parse_args()
    tmp = None
    if args.keep:
        path = args.keep
    else:
        tmp = tempfile.mkdtemp(prefix="ds-bench-baseline-")
        path = os.path.join(tmp, "results.sqlite")
    url = f"sqlite:///{path}"
    try:
        if not os.path.exists(path):
            took = build(url, args.runs)
            print(f"built {args.runs:,} runs in {took:.1f} s ({os.path.getsize(path) / 1e6:.0f} MB)")
        worst = 0.0
        for what, seconds, found in lookups(url):
            worst = max(worst, seconds)
            print(f"{what}: {seconds * 1000:.1f} ms ({found} usable earlier runs)")
        holds = worst < 0.1
        print(f"worst {worst * 1000:.1f} ms: target < 100 ms {'holds' if holds else 'MISSED'}")
        return 0 if holds else 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
