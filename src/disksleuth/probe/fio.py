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
from disksleuth.model.fio import FioReport, StatusSample
from disksleuth.probe import runner
from disksleuth.probe.fio_parse import parse_fio_json, report_from_document, split_documents
from disksleuth.profiles import fio_filename

ENGINE_PREFERENCE = ("io_uring", "libaio", "psync")


# fio's own words for a failed job, as fio 3.33 prints them (captured on this machine):
#   open refused:  "fio: pid=0, err=13/file:filesetup.c:805, func=open(/dev/vda), error=Permission denied"
#   no O_DIRECT:   "fio: destination does not support O_DIRECT" (ramfs), then err=22 from open()
#   full disk:     "fio: io_u error on file /mnt/f: No space left on device: write offset=8388608, ..."
_FILE_RES = (re.compile(r"func=open\((.*?)\), error="), re.compile(r"io_u error on file (.*?): "))
_NO_DIRECT_RE = re.compile(r"does not support (O_DIRECT|direct=1)|first direct IO errored", re.IGNORECASE)
# fio exits before any job when the size is below one block (init.c): "fio: size too small, must not
# be less than minimum block size: 3 < 1048576".
_SIZE_TOO_SMALL_RE = re.compile(r"size too small, must not be less than minimum block size: (\d+) < (\d+)")


def _file_in(text: str) -> str | None:
    for pattern in _FILE_RES:
        m = pattern.search(text)
        if m:
            return m.group(1)
    return None


def explain_job_error(job: str, err: int, fio_text: str) -> str:
    """One sentence for a job that failed with errno `err`; `fio_text` is all fio printed."""
    name = os.strerror(err) if err > 0 else "unknown error"
    file = _file_in(fio_text)
    where = file or "the target"
    if err in (errno.EACCES, errno.EPERM):
        # fio's errno in the OS's words; root suggested only to who is not root (in a container root gets EPERM).
        hint = ", even as root" if os.geteuid() == 0 else "; this needs root (run with sudo) or access to it"
        return f"{job}: cannot open {where}: {name}{hint}"
    if err == errno.ENOSPC:
        return f"{job}: no space left on the device holding {where}; the disk filled up during the run"
    if err == errno.EINVAL and _NO_DIRECT_RE.search(fio_text):
        return f"{job}: {where} does not support direct I/O (O_DIRECT), which this test asked for"
    if err == errno.EROFS:
        return f"{job}: {where} is on a read-only file system"
    if err == errno.EIO:
        return f"{job}: the device reported an I/O error on {where}; check dmesg and the drive's health"
    if err == errno.ENOENT:
        return f"{job}: {where} does not exist"
    lines = [ln.strip() for ln in fio_text.splitlines() if ln.strip().startswith("fio:")]
    return f"{job}: fio reported error {err} ({name})" + (f"; fio said: {lines[-1]}" if lines else "")


def explain_fio_failure(fio_text: str) -> str | None:
    """One sentence for fio refusing to start, or None when we do not know its words."""
    m = _SIZE_TOO_SMALL_RE.search(fio_text)
    if m:
        return (
            f"the target is {int(m.group(1)):,} bytes, smaller than one {int(m.group(2)):,}-byte block of this "
            "test; give a directory (a scratch file is made there), a larger file or a device"
        )
    return None


class FioJobError(DisksleuthError):
    """fio ran but the job reported an error (errno in `error`)."""

    def __init__(self, job: str, err: int, fio_text: str):
        self.err = err
        self.job = job
        super().__init__(explain_job_error(job, err, fio_text))


class FioRefused(DisksleuthError):
    """fio refused the job before running it, for a reason we can say in one sentence."""


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
    # fio takes time units here too; whole seconds keep the recorded form of older runs. Sub-second works:
    # init.c parses the value as a time and refuses only below 1 ms, helper_thread.c dumps on that period.
    interval = (
        f"{int(status_interval_s)}"
        if status_interval_s == int(status_interval_s)
        else f"{round(status_interval_s * 1000)}ms"
    )
    full = [*argv, f"--status-interval={interval}"]
    stderr_chunks: list[str] = []
    samples: list[StatusSample] = []
    buf = ""
    stopping = False
    stdout_all: list[str] = []
    proc: subprocess.Popen[str] | None = None
    drain: threading.Thread | None = None
    try:
        # Everything after fio exists is inside this `try`: a stop signal then ends fio too, never leaves it running.
        with runner.child_starting():
            proc = runner.popen(full, pass_fds=pass_fds)
        err_pipe = proc.stderr
        drain = threading.Thread(target=lambda: stderr_chunks.append(err_pipe.read() if err_pipe else ""))
        drain.daemon = True
        drain.start()
        started = time.monotonic()
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
        if proc is not None:
            stop(proc)
        if drain is not None and drain.ident is not None:  # started
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
            known = explain_fio_failure(stderr + stdout)
            if known:
                raise FioRefused(known) from None
            raise CommandFailed(full, proc.returncode, stdout, stderr or stdout) from None
        raise
    for job in report.jobs:
        if job.error:
            raise FioJobError(job.name, job.error, "\n".join([*report.messages, stderr]))
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
