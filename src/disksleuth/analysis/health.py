"""Health findings (pure): health_critical, health_worn, lba_format, and what changed during a run."""

from __future__ import annotations

from disksleuth.model import Finding, Health

WORN_PCT = 80


def health_changes(before: Health | None, after: Health | None) -> dict[str, tuple[int, int]]:
    """Counters that grew between two snapshots: name -> (before, after)."""
    if before is None or after is None:
        return {}
    b, a = before.counters(), after.counters()
    return {k: (b[k], a[k]) for k in b.keys() & a.keys() if a[k] > b[k]}


def health_findings(health: Health, changes: dict[str, tuple[int, int]] | None = None) -> list[Finding]:
    out: list[Finding] = []
    reasons = []
    if health.critical_warning:
        reasons.append("critical warning: " + ", ".join(health.critical_warning))
    if health.smart_passed is False:
        reasons.append("the drive's SMART self-assessment says FAILED")
    spare, threshold = health.available_spare_pct, health.available_spare_threshold_pct
    if spare is not None and threshold is not None and spare < threshold:
        reasons.append(f"available spare {spare}% is below its threshold {threshold}%")
    for key in ("media_errors", "ata_reallocated_sectors", "ata_pending_sectors", "ata_offline_uncorrectable"):
        if changes and key in changes:
            b, a = changes[key]
            reasons.append(f"{key.replace('_', ' ')} grew from {b} to {a} during the run")
    if health.ata_pending_sectors:
        reasons.append(f"{health.ata_pending_sectors} sectors are pending reallocation (unreadable)")
    if reasons:
        out.append(
            Finding(
                code="health_critical",
                severity="critical",
                message="The drive reports trouble: " + "; ".join(reasons) + ".",
                evidence={
                    "critical_warning": list(health.critical_warning),
                    "smart_passed": health.smart_passed,
                    "available_spare_pct": spare,
                    "available_spare_threshold_pct": threshold,
                    "media_errors": health.media_errors,
                    "ata_pending_sectors": health.ata_pending_sectors,
                    "changes": {k: list(v) for k, v in (changes or {}).items()},
                },
                hint="Back up this drive now, then plan to replace it; run a long self-test (smartctl -t long).",
            )
        )
    if health.percentage_used is not None and health.percentage_used >= WORN_PCT:
        out.append(
            Finding(
                code="health_worn",
                severity="warn",
                message=f"The drive has used {health.percentage_used}% of its rated endurance.",
                evidence={"percentage_used": health.percentage_used},
                hint="Plan a replacement; keep backups current. Writes slow down and errors grow near 100%.",
            )
        )
    f = lba_format_finding(health)
    if f:
        out.append(f)
    return out


def lba_format_finding(health: Health) -> Finding | None:
    """512 B in use while a 4096 B format with better relative performance exists (NVMe RP: lower is better)."""
    in_use = next((f for f in health.lba_formats if f.in_use), None)
    if in_use is None or in_use.data_bytes != 512:
        return None
    better = [
        f
        for f in health.lba_formats
        if f.data_bytes == 4096 and f.metadata_bytes == 0 and f.relative_performance < in_use.relative_performance
    ]
    if not better:
        return None
    best = min(better, key=lambda f: f.relative_performance)
    return Finding(
        code="lba_format",
        severity="info",
        message=(
            f"The namespace is formatted with 512-byte sectors (LBA format {in_use.id}, relative performance "
            f"{in_use.relative_performance}), while format {best.id} with 4096-byte sectors rates better "
            f"(relative performance {best.relative_performance}; 0 is best)."
        ),
        evidence={
            "lba_format_in_use": in_use.id,
            "in_use_data_bytes": in_use.data_bytes,
            "better_lba_format": best.id,
            "better_data_bytes": best.data_bytes,
        },
        hint=(
            f"DESTRUCTIVE: `nvme format <namespace> --lbaf={best.id}` erases the whole drive. Back up first, "
            "and only do it when you reinstall or repartition anyway."
        ),
    )
