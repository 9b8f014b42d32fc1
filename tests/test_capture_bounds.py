"""Capture bundles stay bounded however they are made (issue 35 §5, §7).

§5: a bundle nested 1,100 directories deep (80 KB, a 63 MiB file at the bottom) ended in `internal error:
RecursionError` in shutil.rmtree and left its 68 MB extraction folder in $TMPDIR on every run.
§7: a capture of 49,990 block devices took 167 s and 704 MB; every device climbed to the same parent directory
and listed it again (quadratic), and the bundle then held more entries than a reader accepts.

Real archives, real trees laid out as the kernel lays out loop devices, real extraction into a private $TMPDIR,
real signals to a real process.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter

import pytest
from conftest import SYSFS

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


@pytest.fixture
def deep_tmp_path(tmp_path):
    """tmp_path, removed by rm(1) whatever a test left in it: pytest's own clean-up of its old directories recurses
    once per level, and a tree 1,100 levels deep left behind broke it (RecursionError) for every later session."""
    yield tmp_path
    subprocess.run(["rm", "-rf", "--one-file-system", str(tmp_path)], check=False)


@pytest.fixture
def shm_path():
    """A folder in /dev/shm, removed by rm(1): a tree of thousands of devices is tens of thousands of small files,
    and on the disk under tmp_path writing and reading them waited on I/O (a 2,300-device capture: 109 s under
    load, 5 s of it CPU); sysfs itself is in memory too."""
    path = tempfile.mkdtemp(prefix="disksleuth-capture-", dir="/dev/shm")
    yield pathlib.Path(path)
    subprocess.run(["rm", "-rf", "--one-file-system", path], check=False)


@pytest.fixture
def private_tmpdir(deep_tmp_path, monkeypatch):
    tmp = deep_tmp_path / "TMPDIR"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read $TMPDIR in this process too
    return tmp


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info


def nested_bundle(path: str, levels: int, payload: int = 1024 * 1024) -> str:
    """The attacker's bundle: a sysfs top, then `levels` directories one in another, a file at the bottom."""
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        tar.addfile(_dir("sys"))
        tar.addfile(_dir("sys/block"))
        name = "sys"
        for _ in range(levels - 1):
            name += "/d"
            tar.addfile(_dir(name))
        data = tarfile.TarInfo(name + "/big")
        data.size = payload
        tar.addfile(data, io.BytesIO(b"\0" * payload))
    return path


# --- §5: depth ----------------------------------------------------------------------------------


def test_a_bundle_deeper_than_sysfs_is_refused_before_it_is_unpacked(cli, private_tmpdir, tmp_path):
    bundle = nested_bundle(str(tmp_path / "deep.tar.gz"), 1_100)
    res = cli("list", "--sysfs-root", bundle)
    assert res.code == 2, res.err
    assert res.err.count("\n") == 1 and "Traceback" not in res.err and "internal error" not in res.err, res.err
    assert "levels deep; sysfs is never deeper than 64" in res.err
    assert os.listdir(private_tmpdir) == []


def test_a_bundle_as_deep_as_allowed_is_read(cli, private_tmpdir, tmp_path):
    bundle = nested_bundle(str(tmp_path / "deep.tar.gz"), 63, payload=10)  # sys/d/.../big: 64 names
    res = cli("list", "--sysfs-root", bundle)
    assert res.code == 0, res.err
    assert os.listdir(private_tmpdir) == []
    res = cli("list", "--sysfs-root", nested_bundle(str(tmp_path / "deeper.tar.gz"), 64, payload=10))
    assert res.code == 2 and "65 levels deep" in res.err


