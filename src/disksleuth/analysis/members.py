"""Arrays and their members (issue 24, pure): what the array should read from its members and level, which member
holds it back, what a shared link caps, and the state that makes a benchmark of it not comparable.

Codes and their words live here, beside their rules (as in verdicts.py):
  array_degraded (warn)          the array runs without a member: reads reconstruct, a second failure loses data
  array_resyncing (warn/info)    a resync, recovery, check or reshape runs: figures taken now are not comparable
  member_slow (warn)             a member reads clearly slower than its peers, judged on the 95% intervals
  member_link_downgraded (warn)  a member's own link trained below what both of its ends support
  member_health (warn/critical)  a member marked faulty, with read errors, write errors or wanting replacement, or
                                 whose own SMART health reports trouble
  shared_bottleneck (info/warn)  members behind one link whose ceiling is below what they together can read
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from disksleuth.analysis.ceilings import hop_ceiling, link_chain, usb_mbps
from disksleuth.analysis.health import WORN_PCT, failing_attributes, health_findings
from disksleuth.analysis.links import static_findings
from disksleuth.model import Device, Finding, PcieHop, UsbHop
from disksleuth.model.arrays import MemberInfo, MemberReading, SharedLink, StackNode
from disksleuth.model.run import Health
from disksleuth.units import fmt_rate

# A member is slow when even the top of its 95% interval is below this share of the bottom of its peers' median
# interval. Peers of one array are usually identical drives within ~10% of each other; 60% leaves room for that
# and for a busy machine, and is still a member that holds a striped array to 60% of what it should read.
SLOW_SHARE = 0.60
# Members read together that sum below this share of their reads alone are contending for something shared.
CONTENTION_SHARE = 0.80
SYNC_ACTIVE = ("resync", "recover", "check", "repair", "reshape", "resilver", "scrub")
_MIRRORS = ("raid1", "mirror", "raid1c3", "raid1c4", "dup", "linear", "crypt", "single")


# --- the members and what the layers above say about them -----------------------------------------------


def member_infos(tree: StackNode) -> list[MemberInfo]:
    """Each leaf once, with the state its nearest array gives it (md dev-X/state, zfs row state)."""
    out: dict[str, MemberInfo] = {}

    def visit(node: StackNode, array: StackNode | None, via: StackNode | None) -> None:
        if node.kind in ("md", "btrfs", "zfs", "vdev", "dm") and (node.children and len(node.leaves()) > 1):
            array, via = node, None
        for child in node.children:
            visit(child, array, child if via is None and array is node else via)
        if node.children:
            return
        if node.kind not in ("disk", "loop", "missing"):
            return
        holder = via or node
        state = holder.member_state or node.member_state
        action = array.sync_action if array is not None else None
        rebuilding = (
            "replacement" in state
            or "resilvering" in state
            # md.rst: during "recover" the member being rebuilt is not yet in_sync (a spare taking a slot)
            or (action == "recover" and "in_sync" not in state and "faulty" not in state and bool(state))
        )
        out.setdefault(
            node.name,
            MemberInfo(
                name=node.name,
                via=holder.name,
                array=array.name if array is not None else node.name,
                state=state,
                errors=holder.member_errors,
                rebuilding=rebuilding,
                missing=node.kind == "missing",
            ),
        )

    visit(tree, None, None)
    return list(out.values())


def arrays_in(tree: StackNode) -> list[StackNode]:
    return [n for n in tree.walk() if n.kind in ("md", "btrfs", "zfs") or (n.kind == "dm" and len(n.leaves()) > 1)]


def _array_name(node: StackNode) -> str:
    if node.kind == "btrfs":
        return f"btrfs {node.label or node.name[:8]}"
    if node.kind == "zfs":
        return f"zpool {node.label or node.name}"
    if node.kind == "dm" and node.label:
        return f"{node.name} ({node.label})"
    return node.name


def _level_words(node: StackNode) -> str:
    level = node.level or "array"
    return f"{len(node.leaves())}-member {level}"


# --- findings from the tree alone ------------------------------------------------------------------------


def array_degraded(node: StackNode) -> Finding | None:
    if not node.degraded:
        return None
    bad_states = {"faulty", "unavail", "removed", "faulted"}
    # md and btrfs name their members directly; a pool's are under its vdevs.
    members = node.leaves() if node.kind in ("zfs", "vdev") else node.children
    # A member the array gives a state is judged by it (a capture may leave its disk out of the tree).
    missing = [
        m for m in members if bad_states & set(m.member_state) or (m.kind == "missing" and not m.member_state)
    ]
    # A member taking a lost one's place during md's recover is "spare" until it is in_sync.
    taking_over = [m for m in members if m.member_state and not {"in_sync", "online"} & set(m.member_state)
                   and m not in missing]  # fmt: skip
    names = ", ".join([m.name for m in missing] + [f"{m.name} being rebuilt" for m in taking_over]) or "a member"
    rebuilding = node.sync_action in ("recover", "resilver")
    return Finding(
        code="array_degraded",
        severity="warn",
        message=(
            f"{_array_name(node)} ({_level_words(node)}) is degraded: {node.degraded} member(s) missing or failed "
            f"({names}); reads of the lost member are rebuilt from the others, so it reads slower, and one more "
            "failure can lose data"
            + (f"; a rebuild is running ({_pct(node.sync_done_pct)} done)" if rebuilding else "")
        ),
        evidence={
            "array": node.name,
            "level": node.level,
            "degraded": node.degraded,
            "raid_disks": node.raid_disks,
            "failed": [m.name for m in missing],
            "sync_action": node.sync_action,
        },
        hint="Replace the failed member and let the array rebuild (mdadm --manage /dev/mdN --add, btrfs replace, "
        "zpool replace); benchmark it once it is whole.",
        device=node.name,
    )


def _pct(value: float | None) -> str:
    return f"{value:g}%" if value is not None else "an unknown share"


def array_resyncing(node: StackNode, measured: bool = False) -> Finding | None:
    """A sync running now: figures taken meanwhile share the disks with it and are not comparable."""
    if node.sync_action not in SYNC_ACTIVE:
        return None
    what = {"resync": "a resync", "recover": "a rebuild (recover)", "check": "a check", "repair": "a repair",
            "reshape": "a reshape", "resilver": "a resilver", "scrub": "a scrub"}[node.sync_action or ""]  # fmt: skip
    if measured:
        message = (
            f"{_array_name(node)} was running {what} ({_pct(node.sync_done_pct)} done) during this benchmark: "
            "the figures share the disks with it and are not comparable with other runs"
        )
    else:
        done = _pct(node.sync_done_pct)
        message = f"{_array_name(node)} is running {what} ({done} done): a benchmark now is not comparable"
    return Finding(
        code="array_resyncing",
        severity="warn" if measured else "info",
        message=message,
        evidence={"array": node.name, "sync_action": node.sync_action, "done_pct": node.sync_done_pct},
        hint="Benchmark again when it is done (cat /sys/block/mdN/md/sync_action reads idle; zpool status shows no "
        "scan), or pause it for the run (echo frozen > /sys/block/mdN/md/sync_action, then idle).",
        device=node.name,
    )


_BAD_STATES = {
    "faulty": "marked faulty",
    "write_error": "has had a write error",
    "want_replacement": "is marked for replacement",
    "blocked": "is blocked (a failure not yet handled)",
    "faulted": "is FAULTED",
    "degraded": "is DEGRADED (too many errors)",
    "unavail": "is UNAVAIL",
    "removed": "was removed",
}


# The drive-health findings that make a member a risk to its array (analysis/health.py says them for one drive).
_SMART_CODES = ("health_critical", "media_errors", "interface_crc_errors", "health_worn", "error_log_growth")


def smart_status(health: Health) -> tuple[str, str]:
    """(ok / warn / critical, a few words) of a member's SMART health, for its line in a tree."""
    found = [f for f in health_findings(health) if f.code in _SMART_CODES]
    status = "critical" if any(f.severity == "critical" for f in found) else "warn" if found else "ok"
    words = []
    if health.smart_passed is False:
        words.append("SMART FAILED")
    if health.critical_warning:
        words.append("critical warning " + ", ".join(health.critical_warning))
    words += [f"ATA {a.id} {a.name} at its threshold" for a in failing_attributes(health)]
    media = {k: v for k, v in health.media_error_counts.items() if v > 0}
    words += [f"{name} {count:,}" for name, count in media.items()]
    crc = {k: v for k, v in health.interface_error_counts.items() if v > 0 and not k.startswith("SAS ")}
    words += [f"{name} {count:,}" for name, count in crc.items()]
    if health.percentage_used is not None and health.percentage_used >= WORN_PCT:
        words.append(f"{health.percentage_used}% of its endurance used")
    if not words:
        words.append("SMART passed" if health.smart_passed else "SMART read, nothing wrong")
    return status, "; ".join(words)


