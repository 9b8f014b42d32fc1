"""Benchmark profiles (DESIGN.md "Benchmark profiles") and the fio command line for each test (pure)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

WRITE_RW = {"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite"}


@dataclass(frozen=True)
class TestSpec:
    __test__ = False  # not a pytest test class

    id: str
    rw: str  # fio rw=
    bs_bytes: int
    iodepth: int
    numjobs: int = 1
    rwmixread: int | None = None
    sync: bool = False  # O_SYNC writes (flash profile)
    engine: str | None = None  # a fixed engine (psync for the QD1 latency test)
    # Which analysis turns fio's output into a result (bench.ANALYSES); "timed" is the usual
    # time-based test. Another kind brings its own fio arguments and its own analysis.
    kind: str = "timed"
    extra_args: tuple[str, ...] = ()  # more fio arguments, e.g. --write_bw_log for a kind that reads logs
    time_based: bool = True  # False: fio stops after --size bytes (--runtime only bounds it)

    @property
    def writes(self) -> bool:
        return self.rw in WRITE_RW


# fio's start and stop around each test (docs/PERFORMANCE.md: 0.29 s a test, measured on the standard profile).
FIO_START_STOP_S = 0.3


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    tests: tuple[TestSpec, ...]
    runtime_s: float
    ramp_s: float
    scratch_size_bytes: int
    second_half: bool = False  # flash: the region is the second half of the target
    reference: bool = False  # riscos: a RAM-backed reference runs beside the target
    # Adaptive length bounds (issue: fast and trustworthy measurement).
    min_runtime_s: float | None = None
    max_runtime_s: float | None = None
    # Writes wait longer before they may stop: a write cache can hold a steady burst for seconds and
    # then fall off; no rule sees a cliff that has not happened yet (tests/test_confidence.py).
    min_write_runtime_s: float | None = None
    # The adaptive tests of one pass share this much measuring time (None: each may run to its maximum).
    # Each gets its minimum plus an equal part of what is left over (plan.measuring_limit_s), so the set
    # ends on time and the time a test saves by being sure early goes to the tests after it.
    measure_budget_s: float | None = None
    # sustained: no random prefill of the scratch file (the fill is the test), and its default size is a
    # share of the free space rather than scratch_size_bytes.
    prefill: bool = True
    scratch_free_share: float | None = None

    def expected_seconds(self) -> tuple[float, float] | None:
        """(shortest, longest) its tests take at their default lengths, reads and writes: each test's ramp,
        fio's start and stop, and measuring between its minimum and its maximum (or the profile's shared
        budget); twice with a RAM reference. None when a test runs until its size is written (sustained)."""
        if any(not t.time_based for t in self.tests):
            return None
        overhead = len(self.tests) * (self.ramp_s + FIO_START_STOP_S)
        shortest = sum(self.min_seconds(t) for t in self.tests)
        longest = sum(self.max_runtime_s or self.runtime_s for t in self.tests)
        if self.measure_budget_s is not None:
            longest = min(longest, self.measure_budget_s)
        passes = 2 if self.reference else 1
        return passes * (overhead + shortest), passes * (overhead + longest)

    def expected_duration(self) -> str:
        """How long its tests take, in words for --help: "about 9-15 s"."""
        span = self.expected_seconds()
        if span is None:
            return f"at most {self.runtime_s / 60:g} min by default"
        low, high = (round(v) for v in span)
        return f"about {low}-{high} s" if high > low else f"about {low} s"

    def min_seconds(self, spec: TestSpec) -> float:
        minimum = self.min_write_runtime_s if spec.writes and self.min_write_runtime_s else self.min_runtime_s
        return minimum or 1.0

    def min_samples(self, spec: TestSpec) -> int:
        return max(1, round(self.min_seconds(spec)))


def _seq(bs_label: str, bs: int, qd: int, jobs: int, direction: str) -> TestSpec:
    rw = "read" if direction == "read" else "write"
    return TestSpec(f"SEQ{bs_label}_Q{qd}T{jobs}_{direction}", rw, bs, qd, jobs)


def _rnd(qd: int, jobs: int, direction: str, *, sync: bool = False) -> TestSpec:
    rw = "randread" if direction == "read" else "randwrite"
    return TestSpec(f"RND4K_Q{qd}T{jobs}_{direction}", rw, 4 * KIB, qd, jobs, sync=sync)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "quick",
            "SEQ1M Q8T1 and RND4K Q32T1, read (and write when the target allows); for `check`",
            (_seq("1M", MIB, 8, 1, "read"), _rnd(32, 1, "read"), _seq("1M", MIB, 8, 1, "write"), _rnd(32, 1, "write")),
            runtime_s=2.0,
            ramp_s=0.5,
            scratch_size_bytes=256 * MIB,
            # Stops when its 95% interval is within --precision (4 samples a second), between these.
            min_runtime_s=1.5,
            max_runtime_s=3.0,
        ),
        Profile(
            "standard",
            "CrystalDiskMark/KDiskMark default set: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write",
            tuple(
                t
                for pair in (
                    (_seq("1M", MIB, 8, 1, "read"), _seq("1M", MIB, 8, 1, "write")),
                    (_seq("1M", MIB, 1, 1, "read"), _seq("1M", MIB, 1, 1, "write")),
                    (_rnd(32, 1, "read"), _rnd(32, 1, "write")),
                    (_rnd(1, 1, "read"), _rnd(1, 1, "write")),
                )
                for t in pair
            ),
            runtime_s=5.0,
            # Eight tests in 20 s (docs/PERFORMANCE.md has where the time goes): a ramp of 0.25 s (a queue fills
            # in milliseconds; what drifts for longer, a write cache, no ramp of a test's length would settle),
            # each test stops as soon as its 95% interval is within --precision, and 12 s of measuring in all
            # leaves 8 s for the ramps (2 s), fio's start and stop (0.3-0.6 s a test) and the probes. Figures come
            # from completed requests (analysis/completions.py), whose intervals are narrower at the same length.
            ramp_s=0.25,
            scratch_size_bytes=1 * GIB,
            min_runtime_s=1.0,
            max_runtime_s=3.0,
            min_write_runtime_s=1.5,
            measure_budget_s=12.0,
        ),
        Profile(
            "mixed",
            "randrw 75/25, 4K, QD64, 1 job",
            (TestSpec("RND4K_Q64T1_randrw75", "randrw", 4 * KIB, 64, 1, rwmixread=75),),
            runtime_s=10.0,
            ramp_s=2.0,
            scratch_size_bytes=1 * GIB,
            min_runtime_s=3.0,
            max_runtime_s=20.0,
            min_write_runtime_s=5.0,
        ),
        Profile(
            "homelab",
            "seq 1M readwrite QD32 x2 jobs; randrw 4K QD32 x4 jobs; randread 4K QD1 sync (latency)",
            (
                TestSpec("SEQ1M_Q32T2_rw", "rw", MIB, 32, 2, rwmixread=50),
                TestSpec("RND4K_Q32T4_randrw", "randrw", 4 * KIB, 32, 4, rwmixread=50),
                TestSpec("RND4K_Q1T1_read_lat", "randread", 4 * KIB, 1, 1, engine="psync"),
            ),
            runtime_s=10.0,
            ramp_s=2.0,
            scratch_size_bytes=1 * GIB,
            min_runtime_s=3.0,
            max_runtime_s=20.0,
            min_write_runtime_s=5.0,
        ),
        Profile(
            "flash",
            "linear 1M direct read/write; random 4K read and write at QD1 with O_SYNC; second half of the target",
            # What an SD card's classes promise, measured the way the SD Physical Layer Specification 9.10 does
            # (analysis/card_claims.py judges against them): Speed Class, UHS Speed Grade and Video Speed Class
            # (4.13) are sequential writes in whole allocation units (AU_SIZE, 4.10.2.4), written back to back in
            # recording units of up to 512 KiB; 1 MiB sequential writes fill whole recording units of any AU. The
            # Application Performance Class (4.16) is 4 KiB random reads and writes at queue depth 1 over a 1 GB
            # range (A2's higher figures also need the card's command queue and cache, which the host must run).
            (
                _seq("1M", MIB, 1, 1, "read"),
                _seq("1M", MIB, 1, 1, "write"),
                _rnd(1, 1, "read", sync=True),
                _rnd(1, 1, "write", sync=True),
            ),
            runtime_s=10.0,
            ramp_s=1.0,
            scratch_size_bytes=512 * MIB,
            second_half=True,
            min_runtime_s=4.0,
            max_runtime_s=30.0,
            min_write_runtime_s=6.0,
        ),
        Profile(
            "riscos",
            "8M sequential read/write; random 4K randrw 80/20 QD1; each as % of a RAM-backed reference",
            (
                _seq("8M", 8 * MIB, 1, 1, "read"),
                _seq("8M", 8 * MIB, 1, 1, "write"),
                TestSpec("RND4K_Q1T1_randrw80", "randrw", 4 * KIB, 1, 1, rwmixread=80),
            ),
            runtime_s=5.0,
            ramp_s=1.0,
            scratch_size_bytes=512 * MIB,
            reference=True,
            min_runtime_s=2.0,
            max_runtime_s=10.0,
            min_write_runtime_s=4.0,
        ),
        Profile(
            "sustained",
            "sequential 1M writes QD4 until --size (or --max-time): where the write cache runs out",
            (
                # TechPowerUp writes "a sequential stream of 1 MB blocks in a single thread, like a typical file
                # copy" and samples twice a second; AnandTech's whole-drive fill keeps 128 kB x QD32 = 4 MiB in
                # flight. One job of 1 MiB at QD4 is both: a file-copy-like stream with AnandTech's 4 MiB in flight,
                # enough to keep an NVMe drive at its cache rate. Not time-based: fio stops after --size bytes;
                # --runtime (from --max-time) bounds it. fio logs bandwidth every 100 ms (analysis/sustained.py).
                TestSpec(
                    "SEQ1M_Q4T1_fill",
                    "write",
                    MIB,
                    4,
                    1,
                    kind="fill",
                    extra_args=("--log_avg_msec=100",),
                    time_based=False,
                ),
            ),
            runtime_s=1800.0,  # the default --max-time
            ramp_s=0.0,
            scratch_size_bytes=0,
            prefill=False,
            # A scratch file takes at most half the free space: enough to run past most SLC caches
            # (a cache is usually a fraction of the free space), and leaves the file system room.
            scratch_free_share=0.5,
        ),
    )
}


@dataclass(frozen=True)
class JobPlan:
    """Where and how long one test runs."""

    filename: str
    size_bytes: int | None  # None: the whole device
    offset_bytes: int | None
    engine: str
    direct: bool
    runtime_s: float
    ramp_s: float
    steady_state: str | None = None  # fio --steadystate=, e.g. "bw_slope:2%"
    steady_state_duration_s: float | None = None
    read_only: bool = False  # fio --readonly: fio itself refuses any write


def fio_filename(path: str) -> str:
    """`path` as fio's `filename=` must be given it.

    fio splits `filename` into several files at every ':' unless it is escaped as '\\:' (HOWTO,
    "filename"; options.c get_next_str() drops the backslash before an escaped ':' and keeps every
    other backslash, so escaping each ':' is exact). str_filename_cb() also strips blanks at both
    ends, which no escape survives: such a name is refused."""
    if path != path.strip():
        raise ValueError(f"{path!r}: fio cannot take a file name that begins or ends with a blank")
    return path.replace(":", "\\:")


def fio_argv(spec: TestSpec, plan: JobPlan) -> list[str]:
    """The fio command line for one test. Anyone can paste its shell form to get the same figures."""
    argv = [
        "fio",
        f"--name={spec.id}",
        f"--filename={fio_filename(plan.filename)}",
        f"--rw={spec.rw}",
        f"--bs={spec.bs_bytes}",
        f"--iodepth={spec.iodepth}",
        f"--numjobs={spec.numjobs}",
        f"--ioengine={spec.engine or plan.engine}",
        f"--direct={1 if plan.direct else 0}",
        "--group_reporting",
        # Jobs as threads of one process: a parent-death signal then ends every job (forked job
        # processes outlive a killed fio; seen with fio 3.33).
        "--thread",
        *(["--time_based"] if spec.time_based else []),
        f"--runtime={_secs(plan.runtime_s)}",
        f"--ramp_time={_secs(plan.ramp_s)}",
        # Fresh random offsets each run, no random map bookkeeping (as KDiskMark does).
        "--randrepeat=0",
        "--norandommap",
        # Percentiles of total latency (submission + completion), only the ones we report.
        "--lat_percentiles=1",
        "--percentile_list=50:99:99.9",
    ]
    if spec.rwmixread is not None:
        argv.append(f"--rwmixread={spec.rwmixread}")
    if spec.writes:
        # New random data for every write, so compression or dedupe cannot flatter the figure.
        argv.append("--refill_buffers")
    if spec.sync:
        argv.append("--sync=1")
    if plan.size_bytes is not None:
        argv.append(f"--size={plan.size_bytes}")
    if plan.offset_bytes:
        argv.append(f"--offset={plan.offset_bytes}")
    if plan.steady_state:
        argv.append(f"--steadystate={plan.steady_state}")
        if plan.steady_state_duration_s:
            argv.append(f"--steadystate_duration={_secs(plan.steady_state_duration_s)}")
    argv.extend(spec.extra_args)
    if plan.read_only:
        argv.append("--readonly")  # belt and braces for raw devices and files we must not write
    argv.append("--output-format=json")
    return argv


def _secs(v: float) -> str:
    # fio takes time values with units; milliseconds keep sub-second ramps exact.
    return f"{int(round(v * 1000))}ms" if v != int(v) else f"{int(v)}s"


def shell_command(argv: list[str]) -> str:
    return shlex.join(argv)
