"""The store's command surface: --db forms, read-only commands that never create a store, run identity
(import never duplicates), runs delete/prune, file modes, and one clear line for every bad input."""

from __future__ import annotations

import copy
import json
import os
import stat
import time

import pytest
from conftest import loop_device, needs_loop, sample_export, sha256_of
from test_store import _doc

from disksleuth.store.db import Store


def _export(path, *docs) -> None:
    path.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": list(docs)}))


def test_plain_path_db(cli, tmp_path):
    """README: `--db FILE`. A plain path is a SQLite file (it was rejected as not a URL)."""
    export = tmp_path / "e.json"
    _export(export, _doc(100.0, 1000.0, "x"))
    db = tmp_path / "plain.sqlite"
    res = cli("import", str(export), "--db", str(db), "--json")
    assert res.code == 0, res.err
    assert db.is_file()
    assert cli("runs", "--db", str(db), "--json").json()["total"] == 1
    assert cli("runs", "--db", f"sqlite:///{db}", "--json").json()["total"] == 1


def test_store_files_are_private(tmp_path):
    """Host names, targets, notes and serial hashes: 0600 files in a 0700 directory (it was 0644)."""
    folder = tmp_path / "new" / "dir"
    path = folder / "results.sqlite"
    old = os.umask(0o022)
    try:
        with Store(str(path)) as store:
            store.save(_doc(1.0, 1.0, "x"))
            with store.engine.connect() as conn:  # an open reader keeps -wal and -shm in place
                conn.exec_driver_sql("SELECT count(*) FROM runs").fetchall()
                modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    finally:
        os.umask(old)
    assert modes == {"results.sqlite": 0o600, "results.sqlite-wal": 0o600, "results.sqlite-shm": 0o600}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_store_is_never_created_through_a_dangling_symlink(cli, tmp_path):
    (tmp_path / "store.sqlite").symlink_to(tmp_path / "victim")
    export = tmp_path / "e.json"
    _export(export, _doc(1.0, 1.0, "x"))
    res = cli("import", str(export), "--db", str(tmp_path / "store.sqlite"))
    assert res.code == 2 and "symbolic link to nothing" in res.err
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ("runs",),
        ("runs", "--json"),
        ("show", "1"),
        ("compare", "1", "2"),
        ("report", "1", "-o", "REPORT"),
        ("export", "1", "-o", "EXPORT"),
        ("runs", "delete", "1"),
        ("runs", "prune", "--tag", "x"),
    ],
)
def test_read_only_commands_never_create_a_store(cli, tmp_path, argv):
    """`runs --db sqlite:////no/such/dir/x.sqlite` made the directory and an empty store."""
    missing = tmp_path / "no" / "such" / "dir"
    argv = [a.replace("REPORT", str(tmp_path / "r.html")).replace("EXPORT", str(tmp_path / "e.json")) for a in argv]
    res = cli(*argv, "--db", f"sqlite:///{missing}/x.sqlite")
    assert res.code == 2
    assert "no results store" in res.err and res.err.count("\n") == 1, res.err
    assert not (tmp_path / "no").exists()
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "e.json").exists()


def test_unsupported_scheme_names_the_supported_ones(cli):
    """`--db mysql://x` advised installing the postgres extra."""
    res = cli("runs", "--db", "mysql://user:secret@x/db")
    assert res.code == 2 and res.err.count("\n") == 1
    assert "mysql:// is not supported" in res.err and "postgresql://" in res.err and "sqlite:///" in res.err
    assert "pip install" not in res.err and "secret" not in res.err


