"""`check` among its siblings: the newest figures of the other drives of the same model and firmware in the
store (every host), and this run's drive judged among them (analysis/siblings.py). Never fails a check."""

from __future__ import annotations

from disksleuth.analysis.fleet import fleet_rows
from disksleuth.analysis.siblings import Drive, judge_drive
from disksleuth.errors import DisksleuthError
from disksleuth.model import Finding
from disksleuth.store.latest import latest_runs_per_host_device


def sibling_findings(db: str | None, drive: Drive) -> list[Finding]:
    """unlike_siblings findings for `drive` (this run's figures); [] without a model and firmware, without
    enough siblings, or when the store cannot be read."""
    if drive.group is None:
        return []
    try:
        rows = fleet_rows(latest_runs_per_host_device(db, group=drive.group), ordered=False)
    except DisksleuthError:
        return []
    others = [
        Drive(
            r.host,
            r.device,
            r.model,
            r.firmware,
            {"seq_read_mbps": r.seq_read_mbps, "seq_write_mbps": r.seq_write_mbps, "ceiling_mbps": r.ceiling_mbps},
            r.serial_id,
        )
        for r in rows
        if (r.model, r.firmware) == drive.group
    ]
    return judge_drive(drive, others)
