"""Options more than one command declares. Each command module declares its own beside its code."""

from __future__ import annotations

import argparse

# Options that may also come before the command (`disksleuth --json list`). Defaults are SUPPRESS in
# every parser so a subcommand's default never overwrites the value given before it; main() fills
# the real defaults in afterwards.
GLOBAL_DEFAULTS = {"json": False, "no_color": False, "db": None, "sysfs_root": None}
JSON_HELP = "print one JSON document (schema disksleuth/1), errors included"
NO_COLOR_HELP = "no colour (also: NO_COLOR=1 in the environment)"
DB_HELP = (
    "results store: a file path, sqlite:///PATH or postgresql://USER@HOST/DB "
    "(default: $DISKSLEUTH_DB, else ~/.local/share/disksleuth/results.sqlite)"
)
SYSFS_HELP = "read sysfs from DIR or a capture .tar.gz, not /"


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="URL", default=argparse.SUPPRESS, help=DB_HELP)


def add_sysfs_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sysfs-root", metavar="DIR", default=argparse.SUPPRESS, help=SYSFS_HELP)


BASELINE_HELP = (
    "compare each figure with this drive's earlier runs of the same test, measured the same way: the median of "
    "the last N (median:N, default median:5), the last run (last), or run RUN"
)


def add_baseline(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", metavar="RUN|last|median:N", help=BASELINE_HELP)


def add_measuring(p: argparse.ArgumentParser) -> None:
    """check and bench: where the run is saved, how big and how long its tests are."""
    add_db(p)
    p.add_argument("--tag", action="append", metavar="TAG", help="label the saved run (repeatable)")
    p.add_argument("--note", metavar="TEXT", help="a free-form note on the saved run")
    p.add_argument("--no-save", action="store_true", help="do not save the run in the results store")
    add_baseline(p)
    p.add_argument(
        "--size",
        metavar="SIZE",
        help="scratch file size; on a device, test the first SIZE. 500MB is 500x10^6 bytes, 512MiB 512x2^20; "
        "a bare 1G or 512M is binary, as in fio (1G = 1 GiB = 1,073,741,824 bytes)",
    )
    p.add_argument("--engine", metavar="E", help="fio ioengine (default: io_uring, else libaio, else psync)")
    p.add_argument("--time", metavar="SECONDS", help="fixed length per test instead of stopping when sure")
    p.add_argument(
        "--precision",
        metavar="PCT",
        help="stop each test once its figure's 95%% confidence interval is within +-PCT%% (default 3)",
    )
    p.add_argument("--commands", action="store_true", help="print each test's fio command line")
    p.add_argument("--destructive", action="store_true", help="allow write tests on a device or existing file")
    p.add_argument("--yes", action="store_true", help="do not ask before destructive writes (needed without a TTY)")


def profile_help() -> str:
    """--profile's help, one line per profile, from profiles.py: what it runs and how long it takes."""
    from disksleuth.profiles import PROFILES

    width = max(len(name) for name in PROFILES)
    lines = [f"  {p.name:<{width}}  {p.description} ({p.expected_duration()})" for p in PROFILES.values()]
    return "\n".join(
        [
            "test set (default: quick):",
            *lines,
            "Times are for the tests at their default lengths, reads and writes; a scratch file is laid out first.",
        ]
    )


def add_profile(p: argparse.ArgumentParser) -> None:
    from disksleuth import PROFILE_NAMES

    # argparse %-formats help strings: riscos's "% of a RAM-backed reference" would crash --help.
    shown = profile_help().replace("%", "%%")
    p.add_argument("--profile", default="quick", choices=PROFILE_NAMES, metavar="P", help=shown)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, but a help text's own line breaks are kept (--profile lists one profile a line); each line
    is wrapped to the width, its continuation indented under its text. Its width is found as argparse finds it, but
    without importing shutil (and bz2, lzma with it) at every start: argparse makes a formatter per option added."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)

    def _split_lines(self, text: str, width: int) -> list[str]:
        import re
        import textwrap

        lines: list[str] = []
        for line in text.splitlines():
            # An indented "name  text" line continues under its text; any other line under itself.
            named = re.match(r"\s+\S+\s{2,}", line)
            hang = " " * (len(named.group()) if named else len(line) - len(line.lstrip()))
            lines.extend(textwrap.wrap(line, width, subsequent_indent=hang, break_on_hyphens=False) or [""])
        return lines


def _columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else stdout's terminal, else 80."""
    import os
    import sys

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
