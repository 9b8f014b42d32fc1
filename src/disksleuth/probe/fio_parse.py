"""Pure parsers for fio's JSON output (`--output-format=json`).

Quirks handled, each seen in real output (tests/data/fio):
- fio 3.x reports latencies in ns under `slat_ns`/`clat_ns`/`lat_ns`; fio 2.x used `clat`/`lat` in us
  (stat.c, show_thread_status_json(), changed in fio 3.0).
- Percentiles live under `lat_ns.percentile` only with `--lat_percentiles=1`; otherwise under
  `clat_ns.percentile` (fio 3.16 and 3.33 alike). Keys are strings like "99.900000".
- `--unified_rw_reporting=mixed` (or `1`) replaces `read`/`write` with one `mixed` object.
- Without `--group_reporting`, each job (each of numjobs) is its own entry in `jobs`.
- `--status-interval` prints one complete, cumulative JSON document per interval, back to back.
- fio prints `note:` and `fio:` lines on stdout before the JSON (fio 3.33: "note: both iodepth >= 1
  and synchronous I/O engine are selected", "fio: first direct IO errored...").
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from disksleuth.errors import ParseError
from disksleuth.model.fio import FioDirection, FioJob, FioReport

_DECODER = json.JSONDecoder()
_NOISE_RE = re.compile(r"^(fio|note|warning|fio-\d)[:\s]", re.IGNORECASE)
_DOC_START_RE = re.compile(r"^\{", re.MULTILINE)


def split_documents(buf: str) -> tuple[list[dict[str, Any]], list[str], str]:
    """Split a stream of back-to-back JSON documents and stray text lines.

    Returns (documents, stray lines, unparsed remainder). The remainder is an incomplete document
    at the end of the buffer (more may come), or '' when everything was consumed.
    """
    docs: list[dict[str, Any]] = []
    stray: list[str] = []
    pos = 0
    n = len(buf)
    while pos < n:
        m = _DOC_START_RE.search(buf, pos)
        head = buf[pos : m.start()] if m else buf[pos:]
        stray.extend(ln.strip() for ln in head.splitlines() if ln.strip())
        if not m:
            return docs, stray, ""
        try:
            obj, end = _DECODER.raw_decode(buf, m.start())
        except json.JSONDecodeError:
            return docs, stray, buf[m.start() :]
        except (ValueError, RecursionError) as exc:
            # Not an incomplete document but an impossible one: an integer past Python's 4,300-digit
            # limit (ValueError), or nesting deeper than the recursion limit. fio writes neither.
            raise ParseError(f"fio output holds a malformed JSON document ({_reason(exc)})") from None
        if isinstance(obj, dict):
            docs.append(obj)
        pos = end
    return docs, stray, ""


def parse_fio_json(text: str) -> FioReport:
    """The last complete document in fio's stdout. Raises ParseError with a plain reason."""
    docs, stray, rest = split_documents(text)
    if rest:
        # fio error text can land inside a document when stdout is a pipe; drop such lines and retry.
        cleaned = "\n".join(ln for ln in rest.splitlines() if not _NOISE_RE.match(ln.strip()))
        more, more_stray, rest = split_documents(cleaned)
        docs.extend(more)
        stray.extend(more_stray)
        seen = set(stray)  # a set: a list lookup per line was quadratic on a long run of noise lines
        for line in text.splitlines():
            line = line.strip()
            if line not in seen and _NOISE_RE.match(line):
                stray.append(line)
                seen.add(line)
    fio_docs = [d for d in docs if "jobs" in d]
    if not fio_docs:
        reason = "truncated" if rest else "not fio JSON output"
        detail = f" (fio said: {'; '.join(stray[-3:])})" if stray else ""
        raise ParseError(f"fio output is {reason}{detail}")
    return report_from_document(fio_docs[-1], tuple(stray))


def report_from_document(doc: dict[str, Any], messages: tuple[str, ...] = ()) -> FioReport:
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list):
        raise ParseError("fio JSON has no 'jobs' list")
    version = doc.get("fio version")
    return FioReport(
        version=version if isinstance(version, str) else None,
        timestamp_ms=_int(doc.get("timestamp_ms")),
        jobs=tuple(_job(j) for j in jobs if isinstance(j, dict)),
        messages=messages,
    )


def _reason(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0][:80]


# Every figure fio reports here (bytes, IOPS, ns, ms, CPU %) is a finite number >= 0, its counters
# are uint64 (stat.h). Anything else (NaN, Infinity, negative, past 2^64, a string, a bool) is
# treated as missing rather than trusted or raised.
_UINT64_END = 1 << 64


