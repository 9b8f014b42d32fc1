"""`check` and `bench`: the device behind a target, a benchmark with health, then the verdict.

One path for both commands: `inspect` once, `measure` (fio through run/bench.py, then the verdicts), and the
caller renders the result or its document (doc.run.run_document). Like bench.py it composes probe/ and
analysis/; the CLI only draws what comes back.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from typing import Any

from disksleuth.analysis.baseline import DEFAULT_CHOICE, Baseline, Choice
from disksleuth.analysis.baseline import findings as baseline_findings
from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.health import no_smart_reason
from disksleuth.analysis.limits import with_limits, without_limits
from disksleuth.analysis.members import expectation, tree_findings
from disksleuth.analysis.memory_tests import with_memory_marked
from disksleuth.analysis.sustained import findings as sustained_findings
from disksleuth.analysis.verdicts import assess_run, figures_from_tests
from disksleuth.doc.run import run_to_dict
from disksleuth.errors import DisksleuthError, ToolMissing
from disksleuth.model import Device, Finding, LinkChain, VirtualHop
from disksleuth.model.arrays import MemberReading, StackNode
from disksleuth.model.limits import IoLimit
from disksleuth.model.run import MemoryBacking, Run
from disksleuth.probe.host import host_info
from disksleuth.probe.memory import target_memory_backing
from disksleuth.probe.mounts import read_mount_table
from disksleuth.probe.smart import read_health
from disksleuth.probe.stack import stack_of
from disksleuth.probe.target import TargetInfo, inspect_target
from disksleuth.run.baseline import baseline_for
from disksleuth.run.bench import BenchOptions, Events, run_bench
from disksleuth.run.health_history import observe
from disksleuth.run.link_errors import errors_during, with_link_errors
from disksleuth.run.members import run_members, with_member_health
from disksleuth.run.plan import VIRTUAL


@dataclass(frozen=True)
class Inspected:
    """A target inspected once: the device behind it and its link chain, for the header and the verdicts."""

    target: TargetInfo
    device: Device
    chain: LinkChain
    where: str | None  # "ext4 on /" for a directory or file target
    health_not_read: str | None  # why no drive health will be read, when that is known before trying
    stack: StackNode | None = None  # the array under the target, or the one its device belongs to (issue 24)
    limits: tuple[IoLimit, ...] | None = None  # the cgroup I/O limits this process meets on it (None: unknown)
    sysfs_root: str = "/"  # where the path's PCIe error counters are read again after the test (a test's tree)


def inspect(path: str) -> Inspected:
    from disksleuth.run.surround import io_limits

    target = inspect_target(path)
    device = device_of(target)
    stack = target_stack(target)
    limits = io_limits(target, stack)  # a hop of the path (issue 36): the chain shows it before anything runs
    chain = with_limits(link_chain(device.hops), limits)
    return Inspected(target, device, chain, where_of(target), health_not_read(target), stack, limits)


def target_stack(target: TargetInfo) -> StackNode | None:
    """The stack under the target's block device; for a btrfs directory (whose files carry an anonymous device
    number) the btrfs its mount source belongs to; each physical member with its SMART health."""
    stack = None
    if target.device is not None:
        stack = stack_of(target.device.name)
    elif target.fstype == "btrfs" and target.mountpoint:
        source = read_mount_table("/").fstypes.get(target.mountpoint, ("", ""))[1]
        if source.startswith("/dev/"):
            stack = stack_of(os.path.basename(os.path.realpath(source)))
    return with_member_health(stack) if stack is not None else None


@dataclass(frozen=True)
class CheckResult:
    device: Device
    chain: LinkChain
    run: Run
    findings: list[Finding]
    summary: str
    where: str | None  # "ext4 on /" for a directory or file target
    skipped: tuple[str, ...] = ()  # what could not run, in plain words ("the benchmark: fio is not installed ...")
    health_not_read: str | None = None  # why no drive health was read, when that is known before trying
    baseline: Baseline | None = None  # the run against its drive's earlier runs (None: not looked up)
    stack: StackNode | None = None  # issue 24: the array under the target
    members: tuple[MemberReading, ...] = ()  # check on an array: each member read alone and together
    array_expectation: dict[str, object] | None = None


@dataclass(frozen=True)
class History:
    """Where a measured run's earlier runs are (the results store) and which of them it is compared with."""

    db: str | None
    choice: Choice = DEFAULT_CHOICE


