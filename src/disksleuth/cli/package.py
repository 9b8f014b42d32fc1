"""`completion` and `manpage`: what a package installs beside the command, printed from the parser."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli.common import EXIT_OK, emit, say
from disksleuth.cli.env import Environment
from disksleuth.cli.options import HelpFormatter

AddCommand = Callable[..., argparse.ArgumentParser]

# Where each shell looks for a completion (bash-completion's user folder, zsh's site functions, fish's own).
INSTALL_PATHS = {
    "bash": "~/.local/share/bash-completion/completions/disksleuth",
    "zsh": "/usr/local/share/zsh/site-functions/_disksleuth",
    "fish": "~/.config/fish/completions/disksleuth.fish",
}
MAN_PATH = "/usr/local/share/man/man1/disksleuth.1"
# One command a line, the path after a continuation: flowed as one paragraph at 80 columns, the bash path was cut
# at its hyphen ("bash-" / "completion/..."), and a pasted command wrote a file named "~/.local/share/bash-".
COMPLETION_EPILOG = "Install:\n" + "\n".join(
    f"  disksleuth completion {s} \\\n    > {p}" for s, p in INSTALL_PATHS.items()
)
MAN_EPILOG = f"Install (then: man disksleuth):\n  disksleuth manpage \\\n    > {MAN_PATH}"


class _KeepLines(HelpFormatter):
    """The commands' formatter, but the epilog's lines kept as written (they are commands to paste)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in text.splitlines())


def register(add: AddCommand) -> None:
    from disksleuth.cli.shell import SHELLS

    p = add("completion", run_completion)
    p.add_argument("shell", choices=SHELLS, help="the shell to complete for")
    p.epilog = COMPLETION_EPILOG
    p.formatter_class = _KeepLines
    m = add("manpage", run_manpage)
    m.epilog = MAN_EPILOG
    m.formatter_class = _KeepLines


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
