"""Help is the first thing a newcomer types: it must print, never crash."""

from __future__ import annotations

import pytest

from disksleuth.cli import build_parser


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.choices and a.dest == "command")
    return sorted(sub.choices)


@pytest.mark.parametrize("argv", [["--help"], ["-h"], []])
def test_top_level_help_prints(cli, argv):
    res = cli(*argv)
    assert "Traceback" not in res.err and "Error" not in res.err
    assert "compare" in res.out
    assert "% of a reference" in res.out
    assert res.code == (0 if argv else 2)


@pytest.mark.parametrize("command", _commands())
def test_every_command_help_prints(cli, command):
    res = cli(command, "--help")
    assert res.code == 0, res.err
    assert res.out.startswith("usage: disksleuth " + command)
    assert "%%" not in res.out
