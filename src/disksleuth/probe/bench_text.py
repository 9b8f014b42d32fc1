"""Figures from pasted benchmark output (pure): fio's normal text and its JSON, `hdparm -t`/`-T`, and dd's summary
line. Each figure keeps the line it was read from, and says how it was read, so a misread is visible.

Lines, from the tools' sources and real captures (tests/data/paste/{fio,hdparm,dd}, SOURCES.md there):
- fio (2.x, 3.x) text: the job line "name: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..." gives each group's
  rw and block size; "name: (groupid=0, jobs=4): err= 0: ..." opens a job's report, whose
  "read: IOPS=65.5k, BW=512MiB/s (537MB/s)(150GiB/300001msec)" (fio 3) or
  "read : io=..., bw=56946KB/s, iops=14236, runt=..." (fio 2) lines carry the figures; "Run status group 0 (all
  jobs):" then "READ: bw=11.0MiB/s (12.6MB/s), ..." sums a group (used when no job line was pasted).
- fio JSON: "global options"/"job options" hold rw and bs; read/write hold bw_bytes and iops.
- hdparm: "/dev/sda:" then " Timing buffered disk reads: 5104 MB in  3.00 seconds = 1701.12 MB/sec". hdparm's MB
  is 2^20 bytes (its timing buffer is counted in MiB), and it prints "%.2f" as the C locale does.
- dd (coreutils): "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 3.67359 s, 292 MB/s"; older: "... bytes (1.1 GB)
  copied, ..."; in a locale with decimal commas the seconds and rate carry commas ("3,67359 s, 292 MB/s"). The
  figure is computed from the byte count and the seconds, so the locale of the rate does not matter. Whether dd
  read or wrote the device is only known from its command line (if=/dev/... or of=/dev/...).
Parsing is one pass, anchored patterns only: linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from disksleuth.errors import ParseError, UsageError
from disksleuth.model.paste import PastedFigure
from disksleuth.probe.fio_parse import report_from_document
from disksleuth.probe.paste_text import iter_lines
from disksleuth.units import fmt_rate, parse_rate

# The job's rw= and bs= on fio's command line ("fio --bs=7K --name=Client1 --rw=write"): used when the paste holds
# no job line, the output fio's HOWTO shows after its command.
_CMD_RW = re.compile(r"(?:^|\s)--?(?:rw|readwrite)=(\w+)")
_CMD_BS = re.compile(r"(?:^|\s)--?(?:bs|blocksize)=(\d+(?:\.\d+)?)([kKMG]?i?B?)(?=\s|$)")
_FIO_JOB = re.compile(r"^\s*\S{1,64}: \(g=(\d+)\): rw=(\w+), bs=(?:\(R\) )?(\d+(?:\.\d+)?)([KMG]?i?B?)\b")
_FIO_REPORT = re.compile(r"^\s*\S{1,64}: \(groupid=(\d+), jobs=\d+\)")
_FIO_DIR3 = re.compile(r"^\s*(read|write): IOPS=(\d+(?:\.\d+)?)([kM]?), BW=(\S+(?: \([^)]*\))?)")
_FIO_DIR2 = re.compile(r"^\s*(read|write)\s*: io=[^,]+, bw=([\d.]+[KMG]?i?B/s), iops=(\d+(?:\.\d+)?)([kM]?)")
_FIO_GROUP = re.compile(r"^\s*Run status group (\d+)")
_FIO_SUM = re.compile(r"^\s*(READ|WRITE): (?:bw=(\S+(?: \([^)]*\))?)|io=[^,]+, aggrb=([\d.]+[KMG]?i?B/s))")
_HDPARM_DEV = re.compile(r"^\s*(/dev/\S+):\s*$")
_HDPARM = re.compile(
    r"^\s*Timing (O_DIRECT )?(cached|buffered disk|buffer-cache) reads:\s+(\d+) MB in\s+(\d+[.,]\d+) seconds\s*="
    r"\s*(\d+[.,]\d+) ([kMG]B)/sec"
)
_DD = re.compile(r"^\s*(\d+) bytes(?: \([^)]{1,40}\))?(?: \([^)]{1,40}\))? copied, (\d+(?:[.,]\d+)?(?:e-?\d+)?) s\b")
# /dev/zero, /dev/null and the like are not drives: "dd if=/dev/zero of=/dev/sdb" writes sdb, "if=/dev/zero
# of=/dev/null" (coreutils' manual's example) measures memory.
_NOT_A_DRIVE = r"(?:zero|null|u?random|full|std(?:in|out|err)|fd/\S*|shm/\S*)(?!\S)"
_DD_DEV = re.compile(r"\b(if|of)=/dev/(?!" + _NOT_A_DRIVE + r")(\S+)")
_DD_SPECIAL = re.compile(r"\b(?:if|of)=/dev/" + _NOT_A_DRIVE)
_FIO_FILENAME = re.compile(r"--?filename=/dev/(\S+)")
_BS = re.compile(r"(\d++(?:\.\d++)?)\s*+([KMG]?i?B?)", re.I)
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6}
_BS_SCALE = {"": 1, "B": 1, "K": 1024, "KIB": 1024, "KB": 1024, "M": 1 << 20, "MIB": 1 << 20, "MB": 1 << 20}
_HDPARM_UNIT = {"kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}  # hdparm's units are binary
_RANDOM_4K_BYTES = 4096


def _device(text: str | None) -> str | None:
    """'/dev/sda' -> 'sda'; a /dev/disk/by-id path is not a name (it holds the serial): None."""
    if not text or "/disk/" in text or "/by-" in text:
        return None
    name = text.removeprefix("/dev/").strip().rstrip(":")
    return name if re.fullmatch(r"[A-Za-z0-9_.!-]{1,40}", name) else None


def command_device(command: str | None) -> str | None:
    """The device a pasted command line names (fio --filename=/dev/X, dd if=/dev/X or of=/dev/X)."""
    if not command:
        return None
    m = _FIO_FILENAME.search(command) or _DD_DEV.search(command)
    return _device(m.group(m.lastindex or 1)) if m else None


def _bs_bytes(number: str, unit: str) -> int | None:
    try:
        return int(float(number) * _BS_SCALE[unit.upper()])
    except KeyError:
        return None


def _rate(text: str) -> float | None:
    """fio prints a rate twice, binary then decimal in brackets ('11.0MiB/s (12.6MB/s)'); fio 3.1 rounded the
    binary one wrongly (3068 IOPS x 4 KiB is 12.6 MB/s, not 11.0 MiB/s), so the decimal one is read."""
    decimal = re.search(r"\(([\d.]+[kMG]B/s)\)", text)
    try:
        return parse_rate(decimal.group(1) if decimal else text.split(" ")[0]).mbps
    except UsageError:
        return None


def _classify(rw: str | None, bs: int | None, direction: str) -> tuple[str | None, str | None]:
    """(measure for MB/s, measure for IOPS) of a fio direction under its job's rw and bs; None: not judged."""
    if rw is None:
        return None, None
    if rw.startswith("rand") or rw in ("randrw", "trimwrite"):
        if bs == _RANDOM_4K_BYTES:
            return None, f"rand_{direction}_iops"
        return "other_mbps", None
    return f"seq_{direction}_mbps", None


