"""`health`: a drive's SMART health, read live through smartctl or from a saved `smartctl -x --json`."""

from __future__ import annotations

from dataclasses import dataclass

from disksleuth.analysis.health import health_findings
from disksleuth.errors import ParseError, UsageError
from disksleuth.infile import read_user_file
from disksleuth.model import Finding
from disksleuth.model.run import Health
from disksleuth.probe.block import device_node
from disksleuth.probe.smart import read_health
from disksleuth.probe.smart_parse import MAX_SMARTCTL_JSON_BYTES, parse_smartctl_json


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
        health = read_health(device_node(device))
    else:
        raise UsageError("give a DEVICE or --from-smartctl FILE")
    return HealthReport(health, health_findings(health))
