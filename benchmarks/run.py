"""Benchmarks of disksleuth itself. One command, as root, after ./quickstart test:

    .venv/bin/python benchmarks/run.py            # writes docs/PERFORMANCE.md
    .venv/bin/python benchmarks/run.py --no-write # only prints the table

Each benchmark prints its figure, its target and whether the target holds:
- fidelity: disksleuth's figure against bare fio running the same job, on a loop device over tmpfs,
  over alternating runs (target: within 3%); the same on a steady device (the loop device under blkio
  limits of 500 MB/s and 40,000 IOPS), where run-to-run noise does not drown a 3% difference;
- engine choice: the default engine's RND4K Q32T1 read IOPS against the best of io_uring, libaio and
  psync, measured in the same run (target: at least 95% of the best);
- confidence (issue 13): the standard profile on a preconditioned loop device over tmpfs, three rounds:
  wall time (target: 30 s), median ci95_pct (target: 5%), and whether a 10 s bare-fio reference of each
  test's own command lies within 2x its interval or 10% (target: every test), and as a control how often
  two of those bare-fio references agree within 10%; where the standard profile's time goes (measuring,
  ramp, fio start-up and shutdown, probes, Python) and disksleuth's own CPU meanwhile; `check`'s quick
  profile: wall time and each figure's interval. Rerun just these: `benchmarks/run.py --only confidence --no-write`;
- start-up: `disksleuth --version` and `disksleuth list --json` against `python3 -c pass`
  (targets: at most 4x and 6x);
- store scale: `runs` and `compare` with 10,000 runs in SQLite (target: under 0.5 s);
- slow media: the flash profile on a loop device throttled through cgroup blkio to 2 MB/s writes
  (targets: finishes within the profile's maximum time; write figures within 10% of the throttle).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))

from disksleuth.probe.fio_parse import aggregate, parse_fio_json  # noqa: E402
from disksleuth.profiles import PROFILES  # noqa: E402

PY = sys.executable
DISKSLEUTH = [PY, "-m", "disksleuth"]
BLKIO = "/sys/fs/cgroup/blkio"


@dataclass
class Result:
    name: str
    figure: str
    target: str
    holds: bool | None  # None: could not be measured here
    detail: str = ""


def sh(argv: list[str], **kw) -> subprocess.CompletedProcess[str]:  # noqa: ANN003
    return subprocess.run(argv, capture_output=True, text=True, check=True, **kw)


@contextlib.contextmanager
def loop_device(size_mb: int, fill: bool = True) -> Iterator[str]:
    image = f"/dev/shm/ds-bench-{uuid.uuid4().hex[:6]}.img"
    if fill:
        sh(["dd", "if=/dev/urandom", f"of={image}", "bs=1M", f"count={size_mb}", "status=none"])
    else:
        with open(image, "wb") as fh:
            fh.truncate(size_mb << 20)
    dev = sh(["losetup", "-f", "--show", "--direct-io=on", image]).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)


@contextlib.contextmanager
def blkio_group(dev: str, **limits: int) -> Iterator[str]:
    st = os.stat(dev)
    majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    group = os.path.join(BLKIO, f"ds-bench-{uuid.uuid4().hex[:6]}")
    os.mkdir(group)
    try:
        for key, value in limits.items():
            with open(os.path.join(group, f"blkio.throttle.{key}"), "w") as fh:
                fh.write(f"{majmin} {value}")
        yield os.path.join(group, "cgroup.procs")
    finally:
        with contextlib.suppress(OSError), open(os.path.join(group, "cgroup.procs")) as fh:
            for pid in fh.read().split():
                with contextlib.suppress(OSError), open(os.path.join(BLKIO, "cgroup.procs"), "w") as out:
                    out.write(pid)
        os.rmdir(group)


def in_group(procs: str | None, argv: list[str]) -> list[str]:
    """argv run inside the blkio group whose cgroup.procs is `procs` (the shell joins, then execs)."""
    return ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *argv] if procs else argv


def disksleuth_json(*args: str, procs: str | None = None, timeout: float = 900) -> tuple[dict, float]:
    argv = in_group(procs, [*DISKSLEUTH, *args, "--json", "--no-save"])
    started = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - started
    if res.returncode not in (0, 1):
        raise RuntimeError(f"disksleuth {' '.join(args)} failed: {res.stderr.strip()}")
    return json.loads(res.stdout), elapsed


def bare_fio(command: str, **replace: str) -> dict:
    argv = shlex.split(command)
    for key, value in replace.items():
        argv = [a for a in argv if not a.startswith(f"--{key}=")] + [f"--{key}={value}"]
    job = aggregate(parse_fio_json(sh(argv).stdout))
    read, write = job.read, job.write
    return {
        "read_mbps": read.bw_bytes / 1e6 if read and read.active else None,
        "read_iops": read.iops if read and read.active else None,
        "write_mbps": write.bw_bytes / 1e6 if write and write.active else None,
        "write_iops": write.iops if write and write.active else None,
    }


def wall(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


# --- the benchmarks ----------------------------------------------------------------------------


def bench_startup() -> list[Result]:
    # An installed package has bytecode (pip compiles it at install time); an editable checkout run with
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start. Measure the installed state.
    sh([PY, "-m", "compileall", "-q", os.path.join(ROOT, "src", "disksleuth")])
    base = wall([PY, "-c", "pass"], 41)
    version = wall([*DISKSLEUTH, "--version"], 41)
    listing = wall([*DISKSLEUTH, "list", "--json"], 41)
    return [
        Result(
            "start-up: --version",
            f"{version * 1000:.0f} ms = {version / base:.1f}x python -c pass ({base * 1000:.0f} ms)",
            "<= 4x",
            version / base <= 4,
        ),
        Result(
            "start-up: list --json", f"{listing * 1000:.0f} ms = {listing / base:.1f}x", "<= 6x", listing / base <= 6
        ),
    ]


def bench_store(runs: int = 10_000) -> list[Result]:
    from disksleuth.store.db import Store

    tmp = tempfile.mkdtemp(prefix="ds-bench-store-")
    url = f"sqlite:///{tmp}/results.sqlite"
    try:
        doc = json.load(open(os.path.join(HERE, "sample_run.json")))  # noqa: SIM115
        with Store(url) as store:
            batch = []
            for i in range(runs):
                d = json.loads(json.dumps(doc))
                d["run"]["started_at"] = (dt.datetime(2026, 1, 1) + dt.timedelta(minutes=i)).strftime(
                    "%Y-%m-%dT%H:%M:%S+0000"
                )
                d["device"]["model"] = f"Drive {i % 37}"
                batch.append((d, [f"batch{i % 10}"], None))
                if len(batch) == 1000:
                    store.save_many(batch)
                    batch = []
            if batch:
                store.save_many(batch)
        listing = wall([*DISKSLEUTH, "runs", "--db", url], 5)
        listing_json = wall([*DISKSLEUTH, "runs", "--json", "--db", url], 5)
        filtered = wall([*DISKSLEUTH, "runs", "--tag", "batch3", "--device", "Drive 5", "--db", url], 5)
        compare = wall([*DISKSLEUTH, "compare", "1", str(runs // 2), str(runs), "--db", url], 5)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [
        Result(
            f"store: runs ({runs:,} runs)",
            f"{listing:.2f} s (--json {listing_json:.2f} s, filtered {filtered:.2f} s)",
            "< 0.5 s",
            max(listing, listing_json, filtered) < 0.5,
        ),
        Result(f"store: compare 3 of {runs:,}", f"{compare:.2f} s", "< 0.5 s", compare < 0.5),
    ]


def _abba_fidelity(
    dev: str, rounds: int, label: str, extra: tuple[str, ...] = (), procs: str | None = None
) -> list[Result]:
    """disksleuth's quick-profile figures against bare fio running each test's own fio_command, in
    alternating ABBA order (ours then bare, bare then ours) so that order effects cancel out; `procs`: both
    run inside that blkio group."""
    ours: dict[str, list[float]] = {"RND4K_Q32T1_read": [], "SEQ1M_Q8T1_read": []}
    bare: dict[str, list[float]] = {k: [] for k in ours}

    def key(test_id: str) -> str:
        return "read_iops" if test_id.startswith("RND") else "read_mbps"

    def ours_now() -> list[dict]:
        doc, _ = disksleuth_json("bench", dev, "--profile", "quick", *extra, procs=procs)
        return [t for t in doc["tests"] if t["id"] in ours]

    def bare_now(t: dict) -> float:
        return bare_fio(shlex.join(in_group(procs, shlex.split(t["fio_command"]))))[key(t["id"])]

    for n in range(rounds):
        tests = ours_now()
        if n % 2:  # bare first this round: run ours again right after it
            for t in tests:
                bare[t["id"]].append(bare_now(t))
            tests = ours_now()
            for t in tests:
                ours[t["id"]].append(t[key(t["id"])])
        else:
            for t in tests:
                ours[t["id"]].append(t[key(t["id"])])
                bare[t["id"]].append(bare_now(t))
    out = []
    for test_id in ours:
        ratio = statistics.median(ours[test_id]) / statistics.median(bare[test_id])
        unit = "IOPS" if test_id.startswith("RND") else "MB/s"
        out.append(
            Result(
                f"{label}: {test_id}",
                f"{(ratio - 1) * 100:+.1f}% (median {statistics.median(ours[test_id]):,.0f} vs "
                f"{statistics.median(bare[test_id]):,.0f} {unit}, {rounds} ABBA rounds)",
                "within 3%",
                abs(ratio - 1) <= 0.03,
                detail=f"ours {[round(v) for v in ours[test_id]]}, bare {[round(v) for v in bare[test_id]]}",
            )
        )
    return out


def bench_fidelity(rounds: int = 6) -> list[Result]:
    """On a RAM-backed loop device: fio's own run-to-run noise is what limits this one here."""
    with loop_device(512) as dev:
        return _abba_fidelity(dev, rounds, "fidelity")


