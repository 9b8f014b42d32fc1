"""cgroup I/O limits as a hop of the path (issue 36): the reader on captured cgroup trees (a real cgroup v1 blkio
tree of this machine, and cgroup v2 io.max trees written as Documentation/admin-guide/cgroup-v2.rst shows them:
this kernel's io controller is held by the v1 blkio hierarchy, so its unified hierarchy has no io.max to read),
the chain with a limit in it, io_limit's words, the memory-backed wording, and `compare` on two real runs of one
loop device, capped and not (tests/data/runs). Fast: no fio here; test_io_surround.py measures."""

from __future__ import annotations

import copy
import dataclasses
import json
import os

import pytest
from conftest import DATA, result_with_series

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.compare import compare
from disksleuth.analysis.limits import held_figures, io_limit, target_limits, with_limits, without_limits
from disksleuth.analysis.pathdiff import change_line, path_changes
from disksleuth.analysis.verdicts import assess_run
from disksleuth.doc.inventory import chain_to_dict
from disksleuth.model import Device, VirtualHop
from disksleuth.model.limits import CgroupLimits, IoLimit
from disksleuth.model.run import MemoryBacking, Run
from disksleuth.probe.cgroups import parse_io_max, parse_proc_cgroup, parse_v1_limit, read_io_limits

TREES = os.path.join(DATA, "procfs", "cgroups")
RUNS = os.path.join(DATA, "runs")


def _read(tree: str) -> CgroupLimits:
    root = os.path.join(TREES, tree)
    return read_io_limits("self", os.path.join(root, "proc"), os.path.join(root, "sys", "fs", "cgroup"))


def _limits(found: CgroupLimits) -> dict[str, dict[str, tuple[int, str, str]]]:
    return {
        dev: {s: (lim.value, lim.cgroup, lim.file) for s, lim in settings.items()}
        for dev, settings in found.per_device().items()
    }


# --- the reader ----------------------------------------------------------------------------------------------------


def test_v1_blkio_nested_groups_the_tightest_on_the_way_up_wins() -> None:
    """A real tree: the process in "/io36 cap/inner" (a space in the path), 50 MB/s set on its parent and 30 MB/s
    on its own group for loop 7:2, 900 write IOPS on its own, 20 MB/s of writes for vda (254:0) on the parent."""
    found = _read("v1_blkio_nested")
    assert found.read and found.notes == ()
    assert ("blkio", "/io36 cap/inner") in found.cgroups and ("unified", "/") in found.cgroups
    assert _limits(found) == {
        "7:2": {
            "read_bps": (30_000_000, "/io36 cap/inner", "blkio.throttle.read_bps_device"),
            "write_iops": (900, "/io36 cap/inner", "blkio.throttle.write_iops_device"),
        },
        "254:0": {"write_bps": (20_000_000, "/io36 cap", "blkio.throttle.write_bps_device")},
    }
    looser = [lim for lim in found.limits if lim.dev == "7:2" and lim.setting == "read_bps" and lim.value == 50_000_000]
    assert looser and looser[0].line == "7:2 50000000"  # every level is kept; per_device picks the tightest
    tight = found.per_device()["7:2"]["read_bps"]
    assert tight.path.endswith("/blkio/io36 cap/inner/blkio.throttle.read_bps_device") and tight.version == 1


def test_v2_io_max_with_max_as_no_limit() -> None:
    found = _read("v2_io_max")
    assert found.cgroups == (("unified", "/system.slice/backup.service"),)
    assert _limits(found) == {
        "8:16": {
            "read_bps": (2_097_152, "/system.slice", "io.max"),
            "write_iops": (120, "/system.slice", "io.max"),
        },
        "259:0": {
            "write_bps": (104_857_600, "/system.slice", "io.max"),
            "read_bps": (52_428_800, "/system.slice/backup.service", "io.max"),
            "read_iops": (4000, "/system.slice/backup.service", "io.max"),
        },
    }
    line = found.per_device()["259:0"]["read_bps"].line
    assert (
        line == "259:0 rbps=52428800 wbps=max riops=4000 wiops=max"
        and found.per_device()["8:16"]["read_bps"].version == 2
    )


