"""Notifications: changes, the heartbeat and a late pass turned into messages, handed to Apprise.

The only module that knows Apprise (https://github.com/caronc/apprise, BSD-2-Clause): one URL per target, in its
own syntax (mailto://, ntfy://, gotify://, tgram://, discord://, hassio://, json://, ...). Apprise is imported
when a target is checked or a message is sent, never by a pass with nothing to send.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from disksleuth.errors import UsageError
from disksleuth.model import SEVERITY_ORDER
from disksleuth.model.watch import Change, Message
from disksleuth.present.watch_view import change_line, changes_title, heartbeat_text, overdue_text, test_text

SEND_TIMEOUT_S = 10.0  # per target: connect and read each (Apprise's own defaults are 4 s connect, 4 s read)
SEND_DEADLINE_S = 30.0  # one message to one target, all of it (Sender says why)
MAX_TARGETS = 16
MAX_BODY_CHARS = 4000  # Telegram takes 4096, Discord 2000 per message (Apprise splits what is longer)


@dataclass(frozen=True)
class Target:
    url: str
    id: str  # keyed hash of the URL: what the store keeps (a URL may hold a password or a bot token)
    label: str  # the scheme and the id's start: what people and --json see


def target_of(url: str, key: bytes | None) -> Target:
    digest = hmac.new(key or b"disksleuth-watch", url.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    scheme = url.partition("://")[0].lower() if "://" in url else "?"
    return Target(url, digest, f"{scheme}://…#{digest[:8]}")


def check_urls(urls: Sequence[str]) -> None:
    """Refuse a URL Apprise cannot use before anything is read (one line, the URL's scheme only)."""
    if not urls:
        return
    if len(urls) > MAX_TARGETS:  # each is a request per message, each up to SEND_DEADLINE_S: a pass stays short
        raise UsageError(f"{len(urls)} notify URLs: at most {MAX_TARGETS} (one Apprise URL can name several "
                         "recipients of one service)")  # fmt: skip
    with _no_deprecation_warnings():
        _check_urls(urls)


def _check_urls(urls: Sequence[str]) -> None:
    import logging

    apprise = _apprise()
    for url in urls:
        # Never the URL itself in a message: it may hold a password or a bot token.
        scheme = url.partition("://")[0] if "://" in url else ""
        if not scheme or any(ch.isspace() for ch in url) or not scheme.replace("+", "").isalnum():
            raise UsageError(
                "--notify needs one Apprise URL, SCHEME://..., without spaces, such as ntfy://HOST/TOPIC or "
                "json://HOST/PATH (Apprise's wiki lists every service's URL)"
            )
        with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as logs:
            plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
            said = str(logs.getvalue()) if hasattr(logs, "getvalue") else ""
        if plugin is None:
            why = next((_plain(line, url) for line in said.splitlines() if _plain(line, url)), "")
            raise UsageError(
                f"Apprise cannot use this {scheme[:20]} URL"
                + (f": {why}" if why else " (unknown scheme, or a part missing)")
                + " (Apprise's wiki lists every service's URL)"
            )


@contextlib.contextmanager
def _no_deprecation_warnings() -> Iterator[None]:
    """Apprise loads its plugins on first use, and its mail plugin imports imghdr (deprecated since Python 3.11):
    not the user's concern, and no warning line on their terminal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _apprise() -> Any:
    try:
        import apprise
    except ImportError:
        from disksleuth.errors import ToolMissing

        raise ToolMissing("notifications need the apprise package: pip install apprise") from None
    return apprise


def change_messages(host: str, changes: Sequence[Change]) -> list[Message]:
    """One message for all the changes of a pass (one pass, one notification), muted ones left out."""
    told = [c for c in changes if not c.muted]
    if not told:
        return []
    worst = max((c.severity for c in told), key=lambda s: SEVERITY_ORDER.get(s, 0))
    body = "\n".join(change_line(c) for c in told)
    if len(body) > MAX_BODY_CHARS:
        body = body[: MAX_BODY_CHARS - 40].rsplit("\n", 1)[0] + "\n… (more: disksleuth watch --json)"
    return [Message("change", worst, changes_title(host, told), body)]


def heartbeat_message(host: str, drives: int, attention: list[str]) -> Message:
    title, body = heartbeat_text(host, drives, attention)
    return Message("heartbeat", "warn" if attention else "info", title, body)


def overdue_message(host: str, gap_s: float, expected_h: float) -> Message:
    title, body = overdue_text(host, gap_s, expected_h)
    return Message("overdue", "warn", title, body)


def test_message(host: str) -> Message:
    title, body = test_text(host)
    return Message("test", "info", title, body)


def send(target: Target, message: Message) -> str | None:
    """Hand one message to one target; None when it took it, else why not (one line)."""
    with Sender() as sender:
        return sender.send(target, message)


class Sender:
    """Sends messages through Apprise from a child process of its own (forked: Apprise is loaded already), one
    message at a time, each waited for SEND_DEADLINE_S at most. A receiver that trickles a byte every few seconds
    never trips a socket's read timeout (Apprise's own 60 s worker then kept the process from ever exiting), and
    one that answers with gigabytes is read whole into memory (requests keeps the body: 4.2 GB in 30 s here): the
    child is killed at the deadline, and its heap is capped (MAX_SENDER_DATA_BYTES)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.jobs = -1
        self.results = -1

    def __enter__(self) -> Sender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(kill=False)

    def close(self, kill: bool = True) -> None:
        import signal
        import time

        pid, self.pid = self.pid, None
        if pid is None:
            return
        for fd in (self.jobs, self.results):
            with contextlib.suppress(OSError):
                os.close(fd)
        deadline = time.monotonic() + (0 if kill else 2)
        while True:  # the child ends when its job pipe closes; a stuck one is killed
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            if time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
                return
            time.sleep(0.01)

    def _start(self) -> None:
        _apprise()  # loaded here, so the child has it (and a missing Apprise is said here, in one line)
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()
        from disksleuth.probe.runner import _die_with_parent

        dies_with_us = _die_with_parent()  # a pass killed mid-send leaves no child trickling a request on
        pid = os.fork()
        if pid == 0:  # the child: never returns, never runs the parent's exit handlers (its store, its streams)
            try:
                if dies_with_us is not None:
                    dies_with_us()
                os.close(jobs_w)
                os.close(results_r)
                _serve(jobs_r, results_w)
            finally:
                os._exit(0)
        os.close(jobs_r)
        os.close(results_w)
        self.pid, self.jobs, self.results = pid, jobs_w, results_r

    def send(self, target: Target, message: Message) -> str | None:
        import json

        if self.pid is None:
            self._start()
        job = {"url": target.url, "title": message.title, "body": message.body, "severity": message.severity,
               "timeout_s": SEND_TIMEOUT_S}  # fmt: skip
        try:
            os.write(self.jobs, json.dumps(job).encode("utf-8") + b"\n")  # well under a pipe's atomic size
        except OSError:
            self.close()
            return "the sending process ended"
        line = _line_within(self.results, SEND_DEADLINE_S)
        if line is None:
            self.close()
            return f"no answer within {SEND_DEADLINE_S:g} s"
        try:
            error = json.loads(line)["error"]
        except (ValueError, KeyError, TypeError):
            self.close()
            return "the sending process ended"
        return error if isinstance(error, str) or error is None else "the target did not take the message"


