"""Following the stack down (issue 24): dm -> md -> partitions -> disks from sysfs, btrfs from /sys/fs/btrfs
(a real one on loop devices), zpool status -P text. Trees: tests/data/sysfs/array_* (built as the kernel lays
them out), util_linux_simple_lvm (rebuilt from util-linux's lsblk dump output), and prometheus/procfs's md
fixtures (tests/data/procfs, unpacked here from their ttar form). Sources: tests/data/SOURCES.md."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid

import pytest
from conftest import DATA, SYSFS, loop_device, needs_loop

from disksleuth.errors import ParseError
from disksleuth.probe.stack import btrfs_of, dm_level, list_btrfs, parse_sync_completed, read_stack, tops_above
from disksleuth.probe.zpool_text import parse_zpool_status


def tree(name: str) -> str:
    return os.path.join(SYSFS, name)


def leaf_names(node) -> list[str]:  # noqa: ANN001
    return [leaf.name for leaf in node.leaves()]


# --- trees built as the kernel lays them out ---------------------------------------------------------


def test_raid1_over_partitions_reaches_the_disks_and_their_sata_links():
    md = read_stack("md0", tree("array_raid1"))
    assert (md.kind, md.level, md.raid_disks, md.degraded, md.sync_action) == ("md", "raid1", 2, 0, "idle")
    assert md.chunk_bytes is None  # raid1 reports chunk_size 0: no chunks
    assert [(c.kind, c.name, c.member_state, c.member_slot) for c in md.children] == [
        ("partition", "sda1", ("in_sync",), 0),
        ("partition", "sdb1", ("in_sync",), 1),
    ]
    assert leaf_names(md) == ["sda", "sdb"]
    assert all(leaf.device is not None and leaf.device.hops[0].kind == "sata" for leaf in md.leaves())


def test_raid5_and_raid10_levels_chunks_and_members():
    r5 = read_stack("md0", tree("array_raid5"))
    assert (r5.level, r5.chunk_bytes, r5.raid_disks) == ("raid5", 524288, 4)
    assert leaf_names(r5) == ["sdb", "sdc", "sdd", "sde"]
    r10 = read_stack("md0", tree("array_raid10"))
    assert r10.level == "raid10" and leaf_names(r10) == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"]
    assert all(leaf.device.hops[0].kind == "pcie" for leaf in r10.leaves())


def test_lvm_striped_is_told_from_its_io_hints():
    dm = read_stack("dm-0", tree("array_lvm_striped"))
    assert (dm.kind, dm.role, dm.level, dm.label, dm.chunk_bytes) == ("dm", "LVM", "striped", "vg_data-stripes", 65536)
    assert leaf_names(dm) == ["sda", "sdb", "sdc", "sdd"]


def test_dm_crypt_on_md_on_partitions_down_to_disks():
    dm = read_stack("dm-0", tree("array_crypt_on_md"))
    assert (dm.role, dm.level, dm.label) == ("CRYPT", "crypt", "cryptroot")
    (md,) = dm.children
    assert (md.kind, md.name, md.level) == ("md", "md1", "raid1")
    assert [c.name for c in md.children] == ["sda2", "sdb2"]
    assert leaf_names(dm) == ["sda", "sdb"]
    # Upwards from a disk, through its partition, md1, to the mapping at the top.
    assert tops_above("sda", tree("array_crypt_on_md")) == ["dm-0"]
    assert tops_above("md1", tree("array_crypt_on_md")) == ["dm-0"]
    assert tops_above("dm-0", tree("array_crypt_on_md")) == []


def test_degraded_resyncing_and_recovering_arrays():
    degraded = read_stack("md0", tree("array_degraded"))
    assert degraded.degraded == 1
    sdc = next(c for c in degraded.children if c.name == "sdc")
    assert (sdc.member_state, sdc.member_errors, sdc.member_slot) == (("faulty",), 131, None)
    resync = read_stack("md0", tree("array_resyncing"))
    assert (resync.sync_action, resync.sync_done_pct, resync.array_state) == ("resync", 25.0, "active")
    recover = read_stack("md0", tree("array_recovering"))
    assert (recover.sync_action, recover.sync_done_pct, recover.degraded) == ("recover", 50.0, 1)
    assert next(c for c in recover.children if c.name == "sdd").member_state == ("spare",)


def test_btrfs_raid1_tree():
    (fs,) = list_btrfs(tree("array_btrfs_raid1"))
    assert (fs.kind, fs.level, fs.label, fs.degraded, fs.raid_disks) == ("btrfs", "raid1", "tank", 0, 2)
    assert leaf_names(fs) == ["sdb", "sdc"]
    assert btrfs_of("sdc", tree("array_btrfs_raid1")) == fs.name


# --- real captured trees --------------------------------------------------------------------------------


def test_util_linux_lvm_over_four_loop_devices():
    """util-linux simple-lvm: dm-0 (lsblk TYPE lvm) over loop0..loop3, as lsblk printed the dump."""
    dm = read_stack("dm-0", tree("util_linux_simple_lvm"))
    assert (dm.role, dm.label, dm.size_bytes) == ("LVM", "vg_foo.4059-lv_foo.4059", 32 << 20)
    assert leaf_names(dm) == ["loop0", "loop1", "loop2", "loop3"]
    assert all(leaf.kind == "loop" and leaf.size_bytes == 10 << 20 for leaf in dm.leaves())
    assert tops_above("loop2", tree("util_linux_simple_lvm")) == ["dm-0"]


def unpack_ttar(path: str, dest: str) -> str:
    """prometheus/procfs's ttar text archive -> files and links under dest (its format: 'Directory:',
    'Path:' + 'Lines: N' + N lines (a last line ending in 'EOF' has no newline; NULLBYTE is a NUL),
    or 'Path:' + 'SymlinkTo:'; 'Mode:' after each)."""
    with open(path) as fh:
        lines = fh.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Directory: "):
            os.makedirs(os.path.join(dest, line[len("Directory: ") :]), exist_ok=True)
        elif line.startswith("Path: "):
            target = os.path.join(dest, line[len("Path: ") :])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            nxt = lines[i + 1]
            if nxt.startswith("SymlinkTo: "):
                os.symlink(nxt[len("SymlinkTo: ") :], target)
                i += 1
            else:
                count = int(nxt[len("Lines: ") :])
                body = "\n".join(lines[i + 2 : i + 2 + count])
                body = body[:-3] if body.endswith("EOF") else body + ("\n" if count else "")
                with open(target, "w") as out:
                    out.write(body.replace("NULLBYTE", "\0"))
                i += 1 + count
        i += 1
    return dest


@pytest.fixture(scope="module")
def procfs_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    dest = str(tmp_path_factory.mktemp("procfs"))
    unpack_ttar(os.path.join(DATA, "procfs", "sys-block-md.ttar"), dest)
    return os.path.join(dest, "fixtures")


@pytest.mark.parametrize(
    ("md", "level", "members", "degraded", "sync"),
    [
        ("md0", "raid0", ["sdg", "sdh"], None, None),
        ("md1", "raid1", ["sdi", "sdj"], 0, "idle"),
        ("md10", "raid10", ["sdu", "sdv", "sdw", "sdx"], 0, "idle"),
        ("md4", "raid4", ["sdk", "sdl", "sdm"], 0, "idle"),
        ("md5", "raid5", ["sdaa", "sdn", "sdo", "sdp"], 1, "idle"),
        ("md6", "raid6", ["sdq", "sdr", "sds", "sdt"], 1, "recover"),
    ],
)
def test_procfs_md_fixtures(procfs_root: str, md: str, level: str, members: list[str], degraded, sync):  # noqa: ANN001
    node = read_stack(md, procfs_root)
    assert (node.kind, node.level, node.degraded, node.sync_action) == ("md", level, degraded, sync)
    assert [c.name for c in node.children] == members
    # The fixture holds the arrays only: their members are not in the tree, and say so rather than fail.
    assert all(c.kind == "missing" and "not in this sysfs tree" in c.notes[0] for c in node.children)


def test_procfs_member_states_and_recovery(procfs_root: str):
    md5 = read_stack("md5", procfs_root)
    assert {c.name: c.member_state for c in md5.children} == {
        "sdaa": ("spare",), "sdn": ("in_sync",), "sdo": ("in_sync",), "sdp": ("faulty",)
    }  # fmt: skip
    md6 = read_stack("md6", procfs_root)
    assert md6.sync_done_pct == 75.0  # 1569888 / 2093056
    dm = read_stack("dm-0", procfs_root)
    assert (dm.role, dm.label, [c.name for c in dm.children]) == ("LVM", "vg0--lv_root", ["sda"])


# --- pure parts -----------------------------------------------------------------------------------------


def test_sync_completed_and_dm_level_rules():
    assert parse_sync_completed("none") is None
    assert parse_sync_completed("1 / 4") == 25.0
    assert parse_sync_completed("x / 4") is None and parse_sync_completed("1 / 0") is None
    assert dm_level("CRYPT", "CRYPT-LUKS2-x", "root", 1, 512, 0) == "crypt"
    assert dm_level("LVM", "LVM-x", "vg-lv_rimage_0", 1, 512, 0) == "raid image"
    assert dm_level("LVM", "LVM-x", "vg-lv", 2, 65536, 131072) == "striped"
    assert dm_level("LVM", "LVM-x", "vg-lv", 2, 512, 0) == "linear"


def test_a_holders_loop_in_a_hostile_tree_ends(tmp_path):  # noqa: ANN001
    for a, b in (("dm-0", "dm-1"), ("dm-1", "dm-0")):
        os.makedirs(tmp_path / "sys/block" / a / "slaves", exist_ok=True)
        os.makedirs(tmp_path / "sys/block" / a / "dm", exist_ok=True)
        os.symlink(f"../../{b}", tmp_path / "sys/block" / a / "slaves" / b)
    node = read_stack("dm-0", str(tmp_path))
    assert [n.kind for n in node.walk()][-1] == "missing"


# --- zpool status -P (captured; ZFS cannot run here) ------------------------------------------------------


def zpool(name: str):  # noqa: ANN201
    with open(os.path.join(DATA, "zpool", name)) as fh:
        return parse_zpool_status(fh.read())


def test_zpool_raidz2_resilvering_with_a_replacement():
    (pool,) = zpool("raidz2-resilvering-P.txt")
    assert (pool.kind, pool.label, pool.level, pool.array_state) == ("zfs", "storage", "raidz2", "DEGRADED")
    assert (pool.sync_action, pool.sync_done_pct) == ("resilver", 46.64)
    leaves = {leaf.name: leaf for leaf in pool.leaves()}
    assert set(leaves) == {"sdt1", "sdu1", "11687508470009778260", "sdv1"}
    assert leaves["sdv1"].member_state == ("online", "resilvering")
    assert leaves["sdu1"].member_errors == 14
    assert leaves["11687508470009778260"].kind == "missing"


def test_zpool_sections_and_abbreviated_counts():
    (tank,) = zpool("mirror-logs-cache.txt")
    assert tank.level == "mirror" and [c.level for c in tank.children] == ["mirror", "logs", "cache"]
    (draid,) = zpool("draid-file-vdevs-P.txt")
    file1 = next(leaf for leaf in draid.leaves() if leaf.name == "file1")
    assert (file1.member_state, file1.member_errors) == (("degraded",), 1880)
    assert draid.degraded == 1  # the spares are AVAIL, not missing


def test_zpool_text_without_a_pool_is_one_clear_error():
    with pytest.raises(ParseError, match="zpool status"):
        parse_zpool_status("no pools available\n")


# --- a real btrfs raid1 on loop devices ------------------------------------------------------------------


@needs_loop
def test_real_btrfs_raid1_on_two_loop_devices():
    if shutil.which("mkfs.btrfs") is None:
        pytest.skip("btrfs-progs missing")
    with loop_device(200) as a, loop_device(200) as b:
        subprocess.run(["mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", a, b], check=True, capture_output=True)
        mnt = f"/tmp/disksleuth-arrays-{uuid.uuid4().hex[:8]}"
        os.makedirs(mnt)
        try:
            res = subprocess.run(["mount", a, mnt], capture_output=True, text=True)
            if res.returncode != 0:
                pytest.skip(f"this kernel cannot mount btrfs: {res.stderr.strip()}")
            try:
                names = {os.path.basename(a), os.path.basename(b)}
                ours = [fs for fs in list_btrfs("/") if set(leaf_names(fs)) == names]
                assert len(ours) == 1
                assert (ours[0].level, ours[0].degraded) == ("raid1", 0)
                assert all(leaf.kind == "loop" for leaf in ours[0].leaves())
                assert btrfs_of(os.path.basename(b)) == ours[0].name
            finally:
                subprocess.run(["umount", mnt], check=False)
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(mnt)
