"""The verdict catalogue (DESIGN.md "Verdicts"), applied to measured or given figures (pure).

`check` feeds figures it measured; `explain` feeds figures the user read elsewhere. Both reach the
same findings through `verdicts()`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from disksleuth.analysis import card_claims
from disksleuth.analysis import limits as io_limits
from disksleuth.analysis.ceilings import link_chain, pcie_label, pcie_mbps, usb_mbps
from disksleuth.analysis.foreign import foreign_io
from disksleuth.analysis.health import health_findings
from disksleuth.analysis.links import static_findings
from disksleuth.analysis.reference import reference_exceeded
from disksleuth.model import Device, Finding, LinkChain, PcieHop, SataHop, UsbHop
from disksleuth.model.limits import IoLimit
from disksleuth.model.run import Health, MemoryBacking, Run, TestResult
from disksleuth.units import fmt_rate

LINK_LIMITED_SHARE = 0.80
CACHE_TOLERANCE = 1.05  # the practical ceilings are estimates; 5% above is still plausible
POOR_RANDOM_WRITE_IOPS = 100  # a 5400 rpm laptop disk does ~90
SD_A1 = (1500, 500)  # SD Physical Layer spec, Application Performance Class: read, write IOPS
SD_A2 = (4000, 2000)
HDD_MAX_SEQ_MBPS = 300  # no spinning disk streams faster than this
HDD_MAX_RANDOM_IOPS = 500  # 15k rpm tops out near 200-300 random IOPS
RANDOM_BS_BYTES = 4096  # the IOPS figures are 4 KiB random I/O


@dataclass(frozen=True)
class Figures:
    """The figures verdicts reason about. MB/s sequential, IOPS 4 KiB random at any queue depth."""

    seq_read_mbps: float | None = None
    seq_write_mbps: float | None = None
    rand_read_iops: float | None = None
    rand_write_iops: float | None = None
    cache_affected: bool = False
    # 95% interval half-widths (ci95_pct) of the sequential figures, when measured (issue 13).
    seq_read_ci95_pct: float | None = None
    seq_write_ci95_pct: float | None = None
    # Measured by disksleuth with direct I/O (fio --direct=1): advice to do so would be advice to repeat itself.
    measured_direct: bool = False

    @property
    def best_seq_mbps(self) -> float | None:
        known = [v for v in (self.seq_read_mbps, self.seq_write_mbps) if v is not None]
        return max(known) if known else None

    @property
    def best_seq_interval(self) -> tuple[float, float] | None:
        """(low, high) MB/s of the best sequential figure's 95% interval; the point itself when unknown."""
        pairs = [(v, c) for v, c in ((self.seq_read_mbps, self.seq_read_ci95_pct),
                                     (self.seq_write_mbps, self.seq_write_ci95_pct)) if v is not None]  # fmt: skip
        if not pairs:
            return None
        seq, ci = max(pairs, key=lambda p: p[0])
        half = seq * (ci or 0.0) / 100.0
        return max(0.0, seq - half), seq + half  # an interval wider than the figure: throughput is never negative

    def any(self) -> bool:
        return any(
            v is not None for v in (self.seq_read_mbps, self.seq_write_mbps, self.rand_read_iops, self.rand_write_iops)
        )


