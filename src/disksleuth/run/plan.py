"""The benchmark plan (pure): what runs where, read-only or not, for how long. No I/O here.

`plan_bench` turns an inspected target, the options and a profile into a frozen `BenchPlan`; bench.py
carries it out. Refusals (writes to a device in use, too little space) are raised here, before anything
touches the target.
"""

from __future__ import annotations

import errno
import math
from dataclasses import dataclass, replace

from disksleuth.analysis.safety import (
    array_refusal,
    file_write_refusal,
    held_refusal,
    identity_line,
    renamed_refusal,
    write_refusal,
)
from disksleuth.errors import EnvironmentProblem, SafetyRefusal, UsageError
from disksleuth.model.held import HeldDevice
from disksleuth.probe.target import TargetInfo
from disksleuth.profiles import MIB, PROFILES, Profile, TestSpec, fio_filename
from disksleuth.units import fmt_bytes, fmt_size

# Transports with no drive behind them to ask for SMART health.
VIRTUAL = ("loop", "zram", "md", "dm", "virtio", "unknown")
# The kernel's own file systems: views of its state or interfaces (proc(5), sysfs(5), cgroups(7), ...) with no
# storage behind them, where a scratch file either cannot be made or would land in memory beside the kernel's
# files (/dev is devtmpfs). tmpfs and ramfs are not here: memory-backed, but a legitimate (RAM) target.
PSEUDO_FILESYSTEMS = frozenset(
    {
        "proc",
        "sysfs",
        "devtmpfs",
        "devpts",
        "cgroup",
        "cgroup2",
        "debugfs",
        "tracefs",
        "securityfs",
        "configfs",
        "pstore",
        "bpf",
        "efivarfs",
        "mqueue",
        "hugetlbfs",
        "fusectl",
        "binfmt_misc",
        "nsfs",
        "selinuxfs",
        "rpc_pipefs",
    }
)
MIN_SCRATCH_BYTES = 16 * MIB
FREE_SPACE_SHARE = 0.9
# Copy-on-write file systems write every overwrite beside the old data, and btrfs frees an old extent only
# when all of it has been overwritten: random writes over a scratch file can take up to twice its size.
# A 256 MiB scratch file in 334 MB free on btrfs ran out of space in the 4K random write test.
COW_FILESYSTEMS = frozenset({"btrfs", "zfs", "bcachefs"})
COW_FREE_SPACE_SHARE = 0.45
PREPARE_MAX_S = 120.0
REFERENCE_MIN_BYTES = 64 * MIB
REFERENCE_MAX_BYTES = 512 * MIB
TIMEOUT_MARGIN_S = 120.0
PRECONDITION_PASSES = 2
DEFAULT_PRECISION_PCT = 3.0
MIN_FIXED_TIME_S = 1.0  # --time: below this a test measures fio's start more than the device
MAX_FIXED_TIME_S = 3600.0  # --time: an hour a test; longer writes are what the sustained profile is for
# fio's status documents, the samples of the confidence interval (analysis/confidence.py): ten a second
# give a 1.5 s test five batches of 0.3 s where four a second gave it none, and at 3 s the intervals came out
# about a quarter narrower (the same runs, summed to 250 ms and to 100 ms; docs/PERFORMANCE.md). fio
# writes the documents from its helper thread; at this rate they cost no measurable throughput.
SAMPLE_INTERVAL_S = 0.1


@dataclass(frozen=True)
class BenchOptions:
    profile: str = "quick"
    size_bytes: int | None = None
    engine: str | None = None
    destructive: bool = False
    yes: bool = False
    interactive: bool = False  # a TTY is there to confirm on
    precondition: bool = False
    fixed_time_s: float | None = None  # --time: fixed length, no adaptive stop
    adaptive: bool = True
    max_time_s: float | None = None  # --max-time: bound of the sustained fill
    recovery_idle_s: float | None = None  # --recovery SECONDS: idle, then a second burst (sustained)
    precision_pct: float = DEFAULT_PRECISION_PCT  # --precision: stop when the 95% interval is this tight
    precision_asked: bool = False  # --precision was given (not the default)
    repeat: int = 1  # --repeat: passes over the profile; figures are their medians


