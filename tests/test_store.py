"""The results store on real SQLite files, comparison arithmetic, migrations, crash safety, the report."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa
from conftest import findings_exit, needs_fio

from disksleuth.analysis.compare import format_ratio
from disksleuth.serials import serial_id
from disksleuth.store.db import Store
from disksleuth.store.schema import SCHEMA_VERSION

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]


def _doc(read_mbps: float, read_iops: float, model: str, started: str = "2026-11-21T10:00:00+0000") -> dict:
    """A run document shaped like `check --json` prints it."""
    series = [
        {
            "t_s": 1.0 + i,
            "read_mbps": read_mbps * (0.98 + 0.01 * i),
            "write_mbps": 0.0,
            "iops": read_iops,
            "temperature_c": 40.0 + i,
        }
        for i in range(3)
    ]
    return {
        "device": {
            "name": "nvme0n1",
            "model": model,
            "serial": "S4EUNX0N123456",
            "firmware": "2B2QEXM7",
            "size_bytes": 250059350016,
            "transport": "nvme",
            "link": {
                "hops": [
                    {
                        "kind": "pcie",
                        "name": "0000:01:00.0",
                        "port": "0000:00:01.0",
                        "label": "PCIe 3.0 x4",
                        "ceiling_mbps": 3544.6,
                    }
                ],
                "current_ceiling_mbps": 3544.6,
                "capable_ceiling_mbps": 3544.6,
                "bottleneck": "PCIe 3.0 x4",
            },
        },
        "run": {
            "id": None,
            "kind": "check",
            "target": "/srv",
            "profile": "quick",
            "started_at": started,
            "finished_at": started,
            "fio_version": "fio-3.33",
            "engine": "io_uring",
            "host": {"hostname": "lab", "kernel": "6.18", "cpu": "x", "disksleuth_version": "0.1.0"},
            "device": "nvme0n1",
            "size_bytes": 268435456,
            "notes": [],
        },
        "tests": [
            {
                "id": "SEQ1M_Q8T1_read",
                "rw": "read",
                "bs_bytes": 1 << 20,
                "iodepth": 8,
                "numjobs": 1,
                "read_mbps": read_mbps,
                "read_iops": read_mbps / 1.048576,
                "write_mbps": None,
                "write_iops": None,
                "lat_mean_us": 100.0,
                "lat_p50_us": 90.0,
                "lat_p99_us": 300.0,
                "lat_p999_us": 500.0,
                "lat_max_us": 900.0,
                "runtime_s": 2.0,
                "fio_command": "fio --name=SEQ1M_Q8T1_read",
                "cache_affected": False,
                "engine": "io_uring",
                "series": series,
                "notes": ["warmed up"],
            },
            {
                "id": "RND4K_Q32T1_read",
                "rw": "randread",
                "bs_bytes": 4096,
                "iodepth": 32,
                "numjobs": 1,
                "read_mbps": read_iops * 4096 / 1e6,
                "read_iops": read_iops,
                "write_mbps": None,
                "write_iops": None,
                "lat_mean_us": 50.0,
                "lat_p50_us": 45.0,
                "lat_p99_us": 120.0,
                "lat_p999_us": 200.0,
                "lat_max_us": 400.0,
                "runtime_s": 2.0,
                "fio_command": "fio --name=RND4K_Q32T1_read",
                "cache_affected": False,
                "engine": "io_uring",
                "series": [],
                "notes": [],
            },
        ],
        "reference": [],
        "health": {
            "before": None,
            "after": None,
            "changes": {},
            "temperature_source": "hwmon",
            "temperature_series": [{"t_s": 0.5, "temperature_c": 41.0}],
        },
        "findings": [{"code": "slot_limited", "severity": "info", "message": "m", "evidence": {"a": 1}, "hint": "h"}],
        "summary": f"reads {read_mbps} MB/s",
    }


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path}/results.sqlite"


def test_two_runs_compare_with_ratios_checked_arithmetically(cli, db_url):
    with Store(db_url) as store:
        a = store.save(_doc(373.0, 2000.0, "Samsung SSD 970 EVO Plus"), tags=["before"])
        b = store.save(_doc(1243.0, 624000.0, "Samsung SSD 970 EVO Plus"), tags=["after"], note="BIOS x4 mode")
    res = cli("compare", str(a), str(b), "--db", db_url, "--format", "json")
    rows = {(r["test"], r["metric"]): r for r in res.json()["comparison"]["rows"]}
    seq = rows[("SEQ1M_Q8T1_read", "read_mbps")]
    assert seq["values"] == [373.0, 1243.0]
    assert seq["ratios"] == [1.0, round(1243.0 / 373.0, 4)]
    rnd = rows[("RND4K_Q32T1_read", "read_iops")]
    assert rnd["ratios"][1] == pytest.approx(312.0)
    table = cli("compare", str(a), str(b), "--db", db_url).out
    assert "3.33x" in table and "312x" in table
    back = cli("compare", str(b), str(a), "--db", db_url, "--format", "json").json()["comparison"]["rows"]
    assert back[0]["ratios"][1] == pytest.approx(373.0 / 1243.0, abs=1e-4)
    assert format_ratio(373.0 / 1243.0) == "0.30x"


def test_relative_to_and_baseline(cli, db_url):
    with Store(db_url) as store:
        ram = store.save(_doc(4000.0, 400000.0, "RAM disk"))
        sd = store.save(_doc(40.0, 2000.0, "SD card"))
        usb = store.save(_doc(400.0, 8000.0, "USB SSD"))
    doc = cli("compare", str(sd), str(usb), "--relative-to", str(ram), "--db", db_url, "--format", "json").json()
    rows = {(r["test"], r["metric"]): r for r in doc["comparison"]["rows"]}
    assert rows[("SEQ1M_Q8T1_read", "read_mbps")]["pct_of_reference"] == [1.0, 10.0]
    md = cli("compare", str(sd), str(usb), "--relative-to", str(ram), "--db", db_url, "--format", "markdown").out
    assert "| 1% | 10% |" in md and f"% of run #{ram}" in md
    base = cli("compare", str(sd), str(usb), "--baseline", str(usb), "--db", db_url, "--format", "json").json()
    assert base["comparison"]["baseline"] == usb
    assert base["comparison"]["rows"][0]["ratios"] == [0.1, 1.0]
    bad = cli("compare", str(sd), "--baseline", "99", "--db", db_url)
    assert bad.code == 2 and "not one of the compared runs" in bad.err


def test_markdown_is_a_table(cli, db_url):
    with Store(db_url) as store:
        a = store.save(_doc(373.0, 2000.0, "x"))
        b = store.save(_doc(1243.0, 4000.0, "y"))
    out = cli("compare", str(a), str(b), "--db", db_url, "--format", "markdown").out
    # The figures' table first; what differs on the path (models x and y) follows it after a blank line.
    md = out.strip().split("\n\n", 1)[0].splitlines()
    assert "What differs on the path" in out
    assert md[0] == f"| test | metric | #{a} x | #{b} y | #{b} vs #{a} |"
    assert md[1] == "|---|---|---:|---:|---:|"
    assert all(line.startswith("| ") and line.endswith(" |") and line.count("|") == 6 for line in md[2:])


def test_csv(cli, db_url):
    with Store(db_url) as store:
        a = store.save(_doc(100.0, 1000.0, "x"))
        b = store.save(_doc(200.0, 1000.0, "y"))
    lines = cli("compare", str(a), str(b), "--db", db_url, "--format", "csv").out.splitlines()
    assert lines[0] == f"test,metric,run_{a},run_{b},ratio_run_{a},ratio_run_{b}"
    assert lines[1] == "SEQ1M_Q8T1_read,read_mbps,100.0,200.0,1.0,2.0"


def test_round_trip_keeps_everything_and_hashes_the_serial(cli, db_url):
    original = _doc(373.0, 2000.0, "Samsung")
    with Store(db_url) as store:
        run_id = store.save(original, tags=["b", "a"], note="n")
        loaded = store.load(run_id)
        key = store.serial_key
    assert loaded["run"]["tags"] == ["a", "b"] and loaded["run"]["note"] == "n"
    assert loaded["tests"][0]["series"] == original["tests"][0]["series"]
    assert loaded["tests"][0]["notes"] == ["warmed up"]
    assert loaded["findings"] == original["findings"]
    assert loaded["health"] == original["health"]
    assert "serial" not in loaded["device"]
    assert loaded["device"]["serial_id"] == loaded["device"]["serial_sha256"] == serial_id("S4EUNX0N123456", key)
    assert hashlib.sha256(b"S4EUNX0N123456").hexdigest() not in json.dumps(loaded)  # keyed, never the plain digest
    assert "S4EUNX0N123456" not in json.dumps(loaded)
    shown = cli("show", str(run_id), "--db", db_url)
    assert shown.code == 0 and "SEQ1M_Q8T1_read" in shown.out and "slot_limited" in shown.out


def test_runs_lists_and_filters(cli, db_url):
    with Store(db_url) as store:
        store.save(_doc(1.0, 1.0, "Kingston SD"), tags=["sd"])
        store.save(_doc(2.0, 2.0, "Samsung 990"), tags=["nvme"])
    doc = cli("runs", "--json", "--db", db_url).json()
    assert doc["schema"] == "disksleuth/1" and doc["total"] == 2
    assert set(doc["runs"][0]) >= {"id", "started_at", "target", "device_model", "profile", "tags"}
    assert [r["device_model"] for r in doc["runs"]] == ["Samsung 990", "Kingston SD"]  # newest first
    assert [r["device_model"] for r in cli("runs", "--json", "--tag", "sd", "--db", db_url).json()["runs"]] == [
        "Kingston SD"
    ]
    assert cli("runs", "--json", "--device", "990", "--db", db_url).json()["total"] == 1
    assert "Kingston SD" in cli("runs", "--db", db_url).out


def test_export_import_between_stores(cli, tmp_path, db_url):
    with Store(db_url) as store:
        a = store.save(_doc(100.0, 1000.0, "x"), tags=["t"])
    out = tmp_path / "export.json"
    assert cli("export", str(a), "-o", str(out), "--db", db_url).code == 0
    exported = json.loads(out.read_text())
    assert exported["schema"] == "disksleuth/1" and "S4EUNX0N123456" not in out.read_text()
    other = f"sqlite:///{tmp_path}/other.sqlite"
    res = cli("import", str(out), "--db", other, "--json")
    (new_id,) = res.json()["imported"]
    with Store(other) as store:
        loaded = store.load(new_id)
    assert loaded["tests"][0]["read_mbps"] == 100.0 and loaded["run"]["tags"] == ["t"]
    assert loaded["device"]["serial_sha256"] == exported["runs"][0]["device"]["serial_sha256"]


@pytest.mark.parametrize(
    "content,needle",
    [
        ("not json", "not JSON"),
        ('{"schema": "other/9", "runs": []}', "not a disksleuth export"),
        ('{"schema": "disksleuth/1", "runs": [{"run": {}}]}', "run 1 is incomplete"),
    ],
)
def test_import_bad_files(cli, tmp_path, db_url, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    res = cli("import", str(path), "--db", db_url)
    assert res.code == 2 and needle in res.err and res.err.count("\n") == 1


def test_unknown_run_and_bad_ids(cli, db_url):
    Store(db_url).close()
    assert "no run 42" in cli("show", "42", "--db", db_url).err
    res = cli("compare", "one", "two", "--db", db_url)
    assert res.code == 2 and "not a run id" in res.err


def test_bad_db_url_and_not_a_database(cli, tmp_path):
    res = cli("runs", "--db", "nosuchscheme://x")
    assert res.code == 2 and res.err.count("\n") == 1
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    res = cli("runs", "--db", f"sqlite:///{junk}")
    assert res.code == 2 and "not a disksleuth results store" in res.err


def test_migration_from_the_first_schema(tmp_path):
    url = f"sqlite:///{tmp_path}/old.sqlite"
    with Store(url, migrate_to=1) as old:
        assert old.version() == 1
        with old.engine.begin() as conn:  # a run written the way schema 1 stored it: series inside extra_json
            conn.execute(
                sa.text(
                    "INSERT INTO runs (id, kind, started_at, target, profile) "
                    "VALUES (1, 'bench', '2026-01-01T00:00:00+0000', '/mnt', 'quick')"
                )
            )
            conn.execute(
                sa.text(
                    "INSERT INTO tests (run_id, position, is_reference, test_id, rw, read_mbps, extra_json) "
                    "VALUES (1, 0, 0, 'SEQ1M_Q8T1_read', 'read', 99.5, :extra)"
                ),
                {
                    "extra": json.dumps(
                        {
                            "series": [
                                {"t_s": 1.0, "read_mbps": 99.0, "write_mbps": 0.0, "iops": 95.0},
                                {"t_s": 2.0, "read_mbps": 100.0, "write_mbps": 0.0, "iops": 96.0},
                            ],
                            "notes": ["old"],
                        }
                    )
                },
            )
    with Store(url) as new:
        assert new.version() == SCHEMA_VERSION
        doc = new.load(1)
        assert doc["run"]["uuid"]  # v3 gave the old run an identity
        assert [p["read_mbps"] for p in doc["tests"][0]["series"]] == [99.0, 100.0]
        assert doc["tests"][0]["notes"] == ["old"] and doc["tests"][0]["read_mbps"] == 99.5
        run_id = new.save(_doc(1.0, 1.0, "new"), tags=["x"], note="after migration")
        assert new.load(run_id)["run"]["tags"] == ["x"]
    con = sqlite3.connect(f"{tmp_path}/old.sqlite")
    versions = con.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


@pytest.mark.slow
@needs_fio
def test_kill_9_mid_run_leaves_the_store_intact(tmp_path):
    db = tmp_path / "results.sqlite"
    url = f"sqlite:///{db}"
    with Store(url) as store:
        earlier = store.save(_doc(373.0, 2000.0, "earlier"))
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.Popen(
        [*DISKSLEUTH, "bench", str(work), "--profile", "standard", "--size", "64M", "--db", url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(5)
    assert proc.poll() is None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    subprocess.run(["pkill", "-KILL", "-f", f"--filename={work}"], check=False)  # fio runs in its own session
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    with Store(url) as store:
        rows, total = store.list_runs()
        assert total == 1 and rows[0]["id"] == earlier
        assert store.load(earlier)["tests"][0]["read_mbps"] == 373.0


@pytest.mark.slow
@needs_fio
def test_real_runs_saved_and_compared_in_markdown(tmp_path):
    url = f"sqlite:///{tmp_path}/real.sqlite"
    ids = []
    for tag in ("one", "two"):
        res = subprocess.run(
            [*DISKSLEUTH, "bench", str(tmp_path), "--time", "1", "--size", "64M", "--db", url, "--tag", tag, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == findings_exit(res.stdout), res.stderr
        ids.append(json.loads(res.stdout)["run"]["id"])
    assert ids == [1, 2]
    md = subprocess.run(
        [*DISKSLEUTH, "compare", "1", "2", "--db", url, "--format", "markdown"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # The table first; a figure that moved beyond the intervals gets its explanation after a blank line.
    md = md.split("\n\n", 1)[0].splitlines()
    assert md[1].startswith("|---|---|") and len(md) >= 6
    assert all(line.count("|") == md[0].count("|") for line in md)
    assert any(line.startswith("| RND4K_Q32T1_read | read IOPS |") for line in md)
    assert [f for f in os.listdir(tmp_path) if f.endswith(".scratch")] == []


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
def test_report_is_self_contained_and_renders_in_chromium(cli, tmp_path, db_url):
    from PIL import Image

    with Store(db_url) as store:
        a = store.save(_doc(373.0, 2000.0, "before"))
        b = store.save(_doc(1243.0, 4000.0, "after"))
    html_path = tmp_path / "report.html"
    assert cli("report", str(a), str(b), "-o", str(html_path), "--db", db_url).code == 0
    text = html_path.read_text()
    # seq-read and random-read bars (no write tests here), latency, per run a link chain and a timeline, and the
    # drive's history up to the newer run: one chart per test
    assert text.count("<svg") == 9
    assert "<script" not in text and 'src="http' not in text and 'href="http' not in text
    assert "<link " not in text and "@import" not in text
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (./quickstart test installs it)")
    png = tmp_path / "shot.png"
    res = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--hide-scrollbars",
            "--window-size=1200,1400",
            f"--screenshot={png}",
            html_path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    image = Image.open(png).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 20)
    counts = {rgb: n for n, rgb in colors}
    # The report's first two run colours fill the bars of run #a and run #b.
    from disksleuth.present.report import RUN_COLORS

    first, second = (tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in RUN_COLORS[:2])
    assert counts.get(first, 0) > 2000 and counts.get(second, 0) > 2000
    pdf = tmp_path / "report.pdf"
    res = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'profile2'}",
            f"--print-to-pdf={pdf}",
            "--no-pdf-header-footer",
            html_path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0 and pdf.stat().st_size > 10_000


def test_series_and_findings_survive_a_copy(db_url):
    doc = _doc(1.0, 1.0, "x")
    twin = copy.deepcopy(doc)
    with Store(db_url) as store:
        store.save(doc)
    assert doc == twin  # saving does not modify the caller's document
