"""Readers of /proc for `top`: processes' I/O and state, pressure stall information, swap and dirty pages.

Each reader takes the procfs root ("/proc", or a directory of captured files under tests/data/procfs/) and
answers None for what it cannot read; parsers are pure functions of text. Every file is read through
read_regular_file (bounded, never a FIFO or device node), each line is cut at MAX_LINE_BYTES before it is split,
and nothing is matched with a pattern.

psutil reads the same files (Process.io_counters is /proc/PID/io) but has neither field 42 of /proc/PID/stat
(block-I/O delay), nor pressure, nor a root per call (psutil.PROCFS_PATH is one global): reading directly keeps
the captured-files tests and costs no dependency."""

from __future__ import annotations

import os

from disksleuth.model.top import MemoryCounters, Pressure, PressureLine, ProcessIo, ProcessSample, ProcessStat
from disksleuth.probe.sysfs import read_regular_file

MAX_LINE_BYTES = 256  # the longest real line here is a stat line's tail or a pressure line: ~120 bytes
# /proc/PID/stat: 52 numbers of at most 20 digits and a comm of 64 bytes (TASK_COMM_LEN 16, escaped) < 1.2 KB.
MAX_PID_FILE_BYTES = 4096
MAX_TABLE_BYTES = 256 * 1024  # /proc/vmstat is ~180 lines (6 KB), /proc/meminfo ~55 (1.5 KB)
MAX_PIDS = 1 << 22  # PID_MAX_LIMIT on 64-bit kernels: a directory listing no longer than the kernel's own


def _text(path: str, limit: int) -> str | None:
    raw = read_regular_file(path, limit)
    return None if raw is None else raw.decode("ascii", errors="replace")


def _number(text: str) -> int | None:
    # isdigit() takes other scripts' digits (and int() reads them): only ASCII 0-9 is the kernel's.
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def _decimal(text: str) -> float | None:
    whole, dot, fraction = text.partition(".")
    if _number(whole) is None or (dot and _number(fraction) is None):
        return None
    return float(text)


# --- processes ------------------------------------------------------------------------------------------------


def list_pids(procfs_root: str = "/proc") -> list[int] | None:
    """The PIDs of the processes now (thread-group leaders: /proc lists no thread at its top), or None."""
    pids: list[int] = []
    try:
        with os.scandir(procfs_root) as entries:
            for entry in entries:
                pid = _number(entry.name)
                if pid is not None:
                    pids.append(pid)
                    if len(pids) >= MAX_PIDS:
                        break
    except OSError:
        return None
    return pids


def parse_pid_stat(text: str) -> ProcessStat | None:
    """/proc/PID/stat: `PID (COMM) STATE ...`. COMM is whatever the process named itself (prctl PR_SET_NAME):
    it may hold spaces, '(' and ')', so the fields after it start at the LAST ')'."""
    text = text[:MAX_PID_FILE_BYTES]
    open_at = text.find("(")
    close_at = text.rfind(")")
    if open_at < 1 or close_at < open_at:
        return None
    pid = _number(text[:open_at].strip())
    rest = text[close_at + 1 :].split()  # rest[0] is field 3 (state); field n is rest[n - 3]
    if pid is None or len(rest) < 20 or len(rest[0]) != 1:
        return None
    ppid, start_ticks = _number(rest[1]), _number(rest[19])
    if ppid is None or start_ticks is None:
        return None
    blkio = _number(rest[39]) if len(rest) > 39 else None
    comm = text[open_at + 1 : close_at][:64]
    return ProcessStat(pid=pid, comm=comm, state=rest[0], ppid=ppid, start_ticks=start_ticks, blkio_ticks=blkio)


def parse_pid_io(text: str) -> ProcessIo | None:
    """/proc/PID/io: `name: value` lines; None unless the three byte counters are there."""
    values = _key_values(text, ":")
    read, write, cancelled = (values.get(k) for k in ("read_bytes", "write_bytes", "cancelled_write_bytes"))
    if read is None or write is None or cancelled is None:
        return None
    return ProcessIo(read_bytes=read, write_bytes=write, cancelled_write_bytes=cancelled)


def read_process(pid: int, procfs_root: str = "/proc", *, with_io: bool = True) -> ProcessSample | None:
    """One process, or None when it is gone (or its stat is unreadable). Its I/O is None when /proc/PID/io is
    not readable: another user's process without root, or one ptrace rules protect even from root."""
    base = os.path.join(procfs_root, str(pid))
    text = _text(os.path.join(base, "stat"), MAX_PID_FILE_BYTES)
    stat = parse_pid_stat(text) if text is not None else None
    if stat is None:
        return None
    io = None
    if with_io:
        io_text = _text(os.path.join(base, "io"), MAX_PID_FILE_BYTES)
        io = parse_pid_io(io_text) if io_text is not None else None
    wchan = read_wchan(pid, procfs_root) if stat.state == "D" else None
    return ProcessSample(stat=stat, io=io, wchan=wchan)


