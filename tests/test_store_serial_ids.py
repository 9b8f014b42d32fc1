"""Serial numbers leave the machine only as keyed ids (HMAC-SHA256), never as a plain SHA-256: in the
store, in `show --json` and `export`, and in the exporter's labels. A store made before (schema 3, plain
digests) is rewritten on open, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3

import pytest
import sqlalchemy as sa
from conftest import DATA, SYSFS
from test_store import _doc

from disksleuth import serials
from disksleuth.store.db import Store
from disksleuth.store.schema import SCHEMA_VERSION

SD_SERIAL = "0x0008c31f"  # an SD card's 32-bit serial as sysfs mmc*/serial shows it, in a space quick to search
NVME_SERIAL = "S4EUNX0N123456"
SCHEMA3_STORE = os.path.join(DATA, "store", "schema3-plain-serials.sqlite")  # made by disksleuth before keyed ids
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.fixture(autouse=True)
def _no_fleet_key(monkeypatch):
    monkeypatch.delenv(serials.ENV_KEY, raising=False)


def _sd_doc(started: str = "2026-11-21T10:00:00+0000") -> dict:
    doc = _doc(21.0, 19.0, "SD SC32G", started=started)
    doc["device"].update(name="mmcblk0", serial=SD_SERIAL, transport="mmc")
    return doc


def _searched_serials(texts: list[str], space_bits: int = 20) -> set[str]:
    """What trying every serial of the form 0x%08x below 2**space_bits by plain SHA-256 finds in `texts`:
    the attack a plain digest of a 32-bit serial invites (the full 2**32 takes under an hour on one core)."""
    digests = set(HEX64.findall("\n".join(texts)))
    found = set()
    for n in range(1 << space_bits):
        serial = f"0x{n:08x}"
        if hashlib.sha256(serial.encode()).hexdigest() in digests:
            found.add(serial)
    return found


def test_an_sd_serial_is_not_found_by_searching_its_space(cli, tmp_path):
    """Before, show, export and the exporter's serial_sha256 label all carried sha256(serial), and searching
    the 32-bit space found the card's serial. Now every id there is keyed with the store's key."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        run_id = store.save(_sd_doc())
    shown = cli("show", str(run_id), "--db", db, "--json")
    assert shown.code == 0, shown.err
    exported = tmp_path / "e.json"
    assert cli("export", str(run_id), "-o", str(exported), "--db", db).code == 0
    # The exporter labels a live SD card (a captured tree with this serial) with the store's key.
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(SYSFS, "scenario_sd_card"), tree, symlinks=True)
    (serial_file,) = [p for p in tree.rglob("serial") if p.is_file()]
    serial_file.write_text(SD_SERIAL + "\n")
    out = tmp_path / "prom"
    out.mkdir()
    res = cli("exporter", "--textfile", str(out), "--sysfs-root", str(tree), "--db", db)
    assert res.code == 0, res.err
    metrics = (out / "disksleuth.prom").read_text()
    with open(db.removeprefix("sqlite:///"), "rb") as fh:
        raw_store = fh.read().decode("latin-1")
    texts = [shown.out, exported.read_text(), metrics, raw_store]
    assert _searched_serials([hashlib.sha256(SD_SERIAL.encode()).hexdigest()]) == {SD_SERIAL}  # the search works
    assert _searched_serials(texts) == set()
    assert all(SD_SERIAL not in t for t in texts)
    with Store(db) as store:
        key = store.serial_key
    device = shown.json()["device"]
    assert device["serial_id"] == device["serial_sha256"] == serials.serial_id(SD_SERIAL, key)
    info = next(line for line in metrics.splitlines() if line.startswith("disksleuth_device_info{"))
    assert f'serial_id="{serials.serial_id(SD_SERIAL, key)}"' in info
    assert f'serial_sha256="{serials.serial_id(SD_SERIAL, key)}"' in info  # the old label, the same keyed value


def test_two_stores_have_two_keys_and_a_fleet_key_makes_them_agree(tmp_path, monkeypatch):
    ids = []
    for name in ("a", "b"):
        with Store(f"sqlite:///{tmp_path}/{name}.sqlite") as store:
            ids.append(store.load(store.save(_doc(1.0, 1.0, "x")))["device"]["serial_id"])
    assert ids[0] != ids[1] and None not in ids  # each store generated its own key (secrets)
    fleet_key = "fleet-wide key of sufficient length"
    monkeypatch.setenv(serials.ENV_KEY, fleet_key)
    ids = []
    for name in ("c", "d"):
        with Store(f"sqlite:///{tmp_path}/{name}.sqlite") as store:
            assert store.serial_key == fleet_key.encode()
            ids.append(store.load(store.save(_doc(1.0, 1.0, "x")))["device"]["serial_id"])
    assert ids[0] == ids[1] == serials.serial_id(NVME_SERIAL, fleet_key.encode())


def test_a_short_fleet_key_is_refused_in_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setenv(serials.ENV_KEY, "hunter2")
    res = cli("exporter", "--textfile", str(tmp_path), "--sysfs-root", os.path.join(SYSFS, "scenario_sd_card"))
    assert res.code == 2 and res.err.count("\n") == 1 and "16 or more" in res.err, res.err
    assert "hunter2" not in res.err


