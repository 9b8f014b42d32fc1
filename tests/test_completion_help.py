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


def test_fish_descriptions_are_cut_between_words() -> None:
    """verify's --destructive was described as "... and what it held is destroy" (cut at 80 characters)."""
    from disksleuth.cli.shell import completion_script

    script = completion_script("fish")
    line = next(x for x in script.splitlines() if "subcommand_from verify" in x and "-l destructive" in x)
    description = line.split(" -d ", 1)[1].strip("'")
    assert description.endswith("…") and len(description) <= 80, description
    assert description[:-1] in "required: test blocks are written across the device, and what it held is destroyed"
