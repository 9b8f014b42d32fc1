"""A fleet's store at scale (issue 27): HOSTS x DRIVES x RUNS runs built by benchmarks/fleet_store.py (a real
exported run, benchmarks/sample_run.json, with hosts, devices, serials, models, figures and findings varied), on
SQLite and on a real PostgreSQL server (started from Debian's packages on 127.0.0.1, as tests/conftest.py does),
then timed: `fleet`, `fleet --json`, `fleet --finding CODE`, `runs`, `import` (runs/s and peak memory of a real
process) and `runs prune`.

    nice .venv/bin/python benchmarks/fleet_scale.py                       # 1,000 x 24 x 10 = 240,000 runs
    nice .venv/bin/python benchmarks/fleet_scale.py --hosts 50 --runs 2   # a quick run: 2,400 runs
    ... --only sqlite                                                     # one backend

The first RUNS-1 runs of every drive go in through fleet_store.build_store (Store.import_runs, import's own
batches, no bundle on disk); the last run of every drive (HOSTS x DRIVES runs, a day of the fleet) is written
as an export bundle and imported by a real `disksleuth import` process, which gives the import figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLI = [sys.executable, "-m", "disksleuth"]
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, HERE)
os.environ["PYTHONPATH"] = os.path.join(ROOT, "src")  # the disksleuth processes measured run these sources

from fleet_store import build_store, documents, write_bundle  # noqa: E402

_PEAK_OF_CHILD = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "res = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(res.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, time.perf_counter() - t)\n"
    "sys.stderr.write(res.stderr[-2000:])\n"
)


def timed(argv: list[str], src: str | None = None) -> tuple[float, int]:
    """(wall seconds, peak resident bytes) of a real disksleuth process (running the sources in `src`, this
    checkout's when None)."""
    env = {**os.environ, "PYTHONPATH": src} if src else None
    res = subprocess.run([sys.executable, "-c", _PEAK_OF_CHILD, *CLI, *argv], capture_output=True, text=True, env=env)
    code, peak, wall = res.stdout.split()[-3:]
    if int(code) not in (0, 1):
        raise RuntimeError(f"{argv}: exit {code}: {res.stderr.strip()[-500:]}")
    return float(wall), int(peak)


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


VIEWS = (
    ("fleet", ["fleet"]),
    ("fleet --json", ["fleet", "--json"]),
    ("fleet --finding link_downgraded", ["fleet", "--finding", "link_downgraded"]),
    ("runs", ["runs"]),
    ("runs --json", ["runs", "--json"]),
)


def measure(
    url: str, hosts: int, drives: int, runs_per_drive: int, folder: str, before_src: str | None, wait_for: str | None
) -> dict:
    t0 = time.perf_counter()
    build_store(url, hosts, drives, runs_per_drive - 1)
    built_s = time.perf_counter() - t0
    while wait_for and not os.path.exists(wait_for):  # the sources measured below may still be changing
        time.sleep(5)
    path = os.path.join(folder, "bundle.json")
    written = write_bundle(path, documents(hosts, drives, runs_per_drive, first_run=runs_per_drive - 1))
    size = os.path.getsize(path)
    wall, peak = timed(["import", path, "--db", url])
    os.unlink(path)
    out: dict = {
        "built": (hosts * drives * (runs_per_drive - 1), built_s),
        "imports": [{"runs": written, "bytes": size, "wall_s": wall, "peak_bytes": peak}],
    }
    for label, src in (("before: ", before_src), ("", None)):
        if label and not src:
            continue
        for name, argv in VIEWS:
            try:
                out[label + name] = [timed([*argv, "--db", url], src)[0] for _ in range(3)]
            except RuntimeError as exc:
                out[label + name] = str(exc)[:200]
    keep = max(1, runs_per_drive // 2)
    out["prune --dry-run"] = timed(["runs", "prune", "--keep", str(keep), "--dry-run", "--db", url])[0]
    out["prune"] = timed(["runs", "prune", "--keep", str(keep), "--yes", "--db", url])[0]
    return out


def report(backend: str, total: int, m: dict) -> str:
    runs = sum(i["runs"] for i in m["imports"])
    wall = sum(i["wall_s"] for i in m["imports"])
    peak = max(i["peak_bytes"] for i in m["imports"])
    built, built_s = m["built"]
    size = sum(i["bytes"] for i in m["imports"])
    lines = [
        f"{backend}, {total:,} runs:",
        f"  built: {built:,} runs in {built_s:.0f} s ({built / max(built_s, 1e-9):,.0f} runs/s, Store.import_runs)",
        f"  import: {runs / wall:,.0f} runs/s ({runs:,} runs, a {size / 1e6:.0f} MB bundle, in {wall:.1f} s), "
        f"peak {peak / 1e6:.0f} MB",
    ]
    for key in [k for k in m if k.removeprefix("before: ") in dict(VIEWS)]:
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
    ap.add_argument("--before-src", help="also time the views with the disksleuth sources in this folder")
    ap.add_argument("--wait-for", help="after building, wait until this file exists before importing and timing")
    args = ap.parse_args()
    total = args.hosts * args.drives * args.runs
    folder = tempfile.mkdtemp(prefix="disksleuth-fleet-", dir="/var/tmp")
    try:
        if args.only != "postgresql":
            url = f"sqlite:///{folder}/fleet.sqlite"
            m = measure(url, args.hosts, args.drives, args.runs, folder, args.before_src, args.wait_for)
            print(report("SQLite", total, m), flush=True)
        if args.only != "sqlite":
            url, stop = postgres()
            try:
                m = measure(url, args.hosts, args.drives, args.runs, folder, args.before_src, args.wait_for)
                print(report("PostgreSQL", total, m), flush=True)
            finally:
                stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
