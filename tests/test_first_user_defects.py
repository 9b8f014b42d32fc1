"""The defects a first user hit (issue 40, "Defects a first user hit"), each kept fixed by a test that failed
before its fix. Numbers in the test names are the issue's."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import needs_fio


def _root_block_device() -> str | None:
    """The block device this machine's `/` is mounted from, as mountinfo names it, when it is one."""
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            if fields[4] == "/" and " - " in line:
                source = line.split(" - ", 1)[1].split()[1]
                if source.startswith("/dev/") and os.path.exists(source) and stat.S_ISBLK(os.stat(source).st_mode):
                    return source
    return None


@needs_fio
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
@pytest.mark.skipif(_root_block_device() is None, reason="/ is not mounted from a block device here")
def test_7_destructive_bench_of_the_root_disk_says_it_holds_root(cli, tmp_path):
    """Before: "cannot open /dev/vda exclusively ... (Operation not permitted)" when the kernel's exclusive open
    failed with anything but EBUSY (a sandbox refuses O_EXCL); our own reason, named first, is the one people
    understand and the README promises."""
    dev = _root_block_device()
    res = cli("bench", str(dev), "--destructive", "--yes", "--db", str(tmp_path / "s.db"))
    assert res.code == 2, res.err
    assert "holds the root file system (/)" in res.err, res.err
    assert res.err.count("\n") == 1


SMARTCTL = "/work/shared/fixtures/smartctl"


def test_8_a_saved_smartctl_file_is_kept_apart_from_this_hosts_drives(cli, tmp_path):
    """Before: a file captured elsewhere was stored as this host's `sdb`; `health` listed it among this host's
    drives and `--history sdb` mixed a Seagate SCSI drive with a WDC one. Now a file's reading has its own host
    (file:NAME), and `--as-device` is how a file read from this host's drive joins that drive's history."""
    import socket

    from disksleuth.store.db import Store
    from disksleuth.store.health import newest_per_drive

    db = str(tmp_path / "h.db")
    for name in ("SEAGATE_ST373453LC_26.json", "WDC_WD20EFRX-68EUZN0_17.json"):
        assert cli("health", "--from-smartctl", f"{SMARTCTL}/{name}", "--db", db).code in (0, 1)
    here = socket.gethostname()
    with Store(db, create=False, read_only=True) as store:
        assert newest_per_drive(store, here) == []
        kept = newest_per_drive(store)
    assert sorted((r.hostname, r.source) for r in kept) == [
        ("file:SEAGATE_ST373453LC_26.json", "file"),
        ("file:WDC_WD20EFRX-68EUZN0_17.json", "file"),
    ]
    res = cli("health", "--history", "sdb", "--db", db)
    assert res.code == 2 and "no health readings of sdb" in res.err, res.err

    res = cli("health", "--from-smartctl", f"{SMARTCTL}/WDC_WD20EFRX-68EUZN0_17.json", "--as-device", "/dev/sdz",
              "--db", db)  # fmt: skip
    assert res.code == 0, res.err
    with Store(db, create=False, read_only=True) as store:
        assert [(r.device_name, r.model) for r in newest_per_drive(store, here)] == [("sdz", "WDC WD20EFRX-68EUZN0")]
    history = cli("health", "--history", "sdz", "--db", db, "--json")
    assert history.code == 0, history.err
    res = cli("health", "--as-device", "sdz", "--db", db)
    assert res.code == 2 and res.err.count("\n") == 1 and "--from-smartctl" in res.err, res.err


def test_9_health_history_exits_1_on_a_warn_finding_as_health_does(cli, tmp_path):
    """Before: `health --history` printed `! warn · media_errors` and exited 0."""
    db = str(tmp_path / "h.db")
    seagate = f"{SMARTCTL}/SEAGATE_ST373453LC_26.json"
    assert cli("health", "--from-smartctl", seagate, "--as-device", "sdq", "--db", db).code == 1
    res = cli("health", "--history", "sdq", "--db", db)
    assert "warn · media_errors" in res.out and res.code == 1, (res.code, res.err)
    assert cli("health", "--history", "sdq", "--db", db, "--json").code == 1


