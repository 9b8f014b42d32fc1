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


KEEP_S = 400 * 86400.0  # passes and sent messages older than this are dropped (a year of daily passes, and more)
RECLAIM_S = 3600.0  # a message claimed this long ago and still not marked: its sender died; send it again


def record_pass(
    store: Store,
    hostname: str,
    previous_at_s: float | None,
    state: PassState,
    worst: str,
    outbox: list[tuple[str, list[Message], str | None]],
) -> bool:
    """Keep the pass and queue its messages (target, messages, why held) in one transaction, only if the host's
    newest pass is still the one it was compared with: False when another pass came in between (two passes at
    once: the caller compares again with that one, so a change is never queued twice)."""
    p, o = WATCH_PASSES, WATCH_OUTBOX
    with store._errors("write to"), store._writing() as conn:
        newest = conn.execute(
            sa.select(p.c.at_s).where(p.c.hostname == hostname).order_by(p.c.at_s.desc(), p.c.id.desc()).limit(1)
        ).scalar()
        if (float(newest) if newest is not None else None) != previous_at_s:
            return False
        conn.execute(
            p.insert().values(
                hostname=hostname,
                at_s=state.at_s,
                at=iso_utc(state.at_s),
                drives=len(state.drives),
                worst=worst,
                state_json=to_json(state_to_dict(state)),
            )
        )
        rows = [
            {
                "hostname": hostname,
                "target": target,
                "created_at_s": state.at_s,
                "kind": m.kind,
                "severity": m.severity,
                "title": m.title,
                "body": m.body,
                "held": held or "new",
                "attempts": 0,
            }
            for target, messages, held in outbox
            for m in messages
        ]
        if rows:
            conn.execute(o.insert(), rows)
        old = state.at_s - KEEP_S
        conn.execute(p.delete().where(p.c.hostname == hostname, p.c.at_s < old))
        conn.execute(o.delete().where(o.c.hostname == hostname, o.c.created_at_s < old, o.c.held.is_(None)))
    return True


CLAIM_BATCH = 10  # messages sent to one target by one pass at most: the rest wait for the next pass
MAX_AGE_S = 30 * 86400.0  # a message no target took in this long is given up: news a month old is no news
WAITING = ("new", "failed", "quiet_hours")
SENDING = "sending@"  # and the time it was claimed: a sender dead for RECLAIM_S gives it back


@dataclass(frozen=True)
class Queued:
    id: int
    message: Message
    created_at_s: float
    attempts: int
    held: str = "new"  # what it was before this claim (release() puts it back)


def _claimed_at(held: str, created_at_s: float) -> float:
    """When a message being sent was claimed ("sending" alone, from an older disksleuth: when it was made)."""
    try:
        return float(held[len(SENDING) :]) if held.startswith(SENDING) else created_at_s
    except ValueError:
        return created_at_s


def claim(store: Store, hostname: str, target: str, now_s: float, limit: int = CLAIM_BATCH) -> list[Queued]:
    """At most `limit` of a target's unsent messages, oldest first, claimed for this sender (held = "sending@" and
    now) in one transaction. Each row is claimed only if it is still what was read, so two passes at once (on
    PostgreSQL too, where both may read it) never send the same message twice; a message another sender claimed is
    taken back only when that claim is RECLAIM_S old (the message's own age says nothing: a message held through
    the night is old when it is first sent)."""
    t = WATCH_OUTBOX
    mine = sa.and_(t.c.hostname == hostname, t.c.target == target, t.c.sent_at_s.is_(None))
    order = (t.c.created_at_s, t.c.id)
    with store._errors("write to"), store._writing() as conn:
        conn.execute(
            t.update()
            .where(mine, t.c.held.in_(WAITING), t.c.created_at_s < now_s - MAX_AGE_S)
            .values(held=None, last_error=f"given up: not taken within {MAX_AGE_S / 86400:.0f} days")
        )
        waiting = conn.execute(sa.select(t).where(mine, t.c.held.in_(WAITING)).order_by(*order).limit(limit)).fetchall()
        sending = conn.execute(
            sa.select(t).where(mine, t.c.held.like("sending%")).order_by(*order).limit(4 * limit)
        ).fetchall()
        stale = [r for r in sending if _claimed_at(r.held, float(r.created_at_s)) < now_s - RECLAIM_S]
        rows = sorted([*waiting, *stale], key=lambda r: (float(r.created_at_s), int(r.id)))[:limit]
        got = []
        for r in rows:
            done = conn.execute(
                t.update().where(t.c.id == r.id, t.c.held == r.held).values(held=f"{SENDING}{now_s:.3f}")
            )
            if done.rowcount == 1:
                got.append(r)
    return [
        Queued(
            int(r.id), Message(r.kind, r.severity, r.title, r.body), float(r.created_at_s), int(r.attempts),
            r.held if r.held in WAITING else "failed",
        )
        for r in got
    ]  # fmt: skip


def release(store: Store, queued: list[Queued]) -> None:
    """Claimed messages not tried (their target failed on an earlier one this pass): waiting again, as they were."""
    t = WATCH_OUTBOX
    with store._errors("write to"), store._writing() as conn:
        for q in queued:
            conn.execute(t.update().where(t.c.id == q.id).values(held=q.held))


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
