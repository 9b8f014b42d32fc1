"""Self-tests and wear in `health`: the drive's own estimates, a self-test started, and the wear forecast."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from disksleuth.analysis.selftests import is_long, self_test_from_counters
from disksleuth.analysis.wear import data_text, forecast_text
from disksleuth.model.run import Health

# Annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from disksleuth.model.selftest import SelfTestStart
    from disksleuth.model.wear import WearForecast

# Words a user sees, in one place.
ESTIMATES = "self-test takes (the drive's estimate): {which}"
STARTED = "{device}: {kind} self-test started{estimate}."
ALREADY = "{device}: a self-test is already running{left}; it was left alone (smartctl -X aborts it)."
PROGRESS = "now: {kind}, {left}% left"
RESULT_LATER = "Its result goes into the drive's self-test log: `disksleuth health {device}` after {when} judges it."
RESULT_SOON = "Its result goes into the drive's self-test log: `disksleuth health {device}` judges it when it is done."


def _clock(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s).astimezone().strftime("%Y-%m-%d %H:%M %Z")


def self_test_and_wear_lines(h: Health, wear: WearForecast | None) -> list[str]:
    """Plain lines (no markup) under the health table."""
    out = []
    if h.self_test_minutes:
        which = ", ".join(f"{k} {v:,} min" for k, v in h.self_test_minutes.items())
        out.append(ESTIMATES.format(which=which))
    if wear is not None:
        for text in (data_text(wear), forecast_text(wear, h.power_on_hours)):
            if text:
                out.append(f"wear: {text}")
    return out


def self_test_start_lines(start: SelfTestStart) -> list[str]:
    kind = "long" if start.kind == "long" else "short"
    progress = start.progress
    if start.already_running:
        left = f" ({progress.remaining_pct}% left)" if progress and progress.remaining_pct is not None else ""
        lines = [ALREADY.format(device=start.device, left=left)]
    else:
        estimate = ""
        if start.estimate_minutes is not None and start.done_by_s is not None:
            estimate = f": the drive expects {start.estimate_minutes:,} min, done by {_clock(start.done_by_s)}"
        lines = [STARTED.format(device=start.device, kind=kind, estimate=estimate)]
        if progress is not None and progress.remaining_pct is not None:
            lines.append(PROGRESS.format(kind=progress.kind, left=progress.remaining_pct))
    done_by = start.done_by_s
    lines.append(
        RESULT_LATER.format(device=start.device, when=_clock(done_by))
        if done_by is not None and not start.already_running
        else RESULT_SOON.format(device=start.device)
    )
    return lines


def self_test_cell(counters: Mapping[str, int]) -> str:
    """A stored reading's self-test in `health --history` (rich markup): "passed 14,417 h", "FAILED 47,734 h"."""
    t = self_test_from_counters(counters)
    if t is None:
        return "—"
    kind = "long" if is_long(t) else "short"
    return f"{kind} passed {t.power_on_hours:,} h" if t.passed else f"[red]{kind} FAILED {t.power_on_hours:,} h[/red]"
