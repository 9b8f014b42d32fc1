"""`watch`: one pass over every drive (health, self-tests, link state, the newest benchmark's baseline), kept in the
store and compared with the pass before; what changed is sent through run/notify. Also its config file and the
systemd units that run it (a daily pass, a weekly short self-test, a monthly long one).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from disksleuth.analysis import watch as judge
from disksleuth.errors import DisksleuthError, StoreError, UsageError
from disksleuth.model import Finding, worst_severity
from disksleuth.model.watch import (
    Change,
    Delivery,
    DriveSeen,
    Message,
    PassState,
    SeenFinding,
    WatchConfig,
    WatchOutcome,
)

SKIPPED_TRANSPORTS = frozenset({"loop", "zram", "md", "dm"})  # come and go with what runs; not drives
BASELINE_CODES = ("slower_than_usual",)
SELF_TEST_KINDS = ("short", "long")
MAX_CONFIG_BYTES = 64 * 1024


# --- the config file ---------------------------------------------------------------------------


def read_config(path: str | None) -> WatchConfig:
    """A small TOML file: notify = [URL...], quiet_hours = "22:00-07:00", mute = ["sda", "temperature_high",
    "sdb:interface_crc_errors"], heartbeat_days = 7 (0: none), overdue_hours = 48."""
    if path is None:
        return WatchConfig()
    import tomllib

    from disksleuth.infile import read_user_file

    raw = read_user_file(path, MAX_CONFIG_BYTES, "watch config")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or table: 64 KiB of "[" is too deep for it
        raise UsageError(f"{path}: not a watch config: values nested too deeply") from None
    known = {"notify", "quiet_hours", "mute", "heartbeat_days", "overdue_hours"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}")
    notify = _strings(doc.get("notify", []), "notify", path)
    return WatchConfig(
        notify=notify,
        quiet_hours=_quiet(doc.get("quiet_hours"), path),
        mutes=_strings(doc.get("mute", []), "mute", path),
        heartbeat_days=_days(doc.get("heartbeat_days", 7), path),
        overdue_hours=_positive(doc.get("overdue_hours", 48), "overdue_hours", path),
        source=path,
        warnings=_exposed(path, bool(notify)),
    )


def _exposed(path: str, names_targets: bool) -> tuple[str, ...]:
    """A config others can change redirects what the units (run as root) send; one others can read gives away the
    notify URLs' passwords and tokens. Said, not refused: the pass is still the user's to run."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ()
    out = []
    if mode & 0o022:
        out.append(f"{path} can be changed by other users: they could send your drives' news elsewhere (chmod go-w)")
    if names_targets and mode & 0o004:
        out.append(f"{path} names notify URLs and every user can read it: they may hold passwords or tokens "
                   f"(chmod 600 {path})")  # fmt: skip
    return tuple(out)


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise UsageError(f"{where}: {key} must be a list of strings")
    return tuple(v.strip() for v in value)


def _quiet(value: Any, where: str) -> tuple[int, int] | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise UsageError(f'{where}: quiet_hours is a string, e.g. "22:00-07:00"')
    return parse_quiet(value, where)