@dataclass(frozen=True)
class Placement:
    """Where one set of tests runs.

    on: "scratch" (a new file in a private directory inside the target directory), "file" or "device"
    (the target itself), "reference" (a RAM-backed loop device or /dev/shm file made for the run).
    `path` is None when the executor makes the file (scratch, reference)."""

    on: str
    path: str | None
    size_bytes: int  # bytes the tests use: the scratch file's size, or the device/file (capped by --size)
    offset_bytes: int | None  # flash: the tests run in the second half
    read_only: bool  # every fio call here runs with --readonly
    fill: bool  # scratch: lay out random data before testing
    fill_time_limit_s: float | None
    precondition_passes: int  # flash --precondition: random fills of the region before testing
    engine: str | None  # --engine, or None: the executor picks the first engine that works

    @property
    def region_bytes(self) -> int:
        return self.size_bytes - (self.offset_bytes or 0)


@dataclass(frozen=True)
class TestStep:
    """One test of the profile, with its time bounds."""

    __test__ = False  # not a pytest test class

    spec: TestSpec
    index: int  # 1-based position among the tests that run
    total: int
    runtime_s: float  # fixed length, or the upper bound when adaptive
    ramp_s: float
    adaptive: bool  # may stop early (the executor's stop rule decides)
    min_samples: int  # the stop rule's minimum number of measured samples
    status_interval_s: float = 1.0
    timeout_s: float = 0.0
    min_s: float = 0.0  # the stop rule's minimum measured time
    precision_pct: float | None = None  # the stop rule's target ci95_pct (None: fixed length)

    @property
    def kind(self) -> str:
        return self.spec.kind


@dataclass(frozen=True)
class BenchPlan:
    profile: Profile
    target: TargetInfo
    writes_allowed: bool
    destructive_identity: str | None  # set when write tests will overwrite a device: shown, maybe confirmed
    ask_to_confirm: bool  # a terminal is there and --yes was not given
    main: Placement
    tests: tuple[TestStep, ...]
    reference: Placement | None  # riscos: the same tests on a RAM-backed reference
    notes: tuple[str, ...]
    read_health: bool = True  # SMART health around the run (a physical drive, and root to read it)
    without_root: tuple[str, ...] = ()  # what runs differently or is skipped without root: said up front
    recovery_idle_s: float | None = None  # sustained --recovery: idle this long, then a second burst
    passes: int = 1  # --repeat: the tests run this many times over on the same prepared target
    measure_budget_s: float | None = None  # measuring time the adaptive tests of one pass share


def measuring_limit_s(steps_left: tuple[TestStep, ...], budget_left_s: float | None) -> float:
    """How long the first of `steps_left` may measure, with `budget_left_s` of the pass's budget left.

    Every test keeps its minimum; what the budget holds beyond the minimums of the tests still to run
    is shared equally, up to the test's own maximum. A test that stops early leaves its share to the rest."""
    step = steps_left[0]
    if budget_left_s is None or not step.adaptive:
        return step.runtime_s
    spare = budget_left_s - sum(s.min_s for s in steps_left)
    return min(step.runtime_s, step.min_s + max(0.0, spare) / len(steps_left))


def with_time_limit(step: TestStep, limit_s: float) -> TestStep:
    if limit_s == step.runtime_s:
        return step
    return replace(step, runtime_s=limit_s, timeout_s=limit_s + step.ramp_s + TIMEOUT_MARGIN_S)


def profile_named(name: str) -> Profile:
    if name not in PROFILES:
        raise UsageError(f"unknown profile {name!r}; choose from {', '.join(PROFILES)}")
    return PROFILES[name]


