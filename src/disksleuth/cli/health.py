"""`health`: a drive's SMART health, normalised; its history and acknowledged counters; every drive."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli import options
from disksleuth.cli.common import EXIT_OK, emit, exit_for, say
from disksleuth.cli.env import Environment
from disksleuth.errors import UsageError

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("health", run_health)
    p.add_argument("device", nargs="?", metavar="DEVICE", help="block device, e.g. /dev/nvme0n1")
    p.add_argument(
        "attribute", nargs="?", metavar="ATTRIBUTE", help="with --ack/--unack: the counter (199, UDMA_CRC, all)"
    )
    p.add_argument("--from-smartctl", metavar="FILE", help="read a saved `smartctl -x --json` output instead")
    p.add_argument(
        "--as-device",
        metavar="DEVICE",
        help="with --from-smartctl: the file was read from this host's DEVICE; keep it with that drive's history "
        "(else a file's reading is kept apart, under the host file:NAME)",
    )
    p.add_argument(
        "-A", "--attributes", action="store_true", help="also print the attribute table, as `smartctl -A` does"
    )
    p.add_argument("--history", action="store_true", help="DEVICE's stored readings over time")
    p.add_argument(
        "--ack",
        action="store_true",
        help="accept ATTRIBUTE's value in DEVICE's newest reading: its finding is info until the counter grows",
    )
    p.add_argument("--unack", action="store_true", help="undo --ack of DEVICE ATTRIBUTE")
    p.add_argument("--no-save", action="store_true", help="do not keep this reading in the results store")
    p.add_argument(
        "--self-test",
        choices=("short", "long"),
        help="start the drive's own self-test (smartctl -t) and show its progress and estimate; `health DEV` judges it",
    )
    options.add_db(p)


def run_health(args: argparse.Namespace, env: Environment) -> int:
    if args.ack or args.unack:
        return _ack(args, env)
    if args.attribute is not None:
        raise UsageError(f"{args.attribute!r}: a second argument is only for --ack DEVICE ATTRIBUTE")
    if args.as_device is not None and args.from_smartctl is None:
        from disksleuth.run.health import AS_DEVICE_NEEDS_FILE

        raise UsageError(AS_DEVICE_NEEDS_FILE)
    if args.history:
        return _history(args, env)
    if args.self_test is not None:
        return _self_test(args, env)
    if args.device is None and args.from_smartctl is None:
        return _every_drive(args, env)
    from disksleuth.run.health import drive_health

    report = drive_health(args.device, args.from_smartctl, args.db, keep=not args.no_save, as_device=args.as_device)
    observed = report.history
    if observed is not None and observed.error:
        env.error_line(f"warning: health history left out: {observed.error}")
    if args.json:
        from disksleuth.doc.health import device_summary, health_to_dict, history_outcome
        from disksleuth.doc.selftest import wear_to_dict
        from disksleuth.present.health_view import health_summary

        emit(
            env,
            {
                "device": device_summary(report.health),
                "health": health_to_dict(report.health),
                "findings": [f.to_dict() for f in report.findings],
                "summary": health_summary(report.health, report.findings),
                "history": history_outcome(
                    bool(observed and observed.stored),
                    observed.judgement.compared if observed and observed.judgement else 0,
                    observed.error if observed else None,
                ),
                "wear": wear_to_dict(observed.wear if observed else None),
            },
        )
    else:
        from disksleuth.present.health_view import render_health

        wear = observed.wear if observed else None
        render_health(report.health, report.findings, attributes=args.attributes, wear=wear)
    return exit_for(report.findings)


def _self_test(args: argparse.Namespace, env: Environment) -> int:
    if args.device is None or args.from_smartctl is not None:
        raise UsageError("--self-test needs a DEVICE (a live drive), e.g. disksleuth health /dev/sda --self-test short")
    from disksleuth.run.selftest import start_self_test

    start = start_self_test(args.device, args.self_test, db=args.db, keep=not args.no_save)
    findings = list(start.findings)
    if args.json:
        from disksleuth.doc.selftest import self_test_document

        emit(env, self_test_document(start, findings))
    else:
        from disksleuth.present.selftest_view import self_test_start_lines

        for line in self_test_start_lines(start):
            say(line)
    return exit_for(findings)


def _history(args: argparse.Namespace, env: Environment) -> int:
    if args.device is None:
        raise UsageError("--history needs a DEVICE, e.g. disksleuth health --history sda")
    from disksleuth.run.health import health_history

    view = health_history(args.db, args.device)
    if args.json:
        from disksleuth.doc.health import history_document

        emit(env, history_document(view))
    else:
        from disksleuth.present.health_view import render_history

        render_history(view)
    return exit_for(view.findings)  # as `health` does: 1 on a finding at warn or critical


def _ack(args: argparse.Namespace, env: Environment) -> int:
    if args.ack and args.unack:
        raise UsageError("give --ack or --unack, not both")
    if args.device is None or args.attribute is None:
        flag = "--ack" if args.ack else "--unack"
        raise UsageError(f"{flag} needs DEVICE and ATTRIBUTE, e.g. disksleuth health {flag} sda 199")
    from disksleuth.run.health import acknowledge

    outcomes = acknowledge(args.db, args.device, args.attribute, undo=args.unack)
    if args.json:
        from disksleuth.doc.health import ack_document

        emit(env, ack_document(outcomes))
        return EXIT_OK
    from disksleuth.present.health_view import ack_lines

    for line in ack_lines(outcomes):
        say(line)
    return EXIT_OK


def _every_drive(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.health import every_drive

    lines = every_drive(args.db)
    if args.json:
        from disksleuth.doc.health import drives_document

        emit(env, drives_document(lines))
    else:
        from disksleuth.present.health_view import render_drives

        render_drives(lines)
    return exit_for([f for line in lines for f in line.findings])
