"""Command line: parse arguments, call the layers, map errors to messages and exit codes.

Exit codes: 0 ok, 1 findings at warn/critical (check, explain, health), 2 usage or environment error.
Heavy imports (rich, SQLAlchemy, matplotlib) happen inside the command functions.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence

from disksleuth import PROFILE_NAMES, __version__
from disksleuth.errors import DisksleuthError, ParseError, Terminated, UsageError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

_cleanups: list[Callable[[], None]] = []


# Set by main() when --json is on the command line, so that even argparse's usage errors come out as
# a JSON document on stdout.
_json_errors = False


class _Parser(argparse.ArgumentParser):
    """One clear line on bad usage, not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        line = f"{_plain(message)} (see '{self.prog} --help')"  # it may quote what was typed
        if _json_errors:
            _emit_error("usage", line)
        self.exit(EXIT_USAGE, f"disksleuth: {line}\n")


# Exception class -> the `code` of {"error": {"code", "message"}} under --json; the nearest class in
# the exception's MRO wins, so subclasses added later get their family's code.
_ERROR_CODES: dict[str, str] = {
    "DeviceNotFound": "device_not_found",
    "UsageError": "usage",
    "ToolMissing": "tool_missing",
    "EnvironmentProblem": "environment",
    "CommandFailed": "command_failed",
    "CommandTimeout": "timeout",
    "ParseError": "parse",
    "SafetyRefusal": "safety_refusal",
    "DisksleuthError": "error",
}


def _error_code(exc: BaseException) -> str:
    for cls in type(exc).__mro__:
        if cls.__name__ in _ERROR_CODES:
            return _ERROR_CODES[cls.__name__]
    return "internal"


def _emit_error(code: str, message: str) -> None:
    """Under --json an error is still one JSON document on stdout (and its line on stderr)."""
    import json

    from disksleuth import SCHEMA

    sys.stdout.write(json.dumps({"schema": SCHEMA, "error": {"code": code, "message": message}}, indent=2) + "\n")
    sys.stdout.flush()


def _say(line: str) -> None:
    """A sentence for people: wrapped between words at the terminal's width, taken literally (no markup)."""
    from rich.text import Text

    from disksleuth.present.text import console

    console().print(Text(line))


def _sysfs_root(args: argparse.Namespace) -> str:
    root = getattr(args, "sysfs_root", None) or "/"
    if root == "/":
        return root
    import shutil

    from disksleuth.probe.capture import open_root

    return open_root(root, lambda tmp: _cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True)))


# --- list / links / capture ------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.analysis.links import static_findings
    from disksleuth.probe.block import list_devices

    devices = list_devices(_sysfs_root(args))
    if not args.all:
        # Unattached loop devices and unconfigured zram have size 0; lsblk hides them too.
        devices = [d for d in devices if not d.is_unattached]
    rows = []
    for dev in devices:
        chain = link_chain(dev.hops)
        rows.append((dev, chain, static_findings(dev)))
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
        except DisksleuthError:  # not installed, or failed: the capture goes on without its version
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
        _say(f"wrote {args.output}: {count} sysfs entries, serial numbers {masked}")
        _say(f"read it back with: disksleuth list --sysfs-root {args.output}")
    return EXIT_OK


# --- bench ---------------------------------------------------------------------------------


def _events(args: argparse.Namespace):  # noqa: ANN202 - an Events implementation
    """Live progress goes to stderr whenever stderr is a terminal, whatever stdout is (a file, a pipe,
    --json): `bench DIR > out.txt` still shows what it is doing, as curl, pip and fio do."""
    from disksleuth.bench import QuietEvents

    if not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return QuietEvents()
    from disksleuth.present.bench_view import TtyEvents

    return TtyEvents(no_color=args.no_color)


def _bench_options(args: argparse.Namespace, profile: str):  # noqa: ANN202
    from disksleuth.bench import BenchOptions
    from disksleuth.plan import DEFAULT_PRECISION_PCT
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


def cmd_bench(args: argparse.Namespace) -> int:
    from disksleuth.bench import run_bench

    events = _events(args)
    try:
        run = run_bench(args.target, _bench_options(args, args.profile), events)
    finally:
        events.close()
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.check import assess_bench
    from disksleuth.present.bench_view import run_to_dict
    from disksleuth.present.jsonout import device_to_dict
    from disksleuth.probe.target import inspect_target

    assessment = assess_bench(run, inspect_target(run.target))
    doc = run_to_dict(run)
    if run.disk is not None:
        doc["device"] = device_to_dict(run.disk, link_chain(run.disk.hops))
    findings = list(assessment.findings)
    fill = next((t.sustained for t in run.tests if t.sustained is not None), None)
    if fill is not None:  # the sustained profile's finding: write_cache_cliff or thermal_throttling
        from disksleuth.analysis.sustained import findings as sustained_findings

        extra = sustained_findings(fill, run.device)
        if extra:  # its fill knows heat from cache better than the run-wide verdicts: it wins on the same code
            codes = {f.code for f in extra}
            findings = [f for f in findings if f.code not in codes and f.code != "ok"] + extra
    doc["findings"] = [f.to_dict() for f in findings]
    doc["summary"] = assessment.summary
    if args.json:
        from disksleuth.present.jsonout import emit

        _save(args, doc, run)  # the document carries the run's id, or where it was kept
        emit(doc)
    else:
        from disksleuth.present.bench_view import render_run
        from disksleuth.present.check_view import render_verdict

        render_run(run, show_commands=args.commands)  # the figures first: a failing save cannot hide them
        render_verdict(assessment.findings, assessment.summary)
        _save(args, doc, run)
        _say_saved(doc)
    return _exit_for(findings)  # the same contract as check: 1 when a finding is at warn or critical


