"""Regressions from the attacker review of the new input paths: a store path that is a block device, a
racing user in the exporter's textfile directory, escapes in compare's markdown/CSV, non-finite option
values, and absurd figures that passed import."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest
from conftest import SYSFS, loop_device, needs_loop, sample_export, sha256_of

BADLY_SEATED = os.path.join(SYSFS, "scenario_badly_seated")


@needs_loop
@pytest.mark.parametrize("form", ["{dev}", "sqlite:///{dev}"])
def test_a_store_path_that_is_a_block_device_is_refused(cli, tmp_path, form) -> None:
    """`--db /dev/sdX` (a typo, or DISKSLEUTH_DB) wrote a SQLite file over the device, mounted or not."""
    export = sample_export(tmp_path)
    with loop_device(16, fill=True) as dev:
        before = sha256_of(dev)
        res = cli("import", export, "--db", form.format(dev=dev))
        assert res.code == 2 and "not a regular file" in res.err, res.err
        assert sha256_of(dev) == before


def test_sqlite_uri_forms_are_refused(cli, tmp_path) -> None:
    res = cli("runs", "--db", f"sqlite:///file:{tmp_path}/x.sqlite?mode=rwc&uri=true")
    assert res.code == 2 and "plain path" in res.err and len(res.err.strip().splitlines()) == 1


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


@pytest.mark.skipif(_can_drop_to_nobody() is not None, reason=_can_drop_to_nobody() or "")
def test_textfile_race_never_touches_another_file(tmp_path) -> None:
    """A user who can write to the textfile directory swaps the temp file for a symlink to a root-only file
    between the write and the chmod: the old code (chmod by name) made the secret world-readable."""
    import tempfile

    from disksleuth import exporter

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
    from disksleuth.exporter import parse_listen

    with pytest.raises(UsageError, match="--listen"):
        parse_listen(listen)


def test_compare_markdown_and_csv_never_carry_escapes(cli, tmp_path) -> None:
    """Labels and test ids come from stored (importable) runs: raw ESC/OSC/CR reached the terminal, and a
    newline broke the Markdown table."""
    evil = "\x1b]0;PWN\x07\x1b[2J\r\n|x"

    def mutate(doc: dict) -> None:
        doc["run"]["host"]["hostname"] = "host" + evil
        doc["run"]["target"] = "/t" + evil
        doc["tests"][0]["id"] = "SEQ" + evil

    db = f"sqlite:///{tmp_path}/c.sqlite"
    assert cli("import", sample_export(tmp_path, mutate), "--db", db).code == 0
    for fmt in ("markdown", "csv"):
        res = cli("compare", "1", "1", "--format", fmt, "--db", db)
        assert res.code == 0, res.err
        text = res.out.replace("\r\n", "\n")  # CSV's own line ending (RFC 4180) is fine; a bare CR is not
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text, fmt
        if fmt == "markdown":
            rows = [line for line in res.out.splitlines() if line.startswith("|") and not line.startswith("|---")]
            assert len({line.count(" | ") for line in rows}) == 1, rows  # every row has the same cells


@pytest.mark.parametrize(
    "args",
    [
        ["bench", "{tmp}", "--profile", "sustained", "--max-time", "nan", "--no-save"],
        ["bench", "{tmp}", "--profile", "sustained", "--max-time", "inf", "--no-save"],
        ["bench", "{tmp}", "--profile", "sustained", "--recovery", "1e400", "--no-save"],
        ["bench", "{tmp}", "--time", "nan", "--no-save"],
        ["exporter", "--textfile", "{tmp}", "--health-max-age", "inf"],
    ],
)
def test_non_finite_option_values_are_one_line(cli, tmp_path, args) -> None:
    res = cli(*(a.format(tmp=tmp_path) for a in args))
    assert res.code == 2 and "must be positive" in res.err and "internal error" not in res.err, res.err


def test_an_absurd_figure_is_refused_at_import_so_every_run_renders(cli, tmp_path) -> None:
    """read_mbps 1e308 passed import, then `report` died on matplotlib's axis limits."""

    def mutate(doc: dict) -> None:
        doc["tests"][0]["read_mbps"] = 1e308

    res = cli("import", sample_export(tmp_path, mutate), "--db", f"sqlite:///{tmp_path}/a.sqlite")
    assert res.code == 2 and "implausibly large" in res.err and len(res.err.strip().splitlines()) == 1


def test_sustained_without_its_analysis_library_stops_before_writing(tmp_path) -> None:
    """A venv without ruptures ran the whole fill, then lost it to ModuleNotFoundError."""
    code = (
        "import sys; sys.modules['ruptures'] = None\n"
        "from disksleuth.cli import main\n"
        f"sys.exit(main(['bench', {str(tmp_path)!r}, '--profile', 'sustained', '--size', '64M', '--no-save']))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "ruptures" in res.stderr and "internal error" not in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written: no scratch directory was made
