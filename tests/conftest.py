"""Shared fixtures: the CLI through its entry point, and real loop devices, file systems and blkio
cgroups, each cleaned up after the test."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from disksleuth.cli import main
from disksleuth.model.run import SeriesPoint, TestResult

# Every test, and every disksleuth it starts, saves runs into a throwaway store, never ~/.local/share.
_STORE_DIR = tempfile.mkdtemp(prefix="disksleuth-test-store-")
# Removed at exit, whichever way the process ends its session: one per pytest process (controller, workers).
atexit.register(shutil.rmtree, _STORE_DIR, ignore_errors=True)
os.environ["DISKSLEUTH_DB"] = f"sqlite:///{_STORE_DIR}/results.sqlite"
# A run the store refuses is kept under the data directory: that one is throwaway too.
os.environ["XDG_DATA_HOME"] = os.path.join(_STORE_DIR, "data")
# Output widths are the off-terminal default unless a test sets COLUMNS itself: pytest-xdist's workers
# inherit COLUMNS=80 LINES=24, which wrapped header lines that tests look for whole.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def _own_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own throwaway store: a run saved by one test is never another's history (a baseline
    would judge one test's figures against another's device runs) nor its "newest run"."""
    folder = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("DISKSLEUTH_DB", f"sqlite:///{folder}/results.sqlite")
    monkeypatch.setenv("XDG_DATA_HOME", str(folder / "data"))


HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
SYSFS = os.path.join(DATA, "sysfs")
SMARTCTL_FIXTURES = os.path.join(DATA, "smartctl")
FIO_FIXTURES = os.path.join(DATA, "fio")


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> dict:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run `disksleuth ARGS` in-process, like a runner: exit code, stdout, stderr."""

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse --help / --version / usage errors
            code = exc.code if isinstance(exc.code, int) else 0
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


# --- real devices ----------------------------------------------------------------------------


def _have_loop() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("losetup") is None:
        return "losetup missing"
    if not os.path.exists("/dev/loop-control"):
        return "no loop device support"
    return None


def _have_fio() -> str | None:
    return None if shutil.which("fio") else "fio missing"


needs_loop = pytest.mark.skipif(_have_loop() is not None, reason=_have_loop() or "")
needs_fio = pytest.mark.skipif(_have_fio() is not None, reason=_have_fio() or "")


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def loop_device(size_mb: int = 256, fill: bool = False) -> Iterator[str]:
    """A RAM-backed loop device with direct I/O: /dev/shm image + losetup --direct-io=on."""
    image = f"/dev/shm/disksleuth-test-{uuid.uuid4().hex[:8]}.img"
    with open(image, "wb") as fh:
        if fill:
            chunk = os.urandom(1 << 20)
            for _ in range(size_mb):
                fh.write(chunk)
        else:
            fh.truncate(size_mb << 20)
    dev = None
    try:
        dev = _run("losetup", "-f", "--show", "--direct-io=on", image)
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(image)


@pytest.fixture
def loopdev() -> Iterator[str]:
    reason = _have_loop()
    if reason:
        pytest.skip(reason)
    with loop_device() as dev:
        yield dev


@contextlib.contextmanager
def mounted_ext4(dev: str) -> Iterator[str]:
    _run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)  # no writes of its own later
    mnt = f"/tmp/disksleuth-mnt-{uuid.uuid4().hex[:8]}"
    os.makedirs(mnt)
    try:
        _run("mount", dev, mnt)
        try:
            yield mnt
        finally:
            subprocess.run(["umount", mnt], check=False)
    finally:
        os.rmdir(mnt)


BLKIO = "/sys/fs/cgroup/blkio"


def have_blkio() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.exists(os.path.join(BLKIO, "blkio.throttle.read_bps_device")):
        return "cgroup v1 blkio throttling is not mounted"
    return None


@contextlib.contextmanager
def blkio_throttle(
    dev: str,
    read_bps: int | None = None,
    write_bps: int | None = None,
    write_iops: int | None = None,
    read_iops: int | None = None,
) -> Iterator[str]:
    """A cgroup v1 blkio group that throttles `dev`; yields the cgroup.procs path to join.

    Children started after `echo PID > cgroup.procs` inherit the group, so tests put a shell
    wrapper (or the test process itself for in-process runs) into it."""
    st = os.stat(dev)
    majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    group = os.path.join(BLKIO, f"disksleuth-test-{uuid.uuid4().hex[:8]}")
    os.mkdir(group)
    try:
        for name, value in (
            ("read_bps_device", read_bps),
            ("write_bps_device", write_bps),
            ("write_iops_device", write_iops),
            ("read_iops_device", read_iops),
        ):
            if value:
                with open(os.path.join(group, f"blkio.throttle.{name}"), "w") as fh:
                    fh.write(f"{majmin} {value}")
        yield os.path.join(group, "cgroup.procs")
    finally:
        remove_cgroup(group, BLKIO)


def remove_cgroup(group: str, controller_root: str) -> None:
    """Move anything still inside a cgroup v1 group back to its controller's root group, then remove it."""
    with contextlib.suppress(OSError):
        with open(os.path.join(group, "cgroup.procs")) as fh:
            pids = fh.read().split()
        for pid in pids:
            with contextlib.suppress(OSError), open(os.path.join(controller_root, "cgroup.procs"), "w") as out:
                out.write(pid)
    os.rmdir(group)


