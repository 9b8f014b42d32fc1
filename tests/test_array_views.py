"""list, explain and check show the storage stack (issue 24): each array as a tree with its members' link chains
and health, in text and in --json (additive keys: list `arrays` and `member_of`, explain and check `stack`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid

import pytest
from conftest import SYSFS, loop_device, needs_fio, needs_loop
from test_json_schema import assert_valid


def tree(name: str) -> str:
    return os.path.join(SYSFS, name)


def test_list_json_has_each_array_and_each_members_array(cli):  # noqa: ANN001
    r = cli("list", "--json", "--sysfs-root", tree("array_shared_x1"))
    doc = r.json()
    assert_valid(doc, "list")
    (array,) = doc["arrays"]
    assert (array["name"], array["level"]) == ("md0", "raid5")
    assert [c["name"] for c in array["children"]] == ["sda", "sdb", "sdc", "sdd"]
    assert all(c["link"]["hops"][-1]["label"] == "PCIe 2.0 x1" for c in array["children"])
    (shared,) = [f for f in array["findings"] if f["code"] == "shared_bottleneck"]
    assert shared["evidence"]["ceiling_mbps"] == 450.0
    assert {d["name"]: d["member_of"] for d in doc["devices"]} == {
        "md0": [], "sda": ["md0"], "sdb": ["md0"], "sdc": ["md0"], "sdd": ["md0"]
    }  # fmt: skip


def test_list_text_draws_the_tree_with_links_and_health(cli):  # noqa: ANN001
    out = cli("list", "--sysfs-root", tree("array_degraded")).out
    assert "Array md0" in out and "md raid5, 3 members, 512 KiB chunks" in out and "DEGRADED (1)" in out
    assert "├─ sdc  4.0 TB, state faulty, 131 errors, SATA 6 Gb/s link (~570 MB/s)" in out
    assert "array_degraded" in out and "member_health" in out
    usb = cli("list", "--sysfs-root", tree("array_shared_usb2")).out
    assert "shared_bottleneck" in usb and "hub 1-1" in usb and "40 MB/s" in usb


def test_list_of_a_btrfs_and_of_crypt_on_md(cli):  # noqa: ANN001
    doc = cli("list", "--json", "--sysfs-root", tree("array_btrfs_raid1")).json()
    (fs,) = doc["arrays"]
    assert (fs["kind"], fs["level"], fs["label"]) == ("btrfs", "raid1", "tank")
    assert {d["name"]: d["member_of"] for d in doc["devices"]} == {"sdb": ["btrfs tank"], "sdc": ["btrfs tank"]}
    crypt = cli("list", "--json", "--sysfs-root", tree("array_crypt_on_md")).json()
    (top,) = crypt["arrays"]
    assert (top["name"], top["role"], top["children"][0]["name"]) == ("dm-0", "CRYPT", "md1")


def test_explain_a_member_shows_its_array(cli):  # noqa: ANN001
    r = cli("explain", "sdc", "--read", "41MB/s", "--json", "--sysfs-root", tree("array_raid5"))
    doc = r.json()
    assert_valid(doc, "explain")
    assert doc["stack"]["name"] == "md0" and len(doc["stack"]["children"]) == 4
    codes = [f["code"] for f in doc["findings"]]
    assert "sata_link_downgraded" in codes and "member_link_downgraded" not in codes  # said once, for itself
    text = cli("explain", "md0", "--sysfs-root", tree("array_resyncing")).out
    assert "Stack" in text and "resync 25% done" in text and "array_resyncing" in text


@pytest.mark.slow
@needs_loop
@needs_fio
def test_check_on_a_real_btrfs_raid1_reads_its_members(cli):  # noqa: ANN001
    """The real multi-device file system this kernel has: check on its directory draws the tree, reads each loop
    device alone and together (read-only), and says what a raid1 of them should read against what it read."""
    if shutil.which("mkfs.btrfs") is None:
        pytest.skip("btrfs-progs missing")
    with loop_device(300) as a, loop_device(300) as b:
        subprocess.run(["mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", a, b], check=True, capture_output=True)
        mnt = f"/tmp/disksleuth-arrays-{uuid.uuid4().hex[:8]}"
        os.makedirs(mnt)
        try:
            if subprocess.run(["mount", a, mnt], capture_output=True).returncode != 0:
                pytest.skip("this kernel cannot mount btrfs")
            try:
                r = cli("check", mnt, "--time", "1", "--size", "32M", "--no-save", "--json")
                doc = r.json()
                assert_valid(doc, "run_document")
                assert (doc["stack"]["kind"], doc["stack"]["level"]) == ("btrfs", "raid1")
                assert sorted(m["path"] for m in doc["members"]) == sorted([a, b])
                assert all(m["alone_mbps"] > 0 and m["together_mbps"] > 0 for m in doc["members"])
                exp = doc["array_expectation"]
                assert exp["data_members"] == 1.0 and exp["measured_mbps"] > 0 and "2-member raid1" in exp["words"]
            finally:
                subprocess.run(["umount", mnt], check=False)
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(mnt)


def test_the_report_shows_a_stored_runs_stack(tmp_path):  # noqa: ANN001
    """A run on an array keeps its stack in the stored device (the store keeps the device whole), and the report
    draws it: the tree with each member's link and state."""
    import json

    from conftest import SAMPLE_RUN

    from disksleuth.doc.arrays import node_to_dict
    from disksleuth.present.report import render_report
    from disksleuth.probe.stack import read_stack
    from disksleuth.store.db import Store

    with open(SAMPLE_RUN) as fh:
        doc = json.load(fh)
    doc["run"].pop("id", None)
    doc["device"]["stack"] = node_to_dict(read_stack("md0", tree("array_degraded")))
    store = Store(f"sqlite:///{tmp_path}/r.sqlite")
    run_id = store.save(doc)
    html = render_report([store.load(run_id)])
    assert "Storage stack" in html and "state faulty, 131 errors" in html and "SATA 6 Gb/s link" in html


def test_list_shows_pools_from_saved_zpool_status(cli):  # noqa: ANN001
    """ZFS cannot run here: its pools come from saved `zpool status -P` text (tests/data/zpool, captured)."""
    from conftest import DATA

    saved = os.path.join(DATA, "zpool", "raidz2-resilvering-P.txt")
    doc = cli("list", "--json", "--sysfs-root", tree("array_raid1"), "--zpool-status", saved).json()
    assert_valid(doc, "list")
    pool = next(a for a in doc["arrays"] if a["kind"] == "zfs")
    assert (pool["label"], pool["level"], pool["sync_action"]) == ("storage", "raidz2", "resilver")
    codes = {f["code"]: f for f in pool["findings"]}
    assert codes["array_degraded"]["evidence"]["failed"] == ["11687508470009778260"]
    assert codes["array_resyncing"]["evidence"]["done_pct"] == 46.64
    r = cli("list", "--zpool-status", os.path.join(DATA, "zpool", "..", "SOURCES.md"))
    assert r.code == 2 and "zpool status -P" in r.err and r.err.count("\n") == 1
