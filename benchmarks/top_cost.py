"""What `disksleuth top` costs: the CPU of its refresh loop at a 1 s refresh with 200 more processes and 24 more
block devices than the machine has, and how soon `top --once --seconds 1` answers (issue 36: under 2% of one core,
within 1.5 s). Needs root (loop devices).

    sudo .venv/bin/python benchmarks/top_cost.py [SECONDS]

It makes 200 sleeping processes and 24 loop devices over sparse files in /dev/shm, runs the live view on a
pseudo-terminal (so it draws, as it does for a user) for SECONDS (default 30), and reads the view's own CPU time
from /proc/PID/stat after its first refresh and again at the end: start-up is not in the figure. Then it times
five `top --once --seconds 1` from start to exit. Everything it made is removed, whatever happens."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
PROCESSES = 200
DEVICES = 24
TICKS = os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def sleepers(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [subprocess.Popen(["sleep", "3600"]) for _ in range(count)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


@contextlib.contextmanager
def loop_devices(count: int) -> Iterator[list[str]]:
    tag = uuid.uuid4().hex[:8]
    images, devices = [], []
    try:
        for n in range(count):
            image = f"/dev/shm/disksleuth-topcost-{tag}-{n}.img"
            with open(image, "wb") as fh:
                fh.truncate(8 << 20)
            images.append(image)
            out = subprocess.run(["losetup", "-f", "--show", image], check=True, capture_output=True, text=True)
            devices.append(out.stdout.strip())
        yield devices
    finally:
        for dev in devices:
            subprocess.run(["losetup", "-d", dev], check=False)
        for image in images:
            with contextlib.suppress(OSError):
                os.unlink(image)


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def live_cost(seconds: float) -> tuple[float, int]:
    """(% of one core over the refresh loop, refreshes seen)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "LINES": "50", "TERM": "xterm-256color"}
    proc = subprocess.Popen([*DISKSLEUTH, "top", "--interval", "1", "--seconds", str(seconds + 2)],
                            stdin=slave, stdout=slave, stderr=slave, env=env)  # fmt: skip
    os.close(slave)
    seen = b""
    start_ticks = start_wall = None
    end_ticks = end_wall = None
    try:
        while proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(master, 1 << 16)
                except OSError:
                    break
            refreshes = seen.count(b"DEVICE")
            if start_ticks is None and refreshes >= 1:
                start_ticks, start_wall = cpu_ticks(proc.pid), time.monotonic()
            if start_wall is not None and end_ticks is None and time.monotonic() - start_wall >= seconds:
                end_ticks, end_wall = cpu_ticks(proc.pid), time.monotonic()
        proc.wait(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if start_ticks is None or end_ticks is None or start_wall is None or end_wall is None:
        raise SystemExit(f"the live view did not run long enough: {seen[-400:]!r}")
    return (end_ticks - start_ticks) / TICKS / (end_wall - start_wall) * 100, seen.count(b"DEVICE")


def once_wall_s(runs: int = 5) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.monotonic()
        subprocess.run([*DISKSLEUTH, "top", "--once", "--seconds", "1"], check=False, capture_output=True)
        out.append(time.monotonic() - start)
    return out


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    with sleepers(PROCESSES), loop_devices(DEVICES):
        processes = sum(1 for e in os.listdir("/proc") if e.isdigit())
        with open("/proc/diskstats") as fh:
            devices = sum(1 for _ in fh)
        print(f"{processes} processes, {devices} block devices in /proc/diskstats")
        pct, refreshes = live_cost(seconds)
        print(f"live view, 1 s refresh: {pct:.2f}% of one core over {seconds:g} s ({refreshes} refreshes drawn)")
        walls = once_wall_s()
        print(f"top --once --seconds 1: median {statistics.median(walls):.3f} s, max {max(walls):.3f} s "
              f"({', '.join(f'{w:.3f}' for w in walls)})")  # fmt: skip
        ok = pct < 2.0 and max(walls) < 1.5
    print("within budget" if ok else "OVER BUDGET")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
