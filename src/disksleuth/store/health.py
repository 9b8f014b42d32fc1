"""Health over time in the store: readings of each drive's counters, and acknowledged counter values.

What is kept (`record`): a reading is stored when it is the drive's first, when anything judged changed since
the drive's previous stored reading (a counter, SMART's verdict, wear, spare, the device name, firmware or host),
or when the previous one is KEEP_EVERY_S old or more. So the exporter's hourly background reads of a quiet drive
leave one row per 6 hours, not one per read, and every change is kept. Temperature and power-on hours change
all the time and alone do not make a reading new (the exporter publishes them live). The same instant read
twice (one saved smartctl file given twice) is stored once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from disksleuth.model.health_history import HealthAck, HealthReading
from disksleuth.store.db import Store
from disksleuth.store.documents import now_stamp
from disksleuth.store.schema import HEALTH_ACKS, HEALTH_READINGS, HEALTH_SCHEMA, from_json, to_json

KEEP_EVERY_S = 6 * 3600.0
SAME_INSTANT_S = 1.0  # smartctl's local_time has whole seconds
MOVED_PREFIX = "wear."  # data written and read (analysis.wear): kept with a reading, never a reason to keep one
_STATE = ("hostname", "device_name", "firmware", "smart_passed", "percentage_used", "available_spare_pct")


def has_health_tables(store: Store) -> bool:
    """False for a store older than schema 5 that a read-only command could not upgrade."""
    return store.schema >= HEALTH_SCHEMA


def iso_utc(epoch_s: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _judged(counters: Mapping[str, int]) -> dict[str, int]:
    """The counters whose change makes a reading new: not the data moved (`wear.`), which grows with every read."""
    return {k: v for k, v in counters.items() if not k.startswith(MOVED_PREFIX)}


def _changed(prev: HealthReading, new: HealthReading) -> bool:
    return _judged(prev.counters) != _judged(new.counters) or any(getattr(prev, k) != getattr(new, k) for k in _STATE)


def record(store: Store, reading: HealthReading) -> bool:
    """Store the reading unless it repeats the drive's previous one (module docstring). True when stored."""
    if not has_health_tables(store):
        return False
    t = HEALTH_READINGS
    with store._errors("write to"), store._writing() as conn:
        row = conn.execute(
            sa.select(t)
            .where(t.c.drive_key == reading.drive_key, t.c.read_at_s <= reading.read_at_s + SAME_INSTANT_S)
            .order_by(t.c.read_at_s.desc(), t.c.id.desc())
            .limit(1)
        ).first()
        if row is not None:
            prev = _reading(row._mapping)
            if abs(prev.read_at_s - reading.read_at_s) < SAME_INSTANT_S and not _changed(prev, reading):
                return False
            if not _changed(prev, reading) and reading.read_at_s - prev.read_at_s < KEEP_EVERY_S:
                return False
        conn.execute(
            t.insert().values(
                drive_key=reading.drive_key,
                read_at_s=reading.read_at_s,
                read_at=iso_utc(reading.read_at_s),
                stored_at=now_stamp(),
                hostname=reading.hostname,
                device_name=reading.device_name,
                serial_id=reading.serial_id,
                model=reading.model,
                firmware=reading.firmware,
                protocol=reading.protocol,
                source=reading.source,
                smart_passed=reading.smart_passed,
                temperature_c=reading.temperature_c,
                percentage_used=reading.percentage_used,
                available_spare_pct=reading.available_spare_pct,
                power_on_hours=reading.power_on_hours,
                counters_json=to_json(dict(reading.counters)),
            )
        )
    return True


def _reading(m: Any) -> HealthReading:
    counters = from_json(m["counters_json"], {})
    return HealthReading(
        read_at_s=float(m["read_at_s"]),
        hostname=m["hostname"],
        device_name=m["device_name"],
        drive_key=m["drive_key"],
        serial_id=m["serial_id"],
        model=m["model"],
        firmware=m["firmware"],
        protocol=m["protocol"],
        source=m["source"],
        smart_passed=None if m["smart_passed"] is None else bool(m["smart_passed"]),
        temperature_c=m["temperature_c"],
        percentage_used=m["percentage_used"],
        available_spare_pct=m["available_spare_pct"],
        power_on_hours=m["power_on_hours"],
        counters={str(k): int(v) for k, v in counters.items() if isinstance(v, int | float)},
        id=int(m["id"]),
    )


def history(
    store: Store, *, hostname: str | None, device_name: str | None, drive_keys: Iterable[str] = (), limit: int = 10_000
) -> list[HealthReading]:
    """Readings of this device name on this host (whichever drive answered under it) and of these drives
    (wherever they were), oldest first; the newest `limit` of them."""
    if not has_health_tables(store):
        return []
    t = HEALTH_READINGS
    keys = [k for k in drive_keys if k]
    where = []
    if device_name is not None and hostname is not None:
        where.append(sa.and_(t.c.hostname == hostname, t.c.device_name == device_name))
    if keys:
        where.append(t.c.drive_key.in_(keys))
    if not where:
        return []
    with store._errors("read"), store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(t).where(sa.or_(*where)).order_by(t.c.read_at_s.desc(), t.c.id.desc()).limit(limit)
        ).fetchall()
    return [_reading(r._mapping) for r in reversed(rows)]


def newest_per_drive(store: Store, hostname: str | None = None) -> list[HealthReading]:
    """The newest reading of every drive (of one host, or all), for `health` with no device."""
    if not has_health_tables(store):
        return []
    t = HEALTH_READINGS
    newest = sa.select(t.c.drive_key, sa.func.max(t.c.id).label("id")).group_by(t.c.drive_key)
    if hostname is not None:
        newest = newest.where(t.c.hostname == hostname)
    sub = newest.subquery()
    with store._errors("read"), store.engine.connect() as conn:
        rows = conn.execute(sa.select(t).join(sub, t.c.id == sub.c.id)).fetchall()
    return [_reading(r._mapping) for r in rows]


def acks(store: Store, drive_keys: Iterable[str]) -> dict[str, HealthAck]:
    """Acknowledged values by attribute; for a drive known under several keys, the newest ack of each."""
    keys = [k for k in drive_keys if k]
    if not keys or not has_health_tables(store):
        return {}
    t = HEALTH_ACKS
    with store._errors("read"), store.engine.connect() as conn:
        rows = conn.execute(sa.select(t).where(t.c.drive_key.in_(keys)).order_by(t.c.acked_at_s)).fetchall()
    return {
        r.attribute: HealthAck(r.drive_key, r.attribute, int(r.value), float(r.acked_at_s), r.hostname, r.device_name)
        for r in rows
    }


def set_ack(store: Store, ack: HealthAck) -> None:
    t = HEALTH_ACKS
    with store._errors("write to"), store._writing() as conn:
        conn.execute(t.delete().where(t.c.drive_key == ack.drive_key, t.c.attribute == ack.attribute))
        conn.execute(
            t.insert().values(
                drive_key=ack.drive_key,
                attribute=ack.attribute,
                value=ack.value,
                acked_at_s=ack.acked_at_s,
                hostname=ack.hostname,
                device_name=ack.device_name,
            )
        )


def remove_ack(store: Store, drive_keys: Iterable[str], attribute: str) -> int:
    """Undo acknowledgements of `attribute` on the drive; how many were removed."""
    t = HEALTH_ACKS
    keys = [k for k in drive_keys if k]
    with store._errors("write to"), store._writing() as conn:
        res = conn.execute(t.delete().where(t.c.drive_key.in_(keys), t.c.attribute == attribute))
        return int(res.rowcount or 0)