def device_of(target: TargetInfo) -> Device:
    """The physical disk behind a target, or a stand-in when no block device backs it (tmpfs)."""
    if target.disk is not None:
        return target.disk
    fstype = target.fstype or "none"
    return Device(
        name=fstype,
        path=target.mountpoint or target.path,
        transport="unknown",
        hops=(VirtualHop(fstype, fstype),),
        notes=(f"no block device behind {target.path} ({target.fstype or 'unknown'} file system)",),
    )


def health_not_read(target: TargetInfo) -> str | None:
    """Why check reads no drive health for this target, in one short phrase; None for a physical drive,
    where it tries (and a failure is a note of its own)."""
    disk = target.disk
    if disk is None:
        return f"no disk behind {target.path} ({target.fstype or 'unknown'} file system)"
    if disk.transport not in VIRTUAL:
        return None
    if disk.transport == "unknown":
        return f"{disk.name}'s transport is unknown, so SMART was not tried"
    return no_smart_reason(disk) or f"no SMART on a virtual disk ({disk.name} is {disk.transport})"


def where_of(target: TargetInfo) -> str | None:
    return f"{target.fstype} on {target.mountpoint}" if target.fstype else None


def measure(
    inspected: Inspected,
    opts: BenchOptions,
    events: Events | None = None,
    *,
    kind: str = "check",
    history: History | None = None,
    keep_health: bool = True,
) -> CheckResult:
    """Benchmark the inspected target and judge the run: the same for `check` and `bench`. With `history`,
    each figure is also compared with the drive's earlier runs in the store (slower/faster_than_usual).

    `check` without fio still answers with the link chain and health; `bench` needs fio (ToolMissing). With the
    history, the drive's health reading is kept in the store (`keep_health`) and its counter findings are told
    against the drive's past and acknowledgements (run.health_history)."""
    target = inspected.target
    skipped: list[str] = []
    try:
        run = replace(run_bench(target, opts, events), kind=kind)
    except ToolMissing as exc:
        if exc.tool != "fio" or kind != "check":
            raise
        # Without fio there is no benchmark, but the link chain and health still answer half the question.
        skipped.append(f"the benchmark: {exc}")
        run = _run_without_benchmark(target, opts, skipped)
    link_errors: list[Finding] = []
    if run.tests:  # the path's PCIe error counters read again (issue 36): growth during the test is link_errors
        device, link_errors = errors_during(inspected.device, inspected.sysfs_root)
        inspected = replace(inspected, device=device)
    memory = memory_of(target)
    run = with_memory_marked(run, memory, inspected.limits)  # a RAM-backed loop's tests are `*` as on tmpfs
    a = assess_run(run, inspected.device, memory=memory, target_kind=target.kind, limits=inspected.limits)
    findings = with_link_errors(with_sustained_findings(a.findings, run), link_errors)
    health = run.health_after or run.health_before
    if history is not None and health is not None:
        disk = run.disk or target.disk
        findings = observe(
            health, findings, history.db, device_name=disk.name if disk else None, source=kind, keep=keep_health
        ).findings
    baseline = None
    if history is not None and run.tests:
        baseline = baseline_for(history.db, _baseline_document(run, a.device), history.choice)
        findings = with_baseline_findings(findings, baseline, a.device.name)
        findings = findings + _sibling_findings(history.db, run, a.device, without_limits(a.chain))
    stack = inspected.stack
    readings: tuple[MemberReading, ...] = ()
    expected: dict[str, object] | None = None
    if stack is not None:
        readings, expected, extra = _array_part(stack, run, opts, events, kind, skipped)
        extra = [f for f in extra if not (f.code == "member_link_downgraded" and f.device == a.device.name)]
        findings = [f for f in findings if f.code != "ok" or not extra] + extra
    return CheckResult(
        a.device,
        a.chain,
        run,
        findings,
        a.summary,
        inspected.where,
        tuple(skipped),
        inspected.health_not_read,
        baseline,
        stack,
        readings,
        expected,
    )


