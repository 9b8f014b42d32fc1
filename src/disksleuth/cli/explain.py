"""`explain`: a figure measured elsewhere against the device's link chain."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli import options
from disksleuth.cli.common import emit, exit_for, say, sysfs_root
from disksleuth.cli.env import Environment

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("explain", run_explain)
    p.add_argument(
        "device",
        nargs="+",
        metavar="DEVICE|FILE",
        help=(
            "a block device (nvme0n1, /dev/sda), or files of pasted output (lspci -vv and -tv, smartctl -x or "
            "--json, nvme list/smart-log/id-ns/id-ctrl, fio, hdparm -t, dd, dmidecode; '-' reads standard input). "
            "'-' or an existing file is a paste, and so "
            "is a name with a '.' or a '/' outside /dev/; anything else is a device; several names are all pastes"
        ),
    )
    p.add_argument(
        "--read",
        metavar="RATE",
        help="sequential read, e.g. 373MB/s, 1,243 MB/s, 350MiB/s, 480Mb/s (bits), or a pasted hdparm/fio/dd line",
    )
    p.add_argument("--write", metavar="RATE", help="sequential write")
    p.add_argument("--read-iops", metavar="N", help="4 KiB random read IOPS (any queue depth), e.g. 50,000 or 42.9k")
    p.add_argument("--write-iops", metavar="N", help="4 KiB random write IOPS (any queue depth)")
    options.add_sysfs_root(p)


def run_explain(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.paste import is_paste_argument

    if len(args.device) > 1 or is_paste_argument(args.device[0]):
        return _run_paste(args, env)
    from disksleuth.run.explain import explain

    x = explain(
        args.device[0],
        sysfs_root(args, env),
        read=args.read,
        write=args.write,
        read_iops=args.read_iops,
        write_iops=args.write_iops,
    )
    if args.json:
        from disksleuth.doc.arrays import node_to_dict
        from disksleuth.doc.inventory import device_to_dict
        from disksleuth.doc.run import figures_to_tests

        emit(
            env,
            {
                "device": device_to_dict(x.device, x.chain),
                "given": x.given,
                "tests": figures_to_tests(x.figures),
                "findings": [f.to_dict() for f in x.findings],
                "summary": x.summary,
            }
            | ({"stack": node_to_dict(x.stack)} if x.stack is not None else {}),
        )
    else:
        from disksleuth.present.check_view import render_device_header, render_verdict
        from disksleuth.present.text import console

        render_device_header(x.device, x.chain, None)
        if x.stack is not None:
            from disksleuth.doc.arrays import node_to_dict
            from disksleuth.present.stack_view import render_tree

            render_tree(node_to_dict(x.stack), "Stack")
        if not x.figures.any():
            say("(no figures given: --read, --write, --read-iops or --write-iops add the dynamic verdicts)")
        for g in x.given:
            console().print(f"given {g['option']} {g['text']!r}, read as {g['read_as']}", markup=False, highlight=False)
        render_verdict(x.findings, x.summary)
    return exit_for(x.findings)


def _run_paste(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.errors import UsageError
    from disksleuth.run.paste import STDIN, STDIN_MAX_CHARS, explain_paste

    if getattr(args, "sysfs_root", None):
        raise UsageError("--sysfs-root reads a machine; a paste is read as it is (drop one of them)")
    stdin_text: str | bytes | None = None
    if STDIN in args.device:
        if args.device.count(STDIN) > 1:
            raise UsageError("'-' (standard input) can be read once")
        # Bytes where the stream has them: a strict UTF-8 locale's text stream raises on the first invalid byte.
        buffer = getattr(env.stdin, "buffer", None)
        stdin_text = buffer.read(STDIN_MAX_CHARS) if buffer is not None else env.stdin.read(STDIN_MAX_CHARS)
    x = explain_paste(
        args.device,
        stdin_text=stdin_text,
        read=args.read,
        write=args.write,
        read_iops=args.read_iops,
        write_iops=args.write_iops,
    )
    if args.json:
        from disksleuth.doc.paste import paste_document

        emit(env, paste_document(x))
    else:
        from disksleuth.present.paste_view import render_paste

        render_paste(x)
    return exit_for(x.findings)