def write_permission(
    target: TargetInfo, opts: BenchOptions, held: HeldDevice | None = None
) -> tuple[bool, list[str], str | None]:
    """(writes allowed, notes, identity of a device that writes will overwrite). bench, check and verify all ask here.

    `held`: what the exclusive claim on the device sees (probe/claim.held_state): the checks must be of that very
    device, and what the claim cannot see (other openers, read-only) refuses too. Without it (the claim failed, and
    its own error follows these clearer words) only what sysfs and the mount tables say is judged.
    Raises SafetyRefusal when --destructive meets a device in use, or nobody can confirm."""
    if target.kind == "dir":
        return True, [], None
    if not opts.destructive:
        what = "raw device" if target.kind == "block" else "existing file"
        return False, [f"{what}: read tests only; write tests need --destructive (they overwrite its contents)"], None
    if target.kind != "block":
        reason = file_write_refusal(target.backs, target.loop_related)
        if reason:
            raise SafetyRefusal(f"refusing to write to {target.path}: {reason}")
        return True, [], None
    if held is not None:  # first: every check below would judge the wrong device
        line = renamed_refusal(target.path, target.device, held)
        if line:
            raise SafetyRefusal(line)
    if target.device is None:
        raise SafetyRefusal(f"{target.path}: cannot identify this block device in sysfs; refusing to write")
    reason = write_refusal(target.device, target.loop_related) or array_refusal(target.device, target.member_of)
    if reason:
        raise SafetyRefusal(f"refusing to write to {target.path}: {reason}")
    line = held_refusal(target.path, held) if held is not None else None
    if line:
        raise SafetyRefusal(line)
    ident = identity_line(target.device)
    if not opts.yes and not opts.interactive:
        raise SafetyRefusal(f"refusing to write to {ident} without a terminal to confirm; add --yes")
    return True, [], ident


def free_space_share(target: TargetInfo) -> float:
    """The share of the free space a scratch file may take: less on copy-on-write file systems."""
    return COW_FREE_SPACE_SHARE if target.fstype in COW_FILESYSTEMS else FREE_SPACE_SHARE