def _line_within(fd: int, seconds: float, limit: int = 65536) -> bytes | None:
    """One line from `fd` within `seconds`, at most `limit` bytes; None at the deadline, at its end or past it."""
    import selectors
    import time

    deadline = time.monotonic() + seconds
    got = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while b"\n" not in got:
            left = deadline - time.monotonic()
            if left <= 0 or len(got) > limit or not sel.select(left):
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            got += chunk
    return got.split(b"\n", 1)[0]


MAX_SENDER_DATA_BYTES = 512 * 1024 * 1024  # the child's heap above what it had when forked


def _serve(jobs: int, results: int) -> None:
    """The child of Sender: one JSON job a line in, one JSON result a line out. What Apprise or a plugin prints
    goes nowhere (its streams are /dev/null), never into the results or the parent's terminal."""
    import json
    import resource
    import signal

    global SEND_TIMEOUT_S
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it at once; the parent says what was sent
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    with contextlib.suppress(ValueError, OSError, StopIteration):
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            data_kib = next(int(line.split()[1]) for line in fh if line.startswith("VmData:"))
        hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
        soft = data_kib * 1024 + MAX_SENDER_DATA_BYTES
        resource.setrlimit(resource.RLIMIT_DATA, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    with os.fdopen(jobs, "rb") as source, os.fdopen(results, "w", encoding="utf-8") as out:
        for line in source:
            job = json.loads(line)
            target = Target(job["url"], "", "")
            message = Message("job", job["severity"], job["title"], job["body"])
            SEND_TIMEOUT_S = float(job["timeout_s"])
            try:
                with _no_deprecation_warnings():
                    error = _send_now(target, message)
            except MemoryError:
                error = f"the target's answer was too large (the sender stops at {MAX_SENDER_DATA_BYTES >> 20} MiB)"
            except Exception as exc:  # noqa: BLE001  (a plugin's own failure, said in one line)
                error = _plain(f"{type(exc).__name__}: {exc}", target.url) or "the target did not take the message"
            out.write(json.dumps({"error": error}) + "\n")
            out.flush()


def _send_now(target: Target, message: Message) -> str | None:
    import logging

    apprise = _apprise()
    kinds = {"critical": apprise.NotifyType.FAILURE, "warn": apprise.NotifyType.WARNING}
    # In this thread, no deadline of Apprise's: its deadline runs the send in a worker thread of its own.
    asset = apprise.AppriseAsset(async_mode=False, service_timeout=0)
    obj = apprise.Apprise(asset=asset)
    plugin = apprise.Apprise.instantiate(target.url, asset=asset, suppress_exceptions=True)
    if plugin is None:
        return "Apprise cannot use this URL"
    # Apprise's per-plugin timeouts (socket_connect_timeout, socket_read_timeout) bound each request.
    for name in ("socket_connect_timeout", "socket_read_timeout"):
        if hasattr(plugin, name):
            setattr(plugin, name, SEND_TIMEOUT_S)
    obj.add(plugin)
    with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as logs:
        ok = obj.notify(
            title=message.title, body=message.body, notify_type=kinds.get(message.severity, apprise.NotifyType.INFO)
        )
        said = logs.getvalue() if hasattr(logs, "getvalue") else ""
    if ok:
        return None
    reason = next((line.strip() for line in str(said).splitlines() if line.strip()), "")
    return _plain(reason, target.url) or "the target did not take the message"


def _plain(text: str, url: str = "") -> str:
    """Apprise's log line, cut to one short line with no URL in it (a URL may hold a token), and none of the URL's
    parts either: Apprise names an ntfy topic (which is its password), and a plugin may name a user or a token."""
    words = [w for w in text.split() if "://" not in w]
    line = " ".join(words)
    for part in _secret_parts(url):
        line = line.replace(part, "…")
    return line[:200]


def _secret_parts(url: str) -> list[str]:
    """The URL's pieces that may be secret (user, password, token, topic, path, query values), longest first, both
    as written and percent-decoded. Kept: the scheme, and a host name with a dot or an IPv4 address (where a
    message went is no secret; a bot token in the host place has no dot)."""
    import re
    from urllib.parse import unquote

    rest = url.partition("://")[2]
    pieces = set()
    for raw in re.split(r"[/:@?&=#,;+]", rest):
        for piece in (raw, unquote(raw)):
            if len(piece) >= 3 and not re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)+", piece):
                pieces.add(piece)
    return sorted(pieces, key=len, reverse=True)
