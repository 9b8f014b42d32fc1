"""What changed on the path between two runs, and whether it explains the figures (pure; issue 28).

`path_changes(run_a, run_b)` diffs two run documents (the shape `check --json` prints and `Store.load`
returns): the device, each link hop, health counters, findings and the host. Only what changed is kept.
`explain_changes(run_a, run_b, figures)` ties each figure that moved beyond the runs' intervals to those
changes, with numbers. Every sentence either of them says is built here, so `compare`, the report and
`show --baseline` say the same thing of the same pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from disksleuth.analysis.aer import change_text, stored_growth
from disksleuth.analysis.baseline import FASTER, SLOWER, Judged
from disksleuth.analysis.ratios import format_ratio
from disksleuth.analysis.verdicts import LINK_LIMITED_SHARE

# Findings that describe the link or the figures themselves (they come and go because the link or the
# figures did): not a cause of a figure's change, so they never count as "something on the path changed".
EFFECT_FINDINGS = frozenset(
    {
        "ok",
        "link_limited",
        "slot_limited",
        "link_downgraded",
        "usb2_link",
        "usb_bot",
        "sata_link_downgraded",
        "behind_chipset",
        "poor_random_write",
        "sd_app_class",
        "io_limit",  # a limit's own change says it (issue 36)
        "foreign_io",  # the test's other I/O is said with the figure it concerns (_foreign_words)
    }
)
# Health fields counted as counters: growth (or a first appearance) means something happened to the drive.
HEALTH_COUNTERS = (
    ("media_errors", "media errors"),
    ("error_log_entries", "error log entries"),
    ("ata_reallocated_sectors", "reallocated sectors"),
    ("ata_pending_sectors", "pending sectors"),
    ("ata_offline_uncorrectable", "offline uncorrectable sectors"),
    ("ata_crc_errors", "interface CRC errors"),
    ("scsi_grown_defects", "grown defects"),
    ("scsi_uncorrected_errors", "uncorrected errors"),
    ("unsafe_shutdowns", "unsafe shutdowns"),
    ("percentage_used", "wear %"),
)
HEALTH_COUNTER_MAPS = ("interface_error_counts", "media_error_counts", "throttle")
LOOK_ELSEWHERE = (
    "look at what the path does not show: the drive's temperature (throttling), how full it is, caches "
    "(page cache, the drive's write cache), and other load on it (another process, a cgroup I/O limit)"
)
# Runs since issue 36 record their cgroup I/O limits (device.link.limits): for two such runs a limit is on the path,
# and only what the path does not show is left to look at.
LOOK_ELSEWHERE_LIMITS_KNOWN = LOOK_ELSEWHERE.replace(", a cgroup I/O limit)", ")")
LIMIT = "I/O limit"  # PathChange.what of a cgroup I/O limit that appeared, went or changed


@dataclass(frozen=True)
class PathChange:
    """One thing that differs between two runs: `before` is None when it appeared, `after` when it went."""

    area: str  # "device", "link", "link_errors" (PCIe error counters that grew), "health", "findings", "host"
    what: str  # "model", "firmware", "drive", "link", "hop", "slot", "ceiling", a counter, "finding", "kernel"...
    hop: str | None  # the link hop it concerns ("PCIe 0000:03:00.0"), None when not a hop
    before: str | None
    after: str | None
    before_mbps: float | None = None  # link, hop and ceiling changes: the practical ceiling on each side
    after_mbps: float | None = None

    @property
    def is_cause(self) -> bool:
        """Whether it can be why a figure moved (a finding that only reports the figure or link cannot)."""
        if self.area != "findings":
            return True
        code = (self.after or self.before or "").split(" ", 1)[0]
        return code not in EFFECT_FINDINGS


@dataclass(frozen=True)
class FigureChange:
    """One measured figure in both runs and the judgement already made on it (analysis.compare: one per
    test and direction, beyond the two runs' intervals or not)."""

    test_id: str
    direction: str  # "read" or "write"
    metric: str  # the figure quoted: read_mbps for sequential tests, read_iops for small blocks
    before: float | None
    after: float | None
    ratio: float | None
    word: str | None  # "faster", "slower", "same"
    before_mbps: float | None  # the same figure in MB/s, set against the link's ceiling
    after_mbps: float | None
    note: str | None = None  # compare's Row.notes: "from nothing", "to nothing", "too wide to judge"


@dataclass(frozen=True)
class Explanation:
    """Whether the path explains one figure's change. `verdict`: "link" (the link's ceiling explains it),
    "drive" (a different drive does), "possible" (changes that may, with no number tying them), "none"
    (nothing on its path changed), "unchanged" (the path changed and the figure did not)."""

    figure: FigureChange
    verdict: str
    because: tuple[PathChange, ...]  # the changes that explain it (or may), () when none does
    text: str

    @property
    def explained(self) -> bool | None:
        return {"link": True, "drive": True, "none": False}.get(self.verdict)


# --- what changed ---------------------------------------------------------------------------------


def _dev(doc: dict[str, Any]) -> dict[str, Any]:
    device = doc.get("device")
    return device if isinstance(device, dict) else {}


def _hops(doc: dict[str, Any]) -> list[dict[str, Any]]:
    link = _dev(doc).get("link")
    hops = link.get("hops") if isinstance(link, dict) else None
    return [h for h in hops or [] if isinstance(h, dict)]


def chain_ceiling(doc: dict[str, Any]) -> tuple[float | None, str | None]:
    """The run's current link ceiling in MB/s and the hop that sets it (its label), or (None, None). A cgroup I/O
    limit that set the run's ceiling is left out: its own change says what it explains (_by_limit)."""
    link = _dev(doc).get("link")
    if not isinstance(link, dict):
        return None, None
    ceiling, neck = link.get("current_ceiling_mbps"), link.get("bottleneck")
    if any(lim.get("label") == neck for lim in _limit_list(doc) or []):
        hops = _hops(doc)
        known = [(float(c), str(h.get("label"))) for h in hops if isinstance(c := h.get("ceiling_mbps"), (int, float))]
        if not known or any(h.get("kind") == "virtual" for h in hops):
            return None, None
        return min(known)
    return (float(ceiling) if isinstance(ceiling, (int, float)) else None), neck


def _limit_list(doc: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The cgroup I/O limits a run recorded (issue 36); None for a run that recorded none (older, or not read)."""
    link = _dev(doc).get("link")
    limits = link.get("limits") if isinstance(link, dict) else None
    return [x for x in limits if isinstance(x, dict)] if isinstance(limits, list) else None


def _limit_key(lim: dict[str, Any]) -> str:
    return f"{lim.get('setting')} on {lim.get('name') or lim.get('dev')}"


def _limit_amount(lim: dict[str, Any]) -> str:
    value = _num(lim.get("value"))
    if value is None:
        return "?"
    return f"{value / 1e6:,.0f} MB/s" if str(lim.get("setting")).endswith("_bps") else f"{value:,.0f} IOPS"


def limit_text(lim: dict[str, Any]) -> str:
    """'50 MB/s (blkio.throttle.read_bps_device "7:2 50000000" in cgroup /g)'."""
    return f'{_limit_amount(lim)} ({lim.get("file")} "{lim.get("line")}" in cgroup {lim.get("cgroup")})'


def _limit_changes(a: dict[str, Any], b: dict[str, Any]) -> list[PathChange]:
    """cgroup I/O limits that appeared, went or changed: only between two runs that both recorded theirs."""
    la, lb = _limit_list(a), _limit_list(b)
    if la is None or lb is None:
        return []
    before = {_limit_key(x): x for x in la}
    after = {_limit_key(x): x for x in lb}
    out = []
    for key in dict.fromkeys([*before, *after]):
        x, y = before.get(key), after.get(key)
        tx, ty = (limit_text(x) if x else None), (limit_text(y) if y else None)
        # The same value set by another cgroup (a new service, a container restarted) holds the same: no change.
        if (x and _limit_amount(x)) != (y and _limit_amount(y)):
            mx, my = (_num(x.get("ceiling_mbps")) if x else None), (_num(y.get("ceiling_mbps")) if y else None)
            out.append(PathChange("link", LIMIT, key, tx, ty, mx, my))
    return out


def _cap(doc: dict[str, Any], setting: str) -> float | None:
    """The tightest limit of one setting a run recorded (MB/s for *_bps, IOPS for *_iops), None for none."""
    values = [_num(x.get("value")) for x in _limit_list(doc) or [] if x.get("setting") == setting]
    known = [v / 1e6 if setting.endswith("_bps") else v for v in values if v is not None]
    return min(known) if known else None


def mbps_text(mbps: float | None) -> str:
    """A ceiling as the findings say it: ~450 MB/s, ~1,800 MB/s, ~40 MB/s."""
    return "unknown" if mbps is None else f"~{mbps:,.0f} MB/s"


def hop_text(hop: dict[str, Any]) -> str:
    ceiling = hop.get("ceiling_mbps")
    label = str(hop.get("label") or hop.get("kind") or "?")
    return f"{label} ({mbps_text(ceiling)})" if isinstance(ceiling, (int, float)) else label


def hop_name(hop: dict[str, Any]) -> str:
    kind = hop.get("kind")
    name = hop.get("name")
    if kind == "pcie":
        return f"PCIe {name}"
    if kind == "usb":
        return f"USB {name}"
    if kind == "sata":
        return f"SATA {hop.get('port') or name}"
    if kind == "mmc":
        return f"MMC {hop.get('host') or name}"
    return f"{hop.get('driver') or kind} {name}"


def _slot_text(slot: Any) -> str | None:
    """A hop's slot (issue 22 adds the key; its shape is not fixed here): its name, whatever carries it."""
    if slot is None or slot == "":
        return None
    if isinstance(slot, dict):
        for key in ("name", "designation", "label"):
            if slot.get(key):
                return str(slot[key])
        return ", ".join(f"{k} {v}" for k, v in sorted(slot.items()) if v is not None) or None
    return str(slot)


def _pair_hops(
    a: list[dict[str, Any]], b: list[dict[str, Any]]
) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None]]:
    """Hops of two chains paired: the same kind and name first (a BIOS change keeps the BDF), then the same
    kind in chain order (a USB drive moved to another port is the same hop, renamed); the rest appeared or
    went (a switch, a USB bridge)."""
    pairs: dict[int, int] = {}
    used: set[int] = set()
    for i, h in enumerate(a):
        for j, g in enumerate(b):
            if j not in used and h.get("kind") == g.get("kind") and h.get("name") == g.get("name"):
                pairs[i] = j
                used.add(j)
                break
    for i, h in enumerate(a):
        if i in pairs:
            continue
        for j, g in enumerate(b):
            if j not in used and h.get("kind") == g.get("kind"):
                pairs[i] = j
                used.add(j)
                break
    out: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = [
        (h, b[pairs[i]] if i in pairs else None) for i, h in enumerate(a)
    ]
    out += [(None, g) for j, g in enumerate(b) if j not in used]
    return out


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _link_changes(a: dict[str, Any], b: dict[str, Any]) -> list[PathChange]:
    out: list[PathChange] = []
    hops_a, hops_b = _hops(a), _hops(b)
    for ha, hb in _pair_hops(hops_a, hops_b):
        if hb is None and ha is not None:
            out.append(PathChange("link", "hop", hop_name(ha), hop_text(ha), None, _num(ha.get("ceiling_mbps"))))
            continue
        if ha is None and hb is not None:
            out.append(PathChange("link", "hop", hop_name(hb), None, hop_text(hb), None, _num(hb.get("ceiling_mbps"))))
            continue
        assert ha is not None and hb is not None
        name = hop_name(ha) if hop_name(ha) == hop_name(hb) else f"{hop_name(ha)} → {hop_name(hb).split(' ', 1)[-1]}"
        ca, cb = _num(ha.get("ceiling_mbps")), _num(hb.get("ceiling_mbps"))
        if hop_text(ha) != hop_text(hb) or ca != cb:
            out.append(PathChange("link", "link", name, hop_text(ha), hop_text(hb), ca, cb))
        elif hop_name(ha) != hop_name(hb):  # same speed on another port: where it is attached changed
            out.append(PathChange("link", "port", name, str(ha.get("name")), str(hb.get("name"))))
        if "slot" in ha or "slot" in hb:
            sa, sb = _slot_text(ha.get("slot")), _slot_text(hb.get("slot"))
            if sa != sb:
                out.append(PathChange("link", "slot", name, sa, sb))
    ceil_a, neck_a = chain_ceiling(a)
    ceil_b, neck_b = chain_ceiling(b)
    # With one hop each side, its own change already says it; the chain's ceiling is news only when a
    # longer chain's limit moved (or moved to another hop).
    if (len(hops_a) > 1 or len(hops_b) > 1) and (ceil_a != ceil_b or neck_a != neck_b) and (ceil_a or ceil_b):
        out.append(
            PathChange(
                "link",
                "ceiling",
                None,
                f"{mbps_text(ceil_a)} ({neck_a})" if neck_a else mbps_text(ceil_a),
                f"{mbps_text(ceil_b)} ({neck_b})" if neck_b else mbps_text(ceil_b),
                ceil_a,
                ceil_b,
            )
        )
    return out + _limit_changes(a, b)