def member_health(info: MemberInfo, health: Health | None = None) -> Finding | None:
    """What the array says of a member (md dev-X/state and errors, a pool's row) and what the drive says of itself
    (its SMART health, when read): one finding per member."""
    bad = [words for state, words in _BAD_STATES.items() if state in info.state]
    status, smart_words = smart_status(health) if health is not None else ("ok", "")
    if not bad and not info.errors and status == "ok":
        return None
    said = list(bad)
    if info.errors:
        said.append(f"has {info.errors} error(s) counted by the array")
    if status != "ok":
        said.append(f"reports trouble itself ({smart_words})")
    critical = (
        "faulty" in info.state or "faulted" in info.state or "write_error" in info.state or status == "critical"
    )
    hint = f"Read its SMART health (disksleuth health {info.name}); replace it if errors grow."
    if status == "critical":
        how = (
            f"mdadm /dev/{info.array} --add NEW, then mdadm /dev/{info.array} --replace {info.via} --with NEW"
            if info.array.startswith("md")
            else "btrfs replace start, zpool replace, or lvconvert --replace, as the array's kind has it"
        )
        hint = (
            f"Back up what the array holds, then replace {info.name} while the array still has its other members "
            f"({how})."
        )
    return Finding(
        code="member_health",
        severity="critical" if critical else "warn",
        message=f"member {info.via} of {info.array} " + " and ".join(said),
        evidence={
            "member": info.via,
            "disk": info.name,
            "array": info.array,
            "state": list(info.state),
            "errors": info.errors,
            "smart_status": status if health is not None else None,
            "smart_passed": health.smart_passed if health is not None else None,
            "smart": smart_words or None,
        },  # fmt: skip
        hint=hint,
        device=info.name,
    )


