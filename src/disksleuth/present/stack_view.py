"""The storage stack as an indented tree (list, check, explain) and the member benchmark's table (issue 24)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from disksleuth.units import fmt_bytes, fmt_rate


def node_line(node: dict[str, Any]) -> str:
    """One layer in plain words: 'md0  md raid5, 4 members, 512 KiB chunks, degraded 1, recover 50% done'."""
    kind = node["kind"]
    parts = [kind if kind not in ("disk", "loop", "partition") else ""]
    if node.get("role"):
        parts.append(str(node["role"]))
    if node.get("level"):
        parts.append(str(node["level"]))
    words = [" ".join(p for p in parts if p)] if any(parts) else []
    if node.get("label"):
        words.append(str(node["label"]))
    if node.get("raid_disks"):
        words.append(f"{node['raid_disks']} members")
    if node.get("chunk_bytes"):
        words.append(f"{node['chunk_bytes'] // 1024} KiB chunks")
    if node.get("size_bytes"):
        words.append(fmt_bytes(node["size_bytes"]))
    if node.get("degraded"):
        words.append(f"DEGRADED ({node['degraded']})")
    if node.get("sync_action") and node["sync_action"] not in ("idle", "frozen"):
        done = node.get("sync_done_pct")
        words.append(f"{node['sync_action']} {done:g}% done" if done is not None else node["sync_action"])
    if node.get("member_state"):
        words.append("state " + ",".join(node["member_state"]))
    if node.get("member_errors"):
        words.append(f"{node['member_errors']} errors")
    health = node.get("health")
    if isinstance(health, dict):
        if health.get("read"):
            parts = str(health.get("words") or "").split("; ")  # the finding says them all; a tree line, the first
            said = "; ".join(parts[:2]) + (f" (+{len(parts) - 2} more)" if len(parts) > 2 else "")
            words.append(f"SMART {health['status'].upper()}: {said}" if health.get("status") != "ok" else said)
        elif health.get("not_read"):
            words.append("SMART not read")
    link = node.get("link")
    if link and link.get("hops"):
        labels = " → ".join(h["label"] for h in link["hops"])
        ceiling = link.get("current_ceiling_mbps")
        words.append(labels + (f" (~{fmt_rate(ceiling)})" if ceiling else ""))
    for note in node.get("notes") or []:
        words.append(str(note))
    return f"{node['name']}  " + ", ".join(w for w in words if w)


def tree_lines(node: dict[str, Any], prefix: str = "", last: bool = True, top: bool = True) -> list[str]:
    line = node_line(node)
    lines = [line] if top else [f"{prefix}{'└─ ' if last else '├─ '}{line}"]
    children = node.get("children") or []
    inner = "" if top else prefix + ("   " if last else "│  ")
    for i, child in enumerate(children):
        lines.extend(tree_lines(child, inner, i == len(children) - 1, False))
    return lines


def render_tree(node: dict[str, Any], title: str = "Stack") -> None:
    from disksleuth.present.text import console, safe_text

    out = console()
    out.print(f"\n[bold]{safe_text(title)}[/bold]")
    for line in tree_lines(node):
        out.print("  " + safe_text(line, markup=False), markup=False, highlight=False)


def render_arrays(docs: list[dict[str, Any]], rows: Sequence[Any]) -> None:
    """Each array's tree (from its document) and its findings (from the rows beside them)."""
    from disksleuth.present.text import render_findings

    for doc, row in zip(docs, rows, strict=True):
        title = f"Array {doc['name']}" + (f" ({doc['label']})" if doc.get("label") else "")
        render_tree(doc, title)
        if row.findings:
            render_findings(row.findings, indent="    ")


def render_members(doc: dict[str, Any], show_commands: bool = False) -> None:
    from disksleuth.present.text import Col, console, print_fitted_table, safe_text

    out = console()
    if doc.get("array"):
        render_tree(doc["array"], "Array")
    # A plain table as every other one: no box characters in a file or a pipe (issue 40).
    out.print("Members, read-only sequential reads (1 MiB, QD8)")
    heads = ("member", "alone", "±95%", "together", "±95%")
    cols = [Col(c, justify="left" if c == "member" else "right") for c in heads]
    rows: list[list[str]] = []

    def rate(v: float | None) -> str:
        return fmt_rate(v) if v is not None else "—"

    def ci(v: float | None) -> str:
        return f"{v:.1f}%" if v is not None else "—"

    for m in doc["members"]:
        if m.get("skipped"):
            rows.append([safe_text(m["path"], markup=False), "skipped", "", "", ""])
            continue
        path = safe_text(m["path"], markup=False)
        rows.append([
            path, rate(m["alone_mbps"]), ci(m["alone_ci95_pct"]), rate(m["together_mbps"]), ci(m["together_ci95_pct"]),
        ])  # fmt: skip
    print_fitted_table(cols, rows)
    together = [m["together_mbps"] for m in doc["members"] if m.get("together_mbps") is not None]
    alone = [m["alone_mbps"] for m in doc["members"] if m.get("alone_mbps") is not None]
    if together and alone:
        out.print(f"alone they add up to {fmt_rate(sum(alone))}; all at once they read {fmt_rate(sum(together))}")
    if doc.get("expectation"):
        out.print(safe_text(str(doc["expectation"]["words"])))
    for note in doc.get("notes") or []:
        out.print("[yellow]" + safe_text(note) + "[/yellow]")
    if show_commands:
        for m in doc["members"]:
            if m.get("fio_command"):
                out.print("[dim]" + safe_text(m["fio_command"]) + "[/dim]")


def member_lines(device: dict[str, Any]) -> list[str]:
    """A stored array run's members as plain lines (the HTML report): each read alone and together, then what
    the array should read."""

    def rate(v: object) -> str:
        return fmt_rate(float(v)) if isinstance(v, (int, float)) else "—"

    lines = []
    for m in device.get("members") or []:
        if not isinstance(m, dict):
            continue
        if m.get("skipped"):
            lines.append(f"{m.get('path')}  skipped: {m['skipped']}")
        else:
            lines.append(f"{m.get('path')}  alone {rate(m.get('alone_mbps'))}, together {rate(m.get('together_mbps'))}")
    expectation = device.get("array_expectation")
    if isinstance(expectation, dict) and expectation.get("words"):
        lines.append(str(expectation["words"]))
    return lines


def render_check_stack(doc: dict[str, Any]) -> None:
    """check on an array: its tree, and its members' reads when they ran."""
    if doc.get("members"):
        render_members(
            {"array": doc.get("stack"), "members": doc["members"], "expectation": doc.get("array_expectation")}
        )
    elif doc.get("stack"):
        render_tree(doc["stack"], "Stack")
