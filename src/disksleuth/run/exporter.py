"""What the Prometheus exporter serves: every disk joined to its link chain, ceilings and findings,
plus the latest stored benchmark per device and test.

A scrape reads sysfs and caches only. It never runs fio, and health comes from a cache that a
background thread refreshes with `smartctl -n standby`, so a scrape never waits for smartctl and
never wakes a sleeping disk.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.health import health_findings
from disksleuth.analysis.links import static_findings
from disksleuth.analysis.verdicts import with_drive_sata_max
from disksleuth.errors import DisksleuthError, StoreMissing
from disksleuth.model import Device
from disksleuth.model.exporter import DiskState, Snapshot
from disksleuth.probe.block import list_devices
from disksleuth.store.urls import default_url, redact_url

if TYPE_CHECKING:
    from disksleuth.run.exporter_http import Request, Response

# Virtual block devices have no SMART data; asking smartctl about them only costs time.
NO_HEALTH_TRANSPORTS = frozenset({"loop", "zram", "md", "dm", "virtio", "unknown"})
DEFAULT_HEALTH_MAX_AGE_S = 3600.0


class HealthCache:
    """Health per device path, read at most once per `max_age_s`.

    `reader(path)` returns a Health or raises DisksleuthError (no SMART, asleep, no smartctl): then
    the previous reading is kept. `refresh()` reads what is stale; the HTTP mode runs it in a
    background thread so scrapes only ever read the cache."""

    def __init__(
        self,
        max_age_s: float,
        reader: Callable[[str], object] | None = None,
        *,
        history_db: str | None = None,
        with_history: bool = False,
    ):
        self.max_age_s = max_age_s
        self._reader = reader or _read_health_no_wake
        self._entries: dict[str, tuple[object, float]] = {}
        self._tried: dict[str, float] = {}
        self._lock = threading.Lock()
        # With the history, each reading is kept in the store (run.health_history: on change or every 6 h) and
        # its findings are judged against the drive's past and acknowledgements, here in the background, so a
        # scrape never waits for the store. Acknowledgements are re-read on every refresh (once a minute).
        self.history_db = history_db
        self.with_history = with_history
        self._findings: dict[str, tuple[Any, ...]] = {}
        self._wear: dict[str, Any] = {}  # the wear forecast over each drive's stored readings (issue 38)
        self.history_error: str | None = None

    def findings(self, path: str) -> tuple[Any, ...] | None:
        """The health findings of the cached reading, judged against the history; None: judge it afresh."""
        with self._lock:
            return self._findings.get(path)

    def wear(self, path: str) -> Any:
        """The wear forecast over the drive's history (None: no history kept; the lifetime average is used)."""
        with self._lock:
            return self._wear.get(path)

    def get(self, path: str) -> tuple[object | None, float | None]:
        with self._lock:
            entry = self._entries.get(path)
        return entry if entry else (None, None)

    def refresh(self, paths: list[str], now: Callable[[], float] = time.time) -> None:
        for path in paths:
            with self._lock:
                tried = self._tried.get(path)
            if tried is not None and now() - tried < self.max_age_s:
                self._judge(path, None, keep=False)  # an acknowledgement may have changed since
                continue
            with self._lock:
                self._tried[path] = now()
            try:
                health = self._reader(path)
            except DisksleuthError:
                continue
            with self._lock:
                self._entries[path] = (health, now())
            self._judge(path, now(), keep=True)

    def _judge(self, path: str, read_at_s: float | None, keep: bool) -> None:
        if not self.with_history:
            return
        health, cached_at = self.get(path)
        if health is None:
            return
        from disksleuth.run.health_history import device_name_of, observe

        observed = observe(
            health,  # type: ignore[arg-type]
            health_findings(health),  # type: ignore[arg-type]
            self.history_db,
            device_name=device_name_of(path),
            source="exporter",
            read_at_s=read_at_s or cached_at,
            keep=keep,
            timeout_s=STORE_DRIVER_TIMEOUT_S,
        )
        with self._lock:
            self.history_error = observed.error
            self._findings[path] = tuple(observed.findings)
            self._wear[path] = observed.wear


def _read_health_no_wake(path: str) -> object:
    from disksleuth.probe.smart import read_health

    return read_health(path, timeout_s=30, no_wake=True)


