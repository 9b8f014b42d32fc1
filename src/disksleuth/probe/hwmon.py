"""Drive temperature from hwmon (no root needed), and a sampler that reads it once a second.

Layouts (drivers/nvme/host/hwmon.c registers under the controller; drivers/hwmon/drivetemp.c under
the SCSI device): /sys/block/nvme0n1/device/hwmonN/temp1_input (device -> nvme0),
/sys/block/sda/device/hwmon/hwmonN/temp1_input. Values are millidegrees Celsius.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from collections.abc import Callable

from disksleuth.probe.sysfs import Sysfs


def hwmon_temp_input(block_name: str, sysfs_root: str = "/") -> str | None:
    fs = Sysfs(sysfs_root)
    dev = fs.p("/sys/block", block_name, "device")
    patterns = [
        os.path.join(dev, "hwmon*", "temp1_input"),
        os.path.join(dev, "hwmon", "hwmon*", "temp1_input"),
        os.path.join(dev, "nvme*", "hwmon*", "temp1_input"),  # multipath head: device -> nvme-subsys
    ]
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def read_temp_c(path: str) -> float | None:
    try:
        with open(path) as fh:
            return int(fh.read().strip()) / 1000.0
    except (OSError, ValueError):
        return None


class TemperatureSampler:
    """Calls `read()` every `interval_s` on a background thread; keeps (seconds since start, °C)."""

    def __init__(self, read: Callable[[], float | None], interval_s: float = 1.0):
        self._read = read
        self.interval_s = interval_s
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="temperature")
        self._t0 = 0.0

    @property
    def latest(self) -> float | None:
        return self.samples[-1][1] if self.samples else None

    def start(self) -> TemperatureSampler:
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> list[tuple[float, float]]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval_s * 5 + 30)
        return self.samples

    def _loop(self) -> None:
        while not self._stop.is_set():
            value = self._read()
            if value is not None:
                self.samples.append((round(time.monotonic() - self._t0, 2), value))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> TemperatureSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
