"""`verify DEV --destructive`: does the device hold what it says? Exit 0 when it does, 1 on fake_capacity, 2 on a
refusal or bad usage, 128 + the signal when Ctrl-C (or SIGTERM, SIGHUP) stopped it (the report still printed)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli.common import emit, exit_for
from disksleuth.cli.env import Environment

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("verify", run_verify)
    p.add_argument("device", metavar="DEV", help="the block device (a card or stick: /dev/sdX, /dev/mmcblkN)")
    p.add_argument(
        "--destructive",
        action="store_true",
        help="required: test blocks are written across the device, and what it held is destroyed",
    )
    p.add_argument("--yes", action="store_true", help="do not ask before destroying the data (needed without a TTY)")
    p.add_argument("--quick", action="store_true", help="fewer offsets (the boundaries and 64 more), 30 s at most")
    p.add_argument(
        "--max-time",
        metavar="SECONDS",
        help="the time limit (default 180, 30 with --quick): the spread of offsets is thinned to fit; "
        "the boundary offsets (0, each power of two, the last block) are always tested",
    )


def run_verify(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.verify import QuietVerifyEvents, VerifyEvents, VerifyOptions, check_max_time
    from disksleuth.run.verify import run_verify as verify
    from disksleuth.units import parse_positive

    max_time = check_max_time(parse_positive(args.max_time, "--max-time")) if args.max_time else None
    opts = VerifyOptions(
        destructive=args.destructive,
        yes=args.yes,
        interactive=env.can_confirm,
        quick=args.quick,
        max_time_s=max_time,
    )
    events: VerifyEvents
    if env.progress_on_stderr:
        from disksleuth.present.verify_view import TtyVerifyEvents

        events = TtyVerifyEvents(no_color=args.no_color)
    else:
        events = QuietVerifyEvents()
    try:
        report = verify(args.device, opts, events)
    finally:
        events.close()
    if args.json:
        from disksleuth.doc.verify import verify_document

        emit(env, verify_document(report))
    else:
        from disksleuth.present.verify_view import render_verify

        render_verify(report)
    if report.signum is not None:
        env.error_line(f"stopped: {report.stopped}")
        return 128 + report.signum
    return exit_for(list(report.verdict.findings))
