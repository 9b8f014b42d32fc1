"""`health`: a drive's SMART health, read live through smartctl or from a saved `smartctl -x --json`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from disksleuth.analysis.health import health_findings, no_smart_reason
from disksleuth.analysis.health_history import WATCHED_PREFIXES, apply_history, judge, shown_name
from disksleuth.analysis.selftests import self_test_from_counters
from disksleuth.errors import ParseError, UsageError
from disksleuth.infile import read_user_file
from disksleuth.model import Finding
from disksleuth.model.health_history import AckOutcome, DriveLine, HealthAck, HealthReading, HistoryView
from disksleuth.model.run import Health
from disksleuth.probe.block import device_node
from disksleuth.probe.smart import NoSmartData, read_health
from disksleuth.probe.smart_parse import MAX_SMARTCTL_JSON_BYTES, parse_smartctl_json
from disksleuth.probe.target import device_for_path, inspect_target, node_kind
from disksleuth.run.health_history import Observed, device_name_of, file_host, observe, smartctl_time_s


AS_DEVICE_NEEDS_FILE = "--as-device names the drive of this host a --from-smartctl FILE was read from; give the FILE"


@dataclass(frozen=True)
class HealthReport:
    health: Health
    findings: list[Finding]
    history: Observed | None = None  # the reading against the drive's past (None: not asked for)


def drive_health(
    device: str | None = None,
    from_smartctl: str | None = None,
    db: str | None = None,
    keep: bool = True,
    as_device: str | None = None,
) -> HealthReport:
    """Health and its findings, from DEVICE (live) or a saved smartctl JSON file, judged against the drive's
    history in the store and kept there (`keep`; a saved file's reading is dated by smartctl's own clock). A
    file's reading is kept apart from this host's drives (file_host), unless `as_device` names the drive of this
    host it was read from."""
    if as_device is not None and not from_smartctl:
        raise UsageError(AS_DEVICE_NEEDS_FILE)
    health, read_at_s = _read(device, from_smartctl)
    findings = health_findings(health)
    name = device_name_of(device_node(device)) if device else None
    host = None
    if as_device is not None:
        name = _store_name(as_device)
    elif from_smartctl:
        host = file_host(from_smartctl)
    observed = observe(
        health, findings, db, device_name=name, source="file" if from_smartctl else "health", read_at_s=read_at_s,
        keep=keep, hostname=host,
    )  # fmt: skip
    return HealthReport(health, observed.findings, observed)


def _read(device: str | None, from_smartctl: str | None) -> tuple[Health, float | None]:
    if from_smartctl and device:
        raise UsageError(
            f"give a DEVICE or --from-smartctl FILE, not both ({device} would be ignored: "
            f"the figures come from {from_smartctl})"
        )
    if from_smartctl:
        raw = read_user_file(from_smartctl, MAX_SMARTCTL_JSON_BYTES, "smartctl --json output")
        text = raw.decode("utf-8", errors="replace")
        try:
            if not text.lstrip("\ufeff \t\r\n").startswith(("{", "[")):  # smartctl's text report, as explain reads it
                from disksleuth.run.paste import smartctl_text_health

                return smartctl_text_health(raw), None
            health = parse_smartctl_json(text)
        except ParseError as exc:
            raise ParseError(f"{from_smartctl}: {exc}") from None
        return health, smartctl_time_s(text)
    if device:
        node = device_node(device)
        emmc = _emmc_health(node)
        if emmc is not None:  # eMMC has no SMART: its life estimates are its health (issue 39)
            return emmc, None
        refuse_without_smart(node)
        return read_health(node), None
    raise UsageError("give a DEVICE or --from-smartctl FILE")


def _emmc_health(node: str) -> Health | None:
    import os

    from disksleuth.analysis.card_claims import emmc_health
    from disksleuth.probe.block import read_device

    name = os.path.basename(os.path.realpath(node))
    return emmc_health(read_device(name)) if name.startswith("mmcblk") else None


def refuse_without_smart(node: str) -> None:
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


# --- health over time: --history, --ack/--unack, and every drive --------------------------------


def _store_name(device: str) -> str:
    """A DEVICE argument as the store names drives: 'sda' for /dev/sda, sda, or /dev/disk/by-id/... of sda."""
    import os

    if "/" in device and os.path.exists(device):
        device = os.path.realpath(device)
    return device_name_of(device) or device


def health_history(db: str | None, device: str) -> HistoryView:
    """Every stored reading of DEVICE on this host, oldest first."""
    import socket

    from disksleuth.store.db import Store
    from disksleuth.store.health import acks, history

    name, host = _store_name(device), socket.gethostname()
    with Store(db, create=False, read_only=True) as store:
        readings = history(store, hostname=host, device_name=name)
        if not readings:
            raise UsageError(
                f"no health readings of {name} on {host} in {store.url}; `disksleuth health /dev/{name}`, check, "
                "bench and the exporter keep them"
            )
        newest = readings[-1]
        acked = acks(store, {newest.drive_key})
    judgement = judge(newest, readings[:-1], acked, time.time())
    return HistoryView(name, host, readings, apply_history(_stored_findings(newest), judgement))


def _stored_findings(r: HealthReading) -> list[Finding]:
    """The counter findings a stored reading gives (the reading keeps the counters, not the whole health)."""
    health = Health(
        device=r.device_name,
        model=r.model,
        smart_passed=r.smart_passed,
        percentage_used=r.percentage_used,
        available_spare_pct=r.available_spare_pct,
        interface_error_counts=_under(r.counters, "interface."),
        media_error_counts=_under(r.counters, "media."),
        protocol=r.protocol,
        power_on_hours=r.power_on_hours,
        self_test=self_test_from_counters(r.counters),
    )
    return health_findings(health)


def _under(counters: Mapping[str, int], prefix: str) -> dict[str, int]:
    return {k.removeprefix(prefix): v for k, v in counters.items() if k.startswith(prefix)}


def resolve_attribute(counters: dict[str, int], text: str) -> list[str]:
    """The watched counters ATTRIBUTE names: the full key, the name without its prefix, an ATA attribute id
    (199), or a unique part of a name (crc), case-insensitively; `all` is every counter above zero."""
    candidates = {k: v for k, v in counters.items() if k.startswith(WATCHED_PREFIXES)}
    want = text.strip().lower()
    if want == "all":
        return [k for k, v in candidates.items() if v > 0]
    for test in (
        lambda k: k.lower() == want,
        lambda k: shown_name(k).lower() == want,
        lambda k: want.isdigit() and k.endswith(f"(ATA {int(want)})"),
        lambda k: shown_name(k).lower().split(" (")[0] == want,
        lambda k: want in k.lower(),
    ):
        found = [k for k in candidates if test(k)]
        if found:
            return found
    return []


def acknowledge(db: str | None, device: str, attribute: str, undo: bool = False) -> list[AckOutcome]:
    """Accept ATTRIBUTE's value in DEVICE's newest stored reading (or undo that): its finding falls to info
    until the counter grows past it."""
    import socket

    from disksleuth.store.db import Store
    from disksleuth.store.health import history, remove_ack, set_ack

    name, host = _store_name(device), socket.gethostname()
    with Store(db, create=False) as store:
        readings = history(store, hostname=host, device_name=name, limit=1)
        if not readings:
            raise UsageError(
                f"no health reading of {name} on {host} in {store.url} to acknowledge; read it first: "
                f"disksleuth health /dev/{name}"
            )
        newest = readings[-1]
        keys = resolve_attribute(dict(newest.counters), attribute)
        if not keys:
            listed = ", ".join(shown_name(k) for k in newest.counters if k.startswith(WATCHED_PREFIXES)) or "none"
            raise UsageError(f"{name} has no counter named {attribute!r}; its counters: {listed}")
        if len(keys) > 1 and attribute.strip().lower() != "all":
            listed = "; ".join(shown_name(k) for k in keys)
            raise UsageError(f"{attribute!r} names {len(keys)} counters of {name} ({listed}); give one, or all")
        out = []
        for key in keys:
            if undo:
                removed = remove_ack(store, {newest.drive_key}, key)
                out.append(AckOutcome(name, key, None, newest.read_at_s, removed))
            else:
                value = newest.counters[key]
                set_ack(store, HealthAck(newest.drive_key, key, value, time.time(), host, name))
                out.append(AckOutcome(name, key, value, newest.read_at_s))
    return out


SEVERITY_RANK = {"ok": 0, "info": 1, "warn": 2, "critical": 3}


def worst(findings: list[Finding]) -> str:
    return max((f.severity for f in findings), key=lambda s: SEVERITY_RANK.get(s, 0), default="ok")


def every_drive(db: str | None) -> list[DriveLine]:
    """Every drive of this host, worst first: the physical drives read now (never woken), and the ones the store
    remembers from earlier readings (the exporter's, check's, a saved file's)."""
    import socket

    from disksleuth.errors import DisksleuthError, StoreMissing
    from disksleuth.probe.block import list_devices
    from disksleuth.probe.smart import read_health
    from disksleuth.run.exporter import health_paths
    from disksleuth.store.db import Store
    from disksleuth.store.health import acks, history, newest_per_drive

    live: dict[str, DriveLine] = {}
    try:
        paths = health_paths(list_devices("/"))
    except DisksleuthError:
        paths = []
    for path in paths:
        try:
            health = read_health(path, timeout_s=30, no_wake=True)
        except DisksleuthError:
            continue  # asleep, no SMART, no smartctl: the store may still know the drive
        observed = observe(health, health_findings(health), db, device_name=device_name_of(path), source="health")
        if observed.reading is not None:
            live[observed.reading.drive_key] = DriveLine(observed.reading, observed.findings, True)
    host = socket.gethostname()
    lines = dict(live)
    try:
        with Store(db, create=False, read_only=True) as store:
            for newest in newest_per_drive(store, host):
                if newest.drive_key in lines:
                    continue
                earlier = history(store, hostname=host, device_name=newest.device_name, drive_keys=[newest.drive_key])
                judgement = judge(newest, earlier, acks(store, {newest.drive_key}), time.time())
                found = apply_history(_stored_findings(newest), judgement)
                lines[newest.drive_key] = DriveLine(newest, found, False)
    except StoreMissing:
        pass
    return sorted(
        lines.values(), key=lambda d: (-SEVERITY_RANK.get(worst(d.findings), 0), d.reading.device_name or "")
    )
