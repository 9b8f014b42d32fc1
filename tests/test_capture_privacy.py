"""`capture` carries no one's names (issue 35 §2), and what it keeps still reads back the same.

Before, the bundle held /proc/self/mountinfo whole and loop backing-file paths verbatim: a tmpfs mounted with the
source //alice@fileserver.corp.example/finance, CIFS username=/domain=/addr=, NFS addr=, sshfs alice@host:/path,
bind-mount paths and backing files such as /home/alice/secret-project.img all went into it.

tests/data/sysfs/capture_private_names is this development VM captured (tests/data/SOURCES.md): real loop devices
over /dev/shm, over a file on a tmpfs mounted with that source, and over a file on the ext4 root; a real bind mount;
network mount lines in the kernel's own format. The live test mounts and attaches the same for real.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import tarfile
import uuid

import pytest
from conftest import SYSFS, needs_loop

from disksleuth.probe.memory import device_memory_backing

TREE = os.path.join(SYSFS, "capture_private_names")
# Every name of a user, host, domain, address or file in the tree, as it would leak (case folded).
SECRETS = (
    b"alice", b"fileserver", b"corp.example", b"secret-project", b"finance", b"username=", b"domain=", b"addr=",
    b"10.20.30.4", b"name=alice", b"corp",
)  # fmt: skip
NETWORK_FSTYPES = {"cifs", "smb3", "nfs4", "fuse.sshfs", "ceph", "9p", "fuse.glusterfs"}


def _blob(bundle: str) -> bytes:
    """The whole bundle as a reader sees it: the tar stream, names, link targets and contents."""
    with open(bundle, "rb") as fh:
        return gzip.decompress(fh.read())


def _member(bundle: str, name: str) -> str:
    with tarfile.open(bundle) as tar:
        return tar.extractfile(name).read().decode()


def _leaks(blob: bytes) -> list[bytes]:
    folded = blob.lower()
    return [s for s in SECRETS if s.lower() in folded]


@pytest.fixture
def bundle(cli, tmp_path) -> tuple[str, str]:
    path = str(tmp_path / "c.tar.gz")
    res = cli("capture", "-o", path, "--sysfs-root", TREE)
    assert res.code == 0, res.err
    return path, res.out


def test_a_bundle_holds_no_user_host_address_or_file_name(bundle):
    path, out = bundle
    assert _leaks(_blob(path)) == []
    # The tree does hold them: the test would see a leak.
    with open(os.path.join(TREE, "proc/self/mountinfo"), "rb") as fh:
        assert len(_leaks(fh.read())) >= 8
    # capture says what the bundle holds and what was masked.
    assert "6 block devices, and 6 of 28 mount lines" in out, out
    assert "masked: 4 loop backing-file paths, 1 swap file path, 2 mount sources, 3 mount points" in out, out
    assert "left out: 22 mount lines (6 of network or FUSE file systems)" in out, out


def test_capture_json_says_what_was_masked(cli, tmp_path):
    res = cli("capture", "--json", "-o", str(tmp_path / "c.tar.gz"), "--sysfs-root", TREE)
    doc = res.json()["capture"]
    assert doc["names_masked"] and doc["block_devices"] == {"in_bundle": 6, "total": 6}
    assert doc["mount_lines"] == {"kept": 6, "total": 28} and doc["network_mounts_left_out"] == 6
    assert doc["masked"]["backing_files"] == 4 and doc["masked"]["bind_roots"] == 1
    with tarfile.open(str(tmp_path / "c.tar.gz")) as tar:
        assert json.load(tar.extractfile("disksleuth-capture.json"))["contents"] == {
            k: v for k, v in doc.items() if k != "path"
        }


def test_only_the_mount_lines_the_readers_use_are_kept(bundle):
    path, _ = bundle
    lines = [line.split() for line in _member(path, "proc/self/mountinfo").splitlines()]
    by_type: dict[str, list[list[str]]] = {}
    for fields in lines:
        by_type.setdefault(fields[fields.index("-") + 1], []).append(fields)
    # Block devices (the root and the bind mount of a directory on it), the tmpfs under two loop devices' files
    # (/dev/shm, stacked twice, and the one with the borrowed name), the CIFS share under one. Nothing else.
    assert sorted((t, len(v)) for t, v in by_type.items()) == [("cifs", 1), ("ext4", 2), ("tmpfs", 3)]
    cifs = by_type["cifs"][0]
    assert cifs[-2].startswith("MASKED-") and cifs[-1] == "rw" and cifs[4].startswith("/mnt/MASKED-")
    bind = next(f for f in by_type["ext4"] if f[4] != "/")
    assert bind[3].startswith("/MASKED-") and bind[-2] == "/dev/vda"  # the path inside the file system: masked
    assert all(o in ("rw", "discard", "resv_strict") for o in bind[-1].split(","))  # resuid= and resgid= left out
    assert "/home/" not in _member(path, "proc/swaps") and "MASKED-" in _member(path, "proc/swaps")


def _devices(cli, root: str) -> dict[str, dict]:
    res = cli("list", "--json", "--all", "--sysfs-root", root)
    assert res.code == 0, res.err
    return {d["name"]: d for d in res.json()["devices"]}


def _memory(name: str, root: str) -> str | None:
    found = device_memory_backing(name, root)
    return found.kind if found else None


def test_a_masked_bundle_reads_back_the_same(cli, bundle):
    path, _ = bundle
    tree, back = _devices(cli, TREE), _devices(cli, path)
    assert sorted(back) == sorted(tree) == ["loop0", "loop1", "loop6", "loop7", "vda", "zram0"]
    same = ("transport", "size_bytes", "fstype", "loop_direct_io", "backing_device", "rotational", "dev", "swap")
    for name, dev in tree.items():
        assert {k: back[name][k] for k in same} == {k: dev[k] for k in same}, name
    assert back["vda"]["mountpoints"][0] == "/" and back["vda"]["fstype"] == "ext4"
    assert back["loop6"]["backing_device"] == "vda"  # a file on the ext4 root: the disk beneath is known
    # Each backing file keeps its file system's mount point (masked where it is a name) and nothing of its own.
    backing = {n: back[n]["backing_file"] for n in ("loop0", "loop1", "loop6", "loop7")}
    assert backing["loop0"].startswith("/dev/shm/MASKED-") and backing["loop6"].startswith("/MASKED-")
    assert backing["loop1"].startswith("/mnt/MASKED-") and backing["loop7"].startswith("/mnt/MASKED-")
    # Memory under a loop device: read from the bundle's own table, as from the tree.
    from disksleuth.probe.capture import capture_root

    with capture_root(path) as unpacked:
        memory = {n: _memory(n, unpacked) for n in tree}
    assert memory == {n: _memory(n, TREE) for n in tree}
    assert memory == {"loop0": "tmpfs", "loop1": "tmpfs", "loop6": None, "loop7": None, "vda": None, "zram0": "zram"}


def test_keep_names_copies_them_as_they_are(cli, tmp_path):
    path = str(tmp_path / "c.tar.gz")
    res = cli("capture", "--keep-names", "-o", path, "--sysfs-root", TREE)
    assert res.code == 0 and "copied as they are (--keep-names)" in res.out
    with open(os.path.join(TREE, "proc/self/mountinfo")) as fh:
        assert _member(path, "proc/self/mountinfo") == fh.read()


# --- the live machine: a real mount with a borrowed name, real loop devices ----------------------


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.root
@needs_loop
def test_a_live_capture_holds_no_name_and_reads_back_the_same(cli, tmp_path):
    token = uuid.uuid4().hex[:8]
    source = f"//alice{token}@fileserver{token}.corp.example/finance"
    mnt = tmp_path / f"finance-{token}"
    mnt.mkdir()
    shm_image = f"/dev/shm/home-alice{token}-secret-project.img"
    loops: list[str] = []
    mounted = False
    try:
        _run("mount", "-t", "tmpfs", "-o", "size=8m", source, str(mnt))
        mounted = True
        share_image = str(mnt / f"alice{token}-budget.img")
        for image in (shm_image, share_image):
            with open(image, "wb") as fh:
                fh.truncate(4 * 1024 * 1024)
            loops.append(_run("losetup", "-f", "--show", image))
        names = [os.path.basename(dev) for dev in loops]
        path = str(tmp_path / "live.tar.gz")
        res = cli("capture", "-o", path)
        assert res.code == 0, res.err
        assert token.encode() not in _blob(path)
        assert "masked:" in res.out and "loop backing-file path" in res.out
        live, back = _devices(cli, "/"), _devices(cli, path)
        for name in names:
            for key in ("size_bytes", "loop_direct_io", "backing_device", "transport"):
                assert back[name][key] == live[name][key], (name, key)
        assert back[names[0]]["backing_file"].startswith("/dev/shm/MASKED-")
        from disksleuth.probe.capture import capture_root

        with capture_root(path) as unpacked:
            assert [_memory(n, unpacked) for n in names] == [_memory(n, "/") for n in names] == ["tmpfs", "tmpfs"]
    finally:
        for dev in loops:
            subprocess.run(["losetup", "-d", dev], check=False)
        if mounted:
            subprocess.run(["umount", str(mnt)], check=False)
        if os.path.exists(shm_image):
            os.unlink(shm_image)