def _sibling_findings(db: str | None, run: Run, device: Device, chain: LinkChain) -> list[Finding]:
    """This run's drive among the stored drives of its model and firmware (unlike_siblings)."""
    from disksleuth.analysis.siblings import Drive
    from disksleuth.analysis.verdicts import figures_from_tests
    from disksleuth.run.siblings import sibling_findings

    if not device.model or not device.firmware:
        return []
    figures = figures_from_tests([t for t in run.tests if not t.cache_affected])
    host = str(run.host.get("hostname") or "")
    serial_id = None
    if device.serial:
        from disksleuth import serials
        from disksleuth.store.latest import store_serial_key

        try:
            serial_id = serials.serial_id(device.serial, store_serial_key(db))
        except DisksleuthError:
            return []
    mine = {
        "seq_read_mbps": figures.seq_read_mbps,
        "seq_write_mbps": figures.seq_write_mbps,
        "ceiling_mbps": chain.current_ceiling_mbps,
    }
    return sibling_findings(db, Drive(host, device.name, device.model, device.firmware, mine, serial_id))


def _baseline_document(run: Run, device: Device) -> dict[str, Any]:
    """What a baseline needs of a run not yet saved, shaped as the store keeps it."""
    doc = run_to_dict(run)
    doc["device"] = {
        "name": device.name,
        "model": device.model,
        "serial": device.serial,
        "size_bytes": device.size_bytes,
        "backing_file": device.backing_file,
    }
    return doc


def with_baseline_findings(findings: list[Finding], baseline: Baseline, device: str | None) -> list[Finding]:
    """The baseline's findings after the others; a run slower than usual is no longer "nothing wrong found"."""
    extra = baseline_findings(baseline, device)
    if not extra:
        return findings
    if any(f.severity in ("warn", "critical") for f in extra):
        findings = [f for f in findings if f.code != "ok"]
    return findings + extra


def _array_part(
    stack: StackNode, run: Run, opts: BenchOptions, events: Events | None, kind: str, skipped: list[str]
) -> tuple[tuple[MemberReading, ...], dict[str, object] | None, list[Finding]]:
    """check on an array (issue 24): its members read alone and together (read-only), what the array should read
    from them and its level against what it read, and the findings of its tree."""
    leaves = [leaf for leaf in stack.leaves() if leaf.kind in ("disk", "loop")]
    if kind != "check" or not run.tests or not stack.is_array or len(leaves) < 2:
        return (), None, tree_findings(stack)
    try:
        result = run_members([f"/dev/{leaf.name}" for leaf in leaves], replace(opts, destructive=False), events,
                             level=stack.level)  # fmt: skip
    except DisksleuthError as exc:  # no root for raw reads, a member gone: the array's own figures still stand
        skipped.append(f"the member reads: {exc}")
        return (), None, tree_findings(stack)
    measured = [r for r in result.readings if r.skipped is None]
    array_read = figures_from_tests(run.tests).seq_read_mbps
    expected = expectation(result.level, measured, array_read) if result.level else None
    skipped.extend(result.notes)
    return result.readings, expected, list(result.findings)


def with_sustained_findings(findings: list[Finding], run: Run) -> list[Finding]:
    """The sustained profile's own finding (write_cache_cliff or thermal_throttling): its fill knows heat from
    cache better than the run-wide verdicts, so it wins on the same code."""
    fill = next((t.sustained for t in run.tests if t.sustained is not None), None)
    if fill is None:
        return findings
    extra = sustained_findings(fill, run.device)
    if not extra:
        return findings
    codes = {f.code for f in extra}
    return [f for f in findings if f.code not in codes and f.code != "ok"] + extra


def memory_of(target: TargetInfo) -> MemoryBacking | None:
    """tmpfs, ramfs, zram, brd, or a loop/dm/md stack over them (probe.memory)."""
    name = target.device.name if target.device is not None else None
    return target_memory_backing(target.fstype, target.mountpoint, name)


def _run_without_benchmark(target: TargetInfo, opts: BenchOptions, skipped: list[str]) -> Run:
    health = None
    disk = target.disk
    if disk is not None and disk.transport not in VIRTUAL:
        try:
            health = read_health(disk.path)
        except DisksleuthError as exc:
            skipped.append(f"health: {exc}")
    elif disk is not None:
        skipped.append(f"health: {health_not_read(target)}")
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return Run(
        target=target.path,
        profile=opts.profile,
        started_at=now,
        finished_at=now,
        fio_version=None,
        engine="",
        host=host_info(None),
        tests=(),
        kind="check",
        device=disk.name if disk else None,
        disk=disk,
        notes=tuple(f"skipped {s}" for s in skipped),
        health_before=health,
    )
