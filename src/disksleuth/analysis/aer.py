"""PCIe error counters on a path, and `link_errors` when they grow (pure; issue 36).

Each PCIe hop carries the AER counters of both its ends (model.AerCounters, read by probe.aer). A count that is
not zero but holds still is shown, never warned: a link often logs a few correctable errors while it trains at
boot. Growth while something is watched (a test, `top`'s interval, the time between two stored runs) is the
`link_errors` finding: the link is retransmitting now. For `top` and the runs:

    before = path_counters(device.hops)                     # or probe.aer.read_aers(path_functions(hops), root)
    after = read_aers(path_functions(device.hops), root)    # probe.aer
    finding = link_errors_finding(path_growth(before, after), during="during the test", device=device.name,
                                  roles=path_roles(device.hops))

Every sentence said of these counters is built here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from disksleuth.model import AerCount, AerCounters, Finding, Hop, PcieHop

CODE = "link_errors"
SEVERITIES = ("correctable", "nonfatal", "fatal")
_RANK = {"fatal": 3, "nonfatal": 2, "correctable": 1}
NOUNS = {
    "correctable": "correctable errors",
    "nonfatal": "uncorrectable (non-fatal) errors",
    "fatal": "fatal errors",
}
SHORT = {"correctable": "correctable", "nonfatal": "non-fatal", "fatal": "fatal"}
_CAUSE = "a riser, cable (OCuLink) or seating fault"
WHY = {
    "correctable": f"{_CAUSE} makes the link retransmit",
    "nonfatal": (
        f"the link lost transfers it could not retransmit, which the driver had to recover: {_CAUSE}, or a failing "
        "device"
    ),
    "fatal": (
        f"the link or the device failed and had to be reset, and I/O in flight could be lost: {_CAUSE}, or a failing "
        "device"
    ),
}
HINT = (
    "Reseat the drive and any riser or adapter; with a cable (OCuLink, SlimSAS), try a shorter one rated for the "
    "link's PCIe generation and make sure both connectors latch. Setting the slot one PCIe generation lower in the "
    "firmware (BIOS) setup tells a marginal link from a failing device. `dmesg | grep -i aer` names each error as it "
    "happens."
)
HINT_UNCORRECTABLE = "Back up the drive's data first. " + HINT
MAX_KINDS_SHOWN = 3
MAX_OTHERS_SHOWN = 3


# --- the functions on a path ------------------------------------------------------------------------------------


def path_functions(hops: Iterable[Hop]) -> tuple[str, ...]:
    """Every PCI function on a path's PCIe hops, device first, each once: what `read_aers` reads again."""
    out: dict[str, None] = {}
    for hop in hops:
        if isinstance(hop, PcieHop):
            out[hop.name] = None
            if hop.port:
                out[hop.port] = None
    return tuple(out)


def path_roles(hops: Iterable[Hop]) -> dict[str, str]:
    """How a finding names each function on the path: '0000:03:00.0', 'the switch 0000:02:00.0', 'the root port
    0000:00:01.0', 'the switch port 0000:03:08.0'."""
    out: dict[str, str] = {}
    for hop in hops:
        if not isinstance(hop, PcieHop):
            continue
        out.setdefault(hop.name, f"the switch {hop.name}" if hop.is_bridge else hop.name)
        if hop.port:
            out.setdefault(hop.port, f"the {'root' if hop.port_is_root else 'switch'} port {hop.port}")
    return out


def path_counters(hops: Iterable[Hop]) -> dict[str, AerCounters]:
    """The counters every PCIe hop of a path carries, by BDF (as read with the path)."""
    out: dict[str, AerCounters] = {}
    for hop in hops:
        if isinstance(hop, PcieHop):
            for counters in (hop.aer, hop.port_aer):
                if counters is not None:
                    out.setdefault(counters.bdf, counters)
    return out


def with_counters(hops: Sequence[Hop], readings: Mapping[str, AerCounters]) -> tuple[Hop, ...]:
    """The hops with the counters of a later reading (a function read again keeps its last counters when the new
    reading has none: gone mid-run, or unreadable now)."""
    out: list[Hop] = []
    for hop in hops:
        if isinstance(hop, PcieHop):
            hop = replace(
                hop,
                aer=readings.get(hop.name, hop.aer),
                port_aer=readings.get(hop.port, hop.port_aer) if hop.port else hop.port_aer,
            )
        out.append(hop)
    return tuple(out)


# --- growth -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AerGrowth:
    """One counter of one function that grew between two readings."""

    bdf: str
    severity: str  # "correctable", "nonfatal", "fatal"
    before: int
    after: int
    kinds: tuple[tuple[str, int], ...] = ()  # (the kernel's name, grown by), largest first
    rootport: bool = False  # a root port's total of messages from below, not the function's own counter

    @property
    def grew_by(self) -> int:
        return self.after - self.before


def _kinds(counts: Iterable[AerCount], severity: str) -> dict[str, int]:
    return {c.name: c.count for c in counts if c.severity == severity}


