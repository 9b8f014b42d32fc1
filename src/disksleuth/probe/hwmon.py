"""Drive temperature from hwmon (no root needed), and a sampler that reads it once a second.

Layouts (drivers/nvme/host/hwmon.c registers under the controller; drivers/hwmon/drivetemp.c under
the SCSI device): /sys/block/nvme0n1/device/hwmonN/temp1_input (device -> nvme0),
/sys/block/sda/device/hwmon/hwmonN/temp1_input. Values are millidegrees Celsius.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from disksleuth.probe.sysfs import MAX_ATTR_BYTES, Sysfs, read_regular_file


def hwmon_temp_input(block_name: str, sysfs_root: str = "/") -> str | None:
    fs = Sysfs(sysfs_root)
    dev = fs.p("/sys/block", block_name, "device")
    for homes in (
        _named(fs, dev, "hwmon"),
        _named(fs, os.path.join(dev, "hwmon"), "hwmon"),
        # A multipath head: device -> nvme-subsysN, whose nvmeX controllers carry the hwmon.
        [h for ctrl in _named(fs, dev, "nvme") for h in _named(fs, ctrl, "hwmon")],
    ):
        for home in homes:
            temp = os.path.join(home, "temp1_input")
            if fs.isfile(temp):
                return fs.realpath(temp)  # links resolved inside the root, for read_temp_c
    return None


def _named(fs: Sysfs, parent: str, prefix: str) -> list[str]:
    return [os.path.join(parent, entry) for entry in fs.listdir(parent) if entry.startswith(prefix)]


def read_temp_c(path: str) -> float | None:
    raw = read_regular_file(path, MAX_ATTR_BYTES)  # bounded, and never blocks on a planted FIFO
    try:
        return int(raw.decode("ascii").strip()) / 1000.0 if raw is not None else None
    except (UnicodeDecodeError, ValueError):
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
