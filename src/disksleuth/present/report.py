"""`report`: one self-contained HTML file. Charts are matplotlib figures embedded as inline SVG; no
network resources, no JavaScript, print-friendly CSS."""

from __future__ import annotations

import html
import io
from typing import Any

from disksleuth.analysis.compare import run_label
from disksleuth.units import fmt_bytes

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1b1f24; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.finding { border-left: 4px solid #999; padding: .3rem .7rem; margin: .4rem 0; background: #f6f8fa; }
.finding.warn { border-color: #d4a72c; } .finding.critical { border-color: #cf222e; }
.finding.info { border-color: #0969da; } .finding.ok { border-color: #1a7f37; }
.code { font-family: ui-monospace, monospace; font-weight: 600; }
.summary { font-size: 1.05rem; font-weight: 600; }
.chart svg { max-width: 100%; height: auto; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem 1rem; align-items: end; }
.muted { color: #57606a; font-size: .85rem; }
@media print { body { margin: 0; max-width: none; } section, .chart { page-break-inside: avoid; } }
"""


def _svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE for inline use


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 96, "font.size": 9, "svg.hashsalt": "disksleuth"})
    return plt


def chain_chart(device: dict[str, Any]) -> str | None:
    """The link chain as a path from the drive to the CPU: one node per hop, its ceiling beneath."""
    hops = ((device.get("link") or {}).get("hops")) or []
    if not hops:
        return None
    plt = _plt()
    bottleneck = (device.get("link") or {}).get("bottleneck")
    nodes = [(f"{device.get('name') or 'drive'}", device.get("model") or "", "#8c959f")]
    for h in hops:
        ceiling = f"~{h['ceiling_mbps']:,.0f} MB/s" if h.get("ceiling_mbps") else "no ceiling"
        color = "#e8590c" if bottleneck and h.get("label") == bottleneck else "#0969da"
        nodes.append((str(h.get("name")), f"{h.get('label')}\n{ceiling}", color))
    nodes.append(("CPU", "", "#8c959f"))
    fig, ax = plt.subplots(figsize=(max(5.0, 2.4 * len(nodes)), 1.5))
    xs = list(range(len(nodes)))
    ax.plot(xs, [0] * len(xs), color="#afb8c1", linewidth=2, zorder=1)
    for x, (name, detail, color) in zip(xs, nodes, strict=True):
        ax.scatter([x], [0], s=160, color=color, zorder=2)
        ax.text(x, 0.35, name, ha="center", va="bottom", fontsize=8, fontweight="bold")
        ax.text(x, -0.35, detail, ha="center", va="top", fontsize=7.5, color=color if color != "#8c959f" else "#57606a")
    ax.set_xlim(-0.7, len(nodes) - 0.3)
    ax.set_ylim(-1.6, 1.0)
    ax.axis("off")
    return _svg(fig)


def bar_chart(docs: list[dict[str, Any]], metric: str, title: str, test_filter: Any) -> str | None:
    plt = _plt()
    tests: list[str] = []
    for d in docs:
        for t in d["tests"]:
            if test_filter(t) and t.get(metric) is not None and t["id"] not in tests:
                tests.append(t["id"])
    if not tests:
        return None
    fig, ax = plt.subplots(figsize=(max(4.2, 0.9 * len(tests) * max(1, len(docs)) + 1.5), 2.8))
    width = 0.8 / len(docs)
    for i, d in enumerate(docs):
        by_id = {t["id"]: t for t in d["tests"]}
        values = [(by_id.get(t) or {}).get(metric) or 0 for t in tests]
        bars = ax.bar([x + i * width for x in range(len(tests))], values, width, label=run_label(d))
        ax.bar_label(bars, labels=[f"{v:,.0f}" if v else "" for v in values], fontsize=7, padding=2)
    ax.set_xticks([x + width * (len(docs) - 1) / 2 for x in range(len(tests))], tests, rotation=15, ha="right")
    ax.set_title(title)
    ax.set_ylabel("MB/s" if metric.endswith("mbps") else "IOPS")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig)


def latency_chart(docs: list[dict[str, Any]]) -> str | None:
    plt = _plt()
    rows = [(d, t) for d in docs for t in d["tests"] if t.get("lat_p50_us")]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(rows) + 2), 3))
    labels = [f"#{d['run']['id']} {t['id']}" for d, t in rows]
    for j, (key, name) in enumerate((("lat_p50_us", "p50"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9"))):
        ax.bar([x + j * 0.27 for x in range(len(rows))], [t.get(key) or 0 for _, t in rows], 0.27, label=name)
    ax.set_yscale("log")
    ax.set_ylabel("latency µs (log)")
    ax.set_xticks([x + 0.27 for x in range(len(rows))], labels, rotation=30, ha="right", fontsize=7)
    ax.set_title("Latency percentiles")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig)


def timeline_chart(doc: dict[str, Any]) -> str | None:
    """Throughput over time, test after test, with the drive temperature on a second axis."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 2.8))
    offset = 0.0
    drew = False
    temps_t, temps_c = [], []
    for t in doc["tests"]:
        series = t.get("series") or []
        if not series:
            continue
        xs = [offset + p["t_s"] for p in series]
        ys = [(p.get("read_mbps") or 0) + (p.get("write_mbps") or 0) for p in series]
        ax.plot(xs, ys, marker="o", markersize=3, label=t["id"])  # markers: short tests have one point
        for x, p in zip(xs, series, strict=True):
            if p.get("temperature_c") is not None:
                temps_t.append(x)
                temps_c.append(p["temperature_c"])
        offset = xs[-1] + 1
        drew = True
    if not drew:
        plt.close(fig)
        return None
    ax.set_xlabel("seconds (tests back to back)")
    ax.set_ylabel("MB/s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    if temps_c:
        ax2 = ax.twinx()
        ax2.plot(temps_t, temps_c, color="#cf222e", linestyle="--", label="temperature °C")
        ax2.set_ylabel("°C", color="#cf222e")
    ax.set_title(f"Run #{doc['run']['id']}: throughput over time")
    return _svg(fig)


def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def _num(v: Any, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if isinstance(v, (int, float)) else "—"


def _run_section(doc: dict[str, Any]) -> str:
    run, device = doc["run"], doc.get("device") or {}
    parts = [f"<section><h2>Run #{run['id']}: {_e(device.get('model') or run.get('device') or run['target'])}</h2>"]
    host = run.get("host") or {}
    parts.append(
        f"<p class='muted'>{_e(run['started_at'])} · {_e(run['kind'])} · profile {_e(run['profile'])} · target "
        f"{_e(run['target'])} · {_e(run.get('fio_version'))}, engine {_e(run.get('engine'))} · host "
        f"{_e(host.get('hostname'))} ({_e(host.get('kernel'))})"
        + (f" · {fmt_bytes(run['size_bytes'])} tested" if run.get("size_bytes") else "")
        + (f" · tags: {_e(', '.join(run.get('tags') or []))}" if run.get("tags") else "")
        + "</p>"
    )
    if run.get("note"):
        parts.append(f"<p>{_e(run['note'])}</p>")
    if doc.get("summary"):
        parts.append(f"<p class='summary'>{_e(doc['summary'])}</p>")
    chain = chain_chart(device)
    if chain:
        parts.append(f"<h3>Link chain</h3><div class='chart'>{chain}</div>")
    for f in doc.get("findings") or []:
        parts.append(
            f"<div class='finding {_e(f['severity'])}'><span class='code'>{_e(f['code'])}</span> "
            f"({_e(f['severity'])}): {_e(f['message'])}"
            + (f"<br><b>fix:</b> {_e(f['hint'])}" if f.get("hint") else "")
            + "</div>"
        )
    parts.append(
        "<table><tr><th>test</th><th>read MB/s</th><th>write MB/s</th><th>read IOPS</th><th>write IOPS</th>"
        "<th>mean µs</th><th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th></tr>"
    )
    for t in doc["tests"]:
        parts.append(
            f"<tr><td>{_e(t['id'])}</td><td>{_num(t.get('read_mbps'), 1)}</td><td>{_num(t.get('write_mbps'), 1)}</td>"
            f"<td>{_num(t.get('read_iops'))}</td><td>{_num(t.get('write_iops'))}</td>"
            f"<td>{_num(t.get('lat_mean_us'), 1)}</td><td>{_num(t.get('lat_p50_us'), 1)}</td>"
            f"<td>{_num(t.get('lat_p99_us'), 1)}</td><td>{_num(t.get('lat_p999_us'), 1)}</td></tr>"
        )
    parts.append("</table>")
    timeline = timeline_chart(doc)
    if timeline:
        parts.append(f"<div class='chart'>{timeline}</div>")
    parts.append("</section>")
    return "\n".join(parts)


def render_report(docs: list[dict[str, Any]]) -> str:
    def seq(t: dict[str, Any]) -> bool:
        return (t.get("bs_bytes") or 0) >= 128 * 1024

    def rnd(t: dict[str, Any]) -> bool:
        return not seq(t)

    charts = [
        bar_chart(docs, "read_mbps", "Sequential read MB/s", seq),
        bar_chart(docs, "write_mbps", "Sequential write MB/s", seq),
        bar_chart(docs, "read_iops", "Random read IOPS", rnd),
        bar_chart(docs, "write_iops", "Random write IOPS", rnd),
        latency_chart(docs),
    ]
    title = "disksleuth report: " + ", ".join(f"#{d['run']['id']}" for d in docs)
    bars, latency = [c for c in charts[:4] if c], charts[4]
    body = [f"<h1>{_e(title)}</h1>", "<section><h2>Across runs</h2><div class='grid'>"]
    body += [f"<div class='chart'>{c}</div>" for c in bars]
    body.append("</div>")
    if latency:
        body.append(f"<div class='chart'>{latency}</div>")
    body.append("</section>")
    body += [_run_section(d) for d in docs]
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
