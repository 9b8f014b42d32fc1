"""What other processes and this one's children did to storage (issue 36: foreign_io).

proc(5) /proc/PID/io: `read_bytes` and `write_bytes` are the bytes a process made the block layer fetch or send
(any device), `cancelled_write_bytes` what it dirtied and then truncated; readable by the owner or with
CAP_SYS_PTRACE. /proc/PID/stat gives its name (in parentheses, which the name itself may hold: split at the last
one) and its flags (field 9; PF_KTHREAD 0x00200000, include/linux/sched.h, marks a kernel thread). getrusage(2)
RUSAGE_CHILDREN ru_inblock and ru_oublock are the same counters of the reaped children, in 512-byte units (the
kernel's task_io_get_inblock/oublock). A parent's /proc/PID/io takes in the children it reaps, too.

Bounded: at most MAX_PROCESSES processes are read, each file cut at a few KiB, lines split (never matched)."""

from __future__ import annotations

import os
import resource
import time

from disksleuth.model.foreign import IoReading, ProcessIo, ProcessIoReading
from disksleuth.probe.diskstats import read_diskstats
from disksleuth.probe.sysfs import read_regular_file

MAX_PROCESSES = 4096  # a busy server has a few thousand; reading one costs ~20 us
MAX_IO_BYTES = 1024  # /proc/PID/io: seven short lines
MAX_STAT_BYTES = 4096  # 52 numbers and a name of at most 16 bytes (TASK_COMM_LEN)
PF_KTHREAD = 0x00200000
RUSAGE_BLOCK_BYTES = 512


def parse_proc_io(text: str) -> tuple[int, int] | None:
    """(read_bytes, write_bytes - cancelled_write_bytes) of a /proc/PID/io text; None when either is missing."""
    values: dict[str, int] = {}
    for raw in text.splitlines()[:16]:
        key, sep, value = raw[:128].partition(":")
        value = value.strip()
        if sep and value.isascii() and value.isdigit() and len(value) <= 20:
            values[key.strip()] = int(value)
    if "read_bytes" not in values or "write_bytes" not in values:
        return None
    return values["read_bytes"], max(0, values["write_bytes"] - values.get("cancelled_write_bytes", 0))


def parse_proc_stat(text: str) -> tuple[str, bool] | None:
    """(name, kernel thread?) of a /proc/PID/stat text; None when it is not shaped so."""
    head, sep, tail = text[:MAX_STAT_BYTES].rpartition(")")
    _, sep2, name = head.partition(" (")
    fields = tail.split()
    if not sep or not sep2 or len(fields) < 7 or not (fields[6].isascii() and fields[6].isdigit()):
        return None
    return name, bool(int(fields[6]) & PF_KTHREAD)


def read_process_io(
    procfs_root: str = "/proc", most: int = MAX_PROCESSES, skip: frozenset[int] = frozenset()
) -> ProcessIoReading:
    """Each process's storage counters now (at most `most` read), with how many could not be read."""
    out: dict[int, ProcessIo] = {}
    unreadable = not_read = 0
    try:
        entries = os.scandir(procfs_root)
    except OSError:
        return ProcessIoReading(unreadable=0)
    with entries:
        for entry in entries:
            name = entry.name
            if not (name.isascii() and name.isdigit()) or int(name) in skip:
                continue
            if len(out) + unreadable >= most:
                not_read += 1
                continue
            raw = read_regular_file(os.path.join(procfs_root, name, "io"), MAX_IO_BYTES)
            counts = parse_proc_io(raw.decode("ascii", "replace")) if raw is not None else None
            if counts is None:
                unreadable += 1
                continue
            raw_stat = read_regular_file(os.path.join(procfs_root, name, "stat"), MAX_STAT_BYTES)
            stat = parse_proc_stat(raw_stat.decode("utf-8", "replace")) if raw_stat else None
            shown, kernel = stat if stat is not None else ("?", False)
            out[int(name)] = ProcessIo(int(name), shown, *counts, kernel=kernel)
    return ProcessIoReading(out, unreadable, not_read)


def children_block_io() -> tuple[int | None, int | None]:
    """(bytes read, bytes written) by this process's reaped children, as the block layer counted them."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_inblock * RUSAGE_BLOCK_BYTES, usage.ru_oublock * RUSAGE_BLOCK_BYTES


def read_io(procfs_root: str = "/proc", processes: bool = True) -> IoReading:
    """Devices, processes (not this one) and this process's children, now."""
    disks = read_diskstats(procfs_root)
    procs = read_process_io(procfs_root, skip=frozenset({os.getpid()})) if processes else None
    read_bytes, write_bytes = children_block_io()
    return IoReading(time.monotonic(), disks, procs, read_bytes, write_bytes)