def bench_fidelity_steady(rounds: int = 4) -> list[Result]:
    """The same comparison on a device with a steady rate: a loop device under blkio limits (500 MB/s
    and 40,000 read IOPS, libaio: io_uring swings under blk-throttle on this kernel). On the bare RAM device
    bare fio alone moves ±20% run to run here, more than the 3% target can resolve; a steady device shows
    whether disksleuth's figure is the one fio measures for the same command."""
    if not os.path.exists(os.path.join(BLKIO, "blkio.throttle.read_iops_device")):
        return [Result("fidelity on a steady device", "cgroup v1 blkio is not mounted", "within 3%", None)]
    with loop_device(512) as dev, blkio_group(dev, read_bps_device=500_000_000, read_iops_device=40_000) as procs:
        label = "fidelity on a steady device (500 MB/s, 40k IOPS limits)"
        return _abba_fidelity(dev, rounds, label, ("--engine", "libaio"), procs)


def bench_engines(rounds: int = 3) -> list[Result]:
    from disksleuth.probe.fio import pick_engine

    with loop_device(512) as dev:
        chosen = pick_engine(dev, True)
        base = (
            "fio --name=RND4K_Q32T1_read --filename={dev} --rw=randread --bs=4096 --iodepth=32 --numjobs=1 "
            "--ioengine={engine} --direct=1 --group_reporting --time_based --runtime=3s --ramp_time=500ms "
            "--randrepeat=0 --norandommap --readonly --output-format=json"
        )
        iops: dict[str, list[float]] = {e: [] for e in ("io_uring", "libaio", "psync")}
        for _ in range(rounds):
            for engine in iops:
                iops[engine].append(bare_fio(base.format(dev=dev, engine=engine))["read_iops"])
    med = {e: statistics.median(v) for e, v in iops.items()}
    best = max(med, key=med.get)
    share = med[chosen] / med[best]
    figures = ", ".join(f"{e} {v:,.0f}" for e, v in med.items())
    return [
        Result(
            "engine choice: RND4K Q32T1 read",
            f"{chosen} = {share * 100:.0f}% of best ({best}); {figures} IOPS",
            ">= 95% of best",
            share >= 0.95,
        )
    ]


