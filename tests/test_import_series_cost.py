"""Import of real runs with their series (issue 37): a series point costs no Python call of its own.

A real quick-profile run (benchmarks/quick_run_series.json: 4 tests of 31-32 points) imported at 329 runs/s,
against 1,718/s for runs of one point a test: per point, validation called a checker per field and SQLAlchemy
built a parameter dict through its bind processors. Counted, not timed: the Python-level calls (cProfile, not
counting C functions) of importing the same runs with 3x the points, against the runs as they are."""

from __future__ import annotations

import copy
import cProfile
import json
import os
import pstats
from typing import Any

import sqlalchemy as sa

from disksleuth.run.history import import_runs
from disksleuth.store.db import Store

HERE = os.path.dirname(os.path.abspath(__file__))
REAL_RUN = os.path.join(os.path.dirname(HERE), "benchmarks", "quick_run_series.json")
RUNS = 20


def _runs(stretch: int) -> list[dict[str, Any]]:
    with open(REAL_RUN) as fh:
        base = json.load(fh)["runs"][0]
    docs = []
    for i in range(RUNS):
        doc = copy.deepcopy(base)
        doc["run"].pop("id", None)
        doc["run"]["uuid"] = f"00000000-0000-4000-8000-{i:012d}"
        doc["run"]["host"]["hostname"] = f"host-{i}"
        for t in doc["tests"]:
            points = t["series"]
            span = points[-1]["t_s"] + 1.0
            t["series"] = [{**p, "t_s": round(p["t_s"] + k * span, 3)} for k in range(stretch) for p in points]
        docs.append(doc)
    return docs


def _bundle(tmp_path: Any, name: str, docs: list[dict[str, Any]]) -> str:
    path = os.path.join(tmp_path, name)
    with open(path, "w") as fh:
        json.dump({"schema": "disksleuth/1", "kind": "export", "runs": docs}, fh, indent=1)
    return path


def _python_calls(db: str, path: str) -> int:
    prof = cProfile.Profile()
    prof.enable()
    done = import_runs(db, path)
    prof.disable()
    assert len(done.new_ids) == RUNS
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]  # (file, line, name): (calls, ...)
    return sum(entry[1] for (filename, _line, _name), entry in stats.items() if filename != "~")


def test_a_series_point_costs_no_python_call(tmp_path):
    plain, stretched = _runs(1), _runs(3)
    points = sum(len(t["series"]) for d in plain for t in d["tests"])
    added = sum(len(t["series"]) for d in stretched for t in d["tests"]) - points
    assert points > 2000  # the real run's series: ~127 points a run
    # Warm: first imports, lazy imports and the checkers' caches, outside the count.
    _python_calls(f"sqlite:///{tmp_path}/warm.sqlite", _bundle(tmp_path, "warm.json", _runs(1)))
    base = _python_calls(f"sqlite:///{tmp_path}/a.sqlite", _bundle(tmp_path, "a.json", plain))
    more = _python_calls(f"sqlite:///{tmp_path}/b.sqlite", _bundle(tmp_path, "b.json", stretched))
    # Before: ~20 calls a point (a checker per field and per point, SQLAlchemy's parameters per row).
    assert (more - base) / added < 0.5, f"{more - base} Python calls for {added} more points"
    with Store(f"sqlite:///{tmp_path}/b.sqlite") as store:
        loaded = store.load(1)
    assert loaded["tests"][0]["series"] == stretched[0]["tests"][0]["series"]


def test_an_import_runs_a_few_statements_a_batch_and_none_again(tmp_path):
    """One INSERT per table per batch, in one transaction a batch; a second import of the file stores
    nothing (each run is known by its uuid)."""
    path = _bundle(tmp_path, "a.json", _runs(1))
    db = f"sqlite:///{tmp_path}/a.sqlite"
    with Store(db):
        pass
    statements: list[tuple[str, bool]] = []

    def seen(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:
        statements.append((statement.split()[0].upper(), executemany))

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
    try:
        first = import_runs(db, path)
        count_first = len(statements)
        second = import_runs(db, path)
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", seen)
    assert len(first.new_ids) == RUNS and not second.new_ids and len(second.skipped) == RUNS
    inserts = [s for s in statements[:count_first] if s[0] == "INSERT"]
    assert len(inserts) <= 5, inserts  # runs, tests, series, findings, tags: whatever the number of runs
    assert not [s for s in statements[count_first:] if s[0] == "INSERT"]
    with Store(db) as store:
        assert store.count() == RUNS


# --- a run as `export` writes it is decoded by json alone: the same runs, lines and refusals -----------------


def _export_text(docs: list[dict[str, Any]]) -> bytes:
    return json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": docs}, indent=1).encode()


def test_an_error_after_runs_read_whole_names_its_own_line() -> None:
    from disksleuth.errors import ParseError
    from disksleuth.store.files import read_export

    docs = _runs(1)[:3]
    text = _export_text(docs)
    broken = text.replace(b'"host-2"', b'"host-2" "x"', 1)  # run 3: a missing comma
    line = broken[: broken.index(b'"host-2" "x"')].count(b"\n") + 1
    try:
        read_export(broken, "x.json")
    except ParseError as exc:
        assert str(exc).startswith(f"x.json: not JSON (Expecting ',' delimiter at line {line}"), str(exc)
    else:
        raise AssertionError("a broken run 3 was read")
    assert [d["run"]["uuid"] for d in read_export(text, "x.json")] == [d["run"]["uuid"] for d in docs]


def test_a_run_too_deep_is_refused_when_indented_as_export_writes_it() -> None:
    from disksleuth.errors import ParseError
    from disksleuth.store.files import read_export

    doc = _runs(1)[0]
    deep: Any = 1
    for _ in range(40):
        deep = {"a": deep}
    doc["run"]["extra"] = deep
    try:
        read_export(_export_text([doc]), "x.json")
    except ParseError as exc:
        assert "\n" not in str(exc) and "deep" in str(exc), str(exc)
    else:
        raise AssertionError("a run 40 levels deep was read")


def test_a_hand_indented_export_whose_braces_lie_reads_the_same_runs() -> None:
    """A closing brace at the left edge inside a run (not where export puts a run's end): read whole by the
    scan, as before."""
    from disksleuth.store.files import read_export

    docs = _runs(1)[:2]
    text = _export_text(docs)
    lying = text.replace(b'\n    "link": {', b'\n    "pad": {\n}, "link": {', 1)
    assert lying != text
    got = read_export(lying, "x.json")
    assert [d["run"]["uuid"] for d in got] == [d["run"]["uuid"] for d in docs]
    assert got[0]["device"]["pad"] == {} and got[0]["device"]["link"] == docs[0]["device"]["link"]
