"""`check`: the device behind a target, a short benchmark with health, then the verdict.

Like bench.py it composes probe/ and analysis/; the CLI only draws what comes back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.verdicts import figures_from_tests, summary_line, verdicts, with_drive_sata_max
from disksleuth.bench import BenchOptions, Events, run_bench
from disksleuth.model import Device, Finding, LinkChain, Run, VirtualHop
from disksleuth.probe.target import TargetInfo


@dataclass(frozen=True)
class CheckResult:
    device: Device
    chain: LinkChain
    run: Run
    findings: list[Finding]
    summary: str
    where: str | None  # "ext4 on /" for a directory or file target


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


def where_of(target: TargetInfo) -> str | None:
    return f"{target.fstype} on {target.mountpoint}" if target.fstype else None


def run_check(target: TargetInfo, opts: BenchOptions, events: Events | None = None) -> CheckResult:
    run = replace(run_bench(target.path, opts, events), kind="check")
    health = run.health_after or run.health_before
    device = with_drive_sata_max(device_of(target), health)
    chain = link_chain(device.hops)
    figures = figures_from_tests(run.tests)
    findings = verdicts(
        device,
        chain,
        figures,
        health=health,
        health_changes=dict(run.health_changes),
        temperature_series=run.temperature_series,
        tests=run.tests,
    )
    return CheckResult(device, chain, run, findings, summary_line(device, chain, figures), where_of(target))