def _save(args: argparse.Namespace, doc: dict, run):  # noqa: ANN001, ANN202
    """Store the run (one transaction); fills doc["run"]["id"]. A store problem never loses the
    measurement: the figures are printed anyway, the run is kept in a file `disksleuth import` reads,
    and the user gets one warning line saying where."""
    from dataclasses import replace

    if args.no_save:
        return run
    import uuid

    from disksleuth.store.db import Store, keep_unsaved

    tags = list(dict.fromkeys(args.tag or ()))
    doc["run"]["uuid"] = doc["run"].get("uuid") or str(uuid.uuid4())
    try:
        with Store(args.db) as store:
            run_id = store.save(doc, tags=tags, note=args.note)
    except Exception as exc:  # whatever failed, the measurement must survive it
        reason = _plain(exc) if isinstance(exc, DisksleuthError) else f"{type(exc).__name__}: {_plain(exc)}"
        try:
            kept = keep_unsaved(doc, tags, args.note)
        except DisksleuthError as keep_exc:
            doc["store"] = {"saved": False, "error": reason, "kept_in": None}
            print(
                f"disksleuth: warning: the run was not saved ({reason}), nor kept ({_plain(keep_exc)})", file=sys.stderr
            )
        else:
            doc["store"] = {"saved": False, "error": reason, "kept_in": kept}
            print(
                f"disksleuth: warning: the run was not saved ({reason}); kept in {kept}, "
                f"add it later with: disksleuth import {kept}",
                file=sys.stderr,
            )
        return run
    doc["run"]["id"] = run_id
    doc["run"]["tags"] = tags
    doc["run"]["note"] = args.note
    doc["store"] = {"saved": True, "id": run_id}
    return replace(run, id=run_id)


def _say_saved(doc: dict) -> None:
    if doc["run"].get("id") is not None:
        _say(f"saved as run #{doc['run']['id']} (disksleuth show {doc['run']['id']}; disksleuth runs)")


# --- results store -----------------------------------------------------------------------------


def _store(args: argparse.Namespace, create: bool = False):  # noqa: ANN202
    """The results store of --db. Read-only commands never create one (create=False)."""
    from disksleuth.store.db import Store

    return Store(args.db, create=create)


RUNS_SUMMARY_WIDTH = 70  # characters of each summary in the `runs` table; show and --json have it whole


def cmd_runs(args: argparse.Namespace) -> int:
    action = args.action or "list"
    if action in ("delete", "prune"):
        return _runs_delete(args, action)
    if args.ids:
        raise UsageError(f"runs takes run ids only with delete (disksleuth runs delete {' '.join(args.ids)})")
    if args.older_than or args.dry_run:
        raise UsageError("--older-than and --dry-run go with `disksleuth runs prune`")
    if args.limit < 0:
        raise UsageError(f"--limit {args.limit}: give 0 (all runs) or more")
    with _store(args) as store:
        rows, total = store.list_runs(device=args.device, tag=args.tag, host=args.host, limit=args.limit or None)
        stored = store.count() if not rows else total
    if args.json:
        from disksleuth.present.jsonout import emit

        emit(
            {
                "total": total,
                "runs": [
                    {
                        "id": r["id"],
                        "uuid": r["uuid"],
                        "started_at": r["started_at"],
                        "host": r["hostname"],
                        "target": r["target"],
                        "device_model": r["device_model"],
                        "device": r["device_name"],
                        "profile": r["profile"],
                        "kind": r["kind"],
                        "tags": r["tags"],
                        "summary": r["summary"],
                        "note": r["note"],
                    }
                    for r in rows
                ],
            }
        )
        return EXIT_OK
    from rich.table import Table

    from disksleuth.present.text import clip_words, console, safe_text

    if not rows:
        if stored:
            console().print(f"No runs match ({stored} stored; `disksleuth runs` lists them all).")
        else:
            console().print("No runs yet. `disksleuth check` or `disksleuth bench DIR` saves one.")
        return EXIT_OK
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("id", "started", "host", "kind", "profile", "device", "target", "tags", "summary"):
        table.add_column(col, justify="right" if col == "id" else "left", overflow="fold")
    summaries = [clip_words(str(r["summary"] or ""), RUNS_SUMMARY_WIDTH) for r in rows]
    for r, summary in zip(rows, summaries, strict=True):
        cells = (
            str(r["id"]),
            str(r["started_at"] or "")[:16].replace("T", " "),
            r["hostname"] or "",
            r["kind"] or "",
            r["profile"] or "",
            r["device_model"] or r["device_name"] or "",
            r["target"] or "",
            ", ".join(str(t) for t in r["tags"]),
            summary,
        )
        table.add_row(*(safe_text(cell) for cell in cells))
    console().print(table)
    if any(s.endswith("…") for s in summaries):
        console().print("[dim]… summary cut: `disksleuth show ID` (or runs --json) has it whole[/dim]")
    if total > len(rows):
        console().print(f"[dim]showing the newest {len(rows)} of {total} runs; --limit 0 shows all[/dim]")
    return EXIT_OK