def _reference(command: str) -> dict:
    """A 10 s bare-fio run of the same job (same ramp), the figure an interval should hold."""
    return bare_fio(command, runtime="10s")


def _headline(t: dict) -> float:
    return (t.get("read_mbps") or 0.0) + (t.get("write_mbps") or 0.0)


def bench_confidence(rounds: int = 3) -> list[Result]:
    """The standard profile on a preconditioned 1 GiB loop device over tmpfs, `rounds` times: wall time,
    each test's ci95_pct, and whether a 10 s bare-fio reference of the same job (run right after that round)
    lies within 2x the reported interval or 10%, whichever is wider (issue 13's honest-interval target)."""
    walls, cis, hits, strict, rows = [], [], [], [], []
    refs: dict[str, list[float]] = {}
    with loop_device(1024) as dev:  # dd from /dev/urandom: every block written before anything is read
        for n in range(rounds):
            doc, elapsed = disksleuth_json("bench", dev, "--profile", "standard", "--destructive", "--yes")
            walls.append(elapsed)
            for t in doc["tests"]:
                ours, ci = _headline(t), t.get("ci95_pct")
                ref = _headline(_reference(t["fio_command"]))
                refs.setdefault(t["id"], []).append(ref)
                dev_pct = 100 * abs(ours / ref - 1)
                if ci is not None:
                    cis.append(ci)
                allowed = max(2 * (ci if ci is not None else 100.0), 10.0)
                hits.append(dev_pct <= allowed)
                strict.append(ci is not None and dev_pct <= ci)
                rows.append(
                    f"r{n + 1} {t['id']} {ours:,.0f} ± {ci if ci is not None else float('nan'):.1f}% "
                    f"({t['runtime_s']:.2f} s{'' if t.get('settled') else ', max'}) vs {ref:,.0f} MB/s "
                    f"({dev_pct:.1f}% off)"
                )
    wall_s, med_ci = statistics.median(walls), statistics.median(cis) if cis else float("nan")
    coverage, strict_cov = sum(hits) / len(hits), sum(strict) / len(strict)
    # The control: the machine's own run-to-run agreement. Each round's 10 s references of one test are
    # bare fio on the identical job; how often do two of them agree within 10%?
    pairs = [
        100 * abs(a / b - 1)
        for values in refs.values()
        for i, a in enumerate(values)
        for b in values[i + 1 :]
    ]
    agree = sum(p <= 10 for p in pairs) / len(pairs) if pairs else float("nan")
    return [
        Result(
            "confidence: standard profile wall time",
            f"{wall_s:.1f} s median of {rounds} ({', '.join(f'{w:.1f}' for w in walls)} s)",
            "<= 30 s",
            wall_s <= 30,
        ),
        Result(
            "confidence: median ci95_pct (standard)",
            f"±{med_ci:.1f}% over {len(cis)} tests (range {min(cis):.1f}-{max(cis):.1f}%)",
            "<= 5%",
            med_ci <= 5,
        ),
        Result(
            "confidence: honest intervals vs 10 s bare fio",
            f"{coverage * 100:.0f}% of {len(hits)} within max(2x interval, 10%); "
            f"{strict_cov * 100:.0f}% within 1x interval",
            "every test, >= 3 rounds",
            coverage == 1.0,
            "; ".join(rows),
        ),
        Result(
            "confidence: control: bare fio against itself (10 s references of one test, across rounds)",
            f"{agree * 100:.0f}% of {len(pairs)} pairs within 10% (median difference "
            f"{statistics.median(pairs):.1f}%, largest {max(pairs):.1f}%)",
            "report",
            None,
            "; ".join(f"{k} " + ", ".join(f"{v:,.0f}" for v in vs) + " MB/s" for k, vs in refs.items()),
        ),
    ]