def _sector_format(device: dict[str, Any]) -> str | None:
    lbs, pbs = device.get("logical_block_size"), device.get("physical_block_size")
    if not isinstance(lbs, int):
        return None
    return f"{lbs} B" if pbs in (None, lbs) else f"{lbs} B logical, {pbs} B physical"


def _size_text(device: dict[str, Any]) -> str | None:
    from disksleuth.units import fmt_bytes

    size = device.get("size_bytes")
    return fmt_bytes(size) if isinstance(size, int) and size > 0 else None


def _serial_text(device: dict[str, Any]) -> str | None:
    """The drive's keyed serial id, shortened: enough to tell two drives apart, never the serial itself."""
    sid = device.get("serial_id") or device.get("serial_sha256")
    return f"serial id {str(sid)[:12]}" if sid else None


def _onoff(v: Any) -> str | None:
    return None if v is None else ("on" if v else "off")


def _fs(device: dict[str, Any]) -> str | None:
    if device.get("fstype"):
        return str(device["fstype"])
    types = device.get("fstypes")
    return ", ".join(types) if types else None


def different_drive(run_a: dict[str, Any], run_b: dict[str, Any]) -> bool:
    """Two runs of different drives: a different model, or a different serial (a drive swapped under the
    same name, nvme0n1 before and after, tells itself only by its serial)."""
    a, b = _dev(run_a), _dev(run_b)
    sa, sb = _serial_text(a), _serial_text(b)
    if sa and sb and sa != sb:
        return True
    return bool(a.get("model") and b.get("model") and a.get("model") != b.get("model"))


