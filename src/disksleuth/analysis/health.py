"""Health findings (pure): health_critical, health_worn, lba_format, and what changed during a run."""

from __future__ import annotations

from disksleuth.analysis.error_logs import error_log_findings
from disksleuth.analysis.selftests import self_test_advice, self_test_findings
from disksleuth.analysis.temperature import TEMPERATURE_BIT, temperature_findings
from disksleuth.model import Device, Finding
from disksleuth.model.run import Health, SmartAttribute

WORN_PCT = 80

# What each virtual transport is, to say why it has no health: smartctl needs a drive that answers ATA, SCSI
# or NVMe commands, and a virtual disk passes none through (the drive behind virtio is the host's).
_VIRTUAL_WHAT = {
    "virtio": "virtio",
    "loop": "a loop device",
    "zram": "zram, compressed RAM",
    "md": "md RAID: check its member disks",
    "dm": "device-mapper: check the disk under it",
}


def no_smart_reason(disk: Device) -> str | None:
    """Why a disk has no SMART data to read, in one phrase, or None when it may have some. The one wording
    for `check` (its health line) and `health` (its error), so both say the same of the same disk."""
    what = _VIRTUAL_WHAT.get(disk.transport)
    return f"no SMART on a virtual disk ({disk.name} is {what})" if what else None


def health_changes(before: Health | None, after: Health | None) -> dict[str, tuple[int, int]]:
    """Counters that grew between two snapshots: name -> (before, after)."""
    if before is None or after is None:
        return {}
    b, a = before.counters(), after.counters()
    return {k: (b[k], a[k]) for k in b.keys() & a.keys() if a[k] > b[k]}


def _grew(changes: dict[str, tuple[int, int]], prefix: str) -> dict[str, tuple[int, int]]:
    return {k.removeprefix(prefix): v for k, v in changes.items() if k.startswith(prefix)}