def _runs_delete(args: argparse.Namespace, action: str) -> int:
    from disksleuth.store.db import parse_run_ids

    if action == "delete":
        if not args.ids:
            raise UsageError("runs delete needs the ids of the runs to delete (see `disksleuth runs`)")
        if args.older_than or args.tag or args.host or args.device or args.dry_run:
            raise UsageError("runs delete takes run ids only; `runs prune` deletes by age, tag or host")
        ids = parse_run_ids(args.ids)
        with _store(args) as store:
            deleted = store.delete(ids)
    else:
        from disksleuth.store.db import parse_age_s

        if args.ids:
            raise UsageError("runs prune takes --older-than, --tag or --host, not ids (`runs delete ID...`)")
        if args.device:
            raise UsageError("runs prune selects by --older-than, --tag or --host")
        older = parse_age_s(args.older_than) if args.older_than else None
        with _store(args) as store:
            deleted = store.prune(older_than_s=older, tag=args.tag, host=args.host, dry_run=args.dry_run)
    if args.json:
        from disksleuth.present.jsonout import emit

        emit({"deleted": [] if args.dry_run else deleted, "would_delete": deleted if args.dry_run else []})
    elif not deleted:
        print("no runs match; nothing deleted")
    else:
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb} {len(deleted)} run(s): " + ", ".join(f"#{i}" for i in deleted))
    return EXIT_OK


def _load_docs(args: argparse.Namespace, ids_text: list[str], with_series: bool = True) -> list[dict]:
    from disksleuth.store.db import parse_run_ids

    ids = parse_run_ids(ids_text)
    from disksleuth.present.bench_view import with_sustained

    with _store(args) as store:
        return [with_sustained(store.load(i, with_series=with_series)) for i in ids]


def cmd_show(args: argparse.Namespace) -> int:
    (doc,) = _load_docs(args, [args.run])
    if args.json:
        from disksleuth.present.jsonout import emit

        emit(doc)
        return EXIT_OK
    from disksleuth.model import Finding
    from disksleuth.present.bench_view import render_run, run_from_dict
    from disksleuth.present.check_view import render_verdict
    from disksleuth.present.text import console, safe_text

    run = doc["run"]
    dev = doc.get("device") or {}
    console().print(
        f"[bold]Run #{run['id']}[/bold]  "
        + safe_text(f"{run['started_at']}  {run['kind']}  {dev.get('model') or run.get('device') or ''}")
        + (f"  tags: {safe_text(', '.join(str(t) for t in run['tags']))}" if run.get("tags") else "")
    )
    if run.get("note"):
        console().print(f"note: {safe_text(run['note'])}")
    render_run(run_from_dict(doc), show_commands=args.commands)
    findings = [
        Finding(f["code"], f["severity"], f["message"] or "", f["evidence"] or {}, f["hint"] or "")
        for f in doc.get("findings") or []
    ]
    if findings or doc.get("summary"):
        render_verdict(findings, doc.get("summary") or "")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from disksleuth.analysis.compare import compare
    from disksleuth.present import compare_view
    from disksleuth.store.db import parse_run_ids

    docs = _load_docs(args, args.runs, with_series=False)
    ids = [d["run"]["id"] for d in docs]
    baseline = 0
    if args.baseline:
        (base_id,) = parse_run_ids([args.baseline])
        if base_id not in ids:
            raise UsageError(f"--baseline {base_id} is not one of the compared runs")
        baseline = ids.index(base_id)
    reference = None
    if args.relative_to:
        (ref_id,) = parse_run_ids([args.relative_to])
        reference = (
            next((d for d in docs if d["run"]["id"] == ref_id), None)
            or _load_docs(args, [str(ref_id)], with_series=False)[0]
        )
    comparison = compare(docs, baseline=baseline, reference=reference)
    fmt = "json" if args.json else args.format
    if fmt == "json":
        from disksleuth.present.jsonout import emit

        emit({"comparison": compare_view.to_dict(comparison)})
    elif fmt == "markdown":
        sys.stdout.write(compare_view.to_markdown(comparison))
    elif fmt == "csv":
        sys.stdout.write(compare_view.to_csv(comparison))
    else:
        compare_view.render_table(comparison)
    return EXIT_OK


def _write_output(path: str, text: str) -> None:
    """A report's -o file: run data like an export's, so written the same way (0600, never through a
    symlink); a path we cannot write is one usage line."""
    from disksleuth.outfile import write_private_text

    write_private_text(path, text)


