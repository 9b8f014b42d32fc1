"""`watch` notifies only on change, through Apprise, to real receivers on 127.0.0.1 started here: an HTTP server
(Apprise's json:// and ntfy:// URLs: ntfy:// is plain HTTP to a self-hosted server, ntfys:// HTTPS) and an SMTP
server (aiosmtpd) for mailto:// with Apprise's smtp= and mode=insecure (no TLS).

The drives: the real-layout md raid1 tree of tests/data/sysfs/array_raid1_failing_member (sdb healthy, sdc failing,
each with its real `smartctl -x --json` saved beside the tree), copied, with sdb's capture (the real WD20EFRX of
tests/data/smartctl) changed in ATA 199's raw value only, so a counter grows between passes."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import SMARTCTL_FIXTURES, SYSFS
from test_json_schema import assert_valid

from disksleuth.model.watch import WatchConfig
from disksleuth.run.watch import watch_pass

WDC = os.path.join(SMARTCTL_FIXTURES, "WDC_WD20EFRX-68EUZN0_17.json")
T0 = 1_795_000_000.0  # 2026-11-18, a Wednesday


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every POST: (path, JSON body)."""

    def __init__(self) -> None:
        got: list[tuple[str, dict]] = []
        self.got = got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                got.append((self.path, json.loads(body or b"{}")))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"id": "x", "event": "message"}')

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def http_receiver():
    r = Receiver()
    try:
        yield r
    finally:
        r.close()


@pytest.fixture
def smtp_receiver():
    from aiosmtpd.controller import Controller

    class Handler:
        def __init__(self) -> None:
            self.got: list[object] = []

        async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
            self.got.append(envelope)
            return "250 OK"

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    handler = Handler()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


def _tree(tmp_path) -> str:
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(SYSFS, "array_raid1_failing_member"), tree, symlinks=True)
    return str(tree)


def _sdb(tree: str, crc: int) -> None:
    """sdb's saved smartctl output: the real WD20EFRX capture, ATA 199 set to `crc`."""
    with open(WDC) as fh:
        doc = json.load(fh)
    for attr in doc["ata_smart_attributes"]["table"]:
        if attr["id"] == 199:
            attr["raw"] = {"value": crc, "string": str(crc)}
    with open(os.path.join(tree, "smartctl", "sdb.json"), "w") as fh:
        json.dump(doc, fh)


def _local(hour: int):
    """The local clock the quiet hours are judged on, fixed at `hour`:00."""
    return lambda _s: dt.datetime(2026, 11, 18, hour, 0)


def _pass(tree: str, db: str, config: WatchConfig, at_s: float, hour: int = 12):
    return watch_pass(config, db=db, sysfs_root=tree, now_s=at_s, local=_local(hour), hostname="h", scope=tree)


def test_json_and_ntfy_receivers_get_each_change_once(tmp_path, http_receiver):
    tree, db = _tree(tmp_path), f"sqlite:///{tmp_path}/store.sqlite"
    port = http_receiver.port
    config = WatchConfig(
        notify=(f"json://127.0.0.1:{port}/hook", f"ntfy://127.0.0.1:{port}/disks"), heartbeat_days=None
    )
    got = http_receiver.got

    _sdb(tree, 108)
    first = _pass(tree, db, config, T0)
    assert [d.outcome for d in first.deliveries] == ["sent", "sent"]
    paths = sorted(p for p, _ in got)
    assert paths == ["/", "/hook"]  # ntfy posts JSON to the server's root, the topic inside
    hook = next(b for p, b in got if p == "/hook")
    ntfy = next(b for p, b in got if p == "/")
    assert ntfy["topic"] == "disks" and ntfy["title"] == hook["title"] == "disksleuth on h: 4 changes"
    assert hook["type"] == "failure"  # critical: Apprise's failure type
    body = hook["message"].splitlines()
    assert len(body) == 4  # sdc: health_critical, media_errors, sata_link_downgraded; sdb: interface_crc_errors
    assert any(line.startswith("sdc (Hitachi HDS721050DLE630): critical health_critical: ") for line in body)
    assert any(line.startswith("sdb (WDC WD20EFRX-68EUZN0): warn interface_crc_errors: ") for line in body)

    got.clear()
    again = _pass(tree, db, config, T0 + 86400)
    assert again.changes == () and again.deliveries == () and got == []  # no change: nothing sent

    _sdb(tree, 131)
    grown = _pass(tree, db, config, T0 + 2 * 86400)
    assert [(c.kind, c.device, c.from_value, c.to_value) for c in grown.changes] == [("grew", "sdb", 108, 131)]
    assert len(got) == 2
    assert {b["title"] for _, b in got} == {"disksleuth on h: sdb: UDMA_CRC_Error_Count (ATA 199) grew"}
    assert next(b for p, b in got if p == "/hook")["message"] == (
        "sdb (WDC WD20EFRX-68EUZN0): UDMA_CRC_Error_Count (ATA 199) grew from 108 to 131"
    )

    got.clear()
    assert _pass(tree, db, config, T0 + 3 * 86400).deliveries == () and got == []  # the growth is told once


