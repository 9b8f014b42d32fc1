"""The exporter's HTTP server, bounded: one thread owns every socket, so an idle or slow connection costs
a descriptor and a few kilobytes, never a thread; a few worker threads build the responses.

Bounds, each with its own deadline or count (the numbers are below):
- a request head must arrive whole within REQUEST_TIMEOUT_S of the connection, however slowly it trickles;
- a response must be taken by the client within SEND_TIMEOUT_S;
- at most `max_connections` connections are open. At the cap a new connection closes the oldest one that
  has had EVICT_AFTER_S to send its request and has not (a flood of half-sent requests cannot lock a real
  scraper out, and a burst of real scrapes does not close its own members); when there is none, no more
  are accepted until there is (they wait in the kernel's backlog: answers come from a shared snapshot);
- out of descriptors (EMFILE), accepting pauses with a growing back-off instead of spinning, and the
  older half of the unfinished connections is closed to make room.

A client gets `Connection: close` and one request per connection: scrapes are seconds apart, so keeping
connections alive would only keep descriptors busy.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import http
import queue
import re
import resource
import selectors
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

REQUEST_TIMEOUT_S = 5.0
# A connection this old without a whole request may be closed for a newcomer when the server is full: a real
# scraper sends its request at once, so only a slow or idle one is that old without it.
EVICT_AFTER_S = 1.0
SEND_TIMEOUT_S = 10.0
# After the response, the write side is shut and unread input drained for this long before the close, so
# the client reads the response instead of a reset (closing with unread input sends RST).
LINGER_S = 1.0
MAX_DRAIN_BYTES = 64 * 1024
MAX_REQUEST_LINE_BYTES = 8 * 1024  # longer: 414
MAX_HEAD_BYTES = 16 * 1024  # request line and headers; longer: 431 (Prometheus sends about 300 bytes)
MAX_HEADERS = 100  # more: 431, as http.server counts them
DEFAULT_MAX_CONNECTIONS = 64
WORKERS = 4
ACCEPT_BACKOFF_S = (0.05, 1.0)  # first pause, longest pause
LOG_EVERY_S = 60.0  # a repeated trouble (out of descriptors) is logged at most this often
_RECV_BYTES = 4096
_HEAD_END = re.compile(rb"\r?\n\r?\n")


def max_connections_for_limit(default: int = DEFAULT_MAX_CONNECTIONS) -> int:
    """The connection cap under this process's descriptor limit: at most half of it, keeping 32 for the
    store, sysfs, smartctl's pipes and Python itself (`ulimit -n 128` gives 48)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return default
    return max(4, min(default, (soft - 32) // 2))


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    head_only: bool = False  # HEAD: the headers (Content-Length included) without the body

    def encode(self) -> bytes:
        phrase = http.HTTPStatus(self.status).phrase
        lines = [f"HTTP/1.1 {self.status} {phrase}", *(f"{k}: {v}" for k, v in self.headers)]
        lines += [f"Content-Length: {len(self.body)}", "Connection: close"]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head if self.head_only else head + self.body


def error_response(status: int, why: str = "") -> Response:
    text = f"{status} {http.HTTPStatus(status).phrase}{': ' + why if why else ''}\n"
    return Response(status, text.encode("utf-8", "replace"), (("Content-Type", "text/plain; charset=utf-8"),))


def parse_request(head: bytes) -> Request | Response:
    """A request head (request line and header lines, without the blank line) -> Request, or the error
    Response to answer it with."""
    lines = head.decode("latin-1").split("\n")
    while lines and lines[0].strip() == "":  # a stray CRLF before the request line is allowed (RFC 9112 2.2)
        lines.pop(0)
    if not lines:
        return error_response(400, "empty request")
    parts = lines[0].rstrip("\r").split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
        return error_response(400, "expected METHOD TARGET HTTP/1.x")
    method, target, _version = parts
    headers: dict[str, str] = {}
    header_lines = [line.rstrip("\r") for line in lines[1:]]
    if len(header_lines) > MAX_HEADERS:
        return error_response(431, f"more than {MAX_HEADERS} header lines")
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or line[0] in " \t":
            return error_response(400, "malformed header line")
        key = name.lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    split = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(split.query, keep_blank_values=False)
    return Request(method.upper(), target, split.path or "/", query, headers)


@dataclass
class ServerStats:
    """What the server dropped, by reason, for the exporter's own metrics. Written by the loop thread only."""

    dropped: dict[str, int] = field(default_factory=lambda: {"timeout": 0, "capacity": 0})


READING, WORKING, WRITING, DRAINING = "reading", "working", "writing", "draining"


class _Conn:
    __slots__ = ("sock", "state", "deadline", "buf", "out", "sent", "drained", "accepted_at")

    def __init__(self, sock: socket.socket, now: float):
        self.sock = sock
        self.state = READING
        self.accepted_at = now
        self.deadline = now + REQUEST_TIMEOUT_S
        self.buf = bytearray()
        self.out = memoryview(b"")
        self.sent = 0
        self.drained = 0


class BoundedHTTPServer:
    """`handler(Request) -> Response` served on (host, port) within the bounds above. `serve_forever()` runs
    the socket loop in the calling thread until `shutdown()` (from any thread)."""

    def __init__(
        self,
        host: str,
        port: int,
        handler: Callable[[Request], Response],
        max_connections: int | None = None,
        workers: int = WORKERS,
        log: Callable[[str], None] | None = None,
    ):
        family, address = _best_family(host, port)
        self._listener = socket.create_server(address, family=family, backlog=128)
        self._listener.setblocking(False)
        self.server_address = self._listener.getsockname()
        self.handler = handler
        self.max_connections = max_connections or max_connections_for_limit()
        self.stats = ServerStats()
        self._log = log or (lambda _message: None)
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._listener, selectors.EVENT_READ, "listener")
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._conns: dict[int, _Conn] = {}  # by descriptor, in order of arrival
        self._jobs: queue.SimpleQueue[tuple[_Conn, bytes] | None] = queue.SimpleQueue()
        self._ready: collections.deque[tuple[_Conn, Response]] = collections.deque()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._accept_paused_until: float | None = None  # out of descriptors: a pause, then accept again
        self._listening = True
        self._backoff_s = ACCEPT_BACKOFF_S[0]
        self._accept_error_logged_at = -LOG_EVERY_S
        self._workers = [
            threading.Thread(target=self._work, name=f"disksleuth-http-{i}", daemon=True) for i in range(workers)
        ]
        for worker in self._workers:
            worker.start()

    # --- the socket loop (one thread) -----------------------------------------------------------

    def serve_forever(self) -> None:
        try:
            while not self._stopping.is_set():
                for key, events in self._sel.select(self._next_timeout()):
                    if isinstance(key.data, _Conn):
                        if events & selectors.EVENT_READ:
                            self._on_readable(key.data)
                        elif events & selectors.EVENT_WRITE:
                            self._on_writable(key.data)
                    elif key.data == "listener":
                        self._accept()
                    else:  # "wake": a worker has a response ready, or shutdown() was called
                        with contextlib.suppress(OSError):
                            while self._wake_r.recv(4096):
                                pass
                self._take_ready()
                now = time.monotonic()
                self._expire(now)
                if self._accept_paused_until is not None and now >= self._accept_paused_until:
                    self._accept_paused_until = None
                self._listen(self._accept_paused_until is None and not self._full())
        finally:
            self._close_everything()
            self._stopped.set()

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Stop the loop (safe from any thread) and close every socket."""
        self._stopping.set()
        self._wake()
        self._stopped.wait(timeout_s)

    def server_close(self) -> None:
        if not self._stopped.is_set():  # never ran: nothing else will close them
            self._close_everything()

    def _next_timeout(self) -> float:
        now = time.monotonic()
        soonest = now + 1.0
        if self._accept_paused_until is not None:
            soonest = min(soonest, self._accept_paused_until)
        for conn in self._conns.values():
            if conn.state != WORKING:
                soonest = min(soonest, conn.deadline)
            if not self._listening and conn.state == READING:  # full: when it may make room
                soonest = min(soonest, conn.accepted_at + EVICT_AFTER_S)
        return max(0.0, soonest - now)

    def _evictable(self, conn: _Conn, now: float) -> bool:
        return conn.state == DRAINING or (conn.state == READING and now - conn.accepted_at >= EVICT_AFTER_S)

    def _full(self) -> bool:
        """At the cap with nothing to close for a newcomer."""
        if len(self._conns) < self.max_connections:
            return False
        now = time.monotonic()
        return not any(self._evictable(c, now) for c in self._conns.values())

    def _listen(self, on: bool) -> None:
        if on != self._listening:
            if on:
                self._sel.register(self._listener, selectors.EVENT_READ, "listener")
            else:
                self._sel.unregister(self._listener)
            self._listening = on

    def _accept(self) -> None:
        for _ in range(64):  # a bounded batch, then the other sockets get their turn
            if self._full():
                self._listen(False)  # until one closes: the loop turns listening back on
                return
            try:
                sock, _addr = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.ECONNABORTED, errno.EPROTO, errno.EPERM):
                    continue  # the client left before we took it
                # Out of descriptors (EMFILE, ENFILE) or memory (ENOBUFS, ENOMEM), or anything else: the listener
                # stays readable, so retrying at once would spin on the same error.
                # Close the older half of the connections that have not sent a whole request (the backlog, a
                # real scrape in it too, gets their descriptors) and pause accepting for a while, longer each
                # time in a row.
                unfinished = [c for c in self._conns.values() if c.state in (READING, DRAINING)]
                for conn in unfinished[: max(1, len(unfinished) // 2)]:
                    if conn.state == READING:
                        self.stats.dropped["capacity"] += 1
                    self._close(conn)
                now = time.monotonic()
                if now - self._accept_error_logged_at >= LOG_EVERY_S:
                    self._accept_error_logged_at = now
                    self._log(f"cannot accept connections ({exc.strerror}); pausing, closing idle ones")
                self._listen(False)
                self._accept_paused_until = now + self._backoff_s
                self._backoff_s = min(ACCEPT_BACKOFF_S[1], self._backoff_s * 2)
                return
            self._backoff_s = ACCEPT_BACKOFF_S[0]
            sock.setblocking(False)
            if len(self._conns) >= self.max_connections:
                self._evict_one()  # there is one: _full() was False
            conn = _Conn(sock, time.monotonic())
            self._conns[sock.fileno()] = conn
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def _evict_one(self) -> bool:
        """Close the connection that matters least (one draining after its response, else the oldest one
        that has not sent its request in EVICT_AFTER_S); False when there is none."""
        now = time.monotonic()
        for wanted in (DRAINING, READING):
            for conn in self._conns.values():  # oldest first
                if conn.state == wanted and self._evictable(conn, now):
                    if wanted == READING:
                        self.stats.dropped["capacity"] += 1
                    self._close(conn)
                    return True
        return False

    def _on_readable(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(_RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        if not data:  # the client closed its side
            self._close(conn)
            return
        if conn.state == DRAINING:
            conn.drained += len(data)
            if conn.drained > MAX_DRAIN_BYTES:
                self._close(conn)
            return
        conn.buf += data
        first_line_end = conn.buf.find(b"\n")
        if first_line_end > MAX_REQUEST_LINE_BYTES or (first_line_end < 0 and len(conn.buf) > MAX_REQUEST_LINE_BYTES):
            self._respond(conn, error_response(414, f"request line over {MAX_REQUEST_LINE_BYTES} bytes"))
            return
        end = _HEAD_END.search(conn.buf)
        if (end is None and len(conn.buf) > MAX_HEAD_BYTES) or (end is not None and end.start() > MAX_HEAD_BYTES):
            self._respond(conn, error_response(431, f"request head over {MAX_HEAD_BYTES} bytes"))
            return
        if end is not None:
            head = bytes(conn.buf[: end.start()])
            conn.buf = bytearray()
            conn.state = WORKING
            self._sel.unregister(conn.sock)
            self._jobs.put((conn, head))

    def _respond(self, conn: _Conn, response: Response) -> None:
        if conn.state == WORKING:
            self._sel.register(conn.sock, selectors.EVENT_WRITE, conn)
        else:
            self._sel.modify(conn.sock, selectors.EVENT_WRITE, conn)
        conn.state = WRITING
        conn.buf = bytearray()
        conn.out = memoryview(response.encode())
        conn.sent = 0
        conn.deadline = time.monotonic() + SEND_TIMEOUT_S
        self._on_writable(conn)  # most responses fit the socket buffer at once

    def _on_writable(self, conn: _Conn) -> None:
        try:
            conn.sent += conn.sock.send(conn.out[conn.sent :])
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        if conn.sent < len(conn.out):
            return
        # All sent: shut our side, then read until the client closes or LINGER_S passes.
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        conn.state = DRAINING
        conn.out = memoryview(b"")
        conn.deadline = time.monotonic() + LINGER_S
        self._sel.modify(conn.sock, selectors.EVENT_READ, conn)

    def _take_ready(self) -> None:
        while self._ready:
            conn, response = self._ready.popleft()
            if self._conns.get(conn.sock.fileno()) is conn:
                self._respond(conn, response)

    def _expire(self, now: float) -> None:
        for conn in [c for c in self._conns.values() if c.state != WORKING and c.deadline <= now]:
            if conn.state in (READING, WRITING):
                self.stats.dropped["timeout"] += 1
            self._close(conn)

    def _close(self, conn: _Conn) -> None:
        fd = conn.sock.fileno()
        if fd >= 0 and self._conns.get(fd) is conn:
            del self._conns[fd]
            if conn.state != WORKING:
                with contextlib.suppress(KeyError, ValueError):
                    self._sel.unregister(conn.sock)
        conn.sock.close()

    def _close_everything(self) -> None:
        for conn in list(self._conns.values()):
            self._close(conn)
        for _worker in self._workers:
            self._jobs.put(None)
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(self._listener)
        self._sel.close()
        self._listener.close()
        self._wake_r.close()
        self._wake_w.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is already pending) or closed
            self._wake_w.send(b"x")

    # --- workers: build responses, never touch sockets -----------------------------------------

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None or self._stopping.is_set():
                return
            conn, head = job
            request = parse_request(head)
            if isinstance(request, Response):
                response = request
            else:
                try:
                    response = self.handler(request)
                except Exception as exc:  # one failed scrape must not stop the server; say why, in one line
                    self._log(f"scrape failed: {type(exc).__name__}: {exc}")
                    response = error_response(500, "the snapshot failed; see the exporter's log")
            self._ready.append((conn, response))
            self._wake()


def _best_family(host: str, port: int) -> tuple[socket.AddressFamily, tuple[Any, ...]]:
    """The address family and socket address to bind for `host` (IPv4, IPv6 or a name)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _type, _proto, _canon, sockaddr = infos[0]
    return family, sockaddr
