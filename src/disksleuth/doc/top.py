"""`top --json`: one sample as a document ("kind": "top"). Rates carry their units in their names; a figure that
could not be measured is null, never 0."""

from __future__ import annotations

from typing import Any

from disksleuth.analysis.top_words import summary
from disksleuth.model.top import DeviceRate, ProcessRate, TopReport


def _r(value: float | None, digits: int = 2) -> float | None:
    return round(value, digits) if value is not None else None


def _device(d: DeviceRate) -> dict[str, Any]:
    return {
        "name": d.name,
        "device_class": d.device_class,
        "reads_per_s": _r(d.reads_per_s, 1),
        "writes_per_s": _r(d.writes_per_s, 1),
        "read_mbps": _r(d.read_mbps, 3),
        "write_mbps": _r(d.write_mbps, 3),
        "r_await_ms": _r(d.r_await_ms),
        "w_await_ms": _r(d.w_await_ms),
        "queue_size": _r(d.queue_size),
        "util_pct": _r(d.util_pct, 1),
        "avg_request_kb": _r(d.avg_request_kb, 1),
        "in_flight": d.in_flight,
        "ceiling_mbps": d.ceiling_mbps,
        "ceiling_label": d.ceiling_label,
        "link_share_pct": _r(d.link_share_pct, 1),
    }


def _process(p: ProcessRate) -> dict[str, Any]:
    return {
        "pid": p.pid,
        "comm": p.comm,
        "state": p.state,
        "read_mbps": _r(p.read_mbps, 3),
        "write_mbps": _r(p.write_mbps, 3),
        "blkio_delay_pct": _r(p.blkio_delay_pct, 1),
        "wchan": p.wchan,
    }


def top_document(report: TopReport, *, devices: list[str], pids: list[int]) -> dict[str, Any]:
    """`devices` and `pids`: what --device and --pid narrowed the sample to (empty: everything)."""
    memory = report.memory
    return {
        "kind": "top",
        "interval_s": round(report.interval_s, 3),
        "narrowed_to": {"devices": devices, "pids": pids},
        "devices": [_device(d) for d in report.devices],
        "processes": [_process(p) for p in report.processes],
        "processes_seen": report.processes_seen,
        "processes_exited": report.processes_exited,
        "processes_unreadable": report.processes_unreadable,
        "delay_accounting": report.delayacct,
        "pressure": {
            "io_some_pct": _r(report.pressure.io_some_pct, 1),
            "io_full_pct": _r(report.pressure.io_full_pct, 1),
            "memory_some_pct": _r(report.pressure.memory_some_pct, 1),
            "memory_full_pct": _r(report.pressure.memory_full_pct, 1),
        },
        "memory": None
        if memory is None
        else {
            "swap_in_pages_per_s": _r(memory.swap_in_pages_per_s, 1),
            "swap_out_pages_per_s": _r(memory.swap_out_pages_per_s, 1),
            "dirty_mb": _r(memory.dirty_mb, 1),
            "writeback_mb": _r(memory.writeback_mb, 1),
            "swap_used_mb": _r(memory.swap_used_mb, 1),
            "mem_available_mb": _r(memory.mem_available_mb, 1),
            "page_bytes": memory.page_bytes,
        },
        "temperatures": [
            {"device": t.device, "temperature_c": t.temp_c, "warning_c": t.warn_c, "critical_c": t.crit_c}
            for t in report.temperatures
        ],
        "findings": [f.to_dict() for f in report.findings],
        "notes": list(report.notes),
        "summary": summary(report),
    }