def _known_changes(area: str, pairs: Sequence[tuple[str, str | None, str | None]]) -> list[PathChange]:
    """Fields both runs know that differ: a field an older run did not record is unknown, not a change."""
    return [PathChange(area, what, None, x, y) for what, x, y in pairs if x is not None and y is not None and x != y]


def _health_snapshot(doc: dict[str, Any]) -> dict[str, Any] | None:
    health = doc.get("health")
    if not isinstance(health, dict):
        return None
    snap = health.get("after") or health.get("before")
    return snap if isinstance(snap, dict) else None


def _counters(snap: dict[str, Any]) -> dict[str, float]:
    out = {label: v for key, label in HEALTH_COUNTERS if (v := _num(snap.get(key))) is not None}
    for key in HEALTH_COUNTER_MAPS:
        counts = snap.get(key)
        if isinstance(counts, dict):
            out.update({str(name): v for name, value in counts.items() if (v := _num(value)) is not None})
    for warning in snap.get("critical_warning") or []:
        out[f"critical warning: {warning}"] = 1.0
    return out


def _count_text(v: float) -> str:
    return f"{v:,.0f}" if v == int(v) else f"{v:,}"


def _health_changes(a: dict[str, Any], b: dict[str, Any]) -> list[PathChange]:
    sa, sb = _health_snapshot(a), _health_snapshot(b)
    if sa is None or sb is None or different_drive(a, b):  # another drive's counters are no growth
        return []
    ca, cb = _counters(sa), _counters(sb)
    out = []
    for name, after in cb.items():
        before = ca.get(name)
        if before is None and after > 0:
            out.append(PathChange("health", name, None, None, _count_text(after)))
        elif before is not None and after > before:
            out.append(PathChange("health", name, None, _count_text(before), _count_text(after)))
    return out