def test_mail_through_a_real_smtp_server(tmp_path, smtp_receiver):
    handler, port = smtp_receiver
    tree, db = _tree(tmp_path), f"sqlite:///{tmp_path}/store.sqlite"
    url = f"mailto://127.0.0.1:{port}?smtp=127.0.0.1&mode=insecure&from=watch@example.com&to=owner@example.com"
    config = WatchConfig(notify=(url,), heartbeat_days=None)
    _sdb(tree, 0)
    _pass(tree, db, config, T0)
    assert len(handler.got) == 1
    mail = handler.got[0]
    assert mail.rcpt_tos == ["owner@example.com"] and mail.mail_from == "watch@example.com"
    text = mail.content.decode()
    assert "Subject: disksleuth on h: 3 changes" in text and "critical health_critical" in text
    _pass(tree, db, config, T0 + 86400)
    assert len(handler.got) == 1  # nothing new: no mail


def test_quiet_hours_hold_then_release_and_mutes_hold(tmp_path, http_receiver):
    tree, db = _tree(tmp_path), f"sqlite:///{tmp_path}/store.sqlite"
    hook = f"json://127.0.0.1:{http_receiver.port}/hook"
    quiet = WatchConfig(notify=(hook,), quiet_hours=(22 * 60, 7 * 60), heartbeat_days=None)
    got = http_receiver.got

    _sdb(tree, 108)
    night = _pass(tree, db, quiet, T0, hour=23)
    assert night.quiet and [d.outcome for d in night.deliveries] == ["held"] and got == []
    assert any(n.startswith("quiet hours: messages held until 07:00") for n in night.notes)

    morning = _pass(tree, db, quiet, T0 + 9 * 3600, hour=8)  # nothing changed since, the held message goes now
    assert morning.changes == () and [d.outcome for d in morning.deliveries] == ["sent"]
    assert len(got) == 1 and got[0][1]["title"] == "disksleuth on h: 4 changes"

    muted = WatchConfig(notify=(hook,), mutes=("sdb",), heartbeat_days=None)
    _sdb(tree, 131)
    held = _pass(tree, db, muted, T0 + 86400)
    assert [(c.kind, c.muted) for c in held.changes] == [("grew", True)] and held.deliveries == ()
    assert len(got) == 1  # the mute held it back
    by_code = WatchConfig(notify=(hook,), mutes=("sdb:interface_crc_errors",), heartbeat_days=None)
    _sdb(tree, 140)
    assert _pass(tree, db, by_code, T0 + 2 * 86400).deliveries == () and len(got) == 1


