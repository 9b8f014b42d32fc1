"""The results store's commands: save a run (never losing it), runs, show, compare, report, export, import."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

from disksleuth.analysis.baseline import FASTER, SLOWER, Baseline, History
from disksleuth.analysis.compare import Comparison, compare
from disksleuth.analysis.pathdiff import baseline_figures, diff_pair
from disksleuth.doc.arrays import array_parts
from disksleuth.doc.baseline import baseline_to_dict
from disksleuth.doc.compare import pair_to_dict
from disksleuth.doc.run import with_sustained
from disksleuth.errors import DisksleuthError, UsageError
from disksleuth.model.run import Run
from disksleuth.run.baseline import baseline_of, parse_choice, report_histories
from disksleuth.run.selection import parse_age_s, parse_run_ids
from disksleuth.store.baseline import finding_codes
from disksleuth.store.db import Store
from disksleuth.store.files import is_unsaved_file, keep_unsaved, open_export, write_export


@dataclass(frozen=True)
class Saved:
    """What became of a run's save: stored (`run` carries its id), or kept in a file, or lost with a reason."""

    run: Run | None  # None for a run without the model (bench --members)
    error: str | None = None  # why it was not stored
    kept_in: str | None = None  # the file `disksleuth import` reads, when the store failed
    keep_error: str | None = None  # why it could not even be kept


def save_run(
    doc: dict[str, Any],
    run: Run | None,
    db: str | None,
    *,
    tags: Sequence[str] = (),
    note: str | None = None,
    describe: Callable[[object], str] = str,
) -> Saved:
    """Store the run (one transaction) and fill doc["run"]["id"] and doc["store"]. A store problem never loses
    the measurement: the run is kept in a file `disksleuth import` reads. `describe` turns an exception into
    the words shown (the CLI masks URLs and control characters)."""
    tags = list(dict.fromkeys(tags))
    doc["run"]["uuid"] = doc["run"].get("uuid") or str(uuid.uuid4())
    try:
        with Store(db) as store:
            run_id = store.save(doc, tags=tags, note=note)
    except Exception as exc:  # whatever failed, the measurement must survive it
        reason = describe(exc) if isinstance(exc, DisksleuthError) else f"{type(exc).__name__}: {describe(exc)}"
        try:
            kept = keep_unsaved(doc, tags, note)
        except DisksleuthError as keep_exc:
            doc["store"] = {"saved": False, "error": reason, "kept_in": None}
            return Saved(run, reason, None, describe(keep_exc))
        doc["store"] = {"saved": False, "error": reason, "kept_in": kept}
        return Saved(run, reason, kept)
    doc["run"]["id"] = run_id
    doc["run"]["tags"] = tags
    doc["run"]["note"] = note
    doc["store"] = {"saved": True, "id": run_id}
    return Saved(replace(run, id=run_id) if run is not None else None)


@dataclass(frozen=True)
class RunsPage:
    rows: list[dict[str, Any]]
    total: int  # runs that match
    stored: int  # runs in the store (when none match)


def list_runs(db: str | None, *, device: str | None, tag: str | None, host: str | None, limit: int) -> RunsPage:
    if limit < 0:
        raise UsageError(f"--limit {limit}: give 0 (all runs) or more")
    with Store(db, create=False, read_only=True) as store:
        rows, total = store.list_runs(device=device, tag=tag, host=host, limit=limit or None)
        stored = store.count() if not rows else total
        # How each run compared with its drive's earlier runs when it was measured (its stored findings).
        judged = finding_codes(store, [r["id"] for r in rows], (SLOWER, FASTER))
    for r in rows:
        codes = judged.get(r["id"], set())
        r["baseline"] = "slower" if SLOWER in codes else "faster" if FASTER in codes else None
    return RunsPage(rows, total, stored)


def delete_runs(db: str | None, ids_text: Sequence[str]) -> list[int]:
    ids = parse_run_ids(ids_text)
    with Store(db, create=False) as store:
        return store.delete(ids)


def prune_runs(
    db: str | None,
    *,
    older_than: str | None,
    tag: str | None,
    host: str | None,
    dry_run: bool,
    agree: Callable[[list[tuple[int, str]]], list[int]] | None = None,
    keep: int | None = None,
) -> list[int]:
    """Delete the runs that match. `agree` (unless a dry run) is shown what would go, (id, started_at) oldest
    first, and returns the ids it agrees to delete; only those that still match are deleted."""
    older = parse_age_s(older_than) if older_than else None
    with Store(db, create=False) as store:
        agreed = None
        if agree is not None and not dry_run:
            agreed = agree(store.prunable(older_than_s=older, tag=tag, host=host, keep=keep))
        return store.prune(older_than_s=older, tag=tag, host=host, dry_run=dry_run, within=agreed, keep=keep)


def load_runs(db: str | None, ids_text: Sequence[str], *, with_series: bool = True) -> list[dict[str, Any]]:
    """The runs with these ids; with none given, the newest (the one `runs` lists first) alone."""
    ids = parse_run_ids(ids_text)
    with Store(db, create=False, read_only=True) as store:
        if not ids:
            newest, _total = store.list_runs(limit=1)
            if not newest:
                raise UsageError("no runs yet: `disksleuth check` or `disksleuth bench DIR` saves one")
            ids = [int(newest[0]["id"])]
        return [array_parts(with_sustained(store.load(i, with_series=with_series))) for i in ids]