def drain_terminal(master: int, proc: subprocess.Popen[bytes], timeout_s: float) -> bytes:
    """Everything a child wrote to its pseudo-terminal until it closed it or `timeout_s` passed; then the
    master is closed and the child reaped (killed if still running)."""
    import select
    import time

    chunks = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return b"".join(chunks)


def in_cgroup(procs: str, argv: list[str]) -> list[str]:
    """argv wrapped so that it runs inside the blkio group (the shell joins, then execs)."""
    return ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *argv]


def pytest_configure(config: pytest.Config) -> None:
    # A shell without job control starts a background job (`./quickstart test &`, nohup) with SIGINT ignored, and
    # an ignored signal stays ignored across exec: every disksleuth the tests start would ignore the Ctrl-C that
    # the signal tests send, and those tests failed (SIGINT [2] cases) for the way the suite was started. A
    # handled signal is reset to the default at exec, so the children get Ctrl-C back.
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def result_with_series(values: list[float], start_s: float = 1.0) -> TestResult:
    """A SEQ1M read result whose per-second series carries `values` (MB/s), one per second from start_s."""

    series = tuple(SeriesPoint(start_s + i, v, 0.0, v) for i, v in enumerate(values))
    return TestResult(
        "SEQ1M_Q8T1_read",
        "read",
        1 << 20,
        8,
        1,
        values[-1],
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        float(len(values)),
        "fio",
        False,
        "libaio",
        "fio-3.33",
        series=series,
    )


# --- PostgreSQL: a real temporary server -------------------------------------------------------
# `postgres_url` (session) is a postgresql:// URL to a fresh database on a throwaway cluster that
# initdb + pg_ctl start on a free localhost port (data under /tmp, removed after the session);
# `fresh_postgres_url` gives each test its own new database on the same server. PostgreSQL refuses
# to run as root, so as root the server runs as the `postgres` user (Debian's postgresql package).


