"""Command line: parse arguments, call the layers, map errors to messages and exit codes.

Exit codes: 0 ok, 1 findings at warn/critical (check, explain, health), 2 usage or environment error.
Heavy imports (rich, SQLAlchemy, matplotlib) happen inside the command functions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Sequence

from disksleuth import __version__
from disksleuth.errors import DisksleuthError, ParseError, Terminated, UsageError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

_cleanups: list[Callable[[], None]] = []


class _Parser(argparse.ArgumentParser):
    """One clear line on bad usage, not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"disksleuth: {message} (see '{self.prog} --help')\n")


def _sysfs_root(args: argparse.Namespace) -> str:
    from disksleuth.probe.capture import open_root

    root = getattr(args, "sysfs_root", None) or "/"
    if root == "/":
        return root
    return open_root(root, lambda tmp: _cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True)))


# --- list / links / capture ------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.analysis.links import static_findings
    from disksleuth.probe.block import list_devices

    devices = list_devices(_sysfs_root(args))
    if not args.all:
        # Unattached loop devices and unconfigured zram have size 0; lsblk hides them too.
        devices = [d for d in devices if not (d.transport in ("loop", "zram") and not d.size_bytes)]
    rows = []
    for dev in devices:
        chain = link_chain(dev.hops)
        rows.append((dev, chain, static_findings(dev, chain)))
    if args.json:
        from disksleuth.present.jsonout import device_to_dict, emit

        emit({"devices": [device_to_dict(d, c, f, include_partitions=args.all) for d, c, f in rows]})
    else:
        from disksleuth.present.text import render_devices

        render_devices(rows, show_partitions=args.all)
    return EXIT_OK


def cmd_links(args: argparse.Namespace) -> int:
    from disksleuth.analysis.pci import link_status
    from disksleuth.probe.pci import list_pci_functions

    statuses = [link_status(fn) for fn in list_pci_functions(_sysfs_root(args))]
    if args.json:
        from disksleuth.present.jsonout import emit, link_status_to_dict

        emit({"functions": [link_status_to_dict(s) for s in statuses]})
    else:
        from disksleuth.present.text import render_links

        render_links(statuses)
    return EXIT_OK


def _tool_versions() -> dict[str, str | None]:
    from disksleuth.errors import Terminated as _Err
    from disksleuth.probe import runner

    versions: dict[str, str | None] = {}
    for tool, argv in (
        ("fio", ["fio", "--version"]),
        ("smartctl", ["smartctl", "--version"]),
        ("nvme", ["nvme", "version"]),
    ):
        try:
            out = runner.run(argv, timeout_s=10).stdout.strip().splitlines()
            versions[tool] = out[0] if out else None
        except _Err:
            versions[tool] = None
    return versions


def cmd_capture(args: argparse.Namespace) -> int:
    from disksleuth.probe.capture import write_capture

    count = write_capture(args.output, _sysfs_root(args), keep_serials=args.keep_serials, versions=_tool_versions())
    masked = "kept" if args.keep_serials else "masked"
    if args.json:
        from disksleuth.present.jsonout import emit

        emit({"capture": {"path": args.output, "entries": count, "serials_masked": not args.keep_serials}})
    else:
        print(f"wrote {args.output}: {count} sysfs entries, serial numbers {masked}")
        print(f"read it back with: disksleuth list --sysfs-root {args.output}")
    return EXIT_OK


# --- bench ---------------------------------------------------------------------------------


def _events(args: argparse.Namespace):  # noqa: ANN202 - an Events implementation
    from disksleuth.bench import QuietEvents

    if args.json or not (sys.stdout.isatty() and sys.stderr.isatty()):
        return QuietEvents()
    from disksleuth.present.bench_view import TtyEvents

    return TtyEvents()


def _bench_options(args: argparse.Namespace, profile: str):  # noqa: ANN202
    from disksleuth.bench import BenchOptions
    from disksleuth.units import parse_positive, parse_size

    return BenchOptions(
        profile=profile,
        size_bytes=parse_size(args.size) if args.size else None,
        engine=args.engine,
        destructive=getattr(args, "destructive", False),
        yes=getattr(args, "yes", False),
        interactive=sys.stdin.isatty() and sys.stderr.isatty(),
        precondition=getattr(args, "precondition", False),
        fixed_time_s=parse_positive(args.time, "--time") if args.time else None,
    )


