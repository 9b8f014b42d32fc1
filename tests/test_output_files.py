"""Files written with -o (`export`, `report`, `capture`): private (0600), replaced atomically, never written
through a planted symlink, and a directory given as the output is one line (outfile.py)."""

from __future__ import annotations

import os
import stat
import sys

import pytest
from conftest import SYSFS, sample_export

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


OUTPUT_COMMANDS = ["export", "report", "capture"]


def _writer(cli, tmp_path, command: str):  # noqa: ANN202
    """`disksleuth COMMAND ... -o PATH` as a function of PATH, with a stored run to write where one is needed."""
    if command == "capture":
        return lambda out: cli("capture", "--sysfs-root", os.path.join(SYSFS, "scenario_badly_seated"), "-o", out)
    db = f"sqlite:///{tmp_path}/s.sqlite"
    assert cli("import", sample_export(tmp_path), "--db", db).code == 0
    return lambda out: cli(command, "1", "-o", out, "--db", db)


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
def test_an_output_file_is_private_and_replaced_safely(cli, tmp_path, command) -> None:
    write = _writer(cli, tmp_path, command)
    before = set(os.listdir(tmp_path))
    old_umask = os.umask(0o022)
    try:
        out = tmp_path / "out"
        assert write(str(out)).code == 0
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
        out.write_text("old")  # an existing, world-readable file is replaced by a private one
        os.chmod(out, 0o644)
        assert write(str(out)).code == 0
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o600 and out.read_bytes() != b"old"
    finally:
        os.umask(old_umask)
    assert set(os.listdir(tmp_path)) == before | {"out"}  # no temp file left beside it


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
def test_a_planted_symlink_is_never_written_through(cli, tmp_path, command) -> None:
    """Root running `export -o /tmp/x` where a user planted /tmp/x -> /root/.bashrc overwrote .bashrc."""
    write = _writer(cli, tmp_path, command)
    victim = tmp_path / "bashrc"
    victim.write_bytes(b"alias ls='ls --color'\n")
    before = victim.read_bytes()
    planted = tmp_path / "x.out"
    planted.symlink_to(victim)
    res = write(str(planted))
    assert res.code == 2 and "symbolic link" in res.err and res.err.count("\n") == 1, res.err
    assert victim.read_bytes() == before and os.path.islink(planted)
    dangling = tmp_path / "dangling.out"
    dangling.symlink_to(tmp_path / "nothing-yet")
    assert write(str(dangling)).code == 2
    assert not (tmp_path / "nothing-yet").exists()


def test_an_output_path_that_is_a_directory_is_one_line(cli, tmp_path) -> None:
    db = f"sqlite:///{tmp_path}/s.sqlite"
    assert cli("import", sample_export(tmp_path), "--db", db).code == 0
    res = cli("export", "1", "-o", str(tmp_path), "--db", db)
    assert res.code == 2 and "directory" in res.err and res.err.count("\n") == 1, res.err


