"""`watch`: a pass over every drive that notifies only on change; its systemd units."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli import options
from disksleuth.cli.common import EXIT_FINDINGS, EXIT_OK, emit, say, sysfs_root
from disksleuth.cli.env import Environment
from disksleuth.errors import UsageError

AddCommand = Callable[..., argparse.ArgumentParser]

DEFAULT_UNIT_DIR = "/etc/systemd/system"


def register(add: AddCommand) -> None:
    p = add("watch", run_watch)
    p.add_argument(
        "--notify",
        action="append",
        metavar="URL",
        help="send changes to this Apprise URL (repeatable): mailto://, ntfy://HOST/TOPIC, gotify://, tgram://, "
        "discord://, hassio://, json://HOST/PATH ...",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help='a TOML file: notify = [URL, ...], quiet_hours = "22:00-07:00", mute = ["sda", "temperature_high", '
        '"sdb:interface_crc_errors"], heartbeat_days = 7 (0: none), overdue_hours = 48',
    )
    p.add_argument(
        "--mute",
        action="append",
        metavar="SPEC",
        help="do not notify about a drive (sda), a finding code, or DRIVE:CODE",
    )
    p.add_argument("--quiet-hours", metavar="HH:MM-HH:MM", help="hold messages in these local hours (e.g. 22:00-07:00)")
    p.add_argument("--heartbeat-days", metavar="N", help="a 'still watching' message every N days (default 7; 0: none)")
    p.add_argument("--self-test", choices=("short", "long"), help="start this SMART self-test on each drive too")
    p.add_argument("--test-notify", action="store_true", help="send a test message to every target, and nothing else")
    p.add_argument("--install", action="store_true", help="write the systemd service and timer units, then exit")
    p.add_argument("--uninstall", action="store_true", help="remove the units --install wrote (and nothing else)")
    p.add_argument("--unit-dir", metavar="DIR", help=f"where the units go (default {DEFAULT_UNIT_DIR})")
    p.add_argument("--pass-at", metavar="CALENDAR", help="the pass's systemd OnCalendar (default 08:00 daily; off)")
    p.add_argument(
        "--short-test-at", metavar="CALENDAR", help="the short self-test's OnCalendar (default Sundays 03:00; off)"
    )
    p.add_argument(
        "--long-test-at", metavar="CALENDAR", help="the long self-test's OnCalendar (default the 1st, 04:00; off)"
    )
    options.add_db(p)
    options.add_sysfs_root(p)


def _heartbeat_days(text: str | None) -> float | None:
    if text is None:
        return None
    from disksleuth.units import parse_positive

    return 0.0 if text.strip() in ("0", "0.0") else parse_positive(text, "--heartbeat-days")


def run_watch(args: argparse.Namespace, env: Environment) -> int:
    unit_options = (args.unit_dir, args.pass_at, args.short_test_at, args.long_test_at)
    if args.install and args.uninstall:
        raise UsageError("give --install or --uninstall, not both")
    if not (args.install or args.uninstall) and any(o is not None for o in unit_options):
        raise UsageError("--unit-dir, --pass-at, --short-test-at and --long-test-at go with --install or --uninstall")
    if args.uninstall:
        return _uninstall(args, env)
    from disksleuth.run.watch import read_config, with_options

    config = with_options(
        read_config(args.config),
        notify=args.notify or (),
        mutes=args.mute or (),
        quiet_hours=args.quiet_hours,
        heartbeat_days=_heartbeat_days(args.heartbeat_days),
        self_test=args.self_test,
    )
    for warning in config.warnings:
        env.error_line(f"warning: {warning}")
    if args.install:
        return _install(args, env)
    if args.test_notify:
        return _test_notify(args, env, config)
    from disksleuth.run.watch import news, watch_pass

    outcome = watch_pass(config, db=args.db, sysfs_root=sysfs_root(args, env), scope=args.sysfs_root)
    for note in (d for d in outcome.deliveries if d.outcome == "failed"):
        env.error_line(f"warning: {note.target} did not take {note.title!r}: {note.error}")
    if args.json:
        from disksleuth.doc.watch import watch_document

        emit(env, watch_document(outcome))
    else:
        from disksleuth.present.watch_view import render_watch

        render_watch(outcome)
    return EXIT_FINDINGS if news(outcome.changes) else EXIT_OK


def _test_notify(args: argparse.Namespace, env: Environment, config: object) -> int:
    from disksleuth.run.watch import send_test

    sent = send_test(config, args.db)  # type: ignore[arg-type]
    if args.json:
        emit(env, {"kind": "watch_test", "notifications": [
            {"target": d.target, "kind": d.kind, "title": d.title, "outcome": d.outcome,
             **({"error": d.error} if d.error else {})} for d in sent
        ]})  # fmt: skip
    else:
        for d in sent:
            say(f"{d.outcome}: {d.target}" + (f" ({d.error})" if d.error else ""))
    return EXIT_OK if all(d.outcome == "sent" for d in sent) else EXIT_FINDINGS  # said above, target by target


def _schedule(args: argparse.Namespace) -> dict[str, str | None]:
    from disksleuth.run.watch import DEFAULT_SCHEDULE, _calendar

    given = {"watch": ("--pass-at", args.pass_at), "selftest-short": ("--short-test-at", args.short_test_at),
             "selftest-long": ("--long-test-at", args.long_test_at)}  # fmt: skip
    return {name: _calendar(text, option) if text is not None else DEFAULT_SCHEDULE[name]
            for name, (option, text) in given.items()}  # fmt: skip


def _install(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.watch import holds_secret, install_units, unit_db, unit_texts

    if args.notify or args.mute or args.quiet_hours or args.heartbeat_days or args.self_test:
        raise UsageError("--install writes units that read --config FILE: put notify URLs, mutes and quiet hours there")
    unit_dir = args.unit_dir or DEFAULT_UNIT_DIR
    texts = unit_texts(config_path=args.config, db=args.db, schedule=_schedule(args), unit_dir=unit_dir)
    private = holds_secret(unit_db(args.db))
    written = install_units(unit_dir, texts, private=private)
    timers = [p.rsplit("/", 1)[-1] for p in written if p.endswith(".timer")]
    notes = [f"systemctl daemon-reload && systemctl enable --now {' '.join(timers)}"]
    if private:
        notes.append(
            "the store URL holds a password: it is kept in disksleuth-watch.env, not in the units' "
            "command lines, and the files are readable by root only (0600)"
        )
    if args.config is None:
        notes.append("no --config: the pass notifies nobody; give --install --config FILE with a notify list")
    if args.json:
        from disksleuth.doc.watch import units_document

        emit(env, units_document("install", written, notes))
        return EXIT_OK
    for path in written:
        say(f"wrote {path}")
    say(f"Then: {notes[0]}")
    for note in notes[1:]:
        say(f"Note: {note}")
    return EXIT_OK


def _uninstall(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.watch import uninstall_units

    if args.pass_at or args.short_test_at or args.long_test_at:
        raise UsageError("--pass-at, --short-test-at and --long-test-at go with --install")
    removed, left = uninstall_units(args.unit_dir or DEFAULT_UNIT_DIR)
    notes = [f"{path} was not written by disksleuth: left as it is" for path in left]
    if removed:
        notes.insert(0, "systemctl daemon-reload (stop the timers first: systemctl disable --now disksleuth-*.timer)")
    if args.json:
        from disksleuth.doc.watch import units_document

        emit(env, units_document("uninstall", removed, notes))
        return EXIT_OK
    for path in removed:
        say(f"removed {path}")
    if not removed:
        say("No disksleuth units to remove there.")
    for note in notes:
        say(f"Note: {note}")
    return EXIT_OK
