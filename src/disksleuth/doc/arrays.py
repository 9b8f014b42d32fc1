"""Array trees and member benchmarks as documents (issue 24): the `stack` of list/check/explain, and the
`bench --members` document. Keys are only ever added."""

from __future__ import annotations

from typing import Any

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.members import smart_status
from disksleuth.doc.inventory import chain_to_dict
from disksleuth.model import Finding
from disksleuth.model.arrays import MemberReading, StackNode

SCHEMA = "disksleuth/1"


def node_to_dict(node: StackNode) -> dict[str, Any]:
    """One layer of the stack and everything under it; a disk leaf carries its link chain."""
    out: dict[str, Any] = {
        "name": node.name,
        "kind": node.kind,
        "level": node.level,
        "label": node.label,
        "role": node.role,
        "size_bytes": node.size_bytes,
        "raid_disks": node.raid_disks,
        "chunk_bytes": node.chunk_bytes,
        "degraded": node.degraded,
        "array_state": node.array_state,
        "sync_action": node.sync_action,
        "sync_done_pct": node.sync_done_pct,
        "member_state": list(node.member_state),
        "member_errors": node.member_errors,
        "member_slot": node.member_slot,
        "notes": list(node.notes),
        "children": [node_to_dict(c) for c in node.children],
    }
    if node.device is not None:
        out["link"] = chain_to_dict(link_chain(node.device.hops))
    if node.kind == "disk":
        out["health"] = member_health_to_dict(node)
    return out


def member_health_to_dict(node: StackNode) -> dict[str, Any] | None:
    """A disk member's SMART health in short (None when it was not tried: a virtual disk, an old document)."""
    if node.health is None:
        return {"read": False, "not_read": node.health_not_read} if node.health_not_read else None
    status, words = smart_status(node.health)
    return {
        "read": True,
        "status": status,
        "words": words,
        "smart_passed": node.health.smart_passed,
        "model": node.health.model,
        "not_read": None,
    }


def reading_to_dict(r: MemberReading) -> dict[str, Any]:
    return {
        "name": r.name,
        "path": r.path,
        "alone_mbps": _r(r.alone_mbps),
        "alone_ci95_pct": r.alone_ci95_pct,
        "together_mbps": _r(r.together_mbps),
        "together_ci95_pct": r.together_ci95_pct,
        "skipped": r.skipped,
        "fio_command": r.fio_command,
    }


def _r(v: float | None) -> float | None:
    return round(v, 1) if v is not None else None


def members_document(
    readings: tuple[MemberReading, ...],
    array: StackNode | None,
    level: str | None,
    expectation: dict[str, object] | None,
    findings: tuple[Finding, ...] | list[Finding],
    notes: tuple[str, ...],
    run: dict[str, Any],
) -> dict[str, Any]:
    """`bench --members --json`, and the run the store keeps of it: `run` carries what every stored run has
    (kind "members", target, profile, host) and `device` the array (or the members named by hand) with its
    stack, the readings and the expectation, where `show`, `export` and the report find them as for `check`
    on an array."""
    members = [reading_to_dict(r) for r in readings]
    stack = node_to_dict(array) if array is not None else None
    names = [r.name for r in readings]
    device: dict[str, Any] = {
        "name": array.name if array is not None else ",".join(names)[:64],
        "members": members,
        "array_expectation": expectation,
    }
    if array is not None and stack is not None:
        device["transport"] = array.kind
        device["stack"] = stack
    return {
        "schema": SCHEMA,
        "kind": "members",
        "run": {"kind": "members", "profile": "members", "device": device["name"], **run},
        "device": device,
        "tests": [],
        "members": members,
        "array": stack,
        "level": level,
        "expectation": expectation,
        "findings": [f.to_dict() for f in findings],
        "notes": list(notes),
    }


def array_parts(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored run's array parts at the top of its document, as `check --json` gave them (issue 24): the store
    keeps them inside `device`, the part of a run it keeps whole."""
    device = doc.get("device")
    if not isinstance(device, dict):
        return doc
    lifted = {key: device[key] for key in ("stack", "members", "array_expectation") if key in device}
    return {**doc, **lifted} if lifted else doc