@pytest.mark.parametrize("run_id", ["99999999999999999999999", "9223372036854775808", "0", "-1", "#-5", "9" * 5000])
def test_absurd_run_ids_are_one_line(cli, tmp_path, run_id):
    """`show 99999999999999999999999` was "internal error: OverflowError"."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    Store(db).close()
    for argv in (("show", run_id), ("compare", "1", run_id), ("export", run_id, "-o", str(tmp_path / "e.json"))):
        res = cli(*argv, "--db", db)
        assert res.code == 2 and res.err.count("\n") == 1, res.err
        assert "internal error" not in res.err and len(res.err) < 300


def test_import_twice_does_not_duplicate(cli, tmp_path):
    """Importing the same export twice stored every run twice."""
    src, dst = f"sqlite:///{tmp_path}/src.sqlite", f"sqlite:///{tmp_path}/dst.sqlite"
    with Store(src) as store:
        a = store.save(_doc(100.0, 1000.0, "x"), tags=["t"])
        b = store.save(_doc(200.0, 1000.0, "y"))
    export = tmp_path / "e.json"
    assert cli("export", str(a), str(b), "-o", str(export), "--db", src).code == 0
    uuids = [d["run"]["uuid"] for d in json.loads(export.read_text())["runs"]]
    assert len(set(uuids)) == 2 and all(uuids)
    first = cli("import", str(export), "--db", dst, "--json").json()
    assert first["imported"] == [1, 2] and first["skipped"] == []
    second = cli("import", str(export), "--db", dst, "--json").json()
    assert second["imported"] == [] and second["skipped"] == [1, 2]
    text = cli("import", str(export), "--db", dst)
    assert text.code == 0 and "skipped 2 already stored" in text.out
    runs = cli("runs", "--db", dst, "--json").json()
    assert runs["total"] == 2 and sorted(r["uuid"] for r in runs["runs"]) == sorted(uuids)
    # Back into the store it came from: the same runs, so nothing new.
    assert cli("import", str(export), "--db", src, "--json").json()["skipped"] == [a, b]


def test_old_export_without_uuid_is_still_recognised(cli, tmp_path):
    """An export written before runs had a uuid: its identity is derived from what and when, the same way
    the v3 migration derives it for stored runs."""
    doc = _doc(100.0, 1000.0, "x")
    export = tmp_path / "old.json"
    _export(export, doc, copy.deepcopy(doc))  # a duplicate inside one file too
    db = f"sqlite:///{tmp_path}/d.sqlite"
    assert cli("import", str(export), "--db", db, "--json").json() == {
        "schema": "disksleuth/1",
        "imported": [1],
        "skipped": [1],
    }
    assert cli("import", str(export), "--db", db, "--json").json()["imported"] == []


def test_runs_delete(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        ids = [store.save(_doc(float(i), 1.0, f"m{i}"), tags=["t"]) for i in range(1, 4)]
    res = cli("runs", "delete", str(ids[0]), f"#{ids[2]}", "--db", db, "--json")
    assert res.code == 0 and res.json()["deleted"] == [ids[0], ids[2]]
    assert [r["id"] for r in cli("runs", "--db", db, "--json").json()["runs"]] == [ids[1]]
    with Store(db) as store, store.engine.connect() as conn:  # children gone too
        for table in ("tests", "findings", "tags"):
            left = conn.exec_driver_sql(f"SELECT DISTINCT run_id FROM {table}").scalars().all()
            assert left == [ids[1]], table
        assert conn.exec_driver_sql("SELECT count(*) FROM series").scalar() == 3  # run 2's three points
    missing = cli("runs", "delete", str(ids[1]), "424242", "--db", db)
    assert missing.code == 2 and "no run 424242" in missing.err and "nothing deleted" in missing.err
    assert cli("runs", "--db", db, "--json").json()["total"] == 1
    assert cli("runs", "delete", "--db", db).code == 2
    text = cli("runs", "delete", str(ids[1]), "--db", db)
    assert text.code == 0 and f"deleted 1 run, #{ids[1]}" in text.out


def test_runs_prune_by_age_tag_and_host(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    now = time.time()

    def at(days_ago: float, host: str) -> dict:
        doc = _doc(1.0, 1.0, "x", started=time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(now - days_ago * 86400)))
        doc["run"]["host"]["hostname"] = host
        return doc

    with Store(db) as store:
        old_a = store.save(at(40, "a"), tags=["scratch"])
        old_b = store.save(at(35, "b"))
        new_a = store.save(at(1, "a"), tags=["scratch"])
    dry = cli("runs", "prune", "--older-than", "30d", "--dry-run", "--db", db, "--json").json()
    assert dry["would_delete"] == [old_a, old_b] and dry["deleted"] == []
    assert cli("runs", "--db", db, "--json").json()["total"] == 3
    tagged = cli("runs", "prune", "--older-than", "30d", "--tag", "scratch", "--db", db, "--json").json()
    assert tagged["deleted"] == [old_a]
    by_host = cli("runs", "prune", "--host", "b", "--db", db, "--json").json()
    assert by_host["deleted"] == [old_b]
    assert [r["id"] for r in cli("runs", "--db", db, "--json").json()["runs"]] == [new_a]
    nothing = cli("runs", "prune", "--older-than", "2w", "--db", db)
    assert nothing.code == 0 and "nothing deleted" in nothing.out
    refused = cli("runs", "prune", "--db", db)
    assert refused.code == 2 and "never deletes everything" in refused.err
    assert cli("runs", "prune", "--older-than", "soon", "--db", db).code == 2
    assert cli("runs", "--db", db, "--json").json()["total"] == 1


def test_runs_no_match_and_host(cli, tmp_path):
    """`runs --tag nomatch` said "No runs yet" with runs stored; `runs` did not show the host."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        store.save(_doc(1.0, 1.0, "Samsung 990"), tags=["nvme"])
        other = _doc(2.0, 1.0, "Kingston SD")
        other["run"]["host"]["hostname"] = "pi4"
        store.save(other)
    res = cli("runs", "--tag", "nomatch", "--db", db)
    assert res.code == 0 and "No runs match" in res.out and "No runs yet" not in res.out
    listing = cli("runs", "--db", db)
    assert "host" in listing.out and "pi4" in listing.out and "lab" in listing.out
    doc = cli("runs", "--db", db, "--json").json()
    assert [r["host"] for r in doc["runs"]] == ["pi4", "lab"]
    only = cli("runs", "--host", "pi4", "--db", db, "--json").json()
    assert only["total"] == 1 and only["runs"][0]["device_model"] == "Kingston SD"
    assert cli("runs", "--limit", "-1", "--db", db).code == 2
    empty = f"sqlite:///{tmp_path}/empty.sqlite"
    Store(empty).close()
    assert "No runs yet" in cli("runs", "--db", empty).out


