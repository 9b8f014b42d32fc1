"""`watch`: the words of its notifications and of its terminal output, in one place."""

from __future__ import annotations

import datetime as dt

from disksleuth.analysis.health_history import shown_name
from disksleuth.model.watch import Change, WatchOutcome

APP = "disksleuth"


def _drive(c: Change) -> str:
    return _safe(f"{c.device} ({c.model})" if c.model else c.device)


def _safe(text: object) -> str:
    """A name from sysfs or smartctl in a message: control characters shown as escapes, so a newline in a model
    name never starts a mail header or a line of its own."""
    from disksleuth.present.text import safe_text

    return safe_text(text, markup=False)


def change_line(c: Change) -> str:
    """One change in one line, as a notification body and the terminal say it."""
    return _line(c).replace("\n", " ")


def _line(c: Change) -> str:
    if c.kind == "grew":
        return f"{_drive(c)}: {_safe(shown_name(c.counter or '?'))} grew from {c.from_value:,} to {c.to_value:,}"
    if c.kind == "missing":
        return f"{_drive(c)}: not seen by this pass (the pass before saw it): removed, failed, or renamed?"
    what = f"{c.severity} {c.code}"
    if c.kind == "worse":
        what = f"{c.code} rose from {c.before} to {c.severity}"
    return f"{_drive(c)}: {what}: {_safe(c.message)}" if c.message else f"{_drive(c)}: {what}"


def changes_title(host: str, changes: list[Change]) -> str:
    if len(changes) == 1:
        c = changes[0]
        short = {
            "new": f"{c.severity} {c.code}",
            "worse": f"{c.code} now {c.severity}",
            "grew": f"{shown_name(c.counter or '?')} grew",
            "missing": "drive not seen",
        }[c.kind]
        return _safe(f"{APP} on {host}: {c.device}: {short}")
    return _safe(f"{APP} on {host}: {len(changes)} changes")


def heartbeat_text(host: str, drives: int, attention: list[str]) -> tuple[str, str]:
    """The weekly word that the watch still runs: title and body."""
    noun = "drive" if drives == 1 else "drives"
    if not attention:
        return f"{APP} on {host}: all well", f"Still watching {drives} {noun} on {host}, all well."
    return (
        f"{APP} on {host}: still watching",
        f"Still watching {drives} {noun} on {host}; at warn or critical: " + _safe("; ".join(attention)) + ".",
    )


def overdue_text(host: str, gap_s: float, expected_h: float) -> tuple[str, str]:
    return (
        f"{APP} on {host}: watch pass overdue",
        f"The last watch pass on {host} was {_age(gap_s)} ago (expected within {expected_h:g} h): was the timer "
        "stopped, or the machine off? Changes in between are told now.",
    )


def overdue_note(gap_s: float, expected_h: float) -> str:
    return f"the last pass was {_age(gap_s)} ago (expected within {expected_h:g} h)"


def _age(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.0f} h"


def test_text(host: str) -> tuple[str, str]:
    return f"{APP} on {host}: test", f"A test notification from `disksleuth watch` on {host}: this target works."


def quiet_note(until: dt.datetime) -> str:
    return f"quiet hours: messages held until {until:%H:%M}, sent by the first pass after them"


def render_watch(outcome: WatchOutcome) -> None:
    """A pass for people: each drive's worst, what changed, what was sent."""
    from rich.table import Table
    from rich.text import Text

    from disksleuth.model import worst_severity
    from disksleuth.present.text import console

    out = console()
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("DEVICE", "MODEL", "WORST", "FINDINGS"):
        table.add_column(column, overflow="fold")
    for d in outcome.state.drives:
        found = list(outcome.findings.get(d.device, ()))
        codes = ", ".join(f"{f.severity} {f.code}" for f in found if f.severity != "ok") or "-"
        if d.not_read and not d.carried:
            codes += f" (health not read: {d.not_read})"
        elif d.carried:
            codes += f" (as last pass: {d.not_read})"
        table.add_row(Text(d.device), Text(d.model or "-"), Text(worst_severity(found)), Text(codes))
    noun = "drive" if len(outcome.state.drives) == 1 else "drives"
    out.print(Text(f"watch on {outcome.hostname}: {len(outcome.state.drives)} {noun}"), soft_wrap=not out.is_terminal)
    if outcome.state.drives:
        out.print(table)
    told = [c for c in outcome.changes if not c.muted]
    if not outcome.changes:
        if outcome.previous_at_s is None:
            word = "Changes: none (first pass: nothing at warn or critical)"
        else:  # when the pass compared with was: "none (no change)" said nothing a reader did not know
            word = f"Changes: none since the pass of {dt.datetime.fromtimestamp(outcome.previous_at_s):%Y-%m-%d %H:%M}"
        out.print(Text(word), soft_wrap=not out.is_terminal)
    for c in outcome.changes:
        out.print(Text(("  muted: " if c.muted else "  ") + change_line(c)), soft_wrap=not out.is_terminal)
    for n in outcome.deliveries:
        line = f"  {n.outcome}: {n.title} -> {n.target}" + (f" ({_safe(n.error)})" if n.error else "")
        if n.created_at_s is not None and n.created_at_s < outcome.at_s - 1:
            line += f" [kept from the pass of {dt.datetime.fromtimestamp(n.created_at_s):%Y-%m-%d %H:%M}]"
        out.print(Text(line), soft_wrap=not out.is_terminal)
    if told and not outcome.deliveries:
        out.print(Text("Nothing sent: no --notify URL and no notify list in --config"), soft_wrap=not out.is_terminal)
    for device, what in outcome.self_tests:
        out.print(Text(f"self-test {device}: {what}"), soft_wrap=not out.is_terminal)
    for note in outcome.notes:
        out.print(Text(f"Note: {note}"), soft_wrap=not out.is_terminal)
