"""Running fio: version, engine probe, and one job with a live `--status-interval` stream."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable

from disksleuth.errors import CommandFailed, CommandTimeout, DisksleuthError, ParseError
from disksleuth.model_fio import FioReport, StatusSample
from disksleuth.probe import runner
from disksleuth.probe.fio_parse import parse_fio_json, report_from_document, split_documents
from disksleuth.profiles import fio_filename

ENGINE_PREFERENCE = ("io_uring", "libaio", "psync")


class FioJobError(DisksleuthError):
    """fio ran but the job reported an error (errno in `error`)."""

    def __init__(self, job: str, err: int, detail: str):
        self.err = err
        self.job = job
        name = os.strerror(err) if err > 0 else "unknown error"
        if err == errno.ENOSPC:
            text = f"{job}: the disk filled up during the run ({name})"
        elif err == errno.EINVAL and "direct" in detail.lower():
            text = f"{job}: the target refused direct I/O ({name})"
        else:
            text = f"{job}: fio reported error {err} ({name})"
        super().__init__(text + (f"; fio said: {detail}" if detail else ""))


class FioKilled(DisksleuthError):
    """fio (or one of its jobs) died of a signal: whatever it measured is not a figure."""

    def __init__(self, signum: int):
        self.signum = signum
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        why = "; the OOM killer does this" if signum == signal.SIGKILL else ""
        super().__init__(f"fio was killed by signal {signum} ({name}{why})")


# fio's main process, when a job process dies of a signal (backend.c, fio 3.33): "fio: pid=N, got signal=9".
_GOT_SIGNAL_RE = re.compile(r"^fio: pid=\d+, got signal=(\d+)", re.MULTILINE)


def fio_version() -> str:
    out = runner.run(["fio", "--version"], timeout_s=10, die_with_parent=True).stdout.strip()
    return out.splitlines()[0] if out else "fio (unknown version)"


def engine_works(engine: str, filename: str, direct: bool, pass_fds: tuple[int, ...] = ()) -> bool:
    """A 1 MiB read with this engine on the real target: compiled in, allowed by the kernel
    (io_uring can be disabled by sysctl or seccomp), and working on this file.

    --readonly: a read job still lays out a missing or short file, so without it this probe could
    create or extend files."""
    argv = [
        "fio",
        "--name=probe",
        f"--filename={fio_filename(filename)}",
        "--readonly",
        "--thread",
        f"--ioengine={engine}",
        "--rw=read",
        "--bs=4k",
        "--size=1M",
        "--iodepth=4",
        f"--direct={1 if direct else 0}",
        "--output-format=json",
    ]
    try:
        res = runner.run(argv, timeout_s=30, check=False, die_with_parent=True, pass_fds=pass_fds)
    except DisksleuthError:
        return False
    if res.returncode != 0:
        return False
    try:
        report = parse_fio_json(res.stdout)
    except ParseError:
        return False
    return all(j.error == 0 for j in report.jobs)


def pick_engine(
    filename: str, direct: bool, preference: tuple[str, ...] = ENGINE_PREFERENCE, pass_fds: tuple[int, ...] = ()
) -> str:
    for engine in preference:
        if engine_works(engine, filename, direct, pass_fds):
            return engine
    return "psync"


def _sample(report: FioReport, started: float) -> StatusSample:
    read_b = write_b = ios = runtime = 0
    for j in report.jobs:
        for d in (j.read, j.write, j.mixed):
            if d is not None:
                ios += d.total_ios
                runtime = max(runtime, d.runtime_ms)
        if j.mixed is not None and j.read is None:
            read_b += j.mixed.io_bytes
        else:
            read_b += j.read.io_bytes if j.read else 0
            write_b += j.write.io_bytes if j.write else 0
    return StatusSample(time.monotonic() - started, read_b, write_b, ios, report.timestamp_ms, runtime)


def run_job(
    argv: list[str],
    *,
    timeout_s: float,
    on_status: Callable[[StatusSample], None] | None = None,
    status_interval_s: float = 1.0,
    stop_when: Callable[[], bool] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> tuple[FioReport, list[StatusSample]]:
    """Run one fio job with a status stream. Always stops fio before returning or raising.

    `stop_when` is asked after each status document; when it says yes, fio gets SIGINT, which makes it
    stop its jobs and print its complete final report (fio 3.33 behaviour, checked by hand).

    Raises ToolMissing, FioKilled (fio or a job of it died of a signal), CommandFailed (fio exited
    non-zero: stderr summarised), FioJobError (a job reported an errno), CommandTimeout, ParseError
    (no complete JSON).
    """
    # fio takes time units here too; whole seconds keep the recorded form of older runs.
    interval = (
        f"{int(status_interval_s)}"
        if status_interval_s == int(status_interval_s)
        else f"{round(status_interval_s * 1000)}ms"
    )
    full = [*argv, f"--status-interval={interval}"]
    proc = runner.popen(full, pass_fds=pass_fds)
    stderr_chunks: list[str] = []
    drain = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read() if proc.stderr else ""))
    drain.daemon = True
    drain.start()
    started = time.monotonic()
    samples: list[StatusSample] = []
    buf = ""
    stopping = False
    stdout_all: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            stdout_all.append(line)
            buf += line
            if line.startswith("}"):
                docs, _, buf = split_documents(buf)
                for doc in docs:
                    try:
                        sample = _sample(report_from_document(doc), started)
                    except ParseError:
                        continue
                    samples.append(sample)
                    if on_status:
                        on_status(sample)
                if stop_when is not None and stop_when() and not stopping:
                    stopping = True
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGINT)
            if time.monotonic() - started > timeout_s:
                raise CommandTimeout(full, timeout_s)
        proc.wait(timeout=max(5.0, timeout_s - (time.monotonic() - started)))
    except subprocess.TimeoutExpired as exc:
        raise CommandTimeout(full, timeout_s) from exc
    finally:
        stop(proc)
        drain.join(timeout=5)
    stdout = "".join(stdout_all)
    stderr = "".join(stderr_chunks)
    # A killed job leaves fio's report whole but its figures cut short (fio 3.33 prints error 0 and
    # what the job did before it died): never a figure.
    if proc.returncode is not None and proc.returncode < 0:
        raise FioKilled(-proc.returncode)
    killed = _GOT_SIGNAL_RE.search(stderr) or _GOT_SIGNAL_RE.search(stdout)
    if killed:
        raise FioKilled(int(killed.group(1)))
    try:
        report = parse_fio_json(stdout)
    except ParseError:
        if proc.returncode:
            raise CommandFailed(full, proc.returncode, stdout, stderr or stdout) from None
        raise
    for job in report.jobs:
        if job.error:
            detail = "; ".join([*report.messages[-2:], *[ln for ln in stderr.splitlines() if ln.strip()][-1:]])
            raise FioJobError(job.name, job.error, detail)
    # After our own SIGINT fio exits non-zero ("terminating on signal 2") but its report is whole.
    if proc.returncode and not stopping:
        raise CommandFailed(full, proc.returncode, stdout, stderr or "\n".join(report.messages))
    # The final document repeats the last status one; drop it from the series.
    return report, samples[:-1] if len(samples) > 1 else samples


def stop(proc: subprocess.Popen[str]) -> None:
    """End fio and its job processes (its own session) and reap it."""
    if proc.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
