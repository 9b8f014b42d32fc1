"""Run documents as files: the export bundle `export` writes and `import` reads (checked deeply before
anything is stored), and a run the store refused, kept in a file `import` reads. Pure: no SQLAlchemy."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import uuid as uuid_mod
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from disksleuth.errors import ParseError, StoreError, UsageError
from disksleuth.store.documents import now_stamp, without_health_serials
from disksleuth.store.urls import data_dir


def read_export(text: str | bytes, name: str = "export") -> list[dict[str, Any]]:
    """Run documents from an `export` file's text, each checked deeply: what passes renders in show, compare
    and report. Anything else is a ParseError with one line."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return list(checked_runs(io.BytesIO(data), name))


def checked_runs(stream: BinaryIO, name: str) -> Iterator[dict[str, Any]]:
    """The runs of an export, read from `stream` one at a time (store.exportstream) and each checked as it
    comes: a ParseError names the first run that is not valid, after the ones before it were yielded."""
    from disksleuth.store.exportstream import ExportReader

    for i, doc in enumerate(ExportReader(stream, name).runs()):
        yield _checked_run(doc, i, name)


RUN_KEYS = ("target", "profile", "started_at")  # what every stored run has: its rows need them


def _checked_run(doc: Any, i: int, name: str) -> dict[str, Any]:
    from disksleuth.doc.validate import check_run_doc

    if not isinstance(doc, dict):
        raise ParseError(f"{name}: run {i + 1} is incomplete: it is {type(doc).__name__}, not a run document")
    if not isinstance(doc.get("run"), dict):
        raise ParseError(f'{name}: run {i + 1} is incomplete: it has no "run" section')
    missing = [k for k in RUN_KEYS if k not in doc["run"]]
    if missing:
        raise ParseError(f"{name}: run {i + 1} is incomplete: run.{', run.'.join(missing)} missing")
    try:
        check_run_doc(doc, f"runs[{i}]")
    except RecursionError:
        raise ParseError(f"{name}: run {i + 1} is nested too deeply") from None
    except ParseError as exc:
        raise ParseError(f"{name}: run {i + 1} is not valid: {_clip(str(exc))}") from None
    # An export never carries a serial in the clear; drop one if a hand-made file does.
    doc["device"] = {k: v for k, v in (doc.get("device") or {}).items() if k != "serial"}
    if doc.get("health") is not None:
        doc["health"] = without_health_serials(doc["health"])
    return doc


@contextlib.contextmanager
def open_export(path: str, stdin: BinaryIO | None = None) -> Iterator[Iterator[dict[str, Any]]]:
    """The checked runs of the export file at `path`, or of `stdin` when path is "-", read as they are used."""
    from disksleuth.infile import open_user_file

    if path == "-":
        if stdin is None:
            raise UsageError("import -: no standard input to read the export from")
        yield checked_runs(stdin, "standard input")
        return
    with open_user_file(path, "a disksleuth export") as stream:
        yield checked_runs(stream, path)


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_export_file(path: str) -> list[dict[str, Any]]:
    with open_export(path) as runs:
        return list(runs)


def export_bundle(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from disksleuth.doc import SCHEMA

    return {"schema": SCHEMA, "kind": "export", "exported_at": now_stamp(), "runs": list(docs)}


def write_export(path: str, docs: Sequence[dict[str, Any]]) -> None:
    """An export file that `import` reads back whole: each run meets the bounds import applies (the same
    check_run_doc), or nothing is written and the run is named."""
    from disksleuth.doc.validate import check_run_doc
    from disksleuth.outfile import write_private_text

    for doc in docs:
        try:
            check_run_doc(doc, "run")
        except ParseError as exc:
            shown = doc.get("run", {}).get("id")
            raise UsageError(
                f"run {shown} cannot be exported: import would refuse it ({_clip(str(exc))}); nothing written"
            ) from None
    write_private_text(path, json.dumps(export_bundle(docs), indent=1))


def unsaved_dirs() -> tuple[str, str]:
    """Where keep_unsaved puts a run the store refused: the data directory's, else the temporary one's."""
    import tempfile

    return os.path.join(data_dir(), "unsaved"), os.path.join(tempfile.gettempdir(), f"disksleuth-unsaved-{os.getuid()}")


def is_unsaved_file(path: str) -> bool:
    """Is this a file keep_unsaved wrote (it lies directly in one of its directories)?"""
    folder = os.path.dirname(os.path.realpath(path))
    return any(folder == os.path.realpath(d) for d in unsaved_dirs())


def keep_unsaved(doc: dict[str, Any], tags: Sequence[str], note: str | None) -> str:
    """A run the store refused, kept as an export file (0600, in a 0700 directory) that `disksleuth import`
    reads: under the data directory (~/.local/share/disksleuth/unsaved), else the temporary directory."""
    import time

    run = {**doc["run"], "tags": list(tags), "note": note}
    bundle = export_bundle([{**doc, "run": run}])
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"run-{stamp}-{(run.get('uuid') or uuid_mod.uuid4().hex)[:8]}.json"
    problems = []
    for folder in unsaved_dirs():
        path = os.path.join(folder, name)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                problems.append(f"{folder}: not a private directory of ours")  # e.g. planted in /tmp by another user
                continue
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(bundle, fh, indent=1, default=str)
            return path
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror}")
    raise StoreError("cannot keep the run in a file either (" + "; ".join(problems) + ")")