def _listed(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {value:,}" for name, value in counts.items())


def failing_attributes(health: Health) -> list[SmartAttribute]:
    """ATA attributes at or below their threshold now: the drive's own verdict that it is failing
    (smartctl marks them `when_failed: "now"`; a threshold of 0 means the attribute never fails)."""
    return [
        a
        for a in health.attributes
        if a.id is not None
        and (a.when_failed == "now" or (a.thresh and a.value is not None and a.value <= a.thresh and a.prefailure))
    ]


def health_findings(health: Health, changes: dict[str, tuple[int, int]] | None = None) -> list[Finding]:
    """The warning signs in a drive's health data, each with severity, evidence and a hint.

    Growth is measured between the snapshots before and after a run (`health_changes`)."""
    changes = changes or {}
    out: list[Finding] = []
    reasons = []
    # The temperature bit is heat, not wear: temperature_high says it (analysis/temperature.py), with its own hint.
    failing_bits = [w for w in health.critical_warning if w != TEMPERATURE_BIT]
    if failing_bits:
        reasons.append("critical warning: " + ", ".join(failing_bits))
    if health.smart_passed is False:
        reasons.append("the drive's SMART self-assessment says FAILED")
    spare, threshold = health.available_spare_pct, health.available_spare_threshold_pct
    if spare is not None and threshold is not None and spare < threshold:
        reasons.append(f"available spare {spare}% is below its threshold {threshold}%")
    for key in ("media_errors", "ata_reallocated_sectors", "ata_pending_sectors", "ata_offline_uncorrectable"):
        if key in changes:
            b, a = changes[key]
            reasons.append(f"{key.replace('_', ' ')} grew from {b} to {a} during the run")
    media_grew = _grew(changes, "media.")
    if not reasons or media_grew:
        # The named counters (media.*) say more than the legacy fields; those stay for older snapshots.
        reasons = [r for r in reasons if " grew from " not in r] if media_grew else reasons
    for name, (b, a) in media_grew.items():
        reasons.append(f"{name} grew from {b:,} to {a:,} during the run")
    failing = failing_attributes(health)
    for attr in failing:
        reasons.append(
            f"ATA {attr.id} {attr.name} is at {attr.value}, at or below the drive's threshold {attr.thresh}"
        )
    if reasons:
        out.append(
            Finding(
                code="health_critical",
                severity="critical",
                message="The drive reports trouble: " + "; ".join(dict.fromkeys(reasons)) + ".",
                evidence={
                    "critical_warning": list(health.critical_warning),
                    "smart_passed": health.smart_passed,
                    "available_spare_pct": spare,
                    "available_spare_threshold_pct": threshold,
                    "media_errors": health.media_errors,
                    "ata_pending_sectors": health.ata_pending_sectors,
                    "failing_attributes": [
                        {"id": a.id, "name": a.name, "value": a.value, "threshold": a.thresh} for a in failing
                    ],
                    "changes": {k: list(v) for k, v in changes.items()},
                },
                hint=f"Back up this drive now, then plan to replace it; {self_test_advice(health)}.",
            )
        )
    media = {k: v for k, v in health.media_error_counts.items() if v > 0}
    if media:
        out.append(
            Finding(
                code="media_errors",
                severity="warn",
                message=(
                    f"The drive has retired or could not read some of its media: {_listed(media)}. "
                    "A few can stay stable for years; growth means the media is failing."
                ),
                evidence={"counts": media, "grew": {k: list(v) for k, v in media_grew.items()}},
                hint=(
                    "Keep backups current and watch these counters (disksleuth health, or smartctl -A); "
                    f"{self_test_advice(health)}. Replace the drive if they grow."
                ),
            )
        )
    f = interface_errors_finding(health, changes)
    if f:
        out.append(f)
    out.extend(error_log_findings(health, changes))  # issue 38: error logs and heat, judged in their own modules
    out.extend(temperature_findings(health, changes))
    if health.percentage_used is not None and health.percentage_used >= WORN_PCT:
        source = f" ({health.percentage_used_source})" if health.percentage_used_source else ""
        out.append(
            Finding(
                code="health_worn",
                severity="warn",
                message=f"The drive has used {health.percentage_used}% of its rated endurance{source}.",
                evidence={"percentage_used": health.percentage_used, "source": health.percentage_used_source},
                hint="Plan a replacement; keep backups current. Writes slow down and errors grow near 100%.",
            )
        )
    out.extend(self_test_findings(health))
    f = sata_link_from_smartctl(health)
    if f:
        out.append(f)
    f = lba_format_finding(health)
    if f:
        out.append(f)
    return out


def interface_errors_finding(health: Health, changes: dict[str, tuple[int, int]]) -> Finding | None:
    """CRC and link errors between host and drive: the cable, backplane or connector, not the media.

    SAS phy counters also count the link resets of every power-on (SPC-4 Protocol Specific Port log page), so
    for them only growth during a run counts."""
    standing = {k: v for k, v in health.interface_error_counts.items() if v > 0 and not k.startswith("SAS ")}
    grew = _grew(changes, "interface.")
    if not standing and not grew:
        return None
    # ATA 183 SATA_Downshift_Count / SATA_Interfac_Downshift (Intel, Micron/Crucial) counts the times the drive
    # lowered the link's speed after errors, not transfers that arrived corrupted (issue 40).
    slowed = {k: v for k, v in standing.items() if "Downshift" in k}
    corrupted = {k: v for k, v in standing.items() if k not in slowed}
    parts = []
    if corrupted:
        parts.append(f"{_listed(corrupted)} so far")
    if grew:
        parts.append("growing during this run: " + ", ".join(f"{k} {b:,} → {a:,}" for k, (b, a) in grew.items()))
    if parts:
        head = "Transfers between the host and the drive were corrupted on the way (" + "; ".join(parts) + ")"
        if slowed:
            head += f", and the drive slowed the SATA link down after errors ({_listed(slowed)} so far)"
    else:
        head = (
            "The drive slowed the SATA link down after errors on it (" + _listed(slowed) + " so far: the times it "
            "lowered the link speed, not corrupted transfers)"
        )
    return Finding(
        code="interface_crc_errors",
        severity="critical" if grew else "warn",
        message=(
            head
            + ". That is a cable, backplane or connector problem, not a dying drive; "
            + ("a slower link and retries cost speed" if slowed else "the retries cost speed")
            + (", and it is happening now." if grew else ".")
        ),
        evidence={"counts": standing, "grew": {k: list(v) for k, v in grew.items()}},
        hint=(
            "Reseat or replace the SATA/SAS cable (a latching one, away from power cables), or try another port or "
            "backplane slot. The counter never resets: note its value and check that it stops growing."
        ),
    )


# SATA generations (SATA 3.x, 1.5/3.0/6.0 Gb/s): a 1.5 Gb/s link on a faster drive is the classic sign of a bad
# cable, since ports that old are rare; 3.0 on a 6.0 drive may also be an older port.
SATA_GEN1_GBPS = 1.5


def sata_link_from_smartctl(health: Health) -> Finding | None:
    """`sata_link_downgraded` from smartctl's own interface_speed (ataprint.cpp: max from IDENTIFY word 76, current
    from word 77), so it shows without sysfs: a saved file, a USB bridge. The port's own maximum is unknown
    here; with sysfs, links.py compares against it and this one gives way (verdicts.py)."""
    now, drive_max = health.sata_speed_current_gbps, health.sata_speed_max_gbps
    if now is None or drive_max is None or now >= drive_max:
        return None
    severity = "warn" if now <= SATA_GEN1_GBPS else "info"
    return Finding(
        code="sata_link_downgraded",
        severity=severity,
        message=(
            f"The SATA link runs at {now:.1f} Gb/s (~{now * 100 * 0.95:,.0f} MB/s) while the drive supports "
            f"{drive_max:.1f} Gb/s (~{drive_max * 100 * 0.95:,.0f} MB/s), as the drive itself reports."
        ),
        evidence={"sata_speed_current_gbps": now, "sata_speed_max_gbps": drive_max, "source": "smartctl"},
        hint=(
            "If the port supports the drive's speed, replace the SATA cable (CRC errors point the same way) or try "
            "another port; an older controller or a USB bridge may cap the link by design."
        ),
    )


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