def parse_fio_text(text: str, first_line: int = 1, command: str | None = None) -> list[PastedFigure]:
    """The figures of fio's normal output: per job ('read: IOPS=..., BW=...'), else per group ('READ: bw=')."""
    jobs: dict[str, tuple[str, int | None]] = {}  # group -> (rw, bs bytes)
    per_job: list[PastedFigure] = []
    per_group: list[PastedFigure] = []
    group: str | None = None
    device = command_device(command)
    from_command = _command_job(command)
    for offset, line in enumerate(iter_lines(text)):  # the normaliser's lines: "\n" only, as numbered
        no = first_line + offset
        m = _FIO_JOB.match(line)
        if m:
            jobs.setdefault(m.group(1), (m.group(2), _bs_bytes(m.group(3), m.group(4))))
            continue
        m = _FIO_REPORT.match(line) or _FIO_GROUP.match(line)
        if m:
            group = m.group(1)
            continue
        rw, bs = jobs.get(group or "0", from_command)
        job_line = _fio_job_line(line)
        total = _FIO_SUM.match(line)
        if job_line is not None:
            direction, mbps, iops = job_line
            per_job.extend(_fio_figures("fio", rw, bs, direction, mbps, iops, no, device))
        elif total:
            sum_mbps = _rate(total.group(2) or total.group(3))
            sum_iops = sum_mbps * 1e6 / bs if sum_mbps is not None and bs else None
            per_group.extend(_fio_figures("fio", rw, bs, total.group(1).lower(), sum_mbps, sum_iops, no, device))
    return per_job or per_group


