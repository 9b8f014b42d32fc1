"""`top`: is it the disk, and why, right now? Devices, processes, pressure and temperatures, judged live."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Callable

from disksleuth.cli.common import EXIT_OK, emit, exit_for
from disksleuth.cli.env import Environment
from disksleuth.errors import TERMINATING_SIGNALS, Terminated, UsageError

AddCommand = Callable[..., argparse.ArgumentParser]

DEFAULT_ONCE_SECONDS = 1.0
DEFAULT_INTERVAL_S = 1.0


def register(add: AddCommand) -> None:
    p = add("top", run_top)
    p.add_argument(
        "--once", action="store_true", help="sample once (for --seconds), print the result and exit: 1 on a warning"
    )
    p.add_argument(
        "--seconds",
        metavar="N",
        help=f"with --once: the sample's length (default {DEFAULT_ONCE_SECONDS:g}); live: stop after N seconds",
    )
    p.add_argument(
        "--interval", metavar="S", help=f"live view: seconds between refreshes (default {DEFAULT_INTERVAL_S:g})"
    )
    p.add_argument(
        "--device",
        action="append",
        metavar="DEV",
        help="only this block device (nvme0n1, /dev/sda1, /dev/mapper/x); repeatable; idle ones are shown too",
    )
    p.add_argument("--pid", action="append", metavar="PID", help="only this process; repeatable")


def _seconds(text: str | None, option: str, default: float | None) -> float | None:
    from disksleuth.run.top import check_seconds
    from disksleuth.units import parse_positive

    if text is None:
        return default
    return check_seconds(parse_positive(text, option), option)


def _pids(given: list[str] | None) -> list[int]:
    pids = []
    for text in given or []:
        value = text.strip()
        if not (value.isascii() and value.isdigit()) or not 0 < int(value) < 1 << 22:
            raise UsageError(f"--pid must be a process ID (a whole number from 1 to 4194303): {text!r}")
        pids.append(int(value))
    return pids


def run_top(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.top import Top

    once = args.once or args.json  # a script wants one document, never a stream
    if once and args.interval is not None:
        raise UsageError("--interval sets the live view's refresh; with --once (or --json), --seconds sets the sample")
    seconds = _seconds(args.seconds, "--seconds", DEFAULT_ONCE_SECONDS if once else None)
    interval = _seconds(args.interval, "--interval", DEFAULT_INTERVAL_S) or DEFAULT_INTERVAL_S
    devices = list(dict.fromkeys(args.device or []))
    pids = list(dict.fromkeys(_pids(args.pid)))
    top = Top(devices=devices, pids=pids)
    if once:
        report = top.sample(seconds or DEFAULT_ONCE_SECONDS)
        if args.json:
            from disksleuth.doc.top import top_document

            emit(env, top_document(report, devices=list(top.asked), pids=pids))
        else:
            from disksleuth.present.top_view import print_report

            print_report(report, all_devices=bool(devices))
        return exit_for(list(report.findings))
    from disksleuth.present.top_view import LiveView

    # SIGTERM and SIGHUP end the view the way Ctrl-C does (the terminal given back its cursor), then main() says
    # so and exits 128 + signum.
    previous = {sig: signal.signal(sig, _raise_terminated) for sig in TERMINATING_SIGNALS}
    try:
        with LiveView(all_devices=bool(devices)) as view:
            for report in top.watch(interval, seconds):
                view.update(report)
    except KeyboardInterrupt:  # Ctrl-C is how a live view is left: not an error
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK


def _raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated(signum)
