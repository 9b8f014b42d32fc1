"""The command line: the parser assembled from the command modules, and library errors mapped to one line
and an exit code (0 ok, 1 findings at warn/critical, 2 usage or environment error). Nothing below cli/
prints an error or exits.

Heavy imports (rich, SQLAlchemy, matplotlib) happen inside the command functions."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from disksleuth import __version__
from disksleuth.cli import options
from disksleuth.cli.commands import COMMANDS
from disksleuth.cli.common import EXIT_OK, EXIT_USAGE, emit, plain
from disksleuth.cli.env import Environment
from disksleuth.errors import DisksleuthError, Terminated

Command = Callable[[argparse.Namespace, Environment], int]

# Exception class -> the `code` of {"error": {"code", "message"}} under --json; the nearest class in
# the exception's MRO wins, so subclasses added later get their family's code.
ERROR_CODES: dict[str, str] = {
    "DeviceNotFound": "device_not_found",
    "UsageError": "usage",
    "ToolMissing": "tool_missing",
    "EnvironmentProblem": "environment",
    "CommandFailed": "command_failed",
    "CommandTimeout": "timeout",
    "ParseError": "parse",
    "SafetyRefusal": "safety_refusal",
    "DisksleuthError": "error",
}


def error_code(exc: BaseException) -> str:
    for cls in type(exc).__mro__:
        if cls.__name__ in ERROR_CODES:
            return ERROR_CODES[cls.__name__]
    return "internal"


def _emit_error(env: Environment, code: str, message: str) -> None:
    """Under --json an error is still one JSON document on stdout (and its line on stderr)."""
    try:
        emit(env, {"error": {"code": code, "message": message}})
    except BrokenPipeError:  # `--json ... | head`: the reader left; its line is on stderr already
        _silence_stdout(env)


def _silence_stdout(env: Environment) -> None:
    """After a broken pipe: stdout to /dev/null, so the flush at exit raises no second BrokenPipeError."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), env.stdout.fileno())


def _parser_class(env: Environment) -> type[argparse.ArgumentParser]:
    class Parser(argparse.ArgumentParser):
        """One clear line on bad usage, not a usage dump."""

        def error(self, message: str) -> NoReturn:
            line = f"{plain(message)} (see '{self.prog} --help')"  # it may quote what was typed
            if env.json_errors:
                _emit_error(env, "usage", line)
            self.exit(EXIT_USAGE, f"disksleuth: {line}\n")

    return Parser


def build_parser(env: Environment | None = None) -> argparse.ArgumentParser:
    parser_class = _parser_class(env or Environment.from_process())
    parser = parser_class(
        prog="disksleuth",
        formatter_class=options.HelpFormatter,
        description="How fast is this storage, how fast should it be, and why isn't it?",
        epilog="Global options go before or after the command: disksleuth --json list = disksleuth list --json. "
        "Exit codes: 0 ok, 1 findings at warn or critical (check, bench, explain, health, fleet, top --once), "
        "2 usage or environment error "
        '(under --json: {"error": {"code", "message"}} on stdout).',
    )
    # Not argparse's version action: that prints text and exits inside parse_args, before --json is known.
    parser.add_argument("--version", action="store_true", default=argparse.SUPPRESS, help="print the version and exit")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=options.JSON_HELP)
    parser.add_argument("--no-color", action="store_true", default=argparse.SUPPRESS, help=options.NO_COLOR_HELP)
    parser.add_argument("--db", metavar="URL", default=argparse.SUPPRESS, help=options.DB_HELP + "; store commands")
    parser.add_argument(
        "--sysfs-root",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help=options.SYSFS_HELP + "; list, links, capture, explain",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    sub.choices = sub._name_parser_map = _DeclaredOnUse(sub, parser_class)  # type: ignore[assignment]
    return parser


class _DeclaredOnUse(Mapping[str, argparse.ArgumentParser]):
    """The commands' parsers, each built and given its options by its module when first looked up: argparse looks
    up only the chosen command, so only its module is imported and only its parser built, not 17 (issue
    37: start-up). `--help` lists the commands from cli/commands.py alone."""

    def __init__(
        self, sub: argparse._SubParsersAction[argparse.ArgumentParser], parser_class: type[argparse.ArgumentParser]
    ) -> None:
        self._sub, self._parser_class = sub, parser_class
        self._built: dict[str, argparse.ArgumentParser] = {}
        for name, (_module, help_text) in COMMANDS.items():
            # argparse %-formats help strings (not descriptions): a bare % would crash --help.
            sub._choices_actions.append(sub._ChoicesPseudoAction(name, (), help_text.replace("%", "%%")))

    def _build(self, name: str) -> None:
        def add(command: str, func: Command) -> argparse.ArgumentParser:
            if command != name:  # a sibling declared by the same module: built when it is the one looked up
                return _Unasked()
            p: argparse.ArgumentParser = self._parser_class(
                prog=f"{self._sub._prog_prefix} {command}",
                description=COMMANDS[command][1],
                formatter_class=options.HelpFormatter,
            )
            p.set_defaults(func=func)
            p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=options.JSON_HELP)
            p.add_argument("--no-color", action="store_true", default=argparse.SUPPRESS, help=options.NO_COLOR_HELP)
            self._built[command] = p
            return p

        importlib.import_module(f"disksleuth.cli.{COMMANDS[name][0]}").register(add)

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._build(name)
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _Unasked(argparse.ArgumentParser):
    """What a command module's `add` gives for the commands not asked for: their options go nowhere."""

    def __init__(self) -> None:  # argparse's own set-up (its help option, its groups) would be thrown away
        pass

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        return argparse.Action(option_strings=[], dest="unasked")


