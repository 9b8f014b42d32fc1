"""Figures against a RAM-disk reference (the riscos profile's "% of RAM ref", pure): nothing on a storage path is
faster than RAM, so a test well above its reference says the reference or the measurement is off (issue 40)."""

from __future__ import annotations

from collections.abc import Sequence

from disksleuth.model import Finding
from disksleuth.model.run import TestResult

# A test and its reference run seconds apart on a shared machine; a few percent either way is noise, not a verdict.
OVER_REFERENCE_PCT = 105.0

REFERENCE_EXCEEDED = "reference_exceeded"


def reference_exceeded(tests: Sequence[TestResult]) -> Finding | None:
    """warn when any test's throughput or IOPS is above OVER_REFERENCE_PCT of the same test on the RAM reference."""
    over = [
        (t.id, key, pct)
        for t in tests
        for key, pct in (t.pct_of_reference or {}).items()
        if isinstance(pct, (int, float)) and pct > OVER_REFERENCE_PCT
    ]
    if not over:
        return None
    per_test: dict[str, float] = {}
    for test, _key, pct in over:
        per_test[test] = max(pct, per_test.get(test, 0.0))
    said = ", ".join(f"{test} {pct:.0f}%" for test, pct in per_test.items())
    return Finding(
        REFERENCE_EXCEEDED,
        "warn",
        f"Above the RAM-disk reference ({said} of it): nothing on a storage path is faster than RAM, so the "
        "reference or this measurement is off: a short or disturbed reference run, or a cache (the page cache, a "
        "drive's DRAM, a compressing device) that served this test.",
        {
            "tests": [{"test": t, "figure": k, "pct_of_reference": p} for t, k, p in over],
            "max_pct": max(per_test.values()),
            "threshold_pct": OVER_REFERENCE_PCT,
        },
        "Run it again on an idle machine with a longer --time; if it stays above 100%, look for what caches the "
        "target (direct I/O off, a loop device without --direct-io, a RAID controller's cache).",
    )