def _command_job(command: str | None) -> tuple[str | None, int | None]:
    """(rw, bs bytes) from fio's command line when it defines one job (one --name=, one rw=), else unknown."""
    rws = set(_CMD_RW.findall(command or ""))
    if len(rws) != 1 or len(re.findall(r"(?:^|\s)--?name=", command or "")) > 1:
        return None, None
    sizes = {_bs_bytes(n, u) for n, u in _CMD_BS.findall(command or "")}
    return rws.pop(), sizes.pop() if len(sizes) == 1 else None


def _fio_job_line(line: str) -> tuple[str, float | None, float] | None:
    """(direction, MB/s, IOPS) of a job's "read: IOPS=..., BW=..." (fio 3) or "read : io=..., bw=..." (fio 2)."""
    m3 = _FIO_DIR3.match(line)
    if m3:
        return m3.group(1), _rate(m3.group(4)), float(m3.group(2)) * _SCALE[m3.group(3)]
    m2 = _FIO_DIR2.match(line)
    if m2:
        return m2.group(1), _rate(m2.group(2)), float(m2.group(3)) * _SCALE[m2.group(4)]
    return None


def _fio_figures(
    tool: str, rw: str | None, bs: int | None, direction: str, mbps: float | None, iops: float | None,
    no: int, device: str | None,
) -> list[PastedFigure]:  # fmt: skip
    by_rate, by_iops = _classify(rw, bs, direction)
    if rw is None:
        unknown = "no job line (rw=, bs=) above it: sequential or random is unknown"
        return [PastedFigure(tool, "unknown_mbps", mbps, no, fmt_rate(mbps), device, unknown)] if mbps else []
    if by_iops and iops is not None:
        return [PastedFigure(tool, by_iops, iops, no, f"{iops:,.0f} IOPS ({rw}, 4 KiB)", device)]
    if by_rate and mbps is not None:
        note = f"{rw} with {bs:,} B blocks: not a 4 KiB random figure" if by_rate == "other_mbps" and bs else None
        return [PastedFigure(tool, by_rate, mbps, no, f"{fmt_rate(mbps)} ({rw})", device, note)]
    return []


@dataclass(frozen=True)
class FioJsonTarget:
    """What a fio JSON result says about where it ran: each job's file, and the devices fio's disk_util names (the
    file's device first, then the members of an array under it, as fio lists them)."""

    jobs: tuple[tuple[str, str | None], ...]  # (job name, its filename or directory as set)
    disks: tuple[str, ...]

    @property
    def device(self) -> str | None:
        """The device the figures are about: a job's /dev/ filename, else the first disk fio's disk_util names."""
        for _name, file in self.jobs:
            name = _device(file) if file and file.startswith("/dev/") and ":" not in file else None
            if name:
                return name
        return self.disks[0] if self.disks else None


def fio_json_target(doc: Any) -> FioJsonTarget:
    """The jobs' files and disk_util's devices of one decoded fio JSON document (names cut to 200 characters)."""
    if not isinstance(doc, dict):
        return FioJsonTarget((), ())
    glob_opts = doc.get("global options")
    glob: dict[str, Any] = glob_opts if isinstance(glob_opts, dict) else {}
    jobs: list[tuple[str, str | None]] = []
    raw_jobs = doc.get("jobs")
    for raw in raw_jobs if isinstance(raw_jobs, list) else []:
        if not isinstance(raw, dict):
            continue
        opts = dict(glob)
        if isinstance(raw.get("job options"), dict):
            opts.update(raw["job options"])
        file, directory = opts.get("filename"), opts.get("directory")
        where = str(file) if file else None
        if where and directory and not where.startswith("/"):
            where = f"{directory}/{where}"
        elif not where and directory:
            where = str(directory)
        jobs.append((str(raw.get("jobname", ""))[:200], where[:200] if where else None))
    disks = []
    util = doc.get("disk_util")
    for d in util if isinstance(util, list) else []:
        name = d.get("name") if isinstance(d, dict) else None
        if isinstance(name, str) and _device(name):
            disks.append(name)
    return FioJsonTarget(tuple(jobs[:64]), tuple(disks[:64]))


