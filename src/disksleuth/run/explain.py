"""`explain`: a figure measured elsewhere (hdparm, CrystalDiskMark, a forum post) against a device's link chain."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.members import tree_findings
from disksleuth.analysis.verdicts import Figures, summary_line, verdicts
from disksleuth.model import Device, Finding, LinkChain
from disksleuth.model.arrays import StackNode
from disksleuth.probe.block import read_device, resolve_disk_name
from disksleuth.probe.stack import stack_of
from disksleuth.run.members import with_member_health
from disksleuth.units import parse_count, parse_rate


@dataclass(frozen=True)
class Explained:
    device: Device
    chain: LinkChain
    figures: Figures
    findings: list[Finding]
    summary: str
    # Each figure as given and as read, shown back so a misread (bits for bytes, 1,243 for 1.243) is visible.
    given: list[dict[str, Any]] = field(default_factory=list)
    stack: StackNode | None = None  # the array the device is or belongs to (issue 24)


def explain(
    device: str,
    root: str,
    *,
    read: str | None = None,
    write: str | None = None,
    read_iops: str | None = None,
    write_iops: str | None = None,
) -> Explained:
    given: list[dict[str, Any]] = []
    rates = {}
    for option, text in (("--read", read), ("--write", write)):
        if text:
            rate = rates[option] = parse_rate(text)
            given.append({"option": option, "text": text, "mbps": rate.mbps, "read_as": rate.read_as})
    counts = {}
    for option, text in (("--read-iops", read_iops), ("--write-iops", write_iops)):
        if text:
            iops = counts[option] = parse_count(text, option)
            given.append({"option": option, "text": text, "iops": iops, "read_as": f"{iops:,g} IOPS"})
    figures = Figures(
        seq_read_mbps=rates["--read"].mbps if "--read" in rates else None,
        seq_write_mbps=rates["--write"].mbps if "--write" in rates else None,
        rand_read_iops=counts.get("--read-iops"),
        rand_write_iops=counts.get("--write-iops"),
    )
    dev = read_device(resolve_disk_name(device, root), root)
    chain = link_chain(dev.hops)
    stack = stack_of(dev.name, root)
    if stack is not None:
        stack = with_member_health(stack, root)
    # The device's own link findings are already there: its member_link_downgraded would say them twice.
    from_tree = tree_findings(stack) if stack is not None else []
    tree = [f for f in from_tree if not (f.code == "member_link_downgraded" and f.device == dev.name)]
    found = verdicts(dev, chain, figures)
    if any(f.severity in ("warn", "critical") for f in tree):  # "nothing wrong found" no longer holds
        found = [f for f in found if f.code != "ok"]
    found += tree
    return Explained(dev, chain, figures, found, summary_line(dev, chain, figures), given, stack)
