"""`watch --json` ("kind": "watch"), and a pass's state as the store keeps it (read back by the next pass)."""

from __future__ import annotations

from typing import Any

from disksleuth.model import Finding, worst_severity
from disksleuth.model.watch import DriveSeen, PassState, SeenFinding, WatchOutcome


def state_to_dict(state: PassState) -> dict[str, Any]:
    return {
        "at_s": state.at_s,
        "heartbeat_at_s": state.heartbeat_at_s,
        "told": [list(t) for t in state.told],
        **({"targets": list(state.targets)} if state.targets is not None else {}),
        "drives": [
            {
                "key": d.key,
                "device": d.device,
                "model": d.model,
                "findings": [{"code": f.code, "severity": f.severity, "message": f.message} for f in d.findings],
                "counters": dict(d.counters),
                "health_read": d.health_read,
                "not_read": d.not_read,
                "carried": d.carried,
            }
            for d in state.drives
        ],
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def state_from_dict(doc: Any) -> PassState | None:
    """A stored state back; None for one this version cannot read (the next pass then starts afresh)."""
    if not isinstance(doc, dict) or _number(doc.get("at_s")) is None or not isinstance(doc.get("drives"), list):
        return None
    drives = []
    for d in doc["drives"]:
        if not isinstance(d, dict) or not isinstance(d.get("key"), str):
            continue
        findings = tuple(
            SeenFinding(f["code"], f["severity"], str(f.get("message") or ""))
            for f in d.get("findings") or []
            if isinstance(f, dict) and isinstance(f.get("code"), str) and isinstance(f.get("severity"), str)
        )
        counters = d.get("counters")
        counters = counters if isinstance(counters, dict) else {}
        drives.append(
            DriveSeen(
                key=d["key"],
                device=_text(d.get("device")) or d["key"],
                model=_text(d.get("model")),
                findings=findings,
                counters={str(k): int(v) for k, v in counters.items() if _number(v) is not None},
                health_read=bool(d.get("health_read")),
                not_read=_text(d.get("not_read")),
                carried=bool(d.get("carried")),
            )
        )
    listed = doc.get("told")
    told = tuple(
        (t[0], t[1], t[2], float(t[3]))
        for t in (listed if isinstance(listed, list) else [])
        if isinstance(t, list) and len(t) == 4 and all(isinstance(x, str) for x in t[:3]) and _number(t[3]) is not None
    )
    ids = doc.get("targets")
    targets = tuple(t for t in ids if isinstance(t, str)) if isinstance(ids, list) else None
    return PassState(float(doc["at_s"]), tuple(drives), _number(doc.get("heartbeat_at_s")), told, targets)


def watch_document(outcome: WatchOutcome) -> dict[str, Any]:
    findings: dict[str, tuple[Finding, ...]] = {k: tuple(v) for k, v in outcome.findings.items()}
    every = [f for fs in findings.values() for f in fs]
    return {
        "kind": "watch",
        "at_s": outcome.at_s,
        "hostname": outcome.hostname,
        "previous_at_s": outcome.previous_at_s,
        "overdue_s": None if outcome.overdue_s is None else round(outcome.overdue_s),
        "quiet_hours": outcome.quiet,
        "heartbeat": outcome.heartbeat,
        "saved": outcome.saved,
        "worst": worst_severity(every),
        "drives": [
            {
                "device": d.device,
                "model": d.model,
                "health_read": d.health_read,
                "not_read": d.not_read,
                "carried": d.carried,
                "worst": worst_severity(list(findings.get(d.device, ()))),
                "findings": [f.to_dict() for f in findings.get(d.device, ())],
            }
            for d in outcome.state.drives
        ],
        "changes": [c.to_dict() for c in outcome.changes],
        "notifications": [
            {
                "target": n.target,
                "kind": n.kind,
                "title": n.title,
                "outcome": n.outcome,
                **({"error": n.error} if n.error else {}),
            }
            for n in outcome.deliveries
        ],
        "self_tests": [{"device": d, "outcome": what} for d, what in outcome.self_tests],
        "notes": list(outcome.notes),
    }


def units_document(action: str, paths: list[str], notes: list[str]) -> dict[str, Any]:
    """watch --install / --uninstall."""
    return {"kind": "watch_units", "action": action, "files": paths, "notes": notes}
