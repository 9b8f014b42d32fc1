"""Import of hostile files: every input gives runs or the library's ParseError, one line and exit 2;
every run that passes renders in show, compare and report (property tests with Hypothesis)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tempfile
import uuid

import pytest
from conftest import sample_export
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_store import _doc

from disksleuth.cli import main
from disksleuth.errors import ParseError
from disksleuth.store.db import Store
from disksleuth.store.files import read_export

BASE = _doc(373.0, 2000.0, "Samsung SSD 970 EVO Plus")
BASE["health"]["before"] = {"temperature_c": 41.0, "percentage_used": 3, "critical_warning": [], "throttle": {"a": 1}}
BASE["health"]["changes"] = {"media_errors": [0, 1]}
BASE["run"]["uuid"] = "0b7f3c8e-2a41-4c71-9d53-6f1e2d3c4b5a"


def _bundle_text(*docs: dict) -> str:
    return json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": list(docs)})


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
    return code, out.getvalue(), err.getvalue()


# --- the hostile inputs the fuzzing found, one by one ------------------------------------------


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE = {
    "deep nesting": '{"schema": "disksleuth/1", "runs": ' + _nested(100_000) + "}",
    "deep nesting in a run": _bundle_text(BASE).replace('"notes": ["warmed up"]', '"notes": ' + _nested(500), 1),
    "NaN": _bundle_text(BASE).replace("373.0", "NaN", 1),
    "Infinity": _bundle_text(BASE).replace("373.0", "-Infinity", 1),
    "4,301-digit integer": _bundle_text(BASE).replace("268435456", "1" * 4301, 1),
    "integer past 64 bits": _bundle_text(BASE).replace("268435456", str(2**64), 1),
    "string for a number": _bundle_text(BASE).replace("373.0", '"fast"', 1),
    "number for a string": _bundle_text(BASE).replace('"SEQ1M_Q8T1_read"', "42", 1),
    "object for a list": _bundle_text(BASE).replace('"tests": [', '"tests": {"a": [', 1).replace(
        '"reference": []', '"reference": []}', 1
    ),
    "negative size": _bundle_text(BASE).replace('"bs_bytes": 1048576', '"bs_bytes": -1', 1),
    "series point without time": _bundle_text(BASE).replace('"t_s": 1.0, ', "", 1),
    "unknown severity": _bundle_text(BASE).replace('"severity": "info"', '"severity": "fatal"', 1),
    "bad start time": _bundle_text(BASE).replace("2026-11-21T10:00:00+0000", "yesterday", 1),
    "bad uuid": _bundle_text(BASE).replace(BASE["run"]["uuid"], "not-a-uuid", 1),
    "host is a list": _bundle_text(BASE).replace('"host": {', '"host": [{', 1).replace('"0.1.0"}', '"0.1.0"}]', 1),
    "hop ceiling a string": _bundle_text(BASE).replace('"ceiling_mbps": 3544.6', '"ceiling_mbps": "x"', 1),
    "not UTF-8": None,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_import_is_one_line(cli, tmp_path, name):
    """Each of these was accepted and later crashed show/compare/report, or crashed import itself."""
    path = tmp_path / "hostile.json"
    if HOSTILE[name] is None:
        path.write_bytes(b'{"schema": "disksleuth/1", "runs": ["\xff\xfe"]}')
    else:
        assert HOSTILE[name] != _bundle_text(BASE)  # the substitution happened
        path.write_text(HOSTILE[name])
    db = f"sqlite:///{tmp_path}/r.sqlite"
    res = cli("import", str(path), "--db", db)
    assert res.code == 2, res.out
    assert res.err.count("\n") == 1 and "internal error" not in res.err and len(res.err) < 400, res.err
    assert not os.path.exists(tmp_path / "r.sqlite") or Store(db).count() == 0


def test_the_base_document_imports_and_renders(cli, tmp_path):
    """The control for the cases above: unmutated, the same file imports and renders."""
    path = tmp_path / "ok.json"
    path.write_text(_bundle_text(BASE))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    assert cli("import", str(path), "--db", db).code == 0
    assert cli("show", "1", "--db", db).code == 0


# --- properties ------------------------------------------------------------------------------

_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63 - 2, max_value=2**66),
    st.floats(),
    st.floats(min_value=-1e-300, max_value=1e-300),
    st.text(max_size=20),
    st.sampled_from(["[/]", "[bold red]x", "\x1b]0;owned\x07", "", "-1", "2026-11-21T10:00:00+0000", "warn"]),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


_BASE_PATHS = [p for p in _paths(BASE) if p]


def _like(value: object) -> st.SearchStrategy:
    """A value of the same JSON type, anywhere in its range: most mutants stay valid, so rendering is tested."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(min_value=-(2**64), max_value=2**64)
    if isinstance(value, float):
        return st.floats(allow_nan=False, allow_infinity=False) | st.floats(min_value=0, max_value=1e-300)
    if isinstance(value, str):
        return st.text(max_size=40) | st.sampled_from(["[/]", "[link=x]y", "\x1b[2J", "%s%n", "<script>"])
    return _values