def test_v1_and_v2_lines_together_are_both_read() -> None:
    found = _read("hybrid_both")
    assert _limits(found) == {
        "7:2": {"read_bps": (40_000_000, "/a", "blkio.throttle.read_bps_device"), "read_iops": (500, "/b", "io.max")}
    }


def test_a_deleted_cgroup_reads_its_parents_and_says_so() -> None:
    found = _read("v2_deleted")
    assert _limits(found) == {"7:2": {"write_bps": (10_485_760, "/app.slice", "io.max")}}
    assert any("/app.slice/gone was removed" in n for n in found.notes)


def test_an_unreadable_limit_file_is_said_and_nothing_is_guessed(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "cgroup").write_text("0::/svc\n")
    cg = tmp_path / "cg"
    (cg / "svc" / "io.max").mkdir(parents=True)  # a directory where the file should be: not a file to read
    (cg / "cgroup.controllers").write_text("io\n")
    found = read_io_limits("self", str(tmp_path / "proc"), str(cg))
    assert found.read and found.limits == ()
    assert found.notes == (f"could not read {cg}/svc/io.max",)


def test_no_proc_cgroup_is_unknown_not_none(tmp_path) -> None:  # noqa: ANN001
    found = read_io_limits("self", str(tmp_path), str(tmp_path))
    assert not found.read and "could not read" in found.notes[0]
    assert target_limits(found, {"7:2": "loop2"}) is None  # unknown: the chain says nothing rather than "none"
    assert read_io_limits("../1", str(tmp_path), str(tmp_path)).notes == ("not a process id: '../1'",)


def test_a_hostile_tree_is_confined_to_its_root(tmp_path) -> None:  # noqa: ANN001
    """A blkio mount that links out of the root, and a cgroup path with `..`: neither reads the host's files."""
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "cgroup").write_text("7:blkio:/\n0::/../../../etc\n")
    cg = tmp_path / "cg"
    cg.mkdir()
    os.symlink("../../../../../../../../sys/fs/cgroup/blkio", cg / "blkio")
    (cg / "cgroup.controllers").write_text("io\n")
    found = read_io_limits("self", str(tmp_path / "proc"), str(cg))
    assert found.limits == ()
    assert any("is not one the kernel writes" in n for n in found.notes)


def test_parsers_take_only_the_kernels_shapes() -> None:
    assert parse_v1_limit("7:2 50000000\n7:3 max\nx:1 5\n7:4\n8:0 0\n", "read_bps") == [
        ("7:2", "read_bps", 50_000_000, "7:2 50000000")
    ]
    assert parse_io_max("8:0 rbps=max wbps=max riops=max wiops=max\n8:16 rbps=1 bogus wiops=٣\n") == [
        ("8:16", "read_bps", 1, "8:16 rbps=1 bogus wiops=٣")
    ]
    assert parse_proc_cgroup("0::/a b:c\n7:blkio,io:/x\nnonsense\n3:cpu:relative\n") == [
        ("0", (), "/a b:c"),
        ("7", ("blkio", "io"), "/x"),
    ]
    # A line of 1.4 MB is cut before it is split, and a line's keys are counted: no time spent on it.
    assert len(parse_io_max("7:2 " + "rbps=1 " * 200_000)) == 7
    assert parse_proc_cgroup(("1:" * 500_000) + "\n") == []


# --- the chain and the findings ------------------------------------------------------------------------------------


def _limit(setting: str = "read_bps", value: int = 50_000_000) -> IoLimit:
    line = f"7:2 {value}"
    return IoLimit("loop2", "7:2", setting, value, "/g", 1, f"blkio.throttle.{setting}_device",
                   f"/sys/fs/cgroup/blkio/g/blkio.throttle.{setting}_device", line)  # fmt: skip


LOOP = Device("loop2", "/dev/loop2", "loop", hops=(VirtualHop("loop2", "loop", ("/dev/shm/x.img",)),))
MEMORY = MemoryBacking("tmpfs", ("loop2: loop", "/dev/shm/x.img", "tmpfs on /dev/shm"), True)


def _run(*tests) -> Run:  # noqa: ANN002
    return Run("/dev/loop2", "quick", "2026-01-01T00:00:00+0000", "fio-3.33", "libaio", {}, tuple(tests))


