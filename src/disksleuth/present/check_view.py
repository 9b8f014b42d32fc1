"""`check` and `explain` output."""

from __future__ import annotations

from typing import Any

from disksleuth.model import Device, Finding, LinkChain
from disksleuth.model.run import Health, Run
from disksleuth.units import fmt_bytes


def render_device_header(
    device: Device,
    chain: LinkChain,
    health: Health | None,
    where: str | None = None,
    health_not_read: str | None = None,  # why no health was read (a virtual disk): said instead
) -> None:
    from disksleuth.present.text import console, render_chain, safe_text

    out = console()
    # A pasted device may have no /dev path (a PCI function, a report naming no node): its name says which it is.
    line = f"[bold]{safe_text(device.path or device.name)}[/bold]  {device.transport}  {fmt_bytes(device.size_bytes)}"
    if device.model:
        line += f"  {safe_text(device.model)}"
    if where:
        line += f"  [dim]({safe_text(where)})[/dim]"
    out.print(line)
    render_chain(chain)
    if device.card_registers is not None:  # an SD card's or eMMC's own claims (issue 39)
        from disksleuth.present.text import render_card

        render_card(device)
    if device.backing_file:  # a loop device: what it stands on (issue 20: its runs are its own, not that disk's)
        on = f" on {device.backing_device}" if device.backing_device else ""
        dio = {True: ", direct I/O on", False: ", direct I/O off (loop/dio 0)", None: ""}[device.loop_direct_io]
        out.print(f"  backing file: {safe_text(device.backing_file)}{safe_text(on)}{dio}")
    if health is not None:
        bits = []
        if health.smart_passed is not None:
            bits.append("SMART " + ("PASSED" if health.smart_passed else "[red]FAILED[/red]"))
        if health.temperature_c is not None:
            from disksleuth.analysis.temperature import limits_of  # issue 38: the limits it is judged against

            lim = limits_of(health)
            said = " (class default)" if "class default" in (lim.warning_source, lim.critical_source) else ""
            bits.append(f"{health.temperature_c:g} °C (warning {lim.warning_c:g} °C, critical {lim.critical_c:g} °C"
                        f"{said})" if lim.warning_c is not None and lim.critical_c is not None
                        else f"{health.temperature_c:g} °C")  # fmt: skip
        if health.percentage_used is not None:
            bits.append(f"{health.percentage_used}% endurance used")
        if health.power_on_hours is not None:
            bits.append(f"{health.power_on_hours:,} h powered on")
        out.print("  health: " + (", ".join(bits) or "reported, nothing notable"))
    elif health_not_read:
        out.print(f"  health: not read: {safe_text(health_not_read)}")


def _change_text(key: str, before: int, after: int) -> str:
    """A counter that changed during the run; the heat counters with their units (issue 38)."""
    if key.startswith("throttle."):
        from disksleuth.analysis.drive_words import growth_text

        return growth_text(key.removeprefix("throttle."), before, after)
    return f"{key} {before}→{after}"


def render_verdict(findings: list[Finding], summary: str) -> None:
    from disksleuth.present.text import console, render_findings, safe_text

    out = console()
    out.print("\n[bold]Findings[/bold]")
    render_findings(findings)
    out.print(f"\n[bold]Summary:[/bold] {safe_text(summary)}")


def render_check(
    device: Device, chain: LinkChain, run: Run, findings: list[Finding], summary: str, show_commands: bool = False
) -> None:
    from disksleuth.present.bench_view import render_run
    from disksleuth.present.text import console, safe_text

    console().print()
    render_run(run, show_commands=show_commands)
    if run.temperature_series:
        temps = [c for _, c in run.temperature_series]
        console().print(
            f"[dim]temperature ({safe_text(run.temperature_source)}): {min(temps):g}–{max(temps):g} °C "
            f"over {len(temps)} samples[/dim]"
        )
    if run.health_changes:
        console().print(
            "[yellow]health counters that changed during the run: "
            + safe_text(", ".join(_change_text(k, b, a) for k, (b, a) in run.health_changes.items()))
            + "[/yellow]"
        )
    render_verdict(findings, summary)


def render_baseline(baseline: dict[str, Any] | None) -> None:
    """The run against its drive's earlier runs, in one line (and what was left out, and why); its
    slower/faster findings are among the findings above."""
    if not baseline:
        return
    from disksleuth.present.text import console, safe_text

    out = console()
    colour = {"slower": "yellow", "faster": "cyan"}.get(baseline.get("verdict") or "", "dim")
    out.print(f"[{colour}]{safe_text(baseline['summary'])}[/{colour}]")
    for note in baseline.get("notes") or []:
        out.print(f"[dim]  {safe_text(note)}[/dim]")
