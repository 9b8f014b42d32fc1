"""The sustained fill as JSON (`sustained` in `bench --json`) and as text: its phases, the cliff, heat or cache."""

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


def _size(n: int) -> str:
    return f"{n / 1e9:,.2f} GB" if n >= 1e9 else f"{n / 1e6:,.0f} MB"


def render_sustained(s: Sustained) -> None:
    """The phases of the fill, one line each, then what the cliff was."""
    from rich.markup import escape

    from disksleuth.present.text import console

    out = console()
    rate = f", {s.mbps:,.1f} MB/s (bytes written / fill time)" if s.mbps is not None else ""
    out.print(f"\n[bold]Sustained write[/bold]: {_size(s.written_bytes)} in {s.duration_s:,.2f} s{rate}")
    for i, p in enumerate(s.phases, 1):
        at = s.cliff_at_bytes
        cliff = f"  ← cliff at {_size(at)}" if at is not None and p.start_bytes <= at < p.end_bytes else ""
        out.print(
            f"  phase {i}  {_size(p.start_bytes):>10} → {_size(p.end_bytes):>10}  "
            f"{p.mbps:>9,.1f} MB/s  ({p.end_s - p.start_s:,.2f} s){cliff}"
        )
    if not s.judged:
        out.print(f"  [yellow]not judged[/yellow]: {escape(s.reason)}")
    elif s.cause == "cache" and s.cache_exhausted_at_bytes is not None:
        out.print(
            f"  write cache ran out after {_size(s.cache_exhausted_at_bytes)}: {s.burst_mbps:,.0f} MB/s, then "
            f"{s.sustained_mbps:,.0f} MB/s ({escape(s.reason)})"
        )
    elif s.cause == "thermal":
        out.print(
            f"  [yellow]thermal throttling[/yellow] after {_size(s.cliff_at_bytes or 0)}: {s.burst_mbps:,.0f} → "
            f"{s.sustained_mbps:,.0f} MB/s ({escape(s.reason)})"
        )
    else:
        out.print(f"  no cliff: {s.sustained_mbps or 0:,.0f} MB/s throughout ({escape(s.reason)})")
    from disksleuth.analysis.sustained import findings

    for f in findings(s):
        colour = "yellow" if f.severity == "warn" else "cyan"
        out.print(f"  [{colour}]{f.severity} · {f.code}[/{colour}]: {escape(f.message)}")
    if s.recovery is not None:
        r = s.recovery
        came = f"{r.recovered_pct:.0f}% of the cache" if r.recovered_pct is not None else "no cache to compare"
        out.print(
            f"  after {r.idle_s:g} s idle: {_size(r.fast_bytes)} at {r.mbps:,.0f} MB/s before slowing ({came})"
            if r.fell
            else f"  after {r.idle_s:g} s idle: all {_size(r.written_bytes)} at {r.mbps:,.0f} MB/s ({came} or more)"
        )