_LINK_CODES = ("link_downgraded", "sata_link_downgraded", "usb2_link")


def member_link_downgraded(member: StackNode, array: str) -> list[Finding]:
    if member.device is None:
        return []
    out = []
    for f in static_findings(member.device):
        if f.code in _LINK_CODES and f.severity in ("warn", "info"):
            out.append(
                Finding(
                    code="member_link_downgraded",
                    severity=f.severity,  # a SATA link below its port is info while the drive's own maximum is unknown
                    message=f"member {member.name} of {array}: {f.message.rstrip('.')}; the array waits for its "
                    "slowest member",
                    evidence={"member": member.name, "array": array, "link_code": f.code, **dict(f.evidence)},
                    hint=f.hint,
                    device=member.name,
                )
            )
    return out


# --- shared links ---------------------------------------------------------------------------------------


def _usb_points(device: Device) -> list[str]:
    """The USB hubs and root hub above a device, nearest first, from its sysfs path ('usb1/1-1')."""
    parts = (device.sysfs_path or "").split("/")
    usb = [
        p for p in parts if (p.startswith("usb") and p[3:].isdigit()) or (p[:1].isdigit() and "-" in p and ":" not in p)
    ]
    own = next((h.name for h in device.hops if isinstance(h, UsbHop)), None)
    if own in usb:
        usb = usb[: usb.index(own)]
    return ["/".join(usb[: i + 1]) for i in range(len(usb))][::-1]


def _own_ceiling(device: Device, below: str | None) -> float | None:
    """The member's link ceiling from the hops below the shared point (its own SATA or USB link)."""
    hops = []
    for hop in device.hops:
        if below is not None and hop.name == below:
            break
        hops.append(hop)
    return link_chain(tuple(hops)).current_ceiling_mbps if hops else None


