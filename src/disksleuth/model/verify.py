"""`verify`: does a device hold what it says? Tagged blocks written across the claimed size, read back, judged.

analysis/verify.py plans the offsets and judges what came back (pure); run/verify.py writes and reads them through
probe/blockio.py; doc/verify.py and present/verify_view.py turn the report into a document and a view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disksleuth.model import Finding

# What a block read back as. "held" is the only good state; the others are the ways a fake or failing card loses
# data: another offset's block (its address wraps onto a lower one), nothing written (zeros, or 0xFF as erased
# flash reads), an earlier run's block (the write was dropped), anything else, or an error from the kernel.
HELD = "held"
WRAPPED = "wrapped"
ZEROS = "zeros"
ERASED = "erased"
STALE = "stale"
GARBAGE = "garbage"
WRITE_ERROR = "write_error"
READ_ERROR = "read_error"
FAILED_STATES = (WRAPPED, ZEROS, ERASED, STALE, GARBAGE, WRITE_ERROR, READ_ERROR)


@dataclass(frozen=True)
class Probe:
    """One offset to test. `level` 0 is always written (the boundaries where fakes fail: 0, the last block, every
    power of two and the block below it); higher levels are the even spread, dropped finest first when time is
    short."""

    offset: int
    level: int


@dataclass(frozen=True)
class BlockOutcome:
    offset: int
    state: str  # HELD or one of FAILED_STATES
    carries_offset: int | None = None  # WRAPPED: the offset whose block was read here
    error: str | None = None  # WRITE_ERROR / READ_ERROR: the kernel's words (ENOSPC: No space left on device)


@dataclass(frozen=True)
class VerifyVerdict:
    """What the read-back says. usable_bytes: the lowest failing offset (every tested block below it held), or the
    claimed size when none failed; a run stopped early with no failure yet: the end of the highest block it read;
    None when nothing was read back."""

    claimed_bytes: int
    block_bytes: int
    usable_bytes: int | None
    blocks_tested: int
    blocks_held: int
    failures: Mapping[str, int]  # every state of FAILED_STATES, 0 when none
    first_failure: BlockOutcome | None
    examples: tuple[BlockOutcome, ...]  # the first few failures from the lowest up
    held_past_usable: int  # blocks past usable_bytes that read back right (wraps onto untested places, or a cache)
    wraps_every_bytes: int | None  # the smallest distance a wrapped block moved: the real size, for a wrap
    findings: tuple[Finding, ...]
    summary: str


@dataclass(frozen=True)
class VerifyReport:
    path: str
    name: str | None
    model: str | None
    identity: str
    quick: bool
    max_time_s: float
    nonce: str  # this run's tag (hex): a block carrying another is an earlier run's
    blocks_planned: int
    blocks_written: int
    blocks_skipped: int  # spread blocks left out to stay within the time limit
    write_s: float
    read_s: float
    elapsed_s: float
    verdict: VerifyVerdict
    complete: bool  # every written block was read back
    stopped: str | None = None  # why it ended early, and how far it got
    signum: int | None = None  # the signal that stopped it (Ctrl-C, SIGTERM, SIGHUP)
    notes: tuple[str, ...] = field(default_factory=tuple)