@pytest.mark.parametrize(
    ("runs", "said"),
    [
        ('[{"run": {"target": "/tmp"}}]', "run 1 is incomplete: run.profile, run.started_at missing"),
        ('[{"x": 1}]', 'run 1 is incomplete: it has no "run" section'),
        ('[{"run": {"target": "/tmp", "profile": "quick", "started_at": "2026-11-21T10:00:00+0000"}}, 7]',
         "run 2 is incomplete: it is int, not a run document"),
    ],
)  # fmt: skip
def test_10_a_failed_import_into_a_new_store_leaves_no_file_and_says_what_is_missing(cli, tmp_path, runs, said):
    """Before: an empty store file stayed behind, and the line said only "run 1 is incomplete" (a flat run such as
    {"x": 1} even read as "not JSON")."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "disksleuth/1", "runs": ' + runs + "}")
    db = tmp_path / "new.db"
    res = cli("import", str(bad), "--db", str(db))
    assert res.code == 2 and res.err.count("\n") == 1 and said in res.err, res.err
    assert sorted(os.listdir(tmp_path)) == ["bad.json"]


def test_10_a_failed_import_into_a_store_that_holds_runs_keeps_it(cli, tmp_path):
    from conftest import sample_export

    db = str(tmp_path / "kept.db")
    assert cli("import", sample_export(tmp_path), "--db", db).code == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "disksleuth/1", "runs": [{"run": {}}]}')
    assert cli("import", str(bad), "--db", db).code == 2
    assert cli("runs", "--db", db, "--json").json()["total"] == 1


REAL_RUNS = "tests/data/store/real-runs-export.json"


def test_3_show_commands_names_a_stand_in_for_the_removed_scratch_file(cli, tmp_path):
    """Before: `show --commands` printed --filename=/tmp/.disksleuth-pgx1p_gk.scratch (or DIR/.disksleuth-X/scratch),
    removed with the run; pasting it made a file that the next run removed as left by a killed run."""
    db = str(tmp_path / "s.db")
    assert cli("import", REAL_RUNS, "--db", db).code == 0
    res = cli("show", "3", "--commands", "--db", db)
    assert res.code == 0, res.err
    lines = [line for line in res.out.splitlines() if " fio --name=" in line]
    assert len(lines) == 4 and ".disksleuth-" not in res.out
    assert all("--filename=/tmp/disksleuth-rerun.scratch " in line for line in lines)
    assert "removed with the run" in res.out and "/tmp/disksleuth-rerun.scratch in its place" in res.out
    # The stored command keeps what ran.
    assert ".disksleuth-" in cli("show", "3", "--json", "--db", db).json()["tests"][0]["fio_command"]


def test_3_the_stand_in_covers_the_private_directory_form_and_leaves_other_files():
    from disksleuth.present.bench_view import with_scratch_stand_in

    cmd = "fio --name=a '--filename=/mnt/my disk/.disksleuth-ab12cd34/scratch' --rw=read"
    assert with_scratch_stand_in(cmd) == (
        "fio --name=a '--filename=/mnt/my disk/disksleuth-rerun.scratch' --rw=read",
        "/mnt/my disk/disksleuth-rerun.scratch",
    )
    mine = "fio --name=a --filename=/data/mine.img --rw=read"
    assert with_scratch_stand_in(mine) == (mine, None)


def _tagged_docs() -> list[dict]:
    """The real x1-to-x4 pair (one drive, BIOS slot mode changed between them), tagged and noted as people do."""
    import json

    with open("tests/data/store/x1-to-x4-export.json") as fh:
        docs = json.load(fh)["runs"]
    for n, (doc, tag, note) in enumerate(
        zip(docs, ("before", "after"), ("slot at x1 (BIOS default)", "BIOS set to x4"), strict=True)
    ):
        doc["run"]["id"], doc["run"]["tags"], doc["run"]["note"] = n + 1, [tag], note
    return docs


def test_2_compare_and_report_name_each_runs_tag_and_note(cli, tmp_path):
    """Before: compare's headers were '#1 Samsung SSD 970 EVO Plus 250GB' for both runs of the drive; the report's
    chart legends and its overview said nothing of `before`/`after`."""
    import json

    from disksleuth.analysis.compare import compare
    from disksleuth.present.compare_view import to_markdown
    from disksleuth.present.report import _runs_table, series_label

    docs = _tagged_docs()
    header = to_markdown(compare(docs)).splitlines()[0]
    assert '#1 Samsung SSD 970 EVO Plus 250GB [before] "slot at x1 (BIOS default)"' in header
    assert '#2 Samsung SSD 970 EVO Plus 250GB [after] "BIOS set to x4"' in header
    assert series_label(docs[1]) == '#2 Samsung SSD 970 EVO Plus 250GB [after] "BIOS set to x4"'  # chart legends
    overview = _runs_table(docs)
    assert "<th>tags</th><th>note</th>" in overview
    assert "<td>before</td><td>slot at x1 (BIOS default)</td>" in overview and "<td>after</td>" in overview

    export = tmp_path / "tagged.json"
    export.write_text(json.dumps({"schema": "disksleuth/1", "runs": docs}))
    db = str(tmp_path / "s.db")
    assert cli("import", str(export), "--db", db).code == 0
    text = cli("compare", "1", "2", "--db", db)  # the terminal table: a tag in brackets is no markup
    assert text.code == 0 and "[before]" in text.out and "[after]" in text.out, text.out


def test_13_the_reports_caveats_say_each_thing_once():
    """Before: 'Not within ±3%: SEQ1M_Q8T1_read, ... did not reach ±3%' and then each test's own 'did not reach ±3%
    in the time it had' note; and 'Skipped: skipped write tests'."""
    from disksleuth.present.report import _caveats

    caveats = _caveats(_tagged_docs()[0])
    assert caveats.count("did not reach ±3%") == 1, caveats
    assert "Skipped:</b> write tests: SEQ1M_Q8T1_write" in caveats and "skipped write" not in caveats