def _int(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        v = int(v) if math.isfinite(v) and v >= 0 else None
    elif isinstance(v, str):  # older fio printed some counters as strings
        v = int(v) if v.isascii() and v.isdigit() and len(v) <= 20 else None
    return v if isinstance(v, int) and 0 <= v < _UINT64_END else None


def _float(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, str):
        try:
            v = float(v) if len(v) <= 40 else None
        except ValueError:
            return None
    if isinstance(v, int):
        v = float(v) if abs(v) < _UINT64_END else None
    return v if isinstance(v, float) and math.isfinite(v) and v >= 0 else None


def _lat(d: dict[str, Any], key_ns: str, key_us: str) -> tuple[dict[str, Any] | None, float]:
    """A latency object and the factor that converts its values to ns."""
    if isinstance(d.get(key_ns), dict):
        return d[key_ns], 1.0
    if isinstance(d.get(key_us), dict):  # fio 2.x: microseconds
        return d[key_us], 1000.0
    return None, 1.0


def _direction(d: object) -> FioDirection | None:
    if not isinstance(d, dict):
        return None
    lat, lat_scale = _lat(d, "lat_ns", "lat")
    clat, clat_scale = _lat(d, "clat_ns", "clat")
    percentiles: dict[float, float] = {}
    source = None
    for obj, scale, name in ((lat, lat_scale, "lat"), (clat, clat_scale, "clat")):
        if obj and isinstance(obj.get("percentile"), dict) and obj["percentile"]:
            for k, v in obj["percentile"].items():
                pk, pv = _float(k), _float(v)
                if pk is not None and pv is not None and pk <= 100 and math.isfinite(pv * scale):
                    percentiles[pk] = pv * scale
            source = name
            break
    total = lat or clat
    scale = lat_scale if lat else clat_scale
    mean = _float(total.get("mean")) if total else None
    mx = _float(total.get("max")) if total else None
    return FioDirection(
        io_bytes=_int(d.get("io_bytes")) or 0,
        bw_bytes=_float(d.get("bw_bytes")) or 0.0
        if d.get("bw_bytes") is not None
        else _finite((_float(d.get("bw")) or 0.0) * 1024) or 0.0,
        iops=_float(d.get("iops")) or 0.0,
        total_ios=_int(d.get("total_ios")) or 0,
        runtime_ms=_int(d.get("runtime")) or 0,
        lat_mean_ns=_finite(mean * scale) if mean is not None else None,
        lat_max_ns=_finite(mx * scale) if mx is not None else None,
        percentiles_ns=percentiles,
        percentile_source=source,
    )


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _job(j: dict[str, Any]) -> FioJob:
    return FioJob(
        name=str(j.get("jobname", "")),
        error=_int(j.get("error")) or 0,
        read=_direction(j.get("read")),
        write=_direction(j.get("write")),
        mixed=_direction(j.get("mixed")),
        usr_cpu=_float(j.get("usr_cpu")),
        sys_cpu=_float(j.get("sys_cpu")),
        job_runtime_ms=_int(j.get("job_runtime")),
        elapsed_s=_int(j.get("elapsed")),
    )


def _merge_dir(dirs: list[FioDirection | None]) -> FioDirection | None:
    present = [d for d in dirs if d is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    total_ios = sum(d.total_ios for d in present)
    weighted = [(d.lat_mean_ns, d.total_ios) for d in present if d.lat_mean_ns is not None and d.total_ios]
    mean = sum(lat_ns * ios for lat_ns, ios in weighted) / total_ios if weighted and total_ios else None
    maxes = [d.lat_max_ns for d in present if d.lat_max_ns is not None]
    # Percentiles of separate jobs cannot be merged exactly; the worst job's value is a safe bound.
    keys = set().union(*(d.percentiles_ns for d in present))
    pct = {k: max(d.percentiles_ns.get(k, 0.0) for d in present) for k in keys}
    return FioDirection(
        io_bytes=sum(d.io_bytes for d in present),
        bw_bytes=sum(d.bw_bytes for d in present),
        iops=sum(d.iops for d in present),
        total_ios=total_ios,
        runtime_ms=max(d.runtime_ms for d in present),
        lat_mean_ns=mean,
        lat_max_ns=max(maxes) if maxes else None,
        percentiles_ns=pct,
        percentile_source=present[0].percentile_source,
    )


def aggregate(report: FioReport) -> FioJob:
    """One job for the whole report: as is with group_reporting, merged otherwise."""
    jobs = report.jobs
    if not jobs:
        raise ParseError("fio reported no jobs")
    if len(jobs) == 1:
        return jobs[0]
    cpu = [j for j in jobs if j.usr_cpu is not None]
    return FioJob(
        name=jobs[0].name,
        error=next((j.error for j in jobs if j.error), 0),
        read=_merge_dir([j.read for j in jobs]),
        write=_merge_dir([j.write for j in jobs]),
        mixed=_merge_dir([j.mixed for j in jobs]),
        usr_cpu=sum(j.usr_cpu or 0 for j in cpu) / len(cpu) if cpu else None,
        sys_cpu=sum(j.sys_cpu or 0 for j in cpu) / len(cpu) if cpu else None,
        job_runtime_ms=sum(j.job_runtime_ms or 0 for j in jobs),
        elapsed_s=max((j.elapsed_s or 0) for j in jobs),
        jobs_merged=len(jobs),
        percentiles_approx=True,
    )
