"""The world a command runs in: its streams, whether they are terminals, and the environment variables.

Built once per invocation (`Environment.from_process()`), or by a test, so output decisions (colour,
progress, confirmation, table width) can be tested without a real terminal, as httpie's Environment does."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Environment:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    environ: Mapping[str, str]
    stdin_isatty: bool
    stdout_isatty: bool
    stderr_isatty: bool
    # Per invocation: --json was on the command line, so even usage errors come out as a JSON document.
    json_errors: bool = False
    # What a command opened for its lifetime (an unpacked capture bundle): closed when main() returns.
    resources: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @classmethod
    def from_process(cls) -> Environment:
        return cls(
            sys.stdin,
            sys.stdout,
            sys.stderr,
            os.environ,
            _isatty(sys.stdin),
            _isatty(sys.stdout),
            _isatty(sys.stderr),
        )

    @property
    def progress_on_stderr(self) -> bool:
        """Live progress goes to stderr whenever stderr is a terminal, whatever stdout is (a file, a pipe,
        --json): `bench DIR > out.txt` still shows what it is doing, as curl, pip and fio do."""
        return self.stderr_isatty and self.environ.get("TERM") != "dumb"

    @property
    def can_confirm(self) -> bool:
        """Someone is there to answer a question: stdin and stderr are terminals."""
        return self.stdin_isatty and self.stderr_isatty

    def error_line(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(f"disksleuth: {text}", file=self.stderr, flush=True)


def _isatty(stream: TextIO | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError):  # closed
        return False