def scratch_size(target: TargetInfo, opts: BenchOptions, profile: Profile) -> int:
    free = target.free_bytes or 0
    share = free_space_share(target)
    limit = int(free * share)
    if opts.size_bytes is not None:
        if opts.size_bytes < MIN_SCRATCH_BYTES:
            least = f"{MIN_SCRATCH_BYTES // MIB} MiB"
            raise UsageError(f"--size {fmt_size(opts.size_bytes)} is too small for a scratch file: at least {least}")
        if opts.size_bytes > limit:
            why = f" ({target.fstype} copies on write: overwrites need room beside the file)" if share < 0.9 else ""
            raise UsageError(
                f"--size {fmt_size(opts.size_bytes)} is more than {share:.0%} of the {fmt_bytes(free)} free in "
                f"{target.path}{why}"
            )
        # Whole MiB: the fill writes 1 MiB blocks, and --size 300MB (286.1 MiB) left its last part unwritten,
        # so the run stopped with "filling ... stopped after 286 MiB of 286 MiB".
        return opts.size_bytes // MIB * MIB
    wanted = profile.scratch_size_bytes
    if profile.scratch_free_share is not None:  # sustained: a share of the free space
        wanted = int(free * profile.scratch_free_share)
    size = min(wanted, limit // MIB * MIB)
    if size < MIN_SCRATCH_BYTES:
        need_mib = math.ceil(MIN_SCRATCH_BYTES / share / MIB)
        raise UsageError(
            f"not enough free space in {target.path}: {free // MIB} MiB free, need at least {need_mib} MiB"
        )
    return size


def runnable(profile: Profile, writes_ok: bool) -> list[TestSpec]:
    return [s for s in profile.tests if writes_ok or not s.writes]


def plan_steps(profile: Profile, opts: BenchOptions, writes_ok: bool) -> tuple[TestStep, ...]:
    adaptive = opts.adaptive and opts.fixed_time_s is None and profile.max_runtime_s is not None
    runtime = opts.fixed_time_s or (profile.max_runtime_s if adaptive else None) or profile.runtime_s
    specs = runnable(profile, writes_ok)
    if any(s.kind == "fill" for s in specs):  # sustained: until --size bytes, bounded by --max-time
        limit = opts.max_time_s or profile.runtime_s
        return tuple(
            TestStep(s, i, len(specs), limit, 0.0, False, 1, timeout_s=limit + TIMEOUT_MARGIN_S)
            for i, s in enumerate(specs, 1)
        )
    return tuple(
        TestStep(
            spec,
            index,
            len(specs),
            runtime_s=runtime,
            ramp_s=profile.ramp_s,
            adaptive=adaptive,
            min_samples=profile.min_samples(spec),
            status_interval_s=SAMPLE_INTERVAL_S,
            timeout_s=runtime + profile.ramp_s + TIMEOUT_MARGIN_S,
            min_s=profile.min_seconds(spec),
            precision_pct=opts.precision_pct if adaptive else None,
        )
        for index, spec in enumerate(specs, 1)
    )


def _offset(profile: Profile, size: int) -> int | None:
    return size // 2 // MIB * MIB if profile.second_half else None


def _access_refusal(target: TargetInfo, root: bool) -> str | None:
    """Why we cannot read the target at all, in one sentence, or None. (A directory we cannot write
    to, or a read-only one, is told by the scratch file's creation, with the system's reason.)
    The OS's own words; root is suggested only to who is not root, and only for a permission error."""
    if target.kind == "dir" or target.readable:
        return None
    why = target.read_error or "Permission denied"
    line = f"cannot read {target.path}: {why}"
    if target.read_errno is not None and target.read_errno in (errno.EACCES, errno.EPERM):
        if root:
            # root refused: not file permissions but something above them (container device rules, a security module)
            return f"{line}, even as root"
        if target.kind == "block":
            return f"{line}; reading a raw device needs root (run with sudo)"
    return line


def _without_root(profile: Profile, physical: bool) -> tuple[str, ...]:
    lines = []
    if physical:
        lines.append("not root: drive health (SMART) is skipped; run with sudo to include it")
    if profile.reference:
        lines.append("not root: the RAM reference is a page-cached file on /dev/shm, not a loop device with direct I/O")
    return tuple(lines)


def _check_profile_options(opts: BenchOptions, profile: Profile) -> None:
    """Options that only one kind of profile reads are an error elsewhere, never silently ignored."""
    fills = any(s.kind == "fill" for s in profile.tests)
    for given, option, needs in (
        (opts.max_time_s is not None and not fills, "--max-time", "--profile sustained"),
        (opts.recovery_idle_s is not None and not fills, "--recovery", "--profile sustained"),
        (opts.precondition and not profile.second_half, "--precondition", "--profile flash"),
    ):
        if given:
            raise UsageError(f"{option} goes with {needs}, not with --profile {profile.name}")
    if fills:
        for given, option in (
            (opts.fixed_time_s is not None, "--time"),
            (opts.precision_asked, "--precision"),
            (opts.repeat > 1, "--repeat"),
        ):
            if given:
                raise UsageError(
                    f"{option} goes with the timed profiles, not with --profile sustained: its fill is measured once, "
                    "for --size bytes, bounded by --max-time"
                )
    if opts.fixed_time_s is not None and opts.precision_asked:
        raise UsageError(
            "give --time or --precision, not both: --time runs each test for a fixed length, --precision stops "
            "each test when its interval is that tight"
        )
    if opts.fixed_time_s is not None and opts.fixed_time_s > MAX_FIXED_TIME_S:
        raise UsageError(f"--time is at most {MAX_FIXED_TIME_S:g} seconds a test: {opts.fixed_time_s:g}")
    if opts.fixed_time_s is not None and opts.fixed_time_s < MIN_FIXED_TIME_S:
        # fio reads --runtime=0ms as no limit at all: --time 0.0004 ran one pass of the file in the ramp and
        # printed 0 µs latencies as figures.
        raise UsageError(f"--time is at least {MIN_FIXED_TIME_S:g} second a test: {opts.fixed_time_s:g}")


def plan_bench(
    target: TargetInfo, opts: BenchOptions, profile: Profile, *, root: bool = True, held: HeldDevice | None = None
) -> BenchPlan:
    """The plan for `profile` on `target`. `root`: whether we run as root (what needs it is said up front).
    `held`: what the exclusive claim of a destructive device run sees (write_permission)."""
    _check_profile_options(opts, profile)
    writes_ok, notes, identity = write_permission(target, opts, held)
    if target.kind != "block" and target.fstype in PSEUDO_FILESYSTEMS:
        raise UsageError(
            f"{target.path} is on {target.fstype}, a kernel pseudo file system, not a disk-backed one: there is no "
            "storage to measure; give a directory or device on the disk to test"
        )
    refusal = _access_refusal(target, root)
    if refusal:
        raise EnvironmentProblem(refusal)
    if target.kind == "file":
        biggest = max((s.bs_bytes for s in runnable(profile, writes_ok)), default=0)
        if (target.size_bytes or 0) < biggest:
            raise UsageError(
                f"{target.path} is {target.size_bytes or 0:,} bytes, smaller than one {biggest:,}-byte block of the "
                f"{profile.name} profile; give a directory (a scratch file is made there), a larger file or a device"
            )
    physical = target.disk is not None and target.disk.transport not in VIRTUAL
    if not writes_ok and all(s.writes for s in profile.tests):
        raise SafetyRefusal(
            f"the {profile.name} profile only writes: {target.path} needs --destructive (it overwrites the contents)"
        )
    if target.kind == "dir":
        size = scratch_size(target, opts, profile)
        main = Placement(
            "scratch",
            None,
            size,
            _offset(profile, size),
            read_only=False,
            fill=profile.prefill,
            fill_time_limit_s=PREPARE_MAX_S,
            precondition_passes=0,
            engine=opts.engine,
        )
    else:
        # fio opens the device by name after the checks: the node checked to be the device held, never a name that
        # can be re-pointed in between (the user's symlink)
        fio_path = target.path
        if held is not None and writes_ok:
            if held.node is None:
                raise SafetyRefusal(
                    f"{target.path}: no device node was found that is the device held ({held.dev}); refusing to write"
                )
            fio_path = held.node
        try:
            fio_filename(fio_path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        size = target.size_bytes or 0
        if opts.size_bytes:
            if opts.size_bytes > size:
                # A script that asked for 1T on a 256 MiB device must not believe it tested 1T.
                notes.append(
                    f"--size {fmt_size(opts.size_bytes)} is more than {target.path} holds: testing all of its "
                    f"{fmt_size(size)}"
                )
            size = min(size, opts.size_bytes)
        main = Placement(
            "device" if target.kind == "block" else "file",
            fio_path,
            size,
            _offset(profile, size),
            read_only=not writes_ok,
            fill=False,
            fill_time_limit_s=None,
            precondition_passes=0,
            engine=opts.engine,
        )
    if profile.second_half and opts.precondition:
        if not writes_ok:
            raise SafetyRefusal("--precondition writes to the target: a device or existing file needs --destructive")
        main = replace(main, precondition_passes=PRECONDITION_PASSES)
    skipped = [s.id for s in profile.tests if s.writes and not writes_ok]
    if skipped:
        notes.append("skipped write tests: " + ", ".join(skipped))
    reference = _reference_placement(main.size_bytes) if profile.reference else None
    steps = plan_steps(profile, opts, writes_ok)
    return BenchPlan(
        profile=profile,
        target=target,
        writes_allowed=writes_ok,
        destructive_identity=identity,
        ask_to_confirm=identity is not None and not opts.yes,
        main=main,
        tests=steps,
        reference=reference,
        notes=tuple(notes),
        read_health=physical and root,
        without_root=() if root else _without_root(profile, physical),
        recovery_idle_s=opts.recovery_idle_s,
        passes=max(1, opts.repeat),
        measure_budget_s=_budget_s(profile, opts) if any(t.adaptive for t in steps) else None,
    )


def _budget_s(profile: Profile, opts: BenchOptions) -> float | None:
    """The pass's measuring budget. A tighter --precision asks for more time: an interval narrows as the
    square root of the time measured, so the budget grows as (default / asked)^2 (each test still stops at
    its maximum); a looser one leaves the budget as it is, since tests that are sure stop anyway."""
    if profile.measure_budget_s is None:
        return None
    ratio = min(max(1.0, DEFAULT_PRECISION_PCT / opts.precision_pct), 1e3)  # --precision 1e-300: no overflow
    return profile.measure_budget_s * ratio**2


def _reference_placement(used_bytes: int) -> Placement:
    size = max(min(used_bytes, REFERENCE_MAX_BYTES), REFERENCE_MIN_BYTES)
    return Placement("reference", None, size, None, False, False, None, 0, None)


def with_prepared_bytes(plan: BenchPlan, written: int) -> BenchPlan:
    """The plan after a time-limited fill laid out only `written` bytes: tests use what is there."""
    if written >= plan.main.size_bytes:
        return plan
    main = replace(plan.main, size_bytes=written, offset_bytes=_offset(plan.profile, written))
    reference = _reference_placement(written) if plan.reference else None
    note = f"scratch file filling stopped after {plan.main.fill_time_limit_s or 0:.0f} s; testing {written // MIB} MiB"
    return replace(plan, main=main, reference=reference, notes=(*plan.notes, note))