def bench_dead_time() -> list[Result]:
    """Where the standard profile's wall time goes, measured in-process: each fio process's wall time
    split into fio start-up and shutdown, ramp and measurement (fio's own runtime), plus the probes
    (fio --version, the engine probe) and the rest (target inspection, Python)."""
    from disksleuth.probe import fio, runner
    from disksleuth.run import bench

    spans: list[tuple[str, float, dict]] = []
    real_run_job, real_run = fio.run_job, runner.run

    def timed_run_job(argv, **kw):  # noqa: ANN001, ANN003, ANN202
        started = time.perf_counter()
        report, samples = real_run_job(argv, **kw)
        name = next((a.split("=", 1)[1] for a in argv if a.startswith("--name=")), "?")
        spans.append((name, time.perf_counter() - started, {"report": report}))
        return report, samples

    def timed_run(argv, **kw):  # noqa: ANN001, ANN003, ANN202
        started = time.perf_counter()
        try:
            return real_run(argv, **kw)
        finally:
            what = "engine probe" if any(a == "--name=probe" for a in argv) else " ".join(argv[:2])
            spans.append((what, time.perf_counter() - started, {}))

    fio.run_job, runner.run = timed_run_job, timed_run
    try:
        with loop_device(1024) as dev:
            opts = bench.BenchOptions(profile="standard", destructive=True, yes=True)
            cpu_before = resource.getrusage(resource.RUSAGE_SELF)  # this process only: fio is a child
            started = time.perf_counter()
            run = bench.run_bench(bench.inspect_target(dev), opts)
            total = time.perf_counter() - started
            cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        fio.run_job, runner.run = real_run_job, real_run
    cli_start = wall([*DISKSLEUTH, "--version"], 5)
    tests = {t.id: t for t in run.tests}
    measuring = sum(t.runtime_s for t in run.tests)
    ramp = PROFILES["standard"].ramp_s * len(run.tests)
    fio_wall = sum(d for name, d, _ in spans if name in tests)
    probes = sum(d for name, d, _ in spans if name not in tests)
    overhead = fio_wall - measuring - ramp
    other = total - fio_wall - probes
    at_max = sum(1 for t in run.tests if not t.settled)
    per_test = ", ".join(
        f"{name} {d:.2f} s ({tests[name].runtime_s:.2f} measured)" for name, d, _ in spans if name in tests
    )
    breakdown = (
        f"{total + cli_start:.1f} s = measuring {measuring:.1f} s "
        f"({at_max} of {len(run.tests)} tests at their maximum) "
        f"+ ramp {ramp:.1f} s + fio start-up/shutdown {overhead:.1f} s "
        f"({overhead / len(run.tests):.2f} s a test) "
        f"+ probes {probes:.1f} s ({', '.join(f'{n} {d:.2f}' for n, d, _ in spans if n not in tests)}) "
        f"+ other {other:.1f} s + Python start {cli_start:.2f} s"
    )
    own_cpu_s = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return [
        Result(
            "confidence: where the standard profile's time goes",
            breakdown,
            "dead time (not measuring or ramp) <= 15% of wall",
            (overhead + probes + other + cli_start) <= 0.15 * (total + cli_start),
            per_test,
        ),
        Result(
            "confidence: disksleuth's own CPU during the standard run (reading fio's 100 ms status documents)",
            f"{own_cpu_s:.2f} s of CPU in {total:.1f} s = {100 * own_cpu_s / total:.1f}% of one core "
            f"({len(run.tests)} tests, {sum(len(t.series) for t in run.tests)} status samples)",
            "report",
            None,
        ),
    ]


