"""Array findings (issue 24): degraded, resyncing, member health and links, shared bottlenecks with numbers,
the slow member judged on intervals, and what the array should read from its members and level."""

from __future__ import annotations

import os

from conftest import DATA, SYSFS
from test_array_stack import unpack_ttar

from disksleuth.analysis.members import (
    data_members,
    expectation,
    member_infos,
    member_slow,
    shared_bottleneck,
    shared_links,
    tree_findings,
)
from disksleuth.model.arrays import MemberReading
from disksleuth.probe.stack import read_stack


def findings(tree: str, top: str = "md0") -> dict[str, list]:
    out: dict[str, list] = {}
    for f in tree_findings(read_stack(top, os.path.join(SYSFS, tree))):
        out.setdefault(f.code, []).append(f)
    return out


def test_a_whole_idle_array_has_no_findings():
    assert findings("array_raid10") == {}
    assert findings("array_raid1") == {}
    assert findings("array_crypt_on_md", "dm-0") == {}


def test_degraded_array_and_the_faulty_member():
    found = findings("array_degraded")
    (degraded,) = found["array_degraded"]
    assert degraded.severity == "warn" and "sdc" in degraded.message and degraded.evidence["degraded"] == 1
    (health,) = found["member_health"]
    assert (health.severity, health.device, health.evidence["errors"]) == ("critical", "sdc", 131)


def test_resync_and_recovery_say_a_benchmark_is_not_comparable():
    (resync,) = findings("array_resyncing")["array_resyncing"]
    assert resync.severity == "info" and "not comparable" in resync.message and "25%" in resync.message
    measured = tree_findings(
        read_stack("md0", os.path.join(SYSFS, "array_resyncing")), [MemberReading("sdb", "/dev/sdb", 150.0)]
    )
    assert next(f for f in measured if f.code == "array_resyncing").severity == "warn"
    recovering = read_stack("md0", os.path.join(SYSFS, "array_recovering"))
    infos = {m.name: m for m in member_infos(recovering)}
    assert infos["sdd"].rebuilding and not infos["sdb"].rebuilding


def test_a_member_on_a_slow_sata_link():
    (f,) = findings("array_raid5")["member_link_downgraded"]
    assert f.device == "sdc" and "1.5 Gb/s" in f.message and f.evidence["link_code"] == "sata_link_downgraded"


def test_shared_bottleneck_behind_one_x1_hba_with_numbers():
    (f,) = findings("array_shared_x1")["shared_bottleneck"]
    assert f.evidence["shared"] == "0000:05:00.0"
    assert f.evidence["ceiling_mbps"] == 450.0  # PCIe 2.0 x1: 500 MB/s after 8b/10b, x0.9
    assert f.evidence["members_total_mbps"] == 2280.0  # 4 x SATA 6 Gb/s at ~570 MB/s
    assert "PCIe 2.0 x1" in f.message and "450 MB/s" in f.message and "2,280 MB/s" in f.message


def test_shared_bottleneck_behind_one_usb2_hub_with_numbers():
    found = findings("array_shared_usb2")
    (f,) = found["shared_bottleneck"]
    assert f.evidence["shared"] == "usb1/1-1" and f.evidence["ceiling_mbps"] == 40.0
    assert f.evidence["members"] == ["sdb", "sdc", "sdd"] and f.evidence["members_total_mbps"] == 120.0
    assert "hub 1-1" in f.message
    assert len(found["member_link_downgraded"]) == 3  # USB 3 enclosures held at 480 Mb/s


def test_measured_shared_bottleneck_uses_the_reads():
    tree = read_stack("md0", os.path.join(SYSFS, "array_shared_x1"))
    (link,) = shared_links(tree.leaves())
    readings = [MemberReading(n, f"/dev/{n}", 520.0, 1.0, 112.0, 2.0) for n in ("sda", "sdb", "sdc", "sdd")]
    f = shared_bottleneck(link, "md0", readings)
    assert f is not None and f.severity == "warn"
    assert (f.evidence["members_total_mbps"], f.evidence["together_total_mbps"]) == (2080.0, 448.0)
    # Members that read slowly enough alone fit under the shared link: nothing to say.
    slow = [MemberReading(n, f"/dev/{n}", 100.0, 1.0) for n in ("sda", "sdb", "sdc", "sdd")]
    assert shared_bottleneck(link, "md0", slow) is None


def test_procfs_md5_faulty_member_is_named(tmp_path):  # noqa: ANN001
    root = os.path.join(unpack_ttar(os.path.join(DATA, "procfs", "sys-block-md.ttar"), str(tmp_path)), "fixtures")
    found = {f.code: f for f in tree_findings(read_stack("md5", root))}
    assert found["array_degraded"].evidence["failed"] == ["sdp"]
    assert found["member_health"].device == "sdp" and found["member_health"].severity == "critical"
    md6 = {m.name: m for m in member_infos(read_stack("md6", root))}
    assert md6["sdt"].rebuilding and not md6["sdq"].rebuilding


def reading(name: str, mbps: float, ci: float = 2.0) -> MemberReading:
    return MemberReading(name, f"/dev/{name}", mbps, ci, None, None)


def test_member_slow_judged_on_intervals():
    (f,) = member_slow([reading("sdb", 182), reading("sdc", 41), reading("sdd", 179), reading("sde", 185)], "md0")
    assert f.device == "sdc" and "41 MB/s" in f.message and f.evidence["peers_median_mbps"] == 182.0
    # 30% slower is within what identical drives on a busy machine do: not clearly slow.
    assert member_slow([reading("a", 100), reading("b", 70), reading("c", 100)]) == []
    # A wide interval that reaches up to its peers is not clearly slow either.
    assert member_slow([reading("a", 100, 1), reading("b", 55, 40), reading("c", 100, 1)]) == []


def test_what_the_array_should_read():
    readings = [reading("sdb", 182), reading("sdc", 41), reading("sdd", 180), reading("sde", 180)]
    exp = expectation("raid5", readings, 190.0)
    assert exp is not None and exp["expected_mbps"] == 540.0
    assert exp["words"] == (
        "a 4-member raid5 of ~180 MB/s healthy members should read about 540 MB/s; it read 190 MB/s; "
        "member sdc reads 41 MB/s"
    )
    assert data_members("raid0", 4) == 4 and data_members("raid6", 6) == 4 and data_members("raid10", 4) == 2
    assert data_members("raid1", 2) == 1 and data_members("raidz2", 8) == 6 and data_members("weird", 3) is None
