"""What a card claims, held against what it does and how it is driven: card_claim_unmet, host_limits_card,
emmc_worn. Pure: a Device's registers (analysis.card_registers) and figures in, findings out.

The classes are minimums the SD Physical Layer Specification 9.10 defines and measures:
  Speed Class (4.13): C2/C4/C6/C10 = 2/4/6/10 MB/s of sequential writing, measured in units of the card's
      allocation unit (AU_SIZE, 4.10.2.4) on free AUs, in recording units the host writes back to back.
  UHS Speed Grade (4.13): U1 = 10 MB/s, U3 = 30 MB/s, the same measure in a UHS-I/UHS-II bus mode (UHS_AU_SIZE).
  Video Speed Class (4.13.4): V6-V90 = 6-90 MB/s, measured in the video AU (VSC_AU_SIZE) with 512 KiB units.
  Application Performance Class (4.16): A1 = 1,500 read / 500 write IOPS, A2 = 4,000 / 2,000, of 4 KiB random
      I/O over a 1 GB range, plus 10 MB/s sustained sequential writing. A2 is measured with the card's command
      queue and cache in use (4.16.2.2); a host that uses neither sees A1-like figures from an A2 card.
The `flash` profile measures them the same way (profiles.py): sequential 1 MiB writes (whole recording units
of any AU) and 4 KiB random I/O at queue depth 1 in the second half of the device.
"""

from __future__ import annotations

from disksleuth.analysis.card_registers import LIFE_EXCEEDED, class_labels, decode_card, faster
from disksleuth.analysis.ceilings import MMC_TIMINGS
from disksleuth.model import Device, Finding
from disksleuth.model.card import Card

TYPE_CHECKING = False  # typing's own flag costs an import at start-up
if TYPE_CHECKING:
    from disksleuth.model.run import Health  # list never loads model/run

A1_IOPS = (1500, 500)  # read, write: SD 4.16, Table 4-80
A2_IOPS = (4000, 2000)
APP_CLASS_SEQ_MBPS = 10.0  # every application class also promises 10 MB/s sustained sequential writing
UHS_GRADE_MBPS = {1: 10.0, 3: 30.0}
LIFE_WARN = 0x09  # 80-90% of the estimated life used
PRE_EOL_WARN, PRE_EOL_URGENT = 0x02, 0x03


def card_of(device: Device) -> Card | None:
    if device.card_registers is None:
        return None
    return decode_card(device.card_registers, device.size_bytes)


def _mbps(timing: str | None) -> float | None:
    return MMC_TIMINGS[timing][1] if timing in MMC_TIMINGS else None


def _mode_label(timing: str | None) -> str:
    return MMC_TIMINGS[timing][0] if timing in MMC_TIMINGS else (timing or "unknown")


def _uhs_mode(timing: str | None) -> bool:
    return timing is None or timing.startswith("sd uhs")  # unknown: the claim is judged


def write_claim(card: Card) -> tuple[float, list[str]] | None:
    """The sequential write rate (MB/s) the card promises in the bus mode it runs in, and the classes that promise
    it. A class is promised only in the modes it is defined for (SD 4.13): Class 10 from High Speed up, the UHS
    grade and the video class in UHS modes; with the mode unknown (no root) every class is held."""
    claims: list[tuple[float, str]] = []
    if card.speed_class and (card.speed_class < 10 or card.timing != "legacy"):
        claims.append((float(card.speed_class), f"C{card.speed_class}"))
    if card.uhs_grade in UHS_GRADE_MBPS and _uhs_mode(card.timing):
        claims.append((UHS_GRADE_MBPS[card.uhs_grade], f"U{card.uhs_grade}"))
    if card.video_class and _uhs_mode(card.timing):
        claims.append((float(card.video_class), f"V{card.video_class}"))
    if card.app_class:
        claims.append((APP_CLASS_SEQ_MBPS, f"A{card.app_class}"))
    if not claims:
        return None
    top = max(rate for rate, _ in claims)
    return top, [label for rate, label in claims if rate == top]


