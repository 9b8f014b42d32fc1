"""A drive's own error log judged (pure; issue 38): the ATA SMART error log and the NVMe Error Information log.

A count standing still is history, shown and not judged; a count that grew, during a run or between stored
readings, is `error_log_growth` (warn), with the newest entries. NVMe drives log every command they refuse, and
tools that probe for optional log pages (smartctl among them) leave "Invalid Field in Command" entries on many
healthy drives: when every new entry is such a refusal, the finding is info and says so. Words:
analysis/drive_words.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from disksleuth.analysis import drive_words as words
from disksleuth.analysis.temperature import counter_growth
from disksleuth.model import Finding
from disksleuth.model.drive_logs import ErrorLog, ErrorLogEntry
from disksleuth.model.health_history import HealthReading
from disksleuth.model.run import Health

COUNTER = "error_log_entries"  # Health.counters() key, kept in every stored reading
SHOWN_ENTRIES = 3  # entries named in a finding; `health` lists the rest

# NVMe statuses that are the drive refusing a command it does not support (NVMe base spec 2.0, Figure 94 generic
# status 01h Invalid Command Opcode, 02h Invalid Field in Command; Figure 95 command specific 09h Invalid Log
# Page): (status code type, status code).
BENIGN_NVME = {(0, 0x01), (0, 0x02), (1, 0x09)}


def entry_text(e: ErrorLogEntry, kind: str) -> str:
    return words.error_entry_text(e.number, e.what, e.power_on_hours, e.lba, e.command, e.status, kind)


def is_benign(e: ErrorLogEntry, kind: str) -> bool:
    if kind != "NVMe" or e.status is None:
        return False
    return ((e.status >> 9) & 7, (e.status >> 1) & 0xFF) in BENIGN_NVME


def new_entries(log: ErrorLog | None, before: int) -> list[ErrorLogEntry]:
    """The entries logged after the count was `before` (ATA numbers its errors 1..count; an NVMe entry carries the
    error count it was logged at)."""
    if log is None:
        return []
    return [e for e in log.entries if e.number is not None and e.number > before]


def _finding(kind: str, before: int, after: int, when: str, log: ErrorLog | None, name: str) -> Finding:
    fresh = new_entries(log, before)
    # Benign only when every new error is one of the entries read, and each is a refusal.
    benign = (
        bool(fresh)
        and len(fresh) >= min(after - before, len(log.entries) if log else 0)
        and all(is_benign(e, kind) for e in fresh)
    )
    newest = "; ".join(entry_text(e, kind) for e in fresh[:SHOWN_ENTRIES])
    return Finding(
        code="error_log_growth",
        severity="info" if benign else "warn",
        message=words.error_log_grew(name, kind, before, after, when, newest, benign),
        evidence={
            "error_log_entries": [before, after],
            "kind": kind,
            "when": when,
            "newest": [entry_text(e, kind) for e in fresh[:SHOWN_ENTRIES]],
            "benign": benign,
        },
        hint=words.BENIGN_HINT if benign else words.ERROR_LOG_HINT,
    )


def _kind(health: Health) -> str:
    if health.error_log is not None:
        return health.error_log.kind
    return "NVMe" if health.protocol == "NVMe" else "ATA"


def error_log_findings(health: Health, changes: Mapping[str, tuple[int, int]] | None = None) -> list[Finding]:
    """The hook analysis/health.py calls: the error log grew during a run."""
    if not changes or COUNTER not in changes:
        return []
    before, after = changes[COUNTER]
    name = health.device or "The drive"
    return [_finding(_kind(health), before, after, "during the run", health.error_log, name)]


def with_growth(
    findings: Sequence[Finding], series: Sequence[HealthReading], since_words: str, log: ErrorLog | None = None
) -> list[Finding]:
    """error_log_growth from the growth between stored readings, unless a run's own already says it."""
    grew, _ = counter_growth(series, [COUNTER])
    if not grew or any(f.code == "error_log_growth" for f in findings):
        return list(findings)
    before, after = grew[COUNTER]
    current = series[-1]
    kind = log.kind if log is not None else "NVMe" if current.protocol == "NVMe" else "ATA"
    name = current.device_name or "The drive"
    device = next((f.device for f in findings if f.device), None)
    f = _finding(kind, before, after, since_words, log, name)
    return [*findings, Finding(f.code, f.severity, f.message, f.evidence, f.hint, device)]


def summary_lines(log: ErrorLog | None, limit: int = SHOWN_ENTRIES) -> list[str]:
    """What `health` prints under its table: the count, then the newest entries."""
    if log is None or (not log.count and not log.entries):
        return []
    count = f"{log.count:,} error(s) over the drive's life" if log.count is not None else "count unknown"
    lines = [f"{log.kind} error log: {count}" + (", newest first:" if log.entries else "")]
    lines += [f"  {entry_text(e, log.kind)}" + (" (a refused command)" if is_benign(e, log.kind) else "")
              for e in log.entries[:limit]]  # fmt: skip
    if len(log.entries) > limit:
        lines.append(f"  … {len(log.entries) - limit} more in `health --json` (smartctl -x shows them all)")
    return lines