def test_a_limit_is_a_hop_with_its_ceiling_and_sets_the_chains() -> None:
    chain = with_limits(link_chain(LOOP.hops), [_limit()])
    assert chain.current_ceiling_mbps == 50.0 and chain.capable_ceiling_mbps is None
    assert chain.bottleneck is not None and chain.bottleneck.label == "cgroup I/O limit, reads 50 MB/s on loop2"
    doc = chain_to_dict(chain)
    assert doc["limits"][0]["line"] == "7:2 50000000" and doc["limits"][0]["ceiling_mbps"] == 50.0
    assert without_limits(chain).current_ceiling_mbps is None  # the links alone, as the link findings judge them
    assert "limits" not in chain_to_dict(link_chain(LOOP.hops))  # list and explain read none: no key
    assert chain_to_dict(with_limits(link_chain(LOOP.hops), []))["limits"] == []  # read, and none


def test_io_limit_names_the_file_value_and_cgroup_and_how_it_is_set() -> None:
    seq = result_with_series([50.9, 51.0, 50.8])
    run = _run(seq)
    a = assess_run(run, LOOP, memory=MEMORY, target_kind="block", limits=[_limit()])
    codes = [f.code for f in a.findings]
    assert codes == ["memory_backed", "io_limit"]
    limit = a.findings[1]
    assert 'blkio.throttle.read_bps_device "7:2 50000000" in cgroup /g' in limit.message
    assert "102% of the limit of 50 MB/s" in limit.message
    assert all(word in limit.hint for word in ("IOReadBandwidthMax=", "docker run --device-read-bps", "container"))
    assert limit.evidence["figures"][0]["share_pct"] == 102
    # Memory-backed and capped: both said, and the capped figure never "measures RAM".
    memory = a.findings[0].message
    assert "backed by memory" in memory and "not storage" in memory and "held its figures" in memory
    assert "measure RAM" not in memory and "measures RAM" not in memory
    assert a.summary.startswith("memory, not storage: ") and "held by a cgroup I/O limit" in a.summary
    assert a.chain.current_ceiling_mbps == 50.0


def test_a_figure_well_under_a_limit_or_in_the_other_direction_is_not_held() -> None:
    seq = result_with_series([30.0, 30.0, 30.0])  # 60% of 50 MB/s
    assert held_figures([seq], [_limit()]) == []
    assert held_figures([seq], [_limit("write_bps")]) == []
    assert held_figures([result_with_series([500.0] * 3)], [_limit()]) == []  # 10x a limit: it held nothing
    assert io_limit([]) is None
    a = assess_run(_run(seq), LOOP, memory=MEMORY, target_kind="block", limits=[_limit()])
    assert [f.code for f in a.findings] == ["memory_backed"]
    assert "measure RAM" in a.findings[0].message  # no limit held it: these figures do measure RAM


def test_an_iops_limit_holds_iops_figures() -> None:
    seq = dataclasses.replace(result_with_series([42.0, 42.0, 42.0]), read_iops=40.0)  # SEQ1M read: 40 IOPS of 1 MiB
    held = held_figures([seq], [_limit("read_iops", 40)])
    assert [(h.test_id, round(h.share, 2)) for h in held] == [("SEQ1M_Q8T1_read", 1.0)]
    finding = io_limit(held)
    assert finding is not None and "40 IOPS" in finding.message and "blkio.throttle.read_iops_device" in finding.message


# --- compare and show --baseline: a limit that changed is a change on the path ------------------------------------


def _doc(name: str) -> dict:
    with open(os.path.join(RUNS, name)) as fh:
        return json.load(fh)


def test_compare_names_the_limit_that_went_and_what_it_explains() -> None:
    """Two real `check --json` runs of one loop device on /dev/shm: in a blkio group reading at most 50 MB/s, then
    outside it. Before issue 36 compare said "Nothing on its path changed" and listed "a cgroup I/O limit" as a
    thing to look for."""
    capped, free = _doc("io_limit_capped.json"), _doc("io_limit_uncapped.json")
    changes = path_changes(capped, free)
    lines = [change_line(c) for c in changes]
    assert lines[0] == (
        'I/O limit gone: read_bps on loop2, 50 MB/s (blkio.throttle.read_bps_device "7:2 50000000" in cgroup '
        "/io36-manual)"
    )
    (pair,) = compare([capped, free]).paths
    texts = {e.figure.test_id: e for e in pair.explanations}
    seq = texts["SEQ1M_Q8T1_read"]
    assert seq.verdict == "link" and seq.explained
    assert "A cgroup I/O limit changed" in seq.text and "explains the rise" in seq.text
    assert "Nothing on its path changed" not in seq.text
    # The other way round: the limit appeared, and the fall is the limit's.
    (back,) = compare([free, capped]).paths
    fall = {e.figure.test_id: e for e in back.explanations}["SEQ1M_Q8T1_read"]
    assert fall.verdict == "link" and "explains the fall" in fall.text and "holds it now" in fall.text