def parse_quiet(text: str, where: str = "--quiet-hours") -> tuple[int, int]:
    try:
        return judge.parse_quiet_hours(text)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _positive(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e6:
        raise UsageError(f"{where}: {key} must be a positive number")
    return float(value)


def _days(value: Any, where: str) -> float | None:
    if value == 0 and not isinstance(value, bool):
        return None
    return _positive(value, "heartbeat_days", where)


def with_options(
    config: WatchConfig,
    *,
    notify: Sequence[str] = (),
    mutes: Sequence[str] = (),
    quiet_hours: str | None = None,
    heartbeat_days: float | None = None,
    self_test: str | None = None,
) -> WatchConfig:
    """The options on top of the file: lists add up, a single value replaces the file's."""
    if self_test is not None and self_test not in SELF_TEST_KINDS:
        raise UsageError(f"--self-test is short or long, not {self_test!r}")
    return replace(
        config,
        notify=tuple(dict.fromkeys([*config.notify, *notify])),
        mutes=tuple(dict.fromkeys([*config.mutes, *(m.strip() for m in mutes if m.strip())])),
        quiet_hours=parse_quiet(quiet_hours) if quiet_hours else config.quiet_hours,
        heartbeat_days=(heartbeat_days or None) if heartbeat_days is not None else config.heartbeat_days,
        self_test=self_test,
    )


# --- one pass ------------------------------------------------------------------------------------


def watch_pass(
    config: WatchConfig,
    *,
    db: str | None,
    sysfs_root: str = "/",
    now_s: float | None = None,
    local: Callable[[float], dt.datetime] | None = None,
    hostname: str | None = None,
    scope: str | None = None,
) -> WatchOutcome:
    """Read every drive, compare with the store's pass before, keep this one, and send what changed. Passes over
    a --sysfs-root (`scope`, as given) are compared with earlier passes over the same root, not with the host's."""
    from disksleuth.run import notify
    from disksleuth.store.db import Store
    from disksleuth.store.watch import last_pass, record_pass

    now = time.time() if now_s is None else now_s
    host = shown = hostname or socket.gethostname()
    if scope and scope != "/":
        import hashlib

        where = hashlib.sha256(os.path.abspath(scope).encode("utf-8", "surrogateescape")).hexdigest()[:12]
        host = f"{host} sysfs:{where}"  # the store's key for the state: this tree, not the machine
    to_local = local or (lambda s: dt.datetime.fromtimestamp(s))
    notify.check_urls(config.notify)
    with Store(db, create=True) as store:
        before, first_s = last_pass(store, host)
    drives, findings, notes, self_tests = _read_drives(config, db, sysfs_root, before)
    quiet = judge.in_quiet_hours(config.quiet_hours, to_local(now))
    if quiet and config.quiet_hours:
        from disksleuth.present.watch_view import quiet_note

        notes.append(quiet_note(judge.quiet_until(config.quiet_hours, to_local(now))))
    worst = worst_severity([f for fs in findings.values() for f in fs])
    for _attempt in range(5):
        plan = _plan(config, before, first_s, drives, findings, now, shown)
        with Store(db, create=True) as store:
            targets = [notify.target_of(url, store.serial_key) for url in config.notify]
            held = "quiet_hours" if quiet else None
            first = _first_words(config, targets, before, plan, shown, drives)
            outbox = [(t.id, first.get(t.id, []) + plan.messages, held) for t in targets]
            state = replace(plan.state, targets=tuple(t.id for t in targets))
            if record_pass(store, host, before.at_s if before else None, state, worst, outbox):
                deliveries = _deliver(store, host, targets, plan.messages, now, quiet, first)
                break
            before, first_s = last_pass(store, host)  # another pass came in between: compare with it instead
    else:
        raise StoreError(f"{store.url}: other watch passes kept coming in between; try again")
    notes.extend(plan.notes)
    failed = [d for d in deliveries if d.outcome == "failed"]
    if failed:
        notes.append(f"{len(failed)} message(s) not taken by their target: kept, tried again by the next pass")
    return WatchOutcome(
        at_s=now, hostname=shown, state=plan.state, changes=tuple(plan.changes), deliveries=tuple(deliveries),
        previous_at_s=before.at_s if before else None, overdue_s=plan.late, heartbeat=plan.beat, quiet=quiet,
        self_tests=tuple(self_tests), notes=tuple(notes), findings=findings, saved=True,
    )  # fmt: skip


@dataclass(frozen=True)
class _Plan:
    state: PassState
    changes: list[Change]
    messages: list[Message]
    late: float | None
    beat: bool
    notes: list[str]


def _plan(
    config: WatchConfig,
    before: PassState | None,
    first_s: float | None,
    drives: list[DriveSeen],
    findings: dict[str, tuple[Finding, ...]],
    now: float,
    shown: str,
) -> _Plan:
    """What this pass tells, against the pass before: changes, a late pass, the heartbeat (pure but for words)."""
    from disksleuth.run import notify

    changes = judge.apply_mutes(judge.diff(before, PassState(now, tuple(drives))), config.mutes)
    late = judge.overdue_s(before.at_s if before else None, now, config.overdue_hours)
    heartbeat_at = before.heartbeat_at_s if before else None
    beat = judge.heartbeat_due(heartbeat_at, first_s, now, config.heartbeat_days)
    messages = notify.change_messages(shown, changes)
    notes: list[str] = []
    if late is not None:
        from disksleuth.present.watch_view import overdue_note

        notes.append(overdue_note(late, config.overdue_hours))
        messages.insert(0, notify.overdue_message(shown, late, config.overdue_hours))
    if beat:
        attention = [f"{d} {f.code}" for d, fs in findings.items() for f in fs if f.severity in judge.NEWS]
        messages.append(notify.heartbeat_message(shown, len(drives), attention))
        heartbeat_at = now
    told = judge.told_after(before, changes, now)
    return _Plan(PassState(now, tuple(drives), heartbeat_at, told), changes, messages, late, beat, notes)


def _first_words(
    config: WatchConfig,
    targets: Sequence[Any],
    before: PassState | None,
    plan: _Plan,
    shown: str,
    drives: list[DriveSeen],
) -> dict[str, list[Message]]:
    """A target the pass before did not have hears where things stand (the heartbeat's words) when a drive is at
    warn or critical: a pass tells only changes, so a target added after a drive went critical (`watch` tried
    once without --notify, then set up) was never told of it. Not when the pass beats anyway; not after a pass of
    an older disksleuth, which did not keep its targets."""
    from disksleuth.run import notify

    if before is None or before.targets is None or plan.beat:
        return {}
    fresh = [t for t in targets if t.id not in before.targets]
    standing = [
        Change("new", d.key, d.device, d.model, f.severity, f.code, f.message)
        for d in drives
        for f in judge.worst_of(d.findings).values()
        if f.severity in judge.NEWS
    ]
    attention = [f"{c.device} {c.code}" for c in judge.apply_mutes(standing, config.mutes) if not c.muted]
    if not fresh or not attention:
        return {}
    return {t.id: [notify.heartbeat_message(shown, len(drives), attention)] for t in fresh}


def _deliver(
    store: Any,
    host: str,
    targets: Sequence[Any],
    messages: list[Message],
    now: float,
    quiet: bool,
    first: dict[str, list[Message]] | None = None,
) -> list[Delivery]:
    """Quiet hours: the pass's messages wait in the outbox. Else every waiting message of each target is sent
    (held ones and failed ones first, oldest first)."""
    from disksleuth.run import notify

    out: list[Delivery] = []
    with notify.Sender() as sender:  # one sending process for the pass, started at its first message
        for target in targets:
            if quiet:
                told = [*(first or {}).get(target.id, []), *messages]
                out.extend(Delivery(target.label, m.kind, m.title, "held", None, now) for m in told)
            else:
                out.extend(_deliver_to(store, host, target, now, sender))
    return out


def _deliver_to(store: Any, host: str, target: Any, now: float, sender: Any) -> list[Delivery]:
    from disksleuth.store.watch import claim, mark, release

    out: list[Delivery] = []
    queued = claim(store, host, target.id, now)  # a bounded batch: a long backlog drains over several passes
    for index, q in enumerate(queued):
        error = sender.send(target, q.message)
        sent_at = None if error else time.time()
        mark(store, q.id, sent_at_s=sent_at, error=error, attempts=q.attempts + 1)
        out.append(Delivery(target.label, q.message.kind, q.message.title, "failed" if error else "sent", error,
                            q.created_at_s))  # fmt: skip
        if error:  # a target down now is down for the rest: the others wait, untried, for the next pass
            release(store, queued[index + 1 :])
            break
    return out


def _read_drives(
    config: WatchConfig, db: str | None, root: str, before: PassState | None
) -> tuple[list[DriveSeen], dict[str, tuple[Finding, ...]], list[str], list[tuple[str, str]]]:
    from disksleuth.analysis.health import health_findings, no_smart_reason
    from disksleuth.probe.smart import disk_health_readable, read_disk_health
    from disksleuth.run.health_history import observe
    from disksleuth.run.inventory import devices

    live = root in ("", "/")
    readable = disk_health_readable(root)
    earlier = {d.device: d for d in before.drives} if before else {}
    drives: list[DriveSeen] = []
    found: dict[str, tuple[Finding, ...]] = {}
    notes: list[str] = []
    self_tests: list[tuple[str, str]] = []
    if config.self_test and not live:
        notes.append("self-tests start only on this machine's drives, not under --sysfs-root")
    for row in devices(root):
        dev = row.device
        if dev.transport in SKIPPED_TRANSPORTS:
            continue
        findings = list(row.findings)
        key, counters, not_read, model = dev.name, {}, None, dev.model
        health_read = False
        reason = no_smart_reason(dev)
        if reason or not readable:
            not_read = reason or "no smartctl output saved beside this tree"
        else:
            try:
                health = read_disk_health(dev.name, root)
            except DisksleuthError as exc:
                not_read = str(exc)
            else:
                observed = observe(
                    health, health_findings(health), db, device_name=dev.name, source="watch" if live else "file"
                )
                findings.extend(replace(f, device=f.device or dev.name) for f in observed.findings)
                if observed.reading is not None:
                    key = observed.reading.drive_key
                counters, model, health_read = health.counters(), health.model or model, True
                if config.self_test and live:
                    self_tests.append((dev.name, _start_self_test(dev.path, config.self_test, db)))
        if live:  # the store's benchmarks are of this machine's drives, not of a tree's
            findings.extend(_baseline(db, dev.name))
        prior = earlier.get(dev.name)
        if not health_read and prior is not None and prior.health_read:
            # Asleep or unreadable now: the drive's last known health stands, and nothing is told of it.
            drives.append(replace(prior, not_read=not_read, carried=True))
            found[dev.name] = tuple(findings)
            continue
        seen = tuple(SeenFinding(f.code, f.severity, f.message) for f in findings if f.severity != "ok")
        drives.append(DriveSeen(key, dev.name, model, seen, counters, health_read, not_read))
        found[dev.name] = tuple(findings)
    return drives, found, notes, self_tests


def _start_self_test(path: str, kind: str, db: str | None) -> str:
    """The self-test policy: start KIND unless one is running (never aborted); its result is judged by the health
    findings of a later pass (self_test_failed)."""
    try:
        from disksleuth.run.selftest import start_self_test
    except ImportError:  # an install without the self-test module: said, never fatal
        return "not started: this disksleuth cannot start self-tests"
    try:
        start = start_self_test(path, kind, timeout_s=60.0, db=db)
    except DisksleuthError as exc:
        return f"not started: {exc}"
    if getattr(start, "already_running", False):
        return f"{kind} not started: a self-test is already running"
    estimate = getattr(start, "estimate_minutes", None)
    return f"{kind} started" + (f" (the drive estimates {estimate} min)" if estimate else "")


def _baseline(db: str | None, device: str) -> list[Finding]:
    """The newest stored benchmark's verdict against the drive's own past (slower_than_usual), as it was."""
    from disksleuth.errors import StoreMissing
    from disksleuth.store.db import Store
    from disksleuth.store.watch import newest_run_findings

    try:
        with Store(db, create=False, read_only=True) as store:
            rows = newest_run_findings(store, socket.gethostname(), device, BASELINE_CODES)
    except StoreMissing:
        return []
    return [
        Finding(r["code"], r["severity"], f"run #{r['run_id']}: {r['message']}", r["evidence"], r["hint"], device)
        for r in rows
    ]


def news(changes: Sequence[Change]) -> bool:
    """Whether a pass found something at warn or critical that was not muted (its exit status is then 1)."""
    return any(not c.muted and c.severity in judge.NEWS for c in changes)


def send_test(config: WatchConfig, db: str | None) -> list[Delivery]:
    """--test-notify: one message to every target now, outside the outbox (quiet hours do not hold it)."""
    from disksleuth.run import notify
    from disksleuth.store.db import Store

    if not config.notify:
        raise UsageError("--test-notify needs a --notify URL or a config file with a notify list")
    notify.check_urls(config.notify)
    host = socket.gethostname()
    with Store(db, create=True) as store:
        key = store.serial_key
    out = []
    with notify.Sender() as sender:
        for url in config.notify:
            target = notify.target_of(url, key)
            message = notify.test_message(host)
            error = sender.send(target, message)
            out.append(Delivery(target.label, message.kind, message.title, "failed" if error else "sent", error))
    return out


# --- systemd units -------------------------------------------------------------------------------

MARKER = "# Written by `disksleuth watch --install`; `disksleuth watch --uninstall` removes it."
UNIT_NAMES = (
    "disksleuth-watch.service",
    "disksleuth-watch.timer",
    "disksleuth-selftest-short.service",
    "disksleuth-selftest-short.timer",
    "disksleuth-selftest-long.service",
    "disksleuth-selftest-long.timer",
    "disksleuth-watch.env",
)
ENV_FILE = "disksleuth-watch.env"  # the store URL when it holds a password: never in ExecStart
DEFAULT_SCHEDULE = {
    "watch": "*-*-* 08:00:00",
    "selftest-short": "Sun *-*-* 03:00:00",
    "selftest-long": "*-*-01 04:00:00",
}


def _calendar(text: str, option: str) -> str | None:
    value = text.strip()
    if value == "off":
        return None
    if not value or not value.isprintable() or len(value) > 100:
        raise UsageError(f"{option}: a systemd calendar expression (e.g. 'daily', 'Sun *-*-* 03:00') or off")
    return value


def unit_texts(
    *, config_path: str | None, db: str | None, schedule: dict[str, str | None], unit_dir: str | None = None
) -> dict[str, str]:
    """The units' text: a oneshot service and its timer for the pass and for each self-test kind scheduled.

    A store URL with a password goes in ENV_FILE (0600, beside the units, `unit_dir`), read through
    EnvironmentFile=: an ExecStart line is every user's to read, in `ps` while the pass runs and in
    `systemctl show` at any time."""
    import sys

    base = [sys.executable, "-m", "disksleuth", "watch"]
    if config_path:
        base += ["--config", os.path.abspath(config_path)]
    store = unit_db(db)
    out: dict[str, str] = {}
    env_line = ""
    if holds_secret(store):
        if any(ch in store for ch in "'$\\\n\r") or not store.isprintable():
            raise UsageError(
                "--install: the store URL holds a character a systemd environment file cannot carry as it is "
                "(a quote, $, a backslash or a control character); percent-encode it in the URL"
            )
        out[ENV_FILE] = f"{MARKER}\nDISKSLEUTH_DB='{store}'\n"
        env_line = f"EnvironmentFile={os.path.join(os.path.abspath(unit_dir or '.'), ENV_FILE)}\n"
    else:
        base += ["--db", store]
    for name, extra, what in (
        ("watch", [], "a daily pass over every drive"),
        ("selftest-short", ["--self-test", "short"], "a short SMART self-test of every drive, then a pass"),
        ("selftest-long", ["--self-test", "long"], "a long SMART self-test of every drive, then a pass"),
    ):
        calendar = schedule.get(name)
        if calendar is None:
            continue
        command = " ".join(_systemd_quote(a) for a in [*base, *extra])
        out[f"disksleuth-{name}.service"] = (
            f"{MARKER}\n[Unit]\nDescription=disksleuth watch: {what}\n"
            "After=local-fs.target network-online.target\n"
            "Wants=network-online.target\n\n"
            "[Service]\nType=oneshot\n"
            "# 1: the pass found something new at warn or critical (it was notified): not a failure of the unit\n"
            f"SuccessExitStatus=1\n{env_line}ExecStart={command}\nNice=10\nIOSchedulingClass=idle\n"
        )
        out[f"disksleuth-{name}.timer"] = (
            f"{MARKER}\n[Unit]\nDescription=disksleuth watch: {what}\n\n"
            f"[Timer]\nOnCalendar={calendar}\nPersistent=true\nRandomizedDelaySec=10min\n\n"
            "[Install]\nWantedBy=timers.target\n"
        )
    return out


def unit_db(db: str | None) -> str:
    """The store the units' passes use: the one this command would use now (--db, else $DISKSLEUTH_DB, else the
    default file), as an absolute path: a service starts in / with root's home and none of this shell's variables."""
    from disksleuth.store.urls import default_url

    given = db if db is not None else default_url()
    if "://" not in given:
        return os.path.abspath(os.path.expanduser(given))
    scheme, _, rest = given.partition(":///")
    if scheme.lower() == "sqlite" and rest and not rest.startswith("/"):
        return f"sqlite:///{os.path.abspath(rest)}"
    return given


def holds_secret(db: str) -> bool:
    from disksleuth.store.urls import redact_url

    return redact_url(db) != db


def _systemd_quote(arg: str) -> str:
    """One word of an ExecStart line (systemd.service, "Command lines"): quoted as a shell would, then `\\`
    doubled (C escapes are undone, inside quotes too), `%` doubled (specifiers) and `$` doubled (variables are
    expanded, inside quotes too). A quote inside a word, or a control character, is refused: systemd's reading
    of those is not a shell's."""
    import shlex

    if any(ch in arg for ch in "'\"") or not arg.isprintable():
        raise UsageError(f"--install: a path the units name holds a quote or a control character: {arg!r}")
    return shlex.quote(arg).replace("\\", "\\\\").replace("%", "%%").replace("$", "$$")


def install_units(unit_dir: str, texts: dict[str, str], private: bool = False) -> list[str]:
    """Write each unit; a file there that disksleuth did not write is never replaced. `private`: the units name a
    store URL with a password, so only root reads them (0600; systemd runs as root), else 0644 as units are."""
    _unit_dir_or_refuse(unit_dir)
    for name in texts:
        path = os.path.join(unit_dir, name)
        if os.path.lexists(path) and not _ours(path):
            raise UsageError(f"{path} exists and was not written by disksleuth: left as it is, nothing installed")
    written = []
    for name, text in texts.items():
        path = os.path.join(unit_dir, name)
        _write_unit(path, text, 0o600 if private else 0o644)
        written.append(path)
    stale = os.path.join(unit_dir, ENV_FILE)  # a password an earlier install kept, no longer named by the units
    if ENV_FILE not in texts and os.path.lexists(stale) and _ours(stale):
        os.unlink(stale)
    return written


def _unit_dir_or_refuse(unit_dir: str) -> None:
    """The units run as root: a directory others can write to would let them replace the units (or swap a name
    between our check and our write or unlink), so it is refused, as one owned by another user is."""
    import stat

    try:
        st = os.stat(unit_dir)
    except OSError:
        st = None
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{unit_dir}: no such directory for the systemd units")
    if st.st_mode & 0o022 or st.st_uid not in (0, os.geteuid()):
        raise UsageError(
            f"{unit_dir} can be written by other users (mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}): "
            "the units run as root, so whoever writes there could change what runs; give a directory only you "
            "and root can write"
        )


def _write_unit(path: str, text: str, mode: int) -> None:
    """A new file beside PATH, its mode set on the descriptor, renamed over PATH (never written through a link,
    and no chmod by name afterwards that a swapped name could redirect)."""
    import tempfile

    fd, temp = tempfile.mkstemp(prefix=".disksleuth-", suffix=".tmp", dir=os.path.dirname(path))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def uninstall_units(unit_dir: str) -> tuple[list[str], list[str]]:
    """Remove the units disksleuth wrote (its marker line first); what else has those names stays."""
    _unit_dir_or_refuse(unit_dir)
    removed, left = [], []
    for name in UNIT_NAMES:
        path = os.path.join(unit_dir, name)
        if not os.path.lexists(path):
            continue
        if _ours(path):
            os.unlink(path)
            removed.append(path)
        else:
            left.append(path)
    return removed, left


def _ours(path: str) -> bool:
    """A regular file (not a link) whose first line is the marker."""
    import stat

    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():  # another user's file says what it likes
            return False
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline(len(MARKER) + 2).rstrip("\n") == MARKER
    except OSError:
        return False