_VALUE_OPTIONS = ("--read", "--write", "--read-iops", "--write-iops", "--time", "--size", "--max-time", "--recovery",
                  "--seconds", "--interval", "--pid")  # fmt: skip


def _join_negative_values(argv: list[str]) -> list[str]:
    """argparse takes `--read -5MB/s` for two options; join them so the value gets a proper message."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if (
            argv[i] in _VALUE_OPTIONS
            and i + 1 < len(argv)
            and argv[i + 1][:2].startswith("-")
            and argv[i + 1][1:2].isdigit()
        ):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _warning_printer(env: Environment) -> Callable[..., None]:
    """A library's warning (matplotlib's missing glyph, SQLAlchemy's SAWarning) as one note line, each
    once. Python's own format adds the file, line and source of the library, and the message may quote
    stored text verbatim: it goes through plain() like our own messages (escapes visible, URLs redacted)."""
    warned: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_where: object, **_kw: object) -> None:
        text = plain(message)
        if len(text) > 300:
            text = text[:299] + "…"
        if text in warned:
            return
        warned.add(text)
        env.error_line(f"note: {category.__name__}: {text}")

    return show


def _check_global_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A global option given before a command that has no use for it is an error, not silently ignored."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices[args.command]
    own = {a.dest for a in command._actions}
    for name in options.GLOBAL_DEFAULTS:
        if hasattr(args, name) and name not in own:
            parser.error(f"--{name.replace('_', '-')} does not apply to '{args.command}'")


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    env = env or Environment.from_process()
    args_list = list(env_argv() if argv is None else argv)
    if args_list == ["--version"]:  # the common probe of scripts: answer before building every parser
        print(f"disksleuth {__version__}", file=env.stdout)
        return EXIT_OK
    env.json_errors = "--json" in (args_list[: args_list.index("--")] if "--" in args_list else args_list)
    parser = build_parser(env)
    args = parser.parse_args(_join_negative_values(args_list))
    if getattr(args, "version", False):
        if env.json_errors:
            emit(env, {"version": {"disksleuth": __version__}})
        else:
            print(f"disksleuth {__version__}", file=env.stdout)
        return EXIT_OK
    if not getattr(args, "func", None):
        if env.json_errors:
            message = "no command given (see 'disksleuth --help')"
            env.error_line(message)
            _emit_error(env, "usage", message)
            return EXIT_USAGE
        parser.print_help(env.stdout)
        return EXIT_USAGE
    _check_global_options(parser, args)
    for name, default in options.GLOBAL_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    if not args.json:
        from disksleuth.present.text import configure

        configure(no_color=args.no_color, stdout_isatty=env.stdout_isatty, columns=env.environ.get("COLUMNS"))

    def fail(code: str, message: str) -> None:
        message = plain(message)
        env.error_line(message)
        if args.json:
            _emit_error(env, code, message)

    try:
        with env.resources, warnings.catch_warnings():  # restored after the command: main() may run many times
            warnings.showwarning = _warning_printer(env)
            return int(args.func(args, env))
    except DisksleuthError as exc:
        fail(error_code(exc), str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        fail("interrupted", "interrupted")
        return 128 + 2  # SIGINT
    except Terminated as exc:
        fail("terminated", exc.word)
        return 128 + exc.signum  # the shell's convention for a death by that signal
    except BrokenPipeError:
        # Output piped into `head`: not an error worth a traceback.
        _silence_stdout(env)
        return EXIT_OK
    except Exception as exc:  # a bug: still one line, not a traceback, unless asked for
        if env.environ.get("DISKSLEUTH_DEBUG"):
            raise
        fail(
            "internal",
            f"internal error: {type(exc).__name__}: {exc} (rerun with DISKSLEUTH_DEBUG=1 for "
            "details, and please report it)",
        )
        return EXIT_USAGE


def env_argv() -> list[str]:
    import sys

    return sys.argv[1:]
