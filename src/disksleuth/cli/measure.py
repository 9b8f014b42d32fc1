"""`check` and `bench`: the same measurement and verdicts, two views of them."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from disksleuth.cli import options
from disksleuth.cli.common import emit, exit_for, plain, say
from disksleuth.cli.env import Environment
from disksleuth.errors import UsageError

AddCommand = Callable[..., argparse.ArgumentParser]


def register(add: AddCommand) -> None:
    p = add("check", run_check)
    p.add_argument("target", nargs="?", metavar="TARGET", help="directory, file or device (default: here)")
    options.add_profile(p)
    options.add_measuring(p)

    p = add("bench", run_bench)
    p.add_argument(
        "target", nargs="?", metavar="TARGET", help="directory (a scratch file is used), file or block device"
    )
    p.add_argument(
        "--members",
        nargs="+",
        metavar="DEV",
        help="an array's members: read each alone, then all at once (read-only), and name the slow one",
    )
    p.add_argument("--level", metavar="LEVEL", help="with --members: the array's level (raid0, raid1, raid5, ...)")
    options.add_profile(p)
    options.add_measuring(p)
    p.add_argument("--precondition", action="store_true", help="flash profile: fill the region twice first")
    p.add_argument(
        "--max-time", metavar="SECONDS", help="sustained profile: stop the fill after this long (default 1800)"
    )
    p.add_argument(
        "--recovery",
        metavar="SECONDS",
        help="sustained profile: after the fill, idle this long, then write a short burst: how much cache came back",
    )
    p.add_argument(
        "--repeat", metavar="N", help="run the profile N times; report each figure's median and the spread"
    )


def run_check(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.present.check_view import render_baseline, render_check, render_device_header, render_verdict
    from disksleuth.present.text import console, safe_text
    from disksleuth.run.check import inspect

    opts = bench_options(args, env)  # bad options are one line before anything is inspected
    inspected = inspect(args.target or os.getcwd())
    quiet = args.json or not env.stdout_isatty
    if not quiet:  # on a terminal, show what is being checked before the benchmark starts
        render_device_header(inspected.device, inspected.chain, None, inspected.where, inspected.health_not_read)
    result, doc = _measure(args, env, inspected, opts, "check")
    run = result.run
    if args.json:
        # A check that measured nothing (no fio) is not a run worth keeping in the history.
        if run.tests:
            _save(args, env, doc, run)  # the document carries the run's id, or where it was kept
        emit(env, doc)
        return exit_for(result.findings)
    if quiet:
        health = run.health_after or run.health_before
        render_device_header(result.device, result.chain, health, result.where, result.health_not_read)
    if "stack" in doc:
        from disksleuth.present.stack_view import render_check_stack

        render_check_stack(doc)
    if run.tests:
        render_check(result.device, result.chain, run, result.findings, result.summary, show_commands=args.commands)
        render_baseline(doc.get("baseline"))
        _save(args, env, doc, run)  # after the figures: a failing save cannot hide them
    else:
        for what in result.skipped:
            if result.health_not_read and what == f"health: {result.health_not_read}":
                continue  # the header said it
            console().print(f"skipped {safe_text(what, markup=False)}", markup=False, highlight=False)
        render_verdict(result.findings, result.summary)
    _say_saved(doc)
    return exit_for(result.findings)


def run_bench(args: argparse.Namespace, env: Environment) -> int:
    from disksleuth.present.bench_view import render_run
    from disksleuth.present.check_view import render_baseline, render_verdict
    from disksleuth.run.check import inspect

    opts = bench_options(args, env)  # bad options are one line before anything is inspected
    if args.members:
        return _bench_members(args, env, opts)
    if args.target is None:
        raise UsageError("bench needs a TARGET (a directory, file or block device), or --members DEV DEV ...")
    if args.level:
        raise UsageError("--level goes with --members")
    result, doc = _measure(args, env, inspect(args.target), opts, "bench")
    if args.json:
        _save(args, env, doc, result.run)  # the document carries the run's id, or where it was kept
        emit(env, doc)
    else:
        render_run(result.run, show_commands=args.commands)  # the figures first: a failing save cannot hide them
        render_verdict(result.findings, result.summary)
        render_baseline(doc.get("baseline"))
        _save(args, env, doc, result.run)
        _say_saved(doc)
    return exit_for(result.findings)  # the same contract as check: 1 when a finding is at warn or critical


def _bench_members(args: argparse.Namespace, env: Environment, opts: Any) -> int:
    from disksleuth.doc.arrays import members_document
    from disksleuth.present.check_view import render_verdict
    from disksleuth.present.stack_view import render_members
    from disksleuth.run.members import run_members

    if args.target is not None:
        raise UsageError("give the members after --members, not a TARGET as well")
    events = _events(args, env)
    try:
        result = run_members(list(args.members), opts, events, level=args.level)
    finally:
        events.close()
    run = {
        "started_at": result.started_at, "finished_at": result.finished_at, "fio_version": result.fio_version,
        "target": " ".join(result.paths), "host": result.host, "notes": list(result.notes),
    }  # fmt: skip
    doc = members_document(
        result.readings, result.array, result.level, result.expectation, result.findings, result.notes, run
    )
    doc["summary"] = result.summary
    if args.json:
        _save(args, env, doc, None)  # the document carries the run's id, or where it was kept
        emit(env, doc)
    else:
        render_members(doc, show_commands=args.commands)
        render_verdict(list(result.findings), result.summary)
        _save(args, env, doc, None)  # after the figures: a failing save cannot hide them
        _say_saved(doc)
    return exit_for(list(result.findings))


def _measure(
    args: argparse.Namespace, env: Environment, inspected: Any, opts: Any, kind: str
) -> tuple[Any, dict[str, Any]]:
    from disksleuth.doc.run import run_document
    from disksleuth.run.baseline import parse_choice
    from disksleuth.run.check import History, measure

    events = _events(args, env)
    try:
        result = measure(
            inspected,
            opts,
            events,
            kind=kind,
            history=History(args.db, parse_choice(args.baseline)),
            keep_health=not args.no_save,
        )
    finally:
        events.close()
    doc = run_document(
        result.run,
        result.device,
        result.chain,
        result.findings,
        result.summary,
        health_not_read=result.health_not_read,
        skipped=result.skipped,
        baseline=result.baseline,
    )
    if result.stack is not None:  # issue 24: the array under the target, its members' reads, what it should read
        from disksleuth.doc.arrays import node_to_dict, reading_to_dict

        doc["stack"] = node_to_dict(result.stack)
        if isinstance(doc.get("device"), dict):  # the device is what the store keeps whole: show and report see it
            doc["device"]["stack"] = doc["stack"]
        if result.members:
            doc["members"] = [reading_to_dict(r) for r in result.members]
            doc["array_expectation"] = result.array_expectation
            if isinstance(doc.get("device"), dict):  # kept with the stack: show, export and report see them
                doc["device"]["members"] = doc["members"]
                doc["device"]["array_expectation"] = result.array_expectation
    return result, doc


def _events(args: argparse.Namespace, env: Environment) -> Any:  # an Events implementation
    from disksleuth.run.context import QuietEvents

    if not env.progress_on_stderr:
        return QuietEvents()
    from disksleuth.present.bench_view import TtyEvents

    return TtyEvents(no_color=args.no_color)


def bench_options(args: argparse.Namespace, env: Environment) -> Any:
    from disksleuth.run.baseline import parse_choice
    from disksleuth.run.bench import BenchOptions

    parse_choice(args.baseline)  # a bad --baseline is one line before anything is measured
    from disksleuth.run.plan import DEFAULT_PRECISION_PCT
    from disksleuth.units import parse_positive, parse_size

    return BenchOptions(
        profile=args.profile,
        size_bytes=parse_size(args.size) if args.size else None,
        engine=args.engine,
        destructive=args.destructive,
        yes=args.yes,
        interactive=env.can_confirm,
        precondition=getattr(args, "precondition", False),
        fixed_time_s=parse_positive(args.time, "--time") if args.time else None,
        max_time_s=parse_positive(args.max_time, "--max-time") if getattr(args, "max_time", None) else None,
        recovery_idle_s=parse_positive(args.recovery, "--recovery") if getattr(args, "recovery", None) else None,
        precision_pct=parse_positive(args.precision, "--precision") if args.precision else DEFAULT_PRECISION_PCT,
        precision_asked=bool(args.precision),
        repeat=_repeat_count(getattr(args, "repeat", None)),
    )


def _repeat_count(text: str | None) -> int:
    from disksleuth.units import parse_positive

    if text is None:
        return 1
    value = parse_positive(text, "--repeat")
    if value != int(value) or value > 100:
        raise UsageError(f"--repeat must be a whole number of passes from 1 to 100: {text!r}")
    return int(value)


def _save(args: argparse.Namespace, env: Environment, doc: dict[str, Any], run: Any) -> None:
    """Store the run, or keep it in a file and say where in one warning line: never lose a measurement."""
    if args.no_save:
        return
    from disksleuth.run.history import save_run

    saved = save_run(doc, run, args.db, tags=args.tag or (), note=args.note, describe=plain)
    if saved.error is None:
        return
    if saved.kept_in is None:
        env.error_line(f"warning: the run was not saved ({saved.error}), nor kept ({saved.keep_error})")
    else:
        env.error_line(
            f"warning: the run was not saved ({saved.error}); kept in {saved.kept_in}, "
            f"add it later with: disksleuth import {saved.kept_in}"
        )


def _say_saved(doc: dict[str, Any]) -> None:
    if doc["run"].get("id") is not None:
        say(f"saved as run #{doc['run']['id']} (disksleuth show {doc['run']['id']}; disksleuth runs)")
