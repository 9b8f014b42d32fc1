"""`fleet` at fleet scale (issue 27): counts by severity, finding code and model first, then the worst devices
(--limit, --all), with filters (--host GLOB, --model, --finding, --severity, --since), counted over a store whose
contents the test knows: real SQLite and a real PostgreSQL server, filled with benchmarks/sample_run.json varied
by host, device, serial, model and findings. Bad input is one line and exit 2."""

from __future__ import annotations

import ast
import copy
import json
import os
import random
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from conftest import SAMPLE_RUN

from disksleuth.analysis.codes import FINDING_CODES
from disksleuth.analysis.siblings import Drive, judge_drive, judge_fleet
from disksleuth.store.db import Store

EVO, PRO, WDC = "Samsung SSD 870 EVO 1TB", "Samsung SSD 980 PRO 2TB", "WDC WD40EFRX-68N32N0"
RECENT = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S%z")
# host, device, model, findings, started_at; web-03 sda has an older critical run, then an ok one (the newest counts)
FLEET = (
    ("web-01", "sda", EVO, [("link_downgraded", "warn")], "2026-11-20T10:00:00+0000"),
    ("web-01", "sdb", EVO, [], "2026-11-20T10:01:00+0000"),
    ("web-02", "sda", EVO, [("health_critical", "critical"), ("interface_crc_errors", "warn")], "2026-11-20T10:02:00Z"),
    ("web-02", "nvme0n1", PRO, [("behind_chipset", "info")], "2026-11-20T10:03:00+0000"),
    ("web-03", "sda", WDC, [("health_critical", "critical")], "2026-11-19T09:00:00+0000"),
    ("db-01", "nvme0n1", PRO, [("link_downgraded", "warn")], "2026-11-20T10:05:00+0000"),
    ("db-02", "sda", WDC, [("interface_crc_errors", "warn")], RECENT),
    ("web-03", "sda", WDC, [], "2026-11-21T09:00:00+0000"),
)


def _doc(host: str, device: str, model: str, findings: list[tuple[str, str]], started_at: str) -> dict:
    with open(SAMPLE_RUN) as fh:
        doc = copy.deepcopy(json.load(fh))
    run = doc["run"]
    run.pop("id", None)
    run.update(uuid=str(uuid.uuid4()), started_at=started_at, device=device, target=f"/dev/{device}")
    run["host"]["hostname"] = host
    # A firmware per drive: no two drives are siblings, so the counts are the findings stored.
    doc["device"].update(name=device, model=model, firmware=f"FW-{host}-{device}", serial=f"S-{host}-{device}")
    doc["device"]["link"]["current_ceiling_mbps"] = 570.0
    doc["findings"] = [
        {"code": c, "severity": s, "message": f"{device} on {host}: {c}", "evidence": {}, "hint": ""}
        for c, s in findings
    ] or [{"code": "ok", "severity": "ok", "message": "fine", "evidence": {}, "hint": ""}]
    return doc


def fill(url: str) -> None:
    with Store(url) as store:
        store.save_many([(_doc(*row), (), None) for row in FLEET])


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path) -> str:
    url = request.getfixturevalue("fresh_postgres_url") if request.param == "postgresql" else f"sqlite:///{tmp_path}/f.sqlite"
    fill(url)
    return url