def fio_json_figures(doc: Any, first_line: int = 1, command: str | None = None) -> list[PastedFigure]:
    """The figures of one decoded fio --output-format=json document, each named by its job. The caller decodes it
    (a paste's JSON is decoded within a memory budget, run/paste.py), so this stays a pure function of the value."""
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise ParseError("fio JSON without a 'jobs' list")
    report = report_from_document(doc)
    glob_opts = doc.get("global options")
    glob: dict[str, Any] = glob_opts if isinstance(glob_opts, dict) else {}
    device = command_device(command) or _device(str(glob.get("filename", "")) or None)
    out: list[PastedFigure] = []
    for raw, job in zip((j for j in doc["jobs"] if isinstance(j, dict)), report.jobs, strict=False):
        opts: dict[str, Any] = dict(glob)
        if isinstance(raw.get("job options"), dict):
            opts.update(raw["job options"])
        rw = str(opts.get("rw") or opts.get("readwrite") or "read")
        bs = _bs_of(str(opts.get("bs") or opts.get("blocksize") or "4k"))
        name = job.name[:64]
        for direction in ("read", "write"):
            d = getattr(job, direction)
            if d is None or not d.active:
                continue
            for fig in _fio_figures("fio --output-format=json", rw, bs, direction, d.bw_bytes / 1e6, d.iops,
                                    first_line, device):  # fmt: skip
                out.append(replace(fig, read_as=f"job {name}: {fig.read_as}") if name else fig)
    return out


def _bs_of(text: str) -> int | None:
    """fio's bs option as written in its JSON ("4k", "1M", "4096"); stripped in Python, since a pattern with a
    run of spaces on both sides of the unit tried every split of a long run."""
    text = text.strip()
    m = _BS.fullmatch(text) if len(text) <= 32 else None
    return _bs_bytes(m.group(1), m.group(2)) if m else None


def parse_hdparm_text(text: str, first_line: int = 1) -> list[PastedFigure]:
    """`hdparm -t` (buffered disk reads: the device) and `-T` (cached reads: memory, shown, never judged)."""
    out: list[PastedFigure] = []
    device: str | None = None
    for offset, line in enumerate(iter_lines(text)):  # the normaliser's lines: "\n" only, as numbered
        no = first_line + offset
        m = _HDPARM_DEV.match(line)
        if m:
            device = _device(m.group(1))
            continue
        m = _HDPARM.match(line)
        if not m:
            continue
        value = float(m.group(5).replace(",", "."))
        mbps = value * _HDPARM_UNIT[m.group(6)] / 1e6
        read_as = f"{value:,.2f} {m.group(6)}/sec (hdparm's {m.group(6)} is binary) = {fmt_rate(mbps)}"
        if m.group(2) == "buffered disk":
            tool = "hdparm -t --direct" if m.group(1) else "hdparm -t"
            out.append(PastedFigure(tool, "seq_read_mbps", mbps, no, read_as, device))
        else:
            note = "cached reads measure memory, not the drive"
            out.append(PastedFigure("hdparm -T", "cached_read_mbps", mbps, no, read_as, device, note))
    return out


def parse_dd_text(text: str, first_line: int = 1, command: str | None = None) -> list[PastedFigure]:
    """dd's summary line, from its byte count and seconds; read or write only when its command line says."""
    out: list[PastedFigure] = []
    direction = None
    dev_match = _DD_DEV.search(command or "")
    if dev_match:
        direction = "read" if dev_match.group(1) == "if" else "write"
    device = _device(dev_match.group(2)) if dev_match else None
    for offset, line in enumerate(iter_lines(text)):  # the normaliser's lines: "\n" only, as numbered
        m = _DD.match(line)
        if not m:
            continue
        seconds = float(m.group(2).replace(",", "."))
        if seconds <= 0:
            continue
        mbps = int(m.group(1)) / seconds / 1e6
        read_as = f"{int(m.group(1)):,} bytes in {seconds:g} s = {fmt_rate(mbps)}"
        if direction is None:
            note = "no dd command line (if=/dev/... or of=/dev/...) above it: read or write is unknown"
            if _DD_SPECIAL.search(command or ""):
                note = "its command names no drive (/dev/zero, /dev/null, ...): it measures memory, not a drive"
            out.append(PastedFigure("dd", "unknown_mbps", mbps, first_line + offset, read_as, None, note))
        else:
            out.append(PastedFigure("dd", f"seq_{direction}_mbps", mbps, first_line + offset, read_as, device))
    return out
