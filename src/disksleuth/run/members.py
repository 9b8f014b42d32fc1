"""`bench --members DEV DEV ...` (issue 24): read-only raw reads of each member alone, then all at once.

Each member is planned through run/plan.plan_bench like any raw device (read-only: a device without
--destructive only gets read tests, every fio call carries --readonly), and only its sequential read runs.
--destructive is refused outright: this benchmark never writes. A member that its array is rebuilding is
skipped with a note (its reads would be the rebuild's). The figures go to analysis/members.py: which member is
clearly slow on its interval, what a shared link caps, and what the array should read from its level.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, replace

from disksleuth.analysis.health import no_smart_reason
from disksleuth.analysis.members import (
    expectation,
    faster_together,
    member_infos,
    member_slow,
    shared_bottleneck,
    shared_links,
    skip_reason,
    tree_findings,
)
from disksleuth.errors import DisksleuthError, SafetyRefusal, UsageError
from disksleuth.model import Finding
from disksleuth.model.arrays import MemberInfo, MemberReading, StackNode
from disksleuth.model.run import Health, TestResult
from disksleuth.probe import fio, runner
from disksleuth.probe.host import host_info
from disksleuth.probe.smart import disk_health_readable, read_disk_health
from disksleuth.probe.stack import read_stack, tops_above
from disksleuth.probe.target import TargetInfo, inspect_target
from disksleuth.profiles import PROFILES, fio_filename
from disksleuth.run.bench import BenchOptions, _Ctx, _run_test, confidence_stop_rule
from disksleuth.run.context import Events, QuietEvents, Where
from disksleuth.run.plan import TestStep, plan_bench

DEFAULT_MEMBER_TIME_S = 2.0  # each read, alone and together: enough for a few dozen 0.1 s samples
MAX_MEMBERS = 64


@dataclass(frozen=True)
class MembersResult:
    readings: tuple[MemberReading, ...]
    array: StackNode | None  # the array the members belong to, when sysfs shows one
    level: str | None  # the level the expectation used (--level, else the array's)
    expectation: dict[str, object] | None
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    fio_version: str
    started_at: str
    finished_at: str
    summary: str = ""
    paths: tuple[str, ...] = ()  # the members as named
    host: dict[str, str | int | None] | None = None  # the machine, as a stored run records it


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _read_step(target: TargetInfo, opts: BenchOptions, root: bool) -> tuple[TestStep, int]:
    """The sequential read of the quick profile, planned (and so checked) as a read-only raw-device run."""
    plan = plan_bench(target, opts, PROFILES["quick"], root=root)
    if plan.writes_allowed or not plan.main.read_only:  # plan_bench gives a device without --destructive no writes
        raise SafetyRefusal(f"{target.path}: the member read was not planned read-only; refusing")
    step = next(s for s in plan.tests if s.spec.rw == "read" and s.spec.bs_bytes >= 1 << 20)
    return replace(step, index=1, total=1, adaptive=False, precision_pct=None), plan.main.region_bytes


def _array_of(names: list[str]) -> StackNode | None:
    """The array above the named members, when they all sit in the same one."""
    tops = {tuple(tops_above(n)) for n in names}
    if len(tops) != 1:
        return None
    (top,) = tops
    if len(top) != 1:
        return None
    tree = with_member_health(read_stack(top[0]))
    return tree if len(tree.leaves()) > 1 else None


def _beneath(name: str) -> dict[str, str | None]:
    """What a member reads: {physical device: how the member reaches it, None for the device itself}. The disks
    (and loop devices) at the bottom of its stack (a partition reaches its disk, dm/md their members), and for a
    loop device the other loop devices on its backing file and the block device it is attached to."""
    tree = read_stack(name)
    out: dict[str, str | None] = {}
    for leaf in tree.leaves():
        if leaf.kind == "missing":
            continue
        if leaf.name == name:
            out[name] = None
        elif tree.kind == "partition":
            out.setdefault(leaf.name, f"{name} is a partition of {leaf.name}")
        else:
            out.setdefault(leaf.name, f"{name} is a {tree.kind} device over {leaf.name}")
        device = leaf.device
        if device is None:
            continue
        for other in device.shares_backing_with:
            out.setdefault(other, f"{leaf.name} and {other} are attached to one backing file")
        if device.backed_by:
            for below in read_stack(device.backed_by).leaves():
                out.setdefault(below.name, f"{leaf.name} is a loop device over {device.backed_by}")
    return out


def _refuse_shared(names: list[str]) -> None:
    """Two members on one physical disk are not two members: read together they take turns on the one disk, so
    "together" measures the disk's contention and member_slow or shared_bottleneck would judge it as two
    devices (`--members loop2 loop2p1` read loop2 twice). Refused like a device given twice: a disk with its own
    partition, two partitions of one disk, dm/md devices over either, and loop devices on one backing file or
    over a member. Loop devices over different files on one file system stay: a loop device is a device of its
    own (docs/ARCHITECTURE.md), and what it measures is its backing file."""
    seen: dict[str, tuple[str, str | None]] = {}  # physical device -> (member, how it reaches it)
    for name in names:
        for physical, how in _beneath(name).items():
            if physical in seen and seen[physical][0] != name:
                other, other_how = seen[physical]
                if any(h and h.endswith("one backing file") for h in (other_how, how)):
                    raise UsageError(
                        f"--members names {other} and {name}, loop devices attached to one backing file: one file is "
                        "not two members; name each once"
                    )
                said = "; ".join(dict.fromkeys(h for h in (other_how, how) if h))
                raise UsageError(
                    f"--members names {other} and {name}, which both read {physical} ({said}): one disk is not two "
                    "members; name each disk once"
                )
            seen.setdefault(physical, (name, how))


def run_members(
    paths: list[str],
    opts: BenchOptions,
    events: Events | None = None,
    *,
    time_s: float | None = None,
    level: str | None = None,
) -> MembersResult:
    events = events or QuietEvents()
    if opts.destructive:
        raise SafetyRefusal(
            "bench --members only reads: --destructive is refused for an array's members (writing one member "
            "corrupts the array)"
        )
    if len(paths) < 2:
        raise UsageError("--members needs two devices or more, to compare them with each other")
    if len(paths) > MAX_MEMBERS:
        raise UsageError(f"--members takes at most {MAX_MEMBERS} devices")
    runner.require("fio")
    version = fio.fio_version()
    root = os.geteuid() == 0
    run_opts = replace(opts, destructive=False, fixed_time_s=time_s or opts.fixed_time_s or DEFAULT_MEMBER_TIME_S)
    targets: list[TargetInfo] = []
    for path in paths:
        target = inspect_target(path)
        if target.kind != "block":
            raise UsageError(f"{path}: --members takes block devices (the members of an array), not a {target.kind}")
        targets.append(target)
    names = [t.device.name if t.device else os.path.basename(t.path) for t in targets]
    if len(set(names)) != len(names):
        raise UsageError("--members names the same device twice: " + ", ".join(names))
    _refuse_shared(names)
    array = _array_of(names)
    infos: dict[str, MemberInfo] = {m.name: m for m in member_infos(array)} if array else {}
    notes: list[str] = []
    steps: list[tuple[str, TargetInfo, TestStep, int]] = []
    for name, target in zip(names, targets, strict=True):
        why = skip_reason(infos.get(name))
        if why is not None:
            notes.append(f"{target.path} skipped: {why}")
            continue
        step, region = _read_step(target, run_opts, root)
        steps.append((name, target, step, region))
    if len(steps) < 2:
        raise UsageError("fewer than two members are left to read (" + "; ".join(notes) + ")")
    ctx = _Ctx(QuietEvents(), version, lambda: None, confidence_stop_rule)
    started = _now_iso()
    wheres = {name: _where(target, region, opts.engine) for name, target, _, region in steps}
    alone: dict[str, TestResult] = {}
    for i, (name, target, step, _) in enumerate(steps, 1):
        events.phase(f"member {i} of {len(steps)}: {target.path} alone", step.runtime_s)
        alone[name] = _run_test(step, wheres[name], ctx)
    events.phase(f"all {len(steps)} members at once", steps[0][2].runtime_s)
    together = _together(steps, wheres, ctx)
    readings = [_reading(name, target.path, alone.get(name), together.get(name)) for name, target, _, _ in steps]
    readings += [MemberReading(n, t.path, skipped=note) for n, t in zip(names, targets, strict=True)
                 for note in notes if note.startswith(t.path)]  # fmt: skip
    measured = [r for r in readings if r.skipped is None]
    array_name = array.name if array is not None else None
    findings = list(member_slow(measured, array_name))
    if array is not None:
        findings += tree_findings(array, measured)
    else:  # members named by hand: only what their own links share
        leaves = [StackNode(t.device.name, "disk", device=t.device) for t in targets if t.device is not None]
        for link in shared_links(leaves):
            f = shared_bottleneck(link, "these members", measured)
            if f is not None:
                findings.append(f)
    notes += faster_together(measured)
    chosen = level or (array.level if array is not None else None)
    expected = expectation(chosen, measured) if chosen else None
    return MembersResult(
        readings=tuple(readings),
        array=array,
        level=chosen,
        expectation=expected,
        summary=_summary(measured, findings, expected),
        findings=tuple(findings),
        notes=tuple(notes),
        fio_version=version,
        started_at=started,
        finished_at=_now_iso(),
        paths=tuple(paths),
        host=host_info(version),
    )


def _summary(measured: list[MemberReading], findings: list[Finding], expected: dict[str, object] | None) -> str:
    slow = [f.device for f in findings if f.code == "member_slow"]
    read = [r for r in measured if r.alone_mbps is not None]
    slowest = min(read, key=lambda r: r.alone_mbps or 0.0) if read else None
    if slow:
        head = "slow member: " + ", ".join(str(s) for s in slow)
    elif slowest is not None:
        head = f"no member is clearly slower than its peers (slowest {slowest.name}: {slowest.alone_mbps:,.0f} MB/s)"
    else:
        head = "no member was read"
    return head + (f"; {expected['words']}" if expected else "")


def _where(target: TargetInfo, region: int, engine: str | None) -> Where:
    fio_filename(target.path)  # a name fio cannot take is refused before anything runs
    chosen = engine or fio.pick_engine(target.path, True)
    return Where(target.path, region, None, chosen, True, False, read_only=True)


def _together(
    steps: list[tuple[str, TargetInfo, TestStep, int]], wheres: dict[str, Where], ctx: _Ctx
) -> dict[str, TestResult]:
    """Every member's read at the same time, one fio each (started together, joined together)."""
    results: dict[str, TestResult] = {}
    errors: list[BaseException] = []

    def one(name: str, step: TestStep) -> None:
        try:
            results[name] = _run_test(step, wheres[name], ctx)
        except BaseException as exc:  # noqa: BLE001 - raised again below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(name, step), daemon=True) for name, _, step, _ in steps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        err = errors[0]
        raise err if isinstance(err, DisksleuthError) else DisksleuthError(f"a member read failed: {err}")
    return results


