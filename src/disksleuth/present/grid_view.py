"""`show --grid`: a stored run as the compact grid people share CrystalDiskMark results in. Plain text (no colour,
no markup, no trailing blanks) that pastes into a forum post as it is: one header line (device, size, date), then
a row per test (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1 for the standard set) with Read and Write MB/s."""

from __future__ import annotations

from typing import Any

from disksleuth.present.text import safe_text
from disksleuth.units import fmt_bytes, fmt_size

_DIRECTIONS = ("_read", "_write")


def _row_name(test_id: str) -> str:
    """SEQ1M_Q8T1_read -> SEQ1M Q8T1: the read and write tests of a pair share a row."""
    for suffix in _DIRECTIONS:
        if test_id.endswith(suffix):
            test_id = test_id[: -len(suffix)]
    return test_id.replace("_", " ")


def _mbps(value: Any) -> str:
    return f"{value:,.1f}" if isinstance(value, int | float) and value > 0 else "—"


def grid_header(doc: dict[str, Any]) -> str:
    """'Samsung SSD 970 EVO Plus 250GB · 250.1 GB · standard, 1 GiB · 2026-11-22': the device and its capacity,
    the profile and how much it tested, the day."""
    run = doc.get("run") or {}
    dev = doc.get("device") or {}
    parts = [str(dev.get("model") or dev.get("name") or run.get("device") or run.get("target") or "?")]
    if dev.get("size_bytes"):
        parts.append(fmt_bytes(dev["size_bytes"]))
    tested = fmt_size(run["size_bytes"]).split(" (")[0] if run.get("size_bytes") else None
    parts.append(", ".join(str(p) for p in (run.get("profile"), tested) if p))
    parts.append(str(run.get("started_at") or "")[:10])
    return safe_text(" · ".join(p for p in parts if p), markup=False)


def render_grid(doc: dict[str, Any]) -> str:
    """The grid as text, lines ending in a newline. Tests are rows in the order the run measured them."""
    rows: dict[str, dict[str, str]] = {}
    cached = False
    for t in doc.get("tests") or []:
        row = rows.setdefault(_row_name(str(t.get("id") or "?")), {"read": "—", "write": "—"})
        for direction in ("read", "write"):
            shown = _mbps(t.get(f"{direction}_mbps"))
            if shown != "—":
                row[direction] = shown + ("*" if t.get("cache_affected") else "")
        cached = cached or bool(t.get("cache_affected"))
    names = [safe_text(name, markup=False) for name in rows]
    name_w = max([len(n) for n in names] + [len("MB/s")])
    read_w = max([len(r["read"]) for r in rows.values()] + [len("Read")])
    write_w = max([len(r["write"]) for r in rows.values()] + [len("Write")])
    lines = [
        grid_header(doc),
        f"{'MB/s':<{name_w}}  {'Read':>{read_w}}  {'Write':>{write_w}}",
        *(
            f"{name:<{name_w}}  {row['read']:>{read_w}}  {row['write']:>{write_w}}"
            for name, row in zip(names, rows.values(), strict=True)
        ),
    ]
    if not rows:
        lines.append("(no tests in this run)")
    if cached:
        lines.append("* through the page cache or on memory, not the medium")
    return "".join(line.rstrip() + "\n" for line in lines)
