"""Many machines: `exporter` (Prometheus metrics) and `fleet` (a shared store's newest runs)."""

from __future__ import annotations

import argparse
import contextlib
import signal
from collections.abc import Callable

from disksleuth.cli import options
from disksleuth.cli.common import EXIT_FINDINGS, EXIT_OK, emit, plain, say, sysfs_root
from disksleuth.cli.env import Environment

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    _register_exporter(add)
    _register_fleet(add)


def _register_exporter(add: AddCommand) -> None:
    p = add("exporter", run_exporter)
    p.add_argument(
        "--listen",
        default="127.0.0.1:9958",
        metavar="ADDR:PORT",
        help="serve /metrics here (default: 127.0.0.1:9958, this machine only; :9958 serves every address, "
        "to anyone, unauthenticated)",
    )
    p.add_argument(
        "--textfile",
        metavar="DIR",
        help="write DIR/disksleuth.prom for node_exporter's textfile collector and exit",
    )
    p.add_argument(
        "--health-max-age",
        metavar="SECONDS",
        help="read SMART health at most this often (default 3600); sleeping drives are never woken",
    )
    p.add_argument("--no-health", action="store_true", help="no smartctl at all (link and benchmark metrics only)")
    p.add_argument("--no-bench", action="store_true", help="no benchmark metrics (do not read the results store)")
    options.add_db(p)
    options.add_sysfs_root(p)


def _register_fleet(add: AddCommand) -> None:
    p = add("fleet", run_fleet)
    p.add_argument("--host", metavar="GLOB", help="only hosts matching GLOB (db-*, web0?); a plain name is itself")
    p.add_argument(
        "--model",
        metavar="TEXT",
        help="only drives whose model contains TEXT (any case); with * ? or [ it is a glob on the whole model",
    )
    p.add_argument("--finding", metavar="CODE", help="only devices with this finding code (link_downgraded, ...)")
    p.add_argument(
        "--severity",
        choices=("ok", "info", "warn", "critical"),
        help="only devices this severe or worse (warn: warn and critical)",
    )
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only devices whose newest run started since WHEN: a date or time (2026-11-20, local time) or an age "
        "(7d, 12h, 90min)",
    )
    p.add_argument("--limit", metavar="N", help="the N worst devices in the table and --json (default 20)")
    p.add_argument("--all", action="store_true", dest="show_all", help="every device, not only the worst")
    options.add_db(p)


def run_exporter(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run import exporter
    from disksleuth.units import parse_positive

    root = sysfs_root(args, env)
    max_age = parse_positive(args.health_max_age, "--health-max-age") if args.health_max_age else None
    # Health needs the live machine's smartctl; a captured tree has none.
    cache = None
    if not args.no_health and root == "/":
        cache = exporter.HealthCache(
            max_age or exporter.DEFAULT_HEALTH_MAX_AGE_S, history_db=args.db, with_history=True
        )
    from disksleuth import serials

    take = exporter.Snapshots(
        root,
        cache,
        args.db,
        with_bench=not args.no_bench,
        fleet_key=serials.key_from_env(env.environ),
        say=lambda line: env.error_line(plain(line)),
    )

    if args.textfile:
        if cache is not None:
            cache.refresh(exporter.device_health_paths(root))
        snap = take()
        path = exporter.write_textfile(args.textfile, snap)
        # An unreadable store is a warning (stderr, and disksleuth_store_up 0 in the file), not a failure: the
        # device metrics are written all the same. The summary says so too, so "0 figures" is not read as "none".
        unreadable = bool(snap.bench_error) and not snap.store_missing
        if args.json:
            written = {"textfile": path, "devices": len(snap.disks), "bench_figures": len(snap.bench)}
            emit(env, {"exporter": {**written, "store_up": not snap.bench_error, "store_error": snap.bench_error}})
        else:
            why = " (the results store could not be read)" if unreadable else ""
            say(f"wrote {path}: {len(snap.disks)} devices, {len(snap.bench)} stored benchmark figures{why}")
        return EXIT_OK

    refresher = None
    if cache is not None:
        refresher = exporter.HealthRefresher(cache, lambda: exporter.device_health_paths(root)).start()

    serving: list[str] = []

    def ready(host: str, port: int) -> None:
        where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/metrics"
        serving.append(where)
        if args.json:
            emit(env, {"exporter": {"listen": f"{host}:{port}", "url": where}})
        else:
            print(f"serving {where} (Ctrl-C stops)", file=env.stdout, flush=True)

    from disksleuth.errors import Terminated
    from disksleuth.run.bench import sigterm_as_exception

    def log(line: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(f"disksleuth exporter: {plain(line)}", file=env.stderr, flush=True)

    try:
        with sigterm_as_exception():
            exporter.serve(args.listen, take, ready, log=log)
    except (Terminated, KeyboardInterrupt) as exc:
        if not serving:
            raise  # stopped before it served: an error document, as for any command
        # A signal is how a server is stopped: it said where it served (its one --json document); the stop
        # is a line on stderr, not a second document. The exit status still names the signal.
        signum, word = (exc.signum, exc.word) if isinstance(exc, Terminated) else (signal.SIGINT, "interrupted")
        env.error_line(f"stopped serving {serving[0]} ({word})")
        return 128 + signum
    finally:
        if refresher:
            refresher.stop()
    return EXIT_OK


def run_fleet(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.fleet import fleet

    view = fleet(
        args.db,
        host=args.host,
        model=args.model,
        finding=args.finding,
        severity=args.severity,
        since=args.since,
        limit=args.limit,
        show_all=args.show_all,
    )
    if args.json:
        from disksleuth.doc.fleet import fleet_to_dict

        emit(env, {"fleet": fleet_to_dict(view.summary, view.rows, view.limit, view.filters)})
    else:
        from disksleuth.present.fleet_view import render_fleet

        render_fleet(view.summary, view.rows, view.limit, view.filters)
    return EXIT_FINDINGS if view.unwell else EXIT_OK