def load_report(
    db: str | None, run_texts: Sequence[str]
) -> tuple[list[dict[str, Any]], list[History]]:
    """`report`: the runs (the newest without `run_texts`) and each drive's history up to them."""
    docs = load_runs(db, run_texts)
    return docs, report_histories(db, docs)


def show_run(db: str | None, run_text: str | None, baseline: str | None = None) -> dict[str, Any]:
    """One stored run (the newest without `run_text`), with its figures against the drive's runs stored
    before it (`baseline`: --baseline)."""
    choice = parse_choice(baseline)
    (doc,) = load_runs(db, [run_text] if run_text else [])
    if doc["run"].get("kind") == "members":  # members read alone and together: no figure of a drive to compare
        doc["baseline"] = None
        return doc
    with Store(db, create=False, read_only=True) as store:
        judged = baseline_of(store, doc, choice)
        doc["baseline"] = baseline_to_dict(judged)
        doc["comparison"] = _against_baseline(store, doc, judged)
    return doc


def _against_baseline(store: Store, doc: dict[str, Any], judged: Baseline) -> dict[str, Any] | None:
    """What changed on the path from the baseline to the run and whether it explains the figures, in
    compare's words; None when there was no baseline. The path is diffed against the baseline's newest
    run: for median:N the runs before it were measured on the path that run still had."""
    if judged.status != "compared" or not judged.figures:
        return None
    base_id = judged.choice.run_id if judged.choice.kind == "run" else judged.figures[0].run_ids[0]
    assert base_id is not None
    base_doc = store.load(base_id, with_series=False)
    return pair_to_dict(diff_pair(base_doc, doc, baseline_figures(judged.figures, doc)))


def compare_runs(
    db: str | None, runs: Sequence[str], *, baseline: str | None = None, relative_to: str | None = None
) -> Comparison:
    docs = load_runs(db, runs, with_series=False)
    ids = [d["run"]["id"] for d in docs]
    base_index = 0
    if baseline:
        (base_id,) = parse_run_ids([baseline])
        if base_id not in ids:
            raise UsageError(f"--baseline {base_id} is not one of the compared runs")
        base_index = ids.index(base_id)
    reference = None
    if relative_to:
        (ref_id,) = parse_run_ids([relative_to])
        reference = (
            next((d for d in docs if d["run"]["id"] == ref_id), None)
            or load_runs(db, [str(ref_id)], with_series=False)[0]
        )
        # A reference with no test in common gives a table of "—" under "Figures are % of run #N": say so instead.
        ref_tests = {t["id"] for t in reference.get("tests") or []}
        if not any(t["id"] in ref_tests for d in docs for t in d.get("tests") or []):
            runs_text = ", ".join(f"#{i}" for i in ids)
            raise UsageError(
                f"--relative-to {ref_id}: run #{ref_id} has no test in common with {runs_text}; nothing to compare"
            )
    return compare(docs, baseline=base_index, reference=reference)


def export_runs(db: str | None, runs: Sequence[str], output: str) -> list[dict[str, Any]]:
    docs = load_runs(db, runs)
    write_export(output, docs)
    return docs


def _new_sqlite_file(db: str | None) -> str | None:
    """The SQLite file the store `db` would be made in, when it does not exist yet."""
    import os

    import sqlalchemy as sa

    from disksleuth.store.engine import sqlite_path
    from disksleuth.store.urls import default_url, resolve_url

    url = sa.engine.make_url(resolve_url(db if db is not None else default_url()))
    path = sqlite_path(url) if url.get_backend_name() == "sqlite" else None
    return path if path and not os.path.lexists(path) else None


@dataclass(frozen=True)
class Imported:
    new_ids: Sequence[int] = ()
    skipped: Sequence[int] = ()  # already stored
    # A file that keep_unsaved wrote, all of whose runs are now in the store: it may be deleted. It is left
    # for the person to delete, never removed here: one wrong guess about a file would lose a measurement.
    stored_unsaved_file: str | None = None


def import_runs(db: str | None, path: str, stdin: BinaryIO | None = None) -> Imported:
    """The runs of an export file (or of `stdin` when path is "-"), read and stored as they come. A bad file never
    leaves a new store behind (issue 40): the first run is checked before the store is opened, and before a new
    store file is made, the whole file is (a second pass; standard input is read once: only its first run). A store
    is never removed after the fact: another process may have opened it meanwhile and be saving a run."""
    import itertools

    with open_export(path, stdin) as runs:
        first = next(runs, None)
        if first is not None and path != "-" and _new_sqlite_file(db) is not None:
            with open_export(path) as whole:
                for _ in whole:  # one run at a time: memory stays bounded as in the import itself
                    pass
        with Store(db, create=True) as store:
            done = store.import_runs(itertools.chain([first], runs) if first is not None else iter(()))
    # Every run of the file is stored (new, or found by its identity): the import did not raise.
    stored = len(done.new_ids) + len(done.skipped)
    kept = path if stored and path != "-" and is_unsaved_file(path) else None
    return Imported(done.new_ids, done.skipped, kept)