def cmd_report(args: argparse.Namespace) -> int:
    if args.fleet:
        return _fleet_report(args)
    if not args.runs:
        raise UsageError("give the runs to report on (see `disksleuth runs`), or --fleet")
    from disksleuth.present.report import render_report

    docs = _load_docs(args, args.runs)
    text = render_report(docs)
    _write_output(args.output, text)
    if args.json:
        from disksleuth.present.jsonout import emit

        emit({"report": {"path": args.output, "runs": [d["run"]["id"] for d in docs], "bytes": len(text)}})
    else:
        _say(f"wrote {args.output} ({len(text) // 1024} KiB, runs {', '.join(str(d['run']['id']) for d in docs)})")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from disksleuth.store.db import write_export

    docs = _load_docs(args, args.runs)
    write_export(args.output, docs)
    if args.json:
        from disksleuth.present.jsonout import emit

        emit({"export": {"path": args.output, "runs": [d["run"]["id"] for d in docs], "count": len(docs)}})
    else:
        _say(f"exported {len(docs)} run(s) to {args.output} (serial numbers hashed)")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from disksleuth.store.db import read_export_file

    docs = read_export_file(args.file)
    with _store(args, create=True) as store:  # all runs or none; a run already stored is skipped
        results = store.import_runs(docs)
    new_ids = [run_id for run_id, new in results if new]
    skipped = [run_id for run_id, new in results if not new]
    if args.json:
        from disksleuth.present.jsonout import emit

        emit({"imported": new_ids, "skipped": skipped})
    else:
        said = f"imported {len(new_ids)} run(s)" + (" as " + ", ".join(f"#{i}" for i in new_ids) if new_ids else "")
        if skipped:
            said += f"; skipped {len(skipped)} already stored (" + ", ".join(f"#{i}" for i in skipped) + ")"
        _say(said)
    return EXIT_OK


# Options that may also come before the command (`disksleuth --json list`). Defaults are SUPPRESS in
# every parser so a subcommand's default never overwrites the value given before it; main() fills
# the real defaults in afterwards.
GLOBAL_DEFAULTS = {"json": False, "no_color": False, "db": None, "sysfs_root": None}
_DB_HELP = (
    "results store: a file path, sqlite:///PATH or postgresql://USER@HOST/DB "
    "(default: $DISKSLEUTH_DB, else ~/.local/share/disksleuth/results.sqlite)"
)
_SYSFS_HELP = "read sysfs from DIR or a capture .tar.gz, not /"


def _db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        default=argparse.SUPPRESS,
        help=_DB_HELP,
    )


def _sysfs_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sysfs-root", metavar="DIR", default=argparse.SUPPRESS, help=_SYSFS_HELP)


def _bench_args(p: argparse.ArgumentParser) -> None:
    _db_arg(p)
    p.add_argument("--tag", action="append", metavar="TAG", help="label the saved run (repeatable)")
    p.add_argument("--note", metavar="TEXT", help="a free-form note on the saved run")
    p.add_argument("--no-save", action="store_true", help="do not save the run in the results store")
    p.add_argument(
        "--size",
        metavar="SIZE",
        help="scratch file size; on a device, test the first SIZE. 500MB is 500x10^6 bytes, 512MiB 512x2^20; "
        "a bare 1G or 512M is binary, as in fio (1G = 1 GiB = 1,073,741,824 bytes)",
    )
    p.add_argument("--engine", metavar="E", help="fio ioengine (default: io_uring, else libaio, else psync)")
    p.add_argument("--time", metavar="SECONDS", help="fixed length per test instead of stopping when sure")
    p.add_argument(
        "--precision",
        metavar="PCT",
        help="stop each test once its figure's 95%% confidence interval is within +-PCT%% (default 3)",
    )
    p.add_argument("--commands", action="store_true", help="print each test's fio command line")


# --- health --------------------------------------------------------------------------------


def cmd_health(args: argparse.Namespace) -> int:
    from disksleuth.analysis.health import health_findings
    from disksleuth.model import worst_severity

    if args.from_smartctl and args.device:
        raise UsageError(
            f"give a DEVICE or --from-smartctl FILE, not both ({args.device} would be ignored: "
            f"the figures come from {args.from_smartctl})"
        )
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

        health = read_health(_device_path(args.device))
    else:
        raise UsageError("give a DEVICE or --from-smartctl FILE")
    findings = health_findings(health)
    if args.json:
        from disksleuth.present.health_view import device_summary, health_summary, health_to_dict
        from disksleuth.present.jsonout import emit

        emit(
            {
                "device": device_summary(health),
                "health": health_to_dict(health),
                "findings": [f.to_dict() for f in findings],
                "summary": health_summary(health, findings),
            }
        )
    else:
        from disksleuth.present.health_view import render_health

        render_health(health, findings, attributes=args.attributes)
    return EXIT_FINDINGS if worst_severity(findings) in ("warn", "critical") else EXIT_OK


# --- check / explain -------------------------------------------------------------------------