def test_runs_that_recorded_no_limit_list_it_no_more_as_a_thing_to_look_for() -> None:
    a, b = _doc("io_limit_uncapped.json"), _doc("io_limit_uncapped.json")
    b["run"]["id"] = 3
    seq = next(t for t in b["tests"] if t["id"] == "SEQ1M_Q8T1_read")
    seq["read_mbps"] /= 3
    (pair,) = compare([a, b]).paths
    text = {e.figure.test_id: e for e in pair.explanations}["SEQ1M_Q8T1_read"].text
    assert "Nothing on its path changed" in text and "cgroup I/O limit" not in text
    old = copy.deepcopy(a)  # a run stored before issue 36: whether a limit held it is unknown, still worth a look
    del old["device"]["link"]["limits"]
    (pair,) = compare([old, b]).paths
    assert "a cgroup I/O limit" in {e.figure.test_id: e for e in pair.explanations}["SEQ1M_Q8T1_read"].text
    assert path_changes(old, b) == path_changes(a, b)  # unknown is no change


@pytest.mark.parametrize("name", ["io_limit_capped.json", "io_limit_uncapped.json"])
def test_stored_runs_with_and_without_limits_load(name: str) -> None:
    from disksleuth.doc.run import run_from_dict

    doc = _doc(name)
    run = run_from_dict(doc)
    assert all(t.foreign_io is not None and not t.foreign_io.found for t in run.tests)
    del doc["device"]["link"]["limits"]
    for t in doc["tests"]:
        del t["foreign_io"]
    assert all(t.foreign_io is None for t in run_from_dict(doc).tests)


def test_the_same_limit_set_by_another_cgroup_is_no_change() -> None:
    capped = _doc("io_limit_capped.json")
    moved = copy.deepcopy(capped)
    moved["run"]["id"] = 3
    (limit,) = moved["device"]["link"]["limits"]
    limit["cgroup"], limit["path"] = "/system.slice/other.service", "/sys/fs/cgroup/blkio/system.slice/other.service"
    assert [c for c in path_changes(capped, moved) if c.what == "I/O limit"] == []
    limit["value"], limit["line"] = 40_000_000, "7:2 40000000"
    (change,) = [c for c in path_changes(capped, moved) if c.what == "I/O limit"]
    assert change_line(change).startswith("I/O limit read_bps on loop2: 50 MB/s (") and "40 MB/s" in change_line(change)


def test_the_store_and_fleet_keep_the_devices_own_ceiling_not_the_limit() -> None:
    """A cgroup limit is the run's, not the device's: fleet, siblings and the store's ceiling column compare the
    links alone (a run capped at 50 MB/s on an NVMe drive is not a drive with a 50 MB/s link)."""
    from disksleuth.analysis.fleet import fleet_row
    from disksleuth.store.schema import fleet_figures

    capped = _doc("io_limit_capped.json")
    link = capped["device"]["link"]
    assert link["current_ceiling_mbps"] == 50.0 and link["link_ceiling_mbps"] is None  # a loop device: no link
    assert fleet_figures(capped)["ceiling_mbps"] is None
    link["link_ceiling_mbps"], link["current_ceiling_mbps"] = 3150.4, 50.0  # the same limit over a Gen3 x4 link
    assert fleet_figures(capped)["ceiling_mbps"] == 3150.4
    assert fleet_row({"id": 1, "device": capped["device"], "findings": []}).ceiling_mbps == 3150.4
    old = _doc("io_limit_uncapped.json")  # a run stored before issue 36: its one ceiling, as before
    del old["device"]["link"]["limits"], old["device"]["link"]["link_ceiling_mbps"]
    old["device"]["link"]["current_ceiling_mbps"] = 450.0
    assert fleet_figures(old)["ceiling_mbps"] == 450.0
