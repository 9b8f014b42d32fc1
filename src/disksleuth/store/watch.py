"""`watch` in the store: each pass's state per host, the outbox of its messages per target, and the newest
benchmark's baseline findings of a device.

Every message waits in the outbox until its target took it: held in quiet hours, kept after a failure, sent once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from disksleuth.doc.watch import state_from_dict, state_to_dict
from disksleuth.model.watch import Message, PassState
from disksleuth.store.db import Store
from disksleuth.store.schema import FINDINGS, RUNS, WATCH_OUTBOX, WATCH_PASSES, from_json, to_json

MAX_ATTEMPTS = 5  # a message a target refused this many passes running is given up (said in the pass's notes)


def iso_utc(epoch_s: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def last_pass(store: Store, hostname: str) -> tuple[PassState | None, float | None]:
    """The host's newest pass, and when its first pass was (None, None: never watched)."""
    t = WATCH_PASSES
    with store._errors("read"), store.engine.connect() as conn:
        row = conn.execute(
            sa.select(t.c.state_json).where(t.c.hostname == hostname).order_by(t.c.at_s.desc(), t.c.id.desc()).limit(1)
        ).first()
        first = conn.execute(sa.select(sa.func.min(t.c.at_s)).where(t.c.hostname == hostname)).scalar()
    if row is None:
        return None, None
    try:
        state = state_from_dict(from_json(row[0]))
    except ValueError:
        state = None
    return state, float(first) if first is not None else None


def save_pass(store: Store, hostname: str, state: PassState, worst: str) -> None:
    t = WATCH_PASSES
    with store._errors("write to"), store._writing() as conn:
        conn.execute(
            t.insert().values(
                hostname=hostname,
                at_s=state.at_s,
                at=iso_utc(state.at_s),
                drives=len(state.drives),
                worst=worst,
                state_json=to_json(state_to_dict(state)),
            )
        )


@dataclass(frozen=True)
class Queued:
    id: int
    message: Message
    created_at_s: float
    attempts: int


def queue(store: Store, hostname: str, target: str, at_s: float, messages: list[Message], held: str | None) -> None:
    if not messages:
        return
    t = WATCH_OUTBOX
    with store._errors("write to"), store._writing() as conn:
        conn.execute(
            t.insert(),
            [
                {
                    "hostname": hostname,
                    "target": target,
                    "created_at_s": at_s,
                    "kind": m.kind,
                    "severity": m.severity,
                    "title": m.title,
                    "body": m.body,
                    "held": held or "new",
                    "attempts": 0,
                }
                for m in messages
            ],
        )


def pending(store: Store, hostname: str, target: str) -> list[Queued]:
    """A target's unsent messages, oldest first."""
    t = WATCH_OUTBOX
    with store._errors("read"), store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(t)
            .where(t.c.hostname == hostname, t.c.target == target, t.c.sent_at_s.is_(None), t.c.held.is_not(None))
            .order_by(t.c.created_at_s, t.c.id)
        ).fetchall()
    return [
        Queued(int(r.id), Message(r.kind, r.severity, r.title, r.body), float(r.created_at_s), int(r.attempts))
        for r in rows
    ]


def mark(store: Store, row_id: int, *, sent_at_s: float | None, error: str | None, attempts: int) -> None:
    """Sent (held cleared), failed (kept, tried again), or given up (held cleared, never sent)."""
    t = WATCH_OUTBOX
    given_up = sent_at_s is None and attempts >= MAX_ATTEMPTS
    held = None if sent_at_s is not None or given_up else "failed"
    with store._errors("write to"), store._writing() as conn:
        conn.execute(
            t.update()
            .where(t.c.id == row_id)
            .values(sent_at_s=sent_at_s, last_error=error, attempts=attempts, held=held)
        )


def newest_run_findings(store: Store, hostname: str, device: str, codes: tuple[str, ...]) -> list[dict[str, Any]]:
    """The findings with these codes of the newest stored run of `device` on `hostname` (the baseline's verdict
    of the last benchmark: slower_than_usual), as dicts with code, severity, message, evidence, hint."""
    with store._errors("read"), store.engine.connect() as conn:
        newest = conn.execute(
            sa.select(sa.func.max(RUNS.c.id)).where(RUNS.c.hostname == hostname, RUNS.c.device_name == device)
        ).scalar()
        if newest is None:
            return []
        rows = conn.execute(
            sa.select(FINDINGS).where(FINDINGS.c.run_id == newest, FINDINGS.c.code.in_(codes)).order_by(FINDINGS.c.id)
        ).fetchall()
    return [
        {
            "code": r.code,
            "severity": r.severity,
            "message": r.message or "",
            "evidence": from_json(r.evidence_json, {}),
            "hint": r.hint or "",
            "run_id": int(newest),
        }
        for r in rows
    ]
