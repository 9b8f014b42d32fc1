"""Reading health from a live device: smartctl, and nvme-cli for what old smartctl lacks."""

from __future__ import annotations

import os

from disksleuth.errors import DisksleuthError, EnvironmentProblem, ParseError
from disksleuth.model import Health
from disksleuth.probe import runner
from disksleuth.probe.smart_parse import parse_nvme_id_ns_json, parse_smartctl_json


class NoSmartData(EnvironmentProblem):
    pass


def read_health(device_path: str, timeout_s: float = 60.0) -> Health:
    """`smartctl -x --json DEV`, normalised. Raises ToolMissing, NoSmartData."""
    runner.require("smartctl")
    # smartctl's exit status is a bitmask: non-zero does not mean there is no data.
    res = runner.run(["smartctl", "-x", "--json", device_path], timeout_s=timeout_s, check=False)
    try:
        health = parse_smartctl_json(res.stdout)
    except ParseError as exc:
        hint = ""
        if os.geteuid() != 0 and ("Permission denied" in res.stdout or "not permitted" in res.stdout):
            hint = " (reading SMART data needs root)"
        raise NoSmartData(f"{device_path}: {exc}{hint}") from None
    if health.protocol == "NVMe" and not health.lba_formats and runner.which("nvme"):
        health = _with_nvme_cli_formats(health, device_path)
    return health


def _with_nvme_cli_formats(health: Health, device_path: str) -> Health:
    from dataclasses import replace

    try:
        res = runner.run(["nvme", "id-ns", device_path, "-o", "json"], timeout_s=30)
        return replace(health, lba_formats=parse_nvme_id_ns_json(res.stdout))
    except DisksleuthError:
        return health
