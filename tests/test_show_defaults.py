"""What users expected (issue 20, section 3): `show` and `report` without a run id take the newest run and say
which; `bench --help` and `check --help` describe each profile and how long it takes (from profiles.py); and
`show --grid` prints the CrystalDiskMark-style grid people paste into forums."""

from __future__ import annotations

import re

import pytest
from test_store import _doc

from disksleuth.store.db import Store

STANDARD = ("SEQ1M_Q8T1", "SEQ1M_Q1T1", "RND4K_Q32T1", "RND4K_Q1T1")


def _standard_doc() -> dict:
    """A standard-profile run: its eight tests, read then write, with figures."""
    doc = _doc(3456.1, 400000.0, "Samsung SSD 970 EVO Plus 250GB", started="2026-11-22T18:30:00+0000")
    (template, _rnd) = doc["tests"]
    tests = []
    for n, base in enumerate(STANDARD):
        for direction in ("read", "write"):
            test = {**template, "id": f"{base}_{direction}", "series": []}
            mbps = 3456.1 / (n + 1) + (0 if direction == "read" else -100.25)
            test["read_mbps"] = mbps if direction == "read" else None
            test["write_mbps"] = mbps if direction == "write" else None
            tests.append(test)
    doc["tests"] = tests
    doc["run"]["profile"] = "standard"
    doc["run"]["size_bytes"] = 1 << 30
    return doc


@pytest.fixture
def two_runs(tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        older = store.save(_doc(373.0, 2000.0, "Older Drive", started="2026-11-20T10:00:00+0000"))
        newer = store.save(_standard_doc())
    return db, older, newer


def test_show_without_a_run_shows_the_newest_and_says_so(cli, two_runs, monkeypatch):
    db, _older, newer = two_runs
    monkeypatch.setenv("COLUMNS", "200")
    res = cli("show", "--db", db)
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0] == f"No run given: the newest, #{newer} (`disksleuth show ID` shows another).", res.out
    assert lines[1].startswith(f"Run #{newer}  ") and "Samsung SSD 970 EVO Plus 250GB" in lines[1]
    assert "Older Drive" not in res.out
    doc = cli("show", "--db", db, "--json").json()  # --json: the document alone, of the newest run
    assert doc["run"]["id"] == newer


def test_show_without_a_run_on_an_empty_store_says_there_is_none(cli, tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        store.delete([store.save(_doc(373.0, 2000.0, "X"))])
    res = cli("show", "--db", db)
    assert res.code == 2 and res.out == ""
    assert res.err == "disksleuth: no runs yet: `disksleuth check` or `disksleuth bench DIR` saves one\n"


def test_report_without_a_run_reports_the_newest_and_says_so(cli, two_runs, tmp_path):
    db, _older, newer = two_runs
    out = tmp_path / "r.html"
    res = cli("report", "-o", str(out), "--db", db)
    assert res.code == 0, res.err
    assert re.fullmatch(rf"wrote {re.escape(str(out))} \(\d+ KiB, the newest run, #{newer}\)\n", res.out), res.out
    html = out.read_text()
    assert "Samsung SSD 970 EVO Plus 250GB" in html and "Older Drive" not in html


@pytest.mark.parametrize("command", ["bench", "check"])
def test_profile_help_describes_each_profile_and_its_duration(cli, command, monkeypatch):
    from disksleuth.profiles import PROFILES

    monkeypatch.setenv("COLUMNS", "100")
    res = cli(command, "--help")
    assert res.code == 0, res.err
    flat = " ".join(res.out.split())  # argparse wraps: compare the words
    for profile in PROFILES.values():
        said = f"{profile.name} {profile.description} ({profile.expected_duration()})"
        assert " ".join(said.split()) in flat, (profile.name, res.out)
    assert all(len(line) <= 100 for line in res.out.splitlines())


def test_expected_durations_follow_the_profiles_bounds():
    from disksleuth.profiles import PROFILES

    # The standard set is built to end in 20 s (docs/PERFORMANCE.md, issue 37; probes and Python included).
    low, high = PROFILES["standard"].expected_seconds()
    assert 10 < low < high <= 20
    # quick: four tests of 1.5-3 s, each with its 0.5 s ramp and fio's start and stop.
    assert PROFILES["quick"].expected_duration() == "about 9-15 s"
    # riscos measures a RAM reference too: twice the tests.
    r_low, _ = PROFILES["riscos"].expected_seconds()
    assert r_low == pytest.approx(2 * (3 * (1.0 + 0.3) + 2.0 + 4.0 + 4.0))
    assert PROFILES["sustained"].expected_seconds() is None
    assert PROFILES["sustained"].expected_duration() == "at most 30 min by default"


def test_show_grid_is_the_crystaldiskmark_grid_in_plain_text(cli, two_runs, monkeypatch):
    db, _older, newer = two_runs
    monkeypatch.delenv("NO_COLOR", raising=False)
    res = cli("show", str(newer), "--grid", "--db", db)
    assert res.code == 0, res.err
    assert res.out == (
        "Samsung SSD 970 EVO Plus 250GB · 250.1 GB · standard, 1 GiB · 2026-11-22\n"
        "MB/s            Read    Write\n"
        "SEQ1M Q8T1   3,456.1  3,355.8\n"
        "SEQ1M Q1T1   1,728.0  1,627.8\n"
        "RND4K Q32T1  1,152.0  1,051.8\n"
        "RND4K Q1T1     864.0    763.8\n"
    )
    assert "\x1b" not in res.out and all(len(line) <= 80 for line in res.out.splitlines())


def test_show_grid_without_a_run_names_the_newest_on_stderr_only(cli, two_runs):
    db, _older, newer = two_runs
    res = cli("show", "--grid", "--db", db)
    assert res.code == 0, res.err
    assert res.out.startswith("Samsung SSD 970 EVO Plus 250GB") and "No run given" not in res.out
    assert res.err == f"disksleuth: no run given: the newest, #{newer}\n"


def test_show_grid_with_json_is_one_usage_line(cli, two_runs):
    db, _older, newer = two_runs
    res = cli("show", str(newer), "--grid", "--json", "--db", db)
    assert res.code == 2
    assert "--grid is plain text" in res.json()["error"]["message"]
