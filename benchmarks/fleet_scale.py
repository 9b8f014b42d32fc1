"""A fleet's store at scale (issue 27): HOSTS x DRIVES x RUNS runs built from real exported runs (tests/data/store,
hosts, devices, serial ids and start times varied), on SQLite and on a real PostgreSQL server (started from
Debian's packages on 127.0.0.1, as tests/conftest.py does), then timed: `fleet`, `fleet --json`,
`fleet --finding CODE`, `runs`, `import` (runs/s and peak memory of a real process) and `runs prune`.

    nice .venv/bin/python benchmarks/fleet_scale.py                       # 1,000 x 24 x 10 = 240,000 runs
    nice .venv/bin/python benchmarks/fleet_scale.py --hosts 50 --runs 2   # a quick run: 2,400 runs
    ... --only sqlite                                                     # one backend

The store is built through `disksleuth import` of generated bundles (the path a fleet uses), a bundle per
25,000 runs, so building it also measures import. Until benchmarks/fleet_store.py (the fleet view's helper) lands,
the builder is here; `build_store(url, hosts, drives, runs_per_drive)` has the same shape.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REAL_EXPORT = os.path.join(ROOT, "tests", "data", "store", "real-runs-export.json")
CLI = [sys.executable, "-m", "disksleuth"]
sys.path.insert(0, os.path.join(ROOT, "src"))
os.environ["PYTHONPATH"] = os.path.join(ROOT, "src")  # the disksleuth processes measured run these sources
BUNDLE_RUNS = 25_000
DAY_S = 86400


def _bases() -> list[dict]:
    with open(REAL_EXPORT) as fh:
        return json.load(fh)["runs"]


def write_bundle(
    path: str, hosts: int, drives: int, runs_per_drive: int, start: int = 0, count: int | None = None
) -> int:
    """An export bundle (as `export` writes it) of runs start..start+count of the fleet: run k is drive
    k // runs_per_drive's (k % runs_per_drive)-th day. Written a run at a time. Returns the runs written."""
    bases = _bases()
    total = hosts * drives * runs_per_drive
    end = total if count is None else min(total, start + count)
    now = time.time()
    with open(path, "w") as fh:
        fh.write('{\n "schema": "disksleuth/1",\n "kind": "export",\n "runs": [')
        for k in range(start, end):
            drive, day = divmod(k, runs_per_drive)
            host, slot = divmod(drive, drives)
            doc = copy.deepcopy(bases[drive % len(bases)])
            run = doc["run"]
            run.pop("id", None)
            run["uuid"] = str(uuid.UUID(int=k + 1))
            run["host"]["hostname"] = f"host{host:04d}"
            run["started_at"] = time.strftime(
                "%Y-%m-%dT%H:%M:%S+0000", time.gmtime(now - (runs_per_drive - day) * DAY_S)
            )
            doc["device"]["name"] = run["device"] = f"sd{chr(97 + slot % 26)}{'' if slot < 26 else slot // 26}"
            doc["device"]["serial_id"] = doc["device"]["serial_sha256"] = f"{drive:064x}"
            fh.write(("," if k > start else "") + "\n" + json.dumps(doc, indent=1))
        fh.write("\n ]\n}\n")
    return end - start


_PEAK_OF_CHILD = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "res = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(res.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, time.perf_counter() - t)\n"
    "sys.stderr.write(res.stderr[-2000:])\n"
)


