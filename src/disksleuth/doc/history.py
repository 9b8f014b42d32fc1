"""Documents of the results store's listings: `runs --json`."""

from __future__ import annotations

from typing import Any


def runs_to_dict(rows: list[dict[str, Any]], total: int) -> dict[str, Any]:
    return {
        "total": total,
        "runs": [
            {
                "id": r["id"],
                "uuid": r["uuid"],
                "started_at": r["started_at"],
                "host": r["hostname"],
                "target": r["target"],
                "device_model": r["device_model"],
                "device": r["device_name"],
                "profile": r["profile"],
                "kind": r["kind"],
                "tags": r["tags"],
                "summary": r["summary"],
                "note": r["note"],
                # slower or faster than usual when it was measured (its baseline finding), else null
                "baseline": r.get("baseline"),
            }
            for r in rows
        ],
    }