def aer_growth(before: AerCounters | None, after: AerCounters | None) -> tuple[AerGrowth, ...]:
    """What grew from one reading of a function to the next. A counter that went down (the function was reset, or
    the machine restarted between two stored readings) or that either reading lacks is no growth."""
    if before is None or after is None or before.bdf != after.bdf:
        return ()
    out = []
    for severity in SEVERITIES:
        b, a = getattr(before, severity), getattr(after, severity)
        if b is not None and a is not None and a > b:
            kb, ka = _kinds(before.counts, severity), _kinds(after.counts, severity)
            grown = [(name, n - kb.get(name, 0)) for name, n in ka.items() if n > kb.get(name, 0)]
            grown.sort(key=lambda kv: -kv[1])
            out.append(AerGrowth(after.bdf, severity, b, a, tuple(grown)))
    for severity in SEVERITIES:
        b, a = getattr(before, f"rootport_{severity}"), getattr(after, f"rootport_{severity}")
        if b is not None and a is not None and a > b:
            out.append(AerGrowth(after.bdf, severity, b, a, (), rootport=True))
    return tuple(out)


def path_growth(before: Mapping[str, AerCounters], after: Mapping[str, AerCounters]) -> tuple[AerGrowth, ...]:
    """Growth on every function read both times, the worst first: fatal, non-fatal, then correctable, a function's
    own counter before a root port's total, the largest growth first."""
    out = [g for bdf, b in before.items() for g in aer_growth(b, after.get(bdf))]
    out.sort(key=lambda g: (-_RANK[g.severity], g.rootport, -g.grew_by))
    return tuple(out)


def _n(v: int) -> str:
    return f"{v:,}"


def _kinds_text(kinds: Sequence[tuple[str, int]]) -> str:
    shown = ", ".join(f"{name} {_n(n)}" for name, n in kinds[:MAX_KINDS_SHOWN])
    return shown + (", …" if len(kinds) > MAX_KINDS_SHOWN else "")


def _where(bdf: str, roles: Mapping[str, str] | None) -> str:
    return (roles or {}).get(bdf, bdf)


def growth_text(g: AerGrowth, during: str | None, roles: Mapping[str, str] | None = None) -> str:
    """'correctable errors on 0000:03:00.0 grew by 1,240 during the test (RxErr 1,200, BadDLLP 40)'."""
    where = _where(g.bdf, roles)
    when = f" {during}" if during else ""
    if g.rootport:
        messages = NOUNS[g.severity].replace("errors", "error messages")
        return f"{where} received {_n(g.grew_by)} more {messages} from the devices below it{when}"
    kinds = f" ({_kinds_text(g.kinds)})" if g.kinds else ""
    return f"{NOUNS[g.severity]} on {where} grew by {_n(g.grew_by)}{when}{kinds}"


def link_errors_finding(
    growths: Sequence[AerGrowth],
    *,
    during: str = "during the test",
    device: str | None = None,
    roles: Mapping[str, str] | None = None,
) -> Finding | None:
    """`link_errors` (warn) for counters that grew, worded by the worst of them; None when none grew. A root port's
    total of messages from below speaks only when no function's own counter on the path grew (it counts theirs)."""
    own = [g for g in growths if not g.rootport]
    shown = sorted(own or growths, key=lambda g: (-_RANK[g.severity], g.rootport, -g.grew_by))
    if not shown:
        return None
    worst = shown[0]
    message = f"{growth_text(worst, during, roles)}: {WHY[worst.severity]}."
    others = [growth_text(g, None, roles) for g in shown[1 : 1 + MAX_OTHERS_SHOWN]]
    if len(shown) > 1 + MAX_OTHERS_SHOWN:
        others.append(f"{len(shown) - 1 - MAX_OTHERS_SHOWN} more")
    if others:
        message += " Also: " + "; ".join(others) + "."
    evidence: dict[str, Any] = {
        "during": during,
        "bdf": worst.bdf,
        "severity": worst.severity,
        "before": worst.before,
        "after": worst.after,
        "grew_by": worst.grew_by,
        "kinds": dict(worst.kinds),
        "growth": [
            {
                "bdf": g.bdf,
                "where": _where(g.bdf, roles),
                "severity": g.severity,
                "rootport": g.rootport,
                "before": g.before,
                "after": g.after,
                "grew_by": g.grew_by,
                "kinds": dict(g.kinds),
            }
            for g in shown
        ],
    }
    hint = HINT if worst.severity == "correctable" else HINT_UNCORRECTABLE
    return Finding(CODE, "warn", message, evidence, hint, device=device)


# --- shown, not warned ----------------------------------------------------------------------------------------------