def cmd_bench(args: argparse.Namespace) -> int:
    from disksleuth.bench import run_bench

    events = _events(args)
    try:
        run = run_bench(args.target, _bench_options(args, args.profile), events)
    finally:
        close = getattr(events, "close", None)
        if close:
            close()
    if args.json:
        from disksleuth.present.bench_view import run_to_dict
        from disksleuth.present.jsonout import emit

        emit(run_to_dict(run))
    else:
        from disksleuth.present.bench_view import render_run

        render_run(run, show_commands=args.commands)
    return EXIT_OK


def _bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", metavar="SIZE", help="scratch file size (1G, 512MiB); on a device, test the first SIZE")
    p.add_argument("--engine", metavar="E", help="fio ioengine (default: io_uring, else libaio, else psync)")
    p.add_argument("--time", metavar="SECONDS", help="fixed length per test instead of stopping when stable")
    p.add_argument("--commands", action="store_true", help="print each test's fio command line")


# --- health --------------------------------------------------------------------------------


def cmd_health(args: argparse.Namespace) -> int:
    from disksleuth.analysis.health import health_findings
    from disksleuth.model import worst_severity

    if args.from_smartctl:
        from disksleuth.probe.smart_parse import parse_smartctl_json

        try:
            with open(args.from_smartctl, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read {args.from_smartctl}: {exc.strerror}") from None
        try:
            health = parse_smartctl_json(text)
        except ParseError as exc:
            raise ParseError(f"{args.from_smartctl}: {exc}") from None
    elif args.device:
        from disksleuth.probe.smart import read_health

        if not os.path.exists(args.device):
            raise UsageError(f"{args.device}: no such device")
        health = read_health(args.device)
    else:
        raise UsageError("give a DEVICE or --from-smartctl FILE")
    findings = health_findings(health)
    if args.json:
        from disksleuth.present.health_view import device_summary, health_to_dict
        from disksleuth.present.jsonout import emit

        emit(
            {
                "device": device_summary(health),
                "health": health_to_dict(health),
                "findings": [f.to_dict() for f in findings],
            }
        )
    else:
        from disksleuth.present.health_view import render_health

        render_health(health, findings)
    return EXIT_FINDINGS if worst_severity(findings) in ("warn", "critical") else EXIT_OK


# --- parser ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="disksleuth",
        description="How fast is this storage, how fast should it be, and why isn't it?",
    )
    parser.add_argument("--version", action="version", version=f"disksleuth {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name: str, func: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="print JSON (schema disksleuth/1)")
        return p

    def sysfs_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--sysfs-root", metavar="DIR", help="read sysfs from DIR or a capture .tar.gz, not /")

    p = add("list", cmd_list, "block devices with their link chain and ceilings")
    p.add_argument("--all", action="store_true", help="include partitions and unattached loop/zram devices")
    sysfs_arg(p)

    p = add("links", cmd_links, "every PCIe function: negotiated vs capable link")
    sysfs_arg(p)

    p = add("capture", cmd_capture, "bundle the sysfs files disksleuth reads, for bug reports")
    p.add_argument("-o", "--output", required=True, metavar="FILE.tar.gz")
    p.add_argument("--keep-serials", action="store_true", help="do not mask serial numbers")
    sysfs_arg(p)

    p = add("health", cmd_health, "drive health from smartctl, normalised")
    p.add_argument("device", nargs="?", metavar="DEVICE", help="block device, e.g. /dev/nvme0n1")
    p.add_argument("--from-smartctl", metavar="FILE", help="read a saved `smartctl -x --json` output instead")

    from disksleuth.profiles import PROFILES

    p = add("bench", cmd_bench, "measure a directory, file or block device with fio")
    p.add_argument("target", metavar="TARGET", help="directory (a scratch file is used), file or block device")
    p.add_argument("--profile", default="quick", choices=list(PROFILES), help="test set (default: quick)")
    _bench_args(p)
    p.add_argument("--destructive", action="store_true", help="allow write tests on a device or existing file")
    p.add_argument("--yes", action="store_true", help="do not ask before destructive writes (needed without a TTY)")
    p.add_argument("--precondition", action="store_true", help="flash profile: fill the region twice first")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.func(args)
    except DisksleuthError as exc:
        print(f"disksleuth: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("disksleuth: interrupted", file=sys.stderr)
        return 128 + 2  # SIGINT
    except Terminated:
        print("disksleuth: terminated", file=sys.stderr)
        return 128 + 15  # SIGTERM
    except BrokenPipeError:
        # Output piped into `head`: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    finally:
        while _cleanups:
            _cleanups.pop()()


if __name__ == "__main__":
    raise SystemExit(main())
