"""Reading health from a live device: smartctl, and nvme-cli for what old smartctl lacks."""

from __future__ import annotations

import os

from disksleuth.errors import DisksleuthError, EnvironmentProblem, ParseError
from disksleuth.model.run import Health
from disksleuth.probe import runner
from disksleuth.probe.smart_parse import parse_nvme_id_ns_json, parse_smartctl_json


class NoSmartData(EnvironmentProblem):
    pass


class DriveAsleep(NoSmartData):
    pass


def read_health(device_path: str, timeout_s: float = 60.0, no_wake: bool = False) -> Health:
    """`smartctl -x --json DEV`, normalised. Raises ToolMissing, NoSmartData (DriveAsleep with `no_wake`
    when the drive is in standby: smartctl -n standby checks the power mode without spinning it up)."""
    runner.require("smartctl")
    argv = ["smartctl", "-x", "--json", device_path]
    if no_wake:
        argv[1:1] = ["-n", "standby"]
    # smartctl's exit status is a bitmask: non-zero does not mean there is no data.
    res = runner.run(argv, timeout_s=timeout_s, check=False)
    # smartctl 7.x, -n standby on a sleeping drive: exit bit 1 and "Device is in STANDBY mode" (or SLEEP),
    # and no SMART data (smartmontools smartctl.cpp, power mode check).
    if no_wake and res.returncode & 2 and ("STANDBY mode" in res.stdout or "SLEEP mode" in res.stdout):
        raise DriveAsleep(f"{device_path}: the drive is asleep; not woken to read SMART data")
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