def shared_links(members: Sequence[StackNode]) -> list[SharedLink]:
    """Links or controllers that two or more members sit behind, the deepest of each set of members."""
    devices = [(m.name, m.device) for m in members if m.device is not None]
    points: dict[str, tuple[str, float | None, list[str], list[float | None]]] = {}
    for name, dev in devices:
        for hop in dev.hops:
            if isinstance(hop, PcieHop):
                hop_ceil = hop_ceiling(hop)
                ident = f" ({hop.vendor_device})" if hop.vendor_device else ""
                entry = points.setdefault(
                    f"pcie:{hop.name}", (f"{hop_ceil.label} link of {hop.name}{ident}", hop_ceil.current_mbps, [], [])
                )
                entry[2].append(name)
                entry[3].append(_own_ceiling(dev, hop.name))
        usb_own = next((h for h in dev.hops if isinstance(h, UsbHop)), None)
        for point in _usb_points(dev):
            entry = points.setdefault(f"usb:{point}", (point, None, [], []))
            entry[2].append(name)
            entry[3].append(_own_ceiling(dev, None) if usb_own else None)
        for part in (dev.sysfs_path or "").split("/"):
            if part.startswith("expander-"):
                entry = points.setdefault(f"sas:{part}", (f"SAS expander {part}", None, [], []))
                entry[2].append(name)
                entry[3].append(_own_ceiling(dev, None))
    speeds = {name: next((h.speed_mbps for h in dev.hops if isinstance(h, UsbHop)), None) for name, dev in devices}
    out: list[SharedLink] = []
    seen_sets: set[tuple[str, ...]] = set()
    for key, (label, ceiling, names, own) in points.items():
        group = tuple(dict.fromkeys(names))
        if len(group) < 2:
            continue
        if key.startswith("usb:"):
            # USB 2 is one 480 Mb/s bus shared by everything below the hub; a USB 3 hub's upstream link runs at
            # the fastest speed below it at most. Either way the members' own negotiated speeds bound it.
            known = [s for s in (speeds[n] for n in group) if s is not None]
            fastest = max(known) if known else None
            rate_label, _, ceiling = usb_mbps(fastest, "uas")
            what = "hub" if "-" in key.rsplit("/", 1)[-1] else "root hub"
            label = f"{rate_label} {what} {key[4:].rsplit('/', 1)[-1]}"
        if group in seen_sets:  # the same members behind a hub and its root hub: the hub (nearest) is named
            continue
        seen_sets.add(group)
        out.append(SharedLink(key.split(":", 1)[1], label, ceiling, group, tuple(own[: len(group)])))
    return out


def shared_bottleneck(link: SharedLink, array: str, readings: Sequence[MemberReading] = ()) -> Finding | None:
    """Static (from the members' own link ceilings) or measured (their reads alone, and together)."""
    by_name = {r.name: r for r in readings}
    alone = [by_name[n].alone_mbps for n in link.members if n in by_name and by_name[n].alone_mbps is not None]
    together = [by_name[n].together_mbps for n in link.members if n in by_name and by_name[n].together_mbps is not None]
    measured = len(alone) == len(link.members)
    capacity = sum(a for a in alone if a is not None) if measured else None
    basis = "read alone they total"
    if capacity is None:
        if any(c is None for c in link.member_ceilings_mbps):
            return None
        capacity = sum(c for c in link.member_ceilings_mbps if c is not None)
        basis = "their own links could carry"
    together_sum = sum(t for t in together if t is not None) if len(together) == len(link.members) else None
    if link.ceiling_mbps is not None:
        if capacity <= link.ceiling_mbps:
            return None
        limit = f"{link.label} carries about {fmt_rate(link.ceiling_mbps)} for all of them"
    else:  # no number for the shared part (a SAS expander): only measured contention names it
        if not measured or together_sum is None or together_sum >= CONTENTION_SHARE * capacity:
            return None
        limit = f"they share {link.label}"
    members = ", ".join(link.members)
    message = (
        f"{len(link.members)} members of {array} ({members}) sit behind one link: {limit}; {basis} {fmt_rate(capacity)}"
    )
    if together_sum is not None:
        message += f", and read together they got {fmt_rate(together_sum)}"
    return Finding(
        code="shared_bottleneck",
        severity="warn" if measured else "info",
        message=message,
        evidence={
            "array": array,
            "shared": link.name,
            "shared_label": link.label,
            "ceiling_mbps": round(link.ceiling_mbps, 1) if link.ceiling_mbps is not None else None,
            "members": list(link.members),
            "members_total_mbps": round(capacity, 1),
            "basis": "measured alone" if measured else "member link ceilings",
            "together_total_mbps": round(together_sum, 1) if together_sum is not None else None,
        },
        hint="Spread the members over more controllers, ports or hubs, or give the shared controller a wider, "
        "faster link (a slot with more lanes, a USB 3 port and hub).",
        device=array,
    )