def timed(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak resident bytes) of a real disksleuth process."""
    res = subprocess.run([sys.executable, "-c", _PEAK_OF_CHILD, *CLI, *argv], capture_output=True, text=True)
    code, peak, wall = res.stdout.split()[-3:]
    if int(code) not in (0, 1):
        raise RuntimeError(f"{argv}: exit {code}: {res.stderr.strip()[-500:]}")
    return float(wall), int(peak)


def build_store(url: str, hosts: int, drives: int, runs_per_drive: int, folder: str | None = None) -> list[dict]:
    """The fleet's runs imported into `url`, a bundle of 25,000 runs at a time; returns each import's figures."""
    folder = folder or tempfile.mkdtemp(prefix="disksleuth-fleet-")
    total = hosts * drives * runs_per_drive
    figures = []
    for start in range(0, total, BUNDLE_RUNS):
        path = os.path.join(folder, "bundle.json")
        written = write_bundle(path, hosts, drives, runs_per_drive, start, BUNDLE_RUNS)
        size = os.path.getsize(path)
        wall, peak = timed(["import", path, "--db", url])
        figures.append({"runs": written, "bytes": size, "wall_s": wall, "peak_bytes": peak})
        os.unlink(path)
    return figures


def postgres() -> tuple[str, Callable[[], None]]:
    """A throwaway PostgreSQL server on 127.0.0.1 (tests/conftest.py's fixture) and a function that stops it."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import conftest

    gen = conftest.postgres_server.__wrapped__()
    server = next(gen)

    def stop() -> None:
        with contextlib.suppress(StopIteration):
            next(gen)

    return server.create_database(), stop


def measure(url: str, hosts: int, drives: int, runs_per_drive: int, folder: str) -> dict:
    out: dict = {"imports": build_store(url, hosts, drives, runs_per_drive, folder)}
    for name, argv in (
        ("fleet", ["fleet"]),
        ("fleet --json", ["fleet", "--json"]),
        ("fleet --finding link_downgraded", ["fleet", "--finding", "link_downgraded"]),
        ("runs", ["runs"]),
        ("runs --json", ["runs", "--json"]),
    ):
        try:
            out[name] = [timed([*argv, "--db", url])[0] for _ in range(2)]
        except RuntimeError as exc:
            out[name] = str(exc)[:200]
    keep = max(1, runs_per_drive // 2)
    out["prune --dry-run"] = timed(["runs", "prune", "--keep", str(keep), "--dry-run", "--db", url])[0]
    out["prune"] = timed(["runs", "prune", "--keep", str(keep), "--yes", "--db", url])[0]
    return out


def report(backend: str, total: int, m: dict) -> str:
    runs = sum(i["runs"] for i in m["imports"])
    wall = sum(i["wall_s"] for i in m["imports"])
    peak = max(i["peak_bytes"] for i in m["imports"])
    lines = [
        f"{backend}, {total:,} runs:",
        f"  import: {runs / wall:,.0f} runs/s ({runs:,} runs in {wall:.0f} s, bundles of up to {BUNDLE_RUNS:,}), "
        f"peak {peak / 1e6:.0f} MB",
    ]
    for key in ("fleet", "fleet --json", "fleet --finding link_downgraded", "runs", "runs --json"):
        value = m[key]
        lines.append(f"  {key}: " + (" / ".join(f"{v:.2f} s" for v in value) if isinstance(value, list) else value))
    lines.append(
        f"  runs prune --keep N --dry-run: {m['prune --dry-run']:.1f} s; runs prune --keep N: {m['prune']:.1f} s"
    )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--drives", type=int, default=24)
    ap.add_argument("--runs", type=int, default=10, help="runs per drive")
    ap.add_argument("--only", choices=("sqlite", "postgresql"))
    args = ap.parse_args()
    total = args.hosts * args.drives * args.runs
    folder = tempfile.mkdtemp(prefix="disksleuth-fleet-", dir="/var/tmp")
    try:
        if args.only != "postgresql":
            m = measure(f"sqlite:///{folder}/fleet.sqlite", args.hosts, args.drives, args.runs, folder)
            print(report("SQLite", total, m), flush=True)
        if args.only != "sqlite":
            url, stop = postgres()
            try:
                m = measure(url, args.hosts, args.drives, args.runs, folder)
                print(report("PostgreSQL", total, m), flush=True)
            finally:
                stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
