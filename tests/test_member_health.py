"""member_health from each member's own SMART (issue 24): a real failing drive's `smartctl --json` (scrutiny's
smart-fail2: SMART FAILED, ATA 5 at its threshold) saved beside a real-layout md raid1 tree
(tests/data/sysfs/array_raid1_failing_member/smartctl/sdc.json), its healthy peer beside it; and the live path,
smartctl run per member, through a real `smartctl` executable on PATH printing those captures."""

from __future__ import annotations

import os
import shutil

from conftest import SYSFS

from disksleuth.doc.arrays import node_to_dict
from disksleuth.present.stack_view import tree_lines
from disksleuth.probe.smart import read_disk_health
from disksleuth.probe.stack import read_stack
from disksleuth.run.members import with_member_health

TREE = os.path.join(SYSFS, "array_raid1_failing_member")


def _leaves(node: dict) -> dict[str, dict]:
    out = {}
    for child in node.get("children") or []:
        out |= _leaves(child) if child.get("children") else {child["name"]: child}
    return out


def test_list_names_the_failing_member_from_its_own_smart(cli):
    doc = cli("list", "--json", "--sysfs-root", TREE).json()
    (array,) = doc["arrays"]
    leaves = _leaves(array)
    assert leaves["sdc"]["health"]["status"] == "critical"
    assert leaves["sdc"]["health"]["smart_passed"] is False
    assert leaves["sdc"]["health"]["model"] == "Hitachi HDS721050DLE630"
    assert leaves["sdc"]["health"]["words"].startswith("SMART FAILED; ATA 5 Reallocated_Sector_Ct at its threshold")
    assert "Current_Pending_Sector (ATA 197) 8" in leaves["sdc"]["health"]["words"]
    assert leaves["sdb"]["health"] == {
        "read": True, "status": "ok", "words": "SMART passed", "smart_passed": True,
        "model": "WDC WD20EFRX-68EUZN0", "not_read": None,
    }  # fmt: skip
    health = [f for f in array["findings"] if f["code"] == "member_health"]
    assert [(f["device"], f["severity"]) for f in health] == [("sdc", "critical")]  # md still counts sdc in_sync
    assert health[0]["evidence"]["smart_passed"] is False and health[0]["evidence"]["state"] == ["in_sync"]
    assert "replace sdc" in health[0]["hint"] and "mdadm /dev/md0" in health[0]["hint"]


def test_list_text_shows_each_members_health_on_its_line(cli):
    out = cli("list", "--sysfs-root", TREE).out
    assert "├─ sdb  4.0 TB, state in_sync, SMART passed, SATA 6 Gb/s link (~570 MB/s)" in out
    assert "└─ sdc  4.0 TB, state in_sync, SMART CRITICAL: SMART FAILED; ATA 5 Reallocated_Sector_Ct at its " in out
    assert "critical · member_health" in out


def test_explain_on_the_healthy_member_names_its_failing_peer(cli):
    res = cli("explain", "sdb", "--read", "150MB/s", "--sysfs-root", TREE, "--json")
    findings = {f["code"]: f for f in res.json()["findings"]}
    assert findings["member_health"]["device"] == "sdc" and findings["member_health"]["severity"] == "critical"
    assert "ok" not in findings  # "nothing wrong found" does not stand beside a failing member


def test_report_tree_lines_carry_the_health():
    """The HTML report draws a stored stack with tree_lines, the same lines list and check print."""
    lines = tree_lines(node_to_dict(with_member_health(read_stack("md0", TREE), TREE)))
    assert any(line.startswith("└─ sdc") and "SMART CRITICAL" in line for line in lines)


def test_a_tree_without_saved_smartctl_says_nothing_of_health(cli):
    """A capture of layout and links alone: no 'SMART not read' on every disk, and no key filled."""
    doc = cli("list", "--json", "--sysfs-root", os.path.join(SYSFS, "array_raid5")).json()
    assert all(leaf["health"] is None for leaf in _leaves(doc["arrays"][0]).values())


def test_a_member_without_its_saved_output_says_why(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    os.unlink(tree / "smartctl" / "sdb.json")
    (tree / "smartctl" / "sdc.json").write_text('{"json_format_version": [1, 0], "smartctl": {"exit_status": 2')
    lines = tree_lines(node_to_dict(with_member_health(read_stack("md0", str(tree)), str(tree))))
    assert [line for line in lines if "SMART" in line] == [
        "├─ sdb  4.0 TB, state in_sync, SMART not read, SATA 6 Gb/s link (~570 MB/s)",
        "└─ sdc  4.0 TB, state in_sync, SMART not read, SATA 6 Gb/s link (~570 MB/s)",
    ]
    leaves = _leaves(node_to_dict(with_member_health(read_stack("md0", str(tree)), str(tree))))
    assert "no smartctl output saved beside this tree (smartctl/sdb.json)" in leaves["sdb"]["health"]["not_read"]


def test_live_path_runs_smartctl_per_member_without_waking_it(tmp_path, monkeypatch):
    """On the live machine each member is read with `smartctl -n standby -x --json /dev/NAME` (here a real
    executable on PATH that logs its arguments and prints the capture saved for that name)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.log"
    script = bindir / "smartctl"
    script.write_text(
        '#!/bin/sh\necho "$*" >> "$DISKSLEUTH_TEST_LOG"\n'
        'for last; do :; done\nexec cat "$DISKSLEUTH_TEST_CAPTURES/$(basename "$last").json"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISKSLEUTH_TEST_LOG", str(log))
    monkeypatch.setenv("DISKSLEUTH_TEST_CAPTURES", os.path.join(TREE, "smartctl"))
    health = read_disk_health("sdc")
    assert health.smart_passed is False and health.model == "Hitachi HDS721050DLE630"
    assert log.read_text().split() == ["-n", "standby", "-x", "--json", "/dev/sdc"]
