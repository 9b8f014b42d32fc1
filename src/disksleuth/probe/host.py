"""The host a run happened on."""

from __future__ import annotations

import os
import platform
import socket

from disksleuth import __version__


def host_info(fio_version: str | None = None) -> dict[str, str | int | None]:
    cpu = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "fio_version": fio_version,
        "disksleuth_version": __version__,
    }