def test_the_summary_counts_what_the_store_holds(cli, db):
    res = cli("fleet", "--json", "--db", db)
    assert res.code == 1, res.err  # warn and critical devices
    fleet = res.json()["fleet"]
    summary = fleet["summary"]
    assert (summary["devices"], summary["hosts"], summary["store_devices"]) == (7, 5, 7)
    assert summary["by_severity"] == fleet["counts"] == {"critical": 1, "warn": 3, "info": 1, "ok": 2}
    assert summary["by_finding"] == [
        {"code": "interface_crc_errors", "devices": 2},
        {"code": "link_downgraded", "devices": 2},
        {"code": "behind_chipset", "devices": 1},
        {"code": "health_critical", "devices": 1},  # web-03's critical run is not its newest
    ]
    assert summary["by_model"] == [
        {"model": EVO, "devices": 3, "critical": 1, "warn": 1, "info": 0, "ok": 1},
        {"model": PRO, "devices": 2, "critical": 0, "warn": 1, "info": 1, "ok": 0},  # a tie: by name
        {"model": WDC, "devices": 2, "critical": 0, "warn": 1, "info": 0, "ok": 1},
    ]
    # Worst first: severity, then the number of findings, then host and device.
    assert [(r["host"], r["device"]) for r in fleet["rows"]] == [
        ("web-02", "sda"),
        ("db-01", "nvme0n1"),
        ("db-02", "sda"),
        ("web-01", "sda"),
        ("web-02", "nvme0n1"),
        ("web-01", "sdb"),
        ("web-03", "sda"),
    ]
    assert fleet["limit"] == 20 and fleet["hosts"] == ["db-01", "db-02", "web-01", "web-02", "web-03"]
    newest = next(r for r in fleet["rows"] if r["host"] == "web-03")
    assert newest["worst"] == "ok" and newest["started_at"] == "2026-11-21T09:00:00+0000"

    text = cli("fleet", "--db", db).out.splitlines()
    assert text[0] == "7 drives on 5 hosts: 2 ok, 1 info, 3 warn, 1 critical"
    assert text[1] == "findings: interface_crc_errors 2, link_downgraded 2, behind_chipset 1, health_critical 1"
    assert text[2].startswith(f"models: {EVO} 3 (1 critical, 1 warn); {PRO} 2 (1 warn); {WDC} 2 (1 warn)")


def test_limit_all_and_each_filter(cli, db):
    def rows(*args: str) -> tuple[list[tuple[str, str]], dict]:
        res = cli("fleet", "--json", "--db", db, *args)
        assert res.code in (0, 1), res.err
        fleet = res.json()["fleet"]
        return [(r["host"], r["device"]) for r in fleet["rows"]], fleet["summary"]

    shown, summary = rows("--limit", "2")
    assert shown == [("web-02", "sda"), ("db-01", "nvme0n1")] and summary["devices"] == 7  # counts: every device
    shown, _ = rows("--all")
    assert len(shown) == 7
    shown, summary = rows("--host", "WEB-*")  # a glob, any case
    assert {h for h, _d in shown} == {"web-01", "web-02", "web-03"} and summary["devices"] == 5
    assert summary["filters"] == {"host": "WEB-*"} and summary["store_devices"] == 7
    assert rows("--host", "db-01")[0] == [("db-01", "nvme0n1")]  # a plain name is itself
    assert {d for _h, d in rows("--model", "870 evo")[0]} == {"sda", "sdb"}  # a substring, any case
    assert len(rows("--model", "870 evo")[0]) == 3
    assert rows("--model", "*PRO 2TB")[0] == [("db-01", "nvme0n1"), ("web-02", "nvme0n1")]  # a glob
    assert rows("--finding", "interface_crc_errors")[0] == [("web-02", "sda"), ("db-02", "sda")]
    assert rows("--finding", "health_worn")[0] == []  # a code disksleuth gives, on no device: empty, not an error
    assert len(rows("--severity", "warn")[0]) == 4  # warn and critical
    assert rows("--severity", "critical")[0] == [("web-02", "sda")]
    assert rows("--since", "2026-11-21")[0] == [("db-02", "sda"), ("web-03", "sda")]
    assert rows("--since", "2h")[0] == [("db-02", "sda")]
    shown, summary = rows("--host", "web-*", "--severity", "info", "--model", "samsung")
    assert shown == [("web-02", "sda"), ("web-01", "sda"), ("web-02", "nvme0n1")]
    assert summary["by_severity"] == {"critical": 1, "warn": 1, "info": 1, "ok": 0}
    # Exit 1 follows the devices kept, shown or not: only ok devices kept is 0.
    assert cli("fleet", "--db", db, "--severity", "ok", "--host", "web-03").code == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--limit", "0"], "--limit 0: give a whole number of devices from 1"),
        (["--limit", "-1"], "--limit -1: give a whole number of devices from 1"),
        (["--limit", "many"], "--limit many: give a whole number"),
        (["--limit", "3", "--all"], "--limit and --all"),
        (["--host", "mail-*"], "--host mail-*: no stored run has a host matching this glob"),
        (["--model", "Optane"], "--model Optane: no device's model contains it"),
        (["--finding", "link_downgrade"], "--finding link_downgrade: no such finding code; the codes are"),
        (["--since", "7x"], "--since '7x': unknown unit 'x'"),
        (["--since", "2026-13-45"], "--since '2026-13-45': not a date"),
        (["--since", "6m"], "--since '6m': m could be minutes or months"),
        # --since takes a date as well as an age: its words said only "give an age such as 30d ..."
        (["--since", "yesterday"], "give an age such as 30d, 12h, 2w, 90min, 6mo or 1y, or a date such as 2026-11-20"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, tmp_path, args, words):
    url = f"sqlite:///{tmp_path}/f.sqlite"
    fill(url)
    res = cli("fleet", "--db", url, *args)
    assert res.code == 2 and res.out == "", res
    assert res.err.count("\n") == 1 and words in res.err, res.err
    if args[0] == "--finding":
        assert "link_downgraded" in res.err and "unlike_siblings" in res.err  # the known codes, listed
    if args[0] == "--host":
        assert "db-01, db-02, web-01, web-02, web-03" in res.err
    res = cli("fleet", "--db", url, "--json", *args)
    assert res.code == 2 and words in res.json()["error"]["message"]