def _not_held(card: Card) -> list[str]:
    """The classes the bus mode puts out of reach, in words: their shortfall is host_limits_card's to tell."""
    out = []
    mode = _mode_label(card.timing)
    if card.speed_class == 10 and card.timing == "legacy":
        out.append(f"C10 (defined from High Speed up; the host runs {mode})")
    if not _uhs_mode(card.timing):
        out += [f"{c} (defined in UHS modes; the host runs {mode})" for c in class_labels(card) if c[0] in "UV"]
    return out


def a2_usable(card: Card) -> bool:
    """A2's figures need the host to run the card's command queue and cache (SD 4.16.2.2)."""
    return bool(card.command_queue_used) and bool(card.cache_used)


def card_claim_unmet(
    device: Device, seq_write_mbps: float | None, rand_read_iops: float | None, rand_write_iops: float | None
) -> Finding | None:
    """Measured or given figures below a class the card claims (warn)."""
    card = card_of(device)
    if card is None or card.kind != "sd":
        return None
    short: list[str] = []
    evidence: dict[str, object] = {"claimed": class_labels(card)}
    claim = write_claim(card)
    if claim is not None and seq_write_mbps is not None and seq_write_mbps < claim[0]:
        short.append(
            f"sequential writes ran at {seq_write_mbps:,.1f} MB/s, below the {claim[0]:g} MB/s that "
            f"{'/'.join(claim[1])} promise{'s' if len(claim[1]) == 1 else ''}"
        )
        evidence.update(seq_write_mbps=seq_write_mbps, claimed_write_mbps=claim[0])
    a2_note = ""
    if _not_held(card):
        evidence["not_held"] = _not_held(card)
        a2_note = " Not held here: " + "; ".join(_not_held(card)) + "."
    if card.app_class:
        judged = 2 if card.app_class >= 2 and a2_usable(card) else 1
        if card.app_class >= 2 and judged == 1:
            a2_note += (
                " The card claims A2, but A2's 4,000/2,000 IOPS need the host to run its command queue and cache, "
                f"and this kernel {_host_use_words(card)}: it is held to A1, which A2 includes."
            )
        need_r, need_w = A2_IOPS if judged == 2 else A1_IOPS
        for direction, value, need in (("read", rand_read_iops, need_r), ("write", rand_write_iops, need_w)):
            if value is not None and value < need:
                short.append(f"4K random {direction}s ran at {value:,.0f} IOPS, below A{judged}'s {need:,}")
                evidence[f"rand_{direction}_iops"] = value
                evidence[f"claimed_{direction}_iops"] = need
        evidence["app_class_judged"] = f"A{judged}"
    if not short:
        return None
    causes = _causes(card, claim[0] if claim is not None else None)
    evidence["likely_causes"] = causes
    return Finding(
        code="card_claim_unmet",
        severity="warn",
        message=(
            f"The card claims {' '.join(class_labels(card))}, but "
            + "; ".join(short)
            + "."
            + a2_note
            + " Likely causes, most likely first: "
            + "; ".join(f"({i}) {c}" for i, c in enumerate(causes, 1))
            + "."
        ),
        evidence=evidence,
        hint=(
            "Run the flash profile on the card itself (disksleuth check /dev/mmcblkN --profile flash --destructive "
            "on an empty card, or a directory on it), which measures the way the classes are defined. "
            "Check the bus mode with root (debugfs ios), then the capacity with disksleuth verify."
        ),
        device=device.name,
    )


def _host_use_words(card: Card) -> str:
    cq = {True: "runs", False: "does not run", None: "may not run"}[card.command_queue_used]
    cache = {True: "uses", False: "does not use", None: "may not use"}[card.cache_used]
    return f"{cq} the card's command queue and {cache} its cache"


