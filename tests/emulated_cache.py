"""A drive with a write cache, made of real parts: a loop device over tmpfs, a cgroup v1 blkio group, and a
watcher thread that counts the sectors written in /sys/block/loopN/stat and lowers
blkio.throttle.write_bps_device once the "cache" is full, the way an SLC cache running out looks.

Optional: a second, lower rate after more bytes (a drive folding SLC into TLC/QLC while it writes), a
"temperature" that rises with the bytes written and throttles at a warning level (heat, not cache), and a
cache that drains while the device is idle (recovery).

Used by tests/test_sustained_*.py and tests/data/series/record_sustained.py. Root, loop devices and cgroup v1
blkio are needed; everything made here is removed on exit (loop device, image, cgroup, thread).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

BLKIO = "/sys/fs/cgroup/blkio"
SECTOR = 512  # /sys/block/X/stat counts 512-byte sectors whatever the logical block size (Documentation/block/stat.rst)


def sectors_written(dev: str) -> int:
    name = os.path.basename(dev)
    with open(f"/sys/block/{name}/stat") as fh:
        return int(fh.read().split()[6])


def majmin(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


@dataclass
class CacheModel:
    """What the watcher enforces. Rates in bytes per second, sizes in bytes; None: no such stage."""

    cache_bytes: int | None = None  # full speed (or burst_bps) until this much is written
    burst_bps: int | None = None  # the cache's own rate; None: as fast as the loop device goes
    after_bps: int | None = None  # then this rate
    fold_after_bytes: int | None = None  # a second drop after this many bytes in total
    fold_bps: int | None = None
    drain_bps: int | None = None  # while idle, the cache empties at this rate (recovery)
    # Heat: the temperature rises by heat_c_per_gb as data is written, cools toward ambient when idle,
    # and above warning_c the device is throttled to hot_bps.
    ambient_c: float = 40.0
    heat_c_per_gb: float | None = None
    warning_c: float = 70.0
    hot_bps: int | None = None


IDLE_S = 1.0  # the test's --recovery idle (2 s) still leaves 1 s to drain: 150 MB at 200 MB/s takes 0.75 s


@dataclass
class Watcher:
    dev: str
    group: str
    model: CacheModel
    poll_s: float = 0.02
    written_bytes: int = 0  # since the watcher started
    cache_level_bytes: float = 0.0
    temperature_c: float = 0.0
    switches: list[tuple[int, int]] = field(default_factory=list)  # (bytes written, new limit, 0 = none)
    temperatures: list[tuple[float, float]] = field(default_factory=list)  # (monotonic s, °C), every ~1 s
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _limit: int = -1

    def start(self) -> Watcher:
        self.temperature_c = self.model.ambient_c
        self._base = sectors_written(self.dev)
        self._thread = threading.Thread(target=self._loop, daemon=True, name="cache-watcher")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _set_limit(self, bps: int) -> None:
        if bps == self._limit:
            return
        with open(os.path.join(self.group, "blkio.throttle.write_bps_device"), "w") as fh:
            fh.write(f"{majmin(self.dev)} {bps}")
        self._limit = bps
        self.switches.append((self.written_bytes, bps))

    def _wanted(self) -> int:
        m = self.model
        limits = []
        if m.cache_bytes is not None and m.after_bps and self.cache_level_bytes >= m.cache_bytes - 1:
            limits.append(m.after_bps)
        if m.fold_after_bytes is not None and m.fold_bps and self.written_bytes >= m.fold_after_bytes:
            limits.append(m.fold_bps)
        if m.hot_bps and self.temperature_c >= m.warning_c:
            limits.append(m.hot_bps)
        if m.burst_bps and not limits:
            limits.append(m.burst_bps)
        return min(limits) if limits else 0

    def _loop(self) -> None:
        m = self.model
        last = time.monotonic()
        last_temp_log = 0.0
        last_write = last
        self._set_limit(0)
        while not self._stop.is_set():
            now = time.monotonic()
            dt, last = now - last, now
            total = (sectors_written(self.dev) - self._base) * SECTOR
            delta, self.written_bytes = total - self.written_bytes, total
            if delta > 0:
                last_write = now
            # Sector counts arrive in steps under a throttle, and blk-throttle at 40 MB/s stalls a writer for
            # ~0.5 s at a time (seen on a quiet machine): idle means nothing written for IDLE_S, well beyond
            # that, or a stall would drain the cache mid-fill and bring the burst rate back.
            idle = now - last_write > IDLE_S
            if delta > 0:  # a full cache holds no more: later writes go to the slow medium
                self.cache_level_bytes = min(self.cache_level_bytes + delta, m.cache_bytes or 0)
            elif idle and m.drain_bps:
                self.cache_level_bytes = max(0.0, self.cache_level_bytes - m.drain_bps * dt)
            if m.heat_c_per_gb is not None:
                self.temperature_c += m.heat_c_per_gb * delta / 1e9
                if idle:  # cool toward ambient
                    self.temperature_c = max(m.ambient_c, self.temperature_c - 2.0 * dt)
                if m.hot_bps and self.temperature_c > m.warning_c + 1:
                    self.temperature_c = m.warning_c + 1  # throttled, the drive holds near its threshold
            if now - last_temp_log >= 1.0:  # as often as disksleuth's sampler reads hwmon
                self.temperatures.append((now, round(self.temperature_c, 2)))
                last_temp_log = now
            self._set_limit(self._wanted())
            self._stop.wait(self.poll_s)


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def cache_drive(size_mb: int, model: CacheModel, join: bool = True) -> Iterator[tuple[str, Watcher]]:
    """A loop device of `size_mb` MiB over /dev/shm whose writes follow `model`.

    With `join`, this process enters the blkio group, so the fio it starts (in-process CLI runs) inherits
    it; it goes back to the root group on exit."""
    image = f"/dev/shm/disksleuth-cache-{uuid.uuid4().hex[:8]}.img"
    with open(image, "wb") as fh:
        # Allocate the tmpfs pages now: first-touch allocation during the fill slows writes unevenly.
        os.posix_fallocate(fh.fileno(), 0, size_mb << 20)
    dev = None
    group = os.path.join(BLKIO, f"disksleuth-cache-{uuid.uuid4().hex[:8]}")
    watcher = None
    try:
        dev = _run("losetup", "-f", "--show", "--direct-io=on", image)
        os.mkdir(group)
        if join:
            with open(os.path.join(group, "cgroup.procs"), "w") as fh:
                fh.write(str(os.getpid()))
        watcher = Watcher(dev, group, model).start()
        yield dev, watcher
    finally:
        if watcher is not None:
            watcher.stop()
        if os.path.isdir(group):
            with contextlib.suppress(OSError), open(os.path.join(group, "cgroup.procs")) as fh:
                pids = fh.read().split()
            for pid in pids:
                with contextlib.suppress(OSError), open(os.path.join(BLKIO, "cgroup.procs"), "w") as out:
                    out.write(pid)
            for _ in range(50):  # a just-exited fio may linger in the group for a moment
                try:
                    os.rmdir(group)
                    break
                except OSError:
                    time.sleep(0.1)
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)


def missing() -> str | None:
    """Why the emulated drive cannot be made here, or None."""
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.exists(os.path.join(BLKIO, "blkio.throttle.write_bps_device")):
        return "cgroup v1 blkio throttling is not mounted"
    if not os.path.exists("/dev/loop-control"):
        return "no loop device support"
    return None