def _resolve_device_name(arg: str, sysfs_root: str) -> str:
    """'nvme0n1', '/dev/nvme0n1' or a partition '/dev/sda1' -> the whole-disk name in sysfs."""
    from disksleuth.errors import DeviceNotFound
    from disksleuth.probe.sysfs import Sysfs

    fs = Sysfs(sysfs_root)
    name = os.path.basename(arg.rstrip("/"))
    if name.startswith("mapper") or "/mapper/" in arg:
        real = os.path.realpath(arg)
        name = os.path.basename(real)
    if os.path.isdir(fs.p("/sys/block", name)):
        return name
    part = fs.realpath(fs.p("/sys/class/block", name))
    if os.path.isfile(os.path.join(part, "partition")):
        return os.path.basename(os.path.dirname(part))
    raise DeviceNotFound(f"{arg}: no such block device" + ("" if sysfs_root == "/" else f" in {sysfs_root}"))


def _device_path(arg: str) -> str:
    """The /dev path for smartctl: a path that exists is used as given (it may be a node sysfs does
    not list, like /dev/sg0); a name ('vda', 'nvme0n1') resolves as for explain, so both commands
    accept the same names."""
    if "/" in arg and os.path.exists(arg):
        return arg
    return "/dev/" + _resolve_device_name(arg, "/")


def _exit_for(findings: list) -> int:
    from disksleuth.model import worst_severity

    return EXIT_FINDINGS if worst_severity(findings) in ("warn", "critical") else EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.analysis.verdicts import Figures, summary_line, verdicts
    from disksleuth.probe.block import read_device
    from disksleuth.units import parse_count, parse_rate

    # Each figure as given and as read, shown back so a misread (bits for bytes, 1,243 for 1.243) is visible.
    given: list[dict] = []
    rates = {}
    for option, text in (("--read", args.read), ("--write", args.write)):
        if text:
            rate = rates[option] = parse_rate(text)
            given.append({"option": option, "text": text, "mbps": rate.mbps, "read_as": rate.read_as})
    counts = {}
    for option, text in (("--read-iops", args.read_iops), ("--write-iops", args.write_iops)):
        if text:
            iops = counts[option] = parse_count(text, option)
            given.append({"option": option, "text": text, "iops": iops, "read_as": f"{iops:,g} IOPS"})
    figures = Figures(
        seq_read_mbps=rates["--read"].mbps if "--read" in rates else None,
        seq_write_mbps=rates["--write"].mbps if "--write" in rates else None,
        rand_read_iops=counts.get("--read-iops"),
        rand_write_iops=counts.get("--write-iops"),
    )
    root = _sysfs_root(args)
    device = read_device(_resolve_device_name(args.device, root), root)
    chain = link_chain(device.hops)
    findings = verdicts(device, chain, figures)
    summary = summary_line(device, chain, figures)
    if args.json:
        from disksleuth.present.check_view import figures_to_tests
        from disksleuth.present.jsonout import device_to_dict, emit

        emit(
            {
                "device": device_to_dict(device, chain),
                "given": given,
                "tests": figures_to_tests(figures),
                "findings": [f.to_dict() for f in findings],
                "summary": summary,
            }
        )
    else:
        from disksleuth.present.check_view import render_device_header, render_verdict
        from disksleuth.present.text import console

        render_device_header(device, chain, None)
        if not figures.any():
            _say("(no figures given: --read, --write, --read-iops or --write-iops add the dynamic verdicts)")
        for g in given:
            console().print(f"given {g['option']} {g['text']!r}, read as {g['read_as']}", markup=False, highlight=False)
        render_verdict(findings, summary)
    return _exit_for(findings)


def cmd_check(args: argparse.Namespace) -> int:
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.check import device_of, health_not_read, run_check, where_of
    from disksleuth.present.bench_view import run_to_dict
    from disksleuth.present.check_view import render_check, render_device_header
    from disksleuth.present.jsonout import device_to_dict, emit
    from disksleuth.probe.target import inspect_target

    target = inspect_target(args.target or os.getcwd())
    quiet = args.json or not sys.stdout.isatty()
    if not quiet:  # on a terminal, show what is being checked before the benchmark starts
        device = device_of(target)
        render_device_header(device, link_chain(device.hops), None, where_of(target), health_not_read(target))
    events = _events(args)
    try:
        result = run_check(target, _bench_options(args, args.profile), events)
    finally:
        events.close()
    doc = run_to_dict(result.run)
    doc = {
        "device": device_to_dict(result.device, result.chain),
        "run": doc["run"],
        "tests": doc["tests"],
        "reference": doc["reference"],
        # Why no drive health was read (a virtual disk has no SMART data), or null.
        "health": {**doc["health"], "not_read_reason": result.health_not_read},
        "findings": [f.to_dict() for f in result.findings],
        "summary": result.summary,
        "skipped": list(result.skipped),
    }
    run = result.run
    if args.json:
        # A check that measured nothing (no fio) is not a run worth keeping in the history.
        if run.tests:
            _save(args, doc, run)  # the document carries the run's id, or where it was kept
        emit(doc)
    else:
        health = run.health_after or run.health_before
        if quiet:
            render_device_header(result.device, result.chain, health, result.where, result.health_not_read)
        if run.tests:
            render_check(
                result.device, result.chain, run, result.findings, result.summary, show_commands=args.commands
            )
            _save(args, doc, run)  # after the figures: a failing save cannot hide them
        else:
            from disksleuth.present.check_view import render_verdict
            from disksleuth.present.text import console, safe_text

            for what in result.skipped:
                if result.health_not_read and what == f"health: {result.health_not_read}":
                    continue  # the header said it
                console().print(f"skipped {safe_text(what, markup=False)}", markup=False, highlight=False)
            render_verdict(result.findings, result.summary)
        _say_saved(doc)
    return _exit_for(result.findings)


