"""`watch` (issue 38 item 4; the command did not exist on 569f238): two passes diffed (pure), mutes and quiet hours,
its config file, its store on SQLite and PostgreSQL, the command run twice over a real-layout tree with real
`smartctl --json` captures saved beside it, and its systemd units checked by `systemd-analyze verify`.
The notifications themselves are tested against real receivers in test_watch_notify.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess

import pytest
from conftest import SMARTCTL_FIXTURES, SYSFS
from test_json_schema import assert_valid

from disksleuth.analysis.watch import (
    apply_mutes,
    diff,
    heartbeat_due,
    in_quiet_hours,
    overdue_s,
    parse_quiet_hours,
)
from disksleuth.model.watch import DriveSeen, PassState, SeenFinding, WatchConfig

FAILING = os.path.join(SYSFS, "array_raid1_failing_member")  # sdb healthy, sdc SMART FAILED; captures beside it
WDC = os.path.join(SMARTCTL_FIXTURES, "WDC_WD20EFRX-68EUZN0_17.json")
CRC = "interface.UDMA_CRC_Error_Count (ATA 199)"
MEDIA = "media.Current_Pending_Sector (ATA 197)"


def _drive(key="k1", findings=(), counters=None, **kw) -> DriveSeen:
    return DriveSeen(key, kw.pop("device", "sda"), "M", tuple(findings), counters or {}, True, **kw)


def _f(code: str, severity: str) -> SeenFinding:
    return SeenFinding(code, severity, f"{code} said")


# --- the diff, pure -------------------------------------------------------------------------------


def test_first_pass_tells_warn_and_critical_once_and_nothing_else():
    now = PassState(1.0, (_drive(findings=[_f("slot_limited", "info"), _f("media_errors", "warn")]),))
    assert [(c.kind, c.code) for c in diff(None, now)] == [("new", "media_errors")]
    assert diff(now, PassState(2.0, now.drives)) == []  # the same again: nothing


def test_a_rise_a_growth_a_new_finding_and_a_missing_drive():
    before = PassState(
        1.0,
        (
            _drive(findings=[_f("interface_crc_errors", "info")], counters={CRC: 108, MEDIA: 4, "unsafe_shutdowns": 3}),
            _drive("k2", device="sdb"),
        ),
    )
    now = PassState(
        2.0,
        (
            _drive(
                findings=[_f("interface_crc_errors", "warn"), _f("temperature_high", "critical")],
                counters={CRC: 131, MEDIA: 6, "unsafe_shutdowns": 9},  # unsafe shutdowns are not a warning sign
            ),
        ),
    )
    changes = diff(before, now)
    # The CRC count's growth is told by its finding's rise (its message names the growth): not twice.
    assert [(c.kind, c.device, c.code or c.counter) for c in changes] == [
        ("worse", "sda", "interface_crc_errors"),
        ("new", "sda", "temperature_high"),
        ("grew", "sda", MEDIA),
        ("missing", "sdb", None),
    ]
    worse, _, grew, _ = changes
    assert (worse.before, worse.severity) == ("info", "warn")
    assert (grew.from_value, grew.to_value, grew.severity) == (4, 6, "critical")


def test_a_counter_that_fell_a_severity_that_fell_and_a_carried_drive_are_not_news():
    before = PassState(1.0, (_drive(findings=[_f("media_errors", "critical")], counters={CRC: 9}),))
    after = PassState(2.0, (_drive(findings=[_f("media_errors", "warn")], counters={CRC: 3}),))
    assert diff(before, after) == []
    carried = PassState(3.0, (_drive(findings=[_f("smart_failed", "critical")], counters={CRC: 99}, carried=True),))
    assert diff(before, carried) == []  # not read this pass: what it shows is the pass before's


def test_mutes_by_drive_code_both_model_and_grew():
    before = PassState(1.0, (_drive(counters={CRC: 1}),))
    now = PassState(2.0, (_drive(findings=[_f("temperature_high", "warn")], counters={CRC: 2}),))
    changes = diff(before, now)

    def muted(*specs: str) -> list[bool]:
        return [c.muted for c in apply_mutes(changes, specs)]

    assert muted() == [False, False]
    assert muted("sda") == [True, True] and muted("/dev/sda") == [True, True] and muted("M") == [True, True]
    assert muted("temperature_high") == [True, False]
    assert muted("sda:interface_crc_errors") == [False, True] and muted("grew") == [False, True]
    assert muted("sdb") == [False, False] and muted("sdb:temperature_high") == [False, False]


def test_quiet_hours_wrap_midnight_heartbeat_and_overdue():
    span = parse_quiet_hours("22:00-07:00")
    at = lambda h, m=0: dt.datetime(2026, 11, 18, h, m)  # noqa: E731
    assert [in_quiet_hours(span, at(h)) for h in (21, 22, 23, 0, 6)] == [False, True, True, True, True]
    assert in_quiet_hours(span, at(7)) is False and in_quiet_hours(parse_quiet_hours("12:00-13:00"), at(12, 30))
    for bad in ("22-07", "22:00", "25:00-07:00", "07:00-07:00", "7:5-8:00"):
        with pytest.raises(ValueError):
            parse_quiet_hours(bad)
    week = 7 * 86400
    assert heartbeat_due(None, None, 10.0, 7) is False  # the first pass: no heartbeat
    assert heartbeat_due(None, 0.0, week - 1, 7) is False and heartbeat_due(None, 0.0, week, 7) is True
    assert heartbeat_due(week, 0.0, week + 3600, 7) is False and heartbeat_due(0.0, 0.0, 1e9, None) is False
    assert overdue_s(None, 1e6, 48) is None and overdue_s(0.0, 47 * 3600, 48) is None
    assert overdue_s(0.0, 49 * 3600, 48) == 49 * 3600


# --- the config file ---------------------------------------------------------------------------------


def test_config_file_read_and_options_added(tmp_path):
    from disksleuth.run.watch import read_config, with_options

    path = tmp_path / "watch.toml"
    path.write_text(
        'notify = ["json://127.0.0.1:9/x"]\nquiet_hours = "22:30-06:15"\nmute = ["sdb", "temperature_high"]\n'
        "heartbeat_days = 0\noverdue_hours = 30\n"
    )
    path.chmod(0o600)  # a config naming notify URLs that others can read is warned of
    config = read_config(str(path))
    assert config == WatchConfig(
        notify=("json://127.0.0.1:9/x",), quiet_hours=(1350, 375), mutes=("sdb", "temperature_high"),
        heartbeat_days=None, overdue_hours=30.0, source=str(path),
    )  # fmt: skip
    both = with_options(config, notify=["ntfy://h/t", "json://127.0.0.1:9/x"], mutes=["sdc"], quiet_hours="01:00-02:00")
    assert both.notify == ("json://127.0.0.1:9/x", "ntfy://h/t") and both.mutes == ("sdb", "temperature_high", "sdc")
    assert both.quiet_hours == (60, 120)


@pytest.mark.parametrize(
    "text, said",
    [
        ("notify = [", "not TOML"),
        ('notfy = ["x"]', "unknown key 'notfy'"),
        ("notify = [1]", "notify must be a list of strings"),
        ('quiet_hours = "22:00"', "quiet hours are START-END"),
        ("heartbeat_days = -1", "heartbeat_days must be a positive number"),
    ],
)
def test_a_bad_config_is_one_line_and_exit_2(cli, tmp_path, text, said):
    path = tmp_path / "watch.toml"
    path.write_text(text)
    res = cli("watch", "--config", str(path), "--db", f"{tmp_path}/s.sqlite", "--sysfs-root", FAILING)
    assert res.code == 2 and res.out == "" and res.err.count("\n") == 1 and said in res.err, res.err


def test_a_url_apprise_cannot_use_is_refused_before_anything_is_read(cli, tmp_path):
    db = f"{tmp_path}/s.sqlite"
    for url, said in (("nosuchscheme://x/y", "Apprise cannot use this nosuchscheme URL"), ("plain", "--notify")):
        res = cli("watch", "--notify", url, "--db", db, "--sysfs-root", FAILING)
        assert res.code == 2 and res.err.count("\n") == 1 and said in res.err, res.err
    assert not os.path.exists(db)


# --- the command, twice --------------------------------------------------------------------------


def test_watch_twice_over_a_tree_then_a_grown_counter(cli, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FAILING, tree, symlinks=True)
    db = f"sqlite:///{tmp_path}/store.sqlite"
    args = ("watch", "--sysfs-root", str(tree), "--db", db)

    first = cli(*args, "--json")
    assert first.code == 1, first.err  # news at critical
    doc = first.json()
    assert_valid(doc, "watch")
    assert doc["previous_at_s"] is None and doc["worst"] == "critical"
    assert [(c["kind"], c["device"], c["code"]) for c in doc["changes"]] == [
        ("new", "sdc", "health_critical"),
        ("new", "sdc", "media_errors"),
        ("new", "sdc", "sata_link_downgraded"),
    ]
    assert {d["device"]: d["health_read"] for d in doc["drives"]} == {"sdb": True, "sdc": True}

    second = cli(*args)
    assert second.code == 0, second.err
    assert "Changes: none since the pass of 20" in second.out and "sdc" in second.out

    with open(WDC) as fh:
        sdb = json.load(fh)
    for attr in sdb["ata_smart_attributes"]["table"]:
        if attr["id"] == 199:
            attr["raw"] = {"value": 7, "string": "7"}
    (tree / "smartctl" / "sdb.json").write_text(json.dumps(sdb))
    third = cli(*args, "--json")
    assert third.code == 1
    changes = [(c["kind"], c["device"], c.get("code") or c.get("counter")) for c in third.json()["changes"]]
    assert changes == [("new", "sdb", "interface_crc_errors")]  # the new finding tells the count: not twice
    assert "(UDMA_CRC_Error_Count (ATA 199) 7 so far)" in third.json()["changes"][0]["message"]
    fourth = cli(*args, "--json", "--mute", "sdb")
    assert fourth.code == 0 and fourth.json()["changes"] == []

    # The live machine's passes are kept apart from the tree's: this one is a first pass of its own.
    live = cli("watch", "--db", db, "--json")
    assert live.code in (0, 1) and live.json()["previous_at_s"] is None


def test_the_store_keeps_passes_on_postgresql(postgres_server, tmp_path):
    from disksleuth.run.watch import watch_pass

    url = postgres_server.create_database()
    config = WatchConfig(heartbeat_days=None)
    first = watch_pass(config, db=url, sysfs_root=FAILING, now_s=1e9, hostname="pg", scope=FAILING)
    again = watch_pass(config, db=url, sysfs_root=FAILING, now_s=1e9 + 3600, hostname="pg", scope=FAILING)
    assert len(first.changes) == 3 and again.changes == () and again.previous_at_s == 1e9


# --- systemd units --------------------------------------------------------------------------------


def test_units_install_verify_and_uninstall_only_ours(cli, tmp_path):
    units = tmp_path / "units"
    units.mkdir()
    config = tmp_path / "watch.toml"
    config.write_text('notify = ["json://127.0.0.1:9/x"]\n')
    res = cli("watch", "--install", "--unit-dir", str(units), "--config", str(config), "--short-test-at", "off",
              "--long-test-at", "Sat *-*-1..7 02:00", "--json")  # fmt: skip
    assert res.code == 0, res.err
    doc = res.json()
    assert_valid(doc, "watch_units")
    names = sorted(os.listdir(units))
    assert names == [
        "disksleuth-selftest-long.service",
        "disksleuth-selftest-long.timer",
        "disksleuth-watch.service",
        "disksleuth-watch.timer",
    ]
    service = (units / "disksleuth-watch.service").read_text()
    assert f"--config {config}" in service and "Type=oneshot" in service and "SuccessExitStatus=1" in service
    assert "OnCalendar=Sat *-*-1..7 02:00" in (units / "disksleuth-selftest-long.timer").read_text()
    assert "--self-test long" in (units / "disksleuth-selftest-long.service").read_text()

    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze missing (Debian package systemd)")
    verified = subprocess.run(
        [analyze, "verify", *(str(units / n) for n in names)], capture_output=True, text=True, timeout=60
    )
    problems = [line for line in verified.stderr.splitlines() if "disksleuth" in line]
    assert verified.returncode == 0 and not problems, verified.stderr

    foreign = units / "disksleuth-selftest-short.timer"  # a file of the same name that disksleuth did not write
    foreign.write_text("[Timer]\nOnCalendar=daily\n")
    again = cli("watch", "--install", "--unit-dir", str(units))
    assert again.code == 2 and "was not written by disksleuth" in again.err and foreign.read_text().startswith("[T")
    (units / "disksleuth-watch.timer").unlink()
    os.symlink("/etc/hostname", units / "disksleuth-watch.timer")  # a link is never ours either
    gone = cli("watch", "--uninstall", "--unit-dir", str(units), "--json")
    assert gone.code == 0
    assert sorted(os.listdir(units)) == ["disksleuth-selftest-short.timer", "disksleuth-watch.timer"]
    assert len(gone.json()["files"]) == 3 and sum("left as it is" in n for n in gone.json()["notes"]) == 2


def test_unit_options_alone_are_a_usage_error(cli):
    res = cli("watch", "--unit-dir", "/tmp")
    assert res.code == 2 and "go with --install" in res.err
    res = cli("watch", "--install", "--unit-dir", "/nonexistent-dir")
    assert res.code == 2 and "no such directory" in res.err


def test_a_hostile_model_name_never_breaks_a_message_line():
    """A model name from a hostile tree or capture with a newline and an escape: one line, escapes visible."""
    from disksleuth.model.watch import Change
    from disksleuth.present.watch_view import change_line, changes_title

    c = Change("new", "k", "sda\nBcc: x@y", "M\r\nSubject: hi\x1b[2J", "warn", "media_errors", "line1\nline2")
    line = change_line(c)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\\x1b[2J" in line
    assert "\n" not in changes_title("h", [c])


def test_units_name_the_store_absolutely_and_keep_a_password_from_other_users(cli, tmp_path, monkeypatch):
    """A service starts in / with none of this shell's variables: a relative --db is made absolute, and a store
    URL with a password makes the units readable by root only."""
    units = tmp_path / "units"
    units.mkdir()
    monkeypatch.chdir(tmp_path)
    assert cli("watch", "--install", "--unit-dir", str(units), "--db", "rel.sqlite").code == 0
    service = (units / "disksleuth-watch.service").read_text()
    assert f"--db {tmp_path}/rel.sqlite" in service
    assert (units / "disksleuth-watch.service").stat().st_mode & 0o777 == 0o644
    res = cli("watch", "--install", "--unit-dir", str(units), "--db", "postgresql://w:s3cret@db.example/ds", "--json")
    assert res.code == 0 and any("root only" in n for n in res.json()["notes"])
    assert "s3cret" not in res.out
    assert all((units / n).stat().st_mode & 0o777 == 0o600 for n in os.listdir(units))


def test_self_tests_start_only_on_this_machines_drives(cli, tmp_path):
    res = cli("watch", "--self-test", "short", "--sysfs-root", FAILING, "--db", f"{tmp_path}/s.sqlite", "--json")
    doc = res.json()
    assert res.code == 1 and doc["self_tests"] == []
    assert "self-tests start only on this machine's drives, not under --sysfs-root" in doc["notes"]


def test_a_drive_not_read_this_pass_keeps_its_last_state_and_says_nothing(cli, tmp_path):
    """Asleep, or its reading gone: its last known health stands (carried), no 'missing', no change; read again,
    it is compared with that."""
    tree = tmp_path / "tree"
    shutil.copytree(FAILING, tree, symlinks=True)
    args = ("watch", "--sysfs-root", str(tree), "--db", f"{tmp_path}/s.sqlite", "--json")
    assert cli(*args).code == 1
    saved = (tree / "smartctl" / "sdc.json").read_bytes()
    (tree / "smartctl" / "sdc.json").unlink()
    doc = cli(*args).json()
    sdc = next(d for d in doc["drives"] if d["device"] == "sdc")
    assert sdc["carried"] and "no smartctl output saved" in sdc["not_read"] and doc["changes"] == []
    (tree / "smartctl" / "sdc.json").write_bytes(saved)
    again = cli(*args)
    assert again.code == 0 and again.json()["changes"] == []


def test_a_reading_a_watch_pass_kept_is_a_valid_health_reading():
    """A live pass keeps its readings with source "watch": health --history --json shows them."""
    from test_json_schema import is_valid

    reading = {  # with the schema tag every validated document carries
        "schema": "disksleuth/1", "read_at": "2026-11-27T23:00:00Z", "read_at_s": 1.0, "source": "watch",
        "device": "sda", "host": "h", "drive_key": "k", "serial_id": None, "model": None, "counters": {},
    }  # fmt: skip
    assert is_valid(reading, "health_reading")


def test_the_newest_benchmarks_baseline_verdict_is_watched(cli, tmp_path):
    """On the live machine, the newest stored run of each drive brings its slower_than_usual (its verdict against
    the drive's own past runs): a real stored run of vda, given that finding, is told once."""
    import socket
    import sqlite3

    from conftest import DATA

    from disksleuth.probe.block import list_devices

    path = tmp_path / "store.sqlite"
    assert cli("import", os.path.join(DATA, "store", "real-runs-export.json"), "--db", str(path)).code == 0
    with sqlite3.connect(path) as con:
        (run_id,) = con.execute("SELECT MAX(id) FROM runs WHERE device_name = 'vda'").fetchone()
        con.execute("UPDATE runs SET hostname = ? WHERE id = ?", (socket.gethostname(), run_id))
        con.execute(
            "INSERT INTO findings (run_id, code, severity, message, evidence_json, hint) VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, "slower_than_usual", "warn", "RND4K read 20% under its median", "{}", "look"),
        )
    if not any(d.name == "vda" for d in list_devices("/")):
        pytest.skip("this machine has no vda (the drive of the stored run)")
    first = cli("watch", "--db", str(path), "--json")
    changes = [(c["kind"], c["device"], c["code"]) for c in first.json()["changes"]]
    assert first.code == 1 and changes == [("new", "vda", "slower_than_usual")]
    assert f"run #{run_id}: RND4K read 20% under its median" in first.json()["changes"][0]["message"]
    assert cli("watch", "--db", str(path), "--json").json()["changes"] == []


def test_the_heartbeat_says_all_well_or_names_what_is_not():
    from disksleuth.present.watch_view import heartbeat_text

    assert heartbeat_text("h", 3, []) == ("disksleuth on h: all well", "Still watching 3 drives on h, all well.")
    assert heartbeat_text("h", 1, ["sda media_errors"])[1] == (
        "Still watching 1 drive on h; at warn or critical: sda media_errors."
    )
