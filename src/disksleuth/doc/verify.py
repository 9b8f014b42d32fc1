"""`verify --json`: one capacity test as a document ("kind": "verify"). Sizes in bytes; usable_bytes is null when
nothing was read back."""

from __future__ import annotations

from typing import Any

from disksleuth.model.verify import BlockOutcome, VerifyReport


def _block(o: BlockOutcome) -> dict[str, Any]:
    return {"offset": o.offset, "state": o.state, "carries_offset": o.carries_offset, "error": o.error}


def verify_document(report: VerifyReport) -> dict[str, Any]:
    v = report.verdict
    return {
        "kind": "verify",
        "device": {"path": report.path, "name": report.name, "model": report.model},
        "claimed_bytes": v.claimed_bytes,
        "usable_bytes": v.usable_bytes,
        "block_bytes": v.block_bytes,
        "quick": report.quick,
        "max_time_s": report.max_time_s,
        "blocks_planned": report.blocks_planned,
        "blocks_written": report.blocks_written,
        "blocks_skipped": report.blocks_skipped,
        "blocks_tested": v.blocks_tested,
        "blocks_held": v.blocks_held,
        "failures": dict(v.failures),
        "first_failure": _block(v.first_failure) if v.first_failure else None,
        "examples": [_block(o) for o in v.examples],
        "held_past_usable": v.held_past_usable,
        "wraps_every_bytes": v.wraps_every_bytes,
        "complete": report.complete,
        "stopped": report.stopped,
        "write_s": report.write_s,
        "read_s": report.read_s,
        "elapsed_s": report.elapsed_s,
        "nonce": report.nonce,
        "findings": [f.to_dict() for f in v.findings],
        "notes": list(report.notes),
        "summary": v.summary if report.stopped is None else f"{v.summary} (stopped early: {report.stopped})",
    }
