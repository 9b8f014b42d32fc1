"""Other I/O on a test's device while it ran, and the `foreign_io` finding (pure; issue 36).

The device's block-layer counters (/proc/diskstats, 512-byte sectors) are read right before and after each fio
test, and so are the block I/O counters of the process's reaped children (fio's own, ramp included: fio's JSON
io_bytes leaves the ramp out, the device does not). What the device did beyond fio's own is other I/O. On a
device the target is built of (an array's members) fio's bytes arrive multiplied by the layout (a raid1 write
lands on each copy), so members are judged only where the layout says by how much.

A test is marked when the other I/O is above FOREIGN_SHARE of the test's own bytes and above FOREIGN_FLOOR_MBPS:
the first keeps a busy device's housekeeping (a file system's journal) from marking every fast test, the second
keeps a slow card's few kilobytes from marking every slow one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disksleuth.model import Finding
from disksleuth.model.arrays import StackNode
from disksleuth.model.foreign import ForeignIo, IoReading, ProcessIo
from disksleuth.model.iostat import SECTOR_BYTES, DiskCounters
from disksleuth.model.run import TestResult
from disksleuth.units import fmt_bytes, fmt_rate

FOREIGN_SHARE = 0.05
FOREIGN_FLOOR_MBPS = 1.0
TOP_PROCESSES = 5
FITS_MARGIN = 1.25  # a process named as a source moved at most this much of the other I/O, direction by direction
FITS_LEAST = 0.05  # ... and at least this share of it
# A counter that went backwards wrapped (unsigned long: 2**32 on a 32-bit kernel, 2**64 on a 64-bit one), or the
# device was removed and came back with new counters. Beyond this rate a "wrap" is a reset: nothing is said.
MAX_PLAUSIBLE_MBPS = 100_000.0

# Layouts whose members see each read once (a read is served by one copy, healthy parity arrays read data only)
# and how many copies of each write they store. md personalities (Documentation/admin-guide/md.rst), dm targets
# (Documentation/admin-guide/device-mapper), btrfs profiles (btrfs-man5 "PROFILES"). raid10's near/far copies
# default to 2 (mdadm --layout n2); parity arrays' writes read and write parity: not judged.
_ONE_COPY = frozenset({"linear", "raid0", "striped", "crypt", "single", "multipath", "mpath"})
_COPIES = {"raid10": 2, "dup": 2, "raid1c3": 3, "raid1c4": 4}
_READ_ONCE = _ONE_COPY | frozenset({"raid1", "mirror", "raid10", "dup", "raid1c3", "raid1c4", "raid4", "raid5",
                                    "raid6", "raid"})  # fmt: skip


@dataclass(frozen=True)
class Watched:
    """Whose counters tell other I/O for one target: the device fio's I/O reaches as it is (`top`: the target's
    own device, or the whole disk of a partition), and the members under it (`tree`, for arrays)."""

    top: str | None
    tree: StackNode | None = None

    @property
    def members(self) -> tuple[str, ...]:
        if self.tree is None or not self.tree.children:
            return ()
        return tuple(leaf.name for leaf in self.tree.leaves() if leaf.kind != "missing")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for n in (self.top, *self.members) if n))


def copies(node: StackNode, writes: bool) -> float | None:
    """How many bytes each byte sent to `node` puts on its leaves together; None when the layout does not say."""
    if not node.children:
        return 1.0
    below = [copies(child, writes) for child in node.children if child.kind != "missing"]
    if not below or any(c is None for c in below):
        return None
    mean = sum(c for c in below if c is not None) / len(below)
    level = (node.level or "").lower()
    if node.kind in ("partition", "loop", "disk") or (not level and len(below) == 1):
        return mean
    if not writes:
        return mean if level in _READ_ONCE else None
    if level in _ONE_COPY:
        return mean
    if level in ("raid1", "mirror"):  # md and dm keep a copy on each member; btrfs raid1 two, whatever the count
        return 2 * mean if node.kind == "btrfs" else mean * len(below)
    return _COPIES[level] * mean if level in _COPIES else None


def _delta(before: int, after: int, seconds: float) -> int | None:
    """after - before of an unsigned counter in sectors, wrapped; None when it can only have been reset."""
    if after >= before:
        return after - before
    modulus = 2**32 if before < 2**32 else 2**64
    wrapped = after + modulus - before
    return wrapped if wrapped * SECTOR_BYTES <= MAX_PLAUSIBLE_MBPS * 1e6 * max(seconds, 0.001) else None


def _moved(a: DiskCounters, b: DiskCounters, seconds: float) -> tuple[int, int] | None:
    if (a.major, a.minor) != (b.major, b.minor):  # the name now belongs to another device
        return None
    r, w = _delta(a.sectors_read, b.sectors_read, seconds), _delta(a.sectors_written, b.sectors_written, seconds)
    return (r * SECTOR_BYTES, w * SECTOR_BYTES) if r is not None and w is not None else None


def _busiest(before: IoReading, after: IoReading, other_r: int, other_w: int) -> tuple[ProcessIo, ...]:
    """The processes whose I/O meanwhile could be the other I/O, most first. /proc/PID/io counts every device, and
    a parent's counters take in the children it reaps: a process that moved more than the device's other I/O (with
    a margin) did it elsewhere, at least in part, and is not named; nor one that moved a trifle of it."""
    if before.processes is None or after.processes is None:
        return ()
    moved = []
    slack = 1_000_000
    for pid, b in after.processes.processes.items():
        a = before.processes.processes.get(pid)
        if a is None or a.name != b.name:  # started meanwhile, or a recycled pid
            continue
        r, w = max(0, b.read_bytes - a.read_bytes), max(0, b.write_bytes - a.write_bytes)
        fits = r <= FITS_MARGIN * other_r + slack and w <= FITS_MARGIN * other_w + slack
        if fits and r + w >= FITS_LEAST * (other_r + other_w) and r + w > 0:
            moved.append(ProcessIo(pid, b.name, r, w, b.kernel))
    # Processes first: a kernel thread (a loop device's worker) moves the bytes some process asked for.
    moved.sort(key=lambda p: (p.kernel, -(p.read_bytes + p.write_bytes)))
    return tuple(moved[:TOP_PROCESSES])


def other_io(
    before: IoReading, after: IoReading, watched: Watched, fio_read_bytes: int, fio_write_bytes: int
) -> ForeignIo | None:
    """What the watched devices did besides fio between the two readings; None when nothing can be told (no
    diskstats, no device). `fio_*_bytes`: fio's JSON io_bytes, the floor of its own I/O when the children's
    counters say less (a kernel without task I/O accounting: then a ramp's I/O is counted as other I/O, said)."""
    seconds = after.at_s - before.at_s
    if not watched.names or before.disks is None or after.disks is None or seconds <= 0:
        return None
    notes: list[str] = []
    fio_r, fio_w = fio_read_bytes, fio_write_bytes
    if None not in (before.children_read_bytes, after.children_read_bytes, before.children_write_bytes,
                    after.children_write_bytes):  # fmt: skip
        fio_r = max(fio_r, (after.children_read_bytes or 0) - (before.children_read_bytes or 0))
        fio_w = max(fio_w, (after.children_write_bytes or 0) - (before.children_write_bytes or 0))
    moved: dict[str, tuple[int, int]] = {}
    for name in watched.names:
        a, b = before.disks.get(name), after.disks.get(name)
        if a is None or b is None:
            notes.append(f"{name} was not in /proc/diskstats {'before' if a is None else 'after'} the test "
                         "(removed meanwhile?): its other I/O is unknown")  # fmt: skip
            continue
        m = _moved(a, b, seconds)
        if m is None:
            notes.append(f"{name}'s counters went back (the device was removed and added again?): its other I/O is "
                         "unknown")  # fmt: skip
            continue
        moved[name] = m
    other_r = other_w = 0
    if watched.top in moved:
        r, w = moved[watched.top]
        other_r, other_w = max(0, r - fio_r), max(0, w - fio_w)
    members = [m for m in watched.members if m != watched.top]
    if members and watched.tree is not None and all(m in moved for m in members):
        read_x = copies(watched.tree, writes=False)
        write_x = copies(watched.tree, writes=True) if fio_w else 1.0
        r = sum(moved[m][0] for m in members)
        w = sum(moved[m][1] for m in members)
        if read_x is not None and write_x is not None:
            other_r = max(other_r, round(r - fio_r * read_x))
            other_w = max(other_w, round(w - fio_w * write_x))
        else:
            notes.append(f"how a {watched.tree.level or watched.tree.kind} layout spreads fio's I/O over its members "
                         "is not known here: only what reached the array itself was weighed")  # fmt: skip
    if not moved:
        return ForeignIo(watched.names, round(seconds, 3), fio_r, fio_w, 0, 0, 0.0, None, False, notes=tuple(notes))
    test_bytes = fio_r + fio_w
    other = other_r + other_w
    found = other > max(FOREIGN_SHARE * test_bytes, FOREIGN_FLOOR_MBPS * 1e6 * seconds)
    procs = before.processes, after.processes
    return ForeignIo(
        devices=watched.names,
        seconds=round(seconds, 3),
        test_read_bytes=fio_r,
        test_write_bytes=fio_w,
        other_read_bytes=other_r,
        other_write_bytes=other_w,
        other_mbps=round(other / seconds / 1e6, 3),
        share_pct=round(100 * other / test_bytes, 1) if test_bytes else None,
        found=found,
        processes=_busiest(before, after, other_r, other_w) if found else (),
        processes_unreadable=max((p.unreadable for p in procs if p is not None), default=0),
        processes_not_read=max((p.not_read for p in procs if p is not None), default=0),
        notes=tuple(notes),
    )


def process_words(p: ProcessIo, seconds: float) -> str:
    """'fio (pid 4242) read 84 MB/s'."""
    parts = [f"{verb} {fmt_rate(b / seconds / 1e6)}" for verb, b in (("read", p.read_bytes), ("wrote", p.write_bytes))
             if b]  # fmt: skip
    kernel = ", a kernel thread" if p.kernel else ""
    return f"{p.name} (pid {p.pid}{kernel}) " + " and ".join(parts)


def other_words(f: ForeignIo) -> str:
    """'83.9 MB/s of other I/O on loop2 (reads 83.9 MB/s), 42% of the test's own bytes'."""
    pairs = (("reads", f.other_read_bytes), ("writes", f.other_write_bytes))
    directions = [f"{d} {fmt_rate(b / f.seconds / 1e6)}" for d, b in pairs if b]
    share = f", {f.share_pct:.0f}% of the test's own bytes" if f.share_pct is not None else ""
    return (
        f"{fmt_rate(f.other_mbps)} of other I/O on {', '.join(f.devices)} ({', '.join(directions) or 'none'}: "
        f"{fmt_bytes(f.other_bytes)} in {f.seconds:.1f} s){share}"
    )


def who_words(f: ForeignIo) -> str:
    """The busiest other processes meanwhile, and what could not be read; '' when there is nothing to say."""
    said = ""
    if f.processes:
        said = "processes whose I/O meanwhile fits it (their counters cover every device): " + "; ".join(
            process_words(p, f.seconds) for p in f.processes
        )
    missed = []
    if f.processes_unreadable:
        missed.append(f"{f.processes_unreadable} process(es) whose /proc/PID/io could not be read")
    if f.processes_not_read:
        missed.append(f"{f.processes_not_read} more not read (past the cap on processes read)")
    if missed:
        said += ("; " if said else "") + "not counted: " + ", ".join(missed)
    return said


def foreign_tests(tests: Sequence[TestResult]) -> list[TestResult]:
    return [t for t in tests if t.foreign_io is not None and t.foreign_io.found]


def foreign_io(tests: Sequence[TestResult]) -> Finding | None:
    """foreign_io (warn): tests whose device did other I/O besides the test, with its rate and who did the most."""
    marked = foreign_tests(tests)
    if not marked:
        return None
    parts = []
    for t in marked:
        f = t.foreign_io
        assert f is not None
        who = who_words(f)
        parts.append(f"{t.id}: {other_words(f)}" + (f"; {who}" if who else ""))
    message = (
        "Something else used the device while these tests ran, so their figures are the device's minus that: "
        + ". ".join(parts)
        + "."
    )
    evidence: dict[str, Any] = {"tests": {t.id: foreign_to_dict(t.foreign_io) for t in marked if t.foreign_io}}
    hint = (
        "Measure again when the device is quiet: stop or pause the other workload (iotop -o or pidstat -d 1 show "
        "who does I/O), or run the benchmark in a maintenance window. A figure measured beside other I/O is not "
        "the device's alone, and a baseline comparison of it says more about the neighbour than the drive."
    )
    return Finding("foreign_io", "warn", message, evidence, hint)


def foreign_to_dict(f: ForeignIo) -> dict[str, Any]:
    import dataclasses

    out = dataclasses.asdict(f)
    out["devices"] = list(f.devices)
    out["processes"] = [dataclasses.asdict(p) for p in f.processes]
    out["notes"] = list(f.notes)
    return out


def foreign_from_dict(d: Mapping[str, Any]) -> ForeignIo | None:
    """A stored test's foreign_io back into the model (run documents are validated before this)."""
    try:
        return ForeignIo(
            devices=tuple(str(x) for x in d.get("devices") or ()),
            seconds=float(d["seconds"]),
            test_read_bytes=int(d["test_read_bytes"]),
            test_write_bytes=int(d["test_write_bytes"]),
            other_read_bytes=int(d["other_read_bytes"]),
            other_write_bytes=int(d["other_write_bytes"]),
            other_mbps=float(d["other_mbps"]),
            share_pct=float(d["share_pct"]) if d.get("share_pct") is not None else None,
            found=bool(d["found"]),
            processes=tuple(
                ProcessIo(
                    int(p["pid"]), str(p["name"]), int(p["read_bytes"]), int(p["write_bytes"]), bool(p.get("kernel"))
                )
                for p in d.get("processes") or ()
            ),
            processes_unreadable=int(d.get("processes_unreadable") or 0),
            processes_not_read=int(d.get("processes_not_read") or 0),
            notes=tuple(str(n) for n in d.get("notes") or ()),
        )
    except (KeyError, TypeError, ValueError):
        return None


def foreign_note(f: ForeignIo) -> str:
    """The tables' legend line for a marked test."""
    who = f"; likely: {process_words(f.processes[0], f.seconds)}" if f.processes else ""
    return f"{other_words(f)}{who}"
