"""fio's bandwidth log (`--write_bw_log=PREFIX --log_avg_msec=N`), parsed (pure).

Format (fio HOWTO, "Log File Formats"): one line per entry, comma-separated:
    time (ms since the job started), value, data direction, block size, offset[, command priority]
- For bandwidth logs the value is KiB/s (1024 bytes per second), checked against fio 3.33's JSON
  `bw_bytes` on the same run.
- Data direction: 0 read, 1 write, 2 trim (3 sync in later releases).
- With log_avg_msec each entry is the average over that window, and block size and offset are 0.
- fio 3.33 writes five fields; fio 3.35 and later add the command priority as a sixth; fio 2.x wrote
  four (no offset unless log_offset=1). All are accepted.
- The file is PREFIX_bw.N.log, N the job number (per_job_logs=1, the default).
The directory fio writes it into is made by probe/target.py (`fio_log_dir`), which also removes what a killed run
left behind.
"""

from __future__ import annotations

from disksleuth.errors import ParseError
from disksleuth.model.fio import BwLogEntry

KIB = 1024
DIRECTIONS = {0: "read", 1: "write", 2: "trim", 3: "sync"}


def parse_bw_log(text: str) -> tuple[BwLogEntry, ...]:
    """Every entry of one bandwidth log, in file order. Raises ParseError on anything else."""
    out: list[BwLogEntry] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if not 4 <= len(fields) <= 6:
            raise ParseError(f"fio bandwidth log line {number}: expected 4 to 6 fields, got {len(fields)}")
        try:
            t_ms, value, ddir = int(fields[0]), int(fields[1]), int(fields[2])
        except ValueError:
            raise ParseError(f"fio bandwidth log line {number}: not a number: {line.strip()[:60]!r}") from None
        if t_ms < 0 or value < 0 or ddir not in DIRECTIONS:
            raise ParseError(f"fio bandwidth log line {number}: out of range: {line.strip()[:60]!r}")
        if out and t_ms < out[-1].t_ms:
            raise ParseError(f"fio bandwidth log line {number}: time goes backwards ({t_ms} ms)")
        out.append(BwLogEntry(t_ms, float(value * KIB), DIRECTIONS[ddir]))
    return tuple(out)


def read_bw_log(prefix: str, job: int = 1) -> tuple[BwLogEntry, ...]:
    """The bandwidth log fio wrote for `--write_bw_log=PREFIX` (job 1 unless told)."""
    path = f"{prefix}_bw.{job}.log"
    try:
        with open(path) as fh:
            text = fh.read(64 * 1024 * 1024)  # 100 ms windows for a day stay far below this
    except OSError as exc:
        raise ParseError(f"fio wrote no bandwidth log at {path}: {exc.strerror}") from None
    return parse_bw_log(text)


# A per-I/O latency log (`--write_lat_log=PREFIX --log_avg_msec=0`): one line per completed request,
#   time of its completion (ms since the stats began: after the ramp), its latency (ns), direction, block size, ...
# fio writes PREFIX_lat.N.log (total latency) beside _clat and _slat. Only tests with few, large requests log
# this way (run/bench.py), so a log stays a few thousand lines a second.
LAT_LOG_MAX_BYTES = 64 * 1024 * 1024
LAT_LOG_MAX_LINE = 200


def parse_lat_log(text: str) -> tuple[tuple[int, int, str, int], ...]:
    """(completion ms, latency ns, direction, block size bytes) of every entry, in file order.
    Raises ParseError on anything else."""
    out: list[tuple[int, int, str, int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line[:LAT_LOG_MAX_LINE].split(",")
        if not 4 <= len(fields) <= 6:
            raise ParseError(f"fio latency log line {number}: expected 4 to 6 fields, got {len(fields)}")
        try:
            t_ms, lat_ns, ddir, bs = (int(f) for f in fields[:4])
        except ValueError:
            raise ParseError(f"fio latency log line {number}: not a number: {line.strip()[:60]!r}") from None
        if t_ms < 0 or lat_ns < 0 or bs < 0 or ddir not in DIRECTIONS:
            raise ParseError(f"fio latency log line {number}: out of range: {line.strip()[:60]!r}")
        out.append((t_ms, lat_ns, DIRECTIONS[ddir], bs))
    return tuple(out)


def read_lat_logs(prefix: str, jobs: int) -> tuple[tuple[int, int, str, int], ...]:
    """Every completion fio logged for `--write_lat_log=PREFIX` over its `jobs` jobs, in time order."""
    out: list[tuple[int, int, str, int]] = []
    for job in range(1, jobs + 1):
        path = f"{prefix}_lat.{job}.log"
        try:
            with open(path) as fh:
                text = fh.read(LAT_LOG_MAX_BYTES)
        except OSError as exc:
            raise ParseError(f"fio wrote no latency log at {path}: {exc.strerror}") from None
        if len(text) >= LAT_LOG_MAX_BYTES:
            raise ParseError(f"fio's latency log {path} is larger than {LAT_LOG_MAX_BYTES // 1024 // 1024} MiB")
        out.extend(parse_lat_log(text))
    out.sort(key=lambda e: e[0])
    return tuple(out)