def test_an_extraction_folder_is_removed_without_recursion(deep_tmp_path):
    """1,100 levels (past Python's recursion limit) with a file on each, a link out of it, a descriptor limit
    below the depth: all removed, nothing through the link."""
    from disksleuth.probe.capture import remove_tree

    victim = deep_tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("not the bundle's\n")
    top = deep_tmp_path / "unpacked"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1_100):  # level by level (os.makedirs recurses too)
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.symlink(str(victim), "out", dir_fd=fd)
    os.close(fd)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        remove_tree(str(top))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not os.path.lexists(top)
    assert (victim / "keep").read_text() == "not the bundle's\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_a_bundle_is_read_leaves_nothing_behind(tmp_path, signum):
    """SIGTERM or SIGHUP after the bundle is unpacked, while a command reads it: the folder goes too (it killed
    the process on the spot, the folder left in $TMPDIR)."""
    tmpdir = tmp_path / "TMPDIR"
    tmpdir.mkdir()
    bundle = nested_bundle(str(tmp_path / "small.tar.gz"), 3, payload=10)
    code = (
        "import os, sys, time\n"
        "from disksleuth.run.inventory import sysfs_root\n"
        "with sysfs_root(sys.argv[1]) as root:\n"
        "    assert os.path.isdir(os.path.join(root, 'sys'))\n"
        "    os.kill(os.getpid(), int(sys.argv[2]))\n"
        "    time.sleep(30)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": SRC}
    proc = subprocess.run(
        [sys.executable, "-c", code, bundle, str(int(signum))], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and "Terminated" in proc.stderr, (proc.returncode, proc.stderr[-500:])
    assert os.listdir(tmpdir) == []


# --- §7: many devices -----------------------------------------------------------------------------


def _real_loop_attributes() -> dict[str, bytes]:
    """The attributes of a real loop device on this project's VM (tests/data/sysfs/capture_private_names), its
    backing left out: an unattached loop device."""
    real = os.path.join(SYSFS, "capture_private_names", "sys/devices/virtual/block/loop1")
    found = {}
    for folder, _dirs, files in os.walk(real):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), real)
            if not rel.startswith("loop/"):
                with open(os.path.join(real, rel), "rb") as fh:
                    found[rel] = fh.read()
    return found


def loop_tree(root: str, count: int, disks: tuple[str, ...] = ()) -> str:
    """`count` loop devices as the kernel lays them out (/sys/devices/virtual/block/loopN with a real loop
    device's attributes, and /sys/block, /sys/class/block and /sys/dev/block links), and a few SATA-named disks
    beside them."""
    attributes = _real_loop_attributes()
    virtual = os.path.join(root, "sys/devices/virtual/block")
    for d in ("sys/block", "sys/class/block", "sys/dev/block", "proc/self"):
        os.makedirs(os.path.join(root, d))
    with open(os.path.join(root, "proc/self/mountinfo"), "w") as fh:
        fh.write("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n")
    names = [(f"loop{i}", f"7:{i}") for i in range(count)] + [(d, f"8:{16 * i}") for i, d in enumerate(disks)]
    for name, dev in names:
        d = os.path.join(virtual, name)
        os.makedirs(os.path.join(d, "queue"))
        for sub in ("holders", "slaves"):
            os.mkdir(os.path.join(d, sub))
        own = {"dev": f"{dev}\n".encode(), "size": b"8\n" if name in disks else b"0\n"}
        for attr, value in (attributes | own).items():
            with open(os.path.join(d, attr), "wb") as fh:
                fh.write(value)
        os.symlink(f"../devices/virtual/block/{name}", os.path.join(root, "sys/block", name))
        os.symlink(f"../../devices/virtual/block/{name}", os.path.join(root, "sys/class/block", name))
        os.symlink(f"../../devices/virtual/block/{name}", os.path.join(root, "sys/dev/block", dev))
    return root


def test_capture_lists_each_directory_once_however_many_devices(shm_path, monkeypatch):
    """Linear in the devices: the shared parent of 100 loop devices is listed once, not once per device."""
    from disksleuth.probe import capture
    from disksleuth.probe.sysfs import Sysfs

    root = loop_tree(str(shm_path / "tree"), 100)
    listed: Counter[str] = Counter()
    real_listdir = Sysfs.listdir

    def counting(self: Sysfs, host_path: str) -> list[str]:
        listed[os.path.relpath(host_path, root)] += 1
        return real_listdir(self, host_path)

    monkeypatch.setattr(Sysfs, "listdir", counting)
    bundle = capture.collect(root)
    assert len(bundle.block_devices) == 100
    assert listed["sys/devices/virtual/block"] <= 2 and listed["sys/devices/virtual"] <= 2, listed.most_common(3)
    assert max(listed.values()) <= 2, listed.most_common(3)


