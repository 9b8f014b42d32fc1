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