def bench_check_quick() -> list[Result]:
    """`check` (quick profile) on a preconditioned loop device with writes: its wall time and the interval
    of each figure."""
    with loop_device(512) as dev:
        doc, elapsed = disksleuth_json("check", dev, "--destructive", "--yes")
    tests = doc.get("tests") or (doc.get("run") or {}).get("tests") or []
    figs = ", ".join(
        f"{t['id']} {_headline(t):,.0f} MB/s ± {t['ci95_pct'] if t.get('ci95_pct') is not None else float('nan'):.1f}%"
        f" ({t['runtime_s']:.1f} s)"
        for t in tests
    )
    return [Result("confidence: check (quick profile)", f"{elapsed:.1f} s wall; {figs}", "report", None)]


def bench_slow_media() -> list[Result]:
    if not os.path.exists(os.path.join(BLKIO, "blkio.throttle.write_bps_device")):
        return [Result("slow media: flash at 2 MB/s writes", "cgroup v1 blkio is not mounted", "—", None)]
    profile = PROFILES["flash"]
    max_s = sum((profile.max_runtime_s or profile.runtime_s) + profile.ramp_s for _ in profile.tests) + 30
    throttle = 2_000_000
    # libaio: under blk-throttle io_uring figures swing run to run (see docs/PERFORMANCE.md).
    with loop_device(256) as dev, blkio_group(dev, write_bps_device=throttle) as procs:
        doc, elapsed = disksleuth_json(
            "bench", dev, "--profile", "flash", "--destructive", "--yes", "--engine", "libaio", procs=procs
        )
    writes = {t["id"]: t["write_mbps"] for t in doc["tests"] if t.get("write_mbps")}
    ok = all(abs(v / (throttle / 1e6) - 1) <= 0.10 for v in writes.values())
    figs = ", ".join(f"{k} {v:.2f} MB/s" for k, v in writes.items())
    return [
        Result(
            "slow media: flash profile wall time",
            f"{elapsed:.0f} s",
            f"<= {max_s:.0f} s (its maximum)",
            elapsed <= max_s,
        ),
        Result("slow media: write figures vs 2 MB/s throttle", figs, "within 10%", ok),
    ]


