"""A proper package (issue 40): the licence the metadata names, a changelog, completion scripts that real bash,
zsh and fish load and complete with, and a man page that man renders without a warning."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess

import pytest

from disksleuth import __version__
from disksleuth.cli.commands import COMMANDS

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def needs(tool: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shutil.which(tool) is None, reason=f"{tool} is not installed (./quickstart test installs it)"
    )


def test_the_licence_is_the_mit_text_the_metadata_names() -> None:
    meta = importlib.metadata.metadata("disksleuth")
    assert meta["License-Expression"] == "MIT" and "LICENSE" in (meta.get_all("License-File") or [])
    with open(os.path.join(ROOT, "LICENSE")) as fh:
        text = " ".join(fh.read().split())
    assert text.startswith("MIT License Copyright (c)")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_changelog_has_this_version() -> None:
    with open(os.path.join(ROOT, "CHANGELOG.md")) as fh:
        text = fh.read()
    assert re.search(rf"^## \[?{re.escape(__version__)}\]?", text, re.M), "CHANGELOG.md has no section for this version"
    assert re.search(r"^## \[?Unreleased\]?", text, re.M)


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each shell's script, written as a user would: `disksleuth completion SHELL > FILE`."""
    from disksleuth.cli.app import main

    out = tmp_path_factory.mktemp("completion")
    paths = {}
    for shell in ("bash", "zsh", "fish"):
        path = out / f"disksleuth.{shell}"
        with open(path, "w") as fh:
            from disksleuth.cli.env import Environment

            env = Environment.from_process()
            env.stdout = fh
            assert main(["completion", shell], env) == 0
        paths[shell] = str(path)
    return paths


def _bash_complete(script: str, words: list[str]) -> list[str]:
    line = " ".join(words)
    program = (
        f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
        f'COMP_LINE={line!r}; COMP_POINT={len(line)}; _shtab_disksleuth; printf "%s\\n" "${{COMPREPLY[@]}}"'
    )
    res = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


@needs("bash")
def test_bash_completes_commands_options_and_choices(scripts) -> None:
    assert _bash_complete(scripts["bash"], ["disksleuth", "be"]) == ["bench"]
    assert set(_bash_complete(scripts["bash"], ["disksleuth", ""])) >= set(COMMANDS)
    assert "--profile" in _bash_complete(scripts["bash"], ["disksleuth", "bench", "--pro"])
    assert _bash_complete(scripts["bash"], ["disksleuth", "completion", "f"]) == ["fish"]


@needs("fish")
def test_fish_completes_commands_options_and_choices(scripts) -> None:
    def complete(line: str) -> list[str]:
        res = subprocess.run(
            ["fish", "--no-config", "-c", f"source {scripts['fish']}; complete -C {line!r}"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert res.returncode == 0 and not res.stderr, res.stderr
        return [row.split("\t")[0] for row in res.stdout.splitlines()]

    assert complete("disksleuth be") == ["bench"]
    assert set(complete("disksleuth ")) == set(COMMANDS)
    assert "--profile" in complete("disksleuth bench --pro")
    assert {"quick", "standard", "sustained"} <= set(complete("disksleuth bench --profile "))
    assert complete("disksleuth completion ") == ["bash", "fish", "zsh"]


@needs("zsh")
def test_zsh_finds_its_function_where_users_install_it(scripts, tmp_path) -> None:
    """Installed as _disksleuth in a folder of $fpath, compinit binds it to the command."""
    site = tmp_path / "site-functions"
    site.mkdir()
    shutil.copy(scripts["zsh"], site / "_disksleuth")
    program = f"fpath=({site} $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[disksleuth]"
    res = subprocess.run(
        ["zsh", "-f", "-c", program],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert res.returncode == 0 and res.stdout.strip() == "_disksleuth" and not res.stderr, res.stdout + res.stderr
    text = (site / "_disksleuth").read_text()
    assert text.startswith("#compdef disksleuth") and all(name in text for name in COMMANDS) and "--profile" in text


@needs("man")
def test_the_man_page_renders_without_a_warning_and_names_every_command(cli, tmp_path) -> None:
    res = cli("manpage")
    assert res.code == 0, res.err
    page = tmp_path / "disksleuth.1"
    page.write_text(res.out)
    shown = subprocess.run(
        ["man", "--warnings", "-l", str(page)], capture_output=True, text=True, timeout=60,
        env={**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "0"},
    )  # fmt: skip
    assert shown.returncode == 0 and not shown.stderr.strip(), shown.stderr
    text = re.sub(r".\x08", "", shown.stdout)
    assert text.startswith("DISKSLEUTH(1)") and f"disksleuth {__version__}" in text
    for name in COMMANDS:
        assert f"disksleuth {name}" in text, name
    assert "%%" not in text and "--destructive" in text


def test_completion_under_json_is_one_document(cli) -> None:
    res = cli("completion", "bash", "--json")
    doc = res.json()
    assert res.code == 0 and doc["completion"]["shell"] == "bash" and "_shtab_disksleuth" in doc["completion"]["script"]
    bad = cli("completion", "tcsh")
    assert bad.code == 2 and bad.err.count("\n") == 1 and "invalid choice" in bad.err, bad.err