@st.composite
def mutated_docs(draw: st.DrawFn) -> dict:
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_BASE_PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            old = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation replaced what this path went through
        action = draw(st.sampled_from(["like", "like", "like", "any", "delete"]))
        if action == "delete":
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(_like(old) if action == "like" else _values)
    if isinstance(doc.get("run"), dict) and draw(st.booleans()):
        doc["run"]["uuid"] = str(draw(st.uuids()))  # a fresh identity, so the run is stored, not skipped
    return doc


def _text_of(doc: dict) -> str:
    try:
        return json.dumps({"schema": "disksleuth/1", "runs": [doc]}, allow_nan=True)
    except ValueError:  # an integer json itself cannot print (past 4,300 digits)
        return "{}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")), mutated_docs()))
def test_any_input_gives_runs_or_a_parse_error(raw):
    text = raw if isinstance(raw, str) else _text_of(raw)
    try:
        docs = read_export(text, "x.json")
    except ParseError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400
        return
    assert isinstance(docs, list) and all(isinstance(d, dict) for d in docs)


@pytest.fixture(scope="module")
def render_store():
    folder = tempfile.mkdtemp(prefix="disksleuth-props-")
    url = f"sqlite:///{folder}/props.sqlite"
    with Store(url) as store:
        base_id = store.save(copy.deepcopy(BASE) | {"run": {**BASE["run"], "uuid": None}})
    yield url, base_id
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(mutated_docs())
def test_every_imported_run_renders(render_store, doc):
    """What import accepts, show (text and --json), compare (every format, ratios and % of a reference)
    and the HTML report render without an error."""
    url, base_id = render_store
    if isinstance(doc.get("run"), dict) and isinstance(doc["run"].get("uuid"), str):
        # Each example a run of its own: the store outlives the examples, and a uuid met before (BASE's, or one
        # Hypothesis drew again) made import skip the run and the test render an earlier example's instead, so
        # a replayed example failed where it passed alone. Skipping a known run is tested in test_store_import.
        doc["run"]["uuid"] = str(uuid.uuid4())
    try:
        docs = read_export(_text_of(doc), "x.json")
    except ParseError:
        return
    with Store(url) as store:
        done = store.import_runs(docs)
        (run_id,) = [*done.new_ids, *done.skipped]
    os.environ["DISKSLEUTH_DEBUG"] = "1"  # an internal error raises, so Hypothesis shows where
    try:
        for argv in (
            ("show", str(run_id)),
            ("show", str(run_id), "--json", "--commands"),
            ("compare", str(base_id), str(run_id)),
            ("compare", str(run_id), str(base_id), "--format", "markdown"),
            ("compare", str(run_id), str(base_id), "--format", "csv"),
            ("compare", str(base_id), str(run_id), "--relative-to", str(run_id), "--format", "json"),
            ("runs", "--limit", "3"),
        ):
            code, out, err = _run(*argv, "--db", url)
            assert code == 0, (argv, err)
        from disksleuth.present.report import render_report

        with Store(url, create=False) as store:
            loaded = [store.load(base_id), store.load(run_id)]
        assert "<html" in render_report(loaded)
    finally:
        del os.environ["DISKSLEUTH_DEBUG"]


def test_an_absurd_figure_is_refused_at_import_so_every_run_renders(cli, tmp_path) -> None:
    """read_mbps 1e308 passed import, then `report` died on matplotlib's axis limits."""

    def mutate(doc: dict) -> None:
        doc["tests"][0]["read_mbps"] = 1e308

    res = cli("import", sample_export(tmp_path, mutate), "--db", f"sqlite:///{tmp_path}/a.sqlite")
    assert res.code == 2 and "implausibly large" in res.err and len(res.err.strip().splitlines()) == 1