# --- report ------------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    fio = sh(["fio", "--version"]).stdout.strip()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{os.cpu_count()} x {cpu}, {mem:.0f} GiB RAM, Linux {platform.release()}, {fio}, "
        f"Python {platform.python_version()}"
    )


def table(results: list[Result]) -> str:
    lines = ["| benchmark | measured | target | holds |", "|---|---|---|---|"]
    for r in results:
        holds = "yes" if r.holds else ("n/a" if r.holds is None else "**no**")
        lines.append(f"| {r.name} | {r.figure} | {r.target} | {holds} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-write", action="store_true", help="print only; do not rewrite docs/PERFORMANCE.md")
    ap.add_argument(
        "--only",
        help="run only benchmarks whose name contains this (startup, store, fidelity, engine, confidence, slow)",
    )
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("benchmarks need root (loop devices, cgroups)", file=sys.stderr)
        return 2
    suites = [
        ("startup", bench_startup),
        ("store", bench_store),
        ("fidelity", bench_fidelity),
        ("fidelity-steady", bench_fidelity_steady),
        ("engine", bench_engines),
        ("confidence", bench_confidence),
        ("confidence-time", bench_dead_time),
        ("confidence-check", bench_check_quick),
        ("slow", bench_slow_media),
    ]
    results: list[Result] = []
    for name, fn in suites:
        if args.only and args.only not in name:
            continue
        print(f"… {name}", file=sys.stderr, flush=True)
        results.extend(fn())
    text = table(results)
    print(text)
    details = [f"- {r.name}: {r.detail}" for r in results if r.detail]
    if args.no_write or args.only:
        print("\n".join(["", *details]))
    if not args.no_write and not args.only:
        doc = [
            "# Performance",
            "",
            f"Measured {dt.date.today().isoformat()} on {machine()}.",
            "",
            "Reproduce (as root, after `./quickstart test`): `.venv/bin/python benchmarks/run.py`. "
            "What each line measures is described at the top of `benchmarks/run.py`.",
            "",
            text,
            "",
        ]
        if details:
            doc += ["Details:", "", *details, ""]
        with open(os.path.join(ROOT, "docs", "PERFORMANCE.md"), "w") as fh:
            fh.write("\n".join(doc) + NOTES)
        print("wrote docs/PERFORMANCE.md", file=sys.stderr)
    return 0 if all(r.holds is not False for r in results) else 1


