"""Files named for us to read (`health --from-smartctl FILE`, `import FILE`): only a regular file of a
bounded size is read. A FIFO must not hang, a link to /dev/zero must not grow until MemoryError, and a
directory or an oversize file gets one line and exit 2. Run as a separate process with a timeout and
an address-space limit, so the old behaviour fails the test instead of hanging it or filling memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest
from conftest import SMARTCTL_FIXTURES

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
TIMEOUT_S = 30
ADDRESS_SPACE_BYTES = 2 << 30  # far above what a run needs, far below what reading /dev/zero reaches
SMARTCTL_JSON = os.path.join(
    SMARTCTL_FIXTURES, "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"
)


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


def _disksleuth(*argv: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*DISKSLEUTH, *argv], capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=_bounded
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"disksleuth {' '.join(argv)} did not finish within {TIMEOUT_S} s (it blocked)")


def _one_line_refusal(res: subprocess.CompletedProcess[str], says: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stderr[-500:])
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("disksleuth: "), res.stderr[-500:]
    assert says.lower() in lines[0].lower(), lines[0]
    assert "internal error" not in lines[0]


@pytest.fixture(params=["health", "import"])
def reader(request: pytest.FixtureRequest) -> list[str]:
    """The command line that reads FILE, for each command that takes one."""
    return ["health", "--from-smartctl"] if request.param == "health" else ["import", "--db", "sqlite:///:memory:"]


def test_a_link_to_dev_zero_is_refused(tmp_path, reader) -> None:  # noqa: ANN001
    link = tmp_path / "smart.json"
    link.symlink_to("/dev/zero")
    _one_line_refusal(_disksleuth(*reader, str(link)), "is a device")


def test_a_fifo_is_refused_without_blocking(tmp_path, reader) -> None:  # noqa: ANN001
    fifo = tmp_path / "smart.json"
    os.mkfifo(fifo)  # nobody ever writes it: opening it for reading blocks
    _one_line_refusal(_disksleuth(*reader, str(fifo)), "is a FIFO")


def test_a_directory_is_refused(tmp_path, reader) -> None:  # noqa: ANN001
    # Refused before the bound was added too (open() said "Is a directory"): kept so it stays so.
    _one_line_refusal(_disksleuth(*reader, str(tmp_path)), "is a directory")


def test_an_oversize_smartctl_file_is_refused(tmp_path) -> None:  # noqa: ANN001
    # Valid smartctl JSON padded with whitespace (which JSON allows) past the bound: the old code read
    # and accepted any length.
    with open(SMARTCTL_JSON, "rb") as fh:
        doc = fh.read()
    big = tmp_path / "smart.json"
    with open(big, "wb") as fh:
        fh.write(doc)
        fh.write(b" " * ((16 << 20) + 1 - len(doc)))  # MAX_SMARTCTL_JSON_BYTES + 1
    _one_line_refusal(_disksleuth("health", "--from-smartctl", str(big)), "larger than 16 MiB")
    small = tmp_path / "small.json"
    small.write_bytes(doc)
    res = _disksleuth("health", "--from-smartctl", str(small))
    assert res.returncode in (0, 1), res.stderr