def test_list_reads_the_first_devices_and_says_so(cli, shm_path, monkeypatch):
    """Past the cap (lowered here from 4,096 to 40), `list` reads the first 40, disks before loop devices, and
    says how many there are."""
    monkeypatch.setattr("disksleuth.probe.sysfs.MAX_BLOCK_DEVICES", 40)
    root = loop_tree(str(shm_path / "tree"), 100, disks=("sda", "sdb"))
    res = cli("list", "--all", "--json", "--sysfs-root", root)
    assert res.code == 0, res.err
    doc = res.json()
    names = [d["name"] for d in doc["devices"]]
    assert len(names) == 40 and {"sda", "sdb"} <= set(names) and "loop99" not in names
    assert doc["notes"] == ["102 block devices, reading the first 40"]
    res = cli("list", "--all", "--sysfs-root", root)
    assert res.code == 0 and res.err == "disksleuth: 102 block devices, reading the first 40\n"


def test_a_capture_holds_what_a_reader_accepts(cli, shm_path, monkeypatch):
    """Past the entries a reader accepts (lowered here from 50,000 to 400), the bundle holds the first devices
    that fit and says so; it reads back."""
    from disksleuth.probe import capture

    monkeypatch.setattr(capture, "_SYSFS_ENTRY_BUDGET", 400)
    root = loop_tree(str(shm_path / "tree"), 100)
    bundle = str(shm_path / "c.tar.gz")
    res = cli("capture", "--json", "-o", bundle, "--sysfs-root", root)
    assert res.code == 0, res.err
    doc = res.json()["capture"]
    held = doc["block_devices"]["in_bundle"]
    assert 10 < held < 100 and doc["sysfs_cut"] and doc["entries"] <= 400 + 64
    assert doc["block_devices"]["note"] == (
        f"100 block devices, the first {held} in the bundle: it holds at most 50,000 entries"
    )
    with tarfile.open(bundle) as tar:
        assert "proc/self/mountinfo" in tar.getnames()  # the proc files go in whatever the budget
    res = cli("list", "--all", "--json", "--sysfs-root", bundle)
    assert res.code == 0 and len(res.json()["devices"]) == held


@pytest.mark.slow
@pytest.mark.long
def test_a_capture_of_thousands_of_devices_is_bounded(shm_path):
    """2,300 loop devices with a real one's attributes: more entries than a reader accepts (before: 53,000 entries,
    refused by every reader, after a capture quadratic in the devices). The capture holds those that fit, says so,
    in bounded memory (the attacker's capture of 49,990 devices took 704 MB)."""
    from disksleuth.probe.capture import MAX_CAPTURE_ENTRIES

    root = loop_tree(str(shm_path / "tree"), 2_300)
    bundle = str(shm_path / "c.tar.gz")
    code = (
        "import resource, subprocess, sys\n"
        "res = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(res.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(res.stdout + res.stderr)\n"
    )
    argv = [sys.executable, "-m", "disksleuth", "capture", "--json", "-o", bundle, "--sysfs-root", root]
    out = subprocess.run(
        [sys.executable, "-c", code, *argv],
        env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, text=True, timeout=600, check=True,
    ).stdout  # fmt: skip
    first, _, rest = out.partition("\n")
    rc, rss_kb = (int(x) for x in first.split())
    assert rc == 0, rest
    doc = json.loads(rest)["capture"]
    assert doc["entries"] <= MAX_CAPTURE_ENTRIES, doc
    held = doc["block_devices"]["in_bundle"]
    assert doc["sysfs_cut"] and 1_000 < held < 2_300
    assert doc["block_devices"]["note"].startswith(f"2,300 block devices, the first {held:,} in the bundle")
    assert rss_kb < 200_000, rss_kb
    with tarfile.open(bundle) as tar:  # a reader's count: every member, the summary file and directories too
        assert len(tar.getnames()) <= MAX_CAPTURE_ENTRIES