# --- exporter / fleet --------------------------------------------------------------------------


def cmd_exporter(args: argparse.Namespace) -> int:
    from disksleuth import exporter
    from disksleuth.units import parse_positive

    root = _sysfs_root(args)
    max_age = parse_positive(args.health_max_age, "--health-max-age") if args.health_max_age else None
    # Health needs the live machine's smartctl; a captured tree has none.
    cache = None
    if not args.no_health and root == "/":
        cache = exporter.HealthCache(max_age or exporter.DEFAULT_HEALTH_MAX_AGE_S)
    # One reader for the life of the exporter: it remembers the last good read, and never starts a second
    # read while a store that hangs still holds the first.
    reader = exporter.BenchReader(args.db)
    store_down = False

    def take() -> exporter.Snapshot:
        nonlocal store_down
        snap = exporter.snapshot(root, cache, args.db, with_bench=not args.no_bench, bench_reader=reader)
        # Said when the store stops answering and when it answers again, not at every scrape. A store that
        # does not exist yet (nothing saved) is normal, not worth a word: disksleuth_store_up says it.
        down = bool(snap.bench_error) and not snap.store_missing
        if down and not store_down:
            print(f"disksleuth: warning: benchmark figures left out: {_plain(snap.bench_error)}", file=sys.stderr)
        elif store_down and not down:
            print("disksleuth: the results store answers again", file=sys.stderr)
        store_down = down
        return snap

    if args.textfile:
        if cache is not None:
            from disksleuth.probe.block import list_devices

            cache.refresh(exporter.health_paths(list_devices(root)))
        snap = take()
        path = exporter.write_textfile(args.textfile, snap)
        if args.json:
            from disksleuth.present.jsonout import emit

            emit({"exporter": {"textfile": path, "devices": len(snap.disks), "bench_figures": len(snap.bench)}})
        else:
            _say(f"wrote {path}: {len(snap.disks)} devices, {len(snap.bench)} stored benchmark figures")
        return EXIT_OK

    refresher = None
    if cache is not None:
        from disksleuth.probe.block import list_devices

        refresher = exporter.HealthRefresher(cache, lambda: exporter.health_paths(list_devices(root))).start()

    def ready(host: str, port: int) -> None:
        where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/metrics"
        if args.json:
            from disksleuth.present.jsonout import emit

            emit({"exporter": {"listen": f"{host}:{port}", "url": where}})
            sys.stdout.flush()
        else:
            print(f"serving {where} (Ctrl-C stops)", flush=True)

    from disksleuth.bench import sigterm_as_exception

    def log(line: str) -> None:
        print(f"disksleuth exporter: {_plain(line)}", file=sys.stderr, flush=True)

    try:
        with sigterm_as_exception():
            exporter.serve(args.listen, take, ready, log=log)
    finally:
        if refresher:
            refresher.stop()
    return EXIT_OK


def _fleet_report(args: argparse.Namespace) -> int:
    from disksleuth.analysis.fleet import fleet_rows
    from disksleuth.present.fleet_report import render_fleet_report
    from disksleuth.store.latest import latest_runs_per_host_device

    if args.runs:
        raise UsageError("--fleet reports on every host and device; give no run ids with it")
    rows = fleet_rows(latest_runs_per_host_device(args.db, host=args.host))
    text = render_fleet_report(rows)
    _write_output(args.output, text)
    if args.json:
        from disksleuth.present.jsonout import emit

        emit({"report": {"path": args.output, "fleet": True, "rows": len(rows), "bytes": len(text)}})
    else:
        print(f"wrote {args.output} ({len(text) // 1024} KiB, {len(rows)} host/device rows)")
    return EXIT_OK


def cmd_fleet(args: argparse.Namespace) -> int:
    from disksleuth.analysis.fleet import fleet_rows
    from disksleuth.store.latest import latest_runs_per_host_device

    rows = fleet_rows(latest_runs_per_host_device(args.db, host=args.host))
    if args.json:
        from disksleuth.present.fleet_view import fleet_to_dict
        from disksleuth.present.jsonout import emit

        emit({"fleet": fleet_to_dict(rows)})
    else:
        from disksleuth.present.fleet_view import render_fleet

        render_fleet(rows)
    return EXIT_FINDINGS if any(r.worst in ("warn", "critical") for r in rows) else EXIT_OK