def _finding_key(f: dict[str, Any]) -> tuple[str, str]:
    return str(f.get("code")), str(f.get("device") or "")


def _finding_text(f: dict[str, Any]) -> str:
    return f"{f.get('code')} ({f.get('severity')})" + (f" on {f['device']}" if f.get("device") else "")


# Findings that say nothing of the path: "ok" only that no other finding was made (the others coming and
# going already say it); slower/faster than usual judge the figures against the drive's history, so a run
# shown against its baseline would list its own verdict as a change on its path.
NOT_ON_PATH = frozenset({"ok", SLOWER, FASTER})


def _on_path(f: dict[str, Any]) -> bool:
    return f.get("code") not in NOT_ON_PATH


def _finding_changes(a: dict[str, Any], b: dict[str, Any]) -> list[PathChange]:
    fa = {_finding_key(f): f for f in a.get("findings") or [] if isinstance(f, dict) and _on_path(f)}
    fb = {_finding_key(f): f for f in b.get("findings") or [] if isinstance(f, dict) and _on_path(f)}
    out = [PathChange("findings", "finding", None, _finding_text(f), None) for k, f in fa.items() if k not in fb]
    out += [PathChange("findings", "finding", None, None, _finding_text(f)) for k, f in fb.items() if k not in fa]
    return out


