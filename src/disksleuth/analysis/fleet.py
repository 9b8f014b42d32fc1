"""The fleet view (pure): one row per host and device from its newest stored run, worst first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from disksleuth.model import SEVERITY_ORDER, Finding


@dataclass(frozen=True)
class FleetRow:
    host: str
    device: str
    model: str | None
    transport: str | None
    run_id: int
    started_at: str
    kind: str
    profile: str
    worst: str  # ok, info, warn, critical
    codes: tuple[str, ...]  # finding codes, worst first
    seq_read_mbps: float | None  # from the newest run with a sequential read figure, not always run_id
    seq_write_mbps: float | None  # likewise for writes
    ceiling_mbps: float | None
    summary: str | None
    seq_read_run_id: int | None = None  # the run seq_read_mbps comes from, and when it started
    seq_read_started_at: str | None = None
    seq_write_run_id: int | None = None
    seq_write_started_at: str | None = None
    firmware: str | None = None
    # unlike_siblings findings (analysis/siblings.py) against the drives of the same model and firmware
    siblings: tuple[dict[str, Any], ...] = ()
    serial_id: str | None = None


MEMBERS_KIND = "members"  # bench --members: each member of an array read alone and together


def device_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs that are one device's: a members run reads several devices at once and is stored under their
    names joined ("loop1,loop0"), which is no device of the fleet (issue 40)."""
    return [r for r in runs if r.get("kind") != MEMBERS_KIND]


def fleet_rows(runs: list[dict[str, Any]], ordered: bool = True) -> list[FleetRow]:
    """Rows from `store.latest.latest_runs_per_host_device`, worst first (worst_first) unless not `ordered` (the
    siblings of one drive in `check`, whose order does not matter)."""
    rows = [fleet_row(r) for r in runs]
    return sorted(rows, key=worst_first) if ordered else rows


def _worst_and_codes(findings: list[dict[str, Any]]) -> tuple[str, tuple[str, ...]]:
    """A run's worst severity and its finding codes, worst first (ok is no code)."""
    if not findings:
        return "ok", ()
    if len(findings) == 1:  # most runs: no sorting, no dict
        only = findings[0]
        return only["severity"], (() if only["severity"] == "ok" else (only["code"],))
    findings = sorted(findings, key=lambda f: -SEVERITY_ORDER.get(f["severity"], 0))
    return findings[0]["severity"], tuple(dict.fromkeys(f["code"] for f in findings if f["severity"] != "ok"))


def _host(r: dict[str, Any]) -> str:
    return r.get("hostname") or "(unknown host)"


def _device(r: dict[str, Any]) -> str:
    return r.get("device_name") or "(no device)"


def fleet_row(r: dict[str, Any]) -> FleetRow:
    """The row of one device's newest run (a dict of `latest_runs_per_host_device`), before its siblings."""
    worst, codes = _worst_and_codes(r.get("findings") or [])
    link = (r.get("device") or {}).get("link") or {}
    # A run under a cgroup I/O limit (issue 36): the device's ceiling is its links' alone.
    ceiling = (
        r["ceiling_mbps"] if "ceiling_mbps" in r else link.get("link_ceiling_mbps", link.get("current_ceiling_mbps"))
    )
    return FleetRow(
        host=_host(r),
        device=_device(r),
        model=r.get("device_model"),
        transport=r.get("device_transport"),
        run_id=r["id"],
        started_at=r.get("started_at") or "",
        kind=r.get("kind") or "",
        profile=r.get("profile") or "",
        worst=worst,
        codes=codes,
        seq_read_mbps=r.get("seq_read_mbps"),
        seq_write_mbps=r.get("seq_write_mbps"),
        ceiling_mbps=ceiling,
        summary=r.get("summary"),
        seq_read_run_id=r.get("seq_read_run_id"),
        seq_read_started_at=r.get("seq_read_started_at"),
        seq_write_run_id=r.get("seq_write_run_id"),
        seq_write_started_at=r.get("seq_write_started_at"),
        firmware=r.get("device_firmware"),
        serial_id=r.get("device_serial_sha256"),
    )


def worst_first(row: FleetRow) -> tuple[int, int, str, str]:
    """The fleet's order: the most severe first, then the most findings, then host and device (stable)."""
    return (-SEVERITY_ORDER.get(row.worst, 0), -len(row.codes), row.host, row.device)


def _merged(worst: str, codes: tuple[str, ...], found: Sequence[Finding]) -> tuple[str, tuple[str, ...]]:
    """A row's worst severity and codes with its unlike_siblings findings joined."""
    worst = max([worst, *(f.severity for f in found)], key=lambda s: SEVERITY_ORDER.get(s, 0))
    return worst, tuple(dict.fromkeys([*codes, *(f.code for f in found)]))


def with_sibling_findings(row: FleetRow, found: Sequence[Finding]) -> FleetRow:
    if not found:
        return row
    worst, codes = _merged(row.worst, row.codes, found)
    return replace(row, worst=worst, codes=codes, siblings=tuple(f.to_dict() for f in found))


