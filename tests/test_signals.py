"""A closed terminal (SIGHUP) ends a run the way Ctrl-C and SIGTERM do: scratch removed, fio stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import needs_fio

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _fio_children(pid: int, wait_s: float = 20.0) -> list[str]:
    """fio, once it runs as our child (between two tests, for a moment, there is none)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(pid), "fio"], capture_output=True, text=True).stdout.split()
        if found:
            return found
        time.sleep(0.05)
    return []


@needs_fio
def test_sighup_during_bench_removes_scratch_and_exits_129(tmp_path):
    proc = subprocess.Popen(
        [*DISKSLEUTH, "bench", str(tmp_path), "--profile", "standard", "--size", "64M"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The first fio child may be the version check, before the scratch directory exists: wait for both.
        deadline = time.monotonic() + 30
        fios: list[str] = []
        while time.monotonic() < deadline and not (fios and os.listdir(tmp_path)):
            fios = _fio_children(proc.pid, wait_s=1.0)
        assert fios, "fio should be running mid-run"
        assert os.listdir(tmp_path), "the scratch directory should exist mid-run"
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGHUP, err
    assert "hung up" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == [], "the scratch file was left behind"
    assert [pid for pid in fios if os.path.exists(f"/proc/{pid}")] == []


class _SignalInDel:
    """Sends `signum` to this process from inside __del__, where Python prints an exception as "Exception
    ignored" and carries on: as when a signal lands in an at-fork callback while fio is being started (CI saw a
    SIGHUP lost so, inside logging's _releaseLock, and the run exited 1 instead of 129)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        os.kill(os.getpid(), self.signum)
        for _ in range(10_000):  # the handler runs at the next bytecode boundary: here, inside __del__
            pass


def _run_through_a_lost_signal(signum: int, tests: int = 3) -> list[int]:
    """A run of `tests` steps that each check for a stop, the signal sent (and its exception lost) in the first."""
    from disksleuth.run.bench import sigterm_as_exception

    done: list[int] = []
    with sigterm_as_exception() as signalled:
        for i in range(tests):
            signalled.check()  # as bench's loop does between tests and at each fio status line
            if i == 0:
                _SignalInDel(signum)  # made and dropped: __del__ runs here
            done.append(i)
    return done


# The exception lost in __del__ is the point: pytest's warning that one was raised there is expected.
LOST = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@LOST
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_whose_exception_was_lost_still_stops_the_run(signum):
    from disksleuth.errors import Terminated

    before = signal.getsignal(signum)
    expected = KeyboardInterrupt if signum == signal.SIGINT else Terminated
    with pytest.raises(expected) as caught:
        _run_through_a_lost_signal(signum)
    if expected is Terminated:
        assert caught.value.signum == signum
    assert signal.getsignal(signum) == before  # the handlers are put back


@LOST
def test_a_lost_stop_signal_ends_the_run_at_the_next_check_not_at_its_end():
    from disksleuth.errors import Terminated
    from disksleuth.run.bench import sigterm_as_exception

    done: list[int] = []
    with pytest.raises(Terminated), sigterm_as_exception() as signalled:
        for i in range(3):
            signalled.check()
            if i == 0:
                _SignalInDel(signal.SIGHUP)
            done.append(i)
    assert done == [0]  # the second test never started



@needs_fio
@pytest.mark.parametrize("where", ["popen", "reader", "probe"])
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_as_fio_starts_stops_fio(tmp_path, monkeypatch, where, signum):
    """CI: fio outlived `bench` after a SIGHUP that landed while fio was being started. The handler's exception
    came out of Popen (as when it lands while Python waits for the exec) or out of starting fio's stderr reader,
    before the run held fio, so nothing stopped it. A short tool run (`probe`: an engine probe, smartctl) too."""
    import subprocess
    import threading

    from disksleuth.errors import Terminated
    from disksleuth.probe import fio, runner
    from disksleuth.run.bench import sigterm_as_exception

    started: list[subprocess.Popen[str]] = []  # fio, which the exception would otherwise hide from the test

    class KeptPopen(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
            super().__init__(*args, **kwargs)
            started.append(self)
            if where in ("popen", "probe"):
                os.kill(os.getpid(), signum)

    class SignalOnStart(threading.Thread):
        def start(self) -> None:
            os.kill(os.getpid(), signum)
            super().start()

    monkeypatch.setattr(subprocess, "Popen", KeptPopen)
    if where == "reader":
        monkeypatch.setattr(threading, "Thread", SignalOnStart)
    target = tmp_path / "f"
    target.write_bytes(b"\0" * (4 << 20))
    argv = ["fio", "--name=t", f"--filename={target}", "--rw=read", "--size=4M", "--time_based", "--runtime=30"]
    argv += ["--thread", "--output-format=json"]
    expected = KeyboardInterrupt if signum == signal.SIGINT else Terminated
    try:
        with pytest.raises(expected), sigterm_as_exception():
            if where == "probe":
                runner.run(argv, timeout_s=60)
            else:
                fio.run_job(argv, timeout_s=60)
        assert len(started) == 1
        assert started[0].poll() is not None, "fio was left running"
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
