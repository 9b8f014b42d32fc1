"""How long the standard set takes, and how honest its figures are (issue 37: at most 20 s, median ci95 <= 5%, at
least 7 of 8 intervals holding a known rate).

    sudo .venv/bin/python benchmarks/standard_set.py [--rounds N] [--before SRC] [--engine libaio] [--no-free]

A 1 GiB RAM-backed loop device (/dev/shm image filled from /dev/urandom, `losetup --direct-io=on`) is benched with
`bench --profile standard --destructive --yes --json --no-save` as a new process, timed from start to exit:
- capped: in a cgroup v1 blkio group that holds the device to 200 MB/s and 10,000 IOPS each way, so every test has a
  known rate (SEQ1M: 200 MB/s; RND4K: 10,000 IOPS = 40.96 MB/s); a test's interval holds it when |figure - rate| is
  within figure x ci95_pct;
- free (unless --no-free): the same device without a cap, where the figures are this machine's CPU and memory.
With --before SRC (the src/ of another checkout, e.g. a worktree of an older commit, run with PYTHONPATH) the same
runs are made from that tree too, alternating in each round: a before and after measured side by side.

Where the seconds go: each run's wall time is split into the tests' measured time (their runtime_s), the ramps
(the profile's ramp_s a test, read from that tree), and the rest (fio's start and stop, the engine probe, Python);
fio's own start and stop is timed alone too (a 100 ms job, libaio), as is one fio process running eight 100 ms jobs
separated by stonewall (what one process for several tests would save).

Exit code 1 when the last tree (after) misses a target in the capped runs: the median wall time over 20 s, the median
ci95_pct over 5%, or fewer than 7 of 8 intervals holding the known rate in a run."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
BLKIO = "/sys/fs/cgroup/blkio"
CAP_BPS = 200_000_000
CAP_IOPS = 10_000
TARGET_S, TARGET_CI_PCT, TARGET_HELD = 20.0, 5.0, 7


def sh(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


@contextlib.contextmanager
def ram_loop(size_mb: int) -> Iterator[str]:
    image = f"/dev/shm/ds-standard-{uuid.uuid4().hex[:6]}.img"
    dev = None
    try:
        sh(["dd", "if=/dev/urandom", f"of={image}", "bs=1M", f"count={size_mb}", "status=none"])
        dev = sh(["losetup", "-f", "--show", "--direct-io=on", image])
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(image)


@contextlib.contextmanager
def capped(dev: str) -> Iterator[str]:
    """A blkio group holding `dev` to CAP_BPS and CAP_IOPS each way; yields its cgroup.procs."""
    st = os.stat(dev)
    majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    group = os.path.join(BLKIO, f"ds-standard-{uuid.uuid4().hex[:6]}")
    os.mkdir(group)
    try:
        for name, value in (
            ("read_bps", CAP_BPS),
            ("write_bps", CAP_BPS),
            ("read_iops", CAP_IOPS),
            ("write_iops", CAP_IOPS),
        ):
            with open(os.path.join(group, f"blkio.throttle.{name}_device"), "w") as fh:
                fh.write(f"{majmin} {value}")
        yield os.path.join(group, "cgroup.procs")
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(group)


def known_mbps(test: dict) -> float:
    """The rate the cap holds a test to: bytes per second, or requests per second x block size."""
    return min(CAP_BPS, CAP_IOPS * test["bs_bytes"]) / 1e6


def one_run(src: str, dev: str, procs: str | None, engine: str) -> dict:
    argv = [PY, "-m", "disksleuth", "bench", dev, "--profile", "standard", "--destructive", "--yes", "--json",
            "--no-save", "--engine", engine]  # fmt: skip
    if procs:
        argv = ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *argv]
    env = {**os.environ, "PYTHONPATH": src}
    started = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, cwd=os.path.dirname(src))
    wall_s = time.monotonic() - started
    if res.returncode not in (0, 1):
        raise SystemExit(f"bench failed ({src}): {res.stderr.strip()[-400:]}")
    doc = json.loads(res.stdout)
    ramp_s = float(
        subprocess.run(
            [PY, "-c", "from disksleuth.profiles import PROFILES; print(PROFILES['standard'].ramp_s)"],
            capture_output=True, text=True, env=env, check=True,
        ).stdout
    )  # fmt: skip
    tests = doc["tests"]
    cis = [t["ci95_pct"] for t in tests]
    held = []
    for t in tests:
        figure = (t["read_mbps"] or 0) + (t["write_mbps"] or 0)
        ci = t["ci95_pct"]
        held.append(ci is not None and abs(figure - known_mbps(t)) <= figure * ci / 100)
    measured = sum(t["runtime_s"] for t in tests)
    return {
        "wall_s": wall_s,
        "measured_s": measured,
        "ramp_s": ramp_s * len(tests),
        "rest_s": wall_s - measured - ramp_s * len(tests),
        "median_ci": statistics.median([c if c is not None else float("inf") for c in cis]),
        "cis": cis,
        "held": sum(held),
        "tests": [
            (t["id"], (t["read_mbps"] or 0) + (t["write_mbps"] or 0), t["ci95_pct"], t["runtime_s"]) for t in tests
        ],
    }


def fio_start_stop_s(dev: str, rounds: int = 5) -> tuple[float, float]:
    """(one 100 ms fio job's wall time less its 100 ms, one process with eight stonewalled 100 ms jobs less 0.8 s,
    divided by eight): medians over `rounds`."""
    common = ["--filename=" + dev, "--ioengine=libaio", "--direct=1", "--thread", "--readonly", "--time_based",
              "--runtime=100ms", "--rw=randread", "--bs=4k", "--iodepth=32", "--output-format=json"]  # fmt: skip
    alone, stonewalled = [], []
    for _ in range(rounds):
        started = time.monotonic()
        sh(["fio", "--name=a", *common])
        alone.append(time.monotonic() - started - 0.1)
        jobs = [a for i in range(8) for a in (f"--name=j{i}", *(["--stonewall"] if i else []))]
        started = time.monotonic()
        sh(["fio", *common, *jobs])
        stonewalled.append((time.monotonic() - started - 0.8) / 8)
    return statistics.median(alone), statistics.median(stonewalled)


def summary(label: str, runs: list[dict]) -> str:
    walls = ", ".join(f"{r['wall_s']:.1f}" for r in runs)
    cis = ", ".join(f"{r['median_ci']:.2f}" for r in runs)
    held = ", ".join(f"{r['held']} of 8" for r in runs) if "capped" in label else "n/a (no known rate)"

    def median(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    lines = [
        f"{label}: wall median {median('wall_s'):.1f} s ({walls}); measuring {median('measured_s'):.1f} s + ramps "
        f"{median('ramp_s'):.1f} s + the rest (fio start/stop, probes, Python) {median('rest_s'):.1f} s; "
        f"median ci95 {median('median_ci'):.2f}% (runs: {cis}); intervals holding the known rate: {held}"
    ]
    for r in runs:
        lines.append("    " + "; ".join(f"{i} {f:,.1f} ±{c}% in {s:.2f} s" for i, f, c, s in r["tests"]))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", help="src/ of the tree to compare with (run first in each round)")
    ap.add_argument("--after", default=os.path.join(ROOT, "src"), help="src/ of the tree measured after (this one)")
    ap.add_argument("--engine", default="libaio", help="libaio: io_uring swings under blk-throttle on this kernel")
    ap.add_argument("--no-free", action="store_true", help="skip the runs without a cap")
    args = ap.parse_args()
    trees = [("before", os.path.abspath(args.before))] if args.before else []
    trees.append(("after", os.path.abspath(args.after)))
    results: dict[tuple[str, str], list[dict]] = {}
    with ram_loop(1024) as dev:
        alone, stonewalled = fio_start_stop_s(dev)
        print(f"fio start and stop: {alone:.2f} s a process; {stonewalled:.2f} s a job in one process with stonewall")
        for n in range(args.rounds):
            for kind in ("capped",) if args.no_free else ("capped", "free"):
                for label, src in trees:
                    with contextlib.ExitStack() as stack:
                        procs = stack.enter_context(capped(dev)) if kind == "capped" else None
                        run = one_run(src, dev, procs, args.engine)
                    results.setdefault((label, kind), []).append(run)
                    held = f", held {run['held']} of 8" if kind == "capped" else ""
                    print(f"round {n + 1} {kind} {label}: {run['wall_s']:.1f} s, median ci95 {run['median_ci']:.2f}%"
                          f"{held}", flush=True)  # fmt: skip
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    for (label, kind), runs in results.items():
        print(summary(f"{label} ({kind}, {'200 MB/s and 10,000 IOPS' if kind == 'capped' else 'no cap'})", runs))
    after = results[("after", "capped")]
    misses = []
    if statistics.median(r["wall_s"] for r in after) > TARGET_S:
        misses.append(f"wall over {TARGET_S:g} s")
    if statistics.median(r["median_ci"] for r in after) > TARGET_CI_PCT:
        misses.append(f"median ci95 over {TARGET_CI_PCT:g}%")
    if min(r["held"] for r in after) < TARGET_HELD:
        misses.append(f"fewer than {TARGET_HELD} of 8 intervals held the known rate")
    print("PASS" if not misses else "FAIL: " + "; ".join(misses))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