def tree_findings(tree: StackNode, readings: Sequence[MemberReading] = ()) -> list[Finding]:
    """Every finding the tree gives: state, members' health and links, shared links (static, or measured)."""
    out: list[Finding] = []
    for node in arrays_in(tree):
        for f in (array_degraded(node), array_resyncing(node, measured=bool(readings))):
            if f is not None:
                out.append(f)
    top = _array_name(tree)
    healths = {leaf.name: leaf.health for leaf in tree.leaves() if leaf.health is not None}
    for info in member_infos(tree):
        f = member_health(info, healths.get(info.name))
        if f is not None:
            out.append(f)
    leaves = [leaf for leaf in tree.leaves() if leaf.device is not None]
    for leaf in leaves:
        out.extend(member_link_downgraded(leaf, top))
    for link in shared_links(leaves):
        f = shared_bottleneck(link, top, readings)
        if f is not None:
            out.append(f)
    return out


# --- the measurement -----------------------------------------------------------------------------------


def _share_words(share: float) -> str:
    """A share as whole percents; a share that rounds to 0% is not none: "under 1%"."""
    return f"{round(100 * share)}%" if share >= 0.005 else "under 1%"


def member_slow(readings: Sequence[MemberReading], array: str | None = None) -> list[Finding]:
    """Members whose whole 95% interval alone is below SLOW_SHARE of the bottom of their peers' median interval
    (warn); a member read too briefly for an interval that is that far below is named at info, not judged."""
    read = [r for r in readings if r.alone_mbps is not None]
    out = []
    for r in read:
        peers = [p for p in read if p is not r]
        if not peers:
            continue
        own = r.interval()
        lows = sorted(iv[0] for iv in (p.interval() for p in peers) if iv is not None)
        if own is None or not lows:
            continue
        peer_low = statistics.median(lows)
        peer_mbps = statistics.median(p.alone_mbps for p in peers if p.alone_mbps is not None)
        if own[1] >= SLOW_SHARE * peer_low:
            continue
        where = f" of {array}" if array else ""
        # One figure without its spread is not a judgement: on a busy machine (a --time 1 read, RAM-backed loops
        # under load) one read fell to 32% of identical peers. Say it, at info, and how to judge it.
        judged = r.alone_ci95_pct is not None
        out.append(
            Finding(
                code="member_slow",
                severity="warn" if judged else "info",
                message=(
                    f"member {r.name}{where} reads {fmt_rate(r.alone_mbps or 0)} alone "
                    f"({_interval_words(r, own)}), {_share_words((r.alone_mbps or 0) / peer_mbps)} of its "
                    f"peers' {fmt_rate(peer_mbps)}: "
                    + (
                        "an array waits for its slowest member"
                        if judged
                        else "not judged slow on one figure; read longer (--time 5 or more) to judge it"
                    )
                ),
                evidence={
                    "member": r.name,
                    "alone_mbps": r.alone_mbps,
                    "alone_ci95_pct": r.alone_ci95_pct,
                    "interval_mbps": [round(own[0], 1), round(own[1], 1)],
                    "peers_median_mbps": round(peer_mbps, 1),
                    "peers_median_low_mbps": round(peer_low, 1),
                    "slow_share": SLOW_SHARE,
                },
                hint=f"Read {r.name}'s health (disksleuth health {r.path}) and its link (disksleuth list); check its "
                "cable and port, and replace it if it stays slow.",
                device=r.name,
            )
        )
    return out


def _interval_words(r: MemberReading, own: tuple[float, float]) -> str:
    if r.alone_ci95_pct is None:
        return "too few samples for an interval"
    return f"95% interval {own[0]:,.0f}-{own[1]:,.0f} MB/s"


