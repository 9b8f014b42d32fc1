"""`list`, `links` and `capture`: what is in the machine, read from sysfs (or a capture of it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from disksleuth.cli import options
from disksleuth.cli.common import EXIT_OK, emit, say, sysfs_root, wrote
from disksleuth.cli.env import Environment
from disksleuth.errors import UsageError

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("list", run_list)
    p.add_argument("--all", action="store_true", help="include partitions and unattached loop/zram devices")
    p.add_argument(
        "--zpool-status", metavar="FILE", help="also show the ZFS pools in a saved `zpool status -P` output"
    )
    options.add_sysfs_root(p)

    p = add("links", run_links)
    options.add_sysfs_root(p)

    p = add("capture", run_capture)
    p.add_argument("-o", "--output", required=True, metavar="FILE.tar.gz")
    p.add_argument("--keep-serials", action="store_true", help="do not mask serial numbers")
    p.add_argument(
        "--keep-names",
        action="store_true",
        help="copy the mount table, swap list and loop backing-file paths as they are (user, host and file names)",
    )
    options.add_sysfs_root(p)


def run_list(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.inventory import inventory

    found = inventory(sysfs_root(args, env), include_unattached=args.all, zpool_status=args.zpool_status)
    rows = found.devices
    arrays: list[dict[str, object]] = []
    if found.arrays:  # its modules only where there is an array to show (start-up: issue 37)
        from disksleuth.doc.arrays import node_to_dict

        arrays = [{**node_to_dict(a.tree), "findings": [f.to_dict() for f in a.findings]} for a in found.arrays]
    if args.json:
        from disksleuth.doc.inventory import device_to_dict

        docs = [
            device_to_dict(r.device, r.chain, r.findings, include_partitions=args.all)
            | {"member_of": list(r.member_of)}
            for r in rows
        ]
        emit(env, {"devices": docs, "arrays": arrays} | ({"notes": list(found.notes)} if found.notes else {}))
    else:
        for note in found.notes:  # on stderr: the table stays the devices alone
            env.error_line(note)
        from disksleuth.present.stack_view import render_arrays
        from disksleuth.present.text import render_devices

        render_devices([(r.device, r.chain, r.findings) for r in rows], show_partitions=args.all)
        render_arrays(arrays, found.arrays)
    return EXIT_OK


def run_links(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.inventory import pci_links

    statuses = pci_links(sysfs_root(args, env))
    if args.json:
        from disksleuth.doc.inventory import link_status_to_dict

        emit(env, {"functions": [link_status_to_dict(s) for s in statuses]})
    else:
        from disksleuth.present.text import render_links

        render_links(statuses)
    return EXIT_OK


def run_capture(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.inventory import capture

    if args.output == "-" and env.stdout_isatty:
        raise UsageError("-o -: not writing a gzip archive to a terminal; redirect it (> bundle.tar.gz) or name a file")
    from disksleuth.present.capture_view import capture_lines

    contents = capture(args.output, sysfs_root(args, env), keep_serials=args.keep_serials, keep_names=args.keep_names)
    count = contents["entries"]
    masked = "kept" if args.keep_serials else "masked"
    doc = {"capture": {"path": args.output, **contents}}
    wrote(env, args.output, f"wrote {{path}}: {count} sysfs entries, serial numbers {masked}", doc, args.json)
    if not args.json:
        for line in capture_lines(contents):  # beside the "wrote" line: on stderr when the bundle is on stdout
            if args.output == "-":
                env.error_line(line)
            else:
                say(line)
    if args.output != "-" and not args.json:
        say(f"read it back with: disksleuth list --sysfs-root {args.output}")
    return EXIT_OK