def figures_from_tests(tests: Sequence[TestResult]) -> Figures:
    """Best sequential MB/s and best 4 KiB random IOPS per direction across a run's tests."""

    def best(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    def ci_of_best(key: str) -> float | None:
        known = [t for t in seq if getattr(t, key) is not None]
        return max(known, key=lambda t: getattr(t, key)).ci95_pct if known else None

    seq = [t for t in tests if t.rw in ("read", "write", "rw", "readwrite") and t.bs_bytes >= 128 * 1024]
    rnd = [t for t in tests if t.rw.startswith("rand") and t.bs_bytes == 4096]
    return Figures(
        seq_read_mbps=best([t.read_mbps for t in seq]),
        seq_write_mbps=best([t.write_mbps for t in seq]),
        rand_read_iops=best([t.read_iops for t in rnd]),
        rand_write_iops=best([t.write_iops for t in rnd]),
        cache_affected=any(t.cache_affected for t in tests),
        seq_read_ci95_pct=ci_of_best("read_mbps"),
        seq_write_ci95_pct=ci_of_best("write_mbps"),
        measured_direct=bool(tests) and all(t.direct for t in tests),
    )


def _interval_text(low: float, high: float, ceiling: float) -> str:
    return f"{low:,.0f}-{high:,.0f} MB/s ({_pct(low, ceiling)}-{_pct(high, ceiling)}% of the link)"


def _pct(part: float, whole: float) -> int:
    return round(100 * part / whole)


def _pct_text(part: float, whole: float) -> str:
    """'13%', and for a tiny share '0.083%' rather than a misleading '0%'."""
    share = 100 * part / whole
    return f"{share:.2g}%" if 0 < share < 1 else f"{round(share)}%"


def _link_name(label: str) -> str:
    """'PCIe 2.0 x1 link'; a label that already says link ('SATA 3 Gb/s link') is not given a second one."""
    return label if label.rstrip().lower().endswith("link") else f"{label} link"


def _iops_mbps(iops: float) -> float:
    return iops * RANDOM_BS_BYTES / 1e6


def _faster_path_hint(chain: LinkChain) -> str:
    """What lifts a link-bound figure when the path itself offers nothing faster, by kind of link."""
    kind = chain.bottleneck.hop.kind if chain.bottleneck else None
    if kind == "sata":
        return "Only a faster path lifts this: a SATA 6 Gb/s port and cable, or an NVMe drive for more."
    if kind == "usb":
        return "Only a faster path lifts this: a USB 3 port (blue or marked SS) and an enclosure with UAS."
    if kind == "mmc":
        return (
            "Only a faster bus lifts this: a reader and card with a faster bus mode (UHS-I SDR104, UHS-II), "
            "or eMMC/NVMe storage."
        )
    return "Only a faster path lifts this: a slot or port with more lanes or a newer generation."


def link_limited(device: Device, chain: LinkChain, figures: Figures) -> Finding | None:
    seq, ceiling, interval = figures.best_seq_mbps, chain.current_ceiling_mbps, figures.best_seq_interval
    if seq is None or interval is None or ceiling is None or chain.bottleneck is None:
        return None
    # Decided on the 95% interval, not the point: all of it at or past 80% of the ceiling is link-limited,
    # an interval across the line is said to be undecided, all of it above the ceiling is cache_suspected.
    low, high = interval
    threshold = LINK_LIMITED_SHARE * ceiling
    if high < threshold or low > ceiling * CACHE_TOLERANCE:
        return None
    straddles = low < threshold
    capable = chain.capable_ceiling_mbps
    # A warning when there is headroom: the drive, or the same path at its best rates, could go faster than this link.
    headroom = _headroom(device, chain)
    hop = chain.bottleneck
    if straddles:
        message = (
            f"Sequential throughput {fmt_rate(seq)} is {_pct(seq, ceiling)}% of the {_link_name(hop.label)}'s "
            f"~{ceiling:,.0f} MB/s, but its 95% interval, {_interval_text(low, high, ceiling)}, straddles the "
            f"{LINK_LIMITED_SHARE:.0%} line: the link may be the bottleneck."
        )
    else:
        message = (
            f"Sequential throughput {fmt_rate(seq)} is {_pct(seq, ceiling)}% of the {_link_name(hop.label)}'s "
            f"~{ceiling:,.0f} MB/s: the link is the bottleneck, not the drive."
        )
    if hop.fact:
        message += f" ({hop.fact}.)"
    if headroom is not None:
        hint = f"{headroom[1][0].upper()}{headroom[1][1:]}: see the link findings for how."
    else:
        hint = _faster_path_hint(chain)
    if straddles:
        hint = (
            "A tighter interval decides it: measure longer, e.g. disksleuth bench TARGET --profile standard "
            "--time 10 (an interval narrows with the square root of the time measured). " + hint
        )
    evidence = {
        "seq_mbps": seq,
        "ceiling_mbps": ceiling,
        "share_pct": _pct(seq, ceiling),
        "link": hop.label,
        "capable_ceiling_mbps": capable,
    }
    if high > low:
        evidence |= {"seq_interval_mbps": [round(low, 1), round(high, 1)], "straddles_threshold": straddles}
    return Finding(
        code="link_limited",
        severity="info" if straddles or headroom is None else "warn",
        message=message,
        evidence=evidence,
        hint=hint,
    )


def cache_suspected(device: Device, chain: LinkChain, figures: Figures) -> Finding | None:
    seq, ceiling, interval = figures.best_seq_mbps, chain.current_ceiling_mbps, figures.best_seq_interval
    reasons = []
    straddles = False
    if interval is not None and ceiling is not None and seq is not None:  # an interval is around a seq figure
        low, high = interval
        link = chain.bottleneck.label if chain.bottleneck else "link"
        if low > ceiling * CACHE_TOLERANCE:
            reasons.append(f"{fmt_rate(seq)} is above the {link} ceiling of ~{ceiling:,.0f} MB/s")
        elif high > ceiling * CACHE_TOLERANCE:
            straddles = True
            reasons.append(
                f"{fmt_rate(seq)} may be above the {link} ceiling of ~{ceiling:,.0f} MB/s: its 95% interval, "
                f"{_interval_text(low, high, ceiling)}, straddles {ceiling * CACHE_TOLERANCE:,.0f} MB/s "
                f"(the ceiling plus {round((CACHE_TOLERANCE - 1) * 100)}% for rounding in the link arithmetic)"
            )
    # Random IOPS move data too: 4 KiB each, through the same link.
    iops_over = _iops_over_link(chain, figures)
    for direction, iops, mbps in iops_over:
        link = chain.bottleneck.label if chain.bottleneck else "link"
        reasons.append(
            f"{iops:,.0f} random {direction} IOPS x 4 KiB = {fmt_rate(mbps)}, above the {link} ceiling of "
            f"~{ceiling:,.0f} MB/s"
        )
    # virtio-blk and other virtual disks report rotational=1 by default; only real transports count.
    if device.rotational and device.transport in ("sata", "sas", "scsi", "usb"):
        if seq is not None and seq > HDD_MAX_SEQ_MBPS:
            reasons.append(f"{seq:,.0f} MB/s is more than any spinning disk streams (~{HDD_MAX_SEQ_MBPS} MB/s)")
        iops = max(v for v in (figures.rand_read_iops, figures.rand_write_iops, 0) if v is not None)
        if iops > HDD_MAX_RANDOM_IOPS:
            reasons.append(f"{iops:,.0f} random IOPS is more than a spinning disk can seek")
    host = _host_caches_writes(device, figures)
    host_cache, host_unsure = (host[0], not host[1]) if host else (None, False)
    if host_cache:
        reasons.append(host_cache)
    if not reasons:
        return None
    if figures.measured_direct:
        # disksleuth measured with fio --direct=1: this system's page cache is not it; never advise a rerun of itself.
        hint = (
            "These figures were measured with direct I/O (fio --direct=1), so this system's page cache is not "
            "the cause; a cache below it is: the host's, a RAID controller's or a compressing layer's."
        )
    else:
        hint = (
            "Measure with direct I/O (fio --direct=1), a test file larger than RAM and the drive's cache, and "
            "incompressible data. Tools that read through the page cache, or compressing file systems, inflate "
            "results."
        )
    if host_cache:
        hint += (
            " On a virtual disk the host decides: its page cache (QEMU cache=writeback, the default for many "
            "setups) takes writes at memory speed; measure on the host, or give the guest cache=none."
        )
    if host_cache is not None and len(reasons) == 1:
        # No hardware ceiling is known on a virtual disk: only that writes beat reads, which real media do not.
        message = host_cache[0].upper() + host_cache[1:] + "."
    elif straddles and len(reasons) == 1:
        message = "The result may be faster than the hardware allows: " + "; ".join(reasons) + "."
    else:
        message = "The result is faster than the hardware allows: " + "; ".join(reasons) + "."
    iops_evidence: dict[str, float | str] = {f"rand_{d}_mbps": round(m, 1) for d, _, m in iops_over}
    if iops_over:
        iops_evidence["arithmetic"] = "; ".join(
            f"{i:,.0f} {d} IOPS x {RANDOM_BS_BYTES} B = {m:,.1f} MB/s" for d, i, m in iops_over
        )
    return Finding(
        code="cache_suspected",
        severity="info" if (straddles or host_unsure) and len(reasons) == 1 else "warn",
        message=message,
        evidence={
            **iops_evidence,
            "seq_mbps": seq,
            "ceiling_mbps": ceiling,
            "rotational": device.rotational,
            "rand_read_iops": figures.rand_read_iops,
            "rand_write_iops": figures.rand_write_iops,
            **(
                {"seq_interval_mbps": [round(interval[0], 1), round(interval[1], 1)], "straddles_threshold": straddles}
                if interval is not None and interval[1] > interval[0]
                else {}
            ),
            # within_intervals: the lowest write beats the highest read by HOST_CACHE_MARGIN or more (sure).
            **(
                {"writes_beat_reads_within_intervals": not host_unsure, "write_read_intervals_overlap": host[2]}
                if host
                else {}
            ),
        },
        hint=hint,
    )


def _iops_over_link(chain: LinkChain, figures: Figures) -> list[tuple[str, float, float]]:
    """(direction, IOPS, MB/s) for each 4 KiB random figure that moves more data than the link carries."""
    ceiling = chain.current_ceiling_mbps
    if ceiling is None:
        return []
    return [
        (direction, iops, _iops_mbps(iops))
        for direction, iops in (("read", figures.rand_read_iops), ("write", figures.rand_write_iops))
        if iops is not None and _iops_mbps(iops) > ceiling * CACHE_TOLERANCE
    ]


# Writes are normally no faster than reads on real media; on a virtual disk the host's cache explains it.
HOST_CACHE_MARGIN = 1.10
VIRTUAL_DISKS = ("virtio", "xen", "vmbus")


def _shown_mbps(mbps: float) -> str:
    """An interval bound as the sentence prints it: whole MB/s, three significant digits below 10 MB/s."""
    return f"{mbps:,.0f}" if mbps >= 10 else f"{mbps:.3g}"


def _shown_value(mbps: float) -> float:
    return float(_shown_mbps(mbps).replace(",", ""))


def _margin_text(low: float, high: float) -> str:
    """How far `low` is above `high`, never overstated (floored to 0.1%): '3.6%', 'less than 0.1%'."""
    tenths = math.floor(1000 * (low / high - 1))
    return "less than 0.1%" if tenths < 1 else f"{tenths / 10:g}%"


def _host_caches_writes(device: Device, figures: Figures) -> tuple[str, bool, bool] | None:
    """(reason, sure, intervals overlap) when sequential writes beat reads on a virtual disk.

    Worded by what the 95% intervals show (issue 13, issue 20): they overlap (the writes may not be faster at
    all); they are apart but the lowest write beats the highest read by less than HOST_CACHE_MARGIN (faster,
    by a small margin); or apart by more (sure). Decided on the bounds as printed, so a sentence never says
    "overlap" beside a write bound above the read bound, nor "apart" beside two equal bounds."""
    r, w = figures.seq_read_mbps, figures.seq_write_mbps
    if device.transport not in VIRTUAL_DISKS or r is None or w is None or w <= r * HOST_CACHE_MARGIN:
        return None
    w_half, r_high = w * (figures.seq_write_ci95_pct or 0.0) / 100, r * (1 + (figures.seq_read_ci95_pct or 0.0) / 100)
    w_low, w_high = max(0.0, w - w_half), w + w_half  # an interval wider than the figure: throughput is never negative
    shown_w_low, shown_r_high = _shown_value(w_low), _shown_value(r_high)
    disk = f"on a {device.transport} virtual disk"
    sure_text = ": the host is probably caching the writes in its memory"
    if w_half == 0 and r_high == r:  # given figures (explain): no interval, the points decide
        return f"sequential writes ({fmt_rate(w)}) beat reads ({fmt_rate(r)}) {disk}" + sure_text, True, False
    if shown_w_low <= shown_r_high:
        return (
            f"sequential writes ({fmt_rate(w)}) may beat reads ({fmt_rate(r)}) {disk}, but their 95% intervals "
            f"overlap (writes {_shown_mbps(w_low)}-{_shown_mbps(w_high)} MB/s, reads up to {_shown_mbps(r_high)} "
            "MB/s): the host may be caching the writes in its memory"
        ), False, True
    bounds = f"writes {_shown_mbps(w_low)}-{_shown_mbps(w_high)} MB/s, reads up to {_shown_mbps(r_high)} MB/s"
    if shown_w_low > shown_r_high * HOST_CACHE_MARGIN:
        return (
            f"sequential writes ({fmt_rate(w)}) beat reads ({fmt_rate(r)}) {disk}, "
            f"and their 95% intervals are well apart ({bounds})" + sure_text,
            True,
            False,
        )
    margin = round((HOST_CACHE_MARGIN - 1) * 100)
    return (
        f"sequential writes ({fmt_rate(w)}) beat reads ({fmt_rate(r)}) {disk} and their 95% intervals do not "
        f"overlap ({bounds}), but by a small margin (the lowest write is {_margin_text(shown_w_low, shown_r_high)} "
        f"above the highest read; more than {margin}% would make it certain): the host may be caching the writes in "
        "its memory"
    ), False, False


def memory_backed(
    memory: MemoryBacking | None, figures: Figures, held: Sequence[io_limits.Held] = (), others: Sequence[str] = ()
) -> Finding | None:
    """The target stands on RAM: its figures measure memory (and zram's compressor), never storage. Figures a
    cgroup I/O limit held (io_limit) measure the limit instead: both are said, and never that they measure RAM;
    `others`: the tests no limit held, which do."""
    if memory is None:
        return None
    seq = figures.best_seq_mbps
    measured = f" ({seq:,.0f} MB/s)" if seq is not None else ""
    ram = "RAM" + (" through zram's compressor" if memory.kind == "zram" else "")
    if held:
        capped = ", ".join(dict.fromkeys(f"{h.test_id} {h.figure_text}" for h in held))
        message = (
            f"The target is backed by memory ({memory.description}): it is not storage, and what it holds is lost at "
            f"power-off. A cgroup I/O limit held its figures ({capped}; see io_limit): those measure the limit, not "
            f"{ram}."
        )
        if others:
            message += f" The other tests ({', '.join(others)}) measure {ram}."
    else:
        message = (
            f"The target is backed by memory ({memory.description}): these figures{measured} measure {ram}, not "
            "storage, and are lost at power-off."
        )
    if memory.never_written_reads_fast:
        message += " Reads of space never written return zero pages without any work, faster still."
    return Finding(
        code="memory_backed",
        severity="warn",
        message=message,
        evidence={"kind": memory.kind, "chain": list(memory.chain), "seq_mbps": seq},
        hint=(
            "To measure a disk, point disksleuth at a directory or device on that disk. As a RAM reference, "
            "this is fine: the riscos profile and `compare --relative-to` use one on purpose."
        ),
    )


def is_buffered_loop(device: Device | None) -> bool:
    """A loop device with direct I/O off (loop/dio 0): the loop driver goes through the page cache."""
    return device is not None and device.transport == "loop" and device.loop_direct_io is False


def _loop_backing(device: Device) -> str:
    """'/var/tmp/x.img on vda', or what of it is known."""
    backing = device.backing_file or "its backing file"
    on = f" on {device.backing_device}" if device.backing_device and device.backing_device != device.name else ""
    return backing + on


def buffered_loop_note(device: Device | None) -> str | None:
    """The bench's note for a buffered loop device under the target: the words beside buffered_loop's."""
    if device is None or not is_buffered_loop(device):
        return None
    return (
        f"{device.name} is a loop device with direct I/O off (loop/dio 0) over {_loop_backing(device)}: "
        "figures go through the page cache (marked cache_affected)"
    )


def buffered_loop(
    device: Device, figures: Figures, memory: MemoryBacking | None, held: Sequence[io_limits.Held] = ()
) -> Finding | None:
    """A loop device without direct I/O measures the page cache, not the disk beneath (issue 20). On memory,
    memory_backed already says what was measured. Figures a cgroup I/O limit held measure the limit (issue 36)."""
    if not is_buffered_loop(device) or memory is not None:
        return None
    seq = figures.best_seq_mbps
    measured = f" ({fmt_rate(seq)})" if seq is not None else ""
    beneath = device.backing_device if device.backing_device and device.backing_device != device.name else None
    said = f"so these figures{measured} measure memory, not {beneath or 'the disk'}."
    if held:
        capped = ", ".join(dict.fromkeys(f"{h.test_id} {h.figure_text}" for h in held))
        said = (
            f"so its figures measure memory, not {beneath or 'the disk'}, except where a cgroup I/O limit held them "
            f"({capped}; see io_limit): those measure the limit."
        )
    return Finding(
        code="buffered_loop",
        severity="warn",
        message=(
            f"{device.path} is a loop device with direct I/O off (loop/dio 0) over {_loop_backing(device)}: the "
            f"loop driver reads and writes its backing file through the page cache, {said}"
        ),
        evidence={
            "loop_direct_io": False,
            "backing_file": device.backing_file,
            "backing_device": device.backing_device,
            "seq_mbps": seq,
        },
        hint=(
            f"Switch direct I/O on (losetup --direct-io=on {device.path}), or measure the disk itself"
            + (f" (disksleuth check /dev/{beneath}, or a directory on it)." if beneath else ".")
        ),
    )


def raw_device_reads(
    target_kind: str | None, tests: Sequence[TestResult], memory: MemoryBacking | None
) -> Finding | None:
    """On a raw device the read tests read whatever is there; unwritten or trimmed space reads fast."""
    if target_kind != "block" or memory is not None or not any(not t.writes for t in tests):
        return None
    return Finding(
        code="raw_device_reads",
        severity="info",
        message=(
            "The read tests read whatever is on the device. Areas never written or trimmed (a new or secure-erased "
            "SSD, thin or sparse volumes) are answered without touching the flash and read faster than real data."
        ),
        evidence={"read_tests": [t.id for t in tests if not t.writes]},
        hint="For figures of real data, read a region that holds data, or fill it first (the flash profile's "
        "--precondition does).",
    )


def poor_random_write(figures: Figures) -> Finding | None:
    iops = figures.rand_write_iops
    if iops is None or iops >= POOR_RANDOM_WRITE_IOPS:
        return None
    return Finding(
        code="poor_random_write",
        severity="warn",
        message=(
            f"4K random writes run at {iops:,.0f} IOPS, slower than a 5400 rpm laptop disk (~90 IOPS). "
            "An OS or a database on this will stall on every small write."
        ),
        evidence={"rand_write_iops": iops, "threshold_iops": POOR_RANDOM_WRITE_IOPS},
        hint=(
            "Keep the OS and databases on an SSD (SATA, NVMe, or a USB SSD with UAS). For flash cards, an A2-rated "
            "card or a high-endurance card does far better; move logs and swap off the card."
        ),
    )


def sd_app_class(device: Device, figures: Figures) -> Finding | None:
    if device.transport != "mmc" or (figures.rand_read_iops is None and figures.rand_write_iops is None):
        return None
    card = card_claims.card_of(device)
    if card is not None and card.app_class:  # the card's own claim is judged instead: card_claim_unmet
        return None
    r, w = figures.rand_read_iops, figures.rand_write_iops

    def meets(cls: tuple[int, int]) -> bool:
        return (r is None or r >= cls[0]) and (w is None or w >= cls[1])

    if meets(SD_A2):
        return None
    below_a1 = not meets(SD_A1)
    measured = ", ".join(f"{label} {v:,.0f} IOPS" for label, v in (("read", r), ("write", w)) if v is not None)
    cls = "A1 (1,500 read / 500 write IOPS)" if below_a1 else "A2 (4,000 read / 2,000 write IOPS)"
    return Finding(
        code="sd_app_class",
        severity="warn" if below_a1 else "info",
        message=f"Random 4K performance ({measured}) is below the SD Application Performance Class {cls}.",
        evidence={"rand_read_iops": r, "rand_write_iops": w, "a1_iops": list(SD_A1), "a2_iops": list(SD_A2)},
        hint="For an OS card choose one rated A1, better A2, from a known brand; check it with the flash profile.",
    )


def thermal_throttling(
    health: Health | None,
    health_changes: dict[str, tuple[int, int]],
    temperature_series: Sequence[tuple[float, float]],
    tests: Sequence[TestResult],
) -> Finding | None:
    """Hot (warning threshold reached, or a throttle counter grew) AND a throughput drop in the same run."""
    peak = max((c for _, c in temperature_series), default=None)
    limit = health.temperature_warning_c if health else None
    hot_reasons = []
    if peak is not None and limit is not None and peak >= limit:
        hot_reasons.append(f"the temperature reached {peak:g} °C (warning threshold {limit:g} °C)")
    grown = {k: v for k, v in health_changes.items() if k.startswith("throttle.")}
    for key, (before, after) in grown.items():
        hot_reasons.append(f"{key.removeprefix('throttle.').replace('_', ' ')} grew from {before} to {after}")
    if not hot_reasons:
        return None
    # steady.annotate found each test's burst and sustained figures, with the ramp left out.
    dips = [
        f"{t.id} fell from {t.burst_mbps:,.0f} to {t.sustained_mbps:,.0f} MB/s"
        for t in tests
        if t.burst_mbps is not None and t.sustained_mbps is not None and t.sustained_mbps < t.burst_mbps
    ]
    if not dips:
        return None
    return Finding(
        code="thermal_throttling",
        severity="warn",
        message="The drive throttled: " + "; ".join(hot_reasons) + ", while " + "; ".join(dips) + ".",
        evidence={
            "peak_temperature_c": peak,
            "warning_c": limit,
            "counters": {k: list(v) for k, v in grown.items()},
            "dips": dips,
        },
        hint="Give it airflow or a heatsink (M.2 drives often need one); check that a fan covers the slot.",
    )


def ok_finding(device: Device, chain: LinkChain, figures: Figures) -> Finding:
    seq = figures.best_seq_mbps
    if seq is not None and chain.current_ceiling_mbps:
        # No finding with a ceiling means the figure is below the link_limited line: the link is not what limits it.
        share = _pct(seq, chain.current_ceiling_mbps)
        link = _link_name(chain.bottleneck.label) if chain.bottleneck else "link"
        message = (
            f"Nothing wrong found with the link: {fmt_rate(seq)} is "
            f"{_pct_text(seq, chain.current_ceiling_mbps)} of the ~{chain.current_ceiling_mbps:,.0f} MB/s {link}, "
            f"so the link is not the bottleneck here: {NOT_THE_LINK}."
        )
        evidence: dict[str, float | None] = {
            "seq_mbps": seq,
            "ceiling_mbps": chain.current_ceiling_mbps,
            "share_pct": share,
        }
    elif chain.current_ceiling_mbps is None and chain.hops and chain.hops[0].hop.kind == "virtual":
        over = f" over {_loop_backing(device)}" if device.transport == "loop" and device.backing_file else ""
        message = (
            f"Nothing wrong found. {device.path} is a {device.transport} device{over} with no physical link, "
            "so there is no link ceiling to compare against."
        )
        evidence = {"seq_mbps": seq, "ceiling_mbps": None}
    else:
        message = "Nothing wrong found."
        evidence = {"seq_mbps": seq, "ceiling_mbps": chain.current_ceiling_mbps}
    return Finding("ok", "ok", message, evidence, "", device.name)


def verdicts(
    device: Device,
    chain: LinkChain,
    figures: Figures,
    *,
    health: Health | None = None,
    health_changes: dict[str, tuple[int, int]] | None = None,
    temperature_series: Sequence[tuple[float, float]] = (),
    tests: Sequence[TestResult] = (),
    memory: MemoryBacking | None = None,
    target_kind: str | None = None,
) -> list[Finding]:
    """Static link findings, then dynamic and health ones; `ok` when nothing but context applies.

    A memory-backed target is never a bare `ok`: `memory_backed` (warn) says what was measured. The chain's cgroup
    I/O limits (issue 36) are judged by io_limit; the link findings judge the links alone."""
    changes = health_changes or {}
    held = io_limits.held_figures(tests, io_limits.limits_of(chain))
    chain = io_limits.without_limits(chain)
    found = list(static_findings(device))
    for f in (
        memory_backed(memory, figures, held, [t.id for t in tests if t.id not in {h.test_id for h in held}]),
        io_limits.io_limit(held),
        buffered_loop(device, figures, memory, held),
        link_limited(device, chain, figures),
        cache_suspected(device, chain, figures),
        poor_random_write(figures),
        sd_app_class(device, figures),
        card_claims.card_claim_unmet(device, figures.seq_write_mbps, figures.rand_read_iops, figures.rand_write_iops),
        thermal_throttling(health, changes, temperature_series, tests),
        foreign_io(tests),
        reference_exceeded(tests),
    ):
        if f is not None:
            found.append(replace(f, device=device.name))
    if health is not None:
        seen = {f.code for f in found}
        # sysfs's SATA link finding knows the port's maximum too; smartctl's gives way to it.
        found.extend(
            replace(f, device=device.name)
            for f in health_findings(health, changes)
            if not (f.code == "sata_link_downgraded" and f.code in seen)
            # a throttle counter that grew with a drop in throughput is thermal_throttling, which says more
            and not (f.code == "thermal_throttled" and "thermal_throttling" in seen)
        )
    context = raw_device_reads(target_kind, tests, memory)
    if not found:
        found.append(ok_finding(device, chain, figures))
    if context is not None:
        found.append(replace(context, device=device.name))
    return found


@dataclass(frozen=True)
class Assessment:
    """What `check` and `bench` say about a run: the chain it was judged against, findings, one-line summary."""

    device: Device
    chain: LinkChain
    findings: list[Finding]
    summary: str


def assess_run(
    run: Run,
    device: Device,
    *,
    memory: MemoryBacking | None = None,
    target_kind: str | None = None,
    limits: Sequence[IoLimit] | None = None,
) -> Assessment:
    """The verdicts on a finished run, the same for `check` and `bench` (pure). `limits`: the cgroup I/O limits
    the run was under (analysis.limits.target_limits), None when they could not be read."""
    health = run.health_after or run.health_before
    device = with_drive_sata_max(device, health)
    chain = io_limits.with_limits(link_chain(device.hops), limits)
    figures = figures_from_tests(run.tests)
    findings = verdicts(
        device,
        chain,
        figures,
        health=health,
        health_changes=dict(run.health_changes),
        temperature_series=run.temperature_series,
        tests=run.tests,
        memory=memory,
        target_kind=target_kind,
    )
    summary = summary_line(device, io_limits.without_limits(chain), figures)
    held = io_limits.limit_summary(io_limits.held_figures(run.tests, io_limits.limits_of(chain)))
    if held is not None:
        summary = f"{summary}; {held}"
    if memory is not None:
        summary = f"memory, not storage: {summary}"
    return Assessment(device, chain, findings, summary)


def with_drive_sata_max(device: Device, health: Health | None) -> Device:
    """The drive's own SATA maximum (smartctl) on the SATA hop, so sata_link_downgraded can say warn."""
    if health is None or health.sata_speed_max_gbps is None:
        return device
    hops = tuple(
        replace(h, drive_max_gbps=health.sata_speed_max_gbps) if isinstance(h, SataHop) else h for h in device.hops
    )
    return replace(device, hops=hops)


NOT_THE_LINK = "the drive, the file system, the queue depth or the test sets this figure"


def _link_position(chain: LinkChain, figures: Figures) -> str | None:
    """Where the figures stand against the link, judged as link_limited and cache_suspected judge them:
    'above' (more than it can carry), 'at' (the link is, or may be, the limit), 'below', or None."""
    ceiling, interval = chain.current_ceiling_mbps, figures.best_seq_interval
    if ceiling is None or chain.bottleneck is None:
        return None
    if _iops_over_link(chain, figures) or (interval is not None and interval[0] > ceiling * CACHE_TOLERANCE):
        return "above"
    if interval is None:
        return None
    return "below" if interval[1] < LINK_LIMITED_SHARE * ceiling else "at"


def summary_line(device: Device, chain: LinkChain, figures: Figures) -> str:
    """One line: what it reads, what share of which link, and whether the link is what limits it.

    It agrees with the findings: above the link it says so (cache_suspected), well below it says the link
    is not the bottleneck, and only a link-bound figure is told what a faster link would carry."""
    primary = figures.seq_read_mbps if figures.seq_read_mbps is not None else figures.seq_write_mbps
    verb = "reads" if figures.seq_read_mbps is not None else "writes"
    ceiling = chain.current_ceiling_mbps
    position = _link_position(chain, figures)
    link = _link_name(chain.bottleneck.label) if chain.bottleneck else "link"
    def above(share: str = "") -> str:
        return f"more than its {link} can carry (~{ceiling:,.0f} MB/s{share}): a cache answered, not the drive"

    said_above = False
    parts = []
    if primary is not None:
        head = f"{verb} {fmt_rate(primary)}"
        if ceiling and chain.bottleneck:
            if position == "above" and primary > ceiling * CACHE_TOLERANCE:
                head += f", {above(', ' + _pct_text(primary, ceiling))}"
                said_above = True
            else:
                head += f", {_pct_text(primary, ceiling)} of its {link} ({ceiling:,.0f} MB/s)"
        if figures.seq_read_mbps is not None and figures.seq_write_mbps is not None:
            head += f"{'; ' if said_above else ', '}writes {fmt_rate(figures.seq_write_mbps)}"
        if ceiling is None:
            head += " (no physical link ceiling known)"
        parts.append(head)
    if figures.rand_read_iops is not None or figures.rand_write_iops is not None:
        rnd = " / ".join(
            f"{v:,.0f} {d}"
            for d, v in (("read", figures.rand_read_iops), ("write", figures.rand_write_iops))
            if v is not None
        )
        over = _iops_over_link(chain, figures)
        if over and not said_above:
            rnd += f" IOPS, x 4 KiB = {fmt_rate(max(m for _, _, m in over))}, {above()}"
            said_above = True
        else:
            rnd += " IOPS"
        parts.append(f"4K random {rnd}")
    if position == "above" and not said_above:
        parts.append(f"the best figure is {above()}")
    elif position == "below":
        parts.append(f"the link is not the bottleneck here ({NOT_THE_LINK})")
    elif position == "at":
        could = _headroom(device, chain)
        parts.append("the link is the limit" + (f": {could[1]}" if could else ""))
    return "; ".join(parts) if parts else "no figures to judge"


def _headroom(device: Device, chain: LinkChain) -> tuple[float, str] | None:
    """(MB/s, words) when the drive itself, or the same path at its best rates, could beat the current ceiling."""
    ceiling = chain.current_ceiling_mbps
    if ceiling is None:
        return None
    pcie = [h for h in device.hops if isinstance(h, PcieHop)]
    if pcie and not pcie[0].is_bridge and pcie[0].max_speed_gtps and pcie[0].max_width:
        _, own = pcie_mbps(pcie[0].max_speed_gtps, pcie[0].max_width)
        if own and own > ceiling * 1.05:
            label = pcie_label(pcie[0].max_speed_gtps, pcie[0].max_width)
            return own, f"a {_link_name(label)}, which the drive supports, would carry ~{own:,.0f} MB/s"
    usb = next((h for h in device.hops if isinstance(h, UsbHop)), None)
    if usb and usb.device_max_mbps and usb.device_max_mbps > (usb.speed_mbps or 0):
        label, _, best = usb_mbps(usb.device_max_mbps, usb.driver)
        if best and best > ceiling * 1.05:
            return best, f"a {label} port, which the device supports, would carry ~{best:,.0f} MB/s"
    capable = chain.capable_ceiling_mbps
    if capable and capable > ceiling * 1.05:
        return capable, f"the path could carry ~{capable:,.0f} MB/s at its best rates"
    return None
