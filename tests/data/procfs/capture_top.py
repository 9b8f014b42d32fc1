"""Capture what `disksleuth top` reads from /proc, twice, SECONDS apart: DIR/before and DIR/after, each laid out
like /proc (diskstats, uptime, vmstat, meminfo, pressure/{io,memory}, sys/kernel/task_delayacct, PID/{stat,io} and
PID/wchan of processes in D state). The readers take such a directory as their procfs root.

    sudo python3 tests/data/procfs/capture_top.py tests/data/procfs/SCENARIO 2 [--all]

Processes that did nothing in between are left out unless --all (see prune). Only numbers and process names (comm)
are kept: no command line, environment or path of any process."""

from __future__ import annotations

import os
import shutil
import sys
import time

# uptime first: the snapshot's clock, read as close as can be to diskstats, as top reads them.
FILES = ("uptime", "diskstats", "vmstat", "meminfo", "pressure/io", "pressure/memory", "sys/kernel/task_delayacct")


def _copy(src: str, dst: str) -> bool:
    try:
        with open(src, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError:
        return False
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as out:
        out.write(data)
    return True


def capture(dest: str) -> None:
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in FILES:
        _copy(os.path.join("/proc", name), os.path.join(dest, name))
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        if not _copy(f"/proc/{entry}/stat", os.path.join(dest, entry, "stat")):
            continue
        _copy(f"/proc/{entry}/io", os.path.join(dest, entry, "io"))  # absent where it was unreadable
        with open(os.path.join(dest, entry, "stat"), "rb") as fh:
            state = fh.read().rpartition(b")")[2].split()[:1]
        if state == [b"D"]:
            _copy(f"/proc/{entry}/wchan", os.path.join(dest, entry, "wchan"))


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def prune(dest: str) -> int:
    """Drop the processes that did nothing between the two captures (the same I/O counters and block-I/O delay at
    both ends, not in D state): a few hundred small files that say nothing. Those that did I/O, waited, exited or
    started, or whose I/O was unreadable, are kept whole. Returns how many were dropped."""
    before, after = os.path.join(dest, "before"), os.path.join(dest, "after")
    dropped = 0
    for pid in sorted(set(os.listdir(before)) & set(os.listdir(after))):
        if not pid.isdigit():
            continue
        a_io, b_io = _read(os.path.join(before, pid, "io")), _read(os.path.join(after, pid, "io"))
        a_stat, b_stat = (_read(os.path.join(d, pid, "stat")) or b"" for d in (before, after))
        a_fields, b_fields = (s.rpartition(b")")[2].split() for s in (a_stat, b_stat))
        same_delay = a_fields[39:40] == b_fields[39:40]
        same_process = a_fields[19:20] == b_fields[19:20]
        idle = a_io is not None and a_io == b_io and same_delay and b"D" not in (a_fields[:1] + b_fields[:1])
        if same_process and idle:
            shutil.rmtree(os.path.join(before, pid))
            shutil.rmtree(os.path.join(after, pid))
            dropped += 1
    return dropped


def main() -> None:
    dest, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    capture(os.path.join(dest, "before"))
    time.sleep(seconds)
    capture(os.path.join(dest, "after"))
    if "--all" not in sys.argv:
        print(f"{prune(dest)} idle processes left out")


if __name__ == "__main__":
    main()