def test_heartbeat_weekly_overdue_said_and_a_refusing_target_retried(tmp_path, http_receiver):
    tree, db = _tree(tmp_path), f"sqlite:///{tmp_path}/store.sqlite"
    _sdb(tree, 0)
    hook = f"json://127.0.0.1:{http_receiver.port}/hook"
    config = WatchConfig(notify=(hook,), heartbeat_days=7, mutes=("sdc",))
    got = http_receiver.got
    assert _pass(tree, db, config, T0).deliveries == ()  # sdc muted, sdb well: nothing to say
    assert _pass(tree, db, config, T0 + 86400).deliveries == ()
    week = _pass(tree, db, config, T0 + 7 * 86400 + 60)
    # Six days after the pass before: the late pass is said first, then the week's heartbeat.
    assert week.heartbeat and week.overdue_s is not None
    assert [b["title"] for _, b in got] == ["disksleuth on h: watch pass overdue", "disksleuth on h: still watching"]
    assert got[0][1]["message"].startswith("The last watch pass on h was 6.0 days ago (expected within 48 h)")
    assert "Still watching 2 drives on h; at warn or critical: sdc health_critical" in got[1][1]["message"]
    assert _pass(tree, db, config, T0 + 8 * 86400).deliveries == ()  # the next heartbeat is a week away

    got.clear()
    closed = Receiver()
    closed.close()  # a port nobody listens on any more
    gone = WatchConfig(notify=(f"json://127.0.0.1:{closed.port}/hook",), heartbeat_days=None)
    _sdb(tree, 5)
    failed = _pass(tree, db, gone, T0 + 8.5 * 86400)
    assert [d.outcome for d in failed.deliveries] == ["failed"] and failed.deliveries[0].error
    assert any("tried again by the next pass" in n for n in failed.notes)
    retried = _pass(tree, db, gone, T0 + 9 * 86400)
    assert [d.outcome for d in retried.deliveries] == ["failed"]  # the same message, kept, not a new one
    assert retried.changes == ()


def test_a_target_that_never_answers_times_out_and_the_message_waits(tmp_path, monkeypatch):
    """A receiver that accepts the connection and never replies: the pass ends after the read timeout, not
    never, and the message stays in the outbox."""
    from disksleuth.run import notify

    monkeypatch.setattr(notify, "SEND_TIMEOUT_S", 0.5)
    tree, db = _tree(tmp_path), f"sqlite:///{tmp_path}/store.sqlite"
    _sdb(tree, 0)
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(4)  # the kernel completes the handshake; nobody reads or answers
        config = WatchConfig(notify=(f"json://127.0.0.1:{mute.getsockname()[1]}/hook",), heartbeat_days=None)
        began = time.monotonic()
        out = _pass(tree, db, config, T0)
        took = time.monotonic() - began
    assert [d.outcome for d in out.deliveries] == ["failed"] and took < 5, took


def test_two_passes_at_once_never_queue_or_send_a_change_twice(tmp_path):
    """A pass keeps itself only when the newest pass is still the one it compared with; a message is claimed
    by one sender."""
    from disksleuth.model.watch import Message, PassState
    from disksleuth.store.db import Store
    from disksleuth.store.watch import claim, record_pass

    message = Message("change", "warn", "t", "b")
    with Store(f"sqlite:///{tmp_path}/store.sqlite") as store:
        assert record_pass(store, "h", None, PassState(1.0, ()), "ok", [("x", [message], None)])
        assert not record_pass(store, "h", None, PassState(2.0, ()), "ok", [("x", [message], None)])
        assert [q.message for q in claim(store, "h", "x", 3.0)] == [message]
        assert claim(store, "h", "x", 3.0) == []  # the first sender has it
        assert len(claim(store, "h", "x", 3.0 + 7200)) == 1  # a sender that died an hour ago: sent again


def test_test_notify_reaches_each_target_and_says_which_failed(cli, tmp_path, http_receiver):
    closed = Receiver()
    closed.close()
    db = f"sqlite:///{tmp_path}/store.sqlite"
    ok = f"json://127.0.0.1:{http_receiver.port}/hook"
    res = cli("watch", "--test-notify", "--notify", ok, "--db", db, "--json")
    assert res.code == 0 and [n["outcome"] for n in res.json()["notifications"]] == ["sent"]
    assert_valid(res.json(), "watch_test")
    assert [b["title"] for _, b in http_receiver.got] == [f"disksleuth on {socket.gethostname()}: test"]
    res = cli("watch", "--test-notify", "--notify", ok, "--notify", f"json://127.0.0.1:{closed.port}/x", "--db", db)
    assert res.code == 1 and res.out.startswith("sent: json://") and "\nfailed: json://" in res.out
    assert cli("watch", "--test-notify", "--db", db).code == 2  # no target: a usage error