def skip_reason(info: MemberInfo | None) -> str | None:
    """Why a member is not read by a member benchmark, or None: one being rebuilt reads for the rebuild."""
    if info is not None and info.rebuilding:
        return f"{info.array} is rebuilding it; its reads would be the rebuild's"
    return None


def data_members(level: str | None, members: int) -> float | None:
    """How many members' worth of a single sequential read the array delivers, by level (None: unknown).

    Striped levels read every data member at once; parity levels give up one (raid4/5, raidz1) or two (raid6,
    raidz2) members' share; a mirror or a concatenation serves one stream from one member at a time (md raid1
    and btrfs spread separate readers over mirrors, not one stream); md raid10's default near layout reads
    like half its members."""
    if members < 1:
        return None
    lvl = (level or "").lower()
    if lvl in ("raid0", "striped", "stripe"):
        return float(members)
    if lvl in ("raid4", "raid5", "raidz1", "raidz"):
        return float(members - 1)
    if lvl in ("raid6", "raidz2"):
        return float(members - 2)
    if lvl == "raidz3":
        return float(members - 3)
    if lvl == "raid10":
        return members / 2
    if lvl in _MIRRORS:
        return 1.0
    return None


def healthy_alone(alone: Sequence[float]) -> list[float]:
    """The members' reads alone without the slow ones (below SLOW_SHARE of the upper median): what the array should
    read comes from healthy members. The mean of a 2,737 and a 104 MB/s member, 1,420, is neither of them."""
    top = statistics.median_high(alone)
    return [a for a in alone if a >= SLOW_SHARE * top] or list(alone)


# A member whose read with the others beats its read alone by this much, beyond both intervals, says one of the two
# reads is not the member's own speed: the alone read held back (other I/O, a cold start) or a cache served the other.
FASTER_TOGETHER = 1.2


def faster_together(readings: Sequence[MemberReading]) -> list[str]:
    """A note for each member that read faster with every other member at once than alone."""
    out = []
    for r in readings:
        alone, together = r.interval(), r.interval(together=True)
        if alone is None or together is None or r.alone_mbps is None or r.together_mbps is None:
            continue
        if r.together_mbps >= FASTER_TOGETHER * r.alone_mbps and together[0] > alone[1]:
            out.append(
                f"member {r.name} read faster with the others ({fmt_rate(r.together_mbps)}) than alone "
                f"({fmt_rate(r.alone_mbps)}): members share a path, so one of the two reads is not its own speed "
                "(other I/O or a slow start held back the read alone, or a cache served the other); read again"
            )
    return out


def expectation(
    level: str | None, readings: Sequence[MemberReading], array_read_mbps: float | None = None
) -> dict[str, object] | None:
    """What the array should read from its members and level, and the sentence that says it."""
    alone = [r.alone_mbps for r in readings if r.alone_mbps is not None]
    share = data_members(level, len(readings))
    if not alone or share is None:
        return None
    typical = statistics.median(healthy_alone(alone))
    slowest = min(readings, key=lambda r: r.alone_mbps if r.alone_mbps is not None else float("inf"))
    expected = share * typical
    level_words = level or "array"
    of_whom = "healthy members" if len(healthy_alone(alone)) < len(alone) else "members"
    words = (
        f"a {len(readings)}-member {level_words} of ~{fmt_rate(typical)} {of_whom} should read about "
        f"{fmt_rate(expected)}"
    )
    if array_read_mbps is not None:
        words += f"; it read {fmt_rate(array_read_mbps)}"
    if slowest.alone_mbps is not None and slowest.alone_mbps < SLOW_SHARE * typical:
        words += f"; member {slowest.name} reads {fmt_rate(slowest.alone_mbps)}"
    return {
        "level": level,
        "members": len(readings),
        "data_members": share,
        "member_typical_mbps": round(typical, 1),
        "expected_mbps": round(expected, 1),
        "slowest_bound_mbps": round(share * (slowest.alone_mbps or 0.0), 1),
        "measured_mbps": round(array_read_mbps, 1) if array_read_mbps is not None else None,
        "words": words,
    }