def _causes(card: Card, need_mbps: float | None = None) -> list[str]:
    """The likely causes of a shortfall, in order: the bus mode, a worn or counterfeit card, a reader. A bus
    mode that carries the claim with room to spare is named as ruled out, last."""
    causes = []
    now = _mbps(card.timing)
    carries = now is not None and need_mbps is not None and now >= 2 * need_mbps
    if carries:
        pass
    elif card.timing is None:
        causes.append("the host's bus mode (unknown without root: debugfs ios tells which mode the card runs in)")
    elif card.card_max_timing and faster(card.card_max_timing, card.timing):
        causes.append(
            f"the host's bus mode: {_mode_label(card.timing)} (~{now:g} MB/s) where the card takes "
            f"{_mode_label(card.card_max_timing)}; a speed class is only promised in the mode it is defined for"
            if now
            else f"the host's bus mode ({card.timing})"
        )
    else:
        causes.append(f"the host's bus mode: {_mode_label(card.timing)}" + (f" (~{now:g} MB/s)" if now else ""))
    causes.append("a worn card (writes slow down as flash wears) or a counterfeit one (check with disksleuth verify)")
    causes.append("a card reader or adapter between the card and the host")
    if carries:
        causes.append(f"not the bus mode: {_mode_label(card.timing)} (~{now:g} MB/s) carries the claim")
    return causes


def host_limits_card(device: Device) -> Finding | None:
    """The card takes a faster bus mode than the host runs it in (info)."""
    card = card_of(device)
    if card is None or card.timing is None or card.card_max_timing is None:
        return None
    if not faster(card.card_max_timing, card.timing):
        return None
    now, best = _mbps(card.timing), _mbps(card.card_max_timing)
    host = card.host_max_timing
    if host is not None and not faster(host, card.timing):
        why = f"the host controller offers nothing faster than {_mode_label(card.timing)} (debugfs caps)"
        # The card's own mode, not both families' ("UHS-I ..., or HS200/HS400 for eMMC" was said of an SD card).
        hint = (
            f"Use a host or card reader that supports {_mode_label(card.card_max_timing)}."
            if card.kind == "sd"
            else f"Only a host that runs {_mode_label(card.card_max_timing)} reaches the card's speed; a controller's "
            "HS200/HS400 support is often left off in the board's device tree (mmc-hs200-1_8v, mmc-hs400-1_8v)."
        )
    elif host is not None:
        why = (
            f"the host offers {_mode_label(host)} too, so the board or driver holds it back: 1.8 V signalling "
            "unavailable (a device tree 'no-1-8-v', a missing regulator) or a mode the driver turned off after errors"
        )
        dt_modes = "sd-uhs-*" if card.kind == "sd" else "mmc-hs200-*/mmc-hs400-*"
        hint = f"Check dmesg for mmc tuning or voltage-switch errors and the board's device tree ({dt_modes} modes)."
    else:
        why = "the host controller's own limits are unknown (debugfs caps not readable)"
        hint = "Read /sys/kernel/debug/mmcN/caps as root to tell the host's limit from the card's."
    return Finding(
        code="host_limits_card",
        severity="info",
        message=(
            f"The card takes {_mode_label(card.card_max_timing)}"
            + (f" (~{best:g} MB/s)" if best else "")
            + f" but runs in {_mode_label(card.timing)}"
            + (f" (~{now:g} MB/s)" if now else "")
            + f": {why}."
        ),
        evidence={
            "timing": card.timing,
            "clock_hz": card.clock_hz,
            "card_max_timing": card.card_max_timing,
            "host_max_timing": host,
            "current_mbps": now,
            "card_max_mbps": best,
        },
        hint=hint,
        device=device.name,
    )


def _life_words(value: int) -> str:
    if value == 0:
        return "not defined"
    if value >= LIFE_EXCEEDED:
        return "past its estimated life"
    return f"{(value - 1) * 10}-{value * 10}% of its estimated life used"