def read_wchan(pid: int, procfs_root: str = "/proc") -> str | None:
    """The kernel function a sleeping process waits in (e.g. balance_dirty_pages), or None ('0' when running, or
    when kallsyms is hidden from this user)."""
    text = _text(os.path.join(procfs_root, str(pid), "wchan"), MAX_PID_FILE_BYTES)
    if text is None:
        return None
    name = text[:MAX_LINE_BYTES].strip()
    return name if name and name != "0" and name.isprintable() else None


def process_gone(pid: int, procfs_root: str = "/proc") -> bool:
    return not os.path.isdir(os.path.join(procfs_root, str(pid)))


# --- pressure, memory -----------------------------------------------------------------------------------------


def parse_pressure(text: str) -> Pressure | None:
    """`some avg10=0.38 avg60=0.18 avg300=0.18 total=2620312` and a `full ...` line."""
    lines: dict[str, PressureLine] = {}
    for raw in text.splitlines()[:8]:
        fields = raw[:MAX_LINE_BYTES].split()
        if len(fields) != 5 or fields[0] not in ("some", "full"):
            continue
        kind, pairs = fields[0], fields[1:]
        values = dict(pair.partition("=")[::2] for pair in pairs)
        avgs = [_decimal(values.get(k, "")) for k in ("avg10", "avg60", "avg300")]
        total = _number(values.get("total", ""))
        if total is None or any(a is None for a in avgs):
            continue
        avg10, avg60, avg300 = (a or 0.0 for a in avgs)
        lines[kind] = PressureLine(avg10, avg60, avg300, total)
    return Pressure(lines["some"], lines.get("full")) if "some" in lines else None


def read_pressure(resource: str, procfs_root: str = "/proc") -> Pressure | None:
    """/proc/pressure/io or /proc/pressure/memory; None without PSI (before 4.20, or psi=0 on the command line)."""
    text = _text(os.path.join(procfs_root, "pressure", resource), MAX_PID_FILE_BYTES)
    return parse_pressure(text) if text is not None else None


def _key_values(text: str, separator: str, wanted: frozenset[str] | None = None) -> dict[str, int]:
    """`name<separator> number [kB]` lines into {name: number}; other lines skipped."""
    out: dict[str, int] = {}
    for raw in text.splitlines():
        name, sep, rest = raw[:MAX_LINE_BYTES].partition(separator)
        if not sep or (wanted is not None and name not in wanted):
            continue
        fields = rest.split()
        value = _number(fields[0]) if fields else None
        if value is not None:
            out[name.strip()] = value
    return out


_VMSTAT = frozenset({"pswpin", "pswpout", "nr_dirty_threshold"})
_MEMINFO = frozenset({"MemTotal", "MemAvailable", "Dirty", "Writeback", "SwapTotal", "SwapFree"})


def parse_memory(vmstat: str | None, meminfo: str | None) -> MemoryCounters | None:
    vm = _key_values(vmstat[:MAX_TABLE_BYTES], " ", _VMSTAT) if vmstat else {}
    mem = _key_values(meminfo[:MAX_TABLE_BYTES], ":", _MEMINFO) if meminfo else {}
    if not vm and not mem:
        return None
    return MemoryCounters(
        swap_in_pages=vm.get("pswpin"),
        swap_out_pages=vm.get("pswpout"),
        dirty_kib=mem.get("Dirty"),
        writeback_kib=mem.get("Writeback"),
        mem_total_kib=mem.get("MemTotal"),
        mem_available_kib=mem.get("MemAvailable"),
        swap_total_kib=mem.get("SwapTotal"),
        swap_free_kib=mem.get("SwapFree"),
        dirty_threshold_pages=vm.get("nr_dirty_threshold"),
    )


def read_memory(procfs_root: str = "/proc") -> MemoryCounters | None:
    """/proc/vmstat (swap-in and swap-out since boot) and /proc/meminfo (dirty and writeback now)."""
    return parse_memory(
        _text(os.path.join(procfs_root, "vmstat"), MAX_TABLE_BYTES),
        _text(os.path.join(procfs_root, "meminfo"), MAX_TABLE_BYTES),
    )


def read_task_delayacct(procfs_root: str = "/proc") -> bool | None:
    """kernel.task_delayacct (Linux 5.14+): whether block-I/O delay is counted per task; None when there is no
    such sysctl (older kernels decide at boot: `delayacct`/`nodelayacct` on the command line)."""
    text = _text(os.path.join(procfs_root, "sys", "kernel", "task_delayacct"), MAX_PID_FILE_BYTES)
    value = text[:MAX_LINE_BYTES].strip() if text is not None else ""
    return {"0": False, "1": True}.get(value)


def read_uptime(procfs_root: str = "/proc") -> float | None:
    """Seconds since boot (/proc/uptime's first figure): the clock of a captured snapshot."""
    text = _text(os.path.join(procfs_root, "uptime"), MAX_PID_FILE_BYTES)
    fields = text[:MAX_LINE_BYTES].split() if text else []
    return _decimal(fields[0]) if fields else None


def clock_ticks_per_s() -> int:
    """USER_HZ, the unit of /proc/PID/stat's times (100 on every Linux architecture today)."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return 100
    return ticks if ticks > 0 else 100