def _postgres_bindir() -> str | None:
    import glob
    import re

    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if found:
        newest = max(found, key=lambda p: int(re.search(r"/(\d+)/bin/", p).group(1)))
        return os.path.dirname(newest)
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    host: str
    port: int
    user: str

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = f"disksleuth_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host=self.host, port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bindir = _postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries are not installed (./quickstart test installs Debian's postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[dev]')")
    as_user: list[str] = []
    owner = None
    if os.geteuid() == 0:
        import pwd

        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run the server as")
        as_user = ["runuser", "-u", "postgres", "--"]
    root = tempfile.mkdtemp(prefix="disksleuth-pg-", dir="/tmp")
    data = os.path.join(root, "data")
    pg_ctl = [*as_user, os.path.join(bindir, "pg_ctl"), "-D", data]
    started = False
    try:
        if owner is not None:  # inside the try: a failure here still removes the directory
            os.chown(root, owner.pw_uid, owner.pw_gid)
        subprocess.run(
            [*as_user, os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
             "--no-sync"],
            check=True, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        for _attempt in range(3):  # another test run may take the port between our probe and the server's bind
            port = _free_port()
            options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
            res = subprocess.run(
                [*pg_ctl, "-o", options, "-l", os.path.join(root, "server.log"), "-w", "-t", "60", "start"],
                capture_output=True, text=True, timeout=90,
            )  # fmt: skip
            if res.returncode == 0:
                started = True
                break
        if not started:
            with open(os.path.join(root, "server.log"), errors="replace") as fh:
                raise RuntimeError(f"PostgreSQL did not start: {res.stderr.strip()} {fh.read()[-2000:]}")
        yield PostgresServer("127.0.0.1", port, "postgres")
    finally:
        if started:
            subprocess.run([*pg_ctl, "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """A postgresql:// URL to a fresh database, shared by the session."""
    return postgres_server.create_database()


@pytest.fixture
def fresh_postgres_url(postgres_server: PostgresServer) -> str:
    """A postgresql:// URL to a database of this test's own, new and empty."""
    return postgres_server.create_database()


def findings_exit(output: str) -> int:
    """The exit code the contract gives `check`/`bench` output (0 ok, 1 a finding at warn or critical):
    from a --json document's findings, or from the text's severity lines ("! warn · code")."""
    try:
        doc = json.loads(output)
    except ValueError:
        return 1 if any(f" {s} · " in output for s in ("warn", "critical")) else 0
    return 1 if any(f.get("severity") in ("warn", "critical") for f in doc.get("findings") or []) else 0


def warning_codes(output: str) -> set[str]:
    """The codes of the findings at warn or critical in `check`/`bench` output (--json or text)."""
    try:
        doc = json.loads(output)
    except ValueError:
        return {m.group(2) for m in re.finditer(r"(warn|critical) · ([a-z0-9_]+)", output)}
    return {f["code"] for f in doc.get("findings") or [] if f.get("severity") in ("warn", "critical")}


def ok_but_for_each_others_io(code: int, output: str) -> bool:
    """Runs started together on one disk see each other's I/O (foreign_io, exit 1): that finding alone is
    what they should say, and nothing else may make them exit non-zero."""
    return code == 0 or (code == 1 and warning_codes(output) == {"foreign_io"})


SAMPLE_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "sample_run.json")


def sample_export(tmp_path, mutate=None) -> str:  # noqa: ANN001
    """An export file (`disksleuth import` reads it) holding benchmarks/sample_run.json, after `mutate`."""
    with open(SAMPLE_RUN) as fh:
        doc = json.load(fh)
    doc["run"].pop("id", None)
    if mutate:
        mutate(doc)
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": [doc]}))
    return str(path)


@contextlib.contextmanager
def frozen(mountpoint: str) -> Iterator[None]:
    """The file system at mountpoint frozen (fsfreeze): its own pending writes committed first, then none until
    thawed. A mounted btrfs writes its members now and then by itself (a commit, CI saw one between two
    checksums of a member); a raw write to a member still lands, so a checksum taken inside proves only
    that the code under test wrote nothing."""
    subprocess.run(["fsfreeze", "--freeze", mountpoint], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["fsfreeze", "--unfreeze", mountpoint], check=False, capture_output=True)


def sha256_of(path: str) -> str:
    """A file's or a block device's checksum, to prove a run left it byte-identical."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def metric_value(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample `name{labels...}` in a Prometheus text exposition (labels matched as a subset)."""
    import re

    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return None


# --- pytest-xdist: the tests that take seconds start first ----------------------------------------------
# worksteal gives each worker a slice of the collection in order, and the others steal from the end of the
# longest queue: a ~10 s test collected late ran last on its worker and made the fast lane's tail (65 -> 74 s
# in one run). Marked `long`, it is moved to the front: the lane then ends on short tests.


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: the rest keep their order


# --- pytest-xdist (-n 4): a test that asserts a rate or a time runs alone --------------------------
# Marked `alone`, a test waits until the other workers' current tests end, and the other workers start
# nothing new until it is done: a loaded CPU makes a RAM loop device miss its throttle or an emulated
# cache's watcher switch late, which is noise, not a defect. Every other test may share the machine.
# Two flock(2) files: `.gate` gives the exclusive taker its turn, `.lock` is shared by ordinary tests.


def _xdist_lock_base(controller_pid: int) -> str:
    return os.path.join(tempfile.gettempdir(), f"disksleuth-xdist-{controller_pid}")


@pytest.fixture(autouse=True)
def _alone_if_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # not under xdist: nothing runs beside this test anyway
        yield
        return
    import fcntl

    alone = request.node.get_closest_marker("alone") is not None
    base = _xdist_lock_base(os.getppid())  # a worker's parent is the xdist controller: one pair per run
    with open(base + ".gate", "a") as gate, open(base + ".lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)  # held while an `alone` test waits: no new shared taker slips in
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller ends after its workers: remove the pair
        for suffix in (".gate", ".lock"):
            with contextlib.suppress(OSError):
                os.unlink(_xdist_lock_base(os.getpid()) + suffix)
