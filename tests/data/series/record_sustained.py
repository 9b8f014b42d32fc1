"""Record the sustained-write series in this folder with real fio on an emulated cached drive (run as root).

    python tests/data/series/record_sustained.py

Each run is the `sustained` profile's fill (sequential 1 MiB writes, QD4, one job, fio's bandwidth log
averaged over 100 ms) on a loop device over /dev/shm whose writes a watcher throttles through cgroup v1 blkio
(tests/emulated_cache.py):
- sustained-cliff.json: full speed for 300 MB, then 50 MB/s (an SLC cache running out). The emulated
  temperature rises 10 °C per GB, far below its 70 °C warning level.
- sustained-two-cliffs.json: full speed for 300 MB, 100 MB/s to 700 MB, then 30 MB/s (the cache, then folding).
- sustained-flat.json: 120 MB/s from the first byte (a drive without a cache).
- sustained-unthrottled.json: no throttle at all: the RAM-backed loop device, as fast and as jittery as
  the CPU time the machine's other work leaves it.
- sustained-noisy.json: a "neighbour" moves the write throttle between 60, 100 and 150 MB/s every 0.4-1.3 s.
- sustained-thermal.json: the emulated temperature rises 75 °C per GB from 40 °C; at its 70 °C warning level
  (after ~400 MB) writes are throttled to 40 MB/s and the temperature holds there.
The temperatures are emulated (this machine's loop devices have no sensor); the throughput is real fio.
Each file holds fio's raw bandwidth log, fio's own byte count, and the temperature once a second.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

from emulated_cache import CacheModel, cache_drive, majmin  # noqa: E402

MB = 1_000_000


def fill_argv(dev: str, size: str, log_prefix: str) -> list[str]:
    return [
        "fio",
        "--name=sustained",
        f"--filename={dev}",
        "--rw=write",
        "--bs=1M",
        "--iodepth=4",
        "--numjobs=1",
        "--ioengine=libaio",
        "--direct=1",
        f"--size={size}",
        "--refill_buffers",
        f"--write_bw_log={log_prefix}",
        "--log_avg_msec=100",
        "--output-format=json",
    ]


def record(name: str, model: CacheModel, size: str, disk_mb: int, neighbour: bool = False) -> None:
    with cache_drive(disk_mb, model) as (dev, watcher), tempfile.TemporaryDirectory() as tmp:
        stop = threading.Event()

        def noisy() -> None:
            rng = random.Random(11)
            while not stop.is_set():
                with open(os.path.join(watcher.group, "blkio.throttle.write_bps_device"), "w") as fh:
                    fh.write(f"{majmin(dev)} {rng.choice((60, 100, 150)) * MB}")
                stop.wait(rng.uniform(0.4, 1.3))

        if neighbour:
            watcher.stop()  # the neighbour owns the throttle instead
            threading.Thread(target=noisy, daemon=True).start()
        argv = fill_argv(dev, size, os.path.join(tmp, "sustained"))
        started = time.monotonic()
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        stop.set()
        report = json.loads(out[out.index("{") :])
        with open(os.path.join(tmp, "sustained_bw.1.log")) as fh:
            log = fh.read()
        temps = [[round(t - started, 2), c] for t, c in watcher.temperatures if t >= started]
        argv[argv.index(f"--filename={dev}")] = "--filename=/dev/loopN"
        argv[-3] = "--write_bw_log=sustained"
        doc = {
            "description": name,
            "fio": argv,
            "fio_version": report.get("fio version"),
            "emulation": dataclasses.asdict(model),
            "fio_write_bytes": report["jobs"][0]["write"]["io_bytes"],
            "warning_c": model.warning_c,
            "throttle_switches": watcher.switches,
            "temperature": temps,
            "bw_log": log,
        }
    with open(os.path.join(HERE, f"{name}.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
    print(name, doc["fio_write_bytes"], watcher.switches)


def main() -> None:
    which = sys.argv[1:]
    runs = {
        "sustained-cliff": (CacheModel(cache_bytes=300 * MB, after_bps=50 * MB, heat_c_per_gb=10.0), "800M", 900),
        "sustained-two-cliffs": (
            CacheModel(cache_bytes=300 * MB, after_bps=100 * MB, fold_after_bytes=700 * MB, fold_bps=30 * MB),
            "1000M",
            1100,
        ),
        "sustained-flat": (CacheModel(after_bps=120 * MB, cache_bytes=0), "1000M", 1100),
        "sustained-thermal": (CacheModel(heat_c_per_gb=75.0, hot_bps=40 * MB), "800M", 900),
    }
    runs["sustained-unthrottled"] = (CacheModel(), "3000M", 3100)
    for name, (model, size, disk) in runs.items():
        if not which or name in which:
            record(name, model, size, disk)
    if not which or "sustained-noisy" in which:
        record("sustained-noisy", CacheModel(), "1000M", 1100, neighbour=True)


if __name__ == "__main__":
    main()