def path_changes(run_a: dict[str, Any], run_b: dict[str, Any]) -> tuple[PathChange, ...]:
    """Everything on the path that differs from run_a to run_b, device first and host last; () when nothing
    did. Two runs of one unchanged device give ()."""
    a, b = _dev(run_a), _dev(run_b)
    out: list[PathChange] = []
    out += _known_changes(
        "device",
        (
            ("device", a.get("name"), b.get("name")),
            ("model", a.get("model"), b.get("model")),
            ("drive", _serial_text(a), _serial_text(b)),
            ("firmware", a.get("firmware"), b.get("firmware")),
            ("size", _size_text(a), _size_text(b)),
            ("transport", a.get("transport"), b.get("transport")),
            ("sector format", _sector_format(a), _sector_format(b)),
            ("backing file", a.get("backing_file"), b.get("backing_file")),
            ("backing device", a.get("backing_device"), b.get("backing_device")),
            ("direct I/O", _onoff(a.get("loop_direct_io")), _onoff(b.get("loop_direct_io"))),
        ),
    )
    out += _link_changes(run_a, run_b)
    # The path's PCIe error counters that grew between the two runs' readings (issue 36).
    out += [PathChange("link_errors", *grew) for grew in stored_growth(_hops(run_a), _hops(run_b))]
    out += _health_changes(run_a, run_b)
    out += _finding_changes(run_a, run_b)
    ha, hb = run_a.get("run", {}).get("host") or {}, run_b.get("run", {}).get("host") or {}
    out += _known_changes(
        "host",
        (
            ("host", ha.get("hostname"), hb.get("hostname")),
            ("kernel", ha.get("kernel"), hb.get("kernel")),
            ("fio", run_a.get("run", {}).get("fio_version"), run_b.get("run", {}).get("fio_version")),
            ("scheduler", a.get("scheduler"), b.get("scheduler")),
            ("write cache", a.get("write_cache"), b.get("write_cache")),
            ("file system", _fs(a), _fs(b)),
        ),
    )
    return tuple(out)


def change_line(c: PathChange) -> str:
    """One change in words: 'link PCIe 0000:03:00.0: PCIe 2.0 x1 (~450 MB/s) → PCIe 2.0 x4 (~1,800 MB/s)'."""
    if c.area == "findings":
        return f"new finding: {c.after}" if c.before is None else f"finding gone: {c.before}"
    if c.area == "link_errors":
        return change_text(c.what, c.hop, c.before, c.after)
    if c.what == "hop":
        return f"hop appeared: {c.hop}, {c.after}" if c.before is None else f"hop gone: {c.hop}, {c.before}"
    if c.what == LIMIT and (c.before is None or c.after is None):
        return f"{LIMIT} set: {c.hop}, {c.after}" if c.before is None else f"{LIMIT} gone: {c.hop}, {c.before}"
    if c.area == "health":
        grew = f"{c.before} → {c.after}" if c.before is not None else f"appeared at {c.after}"
        return f"health {c.what}: {grew}"
    subject = f"{c.what} {c.hop}" if c.hop else c.what
    return f"{subject}: {c.before or '—'} → {c.after or '—'}"


def change_cells(c: PathChange) -> tuple[str, str]:
    """The row heading of a change in a by-column table (what, and which hop), for runs side by side."""
    if c.area == "findings":
        return "finding", ""
    return (f"health {c.what}" if c.area == "health" else c.what), c.hop or ""


# --- whether it explains the figures --------------------------------------------------------------


def _figure_name(f: FigureChange) -> str:
    return f.test_id if f.test_id.endswith(f"_{f.direction}") else f"{f.test_id} {f.direction}s"


def _value_text(v: float | None, metric: str) -> str:
    if v is None:
        return "—"
    if metric.endswith("_iops") or v >= 100:
        return f"{v:,.0f}"
    return f"{v:,.1f}"


def figure_text(f: FigureChange) -> str:
    """'SEQ1M_Q8T1_read rose 3.33x (373 → 1,243 MB/s)'."""
    unit = "IOPS" if f.metric.endswith("_iops") else "MB/s"
    values = f"{_value_text(f.before, f.metric)} → {_value_text(f.after, f.metric)} {unit}"
    if f.note in ("from nothing", "to nothing"):  # no ratio over nothing ("infx" before)
        return f"{_figure_name(f)} {'rose' if f.note == 'from nothing' else 'fell'} {f.note} ({values})"
    if f.note == "too wide to judge":  # never "held within the intervals": an interval wider than its figure
        moved = "rose" if f.word == "faster" else "fell to"
        return f"{_figure_name(f)} {moved} {format_ratio(f.ratio)} ({values}), an interval too wide to judge it"
    if f.word == "same":
        return f"{_figure_name(f)} held within the two runs' intervals ({format_ratio(f.ratio)}: {values})"
    moved = "rose" if f.word == "faster" else "fell to"
    return f"{_figure_name(f)} {moved} {format_ratio(f.ratio)} ({values})"


def _pct(share: float) -> str:
    return f"{share * 100:.0f}%"


def _crosses_chipset(doc: dict[str, Any]) -> bool:
    return any(h.get("port_is_chipset") for h in _hops(doc)) or any(
        f.get("code") == "behind_chipset" for f in doc.get("findings") or [] if isinstance(f, dict)
    )


def _listed(changes: Sequence[PathChange]) -> str:
    return "; ".join(change_line(c) for c in changes)


