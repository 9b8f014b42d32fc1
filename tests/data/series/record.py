"""Record the per-second series in this folder with real fio on real loop devices (run as root).

    python tests/data/series/record.py

- stable.json: SEQ1M Q8T1 read from a RAM-backed loop device (losetup --direct-io=on over /dev/shm).
- noisy.json: SEQ1M Q8T1 read through a cgroup v1 blkio read throttle that a "neighbour" thread moves
  between 20, 35 and 60 MB/s every 0.4-1.3 s, the way contention on a shared link looks.
- cliff.json: SEQ1M Q1T1 write; after 4 s a blkio write throttle of 30 MB/s is applied, the way an SLC
  write cache running out looks.
Each file holds the per-second MB/s that disksleuth derives from fio's --status-interval stream.

    python tests/data/series/record.py --fast

records the same kinds of series, longer, at four samples a second (--status-interval=250ms), for the
confidence intervals (analysis/confidence.py), into *-250ms.json:
- stable-250ms.json: SEQ1M Q8T1 read, RAM-backed loop device, 30 s.
- throttled-250ms.json: SEQ1M Q8T1 read through a steady 50 MB/s blkio read throttle, 30 s (a known mean).
- noisy-250ms.json: the 20/35/60 MB/s neighbour above, 40 s.
- bimodal-250ms.json: a throttle that sits at 20 or 80 MB/s for 0.5-3 s at a time, 40 s (two modes).
- cliff-250ms.json: SEQ1M Q1T1 write, 30 MB/s write throttle after 4 s, 12 s.
- qd1-250ms.json: RND4K Q1T1 read, RAM-backed loop device, 20 s (CPU-bound: the neighbours' load shows).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "src"))

from disksleuth.analysis.results import series_from_samples  # noqa: E402
from disksleuth.probe.fio import run_job  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BLKIO = "/sys/fs/cgroup/blkio"


def loop(size_mb: int) -> tuple[str, str]:
    image = f"/dev/shm/series-{uuid.uuid4().hex[:6]}.img"
    subprocess.run(["dd", "if=/dev/urandom", f"of={image}", "bs=1M", f"count={size_mb}", "status=none"], check=True)
    dev = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", image], capture_output=True, text=True, check=True
    ).stdout.strip()
    return dev, image


def majmin(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def record(name: str, argv: list[str], interval_s: float = 1.0, ramp_s: float = 1.0) -> None:
    report, samples = run_job(argv, timeout_s=120, status_interval_s=interval_s)
    series = series_from_samples(samples)
    values = [round(p.read_mbps + p.write_mbps, 3) for p in series if p.t_s > ramp_s]
    doc: dict[str, object] = {"description": name, "fio": argv, "mbps": values}
    if interval_s != 1.0:
        doc["interval_s"] = interval_s
    with open(os.path.join(HERE, f"{name}.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
    print(name, len(values), "samples, mean", round(sum(values) / max(1, len(values)), 1))


def write_throttle(group: str, key: str, dev: str, mbps: float) -> None:
    with open(os.path.join(group, f"blkio.throttle.{key}"), "w") as fh:
        fh.write(f"{majmin(dev)} {int(mbps * 1_000_000)}")


def main_fast() -> None:
    dev, image = loop(512)
    group = os.path.join(BLKIO, f"series-{uuid.uuid4().hex[:6]}")
    os.mkdir(group)
    fast = 0.25

    def job(rw: str, runtime: int, iodepth: int = 8, bs: str = "1M") -> list[str]:
        return [
            "fio",
            "--name=rec",
            f"--filename={dev}",
            f"--bs={bs}",
            "--direct=1",
            "--time_based",
            "--ramp_time=500ms",
            "--group_reporting",
            "--output-format=json",
            f"--rw={rw}",
            f"--iodepth={iodepth}",
            "--ioengine=libaio",  # io_uring swings under blk-throttle here (docs/PERFORMANCE.md)
            f"--runtime={runtime}",
        ]

    def neighbour(levels: tuple[int, ...], dwell: tuple[float, float], seed: int, stop: threading.Event) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            write_throttle(group, "read_bps_device", dev, rng.choice(levels))
            stop.wait(rng.uniform(*dwell))

    try:
        record("stable-250ms", job("read", 30), fast, 0.5)
        record("qd1-250ms", job("randread", 20, iodepth=1, bs="4k"), fast, 0.5)
        with open(os.path.join(group, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))  # fio inherits the group
        write_throttle(group, "read_bps_device", dev, 50)
        record("throttled-250ms", job("read", 30), fast, 0.5)
        for name, levels, dwell, seconds in (
            ("noisy-250ms", (20, 35, 60), (0.4, 1.3), 40),
            ("bimodal-250ms", (20, 80), (0.5, 3.0), 40),
        ):
            stop = threading.Event()
            t = threading.Thread(target=neighbour, args=(levels, dwell, 7, stop), daemon=True)
            t.start()
            record(name, job("read", seconds), fast, 0.5)
            stop.set()
            t.join()
        write_throttle(group, "read_bps_device", dev, 0)

        def throttle_later() -> None:
            time.sleep(4.5)  # 0.5 s ramp + 4 s at full speed
            write_throttle(group, "write_bps_device", dev, 30)

        threading.Thread(target=throttle_later, daemon=True).start()
        record("cliff-250ms", job("write", 12, iodepth=1), fast, 0.5)
    finally:
        with open(os.path.join(BLKIO, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))
        os.rmdir(group)
        subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)


def main() -> None:
    dev, image = loop(512)
    group = os.path.join(BLKIO, f"series-{uuid.uuid4().hex[:6]}")
    os.mkdir(group)
    try:
        base = [
            "fio",
            "--name=rec",
            f"--filename={dev}",
            "--bs=1M",
            "--direct=1",
            "--time_based",
            "--ramp_time=1",
            "--group_reporting",
            "--output-format=json",
        ]
        record("stable", [*base, "--rw=read", "--iodepth=8", "--ioengine=libaio", "--runtime=8"])
        with open(os.path.join(group, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))  # fio inherits the group
        stop = threading.Event()

        def neighbour() -> None:
            # A neighbour's load on a shared link: the read throttle jumps between 20 and 60 MB/s.
            rng = random.Random(7)
            while not stop.is_set():
                with open(os.path.join(group, "blkio.throttle.read_bps_device"), "w") as fh:
                    fh.write(f"{majmin(dev)} {rng.choice((20, 35, 60)) * 1_000_000}")
                stop.wait(rng.uniform(0.4, 1.3))

        t = threading.Thread(target=neighbour, daemon=True)
        t.start()
        record("noisy", [*base, "--rw=read", "--iodepth=8", "--ioengine=libaio", "--runtime=12"])
        stop.set()
        t.join()
        with open(os.path.join(group, "blkio.throttle.read_bps_device"), "w") as fh:
            fh.write(f"{majmin(dev)} 0")

        def throttle_later() -> None:
            time.sleep(5)  # 1 s ramp + 4 s at full speed
            with open(os.path.join(group, "blkio.throttle.write_bps_device"), "w") as fh:
                fh.write(f"{majmin(dev)} 30000000")

        threading.Thread(target=throttle_later, daemon=True).start()
        record("cliff", [*base, "--rw=write", "--iodepth=1", "--ioengine=libaio", "--runtime=12"])
    finally:
        with open(os.path.join(BLKIO, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))
        os.rmdir(group)
        subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)


if __name__ == "__main__":
    main_fast() if "--fast" in sys.argv[1:] else main()