def health_paths(devices: list[Device]) -> list[str]:
    return [d.path for d in devices if d.transport not in NO_HEALTH_TRANSPORTS]


def disk_states(devices: list[Device], cache: HealthCache | None) -> tuple[DiskState, ...]:
    out = []
    for device in devices:
        if device.is_unattached:
            continue  # hidden as `list` hides them
        health, read_at = cache.get(device.path) if cache else (None, None)
        dev = with_drive_sata_max(device, health) if health is not None else device  # type: ignore[arg-type]
        chain = link_chain(dev.hops)
        findings = list(static_findings(dev))
        if health is not None:
            judged = cache.findings(device.path) if cache else None
            findings.extend(judged if judged is not None else health_findings(health))  # type: ignore[arg-type]
        wear = cache.wear(device.path) if cache and health is not None else None
        if health is not None and wear is None:
            from disksleuth.analysis.wear import forecast_wear

            wear = forecast_wear(health, [])  # type: ignore[arg-type]
        out.append(DiskState(dev, chain, tuple(findings), health, read_at, wear))
    return tuple(out)


# The store read inside a scrape is bounded well inside Prometheus' default 10 s scrape timeout, so a store
# that hangs costs the benchmark figures only, never the link and health metrics. libpq counts its connect
# timeout in whole seconds, 2 at least; the statement timeout bounds a query on a server that answers but
# is stuck (a lock); the thread's deadline bounds everything else (a server that accepts and never answers).
STORE_READ_TIMEOUT_S = 3.0
STORE_DRIVER_TIMEOUT_S = 2


@dataclass(frozen=True)
class BenchReading:
    bench: tuple[dict[str, Any], ...]
    error: str | None
    read_at: float | None  # wall clock of the last successful read, this one or an earlier one
    missing: bool = False
    serial_key: bytes | None = None  # the store's key for serial ids (serials.py), read with the figures


class BenchReader:
    """The latest stored figures of `hostname`, each read bounded by `timeout_s`. The read runs in a thread:
    when it overruns, the caller goes on without the figures, and no new read starts while that one still
    hangs, so a stuck store holds one thread at most. Never creates a store."""

    def __init__(self, db_url: str | None, hostname: str | None = None, timeout_s: float = STORE_READ_TIMEOUT_S):
        self.db_url = db_url
        self.hostname = hostname or socket.gethostname()
        self.timeout_s = timeout_s
        self.last_ok_at: float | None = None
        self._lock = threading.Lock()
        self._running: threading.Thread | None = None
        self.serial_key: bytes | None = None  # read once, in the same bounded read: a store's key never changes

    def read(self) -> BenchReading:
        url = redact_url(self.db_url if self.db_url is not None else default_url())
        outcome: dict[str, object] = {}

        def run() -> None:
            from disksleuth.store.latest import latest_tests, store_serial_key

            try:
                bench = latest_tests(self.db_url, self.hostname, timeout_s=STORE_DRIVER_TIMEOUT_S)
                outcome["bench"] = tuple(_with_baseline_ratios(self.db_url, bench))
                if self.serial_key is None:
                    self.serial_key = store_serial_key(self.db_url, timeout_s=STORE_DRIVER_TIMEOUT_S)
            except StoreMissing as exc:
                outcome["missing"] = str(exc)
            except DisksleuthError as exc:
                outcome["error"] = str(exc)
            except Exception as exc:  # the thread's only report is `outcome`; nothing may escape unseen
                outcome["error"] = f"cannot read the results store {url}: {type(exc).__name__}"

        with self._lock:
            if self._running is not None and self._running.is_alive():
                why = f"the results store {url} has not answered an earlier read yet"
                return BenchReading((), why, self.last_ok_at)
            thread = threading.Thread(target=run, name="disksleuth-store-read", daemon=True)
            self._running = thread
            thread.start()
        thread.join(self.timeout_s)
        if thread.is_alive():
            why = f"the results store {url} did not answer within {self.timeout_s:g} s"
            return BenchReading((), why, self.last_ok_at)
        if "bench" in outcome:
            self.last_ok_at = time.time()
            return BenchReading(outcome["bench"], None, self.last_ok_at, serial_key=self.serial_key)  # type: ignore[arg-type]
        if "missing" in outcome:
            return BenchReading((), str(outcome["missing"]), self.last_ok_at, missing=True)
        return BenchReading((), str(outcome["error"]), self.last_ok_at)


