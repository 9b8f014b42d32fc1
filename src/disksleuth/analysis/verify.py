"""Does a device hold what it says (pure): which offsets to test, what each block holds, and what the read-back means.

A fake card (a counterfeit SD card or USB stick) reports a capacity it does not have. Its controller either wraps
addresses past the real size onto lower ones (it ignores the high address bits, so the wrap is usually at a power of
two), or drops what is written there (reads give zeros, 0xFF or old data), or fails with I/O errors. This is the
model of f3probe (F3, "Fight Flash Fraud", github.com/AltraMayor/f3, GPL-3.0; its idea, none of its code).

How the test tells them apart:
- every block carries its own offset, the run's nonce and a checksum, so a block read back at another offset is
  recognised as that offset's ("wrapped"), an earlier run's block as stale, anything else as zeros, erased or garbage;
- blocks are written from the highest offset down: when two offsets share one place, the lower (real) one is written
  last and keeps it, and the higher one reads back the lower one's block, so the failure lands past the real size,
  never below it;
- the offsets are 0, the last block, every power of two and the block just below it (level 0, always), then an even
  spread at a power-of-two step: a wrap at any multiple of the step maps each spread block past it onto another
  spread block below it, which then fails it.

A device whose own cache holds every test block answers from the cache; f3probe measures the cache first, this
test does not (it writes a few MiB, more than the caches of the fakes f3's authors took apart)."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping, Sequence

from disksleuth.model import Finding
from disksleuth.model.verify import (
    ERASED,
    FAILED_STATES,
    GARBAGE,
    HELD,
    READ_ERROR,
    STALE,
    WRAPPED,
    WRITE_ERROR,
    ZEROS,
    BlockOutcome,
    Probe,
    VerifyVerdict,
)
from disksleuth.units import fmt_bytes

MAGIC = b"DSVERIF1"
NONCE_BYTES = 16
_HEADER = struct.Struct("<8s16sQQ")  # magic, nonce, offset, block size
_DIGEST_BYTES = 16
BLOCK_BYTES = 4096  # one page: aligned for O_DIRECT on 512 and 4096-byte sectors
QUICK_SPREAD = 64
FULL_SPREAD = 1024
EXAMPLES = 8

# Words a user sees, in one place.
STATE_WORDS = {
    WRAPPED: "wrapped to a lower address (another offset's block read back)",
    ZEROS: "lost (read back as zeros)",
    ERASED: "lost (read back as erased flash, 0xFF)",
    STALE: "lost (an earlier test's block read back: the write was dropped)",
    GARBAGE: "lost (garbage read back)",
    WRITE_ERROR: "write errors",
    READ_ERROR: "read errors",
}
FAKE_HINT = (
    "store nothing past {usable} on it: data written there is lost. A card or stick that claims more than it holds is "
    "counterfeit (return it); to use what it has, make one partition no larger than {usable}"
)


def block_size(logical_block_bytes: int | None) -> int:
    return max(BLOCK_BYTES, logical_block_bytes or 0)


def plan_probes(claimed_bytes: int, block_bytes: int, spread: int) -> list[Probe]:
    """The offsets to test, highest first (the order they are written in), each with its level."""
    if claimed_bytes < 2 * block_bytes:
        return [Probe(0, 0)] if claimed_bytes >= block_bytes else []
    last = (claimed_bytes - block_bytes) // block_bytes * block_bytes
    levels: dict[int, int] = {0: 0, last: 0}
    p = block_bytes
    while p <= last:
        levels[p] = 0
        levels[p - block_bytes] = 0
        p *= 2
    step = block_bytes
    while step * 2 * spread <= claimed_bytes:  # the largest power-of-two multiple of a block giving >= spread
        step *= 2
    depth = max(0, spread.bit_length() - 1)
    k = 1
    while k * step <= last:
        offset = k * step
        if offset not in levels:
            zeros = (k & -k).bit_length() - 1  # k's trailing zero bits: coarser multiples come first
            levels[offset] = 1 + max(0, depth - zeros)
        k += 1
    return [Probe(o, levels[o]) for o in sorted(levels, reverse=True)]


def level_counts(probes: Iterable[Probe]) -> list[int]:
    counts: list[int] = []
    for probe in probes:
        while len(counts) <= probe.level:
            counts.append(0)
        counts[probe.level] += 1
    return counts


def level_that_fits(remaining: Sequence[int], seconds_per_block: float, seconds_left: float, ceiling: int) -> int:
    """The finest level whose blocks still to write (`remaining[level]` each) fit in `seconds_left` at
    `seconds_per_block`, never above `ceiling` (the level chosen before: it only ever falls). Level 0 always."""
    total = 0
    chosen = 0
    for level, count in enumerate(remaining):
        if level > ceiling:
            break
        total += count
        if level == 0 or total * seconds_per_block <= seconds_left:
            chosen = level
        else:
            break
    return chosen


def make_block(nonce: bytes, offset: int, block_bytes: int) -> bytes:
    header = _HEADER.pack(MAGIC, nonce, offset, block_bytes)
    payload = hashlib.shake_128(nonce + offset.to_bytes(8, "little")).digest(block_bytes - _HEADER.size - _DIGEST_BYTES)
    digest = hashlib.blake2b(header + payload, digest_size=_DIGEST_BYTES).digest()
    return header + digest + payload


def classify(data: bytes, nonce: bytes, offset: int, expected: bytes) -> BlockOutcome:
    """What a block read back at `offset` is."""
    if data == expected:
        return BlockOutcome(offset, HELD)
    if len(data) >= _HEADER.size + _DIGEST_BYTES:
        magic, tag_nonce, tag_offset, _size = _HEADER.unpack_from(data)
        digest = data[_HEADER.size : _HEADER.size + _DIGEST_BYTES]
        body = data[: _HEADER.size] + data[_HEADER.size + _DIGEST_BYTES :]
        if magic == MAGIC and hashlib.blake2b(body, digest_size=_DIGEST_BYTES).digest() == digest:
            if tag_nonce != nonce:
                return BlockOutcome(offset, STALE)
            if tag_offset != offset:
                return BlockOutcome(offset, WRAPPED, carries_offset=tag_offset)
    if not data.strip(b"\x00"):
        return BlockOutcome(offset, ZEROS)
    if not data.strip(b"\xff"):
        return BlockOutcome(offset, ERASED)
    return BlockOutcome(offset, GARBAGE)


def judge(
    claimed_bytes: int, block_bytes: int, outcomes: Iterable[BlockOutcome], device: str, complete: bool = True
) -> VerifyVerdict:
    """`complete`: every written block was read back. A run stopped early judges only up to the highest block it
    read: below a failure it found, or as far as it read when it found none (a lower bound, no finding); a run
    stopped before reading judges nothing (its write errors are still counted)."""
    ordered = sorted(outcomes, key=lambda o: o.offset)
    read_to = max((o.offset for o in ordered if o.state != WRITE_ERROR), default=None)
    if not complete:
        ordered = [o for o in ordered if read_to is not None and o.offset <= read_to]
    failed = [o for o in ordered if o.state != HELD]
    failures = {state: 0 for state in FAILED_STATES}
    for o in failed:
        failures[o.state] += 1
    first = failed[0] if failed else None
    if first is not None:
        usable: int | None = first.offset
    elif complete:
        usable = claimed_bytes if ordered else None
    else:
        usable = None if read_to is None else read_to + block_bytes
    held_past = sum(1 for o in ordered if o.state == HELD and first is not None and o.offset > first.offset)
    moved = [
        o.offset - o.carries_offset for o in failed if o.carries_offset is not None and o.carries_offset < o.offset
    ]
    wraps_every = min(moved) if moved else None
    findings: tuple[Finding, ...] = ()
    if first is not None and usable is not None:
        findings = (fake_capacity(device, claimed_bytes, usable, failures, held_past, wraps_every),)
    verdict = VerifyVerdict(
        claimed_bytes=claimed_bytes,
        block_bytes=block_bytes,
        usable_bytes=usable,
        blocks_tested=len(ordered),
        blocks_held=len(ordered) - len(failed),
        failures=failures,
        first_failure=first,
        examples=tuple(failed[:EXAMPLES]),
        held_past_usable=held_past,
        wraps_every_bytes=wraps_every,
        findings=findings,
        summary="",
    )
    return _with_summary(verdict, device, complete)


def _with_summary(v: VerifyVerdict, device: str, complete: bool) -> VerifyVerdict:
    from dataclasses import replace

    if v.usable_bytes is None:
        line = f"{device}: nothing was read back, so nothing is known of its capacity"
    elif v.first_failure is None and not complete:
        line = (
            f"{device} held all {v.blocks_tested} test blocks read back, up to {fmt_bytes(v.usable_bytes)} of the "
            f"{fmt_bytes(v.claimed_bytes)} it claims; past that it was not tested"
        )
    elif v.first_failure is None:
        line = (
            f"{device} holds what it claims: all {v.blocks_tested} test blocks across its "
            f"{fmt_bytes(v.claimed_bytes)} read back as written"
        )
    else:
        line = (
            f"{device} holds only {fmt_bytes(v.usable_bytes)} of the {fmt_bytes(v.claimed_bytes)} it claims: "
            "fake capacity"
        )
    return replace(v, summary=line)


def failure_words(failures: Mapping[str, int]) -> str:
    """'95 wrapped to a lower address (...), 3 read errors' for the states that occurred."""
    return ", ".join(f"{n} {STATE_WORDS[s]}" for s, n in failures.items() if n)


def fake_capacity(
    device: str,
    claimed_bytes: int,
    usable_bytes: int,
    failures: Mapping[str, int],
    held_past: int,
    wraps_every: int | None,
) -> Finding:
    share = usable_bytes / claimed_bytes * 100 if claimed_bytes else 0.0
    message = (
        f"{device} holds only {fmt_bytes(usable_bytes)} of the {fmt_bytes(claimed_bytes)} it claims ({share:.0f}%): "
        f"past {usable_bytes:,} bytes, {failure_words(failures)}"
    )
    if wraps_every:
        message += f"; addresses wrap every {fmt_bytes(wraps_every)}"
    if held_past:
        message += f"; {held_past} blocks past it read back right (their places were not overwritten, or a cache)"
    evidence = {
        "claimed_bytes": claimed_bytes,
        "usable_bytes": usable_bytes,
        "usable_pct": round(share, 1),
        "wraps_every_bytes": wraps_every,
        **{f"{s}_blocks": n for s, n in failures.items()},
    }
    return Finding(
        code="fake_capacity",
        severity="critical",
        message=message,
        evidence=evidence,
        hint=FAKE_HINT.format(usable=f"{fmt_bytes(usable_bytes)} ({usable_bytes:,} bytes)"),
        device=device,
    )
