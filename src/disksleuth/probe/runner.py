"""The one subprocess wrapper. argv lists only (never a shell string), always a timeout,
typed errors that carry stderr."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from disksleuth.errors import CommandFailed, CommandTimeout, ToolMissing

# Debian/Ubuntu package for each external tool, for the "install it with" message.
PACKAGES = {
    "fio": "fio",
    "smartctl": "smartmontools",
    "nvme": "nvme-cli",
    "lspci": "pciutils",
}


@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def which(tool: str) -> str | None:
    return shutil.which(tool)


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise ToolMissing(tool, PACKAGES.get(tool))
    return path


def run(
    argv: Sequence[str],
    *,
    timeout_s: float,
    ok_codes: Sequence[int] = (0,),
    check: bool = True,
    die_with_parent: bool = False,
    pass_fds: Sequence[int] = (),
) -> Result:
    """Run argv, capture text output. Raises ToolMissing, CommandTimeout, CommandFailed.

    `ok_codes` lets callers accept tools whose exit status is a bitmask (smartctl).
    """
    argv = [str(a) for a in argv]
    if shutil.which(argv[0]) is None:
        raise ToolMissing(argv[0], PACKAGES.get(argv[0]))
    proc: subprocess.Popen[str] | None = None
    try:
        with child_starting():  # a stop signal meanwhile is raised once `proc` is set: `finally` kills it
            proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent() if die_with_parent else None,
                pass_fds=tuple(pass_fds),
            )
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise CommandTimeout(argv, timeout_s) from exc
    except OSError as exc:  # e.g. permission denied on the binary
        raise CommandFailed(argv, 126, "", str(exc)) from exc
    finally:
        if proc is not None and proc.returncode is None:  # stopped early (a time-out, a signal): never left running
            proc.kill()
            proc.communicate()
    if check and proc.returncode not in ok_codes:
        raise CommandFailed(argv, proc.returncode, stdout, stderr)
    return Result(tuple(argv), proc.returncode, stdout, stderr)


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> Callable[[], None] | None:
    """A pre-exec hook that makes the child get SIGKILL when we die, even by `kill -9`.

    prctl(PR_SET_PDEATHSIG) survives execve (prctl(2)); it is not inherited by the child's own forks,
    so fio must run its jobs as threads (--thread). If we died between fork and prctl, the child
    has been re-parented already: it exits at once."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # not Linux/glibc: no parent-death signal
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return hook


def popen(argv: Sequence[str], *, pass_fds: Sequence[int] = ()) -> subprocess.Popen[str]:
    """Start a long-running tool (fio with a status stream) with piped text output.

    The caller owns the process; it runs in its own process group so that Ctrl-C reaches us first
    and we decide how to stop it and clean up. It dies with us (kill -9 included): nothing keeps
    writing to a disk after disksleuth is gone. `pass_fds` stay open in it under the same numbers."""
    argv = [str(a) for a in argv]
    if shutil.which(argv[0]) is None:
        raise ToolMissing(argv[0], PACKAGES.get(argv[0]))
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,
        pass_fds=tuple(pass_fds),
        preexec_fn=_die_with_parent(),
    )


@dataclass
class _Starting:
    depth: int = 0  # the main thread is inside child_starting()
    held: list[int] = field(default_factory=list)  # stop signals that arrived meanwhile


# Process-wide, as signal handlers are: the main thread starting a child, and the stop signals held meanwhile.
_STARTING = _Starting()


@contextlib.contextmanager
def child_starting() -> Iterator[None]:
    """Around starting a child the caller must stop again (fio). A stop signal whose handler raised inside
    Popen (waiting for the exec, or in an at-fork callback) left fio running with nobody to stop it; CI saw
    one outlive `bench` after SIGHUP. A handler asks hold_stop_signal() first: while the main thread is in
    here the signal is kept, and sent again on the way out, when the caller's `finally` can stop the child."""
    if threading.current_thread() is not threading.main_thread():  # signal handlers run in the main thread only
        yield
        return
    _STARTING.depth += 1
    try:
        yield
    finally:
        _STARTING.depth -= 1
        if not _STARTING.depth:
            held, _STARTING.held = _STARTING.held, []
            for signum in dict.fromkeys(held):
                signal.raise_signal(signum)


def hold_stop_signal(signum: int) -> bool:
    """For a stop signal's handler: True, and the signal kept for later, while a child is being started."""
    if _STARTING.depth:
        _STARTING.held.append(signum)
        return True
    return False
