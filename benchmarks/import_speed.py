"""Import speed of real runs: a real quick-profile run WITH its per-second series, cloned into a fleet's day.

    .venv/bin/python benchmarks/import_speed.py [--runs 24000] [--before-src DIR] [--profile N]

benchmarks/quick_run_series.json is `disksleuth export` of a real `bench --profile quick` of a 512 MiB loop
device over /dev/shm (4 tests, 31-32 series points each, 27 KB indented as export writes it). It is cloned
into RUNS runs as a fleet would send them: each its own uuid, host (1,000 hosts), device, serial id, model and
start time, figures varied a little. The bundle is written once (indent=1, as `export` writes it) in a private
temporary folder, and then, for this tree (and, with --before-src, for another tree's src, side by side, in
alternation), into a new store each time:

- `disksleuth import FILE --db STORE` as a real process, end to end, with its CPU time and peak memory;
- the import function alone, in-process (`run.history.import_runs`), without Python's start-up.

--profile N: cProfile of the in-process import of N runs of the bundle (this tree), top rows by cumulative and
own time.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REAL_RUN = os.path.join(HERE, "quick_run_series.json")
START = datetime(2026, 11, 1, tzinfo=UTC)
MODELS = (
    ("Samsung SSD 870 EVO 1TB", "SVT02B6Q", "sata"),
    ("Samsung SSD 980 PRO 2TB", "5B2QGXA7", "nvme"),
    ("ST16000NM001G-2KK103", "SN03", "sata"),
    ("INTEL SSDPE2KX040T8", "VDV10131", "nvme"),
)


def real_run() -> dict[str, Any]:
    with open(REAL_RUN) as fh:
        doc: dict[str, Any] = json.load(fh)["runs"][0]
    doc["run"].pop("id", None)
    return doc


def documents(runs: int, hosts: int = 1000) -> Iterator[dict[str, Any]]:
    """`runs` clones of the real run: distinct uuids, hosts, devices, serial ids and start times."""
    base = real_run()
    drives = max(1, runs // hosts)
    for i in range(runs):
        doc = copy.deepcopy(base)
        h, d = divmod(i, drives)
        name, firmware, transport = MODELS[i % len(MODELS)]
        device = f"nvme{d}n1" if transport == "nvme" else f"sd{chr(97 + d % 26)}"
        run = doc["run"]
        run["uuid"] = str(uuid.UUID(int=(37 << 64) | i))
        started = START + timedelta(seconds=i * 3)
        run["started_at"] = started.strftime("%Y-%m-%dT%H:%M:%S%z")
        run["finished_at"] = (started + timedelta(seconds=17)).strftime("%Y-%m-%dT%H:%M:%S%z")
        run["host"]["hostname"] = f"host-{h:04d}"
        run["device"] = device
        run["target"] = f"/dev/{device}"
        run["kind"] = "check" if i % 2 else "bench"
        dev = doc["device"]
        dev.update(name=device, path=f"/dev/{device}", model=name, firmware=firmware, transport=transport)
        dev["serial_id"] = hashlib.sha256(f"{h}-{d}".encode()).hexdigest()  # an export carries the keyed id
        scale = 1.0 + ((i * 31) % 11 - 5) / 200
        for t in doc["tests"]:
            for k in ("read_mbps", "read_iops", "write_mbps", "write_iops"):
                if t.get(k) is not None:
                    t[k] = round(t[k] * scale, 2)
        yield doc


def write_bundle(path: str, docs: Iterator[dict[str, Any]]) -> int:
    """The bytes `export` writes (json.dumps of the bundle, indent=1: a run two spaces in), a run at a time."""
    written = 0
    with open(path, "w") as fh:
        fh.write('{\n "schema": "disksleuth/1",\n "kind": "export",\n "exported_at": "2026-11-27T22:00:00+0000",')
        fh.write('\n "runs": [')
        for doc in docs:
            fh.write(("," if written else "") + "\n  " + json.dumps(doc, indent=1).replace("\n", "\n  "))
            written += 1
        fh.write("\n ]\n}")
    return written


_IN_PROCESS = """
import sys, time
from disksleuth.run.history import import_runs
t0 = time.perf_counter(); c0 = time.process_time()
done = import_runs(sys.argv[1], sys.argv[2])
print(time.perf_counter() - t0, time.process_time() - c0, len(done.new_ids) if hasattr(done, "new_ids") else 0)
"""


def _env(src: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": src, "DISKSLEUTH_DB": "", "PYTHONDONTWRITEBYTECODE": "1"}


def time_cli(src: str, bundle: str, store: str) -> tuple[float, float, int]:
    """(wall s, CPU s, peak KB) of `disksleuth import` with `src` on the path, into a new store."""
    t0 = time.perf_counter()
    with open(os.path.join(os.path.dirname(store), "stderr"), "w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "disksleuth", "import", bundle, "--db", store],
            env=_env(src),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _pid, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU and peak, not all children's
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"import failed ({proc.returncode}): {err.read().strip()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def time_function(src: str, bundle: str, store: str) -> tuple[float, float]:
    """(wall s, CPU s) of run.history.import_runs alone, in a fresh process with `src` on the path."""
    out = subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, "sqlite:///" + store, bundle],
        env=_env(src),
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu, _n = out.stdout.split()
    return float(wall), float(cpu)


def profile(bundle: str, folder: str, top: int = 30) -> None:
    import cProfile
    import pstats

    sys.path.insert(0, os.path.join(ROOT, "src"))
    from disksleuth.run.history import import_runs

    prof = cProfile.Profile()
    prof.enable()
    import_runs("sqlite:///" + os.path.join(folder, "profile.sqlite"), bundle)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=24_000)
    p.add_argument("--rounds", type=int, default=2, help="timings of each tree (alternating)")
    p.add_argument("--before-src", help="another tree's src directory, timed beside this one")
    p.add_argument("--profile", type=int, metavar="N", help="profile the in-process import of N runs instead")
    args = p.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="import-speed-")  # private (0700): the store refuses a folder others write
    try:
        bundle = os.path.join(folder, "bundle.json")
        n = write_bundle(bundle, documents(args.profile or args.runs))
        size_mb = os.path.getsize(bundle) / 1e6
        print(f"{n:,} runs, {size_mb:.0f} MB bundle; load average {os.getloadavg()}", flush=True)
        if args.profile:
            profile(bundle, folder)
            return 0
        trees = [("this tree", os.path.join(ROOT, "src"))]
        if args.before_src:
            trees.insert(0, ("before", os.path.abspath(args.before_src)))
        for r in range(args.rounds):
            for label, src in trees:
                store = os.path.join(folder, f"s{r}-{label[0]}.sqlite")
                wall, cpu, rss_kb = time_cli(src, bundle, store)
                os.unlink(store)
                f_wall, f_cpu = time_function(src, bundle, store)
                os.unlink(store)
                print(
                    f"{label:10} `disksleuth import`: {wall:6.1f} s wall ({n / wall:6,.0f} runs/s), {cpu:6.1f} s CPU,"
                    f" {rss_kb / 1024:.0f} MB peak; import function: {f_wall:6.1f} s ({n / f_wall:6,.0f} runs/s),"
                    f" {f_cpu:.1f} s CPU; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
