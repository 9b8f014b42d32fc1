"""The fleet view (pure): one row per host and device from its newest stored run, worst first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from disksleuth.model import SEVERITY_ORDER


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


def _worst(findings: list[dict[str, Any]]) -> str:
    return max((f["severity"] for f in findings), key=lambda s: SEVERITY_ORDER.get(s, 0), default="ok")


def fleet_rows(runs: list[dict[str, Any]]) -> list[FleetRow]:
    """Rows from `store.latest.latest_runs_per_host_device`, worst severity first, then host, device."""
    rows = []
    for r in runs:
        findings = sorted(r.get("findings") or [], key=lambda f: -SEVERITY_ORDER.get(f["severity"], 0))
        codes = tuple(dict.fromkeys(f["code"] for f in findings if f["severity"] != "ok"))
        link = (r.get("device") or {}).get("link") or {}
        rows.append(
            FleetRow(
                host=r.get("hostname") or "(unknown host)",
                device=r.get("device_name") or "(no device)",
                model=r.get("device_model"),
                transport=r.get("device_transport"),
                run_id=r["id"],
                started_at=r.get("started_at") or "",
                kind=r.get("kind") or "",
                profile=r.get("profile") or "",
                worst=_worst(findings),
                codes=codes,
                seq_read_mbps=r.get("seq_read_mbps"),
                seq_write_mbps=r.get("seq_write_mbps"),
                ceiling_mbps=link.get("current_ceiling_mbps"),
                summary=r.get("summary"),
                seq_read_run_id=r.get("seq_read_run_id"),
                seq_read_started_at=r.get("seq_read_started_at"),
                seq_write_run_id=r.get("seq_write_run_id"),
                seq_write_started_at=r.get("seq_write_started_at"),
                firmware=r.get("device_firmware"),
                serial_id=r.get("device_serial_sha256"),
            )
        )
    return sorted(rows, key=lambda x: (-SEVERITY_ORDER.get(x.worst, 0), x.host, x.device))


def with_siblings(rows: list[FleetRow]) -> list[FleetRow]:
    """Each row with its drive judged among the drives of the same model and firmware (unlike_siblings):
    the finding joins the row's codes and can make it worse; worst first again."""
    from dataclasses import replace

    from disksleuth.analysis.siblings import Drive, judge_fleet

    drives = [
        Drive(
            r.host,
            r.device,
            r.model,
            r.firmware,
            {"seq_read_mbps": r.seq_read_mbps, "seq_write_mbps": r.seq_write_mbps, "ceiling_mbps": r.ceiling_mbps},
            r.serial_id,
        )
        for r in rows
    ]
    found = judge_fleet(drives)
    out = []
    for r in rows:
        mine = found.get((r.host, r.device)) or []
        if mine:
            worst = max([r.worst, *(f.severity for f in mine)], key=lambda s: SEVERITY_ORDER.get(s, 0))
            codes = tuple(dict.fromkeys([*r.codes, *(f.code for f in mine)]))
            r = replace(r, worst=worst, codes=codes, siblings=tuple(f.to_dict() for f in mine))
        out.append(r)
    return sorted(out, key=lambda x: (-SEVERITY_ORDER.get(x.worst, 0), x.host, x.device))


def fleet_counts(rows: list[FleetRow]) -> dict[str, int]:
    counts = {s: 0 for s in ("critical", "warn", "info", "ok")}
    for row in rows:
        counts[row.worst] = counts.get(row.worst, 0) + 1
    return counts