def test_4_members_expectation_comes_from_the_healthy_members():
    """Before: 'a 2-member raid1 of ~1,420 MB/s members should read about 1,420 MB/s', the mean of a 2,737 MB/s
    member and a 104 MB/s one."""
    from disksleuth.analysis.members import expectation
    from disksleuth.model.arrays import MemberReading

    readings = [
        MemberReading("nvme0n1", "/dev/nvme0n1", alone_mbps=2737.0, alone_ci95_pct=2.0),
        MemberReading("sdb", "/dev/sdb", alone_mbps=104.0, alone_ci95_pct=3.0),
    ]
    said = expectation("raid1", readings)
    assert said is not None and said["expected_mbps"] == 2737.0, said
    assert "of ~2,737 MB/s healthy members should read about 2,737 MB/s" in str(said["words"])
    assert "member sdb reads 104 MB/s" in str(said["words"])
    even = expectation("raid0", [MemberReading(n, f"/dev/{n}", alone_mbps=v) for n, v in (("a", 500.0), ("b", 520.0))])
    assert even is not None and even["expected_mbps"] == 1020.0 and "healthy" not in str(even["words"])


def test_4_a_member_faster_together_than_alone_is_remarked():
    from disksleuth.analysis.members import faster_together
    from disksleuth.model.arrays import MemberReading

    odd = MemberReading("nvme0n1", "/dev/nvme0n1", 2737.0, 2.0, together_mbps=4808.0, together_ci95_pct=3.0)
    usual = MemberReading("nvme1n1", "/dev/nvme1n1", 2700.0, 2.0, together_mbps=2650.0, together_ci95_pct=3.0)
    notes = faster_together([odd, usual])
    assert len(notes) == 1 and notes[0].startswith("member nvme0n1 read faster with the others (4,808 MB/s) than alone")


