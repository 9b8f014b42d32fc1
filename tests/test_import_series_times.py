"""A series that repeats a time (issue 35, defect 9): the store keeps one point per test and `t_s`, and an import
whose series repeated one passed validation, then failed on the store's UNIQUE constraint ("cannot write to the
results store ...: UNIQUE constraint failed"), blaming the store. Now validation names the run and the field in
one line, exit 2, and nothing is stored."""

from __future__ import annotations

import json
import uuid

import pytest
from test_store import _doc

from disksleuth.store.db import Store


def _bundle(*docs: dict) -> str:
    return json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": list(docs)})


@pytest.mark.parametrize(
    "where,again",
    [
        ("tests", 1.0),  # the first point's time, as a float
        ("tests", 1),  # the same time as a whole number: the store's column is a float
        ("reference", 1.0),
    ],
)
def test_a_repeated_time_in_a_series_is_refused_naming_the_run_and_field(cli, tmp_path, where, again) -> None:
    fine, bad = _doc(100.0, 1000.0, "fine"), _doc(100.0, 1000.0, "bad")
    for doc in (fine, bad):  # two runs, not one twice (same start, host, target and profile)
        doc["run"]["uuid"] = str(uuid.uuid4())
    if where == "reference":
        bad["reference"] = [json.loads(json.dumps(bad["tests"][0]))]
    bad[where][0]["series"][2]["t_s"] = again
    path = tmp_path / "dup.json"
    path.write_text(_bundle(fine, bad))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    res = cli("import", str(path), "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert f"{path}: run 2 is not valid: runs[1].{where}[0].series[2].t_s: {again} again (as series[0])" in res.err
    assert "results store" not in res.err and "UNIQUE" not in res.err
    with Store(db) as store:
        assert store.count() == 0  # all or none: the good run before it is not kept either


def test_the_same_time_in_two_tests_is_fine(cli, tmp_path) -> None:
    doc = _doc(100.0, 1000.0, "x")
    doc["tests"][1]["series"] = json.loads(json.dumps(doc["tests"][0]["series"]))  # one clock per test
    path = tmp_path / "ok.json"
    path.write_text(_bundle(doc))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    assert cli("import", str(path), "--db", db).code == 0
    with Store(db) as store:
        assert [len(t["series"]) for t in store.load(1)["tests"]] == [3, 3]
