"""What the command modules share: words for people, the exit code of findings, the results store's fallbacks."""

from __future__ import annotations

import argparse
from typing import Any

from disksleuth.cli.env import Environment

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def plain(message: object) -> str:
    """An error message may quote a file, a tool or a store URL: no control character of it reaches
    stderr, and no password of a URL either."""
    from disksleuth.present.text import safe_text

    text = safe_text(message, markup=False)
    if "://" in text:  # imported only when there is a URL to look at: nothing added to every start
        from disksleuth.store.urls import redact_urls_in

        text = redact_urls_in(text)
    return text


def say(line: str) -> None:
    """A sentence for people, taken literally (no markup): wrapped between words at a terminal's width; off a
    terminal one line, as long as it is, so a log or grep gets it whole."""
    from rich.text import Text

    from disksleuth.present.text import console

    out = console()
    out.print(Text(line), soft_wrap=not out.is_terminal)


def emit(env: Environment, payload: dict[str, Any]) -> None:
    from disksleuth.present.jsonout import emit as emit_document

    emit_document(payload, env.stdout)


def wrote(env: Environment, path: str, line: str, doc: dict[str, Any], json_out: bool) -> None:
    """What a command that wrote -o PATH says: `line` for people (its "{path}" filled in), or `doc` under --json.
    With -o - the output itself is on stdout, so the line goes to stderr and no document follows it."""
    from disksleuth.outfile import STDOUT

    if path == STDOUT:
        env.error_line(line.replace("{path}", "standard output"))
    elif json_out:
        emit(env, doc)
    else:
        say(line.replace("{path}", path))


def exit_for(findings: list[Any]) -> int:
    """1 when a finding is at warn or critical (check, bench, explain, health), else 0."""
    from disksleuth.model import worst_severity

    return EXIT_FINDINGS if worst_severity(findings) in ("warn", "critical") else EXIT_OK


def sysfs_root(args: argparse.Namespace, env: Environment) -> str:
    """--sysfs-root as a directory to read: a capture bundle stays unpacked until the command ends."""
    from disksleuth.run.inventory import sysfs_root as open_sysfs_root

    return env.resources.enter_context(open_sysfs_root(getattr(args, "sysfs_root", None)))