def test_4_the_members_table_draws_no_box_off_a_terminal(cli, tmp_path):
    db = str(tmp_path / "m.db")
    assert cli("import", "tests/data/store/members-loops-export.json", "--db", db).code == 0
    res = cli("show", "1", "--db", db)
    assert res.code in (0, 1) and "/dev/loop3  1,951 MB/s" in res.out, res.out
    assert not any(ch in res.out for ch in "┏━┃│└─┡╇┩"), res.out


def test_5_a_mixed_tests_row_says_whose_latency_it_shows(cli, tmp_path):
    """Before: the randrw75 row showed its reads' latency (the busier direction) under plain 'lat mean µs'."""
    import dataclasses
    import json

    db = str(tmp_path / "s.db")
    assert cli("import", REAL_RUNS, "--db", db).code == 0
    res = cli("show", "2", "--db", db)  # the real mixed run: 75,696 read and 25,272 write IOPS
    assert "latency columns of RND4K_Q64T1_randrw75: its reads (the busier direction)" in res.out, res.out
    assert "latency columns" not in cli("show", "3", "--db", db).out  # one direction per test: nothing to say

    from disksleuth.analysis.results import latency_direction
    from disksleuth.doc.run import run_from_dict

    with open(REAL_RUNS) as fh:
        mixed = run_from_dict(json.load(fh)["runs"][1]).tests[0]
    assert latency_direction(mixed) == "read"
    assert latency_direction(dataclasses.replace(mixed, read_iops=2500.0, write_iops=7500.0)) == "write"


def test_6_above_the_ram_reference_is_not_ok():
    """Before: a riscos run whose SEQ8M write read 108% of the RAM-disk reference (a real run's figures, here on a
    virtio disk) was a clean `ok`: nothing on a storage path outruns RAM, so the reference or the figure is off."""
    import json

    from disksleuth.analysis.verdicts import assess_run
    from disksleuth.doc.run import run_from_dict
    from disksleuth.model import Device

    with open(REAL_RUNS) as fh:
        run = run_from_dict(json.load(fh)["runs"][0])  # riscos: 46%, 108% and 218%/216% of its reference
    disk = Device("vda", "/dev/vda", "virtio", model="virtio disk")
    findings = assess_run(run, disk).findings
    codes = {f.code: f for f in findings}
    assert "ok" not in codes and codes["reference_exceeded"].severity == "warn", findings
    said = codes["reference_exceeded"].message
    assert "SEQ8M_Q1T1_write 108%" in said and "RND4K_Q1T1_randrw80 218%" in said and "SEQ8M_Q1T1_read" not in said
    assert "the reference or this measurement is off" in said
    from disksleuth.analysis.reference import reference_exceeded

    assert reference_exceeded(run.tests[:1]) is None  # 46%: below the reference, nothing to say


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/loop-control"), reason="needs root and loop devices")
def test_11_a_ram_backed_loop_devices_tests_are_marked_as_a_tmpfs_directorys():
    """Before: a loop device over a /dev/shm image (direct I/O on) read 7,391 MB/s with no `*` and cache_affected
    false, while the same memory as a tmpfs directory was marked. probe.memory finds the memory under the real loop
    device; the stored quick run on /tmp (vda) stands for its figures."""
    import dataclasses
    import json

    from conftest import loop_device

    from disksleuth.analysis.memory_tests import with_memory_marked
    from disksleuth.doc.run import run_from_dict
    from disksleuth.model.limits import IoLimit
    from disksleuth.probe.memory import target_memory_backing

    with open(REAL_RUNS) as fh:
        run = run_from_dict(json.load(fh)["runs"][2])
    assert not any(t.cache_affected for t in run.tests)
    with loop_device(8) as dev:
        memory = target_memory_backing(None, None, os.path.basename(dev))
    assert memory is not None and memory.kind == "tmpfs"
    marked = with_memory_marked(run, memory)
    assert all(t.cache_affected for t in marked.tests)
    assert marked.notes[-1].endswith("tmpfs on /dev/shm (memory): these figures measure RAM, not a disk")
    assert with_memory_marked(marked, memory) == marked  # said once
    assert with_memory_marked(run, None) == run
    # A test a cgroup limit held measures the limit, not RAM (the throttled RAM loops of the baseline tests).
    cap = IoLimit("vda", "254:0", "read_bps", 900_000_000, "/t", 1, "blkio.throttle.read_bps_device", "/t", "")
    held = with_memory_marked(dataclasses.replace(run, tests=run.tests[:1]), memory, [cap])
    assert not held.tests[0].cache_affected


