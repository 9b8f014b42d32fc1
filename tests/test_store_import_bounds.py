"""`import` within a small multiple of the file's size in memory, and one set of bounds on both sides:
what import accepts, export writes and import accepts again.

Memory is measured, not estimated: each import runs in a fresh process whose peak resident set
(getrusage of a child) is compared with the same command on a tiny file. Before, json.loads built the
whole file first: 20 MB of `{}` or of unique keys took 12 to 25 times the file (2.56 GB for 100 MB)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from test_store import _doc
from test_store_import_props import mutated_docs

from disksleuth.errors import ParseError
from disksleuth.store.db import Store
from disksleuth.store.files import read_export, read_export_file, write_export

JUNK_BYTES = 20_000_000
# Peak RSS above a tiny import, per byte of the file: the values are budgeted at 5 bytes per byte
# (store.files.EXPORT_VALUES_PER_BYTE), the file itself is 1 more, the rest is the allocator's slack.
PEAK_PER_FILE_BYTE = 7

_PEAK_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "res = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(res.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    "sys.stderr.write(res.stderr)\n"
)


def _import_peak(path: str, db: str) -> tuple[int, int, str]:
    """(exit code, peak resident bytes, stderr) of `disksleuth import PATH` in a process of its own."""
    argv = [sys.executable, "-c", _PEAK_OF_CHILD, sys.executable, "-m", "disksleuth", "import", path, "--db", db]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    code, peak = res.stdout.split()
    return int(code), int(peak), res.stderr


def _bundle_text(*docs: dict) -> str:
    return json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": list(docs)})


def _junk_export(path: str, item: str, size: int) -> None:
    """A valid-looking export whose one run carries `size` bytes of `item` repeated under an unknown key."""
    head = _bundle_text(_doc(1.0, 1.0, "x"))[: -len("}]}")] + ', "junk": ['
    count = (size - len(head)) // (len(item) + 1)
    with open(path, "w") as fh:
        fh.write(head + ",".join([item] * count) + "]}]}")


def _junk_keys_export(path: str, size: int) -> None:
    head = _bundle_text(_doc(1.0, 1.0, "x"))[: -len("}]}")] + ', "junk": {'
    count = (size - len(head)) // 12
    with open(path, "w") as fh:
        fh.write(head + ",".join(f'"k{i:07d}":0' for i in range(count)) + "}}]}")


def _real_export(path: str, size: int) -> None:
    """Runs with long per-second series, written compactly (a real export is indented, so smaller in
    memory per byte): the densest file of real values an export holds."""
    docs, written = [], 0
    while written < size:  # a running total: summing every document again each round took 16 s of 21
        doc = _doc(100.0, 1000.0, "real", started=f"2026-01-01T00:00:{len(docs) % 60:02d}+0000")
        doc["run"]["uuid"] = str(uuid.uuid4())
        doc["tests"][0]["series"] = [
            {"t_s": 1.0 + i, "read_mbps": 99.5 + i % 7, "write_mbps": 0.0, "iops": 95.0 + i % 11, "temperature_c": 40.5}
            for i in range(5000)
        ]
        docs.append(doc)
        written += len(json.dumps(doc, separators=(",", ":")))
    with open(path, "w") as fh:
        json.dump({"schema": "disksleuth/1", "kind": "export", "runs": docs}, fh, separators=(",", ":"))


@pytest.fixture(scope="module")
def tiny_import_peak() -> int:
    with tempfile.TemporaryDirectory(prefix="disksleuth-import-") as folder:
        path = os.path.join(folder, "tiny.json")
        with open(path, "w") as fh:
            fh.write(_bundle_text(_doc(1.0, 1.0, "x")))
        code, peak, err = _import_peak(path, f"sqlite:///{folder}/r.sqlite")
        assert code == 0, err
        return peak


@pytest.mark.slow
@pytest.mark.parametrize(
    "shape",
    ["unique keys", "empty objects", "empty lists", "short strings"],
)
def test_a_junk_export_is_refused_within_a_small_multiple_of_its_size(tmp_path, tiny_import_peak, shape):
    path = str(tmp_path / "junk.json")
    if shape == "unique keys":
        _junk_keys_export(path, JUNK_BYTES)
    else:
        _junk_export(path, {"empty objects": "{}", "empty lists": "[]", "short strings": '"ab"'}[shape], JUNK_BYTES)
    size = os.path.getsize(path)
    code, peak, err = _import_peak(path, f"sqlite:///{tmp_path}/r.sqlite")
    assert code == 2 and err.count("\n") == 1 and "not a disksleuth export" in err, err
    assert peak - tiny_import_peak < PEAK_PER_FILE_BYTE * size, f"{shape}: {(peak - tiny_import_peak) / size:.1f}x"
    assert not os.path.exists(tmp_path / "r.sqlite") or Store(f"sqlite:///{tmp_path}/r.sqlite").count() == 0


@pytest.mark.slow
def test_a_real_export_of_the_same_size_imports_within_the_same_bound(tmp_path, tiny_import_peak):
    path = str(tmp_path / "real.json")
    _real_export(path, JUNK_BYTES)
    size = os.path.getsize(path)
    code, peak, err = _import_peak(path, f"sqlite:///{tmp_path}/r.sqlite")
    assert code == 0, err
    assert peak - tiny_import_peak < PEAK_PER_FILE_BYTE * size, f"{(peak - tiny_import_peak) / size:.1f}x"
    with Store(f"sqlite:///{tmp_path}/r.sqlite") as store:
        assert store.count() > 1 and len(store.load(1)["tests"][0]["series"]) == 5000


def test_a_whole_number_past_the_figure_bound_is_refused_on_import_and_on_export(cli, tmp_path):
    """write_iops 9223372036854775807 fits 64 bits, so import took it; stored as a float it became
    9.2e18, which its own export then refused to re-import, blocking the whole all-or-none file. Now
    import refuses it; a store that holds one (from before) names it when exporting, writing nothing."""
    doc = _doc(1.0, 1.0, "x")
    doc["tests"][0]["write_iops"] = 9223372036854775807
    path = tmp_path / "big.json"
    path.write_text(_bundle_text(doc))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    res = cli("import", str(path), "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1 and "write_iops: implausibly large" in res.err, res.err
    with Store(db) as store:  # as `import` stored it before
        stored = store.save(doc)
        store.save(_doc(2.0, 2.0, "fine"))
    out = tmp_path / "e.json"
    res = cli("export", str(stored), "2", "-o", str(out), "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert f"run {stored} cannot be exported" in res.err and "write_iops" in res.err
    assert not out.exists()
    assert cli("export", "2", "-o", str(out), "--db", db).code == 0
    assert len(read_export_file(str(out))) == 1


def test_a_null_kind_is_stored_as_bench_and_exported_back(cli, tmp_path):
    """The check accepts "kind": null (an optional string), and the store then refused the run (NOT NULL):
    found by the property below. Null reads as the default, as the run's legacy identity reads it."""
    doc = _doc(1.0, 1.0, "x")
    doc["run"]["kind"] = None
    path = tmp_path / "null-kind.json"
    path.write_text(_bundle_text(doc))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    res = cli("import", str(path), "--db", db)
    assert res.code == 0, res.err
    out = tmp_path / "e.json"
    assert cli("export", "1", "-o", str(out), "--db", db).code == 0
    assert read_export_file(str(out))[0]["run"]["kind"] == "bench"