def test_export_json_is_a_document(cli, tmp_path):
    """`export --json` printed a sentence."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        a = store.save(_doc(1.0, 1.0, "x"))
    out = tmp_path / "e.json"
    res = cli("export", str(a), "-o", str(out), "--db", db, "--json")
    assert res.code == 0
    doc = res.json()
    assert doc["schema"] == "disksleuth/1" and doc["export"] == {"path": str(out), "runs": [a], "count": 1}


def test_empty_db_is_a_mistake_not_the_default(cli):
    res = cli("runs", "--db", "")
    assert res.code == 2 and "give a file path" in res.err


def test_unsaved_runs_go_where_only_we_can_write(tmp_path, monkeypatch):
    """The kept file of a run the store refused: under the data directory, else a private directory in
    $TMPDIR, never one another user planted there."""
    from disksleuth.errors import DisksleuthError
    from disksleuth.store.files import keep_unsaved, read_export_file

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))  # the data directory cannot be made
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    doc = _doc(1.0, 1.0, "x")
    doc["run"]["uuid"] = "0b7f3c8e-2a41-4c71-9d53-6f1e2d3c4b5a"
    path = keep_unsaved(doc, ["t"], "n")
    assert os.path.dirname(path) == str(tmp_path / f"disksleuth-unsaved-{os.getuid()}")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    (kept,) = read_export_file(path)
    assert kept["run"]["tags"] == ["t"] and kept["run"]["note"] == "n" and kept["run"]["uuid"] == doc["run"]["uuid"]
    os.chmod(os.path.dirname(path), 0o777)  # as if someone else had made it, open to all
    with pytest.raises(DisksleuthError, match="not a private directory"):
        keep_unsaved(doc, [], None)


@pytest.mark.root
@needs_loop
@pytest.mark.parametrize("form", ["{dev}", "sqlite:///{dev}"])
def test_a_store_path_that_is_a_block_device_is_refused(cli, tmp_path, form) -> None:
    """`--db /dev/sdX` (a typo, or DISKSLEUTH_DB) wrote a SQLite file over the device, mounted or not."""
    export = sample_export(tmp_path)
    with loop_device(16, fill=True) as dev:
        before = sha256_of(dev)
        res = cli("import", export, "--db", form.format(dev=dev))
        assert res.code == 2 and "not a regular file" in res.err, res.err
        assert sha256_of(dev) == before


def test_sqlite_uri_forms_are_refused(cli, tmp_path) -> None:
    res = cli("runs", "--db", f"sqlite:///file:{tmp_path}/x.sqlite?mode=rwc&uri=true")
    assert res.code == 2 and "plain path" in res.err and len(res.err.strip().splitlines()) == 1
