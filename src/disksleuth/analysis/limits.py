"""cgroup I/O limits as hops of the path, and the `io_limit` finding (pure; issue 36).

A limit is shown in the link chain with its ceiling (a bandwidth limit in MB/s; an IOPS limit has none in MB/s)
and the chain's current ceiling counts it: the lowest of the links and the limits, the bottleneck naming the one
that sets it. The link findings judge the links alone (`without_limits`): a figure held by a cgroup limit says
nothing about the link, and `io_limit` says what held it instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from disksleuth.analysis.ceilings import link_chain
from disksleuth.model import Finding, LinkChain
from disksleuth.model.limits import CgroupLimits, IoLimit, LimitCeiling, tightest
from disksleuth.model.run import TestResult
from disksleuth.units import fmt_rate

LIMIT_SHARE = 0.80  # a figure at 80% of its limit or more is held by it (as link_limited judges a link)
# Far above a limit, the limit did not hold the figure: it caps a member or the disk beneath, not all of the
# traffic (a striped array, a loop device's backing disk), or the figure came from a cache.
HELD_MAX_SHARE = 1.5
DIRECTION_WORDS = {"read": "reads", "write": "writes"}
VERSION_WORDS = {1: "cgroup v1 blkio", 2: "cgroup v2 io"}

HOW_SET = (
    "A cgroup I/O limit comes from whoever started this process: systemd (IOReadBandwidthMax=, "
    "IOWriteBandwidthMax=, IOReadIOPSMax=, IOWriteIOPSMax= in the unit or its slice; `systemctl show UNIT -p "
    "IOReadBandwidthMax` shows it, `systemctl set-property UNIT IOReadBandwidthMax=` changes it), `docker run "
    "--device-read-bps/--device-write-bps/--device-read-iops/--device-write-iops`, or a container runtime's io "
    "limits (podman, containerd and Kubernetes set the same files). Run outside the group, or lift the limit, to "
    "measure the device itself; inside it, this is the speed the workload gets."
)


def limit_amount(limit: IoLimit) -> str:
    """'50 MB/s', '10,000 IOPS'."""
    mbps = limit.mbps
    return fmt_rate(mbps) if mbps is not None else f"{limit.value:,} IOPS"


def limit_label(limit: IoLimit) -> str:
    """'cgroup I/O limit, reads 50 MB/s on loop2': the hop's label in the chain, and the bottleneck's name."""
    direction = DIRECTION_WORDS.get(limit.direction, limit.direction)
    return f"cgroup I/O limit, {direction} {limit_amount(limit)} on {limit.name}"


def limit_source(limit: IoLimit) -> str:
    """'blkio.throttle.read_bps_device "7:2 50000000" in cgroup /g (cgroup v1 blkio)': the file, value and cgroup."""
    version = VERSION_WORDS.get(limit.version, f"cgroup v{limit.version}")
    return f'{limit.file} "{limit.line}" in cgroup {limit.cgroup} ({version})'


def limit_ceiling(limit: IoLimit) -> LimitCeiling:
    return LimitCeiling(limit, limit_label(limit), None, limit.mbps, None, None, limit_source(limit))


def target_limits(found: CgroupLimits, devices: Mapping[str, str]) -> tuple[IoLimit, ...] | None:
    """The tightest limit per setting on each of `devices` (MAJ:MIN -> kernel name, the target's own device first),
    each named; None when the process's cgroups could not be read at all (unknown, not "none")."""
    if not found.read:
        return None
    per_device = tightest(found.limits)
    out = []
    for dev, name in devices.items():
        for limit in per_device.get(dev, {}).values():
            out.append(replace(limit, name=name))
    return tuple(out)


def with_limits(chain: LinkChain, limits: Sequence[IoLimit] | None) -> LinkChain:
    """The chain with the limits as hops of their own: the current ceiling is the lowest of links and bandwidth
    limits, and the bottleneck names a limit when one is lowest. The capable ceiling stays the links' (lifting a
    limit is what "capable" means for it). None: not read, and said so (`limits` stays None)."""
    if limits is None:
        return chain
    ceilings = tuple(limit_ceiling(limit) for limit in limits)
    out = replace(chain, limits=ceilings)
    bandwidth = [c for c in ceilings if c.current_mbps is not None]
    if not bandwidth:
        return out
    tightest_limit = min(bandwidth, key=lambda c: c.current_mbps or 0.0)
    mbps = round(tightest_limit.current_mbps or 0.0, 1)
    if chain.current_ceiling_mbps is None or mbps < chain.current_ceiling_mbps:
        return replace(out, current_ceiling_mbps=mbps, bottleneck=tightest_limit)
    return out


def without_limits(chain: LinkChain) -> LinkChain:
    """The links alone, as the link findings judge them."""
    if not chain.limits:
        return replace(chain, limits=None) if chain.limits is not None else chain
    return link_chain([c.hop for c in chain.hops])


def limits_of(chain: LinkChain) -> list[IoLimit]:
    return [c.hop for c in chain.limits or ()]


@dataclass(frozen=True)
class Held:
    """A figure that reached LIMIT_SHARE of a limit in its direction."""

    test_id: str
    direction: str  # "read", "write"
    figure: float  # MB/s for a bandwidth limit, IOPS for an IOPS limit
    limit: IoLimit

    @property
    def cap(self) -> float:
        return self.limit.mbps if self.limit.mbps is not None else float(self.limit.value)

    @property
    def share(self) -> float:
        return self.figure / self.cap

    @property
    def figure_text(self) -> str:
        return fmt_rate(self.figure) if self.limit.mbps is not None else f"{self.figure:,.0f} IOPS"


def held_figures(tests: Sequence[TestResult], limits: Sequence[IoLimit]) -> list[Held]:
    """Each test's figure per direction that a limit held, with the limit it is closest to; in test order."""
    out = []
    for t in tests:
        for direction in ("read", "write"):
            best: Held | None = None
            for limit in limits:
                if limit.direction != direction:
                    continue
                figure = getattr(t, f"{direction}_{'mbps' if limit.mbps is not None else 'iops'}")
                if not isinstance(figure, (int, float)) or figure <= 0:
                    continue
                held = Held(t.id, direction, float(figure), limit)
                if LIMIT_SHARE <= held.share <= HELD_MAX_SHARE and (best is None or held.share > best.share):
                    best = held
            if best is not None:
                out.append(best)
    return out


def limit_to_dict(limit: IoLimit) -> dict[str, Any]:
    return {
        "device": limit.name,
        "dev": limit.dev,
        "setting": limit.setting,
        "value": limit.value,
        "cgroup": limit.cgroup,
        "cgroup_version": limit.version,
        "file": limit.file,
        "path": limit.path,
        "line": limit.line,
    }


def io_limit(held: Sequence[Held]) -> Finding | None:
    """io_limit (warn): figures at 80% or more of a cgroup I/O limit, each limit named with its file and value."""
    if not held:
        return None
    by_limit: dict[IoLimit, list[Held]] = {}
    for h in held:
        by_limit.setdefault(h.limit, []).append(h)
    parts = []
    for limit, hits in by_limit.items():
        figures = ", ".join(f"{h.test_id} {DIRECTION_WORDS[h.direction]} {h.figure_text}" for h in hits)
        shares = sorted({round(100 * h.share) for h in hits})
        share = f"{shares[0]}%" if len(shares) == 1 else f"{shares[0]}-{shares[-1]}%"
        parts.append(
            f"{figures}: {share} of the limit of {limit_amount(limit)} on {DIRECTION_WORDS[limit.direction]} "
            f"{'from' if limit.direction == 'read' else 'to'} {limit.name} ({limit.dev}), set by {limit_source(limit)}"
        )
    message = (
        "A cgroup I/O limit held these figures, not the device: " + "; ".join(parts) + ". This process runs in that "
        "cgroup, and the kernel held its I/O to the limit."
    )
    evidence = {
        "limits": [limit_to_dict(limit) for limit in by_limit],
        "figures": [
            {
                "test": h.test_id,
                "direction": h.direction,
                "figure": round(h.figure, 2),
                "unit": "MB/s" if h.limit.mbps is not None else "IOPS",
                "limit": round(h.cap, 3),
                "share_pct": round(100 * h.share),
                "setting": h.limit.setting,
                "device": h.limit.name,
            }
            for h in held
        ],
    }
    return Finding("io_limit", "warn", message, evidence, HOW_SET)


def limit_summary(held: Sequence[Held]) -> str | None:
    """The summary line's words for figures a limit held: 'held by a cgroup I/O limit: reads 50 MB/s on loop2
    (blkio.throttle.read_bps_device in cgroup /g)'."""
    limits = list(dict.fromkeys(h.limit for h in held))
    if not limits:
        return None
    said = "; ".join(
        f"{DIRECTION_WORDS[lim.direction]} {limit_amount(lim)} on {lim.name} ({lim.file} in cgroup {lim.cgroup})"
        for lim in limits
    )
    return f"held by a cgroup I/O limit: {said}"