def test_the_exporter_without_a_key_gives_no_id_rather_than_a_weak_one(cli, tmp_path):
    """No store to take a key from, no fleet key: the label is empty, never the plain digest."""
    out = tmp_path / "prom"
    out.mkdir()
    res = cli("exporter", "--textfile", str(out), "--sysfs-root", os.path.join(SYSFS, "scenario_sd_card"), "--no-bench")
    assert res.code == 0, res.err
    metrics = (out / "disksleuth.prom").read_text()
    info = next(line for line in metrics.splitlines() if line.startswith("disksleuth_device_info{"))
    assert 'serial_id=""' in info and 'serial_sha256=""' in info
    assert hashlib.sha256(b"0x12345678").hexdigest() not in metrics


def _copy_schema3(tmp_path) -> str:
    path = tmp_path / "old.sqlite"
    shutil.copyfile(SCHEMA3_STORE, path)
    os.chmod(path, 0o600)  # a store is written only when private (copyfile gives 0644)
    return str(path)


def test_a_schema3_store_is_rewritten_to_keyed_ids_on_open(tmp_path):
    """The checked-in store was written by disksleuth 0.1 (schema 3): runs.device_serial_sha256 holds
    sha256(serial), and one imported run carries its serial in the clear in its health. Opening it (any
    command) rewrites both; each drive's id is then what the same serial gets from a new run."""
    path = _copy_schema3(tmp_path)
    con = sqlite3.connect(path)
    before = dict(con.execute("SELECT id, device_serial_sha256 FROM runs").fetchall())
    con.close()
    assert before[1] == hashlib.sha256(NVME_SERIAL.encode()).hexdigest()  # the fixture is what it says
    assert before[2] == hashlib.sha256(SD_SERIAL.encode()).hexdigest() and before[3] is None
    with Store(path) as store:
        assert store.version() == SCHEMA_VERSION >= 4
        key = store.serial_key
        old_nvme, old_sd, no_device = (store.load(i) for i in (1, 2, 3))
        new_sd = store.load(store.save(_sd_doc()))
    assert old_nvme["device"]["serial_id"] == serials.serial_id(NVME_SERIAL, key)
    assert old_sd["device"]["serial_id"] == new_sd["device"]["serial_id"] == serials.serial_id(SD_SERIAL, key)
    assert no_device["device"]["serial_id"] is None  # a run without a serial keeps none
    assert "serial" not in old_sd["health"]["before"] and old_sd["health"]["before"]["temperature_c"] == 30.0
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    with open(path, "rb") as fh:
        raw = fh.read().decode("latin-1")
    assert before[1] not in raw and before[2] not in raw and SD_SERIAL not in raw
    assert _searched_serials([raw]) == set()


def test_an_old_export_imports_with_keyed_ids(cli, tmp_path):
    """An export made before keyed ids carries sha256(serial) as serial_sha256: import signs it with the
    store's key, so the drive gets the id a new run of it gets, and no plain digest is stored."""
    old_export = tmp_path / "old-export.json"
    doc = _sd_doc()
    doc["device"].pop("serial")
    doc["device"]["serial_sha256"] = hashlib.sha256(SD_SERIAL.encode()).hexdigest()
    old_export.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": [doc]}))
    db = f"sqlite:///{tmp_path}/r.sqlite"
    assert cli("import", str(old_export), "--db", db).code == 0
    with Store(db) as store:
        imported = store.load(1)["device"]["serial_id"]
        assert imported == serials.serial_id(SD_SERIAL, store.serial_key)
    # A new export keeps the id as it is (serial_id), into a store with another key too.
    new_export = tmp_path / "new-export.json"
    assert cli("export", "1", "-o", str(new_export), "--db", db).code == 0
    other = f"sqlite:///{tmp_path}/other.sqlite"
    assert cli("import", str(new_export), "--db", other).code == 0
    with Store(other) as store:
        assert store.load(1)["device"]["serial_id"] == imported


def test_a_schema3_postgresql_store_is_rewritten_on_open(fresh_postgres_url):
    """The same runs as the SQLite fixture, copied row for row into a PostgreSQL store at schema 3 (the
    tables disksleuth 0.1 made): two hosts opening it at once migrate it once, and share its key."""
    with Store(fresh_postgres_url, migrate_to=3) as old:
        assert old.version() == 3
        source = sqlite3.connect(SCHEMA3_STORE)
        cursor = source.execute("SELECT * FROM runs ORDER BY id")
        names = [d[0] for d in cursor.description]
        # Every column but the id, which comes from the server's sequence: 1 to 3, as on SQLite.
        rows = [{k: v for k, v in zip(names, r, strict=True) if k != "id"} for r in cursor]
        source.close()
        with old.engine.begin() as conn:
            conn.execute(sa.table("runs", *(sa.column(c) for c in rows[0])).insert(), rows)
    first, second = Store(fresh_postgres_url), Store(fresh_postgres_url)
    try:
        assert first.version() == second.version() == SCHEMA_VERSION
        assert first.serial_key == second.serial_key is not None
        key = first.serial_key
        assert first.load(2)["device"]["serial_id"] == serials.serial_id(SD_SERIAL, key)
        assert second.load(second.save(_sd_doc()))["device"]["serial_id"] == serials.serial_id(SD_SERIAL, key)
        assert "serial" not in first.load(2)["health"]["before"]
        with first.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT device_serial_sha256, health_json FROM runs")).fetchall()
    finally:
        first.close()
        second.close()
    text = json.dumps([list(r) for r in stored])
    assert hashlib.sha256(SD_SERIAL.encode()).hexdigest() not in text and SD_SERIAL not in text
    assert _searched_serials([text]) == set()
