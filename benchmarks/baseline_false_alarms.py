"""How often a baseline cries wolf: an unchanged device, run after run, against its own history (issue 23).

    .venv/bin/python benchmarks/baseline_false_alarms.py [--runs 20]   # as root; about 3 minutes at 20 runs

A RAM-backed loop device (128 MiB over /dev/shm) held to 50 MB/s reads by a cgroup v1 blkio throttle,
benched `--runs` times into one fresh SQLite store (`bench DEV --engine libaio --size 64MiB --db ...`: the
two read tests of the quick profile, each stopping when its 95% interval is within 3%). From the fourth run
on, each run has a baseline (the median of the earlier runs) and both its figures are judged against it.
libaio: io_uring swings under cgroup v1 blk-throttle on this kernel (docs/PERFORMANCE.md).

Prints each run's ratios to its baseline, then one line: PASS when no run had slower_than_usual or
faster_than_usual and every run from the fourth on was judged on both tests, else FAIL (exit 1).
The suite keeps a short version (three runs of history, one unchanged run judged, then a slowed one):
tests/test_baseline.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from run import DISKSLEUTH, blkio_group, in_group, loop_device  # benchmarks/run.py

THROTTLE_BPS = 50_000_000
JUDGED = ("slower_than_usual", "faster_than_usual")
MIN_RUNS = 3  # analysis.baseline.MIN_RUNS: the runs before the first that is judged


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="runs of the unchanged device (default 20)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("baseline_false_alarms: needs root (loop devices, cgroup v1 blkio)", file=sys.stderr)
        return 2
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="ds-bench-baseline-alarms-")
    db = f"sqlite:///{tmp}/results.sqlite"
    alarms = 0
    ratios: list[float] = []
    judged_runs = 0
    try:
        with loop_device(128, fill=True) as dev, blkio_group(dev, read_bps_device=THROTTLE_BPS) as procs:
            for i in range(args.runs):
                argv = in_group(procs, [*DISKSLEUTH, "bench", dev, "--engine", "libaio", "--size", "64MiB",
                                        "--db", db, "--json"])  # fmt: skip
                res = subprocess.run(argv, capture_output=True, text=True, timeout=300)
                if res.returncode not in (0, 1):
                    raise RuntimeError(f"bench failed ({res.returncode}): {res.stderr.strip()}")
                doc = json.loads(res.stdout)
                said = [f["message"] for f in doc["findings"] if f["code"] in JUDGED]
                alarms += bool(said)
                these = [round(j["ratio"], 3) for j in doc["baseline"]["figures"]]
                ratios += these
                judged_runs += len(these) == 2
                print(f"run {i + 1:2}: {doc['baseline']['status']}, ratios {these or '-'}; {said or 'no alarm'}",
                      flush=True)  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    expected = max(0, args.runs - MIN_RUNS)
    ok = alarms == 0 and judged_runs == expected
    spread = f"{min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} figures" if ratios else "none"
    print(
        f"{'PASS' if ok else 'FAIL'}: no slower/faster_than_usual in {args.runs - alarms}/{args.runs} runs of an "
        f"unchanged device; {judged_runs}/{expected} runs judged on both tests; ratios {spread}; "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
