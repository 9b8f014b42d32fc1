"""`health`: a drive's SMART health, normalised."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli.common import emit, exit_for
from disksleuth.cli.env import Environment

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("health", run_health, "drive health from smartctl, normalised")
    p.add_argument("device", nargs="?", metavar="DEVICE", help="block device, e.g. /dev/nvme0n1")
    p.add_argument("--from-smartctl", metavar="FILE", help="read a saved `smartctl -x --json` output instead")
    p.add_argument(
        "-A", "--attributes", action="store_true", help="also print the attribute table, as `smartctl -A` does"
    )


def run_health(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.health import drive_health

    report = drive_health(args.device, args.from_smartctl)
    if args.json:
        from disksleuth.doc.health import device_summary, health_to_dict
        from disksleuth.present.health_view import health_summary

        emit(
            env,
            {
                "device": device_summary(report.health),
                "health": health_to_dict(report.health),
                "findings": [f.to_dict() for f in report.findings],
                "summary": health_summary(report.health, report.findings),
            },
        )
    else:
        from disksleuth.present.health_view import render_health

        render_health(report.health, report.findings, attributes=args.attributes)
    return exit_for(report.findings)
