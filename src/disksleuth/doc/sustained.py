"""The sustained profile's fill as a document, and back."""

from __future__ import annotations

from typing import Any

from disksleuth.model.sustained import FillPoint, Phase, Recovery, Sustained


def _point(p: FillPoint) -> dict[str, Any]:
    return {"t_s": p.t_s, "written_bytes": p.written_bytes, "mbps": p.mbps}


def sustained_to_dict(s: Sustained) -> dict[str, Any]:
    from disksleuth.analysis.sustained import CLIFF_DROP_PCT

    r = s.recovery
    return {
        "written_bytes": s.written_bytes,
        "duration_s": s.duration_s,
        "mbps": s.mbps,  # the fill's one rate: written_bytes / duration_s, the test's write_mbps
        "judged": s.judged,  # false: too short to look for a cliff; reason says why
        "cache_exhausted_at_bytes": s.cache_exhausted_at_bytes,
        "burst_mbps": s.burst_mbps,
        "sustained_mbps": s.sustained_mbps,
        "phases": [
            {
                "start_bytes": p.start_bytes,
                "end_bytes": p.end_bytes,
                "start_s": p.start_s,
                "end_s": p.end_s,
                "mbps": p.mbps,
            }
            for p in s.phases
        ],
        "cause": s.cause,
        "cliff_at_bytes": s.cliff_at_bytes,
        "cliff_at_s": s.cliff_at_s,
        "drop_pct": s.drop_pct,
        "cliff_min_drop_pct": CLIFF_DROP_PCT,
        "reason": s.reason,
        "stopped_by": s.stopped_by,
        "temperature_at_cliff_c": s.temperature_at_cliff_c,
        "temperature_peak_c": s.temperature_peak_c,
        "temperature_warning_c": s.temperature_warning_c,
        "recovery": None
        if r is None
        else {
            "idle_s": r.idle_s,
            "written_bytes": r.written_bytes,
            "fast_bytes": r.fast_bytes,
            "mbps": r.mbps,
            "recovered_pct": r.recovered_pct,
            "fell": r.fell,
            "points": [_point(p) for p in r.points],
        },
        "points": [_point(p) for p in s.points],
        "temperature_series": [{"t_s": t, "temperature_c": c} for t, c in s.temperatures],
    }


def sustained_from_dict(d: dict[str, Any]) -> Sustained:
    """A stored `sustained` object back into the model (show, report)."""

    def points(items: list[dict[str, Any]] | None) -> tuple[FillPoint, ...]:
        return tuple(FillPoint(p["t_s"], p["written_bytes"], p["mbps"]) for p in items or [])

    r = d.get("recovery")
    return Sustained(
        written_bytes=d.get("written_bytes") or 0,
        duration_s=d.get("duration_s") or 0.0,
        cache_exhausted_at_bytes=d.get("cache_exhausted_at_bytes"),
        burst_mbps=d.get("burst_mbps"),
        sustained_mbps=d.get("sustained_mbps"),
        phases=tuple(
            Phase(p["start_bytes"], p["end_bytes"], p.get("start_s", 0.0), p.get("end_s", 0.0), p["mbps"])
            for p in d.get("phases") or []
        ),
        cause=d.get("cause"),
        cliff_at_bytes=d.get("cliff_at_bytes"),
        cliff_at_s=d.get("cliff_at_s"),
        drop_pct=d.get("drop_pct"),
        temperature_at_cliff_c=d.get("temperature_at_cliff_c"),
        temperature_peak_c=d.get("temperature_peak_c"),
        temperature_warning_c=d.get("temperature_warning_c"),
        reason=d.get("reason") or "",
        points=points(d.get("points")),
        temperatures=tuple((t["t_s"], t["temperature_c"]) for t in d.get("temperature_series") or []),
        recovery=None
        if r is None
        else Recovery(
            r["idle_s"],
            r["written_bytes"],
            r["fast_bytes"],
            r["mbps"],
            r.get("recovered_pct"),
            r["fell"],
            points(r.get("points")),
        ),
        stopped_by=d.get("stopped_by") or "size",
        # Runs stored before `judged` existed: as many windows as the analysis needs, or not.
        judged=d.get("judged", len(d.get("points") or []) >= _min_points()),
    )


def _min_points() -> int:
    from disksleuth.analysis.sustained import MIN_PHASE_POINTS

    return 2 * MIN_PHASE_POINTS