# --- parser ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="disksleuth",
        description="How fast is this storage, how fast should it be, and why isn't it?",
        epilog="Global options go before or after the command: disksleuth --json list = disksleuth list --json. "
        "Exit codes: 0 ok, 1 findings at warn or critical (check, bench, explain, health, fleet), "
        "2 usage or environment error "
        '(under --json: {"error": {"code", "message"}} on stdout).',
    )
    parser.add_argument("--version", action="version", version=f"disksleuth {__version__}")
    json_help = "print one JSON document (schema disksleuth/1), errors included"
    no_color_help = "no colour (also: NO_COLOR=1 in the environment)"
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=json_help)
    parser.add_argument("--no-color", action="store_true", default=argparse.SUPPRESS, help=no_color_help)
    parser.add_argument("--db", metavar="URL", default=argparse.SUPPRESS, help=_DB_HELP + "; store commands")
    parser.add_argument(
        "--sysfs-root", metavar="DIR", default=argparse.SUPPRESS, help=_SYSFS_HELP + "; list, links, capture, explain"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name: str, func: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        # argparse %-formats help strings (not descriptions): a bare % would crash --help.
        p = sub.add_parser(name, help=help_text.replace("%", "%%"), description=help_text)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=json_help)
        p.add_argument("--no-color", action="store_true", default=argparse.SUPPRESS, help=no_color_help)
        return p


    p = add("list", cmd_list, "block devices with their link chain and ceilings")
    p.add_argument("--all", action="store_true", help="include partitions and unattached loop/zram devices")
    _sysfs_arg(p)

    p = add("links", cmd_links, "every PCIe function: negotiated vs capable link")
    _sysfs_arg(p)

    p = add("capture", cmd_capture, "bundle the sysfs files disksleuth reads, for bug reports")
    p.add_argument("-o", "--output", required=True, metavar="FILE.tar.gz")
    p.add_argument("--keep-serials", action="store_true", help="do not mask serial numbers")
    _sysfs_arg(p)

    p = add("check", cmd_check, "the main job: link chain, health, a short benchmark, then a verdict")
    p.add_argument("target", nargs="?", metavar="TARGET", help="directory, file or device (default: here)")
    p.add_argument("--profile", default="quick", choices=PROFILE_NAMES, help="test set (default: quick)")
    _bench_args(p)
    p.add_argument("--destructive", action="store_true", help="allow write tests on a device or existing file")
    p.add_argument("--yes", action="store_true", help="do not ask before destructive writes (needed without a TTY)")

    p = add("runs", cmd_runs, "list saved runs, newest first; delete or prune them")
    p.add_argument(
        "action",
        nargs="?",
        choices=("list", "delete", "prune"),
        help="list (the default); delete ID...; prune --older-than AGE and/or --tag T / --host H",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="runs to delete")
    p.add_argument("--device", metavar="D", help="only runs on this device (name, model or target)")
    p.add_argument("--tag", metavar="T", help="only runs with this tag")
    p.add_argument("--host", metavar="H", help="only runs recorded on this host name")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N runs (0: all; default 50)")
    p.add_argument("--older-than", metavar="AGE", help="prune: runs started longer ago than AGE (30d, 12h, 2w)")
    p.add_argument("--dry-run", action="store_true", help="prune: list what would be deleted, delete nothing")
    _db_arg(p)

    p = add("show", cmd_show, "one saved run")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--commands", action="store_true", help="print each test's fio command line")
    _db_arg(p)

    p = add("compare", cmd_compare, "saved runs side by side, with ratios or % of a reference")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("--baseline", metavar="RUN", help="ratios against this run (default: the first)")
    p.add_argument("--relative-to", metavar="RUN", help="every figure as %% of this run (e.g. a RAM disk)")
    p.add_argument("--format", choices=("table", "markdown", "csv", "json"), default="table")
    _db_arg(p)

    p = add("report", cmd_report, "a self-contained HTML report with plots")
    p.add_argument("runs", nargs="*", metavar="RUN")
    p.add_argument("--fleet", action="store_true", help="report on every host and device in the store instead")
    p.add_argument("--host", metavar="H", help="with --fleet: only this host")
    p.add_argument("-o", "--output", required=True, metavar="report.html")
    _db_arg(p)

    p = add("export", cmd_export, "write saved runs to a JSON file (serials stay hashed)")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("-o", "--output", required=True, metavar="FILE.json")
    _db_arg(p)

    p = add("import", cmd_import, "add runs from an export file to the results store")
    p.add_argument("file", metavar="FILE.json")
    _db_arg(p)

    p = add("explain", cmd_explain, "explain a figure measured elsewhere against the device's link chain")
    p.add_argument("device", metavar="DEVICE", help="block device, e.g. nvme0n1 or /dev/sda")
    p.add_argument(
        "--read",
        metavar="RATE",
        help="sequential read, e.g. 373MB/s, 1,243 MB/s, 350MiB/s, 480Mb/s (bits), or a pasted hdparm/fio/dd line",
    )
    p.add_argument("--write", metavar="RATE", help="sequential write")
    p.add_argument("--read-iops", metavar="N", help="4 KiB random read IOPS (any queue depth), e.g. 50,000 or 42.9k")
    p.add_argument("--write-iops", metavar="N", help="4 KiB random write IOPS (any queue depth)")
    _sysfs_arg(p)

    p = add("health", cmd_health, "drive health from smartctl, normalised")
    p.add_argument("device", nargs="?", metavar="DEVICE", help="block device, e.g. /dev/nvme0n1")
    p.add_argument("--from-smartctl", metavar="FILE", help="read a saved `smartctl -x --json` output instead")
    p.add_argument(
        "-A", "--attributes", action="store_true", help="also print the attribute table, as `smartctl -A` does"
    )

    p = add("bench", cmd_bench, "measure a directory, file or block device with fio")
    p.add_argument("target", metavar="TARGET", help="directory (a scratch file is used), file or block device")
    p.add_argument("--profile", default="quick", choices=PROFILE_NAMES, help="test set (default: quick)")
    _bench_args(p)
    p.add_argument("--destructive", action="store_true", help="allow write tests on a device or existing file")
    p.add_argument("--yes", action="store_true", help="do not ask before destructive writes (needed without a TTY)")
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

    p = add(
        "exporter",
        cmd_exporter,
        "Prometheus metrics: each disk with its link chain, ceilings, findings and latest stored benchmark",
    )
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
    _db_arg(p)
    _sysfs_arg(p)

    p = add(
        "fleet",
        cmd_fleet,
        "every host and device in a shared store, worst first, from each one's newest run "
        "(exit 1 when any is at warn or critical)",
    )
    p.add_argument("--host", metavar="H", help="only this host")
    _db_arg(p)
    return parser


