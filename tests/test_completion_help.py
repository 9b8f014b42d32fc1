"""`completion --help` and `manpage --help` end with the commands that install them: each must paste as it is."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("columns", ["80", "60"])
def test_the_install_commands_paste_whole_at_any_width(cli, monkeypatch, columns: str) -> None:  # noqa: ANN001
    """At 80 columns the flowed epilog cut the bash path at its hyphen: "~/.local/share/bash-" / "completion/...",
    and a pasted line wrote a file of that name."""
    monkeypatch.setenv("COLUMNS", columns)
    res = cli("completion", "--help")
    assert res.code == 0
    lines = res.out.splitlines()
    assert "    > ~/.local/share/bash-completion/completions/disksleuth" in lines, res.out
    assert "  disksleuth completion bash \\" in lines
    man = cli("manpage", "--help").out.splitlines()
    assert man[-2:] == ["  disksleuth manpage \\", "    > /usr/local/share/man/man1/disksleuth.1"], man
