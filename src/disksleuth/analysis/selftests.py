"""The drive's self-test log judged (pure): `self_test_failed` and `self_test_overdue`, and the self-test advice
every fix hint gives, so no hint ever asks for a test the log shows already failed.

Ages are in the drive's power-on hours (the log dates each test by them, not by the calendar). The ATA log keeps
them in 16 bits (ATA8-ACS, SMART self-test log: "life timestamp", a word): past 65,535 hours they wrap, so the age
is taken modulo 65,536 there (linuxhw HDS721050CLA360: 71,448 hours now, the failed test at 47,734, 23,714 ago).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from disksleuth.model import Finding
from disksleuth.model.run import Health, SelfTest

OVERDUE_HOURS = 30 * 24  # a month of running without a self-test
ATA_HOURS_WRAP = 1 << 16

# Words a user sees, in one place.
ADVICE_RUN_LONG = "run a long self-test (smartctl -t long)"
ADVICE_RUNNING = "a self-test is running now{left}: wait for its result (disksleuth health DEV shows it)"
ADVICE_LONG_FAILED = (
    "its own long self-test already failed (first error at LBA {lba}), so another one would only fail again"
)
FAILED_NEWEST = (
    'The drive\'s newest self-test failed: {kind}, "{status}"{lba_text}, {age_text}. The drive itself found '
    "sectors it cannot read."
)
FAILED_OLDER = (
    'An earlier self-test failed: {kind}, "{status}"{lba_text}, {age_text}; a later {later_kind} self-test '
    "passed{later_age_text}."
)
HINT_FAILED_NEWEST = (
    "Back up this drive now and replace it; running the test again only repeats the failure. `fdisk -l` shows "
    "which partition holds the failing LBA."
)
HINT_FAILED_OLDER_SHORT = (
    "A short test reads only a sample: {advice} to check the whole surface, and watch the pending and reallocated "
    "sector counts."
)
HINT_FAILED_OLDER = "Keep backups current and watch the pending and reallocated sector counts; the failure may return."
OVERDUE = "No self-test in the last {hours:,} power-on hours (about {days:,} days of running); the newest: {kind}."
NEVER = (
    "The drive's self-test log is empty: no self-test in its {hours:,} power-on hours (about {days:,} days of running)."
)
HINT_OVERDUE = (
    "Run `disksleuth health DEV --self-test short` now and a long one monthly (disksleuth watch can schedule both)."
)


def is_long(test: SelfTest) -> bool:
    """An extended (ATA "Extended offline/captive", SCSI "Background/Foreground long", NVMe "Extended") test."""
    kind = test.kind.lower()
    return "extended" in kind or "long" in kind


def self_test_age_hours(health: Health, test: SelfTest) -> int | None:
    """Power-on hours since the test ran, or None when either figure is missing or they disagree.

    On ATA each entry is dated from the one after it (newer), so an entry more than one wrap old is still
    placed right: linuxhw HUS724020ALA640 logs 5,514 h after 12,309 h, at 89,379 h now."""
    now = health.power_on_hours
    if now is None or test.power_on_hours is None:
        return None
    if health.protocol != "ATA" or now < ATA_HOURS_WRAP:
        return now - test.power_on_hours if 0 <= test.power_on_hours <= now else None
    age, newer = 0, now % ATA_HOURS_WRAP
    for t in self_test_log(health):
        if t.in_progress:
            continue
        if t.power_on_hours is None:
            return None
        age += (newer - t.power_on_hours) % ATA_HOURS_WRAP
        newer = t.power_on_hours
        if t == test:  # the newest entry may be an equal copy (Health.self_test), not the log's own object
            return age
    return None


def self_test_log(health: Health) -> tuple[SelfTest, ...]:
    """The log, newest first; an older reading that kept only its newest entry gives that one."""
    if health.self_tests:
        return health.self_tests
    return (health.self_test,) if health.self_test is not None and not health.self_test.in_progress else ()


def running_test(health: Health) -> SelfTest | None:
    t = health.self_test
    return t if t is not None and t.in_progress else None


@dataclass(frozen=True)
class FailedTest:
    test: SelfTest
    newest: bool  # no test completed without error since (aborted ones do not count either way)
    passed_since: SelfTest | None  # the newest test that passed after it


def newest_failure(health: Health) -> FailedTest | None:
    done = [t for t in self_test_log(health) if not t.in_progress]
    for i, t in enumerate(done):
        if t.passed is False:
            later = [x for x in done[:i] if x.passed is True]
            return FailedTest(t, not later, later[0] if later else None)
    return None


def self_test_advice(health: Health) -> str:
    """The self-test a fix hint may advise, given the log: never one the log shows already failed."""
    running = running_test(health)
    if running is not None:
        left = f" ({running.remaining_pct}% left)" if running.remaining_pct is not None else ""
        return ADVICE_RUNNING.format(left=left)
    failed = newest_failure(health)
    if failed is not None and failed.newest and is_long(failed.test):
        lba = f"{failed.test.failing_lba:,}" if failed.test.failing_lba is not None else "unknown"
        return ADVICE_LONG_FAILED.format(lba=lba)
    return ADVICE_RUN_LONG


def _age_text(hours: int | None, at: int | None) -> str:
    if hours is None:
        return f"at {at:,} power-on hours" if at is not None else "when is not logged"
    return f"{hours:,} power-on hours ago"


def self_test_findings(health: Health) -> list[Finding]:
    out: list[Finding] = []
    failed = newest_failure(health)
    if failed is not None:
        t = failed.test
        age = self_test_age_hours(health, t)
        lba_text = f" at LBA {t.failing_lba:,}" if t.failing_lba is not None else ""
        evidence: dict[str, object] = {
            "kind": t.kind,
            "status": t.status,
            "failing_lba": t.failing_lba,
            "test_power_on_hours": t.power_on_hours,
            "age_hours": age,
            "newest": failed.newest,
        }
        if failed.newest:
            message = FAILED_NEWEST.format(
                kind=t.kind, status=t.status, lba_text=lba_text, age_text=_age_text(age, t.power_on_hours)
            )
            hint = HINT_FAILED_NEWEST
        else:
            later = failed.passed_since
            assert later is not None
            later_age = self_test_age_hours(health, later)
            evidence["passed_since"] = {"kind": later.kind, "test_power_on_hours": later.power_on_hours}
            message = FAILED_OLDER.format(
                kind=t.kind,
                status=t.status,
                lba_text=lba_text,
                age_text=_age_text(age, t.power_on_hours),
                later_kind=later.kind,
                later_age_text=f" {later_age:,} power-on hours ago" if later_age is not None else "",
            )
            hint = HINT_FAILED_OLDER_SHORT.format(advice=ADVICE_RUN_LONG) if not is_long(later) else HINT_FAILED_OLDER
        out.append(
            Finding(
                code="self_test_failed",
                severity="critical" if failed.newest else "info",
                message=message,
                evidence=evidence,
                hint=hint,
            )
        )
    overdue = overdue_finding(health)
    if overdue is not None and not (failed is not None and failed.newest):
        out.append(overdue)
    return out


def overdue_finding(health: Health) -> Finding | None:
    """No self-test for OVERDUE_HOURS of running (none while one runs now)."""
    if running_test(health) is not None:
        return None
    done = [t for t in self_test_log(health) if not t.in_progress]
    hours = health.power_on_hours
    if not done:
        if not health.self_test_log_read or hours is None or hours < OVERDUE_HOURS:
            return None  # no log in this output, or a drive too new to ask
        return Finding(
            code="self_test_overdue",
            severity="info",
            message=NEVER.format(hours=hours, days=hours // 24),
            evidence={"age_hours": None, "kind": None, "test_power_on_hours": None, "power_on_hours": hours},
            hint=HINT_OVERDUE,
        )
    newest = done[0]
    age = self_test_age_hours(health, newest)
    if age is None or age < OVERDUE_HOURS:
        return None
    return Finding(
        code="self_test_overdue",
        severity="info",
        message=OVERDUE.format(hours=age, days=age // 24, kind=f"{newest.kind}, {newest.status}"),
        evidence={"age_hours": age, "kind": newest.kind, "test_power_on_hours": newest.power_on_hours},
        hint=HINT_OVERDUE,
    )


# A stored reading keeps the newest finished self-test as counters (the store keeps numbers), so the result is on
# record and a new result makes the reading new: `health --history`, and the drives the store remembers, judge it.
SELF_TEST_PREFIX = "self_test."
_HOURS, _PASSED, _LBA, _LONG = "self_test.hours", "self_test.passed", "self_test.failing_lba", "self_test.long"


def self_test_counters(health: Health) -> dict[str, int]:
    """The newest failed test while no pass followed it, else the newest finished one, as counters."""
    failed = newest_failure(health)
    done = [t for t in self_test_log(health) if not t.in_progress and t.passed is not None]
    t = failed.test if failed is not None and failed.newest else (done[0] if done else None)
    if t is None or t.power_on_hours is None:
        return {}
    out = {_HOURS: t.power_on_hours, _PASSED: 1 if t.passed else 0, _LONG: 1 if is_long(t) else 0}
    if t.failing_lba is not None and not t.passed:
        out[_LBA] = t.failing_lba
    return out


def self_test_from_counters(counters: Mapping[str, int]) -> SelfTest | None:
    """The self-test a stored reading kept (self_test_counters), for judging it again."""
    if _HOURS not in counters or _PASSED not in counters:
        return None
    passed = bool(counters[_PASSED])
    return SelfTest(
        kind="Extended" if counters.get(_LONG) else "Short",
        status="Completed without error" if passed else "Completed: failed",
        passed=passed,
        power_on_hours=counters[_HOURS],
        failing_lba=counters.get(_LBA),
    )
