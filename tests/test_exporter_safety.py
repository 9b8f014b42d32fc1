"""The exporter's inputs under attack: a racing user in the textfile directory, a textfile target that is a
directory, and malformed --listen addresses that must never mean every address."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest
from conftest import SYSFS

BADLY_SEATED = os.path.join(SYSFS, "scenario_badly_seated")


def _can_drop_to_nobody() -> str | None:
    if os.geteuid() != 0:
        return "needs root to run a racer as nobody"
    if shutil.which("setpriv") is None:
        return "setpriv missing"
    return None


RACER = r"""
import os, sys, time
d, secret, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
while time.monotonic() < until:
    for name in os.listdir(d):
        if name.endswith(".prom.tmp"):
            p = os.path.join(d, name)
            try:
                os.rename(p, p + ".moved")
                os.symlink(secret, p)
            except OSError:
                pass
"""


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(_can_drop_to_nobody() is not None, reason=_can_drop_to_nobody() or "")
def test_textfile_race_never_touches_another_file(tmp_path) -> None:
    """A user who can write to the textfile directory swaps the temp file for a symlink to a root-only file
    between the write and the chmod: the old code (chmod by name) made the secret world-readable."""
    import tempfile

    from disksleuth.run import exporter

    # Directly under /tmp: pytest's own tmp_path sits in a 0700 directory the attacker could not enter.
    shared = tempfile.mkdtemp(prefix="disksleuth-race-textfile-", dir="/tmp")
    os.chmod(shared, 0o777)  # world-writable, not sticky: the attacker may rename root's files
    secret = tmp_path / "secret"
    secret.write_text("root only\n")
    os.chmod(secret, 0o600)
    snap = exporter.snapshot(BADLY_SEATED, None, None, with_bench=False)
    racer = subprocess.Popen(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-c", RACER]
        + [str(shared), str(secret), "20"]
    )
    try:
        time.sleep(0.5)
        deadline = time.monotonic() + 15
        writes = 0
        while time.monotonic() < deadline and writes < 3000:
            # The race may break a write (the attacker moved our temp file): only the secret matters here.
            with contextlib.suppress(Exception):
                exporter.write_textfile(str(shared), snap)
            writes += 1
            assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600, f"secret's mode changed after {writes} writes"
    finally:
        racer.kill()
        racer.wait()
        shutil.rmtree(shared, ignore_errors=True)
    assert secret.read_text() == "root only\n"


def test_textfile_target_that_is_a_directory_is_one_line(cli, tmp_path) -> None:
    (tmp_path / "disksleuth.prom").mkdir()
    res = cli("exporter", "--textfile", str(tmp_path), "--sysfs-root", BADLY_SEATED, "--no-bench")
    assert res.code == 2 and "is a directory" in res.err and "Traceback" not in res.err
    assert [p.name for p in tmp_path.iterdir()] == ["disksleuth.prom"]  # no temp file left


@pytest.mark.parametrize("listen", ["[:0", "[]:9958", "[::1:9958"])
def test_a_malformed_listen_address_never_means_every_address(listen) -> None:
    """The old parser read '[:0' as every address (0.0.0.0): a typo exposed the exporter."""
    from disksleuth.errors import UsageError
    from disksleuth.run.exporter import parse_listen

    with pytest.raises(UsageError, match="--listen"):
        parse_listen(listen)