class FleetKey(NamedTuple):
    """A device as the counts, the filters and the order need it: light enough for 24,000 of them (a FleetRow
    is built only for the devices shown). Sorts worst first by itself, as worst_first orders the rows."""

    rank: int  # -severity order
    minus_codes: int  # -number of codes
    host: str
    device: str
    place: int  # its index in the runs it came from (unique: the order never compares further)
    model: str | None
    worst: str
    codes: tuple[str, ...]
    started_at: str


def fleet_keys(runs: list[dict[str, Any]]) -> tuple[list[FleetKey], dict[tuple[str, str], list[Finding]]]:
    """Every device's key, its drive judged among its siblings of the same model and firmware, unordered; and the
    sibling findings by (host, device), for the rows built later (fleet_row, with_sibling_findings)."""
    from disksleuth.analysis.siblings import Drive, judge_fleet

    # One pass, names read once per device (the keys below take them from the drive).
    drives = [
        Drive(
            _host(r),
            _device(r),
            r.get("device_model"),
            r.get("device_firmware"),
            r,  # the run's dict is the figures: seq_read/write_mbps, ceiling_mbps
            r.get("device_serial_sha256"),
        )
        for r in runs
    ]
    found = judge_fleet(drives)
    order = SEVERITY_ORDER
    keys = []
    for place, (r, d) in enumerate(zip(runs, drives, strict=True)):
        host, device, model = d.host, d.device, d.model
        worst, codes = _worst_and_codes(r.get("findings") or [])
        if found and (mine := found.get((host, device))):
            worst, codes = _merged(worst, codes, mine)
        keys.append(
            FleetKey(
                -order.get(worst, 0), -len(codes), host, device, place, model, worst, codes, r.get("started_at") or ""
            )
        )
    return keys, found


class _Device(Protocol):
    """What the filters and the counts read of a device: a FleetRow or a FleetKey."""

    @property
    def host(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def worst(self) -> str: ...
    @property
    def codes(self) -> tuple[str, ...]: ...
    @property
    def started_at(self) -> str: ...


def fleet_counts(rows: Sequence[_Device]) -> dict[str, int]:
    counts = {s: 0 for s in ("critical", "warn", "info", "ok")}
    for row in rows:
        counts[row.worst] = counts.get(row.worst, 0) + 1
    return counts


@dataclass(frozen=True)
class FleetFilter:
    """Which devices `fleet` shows. Every field narrows; None (or empty) does not."""

    host: str | None = None  # a glob (fnmatch), case-insensitive; a plain name matches itself
    model: str | None = None  # a substring, case-insensitive; a glob when it has *, ? or [
    finding: str | None = None  # a finding code
    severity: str | None = None  # this severity or worse
    since_s: float | None = None  # newest run started at or after (epoch seconds)

    def keeps(self, row: _Device) -> bool:
        if self.host and not _glob(self.host, row.host):
            return False
        if self.model and not model_matches(self.model, row.model):
            return False
        if self.finding and self.finding not in row.codes:
            return False
        if self.severity and SEVERITY_ORDER.get(row.worst, 0) < SEVERITY_ORDER[self.severity]:
            return False
        return self.since_s is None or (started := _epoch_s(row.started_at)) is not None and started >= self.since_s


def _glob(pattern: str, text: str) -> bool:
    from fnmatch import fnmatchcase

    return pattern.lower() == text.lower() or fnmatchcase(text.lower(), pattern.lower())


def model_matches(pattern: str, model: str | None) -> bool:
    if not model:
        return False
    if any(c in pattern for c in "*?["):
        return _glob(pattern, model)
    return pattern.lower() in model.lower()


def _epoch_s(iso: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(iso).timestamp()  # 3.11 reads "+0000" as stored
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass(frozen=True)
class FleetSummary:
    """The counts `fleet` opens with, over the devices the filter kept."""

    devices: int
    hosts: int
    store_devices: int  # every device in the store, before the filter
    by_severity: dict[str, int]  # critical, warn, info, ok: devices whose worst finding is that
    by_finding: list[tuple[str, int]]  # finding code, devices with it; most first
    by_model: list[tuple[str, dict[str, int]]]  # model, {"devices", "critical", "warn", "info", "ok"}; worst first
    host_names: tuple[str, ...] = ()  # sorted


def summarise(rows: Sequence[_Device], store_devices: int) -> FleetSummary:
    from collections import Counter

    findings: Counter[str] = Counter(code for r in rows for code in r.codes)
    models: dict[str, dict[str, int]] = {}
    for r in rows:
        blank = {"devices": 0, "critical": 0, "warn": 0, "info": 0, "ok": 0}
        mine = models.setdefault(r.model or "(unknown model)", blank)
        mine["devices"] += 1
        mine[r.worst] = mine.get(r.worst, 0) + 1
    return FleetSummary(
        devices=len(rows),
        hosts=len(hosts := sorted({r.host for r in rows})),
        store_devices=store_devices,
        by_severity=fleet_counts(rows),
        by_finding=sorted(findings.items(), key=lambda kv: (-kv[1], kv[0])),
        by_model=sorted(models.items(), key=lambda kv: (-kv[1]["critical"], -kv[1]["warn"], -kv[1]["devices"], kv[0])),
        host_names=tuple(hosts),
    )