@dataclass(frozen=True)
class _Ceilings:
    """Both runs' link ceilings and where the figure stood against each."""

    before: float | None
    before_hop: str | None
    after: float | None
    after_hop: str | None
    share_before: float | None
    share_after: float | None

    @property
    def moved(self) -> str:
        return (
            f"The link went from {self.before_hop or '?'} ({mbps_text(self.before)}) to {self.after_hop or '?'} "
            f"({mbps_text(self.after)})"
        )

    @property
    def known(self) -> bool:
        return self.share_before is not None and self.share_after is not None


def _ceilings(run_a: dict[str, Any], run_b: dict[str, Any], f: FigureChange) -> _Ceilings:
    ceil_a, neck_a = chain_ceiling(run_a)
    ceil_b, neck_b = chain_ceiling(run_b)
    share_a = f.before_mbps / ceil_a if f.before_mbps is not None and ceil_a else None
    share_b = f.after_mbps / ceil_b if f.after_mbps is not None and ceil_b else None
    return _Ceilings(ceil_a, neck_a, ceil_b, neck_b, share_a, share_b)


def _unchanged(f: FigureChange, causes: list[PathChange], c: _Ceilings) -> Explanation:
    """The path changed and the figure did not: which hop still limits it, or that the link does not."""
    if any(x.area == "link" and x.what != LIMIT for x in causes):
        what = "the link changed"
    elif any(x.what == LIMIT for x in causes):
        what = "a cgroup I/O limit changed"
    elif any(x.area == "device" and x.what in ("drive", "model", "device") for x in causes):
        what = "it is a different drive"
    else:
        what = " and ".join(dict.fromkeys(x.what for x in causes)) + " changed"
    text = f"{figure_text(f)}, though {what}"
    if c.share_after is not None and c.share_after >= LINK_LIMITED_SHARE:
        text += f": {c.after_hop} still limits it ({_pct(c.share_after)} of its {mbps_text(c.after)})."
    elif c.share_after is not None:
        text += (
            f": the link does not limit it ({_pct(c.share_after)} of {c.after_hop}'s {mbps_text(c.after)}); the "
            "drive does, or something the link chain does not show."
        )
    else:
        text += "."
    return Explanation(f, "unchanged", tuple(causes), text)


def _by_link(run_b: dict[str, Any], f: FigureChange, link: list[PathChange], c: _Ceilings) -> Explanation | None:
    """The link's ceiling explains the change: it rose from under a figure that was at the old ceiling, or
    fell to under the new figure."""
    if not link or not c.known or c.before is None or c.after is None or c.before == c.after:
        return None
    assert c.share_before is not None and c.share_after is not None
    head = figure_text(f) + "."
    if f.word == "faster" and c.after > c.before and c.share_before >= LINK_LIMITED_SHARE:
        if c.share_after >= LINK_LIMITED_SHARE:
            limit = f"so the link still limits it ({c.after_hop})."
        else:
            nxt = "the chipset uplink and the drive come next" if _crosses_chipset(run_b) else "the drive comes next"
            limit = f"so the link no longer limits it: {nxt}."
        text = (
            f"{head} {c.moved}: that explains the rise. The old figure was {_pct(c.share_before)} of the old "
            f"ceiling; the new one is {_pct(c.share_after)} of the new, {limit}"
        )
        return Explanation(f, "link", tuple(link), text)
    if f.word == "slower" and c.after < c.before and c.share_after >= LINK_LIMITED_SHARE:
        text = (
            f"{head} {c.moved}: that explains the fall. The new figure is {_pct(c.share_after)} of the new "
            f"ceiling (the old one was {_pct(c.share_before)} of the old), so the link limits it now."
        )
        return Explanation(f, "link", tuple(link), text)
    return None


def _link_did_not(f: FigureChange, link: list[PathChange], c: _Ceilings) -> str:
    """Why a link change does not explain a figure that moved, in one sentence."""
    if c.known and c.before is not None and c.after is not None and c.before != c.after:
        assert c.share_before is not None and c.share_after is not None
        rose = f.word == "faster"
        if rose != (c.after > c.before):
            why = f"a {'lower' if rose else 'higher'} ceiling cannot explain a {'rise' if rose else 'fall'}"
        else:
            share = c.share_before if rose else c.share_after
            when = "old" if rose else "new"
            why = f"the {when} figure was {_pct(share)} of that ceiling, so the link did not limit it"
        return f"{c.moved}, but {why}."
    same = f" and its ceiling stayed {mbps_text(c.after)}" if c.after is not None and c.before == c.after else ""
    return f"The link changed ({_listed(link)}){same}: that does not limit this figure."


def _limits_of(f: FigureChange, changes: Sequence[PathChange]) -> list[PathChange]:
    """The cgroup I/O limit changes in the figure's direction (a write limit holds no read)."""
    return [x for x in changes if x.what == LIMIT and (x.hop or "").startswith(f"{f.direction}_")]