def test_every_code_the_sources_give_is_known():
    """analysis/codes.FINDING_CODES lists every code a Finding (or a finding dict) is made with in src/."""
    import disksleuth

    root = os.path.dirname(disksleuth.__file__)
    made: dict[str, str] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path) as fh:
                tree = ast.parse(fh.read())
            consts = {
                t.id: n.value.value
                for n in tree.body
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            for node in ast.walk(tree):
                arg = None
                func = node.func if isinstance(node, ast.Call) else None
                if isinstance(node, ast.Call) and "Finding" in (getattr(func, "id", None), getattr(func, "attr", None)):
                    arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "code"), None)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    made[arg.value] = path
                elif isinstance(arg, ast.Name) and arg.id in consts:
                    made[consts[arg.id]] = path
    from disksleuth.analysis import baseline

    made.update({baseline.SLOWER: "baseline", baseline.FASTER: "baseline"})  # chosen in a loop
    made.pop("ok", None)
    assert len(made) > 30
    assert set(made) - FINDING_CODES == set(), {c: made[c] for c in set(made) - FINDING_CODES}


def test_siblings_of_a_large_fleet_are_judged_fast_and_alike():
    """judge_fleet (all drives of a model and firmware at once) gives what judge_drive gives each drive, and a
    group of 6,000 drives is judged in well under a second where each drive against all others took minutes."""
    rng = random.Random(27)
    for _trial in range(200):
        drives = []
        for i in range(rng.randint(1, 30)):
            figures = {
                name: rng.choice([None, 500, 500.0, 520, 100, 0, rng.gauss(500, 60), rng.gauss(200, 10)])
                for name in ("seq_read_mbps", "seq_write_mbps", "ceiling_mbps")
            }
            firmware = rng.choice(["F1", "F2", None])
            drives.append(Drive(f"h{i % 25}", "sda", "M", firmware, figures, f"s{i % 20}" if i % 3 else None))
        groups: dict = {}
        for d in drives:
            if d.group:
                groups.setdefault(d.group, []).append(d)
        one_by_one = {}
        for members in groups.values():
            for d in members:
                if found := judge_drive(d, members):
                    one_by_one[d.key] = found
        assert judge_fleet(drives) == one_by_one
    big = [
        Drive(f"h{i}", "sda", "M", "F", {"seq_read_mbps": 500.0 + i % 17, "ceiling_mbps": 570.0}, f"s{i}")
        for i in range(6000)
    ]
    big.append(Drive("slow", "sda", "M", "F", {"seq_read_mbps": 150.0, "ceiling_mbps": 570.0}, "slow"))
    started = time.perf_counter()
    found = judge_fleet(big)
    took_s = time.perf_counter() - started
    assert list(found) == [("slow", "sda")] and found[("slow", "sda")][0].evidence["siblings"] == 6000
    assert len(found[("slow", "sda")][0].evidence["sibling_devices"]) == 20
    assert took_s < 2.0, took_s  # the old code: about 40 s on 2 loaded cores
