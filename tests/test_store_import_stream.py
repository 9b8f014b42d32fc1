"""`import` streams a bundle (issue 27): a fleet's 6,000-run bundle was held whole with all its values (625 MB
at peak) and stored in one transaction. Now one run at a time, 500 runs a transaction, memory flat as the
bundle grows; all or none still when a run is bad; `-` reads standard input; one line says what was done."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import uuid

import pytest
from test_store_import_bounds import _import_peak

from disksleuth.store.db import Store

REAL_EXPORT = os.path.join(os.path.dirname(__file__), "data", "store", "real-runs-export.json")
CLI = [sys.executable, "-m", "disksleuth"]


def fleet_bundle(path: str, runs: int, first: int = 0, bad_at: int | None = None) -> None:
    """An export of `runs` real exported runs, hosts, devices, serial ids and uuids varied, as `export` writes
    it (indented), written a run at a time; run number `bad_at` (1-based) carries a figure import refuses."""
    with open(REAL_EXPORT) as fh:
        bases = json.load(fh)["runs"]
    with open(path, "w") as fh:
        fh.write('{\n "schema": "disksleuth/1",\n "kind": "export",\n "runs": [')
        for i in range(first, first + runs):
            doc = copy.deepcopy(bases[i % len(bases)])
            doc["run"].pop("id", None)
            doc["run"]["uuid"] = str(uuid.UUID(int=i + 1))
            doc["run"]["host"]["hostname"] = f"host{i // 24:04d}"
            doc["device"]["name"] = f"sd{chr(97 + i % 24)}"
            doc["device"]["serial_id"] = doc["device"]["serial_sha256"] = f"{i:064x}"
            if bad_at is not None and i - first + 1 == bad_at:
                doc["tests"][0]["read_mbps"] = -1.0
            fh.write(("," if i > first else "") + "\n" + json.dumps(doc, indent=1))
        fh.write("\n ]\n}\n")


@pytest.mark.slow
def test_memory_does_not_grow_with_the_bundle(tmp_path):
    """Peak resident memory of a real `disksleuth import` of N and 4N runs: before, the larger took ~3 times
    its extra bundle size more (the file, then every value of it); now the same, within a few MB."""
    peaks = {}
    for runs in (600, 2400):
        path = str(tmp_path / f"b{runs}.json")
        fleet_bundle(path, runs)
        code, peak, err = _import_peak(path, f"sqlite:///{tmp_path}/r{runs}.sqlite")
        assert code == 0, err
        peaks[runs] = (peak, os.path.getsize(path))
    (small, small_bytes), (large, large_bytes) = peaks[600], peaks[2400]
    grown_mb = (large - small) / 1e6
    assert grown_mb < 12, f"{grown_mb:.1f} MB more for {(large_bytes - small_bytes) / 1e6:.0f} MB more bundle"
    with Store(f"sqlite:///{tmp_path}/r2400.sqlite") as store:
        assert store.count() == 2400


def test_a_bad_run_after_a_stored_batch_leaves_nothing(cli, tmp_path):
    """All or none as before streaming: runs 1-500 were committed when run 700 turns out bad; they go again."""
    path = tmp_path / "bad.json"
    fleet_bundle(str(path), 800, bad_at=700)
    db = f"sqlite:///{tmp_path}/r.sqlite"
    res = cli("import", str(path), "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "run 700 is not valid" in res.err and "read_mbps" in res.err
    with Store(db) as store:
        assert store.count() == 0


def test_runs_already_stored_before_the_bad_one_stay(cli, tmp_path):
    """Only this import's runs are taken back: a run that was stored before it is not touched."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    first = tmp_path / "first.json"
    fleet_bundle(str(first), 3)
    assert cli("import", str(first), "--db", db).code == 0
    bad = tmp_path / "bad.json"
    fleet_bundle(str(bad), 600, bad_at=600)
    assert cli("import", str(bad), "--db", db).code == 2
    with Store(db) as store:
        assert store.count() == 3


