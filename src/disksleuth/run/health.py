"""`health`: a drive's SMART health, read live through smartctl or from a saved `smartctl -x --json`."""

from __future__ import annotations

from dataclasses import dataclass

from disksleuth.analysis.health import health_findings, no_smart_reason
from disksleuth.errors import ParseError, UsageError
from disksleuth.infile import read_user_file
from disksleuth.model import Finding
from disksleuth.model.run import Health
from disksleuth.probe.block import device_node
from disksleuth.probe.smart import NoSmartData, read_health
from disksleuth.probe.smart_parse import MAX_SMARTCTL_JSON_BYTES, parse_smartctl_json
from disksleuth.probe.target import device_for_path, inspect_target, node_kind


@dataclass(frozen=True)
class HealthReport:
    health: Health
    findings: list[Finding]


def drive_health(device: str | None = None, from_smartctl: str | None = None) -> HealthReport:
    """Health and its findings, from DEVICE (live) or a saved smartctl JSON file."""
    if from_smartctl and device:
        raise UsageError(
            f"give a DEVICE or --from-smartctl FILE, not both ({device} would be ignored: "
            f"the figures come from {from_smartctl})"
        )
    if from_smartctl:
        raw = read_user_file(from_smartctl, MAX_SMARTCTL_JSON_BYTES, "smartctl --json output")
        try:
            health = parse_smartctl_json(raw.decode("utf-8", errors="replace"))
        except ParseError as exc:
            raise ParseError(f"{from_smartctl}: {exc}") from None
    elif device:
        node = device_node(device)
        _refuse_without_smart(node)
        health = read_health(node)
    else:
        raise UsageError("give a DEVICE or --from-smartctl FILE")
    return HealthReport(health, health_findings(health))


def _refuse_without_smart(node: str) -> None:
    """What smartctl would only call "Unable to detect device type", said plainly before asking it: a
    directory or file is not a drive (the disk behind it is named), and a virtual disk has no SMART (in
    the words `check` uses). A character device (/dev/sg0, /dev/nvme0) goes to smartctl as given."""
    kind = node_kind(node)
    if kind == "block":
        # The disk behind it first, as check's health line says it; then the device itself (a loop device
        # over a file on a real drive has no SMART of its own either).
        device, disk = device_for_path(node)
        reason = next((r for d in (disk, device) if d and (r := no_smart_reason(d))), None)
        if reason:
            raise NoSmartData(f"{node}: {reason}")
        return
    if kind not in ("dir", "file"):
        return
    what = "a directory" if kind == "dir" else "a file"
    target = inspect_target(node)
    disk = target.disk
    if disk is None:
        raise UsageError(
            f"{node} is {what}, not a block device, and no disk is behind it ({target.fstype or 'unknown'} file "
            "system); health reads a drive: give its device (`disksleuth list` shows them)"
        )
    reason = no_smart_reason(disk)
    if reason:
        raise NoSmartData(f"{node} is {what}, not a block device; the disk behind it, {disk.path}, has {reason}")
    raise UsageError(f"{node} is {what}, not a block device; the disk behind it is {disk.path}: health {disk.path}")