@needs_fio
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/loop-control"), reason="needs root and loop devices")
def test_11_bench_of_a_ram_backed_loop_marks_its_tests(cli):
    """End to end, real fio on a real loop device over /dev/shm: every test `*`, as a tmpfs directory's."""
    from conftest import loop_device

    with loop_device(16) as dev:
        res = cli("bench", dev, "--time", "1", "--size", "8M", "--no-save", "--json")
    doc = res.json()
    assert doc["tests"] and all(t["cache_affected"] for t in doc["tests"]), doc["tests"]
    assert any("(memory): these figures measure RAM, not a disk" in n for n in doc["run"]["notes"])


def test_12_fleet_shows_each_devices_profile_and_no_members_run_as_a_device(cli, tmp_path):
    """Before: no profile column (a riscos, a mixed and a quick run's read MB/s side by side), and the bench
    --members run stood in the fleet as a device named `loop3,loop4`."""
    db = str(tmp_path / "f.db")
    for name in ("real-runs-export", "members-loops-export", "x1-to-x4-export"):
        assert cli("import", f"tests/data/store/{name}.json", "--db", db).code == 0
    res = cli("fleet", "--db", db)
    assert res.code == 0, res.err  # the members run's member_slow (warn) was the fleet's only warning
    head = next(line for line in res.out.splitlines() if line.startswith("host"))
    assert head.split()[:6] == ["host", "device", "worst", "findings", "profile", "read"], head
    assert "loop3,loop4" not in res.out and "member_slow" not in res.out
    devices = cli("fleet", "--db", db, "--json").json()["fleet"]
    rows = devices["rows"]
    assert rows and all("," not in str(r.get("device")) for r in rows)
    assert all(r.get("profile") for r in rows)


def test_13_metrics_carry_no_float_noise():
    """Before: disksleuth_bench_bytes_per_second ... 4.2928199999999995e+09 (4292.82 MB/s times 1e6)."""
    from disksleuth.model.exporter import Snapshot
    from disksleuth.present.prometheus import exposition

    figure = {"device": "nvme0n1", "test_id": "SEQ1M_Q8T1_read", "read_mbps": 4292.82, "lat_p99_us": 1234.56}
    text = exposition(Snapshot(disks=(), bench=(figure,), bench_error=None, hostname="h")).decode()
    sample = 'disksleuth_bench_bytes_per_second{device="nvme0n1",direction="read",test="SEQ1M_Q8T1_read"}'
    assert f"{sample} 4.29282e+09" in text
    assert "99999" not in text and "00000001" not in text, text


def test_13_the_health_history_header_cuts_no_word(cli, tmp_path):
    """Before: 'uncorrected writ' headed the SCSI drive's uncorrected write errors column."""
    db = str(tmp_path / "h.db")
    seagate = f"{SMARTCTL}/SEAGATE_ST373453LC_26.json"
    assert cli("health", "--from-smartctl", seagate, "--as-device", "sdq", "--db", db).code == 1
    head = cli("health", "--history", "sdq", "--db", db).out.splitlines()[1]
    assert head.endswith("grown defects  uncorrected read  uncorrected write"), head
