"""Tests run on memory are marked as such (pure, issue 40): a loop device over a tmpfs file, zram or a brd RAM disk
measures RAM, as a directory on tmpfs does, and its tests carry the same `*` (cache_affected) and note."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from disksleuth.analysis.limits import held_figures
from disksleuth.model.limits import IoLimit
from disksleuth.model.run import MemoryBacking, Run


def memory_note(memory: MemoryBacking) -> str:
    """The run's note, beside bench's for a tmpfs directory ('/dev/shm is tmpfs (memory): ...')."""
    return f"{memory.description} (memory): these figures measure RAM, not a disk"


def with_memory_marked(run: Run, memory: MemoryBacking | None, limits: Sequence[IoLimit] | None = None) -> Run:
    """Every test of a run on memory marked cache_affected, and the run's note saying why; unchanged when the run
    is not on memory or every test is marked already (a tmpfs directory: bench marked and said it). A test that a
    cgroup I/O limit held measures the limit, not RAM (memory_backed says the same): it is left as it is."""
    if memory is None:
        return run
    held = {h.test_id for h in held_figures(run.tests, limits or ())}
    if all(t.cache_affected or t.id in held for t in run.tests):
        return run
    note = memory_note(memory)
    return replace(
        run,
        tests=tuple(t if t.id in held else replace(t, cache_affected=True) for t in run.tests),
        notes=run.notes if note in run.notes else (*run.notes, note),
    )