def _by_limit(
    run_a: dict[str, Any], run_b: dict[str, Any], f: FigureChange, limits: list[PathChange]
) -> Explanation | None:
    """A cgroup I/O limit explains the change: a figure held by one rose when it was lifted or raised, or fell to
    one that appeared or tightened (as a link's ceiling does: at LINK_LIMITED_SHARE of it or more)."""
    if not limits or f.word not in ("faster", "slower"):
        return None
    iops = f.metric.endswith("_iops") and any(str(x.hop).startswith(f"{f.direction}_iops") for x in limits)
    setting = f"{f.direction}_{'iops' if iops else 'bps'}"
    old, new = _cap(run_a, setting), _cap(run_b, setting)
    fig_old, fig_new = (f.before, f.after) if iops else (f.before_mbps, f.after_mbps)
    unit = "IOPS" if iops else "MB/s"
    said = "; ".join(change_line(x) for x in limits)
    head = figure_text(f) + "."
    if f.word == "faster" and old is not None and fig_old is not None and fig_old >= LINK_LIMITED_SHARE * old:
        if new is not None and new <= old:
            return None
        now = (
            f"the new one is {_pct(fig_new / new)} of the new limit ({new:,.0f} {unit})"
            if new is not None and fig_new is not None
            else "no limit holds the new one"
        )
        text = (
            f"{head} A cgroup I/O limit changed ({said}): that explains the rise. The old figure was "
            f"{_pct(fig_old / old)} of the old limit ({old:,.0f} {unit}); {now}."
        )
        return Explanation(f, "link", tuple(limits), text)
    if f.word == "slower" and new is not None and fig_new is not None and fig_new >= LINK_LIMITED_SHARE * new:
        if old is not None and old <= new:
            return None
        text = (
            f"{head} A cgroup I/O limit changed ({said}): that explains the fall. The new figure is "
            f"{_pct(fig_new / new)} of the new limit ({new:,.0f} {unit}), so the limit holds it now, not the device."
        )
        return Explanation(f, "link", tuple(limits), text)
    return None


def _foreign_words(doc: dict[str, Any], test_id: str) -> str | None:
    """'other I/O on loop2 at 20 MB/s' when the run's test was marked foreign_io (issue 36)."""
    test = next((t for t in doc.get("tests") or [] if isinstance(t, dict) and t.get("id") == test_id), None)
    other = test.get("foreign_io") if isinstance(test, dict) else None
    if not isinstance(other, dict) or not other.get("found"):
        return None
    mbps = _num(other.get("other_mbps"))
    devices = ", ".join(str(d) for d in other.get("devices") or []) or "the device"
    return f"other I/O on {devices}" + (f" at {mbps:,.1f} MB/s" if mbps is not None else "")


def explain_figure(
    run_a: dict[str, Any], run_b: dict[str, Any], f: FigureChange, changes: Sequence[PathChange]
) -> Explanation | None:
    """Why one figure moved (or did not), or None when neither it nor anything on its path moved."""
    causes = [c for c in changes if c.is_cause]
    c = _ceilings(run_a, run_b, f)
    if f.word == "same":
        return _unchanged(f, causes, c) if causes else None
    by_limit = _by_limit(run_a, run_b, f, _limits_of(f, causes))
    if by_limit is not None:
        return by_limit
    # A limit in the other direction holds nothing of this figure: not a cause of its change.
    causes = [x for x in causes if x.what != LIMIT or x in _limits_of(f, causes)]
    link = [x for x in causes if x.area == "link" and x.what != LIMIT]
    drive = [x for x in causes if x.area == "device" and x.what in ("drive", "model", "device")]
    others = [x for x in causes if x not in link and x not in drive]
    by_link = _by_link(run_b, f, link, c)
    if by_link is not None:
        return by_link
    head = figure_text(f) + "."
    said = [_link_did_not(f, link, c)] if link else []
    busy = [(when, w) for when, doc in (("before", run_a), ("after", run_b)) if (w := _foreign_words(doc, f.test_id))]
    if busy:  # other I/O on the device during the test is said before anything else may explain it
        said.insert(0, "The device was not the test's alone: " + "; ".join(f"{w} {when}" for when, w in busy) + ".")
    if drive:
        same_link = ""
        if c.known and c.before == c.after:
            assert c.share_before is not None and c.share_after is not None
            same_link = (
                f" on the same link ({c.after_hop}, {mbps_text(c.after)}: {_pct(c.share_before)} of it before, "
                f"{_pct(c.share_after)} after, so it limits neither)"
            )
        said.append(f"It is a different drive ({_listed(drive)}){same_link}: the drive explains the change.")
        if others:
            said.append(f"Also changed: {_listed(others)}.")
        return Explanation(f, "drive", tuple(drive), " ".join([head, *said]))
    if others:
        said.append(f"What else changed may explain it: {_listed(others)}.")
        return Explanation(f, "possible", tuple(others), " ".join([head, *said]))
    if busy:
        return Explanation(f, "possible", (), " ".join([head, *said]))
    nothing = "Nothing else on its path changed" if link else "Nothing on its path changed"
    known = _limit_list(run_a) is not None and _limit_list(run_b) is not None
    elsewhere = LOOK_ELSEWHERE_LIMITS_KNOWN if known else LOOK_ELSEWHERE
    return Explanation(f, "none", (), " ".join([head, *said, f"{nothing}: {elsewhere}."]))


