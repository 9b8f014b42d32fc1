"""Run documents as files: the export bundle `export` writes and `import` reads (checked deeply before
anything is stored), and a run the store refused, kept in a file `import` reads. Pure: no SQLAlchemy."""

from __future__ import annotations

import json
import os
import stat
import uuid as uuid_mod
from collections.abc import Sequence
from typing import Any

from disksleuth.errors import ParseError, StoreError, UsageError, first_line, json_problem
from disksleuth.store.documents import now_stamp, without_health_serials
from disksleuth.store.urls import data_dir

MAX_EXPORT_BYTES = 256 << 20
# What the decoded values of an export may take in memory, per byte of the file (plus a floor, so a
# small file is never refused for it). A real export takes 2x (as `export` indents it) to 3.6x (compact):
# series points are small dicts of floats. `{}` or a unique key took 25x with json.loads.
EXPORT_VALUES_PER_BYTE = 5
EXPORT_VALUES_FLOOR_BYTES = 64 << 20
_EXPORT_ENVELOPE_DEPTH = 2  # the bundle and its runs list, above each run document


def read_export(text: str | bytes, name: str = "export") -> list[dict[str, Any]]:
    """Run documents from an `export` file, checked deeply before anything is written: what passes
    renders in show, compare and report. Anything else is a ParseError with one line."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    bundle = _decode_export(data, name)
    del data, text  # the caller's bytes are the caller's; read_export_file keeps none
    return _export_docs(bundle, name)


def _decode_export(data: bytes, name: str) -> Any:
    """The export's JSON, decoded within a memory budget (store.boundedjson): a file whose values would
    take far more memory than any export's is refused as soon as that is clear, not after."""
    from disksleuth.doc import SCHEMA
    from disksleuth.doc.validate import MAX_DEPTH
    from disksleuth.store import boundedjson

    not_export = f"{name}: not a disksleuth export (expected schema {SCHEMA} and a runs list)"
    start = boundedjson.skip_ws(data, 0)
    if data[start : start + 1] == b"[":
        raise ParseError(not_export)  # a list is never an export: refused before decoding any of it
    budget = max(EXPORT_VALUES_FLOOR_BYTES, EXPORT_VALUES_PER_BYTE * len(data))
    try:
        return boundedjson.loads(data, budget, MAX_DEPTH + _EXPORT_ENVELOPE_DEPTH)
    except boundedjson.JsonError as exc:
        raise ParseError(f"{name}: not JSON ({json_problem(exc.msg, exc.lineno)})") from None
    except boundedjson.Constant as exc:
        raise ParseError(f"{name}: not JSON ({exc.word} is not a number JSON allows)") from None
    except boundedjson.NotUtf8:
        raise ParseError(f"{name}: not UTF-8 text, not a disksleuth export") from None
    except boundedjson.TooDeep:
        raise ParseError(f"{name}: nested too deeply to be a disksleuth export") from None
    except boundedjson.OverBudget:
        raise ParseError(
            f"{name}: not a disksleuth export (its values would take over {budget >> 20} MiB of memory, "
            f"more than {EXPORT_VALUES_PER_BYTE} times its size)"
        ) from None
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise ParseError(f"{name}: not a disksleuth export ({first_line(exc)[:80]})") from None


def _export_docs(bundle: Any, name: str) -> list[dict[str, Any]]:
    from disksleuth.doc import SCHEMA
    from disksleuth.doc.validate import check_run_doc

    if not isinstance(bundle, dict) or bundle.get("schema") != SCHEMA or not isinstance(bundle.get("runs"), list):
        raise ParseError(f"{name}: not a disksleuth export (expected schema {SCHEMA} and a runs list)")
    docs: list[dict[str, Any]] = bundle["runs"]
    for i, doc in enumerate(docs):
        if not (
            isinstance(doc, dict)
            and isinstance(doc.get("run"), dict)
            and all(k in doc["run"] for k in ("target", "profile", "started_at"))
        ):
            raise ParseError(f"{name}: run {i + 1} is incomplete")
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
    return docs


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_export_file(path: str) -> list[dict[str, Any]]:
    from disksleuth.infile import read_user_file

    data = read_user_file(path, MAX_EXPORT_BYTES, "a disksleuth export")
    bundle = _decode_export(data, path)
    del data  # the file's bytes are not needed beside its values
    return _export_docs(bundle, path)


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
