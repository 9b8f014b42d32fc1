"""`report --fleet`: the fleet view as one self-contained HTML page, in the style of the run report."""

from __future__ import annotations

from disksleuth.analysis.fleet import FleetRow, fleet_counts
from disksleuth.present.charts import pyplot as _plt
from disksleuth.present.charts import svg_of as _svg
from disksleuth.present.report import CSS, _num
from disksleuth.present.report import _e as _html
from disksleuth.present.text import safe_text


def _e(value: object) -> str:
    """HTML-escaped, with control characters shown as escapes, as the terminal views show them."""
    return _html(safe_text(value, markup=False))

_SEVERITY_CSS = (
    ".sev-critical { background: #ffebe9; } .sev-warn { background: #fff8c5; } .sev-info { color: #0969da; }"
    " table.fleet td, table.fleet th { text-align: left; white-space: nowrap; }"
    " table.fleet td.n, table.fleet th.n { text-align: right; } table.fleet td.wrap { white-space: normal; }"
)


def throughput_chart(rows: list[FleetRow]) -> str | None:
    """Each device's sequential read against its link's current ceiling, worst first from the top."""
    shown = [r for r in rows if r.seq_read_mbps is not None or r.ceiling_mbps is not None]
    if not shown:
        return None
    plt = _plt()
    height = 0.9 + 0.32 * len(shown)
    fig, ax = plt.subplots(figsize=(9, height))
    labels = [safe_text(f"{r.host} · {r.device}", markup=False) for r in shown]
    ys = list(range(len(shown)))[::-1]
    colours = {"critical": "#cf222e", "warn": "#d4a72c", "info": "#0969da", "ok": "#1a7f37"}
    reads = [r.seq_read_mbps or 0 for r in shown]
    ax.barh(ys, reads, color=[colours[r.worst] for r in shown], height=0.6, label="sequential read")
    for y, r in zip(ys, shown, strict=True):
        if r.ceiling_mbps:
            ax.plot([r.ceiling_mbps, r.ceiling_mbps], [y - 0.4, y + 0.4], color="#1b1f24", linewidth=2)
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_xlabel("MB/s (bar: newest sequential read; black tick: the link's current ceiling)")
    ax.set_xlim(0, max([*reads, *[r.ceiling_mbps or 0 for r in shown]]) * 1.08 or 1)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return _svg(fig)


def render_fleet_report(rows: list[FleetRow]) -> str:
    counts = fleet_counts(rows)
    hosts = sorted({r.host for r in rows})
    title = f"disksleuth fleet: {len(hosts)} host(s), {len(rows)} device(s)"
    body = [f"<h1>{_e(title)}</h1>"]
    body.append(
        "<p class='summary'>"
        + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        + "</p><p class='muted'>One row per host and device, from its newest stored run, worst first.</p>"
    )
    chart = throughput_chart(rows)
    if chart:
        body.append(f"<div class='chart'>{chart}</div>")
    body.append(
        "<table class='fleet'><tr><th>host</th><th>device</th><th>model</th><th>worst</th><th>findings</th>"
        "<th class='n'>seq read MB/s</th><th class='n'>ceiling MB/s</th><th class='n'>% of ceiling</th>"
        "<th class='n'>run</th><th>when</th></tr>"
    )
    for r in rows:
        share = (
            f"{100 * r.seq_read_mbps / r.ceiling_mbps:.0f}%" if r.seq_read_mbps and r.ceiling_mbps else "—"
        )
        body.append(
            f"<tr class='sev-{_e(r.worst)}'><td>{_e(r.host)}</td><td>{_e(r.device)}</td><td>{_e(r.model)}</td>"
            f"<td>{_e(r.worst)}</td><td class='wrap'>{_e(', '.join(r.codes) or '—')}</td>"
            f"<td class='n'>{_num(r.seq_read_mbps)}</td><td class='n'>{_num(r.ceiling_mbps)}</td>"
            f"<td class='n'>{share}</td><td class='n'>#{r.run_id}</td>"
            f"<td>{_e(r.started_at[:16].replace('T', ' '))}</td></tr>"
        )
    body.append("</table>")
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{CSS}{_SEVERITY_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