NOTES = """
## Notes

- **io_uring under cgroup v1 blk-throttle.** With a blkio read throttle of 40 MB/s, bare fio 3.33 with
  `--ioengine=io_uring` measured anywhere from 20 to 41 MB/s run to run on this kernel (6.18), while
  libaio (40.9 MB/s) and psync (40.0 MB/s) held steady. Real hardware does not throttle this way, so the
  default stays io_uring (DESIGN.md), but the throttled benchmarks and tests here pin `--engine libaio`.
- **QD1 on a RAM-backed loop device is bimodal on this 2-vCPU VM.** Bare fio alone, same job
  (`--rw=randread --bs=4096 --iodepth=1 --ioengine=io_uring`), measured 53,108 / 52,122 / 79,870 IOPS over
  10 s and 89,651 / 92,799 / 96,525 IOPS over 4 s, back to back: it jumps between two levels run to run
  (most likely where fio and the loop device's worker land on the two vCPUs; not proven), independent
  of run length. The "figures vs 10 s reference" target therefore
  fails for the RND4K Q1T1 tests here while every other test lands within a few percent; on real disks
  QD1 latency is dominated by the device, not by vCPU placement.
- **Fidelity at the 3% edge.** Over ABBA rounds disksleuth's figure came out 0.1-3.0% above bare fio
  on the identical command line (the only difference is `--status-interval=1`, which by itself made
  bare fio slightly slower, not faster), so the sequential-read target holds in some runs and misses by
  a hair in others on this VM.
- **Stop when sure (issue 13).** fio's status documents come every 250 ms (`--status-interval=250ms`: fio
  parses it as a time and refuses only values under 1 ms). After fio's own ramp reset, the samples are
  cut into 4 to 10 batches (at least 2 samples each) and the 95% interval of the mean is
  mean +- t(k-1) sd(batch means) / sqrt(k) (non-overlapping batch means: Schmeiser 1982; Law & Kelton);
  a test stops once that half-width is within `--precision` (3%) after its minimum time (standard: 1.5 s,
  writes 2.5 s), and fio's runtime ends it at its maximum (4 s). `--time SECONDS` gives a fixed length;
  the interval is reported either way (`ci95_pct`). On the recorded series (tests/data/series/*-250ms.json)
  the batch-means interval over 10 s windows held the long-run mean of the noisy and two-mode recordings
  97-100% of the time where the textbook interval that treats samples as independent held it 74-82%;
  no interval from one run can see a mode the run has not visited (tests/test_confidence.py): that is
  what `--repeat N` is for.
- **Baseline lookups at 100,000 runs (issue 23).** `benchmarks/bench_baseline.py` builds a 100,000-run SQLite store
  (507 MB) in 13.5 s by bulk inserts of the rows one real run document (sample_run.json) gets from Store.save, then
  times `run.baseline.baseline_of` (the earlier runs, their tests, the judgement), median of 7. On 2026-11-24 with the
  machine quiet: a drive with 1,000 runs 19.9 ms, a drive without a serial (by name, model, size, host) 0.4 ms, and
  the worst cases, a drive by serial with only 2 runs 58.1 ms and a new drive 56.7 ms: no new index, the candidates
  are read newest first by id with LIMIT, so a drive with history stops early, but a drive with little history reads
  every run's row (no index on the serial id). With the machine loaded (load average 13.8 on 2 cores) the same worst
  cases took 131-268 ms. An index `runs (device_serial_sha256, id)` would make them an index seek; it needs a
  migration, left to be numbered after the health tables' migration.
- **pci.ids names for `links`.** The system's pci.ids is 1.3 MB (~37,000 lines). `links` looks up only the
  vendors present (a `bytes.find` for the vendor line, one regex scan to the end of that vendor's block,
  then a `find` for each device) instead of parsing every line: best of 20 rounds on this busy VM,
  9 ids of a typical desktop took 4.9-8.9 ms against 24-66 ms for a line-by-line parse of the whole
  file (`benchmarks/bench_pciids.py`); `list` and every other command never open the file.
"""

if __name__ == "__main__":
    raise SystemExit(main())
