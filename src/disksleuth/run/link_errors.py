"""PCIe error counters around a measured run (issue 36): the path's counters as read with the device, read again
when the test has ended; what grew is `link_errors` (analysis/aer.py), and the run keeps the newer reading, so the
next run's comparison (compare, show --baseline) counts only what came after it."""

from __future__ import annotations

from dataclasses import replace

from disksleuth.analysis.aer import (
    link_errors_finding,
    path_counters,
    path_functions,
    path_growth,
    path_roles,
    with_counters,
)
from disksleuth.model import Device, Finding
from disksleuth.probe.aer import read_aers


def errors_during(
    device: Device, sysfs_root: str = "/", during: str = "during the test"
) -> tuple[Device, list[Finding]]:
    """(the device with its path's counters read again, [link_errors] when any grew since `device` was read).
    A device with no PCIe hop reads nothing."""
    bdfs = path_functions(device.hops)
    if not bdfs:
        return device, []
    after = read_aers(bdfs, sysfs_root)
    growth = path_growth(path_counters(device.hops), after)
    finding = link_errors_finding(growth, during=during, device=device.name, roles=path_roles(device.hops))
    return replace(device, hops=with_counters(device.hops, after)), [finding] if finding else []


def with_link_errors(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """The findings with link_errors after them; "nothing wrong found" (ok) no longer holds beside a warning."""
    if not extra:
        return findings
    return [f for f in findings if f.code != "ok"] + extra