def explain_changes(
    run_a: dict[str, Any],
    run_b: dict[str, Any],
    figures: Sequence[FigureChange],
    changes: Sequence[PathChange] | None = None,
) -> tuple[Explanation, ...]:
    """One explanation per figure that moved beyond the intervals, and per figure that held while its path
    changed; () for two runs of an unchanged device whose figures held."""
    changes = path_changes(run_a, run_b) if changes is None else changes
    out = []
    for f in figures:
        if f.word is None:
            continue
        e = explain_figure(run_a, run_b, f, changes)
        if e is not None:
            out.append(e)
    return tuple(out)


@dataclass(frozen=True)
class PairDiff:
    """One run against the baseline: what changed on the path and what that explains."""

    baseline_id: int
    run_id: int
    changes: tuple[PathChange, ...]
    explanations: tuple[Explanation, ...]
    different_drive: bool


def diff_pair(run_a: dict[str, Any], run_b: dict[str, Any], figures: Sequence[FigureChange]) -> PairDiff:
    changes = path_changes(run_a, run_b)
    return PairDiff(
        run_a["run"]["id"],
        run_b["run"]["id"],
        changes,
        explain_changes(run_a, run_b, figures, changes),
        different_drive(run_a, run_b),
    )


def path_columns(pairs: Sequence[PairDiff], run_ids: Sequence[int], baseline: int) -> list[tuple[str, str, list[str]]]:
    """The path's differences by column, one per run (runs of different drives side by side): each row a
    thing that differs somewhere (what, hop, a value per run); a run where it did not change has the
    baseline's value. [] when nothing differs."""
    rows: dict[tuple[str, str, str], list[str | None]] = {}
    for p in pairs:
        i = list(run_ids).index(p.run_id)
        for c in p.changes:
            what, hop = change_cells(c)
            key = (what, hop, c.before or c.after or "") if c.area == "findings" else (what, hop, "")
            values = rows.setdefault(key, [None] * len(run_ids))
            values[baseline] = c.before
            values[i] = c.after if c.after is not None else "—"
    out = []
    for (what, hop, _), values in rows.items():
        base = values[baseline]
        out.append((what, hop, [v if v is not None else (base or "—") for v in values]))
    return out


def pair_heading(p: PairDiff) -> str:
    return path_heading(p.baseline_id, p.run_id)


def path_heading(baseline_id: int, run_id: int) -> str:
    return f"What changed on the path from run #{baseline_id} to #{run_id}:"


EXPLAIN_HEADING = "Whether that explains the figures:"
COLUMNS_HEADING = "What differs on the path (runs side by side):"


def by_column(pairs: Sequence[PairDiff]) -> bool:
    """Runs of different drives, or more than two runs: the path is shown by column, not as before → after."""
    return len(pairs) > 1 or any(p.different_drive for p in pairs)


def baseline_figures(judged: Sequence[Judged], run_doc: dict[str, Any]) -> list[FigureChange]:
    """A run's figures judged against its baseline (analysis/baseline.py) as the figure changes explained
    here: the baseline's median (or its one run) before, the run after, "usual" said as "same". A small-block
    figure is judged in IOPS; its MB/s, set against the link's ceiling, comes from the run's test and, for
    the baseline, from the same ratio (same test, same block size)."""
    tests = {str(t.get("id")): t for t in run_doc.get("tests") or []}
    out = []
    for j in judged:
        direction = j.metric.split("_", 1)[0]
        before_mbps: float | None
        after_mbps: float | None
        if j.metric.endswith("_mbps"):
            before_mbps, after_mbps = j.baseline_value, j.value
        else:
            after_mbps = _num((tests.get(j.test_id) or {}).get(f"{direction}_mbps"))
            before_mbps = after_mbps / j.ratio if after_mbps is not None and j.ratio > 0 else None
        word = j.verdict if j.verdict in ("slower", "faster") else "same"
        out.append(
            FigureChange(
                j.test_id, direction, j.metric, j.baseline_value, j.value, j.ratio, word, before_mbps, after_mbps
            )
        )
    return out
