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


# A saved `smartctl -x --json /dev/NAME` beside a sysfs tree (a --sysfs-root): <root>/smartctl/NAME.json. A tree
# from elsewhere is never given this machine's drives' health: under a root other than "/", only saved files count.
SAVED_SMARTCTL_DIR = "/smartctl"


def disk_health_readable(sysfs_root: str = "/") -> bool:
    """Whether disks' health can be asked for at all: on the live machine, or a tree with saved smartctl output
    (a tree without any is a capture of links and layout, not of health: nothing to say per disk)."""
    if sysfs_root in ("", "/"):
        return True
    from disksleuth.probe.sysfs import Sysfs

    fs = Sysfs(sysfs_root)
    return fs.isdir(fs.p(SAVED_SMARTCTL_DIR))


def read_disk_health(name: str, sysfs_root: str = "/") -> Health:
    """A disk's SMART health by kernel name: live smartctl on /dev/NAME (with -n standby: a sleeping array member
    is not woken to be listed), or under a --sysfs-root, the JSON saved beside the tree. Raises NoSmartData
    (DriveAsleep), ToolMissing."""
    if sysfs_root in ("", "/"):
        return read_health(f"/dev/{name}", timeout_s=30.0, no_wake=True)
    from disksleuth.probe.smart_parse import MAX_SMARTCTL_JSON_BYTES
    from disksleuth.probe.sysfs import Sysfs

    fs = Sysfs(sysfs_root)
    raw = fs.read_bytes(fs.p(SAVED_SMARTCTL_DIR, f"{os.path.basename(name)}.json"), limit=MAX_SMARTCTL_JSON_BYTES)
    if raw is None:
        raise NoSmartData(f"{name}: no smartctl output saved beside this tree ({SAVED_SMARTCTL_DIR[1:]}/{name}.json)")
    try:
        return parse_smartctl_json(raw.decode("utf-8", errors="replace"))
    except ParseError as exc:
        raise NoSmartData(f"{name}: the saved smartctl output: {exc}") from None
