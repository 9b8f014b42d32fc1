"""The library's exceptions. Only cli.py turns them into messages and exit codes."""

from __future__ import annotations

import signal


class DisksleuthError(Exception):
    """Base class. `str(err)` is the one line shown to the user."""

    exit_code = 2


class UsageError(DisksleuthError):
    """Bad arguments or input from the user."""


class EnvironmentProblem(DisksleuthError):
    """The machine lacks something we need (a tool, a permission, a device)."""


class ToolMissing(EnvironmentProblem):
    def __init__(self, tool: str, package: str | None = None):
        self.tool = tool
        self.package = package or tool
        super().__init__(f"{tool} is not installed; install it with: apt-get install {self.package}")


class CommandFailed(DisksleuthError):
    """A subprocess exited non-zero. Carries its stderr."""

    def __init__(self, argv: list[str], returncode: int, stdout: str, stderr: str):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        summary = summarise_stderr(stderr) or f"exit status {returncode}"
        super().__init__(f"{argv[0]} failed: {summary}")


class CommandTimeout(DisksleuthError):
    def __init__(self, argv: list[str], timeout_s: float):
        self.argv = argv
        self.timeout_s = timeout_s
        super().__init__(f"{argv[0]} did not finish within {timeout_s:g} s")


class ParseError(DisksleuthError):
    """Input we were given (a file, a tool's output) is not what it should be."""


class SafetyRefusal(DisksleuthError):
    """We refuse to do something that could lose data."""


class DeviceNotFound(UsageError):
    pass


class StoreMissing(UsageError):
    """A read-only command was pointed at a store that does not exist (we never create one to read it)."""


class StoreError(EnvironmentProblem):
    """The store could not be read or written (locked, unreachable, refused); one line, no SQL."""


def first_line(exc: object) -> str:
    """The first line of an exception's message (a driver's error may run on with SQL and parameters)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def json_problem(msg: str, lineno: int) -> str:
    """json's own words for what is wrong, and where: "Expecting ',' delimiter at line 3". Some of its
    messages already end in "at" ("Unterminated string starting at"): those are not given a second one."""
    msg = msg.rstrip()
    return f"{msg} line {lineno}" if msg.endswith(" at") else f"{msg} at line {lineno}"


def summarise_stderr(stderr: str, max_lines: int = 3) -> str:
    """The last few meaningful lines of a tool's stderr, joined on one line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return "; ".join(lines[-max_lines:])


class Terminated(BaseException):
    """SIGTERM or SIGHUP (a closed terminal) arrived. A BaseException like KeyboardInterrupt, so no
    `except Exception` swallows it and every `finally` (fio stopped, scratch file removed) runs on the
    way out. `signum` gives the exit status (128 + signum) and the word."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def word(self) -> str:
        return "hung up (the terminal closed)" if self.signum == signal.SIGHUP else "terminated"


# The signals that end a run the way Ctrl-C does: scratch removed, fio stopped, one line, 128 + signum.
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
