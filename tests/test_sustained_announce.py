"""The sustained fill says how much it will write at most, and for how long, before it writes; its progress
line shows the bytes written so far (issue 20: 31.8 GB in 6 s behind "5/1800 s write 490.7 MB/s")."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios

import pytest
from conftest import (
    blkio_throttle,
    drain_terminal,
    have_blkio,
    in_cgroup,
    loop_device,
    mounted_ext4,
    needs_fio,
    needs_loop,
)

from disksleuth.present.bench_view import progress_rate

pytestmark = [needs_fio, needs_loop, pytest.mark.root]

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
MB = 1_000_000


def _in_a_terminal(argv: list[str], columns: int = 120, timeout_s: float = 120) -> tuple[int, str]:
    """argv with stdin, stdout and stderr on a pseudo-terminal of that width: what a person sees."""
    import pty

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color", "NO_COLOR": "1"}
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    output = drain_terminal(master, proc, timeout_s)
    return proc.returncode, output.decode("utf-8", "replace")


@pytest.mark.long
def test_fill_announces_its_bounds_and_shows_bytes_written():
    if have_blkio():
        pytest.skip(have_blkio())
    # 64 MiB at 16 MB/s: about 4 s, so fio reports its status a few times mid-fill.
    with loop_device(256) as dev, mounted_ext4(dev) as mnt, blkio_throttle(dev, write_bps=16 * MB) as procs:
        fill = [*DISKSLEUTH, "bench", mnt, "--profile", "sustained", "--max-time", "60"]
        argv = [*fill, "--size", "64M"]
        code, screen = _in_a_terminal(in_cgroup(procs, [*argv, "--no-save"]))
        assert code in (0, 1), screen
        # Without the terminal's escapes (bold), and with the wrapped line joined.
        flat = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen))
        announced = re.search(r"sustained fill: writes at most 64 MiB \(67\.1 MB\) to (\S+), for at most 60 s", flat)
        assert announced, screen
        assert announced.group(1).startswith(mnt)
        # Progress lines with a growing byte count (rich redraws the line in place, separated by \r or cursor moves).
        written = [float(m) for m in re.findall(r"([\d.]+) MB written", screen)]
        assert written, screen
        assert max(written) <= 67.2 and any(0 < w < 67.1 for w in written), written
        # The announcement comes before the first progress line.
        assert announced.start() < flat.index("MB written")

        # Without a terminal (--json piped): the same announcement on stderr, before the document. A quarter of
        # the size: only the announcement is read here, not the progress.
        piped = [*fill, "--size", "16M", "--no-save", "--json"]
        res = subprocess.run(in_cgroup(procs, piped), capture_output=True, text=True, timeout=120)
        assert "sustained fill: writes at most 16 MiB (16.8 MB)" in res.stderr, res.stderr
        assert res.stdout.lstrip().startswith("{")


def test_progress_keeps_bytes_written_longest():
    """Narrow terminals shed the IOPS and the words first; the bytes written go last."""
    full = progress_rate(0.0, 490.7, 468, 200, written_bytes=2_400_000_000)
    assert full == "2.4 GB written  write 490.7 MB/s  468 IOPS"
    assert progress_rate(0.0, 490.7, 468, 26, written_bytes=2_400_000_000) == "2.4 GB written  490.7 MB/s"
    assert progress_rate(0.0, 490.7, 468, 24, written_bytes=2_400_000_000) == "2.4 GB written  491 MB/s"
    assert progress_rate(0.0, 490.7, 468, 15, written_bytes=2_400_000_000) == "2.4 GB written"
    assert progress_rate(0.0, 490.7, 468, 40) == "write 490.7 MB/s  468 IOPS"