def test_a_large_import_says_what_it_did_in_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    db = f"sqlite:///{tmp_path}/r.sqlite"
    path = tmp_path / "b.json"
    fleet_bundle(str(path), 1200)
    res = cli("import", str(path), "--db", db)
    assert res.code == 0 and res.out == "imported 1,200 runs, #1-#1200\n", res.out
    again = tmp_path / "again.json"
    fleet_bundle(str(again), 20, first=1190)  # 10 stored already, 10 new
    res = cli("import", str(again), "--db", db)
    assert res.out == "imported 10 runs, #1201-#1210; skipped 10 already stored (#1191-#1200)\n", res.out
    res = cli("import", str(again), "--db", db, "--json")
    assert res.json()["imported"] == [] and res.json()["skipped"] == list(range(1191, 1211))


def test_ranges_are_compact():
    from disksleuth.present.history_view import imported_line, run_ranges

    assert run_ranges([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 18, 19, 20]) == "#1-#10, #15-#20"
    assert run_ranges([3]) == "#3" and run_ranges([]) == ""
    assert run_ranges([1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21]) == "#1, #3, #5, #7, #9, #11, #13, … 3 more ranges …, #21"
    assert imported_line([7], []) == "imported 1 run, #7"
    assert imported_line([], [1, 2]) == "imported 0 runs; skipped 2 already stored (#1-#2)"


def test_import_reads_standard_input(tmp_path):
    path = tmp_path / "b.json"
    fleet_bundle(str(path), 30)
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with open(path, "rb") as fh:
        res = subprocess.run([*CLI, "import", "-", "--db", db], stdin=fh, capture_output=True, timeout=120)
    assert res.returncode == 0 and res.stdout == b"imported 30 runs, #1-#30\n", res.stderr
    res = subprocess.run([*CLI, "import", "-", "--db", db], input=b'{"schema": "disksleuth/1", "runs": [}',
                         capture_output=True, timeout=120)  # fmt: skip
    assert res.returncode == 2 and res.stderr.count(b"\n") == 1 and b"standard input: not JSON" in res.stderr


def test_every_export_shape_still_imports(cli, tmp_path):
    """What `export` writes (indented), a compact file, members in another order, an empty runs list."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with open(REAL_EXPORT) as fh:
        bundle = json.load(fh)
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(bundle, separators=(",", ":")))
    assert cli("import", str(compact), "--db", db, "--json").json()["imported"] == [1, 2, 3, 4]
    reordered = tmp_path / "reordered.json"
    reordered.write_text(json.dumps({"runs": bundle["runs"], "extra": {"a": [1]}, "schema": "disksleuth/1"}))
    assert cli("import", str(reordered), "--db", db, "--json").json()["skipped"] == [1, 2, 3, 4]
    for text in ('{"schema": "disksleuth/1", "runs": []}', '{"runs": [], "schema": "disksleuth/2"}', "[]", '"x"'):
        (tmp_path / "e.json").write_text(text)
        res = cli("import", str(tmp_path / "e.json"), "--db", db)
        assert (res.code, res.err.count("\n")) == ((0, 0) if text.endswith("[]}") else (2, 1)), (text, res.err)


@pytest.mark.slow
@pytest.mark.long
def test_a_bundle_imports_into_postgresql_in_batches(cli, tmp_path, fresh_postgres_url):
    path = tmp_path / "b.json"
    fleet_bundle(str(path), 1100)
    res = cli("import", str(path), "--db", fresh_postgres_url, "--json")
    assert res.code == 0 and res.json()["imported"] == list(range(1, 1101)), res.err
    with Store(fresh_postgres_url) as store:
        doc = store.load(1050)
        assert doc["run"]["uuid"] == str(uuid.UUID(int=1050)) and doc["run"]["host"]["hostname"] == "host0043"
        assert [t["series"] for t in doc["tests"]] == [t["series"] for t in _real_doc(1049)["tests"]]
    bad = tmp_path / "bad.json"
    fleet_bundle(str(bad), 700, first=2000, bad_at=650)
    assert cli("import", str(bad), "--db", fresh_postgres_url).code == 2
    with Store(fresh_postgres_url) as store:
        assert store.count() == 1100


def _real_doc(i: int) -> dict:
    with open(REAL_EXPORT) as fh:
        bases = json.load(fh)["runs"]
    return bases[i % len(bases)]
