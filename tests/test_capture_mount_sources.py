"""`capture` masks the ids in mount sources, whether or not their drive is in the capture.

Before, a by-id source of a drive absent from the capture kept its serial, and by-uuid, UUID=, PARTUUID=,
label and luks-<uuid> sources were never masked. A real tree, a real capture, read back with `list`.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tarfile

import pytest
from conftest import SYSFS

# A drive that is not in the tree (the tree holds one SATA disk, sda at 8:0).
ABSENT_BY_ID = "nvme-Samsung_SSD_970_EVO_Plus_250GB_S3Z9NB0K123456"
SERIAL = "S3Z9NB0K123456"
FS_UUID = "3f2a9c1e-7b4d-4e8a-9c55-0a1b2c3d4e5f"
XFS_UUID = "8d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6"
PARTUUID = "0a1b2c3d-04"
SWAP_PARTUUID = "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4"
LABEL = "JohnsBackup"
LUKS_UUID = "11112222-3333-4444-5555-666677778888"
IDS = (SERIAL, FS_UUID, XFS_UUID, PARTUUID, SWAP_PARTUUID, LABEL, LUKS_UUID)

MOUNTINFO = f"""\
29 1 259:1 / /data rw - ext4 /dev/disk/by-id/{ABSENT_BY_ID}-part1 rw
30 1 259:2 / /data2 rw - ext4 /dev/disk/by-id/{ABSENT_BY_ID}-part2 rw
31 1 8:0 / /whole rw - ext4 /dev/disk/by-uuid/{FS_UUID} rw
32 1 8:3 / /srv rw - xfs UUID={XFS_UUID} rw
33 1 8:4 / /boot rw - vfat PARTUUID={PARTUUID} rw
34 1 8:5 / /media/x rw - ext4 /dev/disk/by-label/{LABEL} rw
35 1 8:6 / /again rw - ext4 UUID={FS_UUID} rw
36 1 253:0 / /vault rw - ext4 /dev/mapper/luks-{LUKS_UUID} rw
"""
SWAPS = f"Filename Type Size Used Priority\n/dev/disk/by-partuuid/{SWAP_PARTUUID} partition 1 0 -2\n"


@pytest.fixture
def mounted_tree(tmp_path) -> str:
    root = str(tmp_path / "tree")
    shutil.copytree(os.path.join(SYSFS, "sata_3g_on_6g"), root, symlinks=True)
    os.makedirs(os.path.join(root, "proc/self"))
    with open(os.path.join(root, "proc/self/mountinfo"), "w") as fh:
        fh.write(MOUNTINFO)
    with open(os.path.join(root, "proc/swaps"), "w") as fh:
        fh.write(SWAPS)
    return root


def _member(bundle: str, name: str) -> str:
    with tarfile.open(bundle) as tar:
        return tar.extractfile(name).read().decode()


def _blob(bundle: str) -> bytes:
    with open(bundle, "rb") as fh:
        return gzip.decompress(fh.read())


def test_mount_sources_are_masked_whether_or_not_their_drive_is_captured(cli, mounted_tree, tmp_path):
    bundle = str(tmp_path / "c.tar.gz")
    res = cli("capture", "-o", bundle, "--sysfs-root", mounted_tree)
    assert res.code == 0, res.err
    blob = _blob(bundle)
    for ident in IDS:
        assert ident.encode() not in blob, f"{ident} left unmasked"
    mountinfo = _member(bundle, "proc/self/mountinfo")
    sources = [line.split()[-2] for line in mountinfo.splitlines()]
    assert len(sources) == len(MOUNTINFO.splitlines()) and all("MASKED-" in s for s in sources), sources
    # A by-id name keeps its bus and partition; both partitions of one drive share one mask.
    part1, part2 = (re.fullmatch(r"/dev/disk/by-id/nvme-(MASKED-[0-9a-f]{8})-part(\d)", s) for s in sources[:2])
    assert part1 and part2 and part1.group(1) == part2.group(1) and (part1.group(2), part2.group(2)) == ("1", "2")
    # One id, one mask, however it is spelt.
    assert sources[2].removeprefix("/dev/disk/by-uuid/") == sources[6].removeprefix("UUID=")
    assert sources[7].startswith("/dev/mapper/luks-MASKED-")
    assert "/dev/disk/by-partuuid/MASKED-" in _member(bundle, "proc/swaps")
    # The bundle still reads back: the mount of the captured disk is found by its device number.
    res = cli("list", "--json", "--sysfs-root", bundle)
    assert res.code == 0, res.err
    sda = next(d for d in res.json()["devices"] if d["name"] == "sda")
    # The mount point is a name of the user's own (issue 35): masked, as in the table it came from.
    assert sda["mountpoints"] == [mountinfo.splitlines()[2].split()[4]] and sda["fstype"] == "ext4"
    assert sda["mountpoints"][0].startswith("/MASKED-")


def test_keep_serials_keeps_mount_sources(cli, mounted_tree, tmp_path):
    bundle = str(tmp_path / "c.tar.gz")
    assert cli("capture", "-o", bundle, "--keep-serials", "--sysfs-root", mounted_tree).code == 0
    sources = [line.split()[-2] for line in _member(bundle, "proc/self/mountinfo").splitlines()]
    assert sources == [line.split()[-2] for line in MOUNTINFO.splitlines()]
    # --keep-names keeps the rest of the table too (its mount points are names of the user's own).
    assert cli("capture", "-o", bundle, "--keep-serials", "--keep-names", "--sysfs-root", mounted_tree).code == 0
    assert _member(bundle, "proc/self/mountinfo") == MOUNTINFO