def aer_text(c: AerCounters | None) -> str | None:
    """A function's non-zero counters in a few words ('9 correctable (HeaderOF 8, CorrIntErr 7, NonFatalErr 6, …),
    48 fatal; reported to it from below: 9 correctable'); None when all are zero or unknown."""
    if c is None:
        return None
    own = []
    for severity in SEVERITIES:
        total = getattr(c, severity)
        if total:
            kinds = sorted(_kinds(c.counts, severity).items(), key=lambda kv: -kv[1])
            own.append(f"{_n(total)} {SHORT[severity]}" + (f" ({_kinds_text(kinds)})" if kinds else ""))
    below = [f"{_n(v)} {SHORT[s]}" for s in SEVERITIES if (v := getattr(c, f"rootport_{s}"))]
    parts = [", ".join(own)] if own else []
    if below:
        parts.append("reported to it from below: " + ", ".join(below))
    return "; ".join(parts) or None


def hop_aer_lines(hop: Hop) -> list[str]:
    """The lines a PCIe hop's non-zero counters add under it in the link chain; [] when they are all zero."""
    if not isinstance(hop, PcieHop):
        return []
    out = []
    port = f"{'root port' if hop.port_is_root else 'port'} {hop.port}"
    for counters, where in ((hop.aer, hop.name), (hop.port_aer, port)):
        text = aer_text(counters)
        if text:
            out.append(f"PCIe errors since boot on {where}: {text}")
    return out


def function_aer_line(c: AerCounters | None) -> str | None:
    """`links`: one function's non-zero counters, or None."""
    text = aer_text(c)
    return f"PCIe errors since boot on {c.bdf}: {text}" if c is not None and text else None


# --- counters in stored documents -----------------------------------------------------------------------------------


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def counters_from_dict(d: Any) -> AerCounters | None:
    """A hop's `aer` or `port_aer` as a document holds it, back into the model; None for anything else."""
    if not isinstance(d, dict) or not isinstance(d.get("bdf"), str):
        return None
    counts = []
    for item in d.get("counts") or []:
        if isinstance(item, dict) and item.get("severity") in SEVERITIES and isinstance(item.get("name"), str):
            n = _count(item.get("count"))
            if n:
                counts.append(AerCount(item["severity"], item["name"], n))
    return AerCounters(
        bdf=d["bdf"],
        correctable=_count(d.get("correctable")),
        nonfatal=_count(d.get("nonfatal")),
        fatal=_count(d.get("fatal")),
        rootport_correctable=_count(d.get("rootport_correctable")),
        rootport_nonfatal=_count(d.get("rootport_nonfatal")),
        rootport_fatal=_count(d.get("rootport_fatal")),
        counts=tuple(counts),
    )


def stored_counters(hops: Iterable[Any]) -> dict[str, AerCounters]:
    """The counters on a stored document's link hops, by BDF."""
    out: dict[str, AerCounters] = {}
    for hop in hops:
        if isinstance(hop, dict) and hop.get("kind") == "pcie":
            for key in ("aer", "port_aer"):
                counters = counters_from_dict(hop.get(key))
                if counters is not None:
                    out.setdefault(counters.bdf, counters)
    return out


def _stored_roles(hops: Iterable[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for hop in hops:
        if isinstance(hop, dict) and hop.get("kind") == "pcie" and isinstance(hop.get("name"), str):
            out.setdefault(hop["name"], f"PCIe {hop['name']}")
            if isinstance(hop.get("port"), str):
                port = "root port" if hop.get("port_is_root") else "port"
                out.setdefault(hop["port"], f"PCIe {hop['port']} ({port})")
    return out


def stored_growth(hops_a: Sequence[Any], hops_b: Sequence[Any]) -> list[tuple[str, str, str, str]]:
    """What grew between the counters two stored runs carry on their hops, as (what, hop, before, after) for a path
    change: ('correctable errors', 'PCIe 0000:03:00.0', '12', '1,252'). A root port's total of messages from below
    only when no function's own counter grew."""
    growths = path_growth(stored_counters(hops_a), stored_counters(hops_b))
    own = [g for g in growths if not g.rootport]
    roles = _stored_roles(hops_b)
    out = []
    for g in own or growths:
        what = NOUNS[g.severity] + (" received from below" if g.rootport else "")
        out.append((what, roles.get(g.bdf, f"PCIe {g.bdf}"), _n(g.before), _n(g.after)))
    return out


def change_text(what: str, hop: str | None, before: str | None, after: str | None) -> str:
    """A stored growth as `compare` says it: 'correctable errors on PCIe 0000:03:00.0: 12 → 1,252 (+1,240)'."""
    b, a = (before or "").replace(",", ""), (after or "").replace(",", "")
    digits = b.isascii() and b.isdigit() and a.isascii() and a.isdigit() and len(a) <= 20 and len(b) <= 20
    grew = f" (+{int(a) - int(b):,})" if digits and int(a) > int(b) else ""
    return f"{what} on {hop or 'the path'}: {before or '—'} → {after or '—'}{grew}"


def stored_aer_lines(hops: Iterable[Any]) -> list[str]:
    """The report's lines: each function on a stored path with non-zero counters."""
    out = []
    for bdf, counters in stored_counters(hops).items():
        text = aer_text(counters)
        if text:
            out.append(f"{bdf}: {text}")
    return out
