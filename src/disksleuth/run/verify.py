"""`verify DEV --destructive`: does the device hold what it says? (issue 39)

The same safety rules as `bench --destructive` (run/bench.run_bench): the device held with O_EXCL from the safety
check to the end (probe/claim), refused when it or a partition is mounted, swap, held, an array, holds / (run/plan.
write_permission), its identity shown, a typed "yes" on a terminal or --yes without one. Then position-tagged blocks
are written across the claimed size, highest offset first, flushed, and read back with O_DIRECT (probe/blockio);
analysis/verify says which offsets and what came back. The time is bounded: the even spread is thinned, finest level
first, to what the measured write rate fits in the limit. Ctrl-C, SIGTERM and SIGHUP stop it between two blocks: the
report says how far it got."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from disksleuth.analysis.verify import (
    FULL_SPREAD,
    NONCE_BYTES,
    QUICK_SPREAD,
    block_size,
    classify,
    judge,
    level_counts,
    level_that_fits,
    make_block,
    plan_probes,
)
from disksleuth.errors import EnvironmentProblem, SafetyRefusal, Terminated, UsageError
from disksleuth.model.verify import READ_ERROR, WRITE_ERROR, BlockOutcome, Probe, VerifyReport
from disksleuth.probe.blockio import BlockIo, drop_backing_cache, error_words, open_direct
from disksleuth.probe.claim import DeviceBusy, exclusive_claim, held_state
from disksleuth.probe.target import TargetInfo, inspect_target
from disksleuth.run.bench import sigterm_as_exception
from disksleuth.run.plan import BenchOptions, write_permission

DEFAULT_MAX_TIME_S = 180.0
QUICK_MAX_TIME_S = 30.0
MAX_MAX_TIME_S = 24 * 3600.0
WRITE_SHARE = 0.75  # of the time limit, for writes: flash reads back far faster than it takes random writes
RATE_AFTER_BLOCKS = 4  # blocks written before the measured rate thins the spread


@dataclass(frozen=True)
class VerifyOptions:
    destructive: bool = False
    yes: bool = False
    interactive: bool = False  # a terminal is there to confirm on
    quick: bool = False
    max_time_s: float | None = None  # None: QUICK_MAX_TIME_S or DEFAULT_MAX_TIME_S

    @property
    def time_limit_s(self) -> float:
        if self.max_time_s is not None:
            return self.max_time_s
        return QUICK_MAX_TIME_S if self.quick else DEFAULT_MAX_TIME_S


class VerifyEvents(Protocol):
    def message(self, text: str) -> None: ...
    def confirm(self, text: str) -> bool: ...
    def phase(self, label: str, total: int) -> None: ...
    def advance(self, done: int, total: int) -> None: ...
    def close(self) -> None: ...


class QuietVerifyEvents:
    """No terminal: messages (the identity before the writes) on stderr, no progress, nobody to confirm."""

    def message(self, text: str) -> None:
        import sys

        print(f"disksleuth: {text}", file=sys.stderr, flush=True)

    def confirm(self, text: str) -> bool:
        return False

    def phase(self, label: str, total: int) -> None:
        pass

    def advance(self, done: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


def check_max_time(seconds: float) -> float:
    if not 1.0 <= seconds <= MAX_MAX_TIME_S:
        raise UsageError(f"--max-time must be from 1 to {MAX_MAX_TIME_S:.0f} seconds: {seconds:g}")
    return seconds


def run_verify(path: str, opts: VerifyOptions, events: VerifyEvents | None = None) -> VerifyReport:
    """Inspect, refuse or hold, confirm, then write and read back. Raises the library's errors; returns the report
    (a partial one when a signal stopped it: `signum` says which)."""
    events = events or QuietVerifyEvents()
    target = inspect_target(path)
    if target.kind != "block":
        under = f"; the device under it is {target.device.path}" if target.device else ""
        raise UsageError(
            f"verify tests a block device's capacity (its contents are destroyed): {target.path} is a "
            f"{'directory' if target.kind == 'dir' else 'file'}, and a file holds what its file system gives it{under}"
        )
    if not opts.destructive:
        raise SafetyRefusal(
            f"verify writes test blocks across {target.path} and destroys its contents: add --destructive "
            "(and --yes when no terminal is there to confirm); nothing was written"
        )
    bench_opts = BenchOptions(destructive=True, yes=opts.yes, interactive=opts.interactive)
    with contextlib.ExitStack() as held:
        try:  # the kernel's word first, held until the last block is read (run/bench.run_bench does the same)
            claim = held.enter_context(exclusive_claim(target.path))
        except (DeviceBusy, EnvironmentProblem):  # busy, or an open refused (EPERM in a sandbox)
            write_permission(target, bench_opts)  # our own checks first, for their clearer words
            raise
        target = inspect_target(target.path)  # under the claim, what the checks see can no longer change
        # the device held, a loop device over it, other openers, read-only: the same rules as bench --destructive
        _writes_ok, _notes, identity = write_permission(target, bench_opts, held_state(claim))
        identity = identity or target.path
        events.message(
            f"DESTRUCTIVE: verify writes test blocks across {identity}; the data on it is destroyed, by design"
        )
        if not opts.yes and not events.confirm(f"Destroy the data on {identity}?"):
            raise SafetyRefusal("not confirmed; nothing was written")
        device = target.device
        block = block_size(device.logical_block_size if device else None)
        with open_direct(target.path, block, same_as=claim.fd) as io:
            return _verify(io, target, identity, opts, events)
    raise AssertionError("unreachable")  # pragma: no cover  (mypy: the with block returns or raises)


@dataclass
class _Progress:
    """What a run did so far: kept outside the signal context, so a stopped run still reports it."""

    phase: str = "writing"
    written: list[Probe] = field(default_factory=list)
    outcomes: list[BlockOutcome] = field(default_factory=list)
    skipped: int = 0
    unread: int = 0
    write_s: float = 0.0
    read_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def _verify(io: BlockIo, target: TargetInfo, identity: str, opts: VerifyOptions, events: VerifyEvents) -> VerifyReport:
    claimed = io.size_bytes()
    block = io.block_bytes
    probes = plan_probes(claimed, block, QUICK_SPREAD if opts.quick else FULL_SPREAD)
    if not probes:
        raise UsageError(f"{target.path} is {claimed} bytes: too small to verify (one block is {block} bytes)")
    nonce = os.urandom(NONCE_BYTES)
    limit = opts.time_limit_s
    state = _Progress()
    started = time.monotonic()
    stopped: str | None = None
    signum: int | None = None
    try:
        with sigterm_as_exception() as signalled:
            _write_all(io, probes, nonce, started, started + limit * WRITE_SHARE, state, events, signalled.check)
            state.phase = "flushing"
            flushed = io.flush()
            if flushed:
                state.notes.append(flushed)
            uncached = drop_backing_cache(io.fd)  # a loop device without direct I/O reads its file's page cache
            if uncached:
                state.notes.append(uncached)
            state.phase = "reading"
            _read_all(io, nonce, started + limit, state, events, signalled.check)
    except KeyboardInterrupt:
        signum = signal.SIGINT
    except Terminated as exc:
        signum = exc.signum
    finally:
        events.close()
    read_back = sum(1 for o in state.outcomes if o.state != WRITE_ERROR)
    if signum is not None:
        how = "interrupted" if signum == signal.SIGINT else Terminated(signum).word
        stopped = (
            f"{how} while {state.phase}: {len(state.written)} of {len(probes) - state.skipped} blocks written, "
            f"{read_back} read back"
        )
        if state.phase != "reading":
            stopped += "; nothing was read back, so only write errors are known"
    elif state.unread:
        stopped = f"the time limit ({limit:g} s) came while reading: {state.unread} blocks were not read back"
    if state.skipped:
        state.notes.append(
            f"{state.skipped} of the {len(probes)} planned blocks were left out to finish within {limit:g} s "
            "(the boundaries and a coarser spread were kept; --max-time gives more)"
        )
    name = target.device.path if target.device else target.path
    verdict = judge(claimed, block, state.outcomes, name, complete=stopped is None)
    return VerifyReport(
        path=target.path,
        name=target.device.name if target.device else None,
        model=target.device.model if target.device else None,
        identity=identity,
        quick=opts.quick,
        max_time_s=limit,
        nonce=nonce.hex(),
        blocks_planned=len(probes),
        blocks_written=len(state.written),
        blocks_skipped=state.skipped,
        write_s=round(state.write_s, 3),
        read_s=round(state.read_s, 3),
        elapsed_s=round(time.monotonic() - started, 3),
        verdict=verdict,
        complete=stopped is None,
        stopped=stopped,
        signum=signum,
        notes=tuple(state.notes),
    )


def _write_all(
    io: BlockIo,
    probes: list[Probe],
    nonce: bytes,
    started: float,
    write_deadline: float,
    state: _Progress,
    events: VerifyEvents,
    check: Callable[[], None],
) -> None:
    """Highest offset first (analysis/verify says why); spread blocks the time left cannot fit are skipped."""
    remaining = level_counts(probes)
    ceiling = len(remaining) - 1
    events.phase("writing test blocks", len(probes))
    attempted = 0
    for index, probe in enumerate(probes):
        check()
        now = time.monotonic()
        if attempted >= RATE_AFTER_BLOCKS and probe.level > 0:
            per_block = (now - started) / attempted
            ceiling = level_that_fits(remaining, per_block, write_deadline - now, ceiling)
        remaining[probe.level] -= 1
        if probe.level > ceiling:
            state.skipped += 1
            continue
        attempted += 1
        try:
            io.write(probe.offset, make_block(nonce, probe.offset, io.block_bytes))
            state.written.append(probe)
        except OSError as exc:
            state.outcomes.append(BlockOutcome(probe.offset, WRITE_ERROR, error=error_words(exc)))
        state.write_s = time.monotonic() - started
        events.advance(index + 1, len(probes))


def _read_all(
    io: BlockIo, nonce: bytes, deadline: float, state: _Progress, events: VerifyEvents, check: Callable[[], None]
) -> None:
    """Lowest offset first: a read cut by the time limit still knows where the device stops holding. Past the
    limit only the boundary blocks (level 0) are read."""
    begun = time.monotonic()
    written = sorted(state.written, key=lambda p: p.offset)
    events.phase("reading them back", len(written))
    for index, probe in enumerate(written):
        check()
        if probe.level > 0 and time.monotonic() > deadline:
            state.unread += 1
            continue
        try:
            data = io.read(probe.offset)
        except OSError as exc:
            state.outcomes.append(BlockOutcome(probe.offset, READ_ERROR, error=error_words(exc)))
        else:
            state.outcomes.append(classify(data, nonce, probe.offset, make_block(nonce, probe.offset, io.block_bytes)))
        state.read_s = time.monotonic() - begun
        events.advance(index + 1, len(written))
