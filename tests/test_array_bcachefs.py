"""A multi-device bcachefs (issue 24): util-linux's lsblk dump `multi-devs-bcachefs`, rebuilt from what lsblk printed
for it (tests/data/sysfs/util_linux_bcachefs, see tests/data/SOURCES.md): sdc1 and sdc2, both bcachefs, one mount
at /mnt/test. The stack reader finds the set from the mount table's multi-device source."""

from __future__ import annotations

import os

from conftest import SYSFS

from disksleuth.probe.mounts import multi_device_source, parse_mountinfo
from disksleuth.probe.stack import list_bcachefs, stack_of

TREE = os.path.join(SYSFS, "util_linux_bcachefs")


def test_the_set_is_read_with_both_devices_down_to_the_disk():
    (tree,) = list_bcachefs(TREE)
    assert (tree.kind, tree.name, tree.label, tree.raid_disks) == ("bcachefs", "/dev/sdc1:/dev/sdc2", "/mnt/test", 2)
    assert [(c.name, c.kind, [g.name for g in c.children]) for c in tree.children] == [
        ("sdc1", "partition", ["sdc"]), ("sdc2", "partition", ["sdc"]),
    ]  # fmt: skip
    assert "its 2 devices are on 1 disk(s): sdc" in tree.notes  # both copies die with sdc
    assert stack_of("sdc2", TREE) == tree and stack_of("sdc", TREE) == tree


def test_list_shows_the_set_and_each_partition_mounted_as_lsblk_does(cli):
    doc = cli("list", "--json", "--all", "--sysfs-root", TREE).json()
    (array,) = doc["arrays"]
    assert array["kind"] == "bcachefs" and [c["name"] for c in array["children"]] == ["sdc1", "sdc2"]
    (sdc,) = doc["devices"]
    assert sdc["member_of"] == ["bcachefs /mnt/test"]
    # lsblk-multi-devs-bcachefs-mnt: FSTYPE bcachefs and MOUNTPOINT /mnt/test on both partitions
    assert [(p["name"], p["fstype"], p["mountpoints"]) for p in sdc["partitions"]] == [
        ("sdc1", "bcachefs", ["/mnt/test"]), ("sdc2", "bcachefs", ["/mnt/test"]),
    ]  # fmt: skip
    out = cli("list", "--sysfs-root", TREE).out
    assert "Array /dev/sdc1:/dev/sdc2 (/mnt/test)" in out and "/mnt/test, /mnt/test" not in out


def test_only_bcachefs_sources_are_split():
    table = parse_mountinfo(
        "1 0 8:33 / /a rw - bcachefs /dev/sdb:/dev/sdc rw\n2 0 0:40 / /b rw - nfs host:/export rw\n"
    )
    assert table.by_source["/dev/sdc"] == ("/a",) and table.by_source["/dev/sdb"] == ("/a",)
    assert multi_device_source("nfs", "host:/export") == ["host:/export"] and "host" not in table.by_source
