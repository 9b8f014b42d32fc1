"""Record the per-second series in this folder with real fio on real loop devices (run as root).

    python tests/data/series/record.py

- stable.json: SEQ1M Q8T1 read from a RAM-backed loop device (losetup --direct-io=on over /dev/shm).
- noisy.json: SEQ1M Q8T1 read through a cgroup v1 blkio read throttle that a "neighbour" thread moves
  between 20, 35 and 60 MB/s every 0.4-1.3 s, the way contention on a shared link looks.
- cliff.json: SEQ1M Q1T1 write; after 4 s a blkio write throttle of 30 MB/s is applied, the way an SLC
  write cache running out looks.
Each file holds the per-second MB/s that disksleuth derives from fio's --status-interval stream.
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


def record(name: str, argv: list[str], setup=None) -> None:  # noqa: ANN001
    report, samples = run_job(argv, timeout_s=120)
    series = series_from_samples(samples)
    values = [round(p.read_mbps + p.write_mbps, 3) for p in series if p.t_s > 1.0]
    with open(os.path.join(HERE, f"{name}.json"), "w") as fh:
        json.dump({"description": name, "fio": argv, "mbps": values}, fh, indent=1)
    print(name, values)


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
    main()