@pytest.fixture(scope="module")
def round_trip_store():
    folder = tempfile.mkdtemp(prefix="disksleuth-roundtrip-")
    yield folder, f"sqlite:///{folder}/rt.sqlite"
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(mutated_docs())
def test_what_import_accepts_export_writes_and_import_accepts_again(round_trip_store, doc):
    folder, url = round_trip_store
    doc = copy.deepcopy(doc)
    if isinstance(doc.get("run"), dict):
        doc["run"]["uuid"] = str(uuid.uuid4())
    try:
        text = json.dumps({"schema": "disksleuth/1", "runs": [doc]}, allow_nan=True)
        docs = read_export(text, "x.json")
    except (ParseError, ValueError):
        return
    with Store(url) as store:
        done = store.import_runs(docs)
        (run_id,) = [*done.new_ids, *done.skipped]
        loaded = store.load(run_id)
    path = os.path.join(folder, "again.json")
    write_export(path, [loaded])
    (again,) = read_export_file(path)
    assert again["run"]["uuid"] == loaded["run"]["uuid"]


@pytest.mark.parametrize("field,value", [("bs_bytes", 2**40), ("iodepth", 2**31), ("numjobs", 2**32)])
def test_a_field_the_shared_store_cannot_hold_is_refused_on_import(cli, tmp_path, fresh_postgres_url, field, value):
    """These fit SQLite's 64-bit INTEGER but not PostgreSQL's 32-bit one: SQLite took the import and the
    shared store refused it whole. Now import refuses the run on both, naming the field."""
    doc = _doc(1.0, 1.0, "x")
    doc["tests"][0][field] = value
    path = tmp_path / "big.json"
    path.write_text(_bundle_text(doc))
    for db in (f"sqlite:///{tmp_path}/r.sqlite", fresh_postgres_url):
        res = cli("import", str(path), "--db", db)
        assert res.code == 2 and res.err.count("\n") == 1 and f"{field}: implausibly large" in res.err, res.err
