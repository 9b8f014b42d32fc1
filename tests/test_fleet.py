"""`disksleuth fleet` and `runs --host`: two hosts (two UTS namespaces with their own host names) run
`check` into one store at the same time; the fleet view shows both, worst first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import needs_fio, needs_loop

from disksleuth.analysis.fleet import fleet_rows

CLI = [sys.executable, "-m", "disksleuth"]


def _unshare_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("unshare") is None:
        return "unshare missing"
    probe = subprocess.run(["unshare", "--uts", "true"], capture_output=True)
    return None if probe.returncode == 0 else "no UTS namespaces here"


def _check_as_host(host: str, target: str, db: str) -> subprocess.Popen[str]:
    """`disksleuth check TARGET` in a new UTS namespace whose host name is `host`."""
    script = 'hostname "$1" && shift && exec "$@"'
    argv = ["unshare", "--uts", "sh", "-c", script, "sh", host, *CLI, "check", target, "--db", db, "--json"]
    argv += ["--time", "1", "--tag", host]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def two_hosts_check_into(db: str, target: str) -> None:
    procs = {h: _check_as_host(h, target, db) for h in ("disksleuth-host-a", "disksleuth-host-b")}
    for host, proc in procs.items():
        out, err = proc.communicate(timeout=240)
        assert proc.returncode in (0, 1), (host, err)
        doc = json.loads(out)
        # saved, not just measured (the store's own reason in full: pytest would cut stderr short)
        assert doc["run"]["id"] is not None, f"{host}: {doc.get('store')}"


def assert_fleet_shows_both(cli, db: str) -> None:
    res = cli("runs", "--db", db, "--json")
    assert res.code == 0, res.err
    hosts = {r["host"] for r in res.json()["runs"]}
    assert {"disksleuth-host-a", "disksleuth-host-b"} <= hosts
    res = cli("runs", "--db", db, "--json", "--host", "disksleuth-host-b")
    assert res.code == 0, res.err
    assert {r["host"] for r in res.json()["runs"]} == {"disksleuth-host-b"}

    res = cli("fleet", "--db", db, "--json")
    assert res.code in (0, 1), res.err
    fleet = res.json()["fleet"]
    assert res.json()["schema"] == "disksleuth/1"
    assert {"disksleuth-host-a", "disksleuth-host-b"} <= set(fleet["hosts"])
    rows = [r for r in fleet["rows"] if r["host"].startswith("disksleuth-host-")]
    assert len(rows) == 2 and all(r["seq_read_mbps"] and r["seq_read_mbps"] > 0 for r in rows)
    res = cli("fleet", "--db", db)
    assert "disksleuth-host-a" in res.out and "disksleuth-host-b" in res.out


@pytest.mark.root
@pytest.mark.slow
@needs_loop
@needs_fio
@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_two_hosts_check_into_one_store_at_once(cli, tmp_path, request, store) -> None:
    reason = _unshare_missing()
    if reason:
        pytest.skip(reason)
    from conftest import loop_device

    # A real PostgreSQL cluster (conftest's postgres_server), or a SQLite file: the same command surface.
    db = request.getfixturevalue("fresh_postgres_url") if store == "postgresql" else f"sqlite:///{tmp_path}/f.sqlite"
    with loop_device(64, fill=True) as dev:
        two_hosts_check_into(db, dev)
    assert_fleet_shows_both(cli, db)


def _run(id_: int, host: str, device: str, severities: list[str], read: float | None = 500.0) -> dict:
    return {
        "id": id_,
        "hostname": host,
        "device_name": device,
        "device_model": "m",
        "device_transport": "nvme",
        "started_at": f"2026-11-2{id_}T10:00:00+0000",
        "kind": "check",
        "profile": "quick",
        "summary": "s",
        "device": {"link": {"current_ceiling_mbps": 1772.0}},
        "findings": [{"code": f"code_{s}", "severity": s, "message": ""} for s in severities],
        "seq_read_mbps": read,
        "seq_write_mbps": None,
    }


def test_fleet_rows_worst_first() -> None:
    rows = fleet_rows(
        [
            _run(1, "b", "sda", ["ok"]),
            _run(2, "a", "nvme0n1", ["info", "warn"]),
            _run(3, "c", "sdb", ["critical", "info"]),
            _run(4, "a", "sda", ["info"]),
        ]
    )
    assert [(r.host, r.device, r.worst) for r in rows] == [
        ("c", "sdb", "critical"),
        ("a", "nvme0n1", "warn"),
        ("a", "sda", "info"),
        ("b", "sda", "ok"),
    ]
    assert rows[1].codes == ("code_warn", "code_info") and rows[3].codes == ()
    assert rows[0].ceiling_mbps == 1772.0


def test_fleet_on_a_missing_store_is_one_line(cli, tmp_path) -> None:
    missing = tmp_path / "none.sqlite"
    res = cli("fleet", "--db", f"sqlite:///{missing}")
    assert res.code == 2 and "no results store" in res.err and len(res.err.strip().splitlines()) == 1
    assert not missing.exists()


def _three_host_store(tmp_path, cli) -> str:
    """A real SQLite store with the sample run recorded by three hosts, one of them named like an attack."""
    import copy

    from conftest import HERE

    with open(os.path.join(HERE, "..", "benchmarks", "sample_run.json")) as fh:
        sample = json.load(fh)
    runs = []
    for host, device, findings in (
        ("web-01", "nvme0n1", [("link_downgraded", "warn")]),
        ("web-02", "sda", [("health_critical", "critical"), ("sata_link_downgraded", "info")]),
        ("<script>x</script>[bold]\x1b[2J", "nvme1n1", [("ok", "ok")]),
    ):
        doc = copy.deepcopy(sample)
        doc["run"]["host"]["hostname"] = host
        doc["run"]["device"] = doc["device"]["name"] = device
        doc["run"].pop("id", None)
        doc["run"].pop("uuid", None)
        doc["findings"] = [{"code": c, "severity": s, "message": "m", "evidence": {}, "hint": ""} for c, s in findings]
        runs.append(doc)
    export = tmp_path / "runs.json"
    export.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": runs}))
    db = f"sqlite:///{tmp_path}/three.sqlite"
    assert cli("import", str(export), "--db", db).code == 0
    return db


@pytest.mark.parametrize("columns", [60, 80, 140])
def test_fleet_table_fits_and_never_cuts_a_number(cli, tmp_path, columns) -> None:
    db = _three_host_store(tmp_path, cli)
    # A process of its own: the terminal width is read once per process.
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    res = subprocess.run([*CLI, "fleet", "--db", db], capture_output=True, text=True, env=env)
    assert res.returncode == 1, res.stderr  # a warn and a critical row
    out = res.stdout
    lines = out.splitlines()
    assert all(len(line) <= columns for line in lines), lines
    assert out.count("1,549") == 3  # every read figure whole
    header = next(i for i, line in enumerate(lines) if line.startswith("host"))
    assert lines[header + 1].startswith("web-02") and "critical" in lines[header + 1]  # worst first
    # Shown literally, not read as markup (a narrow column may fold it over two lines).
    assert "<script>x</script>[bold]" in out or columns < 140  # 140: the profile column came (issue 40)
    assert "\x1b" not in out  # the host name's escape sequence is shown, not run


def test_fleet_report_is_escaped_html(cli, tmp_path) -> None:
    db = _three_host_store(tmp_path, cli)
    out = tmp_path / "fleet.html"
    res = cli("report", "--fleet", "-o", str(out), "--db", db, "--json")
    assert res.code == 0, res.err
    assert res.json()["report"]["rows"] == 3
    page = out.read_text()
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;[bold]" in page and "\x1b" not in page
    assert page.index("web-02") < page.index("web-01")  # critical before warn
    assert "<svg" in page  # the throughput chart
    res = cli("report", "-o", str(out), "--db", db)  # no run and no --fleet: the newest run (issue 20)
    assert res.code == 0 and "the newest run, #3" in res.out
    res = cli("report", "1", "--fleet", "-o", str(out), "--db", db)
    assert res.code == 2
