"""`completion` and `manpage`: what a package installs beside the command, printed from the parser."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli.common import EXIT_OK, emit, say
from disksleuth.cli.env import Environment

AddCommand = Callable[..., argparse.ArgumentParser]

# Where each shell looks for a completion (bash-completion's user folder, zsh's site functions, fish's own).
INSTALL_PATHS = {
    "bash": "~/.local/share/bash-completion/completions/disksleuth",
    "zsh": "/usr/local/share/zsh/site-functions/_disksleuth",
    "fish": "~/.config/fish/completions/disksleuth.fish",
}
MAN_PATH = "/usr/local/share/man/man1/disksleuth.1"
COMPLETION_EPILOG = "Install: " + "; ".join(f"disksleuth completion {s} > {p}" for s, p in INSTALL_PATHS.items())


def register(add: AddCommand) -> None:
    from disksleuth.cli.shell import SHELLS

    p = add("completion", run_completion)
    p.add_argument("shell", choices=SHELLS, help="the shell to complete for")
    p.epilog = COMPLETION_EPILOG
    m = add("manpage", run_manpage)
    m.epilog = f"Install: disksleuth manpage > {MAN_PATH} (then: man disksleuth)"


def run_completion(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.cli.shell import completion_script

    script = completion_script(args.shell)
    if args.json:
        emit(env, {"completion": {"shell": args.shell, "script": script}})
    elif env.stdout_isatty:  # a script of 300 lines scrolled past is of no use: say where it goes
        say(
            f"The {args.shell} completion script for disksleuth is {script.count(chr(10))} lines. Install it with: "
            f"disksleuth completion {args.shell} > {INSTALL_PATHS[args.shell]} (then start a new shell)"
        )
    else:
        env.stdout.write(script)
    return EXIT_OK


def run_manpage(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.cli.shell import man_page

    page = man_page()
    if args.json:
        emit(env, {"manpage": {"section": 1, "roff": page}})
    elif env.stdout_isatty:  # roff is for man, not for reading
        say(f"Install the man page with: disksleuth manpage > {MAN_PATH} (then: man disksleuth)")
    else:
        env.stdout.write(page)
    return EXIT_OK
