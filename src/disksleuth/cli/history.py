"""The results store: `runs`, `show`, `compare`, `report`, `export`, `import`."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

from disksleuth.cli import options
from disksleuth.cli.common import EXIT_OK, emit, plain, say, wrote
from disksleuth.cli.env import Environment
from disksleuth.errors import SafetyRefusal, UsageError

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("runs", run_runs)
    p.add_argument(
        "action",
        nargs="?",
        choices=("list", "delete", "prune"),
        help="list (the default); delete ID...; prune --keep N and/or --older-than AGE, --tag T, --host H",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="runs to delete")
    p.add_argument("--device", metavar="D", help="only runs on this device (name, model or target)")
    p.add_argument("--tag", metavar="T", help="only runs with this tag")
    p.add_argument("--host", metavar="H", help="only runs recorded on this host name")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N runs (0: all; default 50)")
    p.add_argument(
        "--older-than", metavar="AGE", help="prune: runs started longer ago than AGE (90min, 12h, 30d, 2w, 6mo, 1y)"
    )
    p.add_argument(
        "--keep", type=int, metavar="N", help="prune: all but the newest N runs of each drive and profile"
    )
    p.add_argument("--dry-run", action="store_true", help="prune: list what would be deleted, delete nothing")
    p.add_argument(
        "--yes", action="store_true", help=f"prune: do not ask before deleting more than {PRUNE_ASK_ABOVE} runs"
    )
    options.add_db(p)

    p = add("show", run_show)
    p.add_argument("run", nargs="?", metavar="RUN", help="run id (see `disksleuth runs`); default: the newest run")
    p.add_argument("--commands", action="store_true", help="print each test's fio command line")
    p.add_argument(
        "--grid",
        action="store_true",
        help="Read/Write MB/s per test in plain text, as CrystalDiskMark results are shared",
    )
    options.add_baseline(p)
    options.add_db(p)

    p = add("compare", run_compare)
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("--baseline", metavar="RUN", help="ratios against this run (default: the first)")
    p.add_argument("--relative-to", metavar="RUN", help="every figure as %% of this run (e.g. a RAM disk)")
    p.add_argument("--format", choices=("table", "markdown", "csv", "json"), default="table")
    options.add_db(p)

    p = add("report", run_report)
    p.add_argument("runs", nargs="*", metavar="RUN", help="run ids (see `disksleuth runs`); default: the newest run")
    p.add_argument("--fleet", action="store_true", help="report on every host and device in the store instead")
    p.add_argument("--host", metavar="H", help="with --fleet: only this host")
    p.add_argument("-o", "--output", required=True, metavar="report.html")
    options.add_db(p)

    p = add("export", run_export)
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("-o", "--output", required=True, metavar="FILE.json")
    options.add_db(p)

    p = add("import", run_import)
    p.add_argument("file", metavar="FILE.json", help="an export file, or - for standard input")
    options.add_db(p)


def run_runs(args: argparse.Namespace, env: Environment) -> int:
    action = args.action or "list"
    if action in ("delete", "prune"):
        return _runs_delete(args, env, action)
    if args.ids:
        raise UsageError(f"runs takes run ids only with delete (disksleuth runs delete {' '.join(args.ids)})")
    if args.older_than or args.dry_run or args.keep is not None:
        raise UsageError("--keep, --older-than and --dry-run go with `disksleuth runs prune`")
    from disksleuth.run.history import list_runs

    page = list_runs(args.db, device=args.device, tag=args.tag, host=args.host, limit=args.limit)
    if args.json:
        from disksleuth.doc.history import runs_to_dict

        emit(env, runs_to_dict(page.rows, page.total))
    else:
        from disksleuth.present.history_view import render_runs

        render_runs(page.rows, page.total, page.stored)
    return EXIT_OK


def _runs_delete(args: argparse.Namespace, env: Environment, action: str) -> int:
    from disksleuth.run.history import delete_runs, prune_runs

    if action == "delete":
        if not args.ids:
            raise UsageError("runs delete needs the ids of the runs to delete (see `disksleuth runs`)")
        if args.older_than or args.tag or args.host or args.device or args.dry_run or args.keep is not None:
            raise UsageError("runs delete takes run ids only; `runs prune` deletes by count, age, tag or host")
        deleted = delete_runs(args.db, args.ids)
    else:
        if args.ids:
            raise UsageError("runs prune takes --keep, --older-than, --tag or --host, not ids (`runs delete ID...`)")
        if args.device:
            raise UsageError("runs prune selects by --keep, --older-than, --tag or --host")
        agree = None if args.yes else functools.partial(_agree_to_prune, env=env, json=args.json)
        deleted = prune_runs(
            args.db,
            older_than=args.older_than,
            tag=args.tag,
            host=args.host,
            dry_run=args.dry_run,
            agree=agree,
            keep=args.keep,
        )
    if args.json:
        emit(env, {"deleted": [] if args.dry_run else deleted, "would_delete": deleted if args.dry_run else []})
    elif not deleted:
        print("no runs match; nothing deleted", file=env.stdout)
    else:
        from disksleuth.present.history_view import run_ranges

        verb = "would delete" if args.dry_run else "deleted"
        count = len(deleted)
        print(f"{verb} {count:,} run{'' if count == 1 else 's'}, {run_ranges(deleted)}", file=env.stdout)
    return EXIT_OK


PRUNE_ASK_ABOVE = 5  # runs; pruning more than this asks first (or needs --yes)


def _agree_to_prune(found: list[tuple[int, str]], *, env: Environment, json: bool) -> list[int]:
    """The runs a person agreed to delete: all of a few; of more, only after seeing how many and from when
    and typing yes on a terminal. Without one (or with --json), more than a few need --yes."""
    ids = [run_id for run_id, _started in found]
    if len(ids) <= PRUNE_ASK_ABOVE:
        return ids
    dated = sorted(str(started)[:10] for _id, started in found if started)
    span = f"started {dated[0]} to {dated[-1]}" if dated else "with no start time"
    what = f"runs prune would delete {len(ids)} runs, {span}"
    if json or not env.can_confirm:
        raise SafetyRefusal(f"{what}; add --yes to delete them, or --dry-run to list them")
    print(f"{what} (--dry-run lists them).", file=env.stderr)
    print("Type 'yes' to delete them: ", end="", file=env.stderr, flush=True)
    if env.stdin.readline().strip().lower() != "yes":
        raise SafetyRefusal("not confirmed; nothing was deleted")
    return ids


def run_show(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.history import show_run

    if args.grid and (args.json or args.commands):
        raise UsageError("--grid is plain text for pasting: leave out --json and --commands")
    doc = show_run(args.db, args.run, args.baseline)
    if args.json:
        emit(env, doc)
    elif args.grid:
        from disksleuth.present.grid_view import render_grid

        if not args.run:  # on stderr: the grid on stdout is for pasting as it is
            print(f"disksleuth: no run given: the newest, #{doc['run']['id']}", file=env.stderr)
        env.stdout.write(render_grid(doc))
    else:
        from disksleuth.present.history_view import render_stored_run

        if not args.run:
            say(f"No run given: the newest, #{doc['run']['id']} (`disksleuth show ID` shows another).")
        render_stored_run(doc, show_commands=args.commands)
    return EXIT_OK


def run_compare(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.history import compare_runs

    comparison = compare_runs(args.db, args.runs, baseline=args.baseline, relative_to=args.relative_to)
    fmt = "json" if args.json else args.format
    if fmt == "json":
        from disksleuth.doc.compare import compare_to_dict

        emit(env, {"comparison": compare_to_dict(comparison)})
        return EXIT_OK
    from disksleuth.present import compare_view

    if fmt == "markdown":
        env.stdout.write(compare_view.to_markdown(comparison))
    elif fmt == "csv":
        env.stdout.write(compare_view.to_csv(comparison))
    else:
        compare_view.render_table(comparison)
    return EXIT_OK


def _write_output(path: str, text: str) -> None:
    """A report's -o file: run data like an export's, so written the same way (0600, never through a
    symlink); a path we cannot write is one usage line."""
    from disksleuth.outfile import write_private_text

    write_private_text(path, text)


def run_report(args: argparse.Namespace, env: Environment) -> int:
    if args.fleet:
        return _fleet_report(args, env)
    from disksleuth.present.report import render_report
    from disksleuth.run.history import load_report

    docs, histories = load_report(args.db, args.runs)
    text = render_report(docs, histories)
    _write_output(args.output, text)
    ids = [d["run"]["id"] for d in docs]
    which = f"the newest run, #{ids[0]}" if not args.runs else "runs " + ", ".join(str(i) for i in ids)
    line = f"wrote {{path}} ({len(text) // 1024} KiB, {which})"
    wrote(env, args.output, line, {"report": {"path": args.output, "runs": ids, "bytes": len(text)}}, args.json)
    return EXIT_OK


def _fleet_report(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.present.fleet_report import render_fleet_report
    from disksleuth.run.fleet import fleet

    if args.runs:
        raise UsageError("--fleet reports on every host and device; give no run ids with it")
    rows = fleet(args.db, host=args.host, show_all=True).rows
    text = render_fleet_report(rows)
    _write_output(args.output, text)
    line = f"wrote {{path}} ({len(text) // 1024} KiB, {len(rows)} host/device rows)"
    doc = {"report": {"path": args.output, "fleet": True, "rows": len(rows), "bytes": len(text)}}
    wrote(env, args.output, line, doc, args.json)
    return EXIT_OK


def run_export(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.history import export_runs

    docs = export_runs(args.db, args.runs, args.output)
    doc = {"export": {"path": args.output, "runs": [d["run"]["id"] for d in docs], "count": len(docs)}}
    wrote(env, args.output, f"exported {len(docs)} run(s) to {{path}} (serial numbers hashed)", doc, args.json)
    return EXIT_OK


def run_import(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.run.history import import_runs

    stdin = getattr(env.stdin, "buffer", None) if args.file == "-" else None
    done = import_runs(args.db, args.file, stdin)
    if args.json:
        emit(env, {"imported": list(done.new_ids), "skipped": list(done.skipped)})
    else:
        from disksleuth.present.history_view import imported_line

        say(imported_line(done.new_ids, done.skipped))
        if done.stored_unsaved_file:
            say(plain(f"{done.stored_unsaved_file} is now in the store and can be deleted (it is kept until you do)"))
    return EXIT_OK