def emmc_worn(device: Device) -> Finding | None:
    """eMMC wear from DEVICE_LIFE_TIME_EST_TYP_A/B and PRE_EOL_INFO (JESD84-B51 7.4.x; eMMC has no SMART)."""
    card = card_of(device)
    if card is None or card.kind != "mmc":
        return None
    life = [v for v in (card.life_time_a, card.life_time_b) if v is not None]
    eol = card.pre_eol
    critical = any(v >= LIFE_EXCEEDED for v in life) or eol == PRE_EOL_URGENT
    warn = any(v >= LIFE_WARN for v in life) or eol == PRE_EOL_WARN
    if not (critical or warn):
        return None
    parts = []
    if card.life_time_a is not None:
        parts.append(f"type A (SLC areas) 0x{card.life_time_a:02x}: {_life_words(card.life_time_a)}")
    if card.life_time_b is not None:
        parts.append(f"type B (MLC areas) 0x{card.life_time_b:02x}: {_life_words(card.life_time_b)}")
    if eol is not None:
        from disksleuth.analysis.card_registers import PRE_EOL_WORDS

        parts.append(f"pre-EOL 0x{eol:02x}: {PRE_EOL_WORDS.get(eol, 'reserved')}")
    return Finding(
        code="emmc_worn",
        severity="critical" if critical else "warn",
        message=(
            "The eMMC reports wear: " + "; ".join(parts) + ". Type A estimates the SLC (and pseudo-SLC, fast) "
            "blocks, type B the MLC/TLC blocks that hold most data; pre-EOL counts the spare blocks used up."
        ),
        evidence={
            "life_time_a": card.life_time_a,
            "life_time_b": card.life_time_b,
            "pre_eol_info": eol,
        },
        hint=(
            "Back up now. Move writes off it (logs, swap, databases to tmpfs or another disk); plan to replace "
            "the board or module: eMMC is soldered and cannot be swapped."
            if critical
            else "Back up, and cut writes to it (logs, swap); watch it with disksleuth health history."
        ),
        device=device.name,
    )


def card_static_findings(device: Device) -> list[Finding]:
    """The card's findings that need no figures (list, the exporter, check, explain)."""
    return [f for f in (host_limits_card(device), emmc_worn(device)) if f is not None]


def emmc_health(device: Device) -> Health | None:
    """An eMMC's health as `health` and its history keep it: eMMC has no SMART, so its life estimates are its
    wear (percentage_used: the bottom of the worse estimate's 10% step, 100 past its life, so health_worn's 80%
    starts at 0x09 as emmc_worn does; the top of the step warned at 0x08, "70-80% used"), kept and compared
    in the store like a drive's SMART figures."""
    from disksleuth.model.run import Health

    card = card_of(device)
    if card is None or card.kind != "mmc":
        return None
    steps = {"A": card.life_time_a, "B": card.life_time_b}
    known = {k: v for k, v in steps.items() if v}  # 0x00: not defined
    if not known and not card.pre_eol:
        return None
    worst = max(known.values()) if known else None
    source = ", ".join(f"type {k} 0x{v:02x}" for k, v in known.items())
    return Health(
        device=device.path,
        protocol="eMMC",
        model=card.product,
        serial=device.serial,
        firmware=device.firmware,
        capacity_bytes=card.capacity_bytes,
        percentage_used=(worst - 1) * 10 if worst is not None else None,
        percentage_used_source=f"eMMC DEVICE_LIFE_TIME_EST ({source})" if source else None,
        messages=tuple(f"pre-EOL 0x{card.pre_eol:02x}" for _ in (0,) if card.pre_eol is not None),
        # What emmc_worn calls critical, said so `health` judges it alike (health_critical).
        critical_warning=tuple(
            [
                f"eMMC life time estimate type {k} 0x{v:02x}: past its estimated life"
                for k, v in known.items()
                if v >= LIFE_EXCEEDED
            ]
            + (["eMMC pre-EOL 0x03: urgent, 90% of the reserved blocks used"] if card.pre_eol == PRE_EOL_URGENT else [])
        ),
    )