def _reading(name: str, path: str, alone: TestResult | None, together: TestResult | None) -> MemberReading:
    return MemberReading(
        name=name,
        path=path,
        alone_mbps=alone.read_mbps if alone else None,
        alone_ci95_pct=alone.ci95_pct if alone else None,
        together_mbps=together.read_mbps if together else None,
        together_ci95_pct=together.ci95_pct if together else None,
        fio_command=alone.fio_command if alone else None,
    )


def with_member_health(tree: StackNode, sysfs_root: str = "/") -> StackNode:
    """The tree with each physical member's SMART health on its leaf (member_health reads it): smartctl per
    member on the live machine, or the smartctl output saved beside a --sysfs-root tree. A member that cannot
    be read (no smartctl, asleep, no data) carries why instead."""
    healths: dict[str, tuple[Health | None, str | None]] = {}
    if not disk_health_readable(sysfs_root):
        return tree
    for leaf in tree.leaves():
        if leaf.kind != "disk" or leaf.device is None or no_smart_reason(leaf.device) is not None:
            continue
        try:
            healths[leaf.name] = (read_disk_health(leaf.name, sysfs_root), None)
        except DisksleuthError as exc:
            healths[leaf.name] = (None, str(exc))
    return _put_health(tree, healths) if healths else tree


def _put_health(node: StackNode, healths: dict[str, tuple[Health | None, str | None]]) -> StackNode:
    if node.children:
        return replace(node, children=tuple(_put_health(c, healths) for c in node.children))
    if node.name not in healths:
        return node
    health, why = healths[node.name]
    return replace(node, health=health, health_not_read=why)