def _with_baseline_ratios(db_url: str | None, bench: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each newest figure with its ratio to the drive's usual (median of its 5 earlier runs), as
    `baseline_read_ratio` / `baseline_write_ratio`. A baseline that cannot be made costs only the ratios."""
    from disksleuth.run.baseline import latest_ratios

    try:
        ratios = latest_ratios(db_url, [t["run_id"] for t in bench], timeout_s=STORE_DRIVER_TIMEOUT_S)
    except DisksleuthError:
        return bench
    out = []
    for t in bench:
        keys = {d: (t["run_id"], t["test_id"], d) for d in ("read", "write")}
        out.append({**t, **{f"baseline_{d}_ratio": ratios[k] for d, k in keys.items() if k in ratios}})
    return out


def snapshot(
    sysfs_root: str = "/",
    cache: HealthCache | None = None,
    db_url: str | None = None,
    hostname: str | None = None,
    with_bench: bool = True,
    bench_reader: BenchReader | None = None,
) -> Snapshot:
    """One look at the machine. `bench_reader` keeps the store's state between snapshots (the HTTP mode);
    without one, a one-off reader of `db_url` is used."""
    host = hostname or socket.gethostname()
    disks = disk_states(list_devices(sysfs_root), cache)
    reading = (bench_reader or BenchReader(db_url, host)).read() if with_bench else BenchReading((), None, None)
    # Figures only for the disks of this snapshot: a captured tree (--sysfs-root) is another machine, and a
    # loop or zram device that has since gone must not keep reporting its old figures.
    present = {d.device.name for d in disks}
    bench = tuple(t for t in reading.bench if t["device"] in present)
    return Snapshot(
        disks,
        bench,
        reading.error,
        host,
        serial_key=reading.serial_key,
        bench_read_at=reading.read_at,
        store_missing=reading.missing,
    )


class Snapshots:
    """What each scrape (or the one --textfile write) takes, for the life of the exporter.

    One BenchReader keeps the store's state between snapshots: it remembers the last good read and never starts
    a second read while a store that hangs still holds the first. `say` gets one line when the store stops
    answering and one when it answers again, not one per scrape; a store that does not exist yet (nothing
    saved) is normal and not worth a word (disksleuth_store_up says it). Serial ids are keyed with the fleet's
    key when one is set, else with the store's (read with the figures, inside the scrape's bound), else there
    are none: never a plain digest."""

    def __init__(
        self,
        sysfs_root: str,
        cache: HealthCache | None,
        db_url: str | None,
        *,
        with_bench: bool,
        fleet_key: bytes | None,
        say: Callable[[str], None],
    ):
        self.sysfs_root = sysfs_root
        self.cache = cache
        self.db_url = db_url
        self.with_bench = with_bench
        self.fleet_key = fleet_key
        self._say = say
        self._reader = BenchReader(db_url)
        self._store_down = False

    def __call__(self) -> Snapshot:
        snap = snapshot(self.sysfs_root, self.cache, self.db_url, with_bench=self.with_bench, bench_reader=self._reader)
        down = bool(snap.bench_error) and not snap.store_missing
        if down and not self._store_down:
            self._say(f"warning: benchmark figures left out: {snap.bench_error}")
        elif self._store_down and not down:
            self._say("the results store answers again")
        self._store_down = down
        return replace(snap, serial_key=self.fleet_key or snap.serial_key)


class SharedSnapshot:
    """One snapshot for every scrape that arrives while it is being taken, or within `max_age_s` after it
    was finished: a hundred scrapes at once cost one look at sysfs and the store, not a hundred."""

    def __init__(self, take: Callable[[], Snapshot], max_age_s: float = 1.0):
        self._take = take
        self.max_age_s = max_age_s
        self.taken = 0  # snapshots taken so far (disksleuth_exporter_snapshots_total)
        self._cond = threading.Condition()
        self._snap: Snapshot | None = None
        self._finished_at = 0.0  # time.monotonic()
        self._taking = False
        self._generation = 0  # +1 per snapshot taken or failed
        self._error: Exception | None = None

    def get(self) -> tuple[Snapshot, int]:
        """(the snapshot, its generation); the generation names it for caches of what is built from it."""
        with self._cond:
            if self._taking:  # one is under way: wait for it, however long it takes
                generation = self._generation
                while self._generation == generation:
                    self._cond.wait()
                if self._error is not None:
                    raise self._error
                if self._snap is None:  # the taker was interrupted (not an Exception): nothing to share
                    raise RuntimeError("the snapshot was interrupted")
                return self._snap, self._generation
            if self._snap is not None and time.monotonic() - self._finished_at < self.max_age_s:
                return self._snap, self._generation
            self._taking = True
        snap: Snapshot | None = None
        error: Exception | None = None
        try:
            snap = self._take()
        except Exception as exc:
            error = exc
        finally:
            with self._cond:
                self._taking = False
                self.taken += 1
                self._generation += 1
                generation = self._generation
                self._error = error
                if snap is not None:
                    self._snap, self._finished_at = snap, time.monotonic()
                self._cond.notify_all()
        if error is not None:
            raise error
        assert snap is not None
        return snap, generation


DEFAULT_LISTEN = "127.0.0.1:9958"
TEXTFILE_NAME = "disksleuth.prom"


def parse_listen(text: str) -> tuple[str, int]:
    """'ADDR:PORT', ':PORT' or '[v6]:PORT' -> (address, port); port 0 takes any free port."""
    from disksleuth.errors import UsageError

    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) < 65536:
        raise UsageError(f"--listen {text!r}: expected ADDR:PORT, e.g. 127.0.0.1:9958 or :9958")
    if host.startswith("[") or host.endswith("]"):  # an IPv6 address, bracketed whole: [::1]:9958
        if not (host.startswith("[") and host.endswith("]") and len(host) > 2):
            raise UsageError(f"--listen {text!r}: an IPv6 address goes in brackets, e.g. [::1]:9958")
        host = host[1:-1]
    # Every address only when asked for with ':PORT'; a typo must not expose the exporter.
    return host or "0.0.0.0", int(port_text)


def _textfile_failure(directory: str, path: str, exc: OSError) -> DisksleuthError:
    from disksleuth.errors import EnvironmentProblem, UsageError

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return EnvironmentProblem(
            f"--textfile {directory}: the file system is full ({exc.strerror}); {path} not updated"
        )
    return UsageError(f"--textfile {directory}: cannot write there ({exc.strerror})")


def write_textfile(directory: str, snap: Snapshot) -> str:
    """DIR/disksleuth.prom for node_exporter's textfile collector, written then renamed into place so
    node_exporter never reads half a file."""
    import os
    import tempfile

    from disksleuth.errors import UsageError
    from disksleuth.present.prometheus import exposition

    if not os.path.isdir(directory):
        raise UsageError(f"--textfile {directory}: no such directory")
    path = os.path.join(directory, TEXTFILE_NAME)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".disksleuth-", suffix=".prom.tmp", dir=directory)
    except OSError as exc:
        raise _textfile_failure(directory, path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(exposition(snap))
            # node_exporter usually runs as another user. On the descriptor, never by name: in a directory
            # others can write to, the name may already be a symlink to someone's secret.
            os.fchmod(fh.fileno(), 0o644)
        if os.path.isdir(path) and not os.path.islink(path):
            raise UsageError(f"--textfile {directory}: {path} is a directory")
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk is the usual one (ENOSPC on write or on close)
            raise _textfile_failure(directory, path, exc) from None
        raise
    return path


class MetricsEndpoint:
    """The exporter's HTTP answers, from the shared snapshot. GET and HEAD on any path but /favicon.ico
    (as prometheus_client serves), `name[]=` selecting families, OpenMetrics or text by the Accept header,
    gzip when accepted. A body is built once per snapshot, format and selection and shared by every scrape
    that asks for the same (so the exporter's own counters in it are as of that snapshot)."""

    ALLOW = "GET, HEAD, OPTIONS"
    MAX_CACHED_BODIES = 8  # per snapshot; more distinct requests are built each time

    def __init__(self, snapshots: SharedSnapshot):
        self.snapshots = snapshots
        self.dropped: dict[str, int] = {}  # the server's ServerStats.dropped, once it exists
        self._lock = threading.Lock()
        self._generation = -1
        self._bodies: dict[tuple[str, tuple[str, ...], bool], tuple[bytes, str] | None] = {}

    def __call__(self, request: Request) -> Response:
        from prometheus_client.exposition import gzip_accepted

        from disksleuth.run.exporter_http import Response, error_response

        allow = (("Allow", self.ALLOW),)
        if request.method == "OPTIONS":
            return Response(200, headers=allow)
        if request.method not in ("GET", "HEAD"):
            refused = error_response(405, f"{request.method[:20]} is not served here; use GET")
            return Response(405, refused.body, refused.headers + allow)
        if request.path == "/favicon.ico":
            return error_response(404)
        names = tuple(sorted(set(request.query.get("name[]", []))))
        accept = request.headers.get("accept", "")
        gzipped = gzip_accepted(request.headers.get("accept-encoding", ""))
        built = self._body(accept, names, gzipped)
        if built is None:
            shown = ", ".join(names)[:200]
            return error_response(404, f"no metric here is named {shown}")
        body, content_type = built
        headers = [("Content-Type", content_type)] + ([("Content-Encoding", "gzip")] if gzipped else [])
        return Response(200, body, tuple(headers), head_only=request.method == "HEAD")

    def _body(self, accept: str, names: tuple[str, ...], gzipped: bool) -> tuple[bytes, str] | None:
        import gzip

        from disksleuth.present.prometheus import encode, exporter_families, families, select_families

        snap, generation = self.snapshots.get()
        key = (accept, names, gzipped)
        # One builder at a time: scrapes that arrive together wait for the first one's body instead of each
        # building the same (building is CPU work; in parallel it would only be slower).
        with self._lock:
            if generation != self._generation:
                self._generation, self._bodies = generation, {}
            if key in self._bodies:
                return self._bodies[key]
            metrics = families(snap) + exporter_families(self.snapshots.taken, self.dropped)
            if names:
                metrics = select_families(metrics, list(names))
            built: tuple[bytes, str] | None = None
            if metrics:
                body, content_type = encode(metrics, accept)
                built = (gzip.compress(body, compresslevel=6, mtime=0) if gzipped else body), content_type
            if len(self._bodies) < self.MAX_CACHED_BODIES:
                self._bodies[key] = built
            return built


def serve(
    listen: str,
    take: Callable[[], Snapshot],
    ready: Callable[[str, int], None] | None = None,
    stop: threading.Event | None = None,
    log: Callable[[str], None] | None = None,
    max_connections: int | None = None,
) -> None:
    """Serve /metrics until `stop` is set (or forever). Scrapes share snapshots (SharedSnapshot) taken
    with `take`; the server's bounds are in exporter_http. `log` gets one line per event worth knowing."""
    from disksleuth.errors import EnvironmentProblem
    from disksleuth.run.exporter_http import BoundedHTTPServer

    host, port = parse_listen(listen)
    endpoint = MetricsEndpoint(SharedSnapshot(take))
    try:
        server = BoundedHTTPServer(host, port, endpoint, max_connections=max_connections, log=log)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    endpoint.dropped = server.stats.dropped
    thread = threading.Thread(target=server.serve_forever, name="disksleuth-http", daemon=True)
    thread.start()
    try:
        if ready:
            ready(host, server.server_address[1])
        (stop or threading.Event()).wait()
    finally:
        server.shutdown()
        thread.join(timeout=5)
        server.server_close()


class HealthRefresher:
    """Refreshes the health cache in the background, so scrapes never wait for smartctl."""

    def __init__(self, cache: HealthCache, paths: Callable[[], list[str]], every_s: float = 60.0):
        self.cache = cache
        self.paths = paths
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="disksleuth-health", daemon=True)

    def start(self) -> HealthRefresher:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(DisksleuthError, OSError):
                self.cache.refresh(self.paths())
            self._stop.wait(min(self.every_s, self.cache.max_age_s))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def device_health_paths(root: str) -> list[str]:
    """The drives whose health the cache keeps, on this machine now."""
    return health_paths(list_devices(root))