_VALUE_OPTIONS = ("--read", "--write", "--read-iops", "--write-iops", "--time", "--size", "--max-time", "--recovery")


def _join_negative_values(argv: list[str]) -> list[str]:
    """argparse takes `--read -5MB/s` for two options; join them so the value gets a proper message."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if (
            argv[i] in _VALUE_OPTIONS
            and i + 1 < len(argv)
            and argv[i + 1][:2].startswith("-")
            and argv[i + 1][1:2].isdigit()
        ):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _plain(message: object) -> str:
    """An error message may quote a file, a tool or a store URL: no control character of it reaches
    stderr, and no password of a URL either."""
    from disksleuth.present.text import safe_text

    text = safe_text(message, markup=False)
    if "://" in text:  # store.db imports SQLAlchemy: only when there is a URL to look at
        from disksleuth.store.db import redact_urls_in

        text = redact_urls_in(text)
    return text


_warned: set[str] = set()


def _warning_line(message: Warning | str, category: type[Warning], *_where: object, **_kw: object) -> None:
    """A library's warning (matplotlib's missing glyph, SQLAlchemy's SAWarning) as one note line, each
    once. Python's own format adds the file, line and source of the library, and the message may quote
    stored text verbatim: it goes through _plain like our own messages (escapes visible, URLs redacted)."""
    text = _plain(message)
    if len(text) > 300:
        text = text[:299] + "…"
    if text in _warned:
        return
    _warned.add(text)
    with contextlib.suppress(OSError, ValueError):
        print(f"disksleuth: note: {category.__name__}: {text}", file=sys.stderr)


def _check_global_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A global option given before a command that has no use for it is an error, not silently ignored."""
    command = parser._subparsers._group_actions[0].choices[args.command]  # type: ignore[union-attr]
    own = {a.dest for a in command._actions}
    for name in GLOBAL_DEFAULTS:
        if hasattr(args, name) and name not in own:
            parser.error(f"--{name.replace('_', '-')} does not apply to '{args.command}'")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # the common probe of scripts: answer before building every parser
        print(f"disksleuth {__version__}")
        return EXIT_OK
    global _json_errors
    _json_errors = "--json" in args_list[: args_list.index("--")] if "--" in args_list else "--json" in args_list
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(args_list))
    if not getattr(args, "func", None):
        if _json_errors:
            message = "no command given (see 'disksleuth --help')"
            print(f"disksleuth: {message}", file=sys.stderr)
            _emit_error("usage", message)
            return EXIT_USAGE
        parser.print_help()
        return EXIT_USAGE
    _check_global_options(parser, args)
    for name, default in GLOBAL_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    if not args.json:
        from disksleuth.present.text import configure

        configure(no_color=args.no_color)

    def fail(code: str, message: str) -> None:
        message = _plain(message)
        print(f"disksleuth: {message}", file=sys.stderr)
        if args.json:
            _emit_error(code, message)

    try:
        with warnings.catch_warnings():  # restored after the command: main() may run many times in one process
            warnings.showwarning = _warning_line
            _warned.clear()
            return args.func(args)
    except DisksleuthError as exc:
        fail(_error_code(exc), str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        fail("interrupted", "interrupted")
        return 128 + 2  # SIGINT
    except Terminated:
        fail("terminated", "terminated")
        return 128 + 15  # SIGTERM
    except BrokenPipeError:
        # Output piped into `head`: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # a bug: still one line, not a traceback, unless asked for
        if os.environ.get("DISKSLEUTH_DEBUG"):
            raise
        fail(
            "internal",
            f"internal error: {type(exc).__name__}: {exc} (rerun with DISKSLEUTH_DEBUG=1 for "
            "details, and please report it)",
        )
        return EXIT_USAGE
    finally:
        while _cleanups:
            _cleanups.pop()()


if __name__ == "__main__":
    raise SystemExit(main())
