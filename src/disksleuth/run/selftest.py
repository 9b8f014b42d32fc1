"""Starting a drive's own self-test (`health DEV --self-test short|long`; `watch` calls start_self_test for its
weekly and monthly policy): smartctl -t through the one subprocess wrapper, then one reading of the drive for its
progress and estimate, kept in the health history so the test is on record."""

from __future__ import annotations

import time

from disksleuth.errors import UsageError
from disksleuth.model.selftest import SelfTestStart
from disksleuth.probe import runner
from disksleuth.probe.block import device_node
from disksleuth.probe.smart import NoSmartData, read_health
from disksleuth.probe.smart_selftests import parse_start_output

KINDS = ("short", "long")
# smartctl's own name for each kind in polling_minutes
_POLLING_KEY = {"short": "short", "long": "extended"}

# Words a user sees, in one place.
BAD_KIND = "--self-test takes short or long, not {kind!r}"
UNSUPPORTED = "{node}: the drive does not support self-tests ({said})"
NOT_STARTED = "{node}: smartctl did not start the self-test: {said}"


def start_self_test(
    device: str, kind: str, *, timeout_s: float = 60.0, db: str | None = None, keep: bool = True
) -> SelfTestStart:
    """Start a short or long self-test on DEVICE and read its progress once. A test already running is left alone
    (already_running). Raises UsageError (kind), NoSmartData (no SMART, refused), ToolMissing, CommandTimeout."""
    from disksleuth.analysis.health import health_findings
    from disksleuth.run.health import refuse_without_smart
    from disksleuth.run.health_history import device_name_of, observe

    if kind not in KINDS:
        raise UsageError(BAD_KIND.format(kind=kind))
    node = device_node(device)
    refuse_without_smart(node)
    runner.require("smartctl")
    started_at = time.time()
    # smartctl's exit status is a bitmask; what it printed says what happened.
    res = runner.run(["smartctl", "-t", kind, node], timeout_s=timeout_s, check=False)
    out = parse_start_output(res.stdout)
    if out.outcome == "unsupported":
        raise NoSmartData(UNSUPPORTED.format(node=node, said=out.line))
    if out.outcome == "unknown":
        said = _first_words(res.stdout + "\n" + res.stderr) or f"exit status {res.returncode}"
        raise NoSmartData(NOT_STARTED.format(node=node, said=said))
    health = read_health(node, timeout_s=timeout_s)
    # On record (`keep`): `health --history` shows the reading the test started with.
    observed = observe(
        health, health_findings(health), db, device_name=device_name_of(node), source="health", keep=keep
    )
    progress = health.self_test if health.self_test is not None and health.self_test.in_progress else None
    estimate = out.minutes if out.minutes is not None else health.self_test_minutes.get(_POLLING_KEY[kind])
    if progress is None and out.outcome == "running" and out.remaining_pct is not None:
        from disksleuth.model.run import SelfTest

        progress = SelfTest("self-test", "in progress", None, None, True, out.remaining_pct)
    return SelfTestStart(
        device=node,
        kind=kind,
        started=out.outcome == "started",
        already_running=out.outcome == "running",
        started_at_s=started_at,
        estimate_minutes=estimate,
        progress=progress,
        health=health,
        smartctl_said=out.line,
        findings=tuple(observed.findings),
    )


def _first_words(text: str) -> str:
    """smartctl's own reason, in one line: its first line that is not its banner."""
    for line in text.splitlines()[:50]:
        line = line[:200].strip()
        if line and not line.startswith(("smartctl ", "Copyright", "=== ")):
            return line
    return ""
