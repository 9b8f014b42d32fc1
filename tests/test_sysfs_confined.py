"""Readers given a root (--sysfs-root, an unpacked capture) never read outside it.

A crafted copy of a real tree carries links out of it: an absolute `holders -> /etc`, a relative
`slaves -> ../../../../…/etc` that climbs above the root, attributes and a PCI function linked to files
outside, a block device linked to the host's own /sys. Before, `capture` put /etc/shadow into the bundle,
and `list`, `links` and `explain` showed what the outside files held. Real files and links throughout.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tarfile
import time

import pytest
from conftest import SYSFS

from disksleuth.probe.hwmon import hwmon_temp_input
from disksleuth.probe.loops import read_loop_table
from disksleuth.probe.sysfs import Sysfs

TREE = "nvme_new_format"
ENDPOINT = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
CTRL = f"{ENDPOINT}/nvme/nvme0"
DISK = f"{CTRL}/nvme0n1"
# Enough `..` to climb above "/" from any temporary directory: the kernel stops at "/", so before the fix
# such a link reached the host's own files.
CLIMB = "../" * 64
OUTSIDE_BDF = "0000:0a:00.0"


def _host_disk(root: str) -> str | None:
    """A block device of this machine with a size, and a name the tree does not hold, for a link into
    the host's own /sys."""
    for name in sorted(os.listdir("/sys/block")):
        if os.path.lexists(os.path.join(root, "sys/block", name)):
            continue
        try:
            with open(f"/sys/block/{name}/size") as fh:
                if int(fh.read()) > 0:
                    return name
        except (OSError, ValueError):
            continue
    return None


class Escaping:
    def __init__(self, root: str, outside: str, token: str, host_disk: str | None):
        self.root, self.outside, self.token, self.host_disk = root, outside, token, host_disk

    def out(self, rel: str) -> str:
        """A relative link target from anywhere in the tree to `rel` outside it, through "/"."""
        return CLIMB + os.path.join(self.outside, rel).lstrip("/")


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def _link(root: str, rel: str, target: str) -> None:
    path = os.path.join(root, rel)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


@pytest.fixture
def escaping(tmp_path) -> Escaping:
    root = str(tmp_path / "tree")
    shutil.copytree(os.path.join(SYSFS, TREE), root, symlinks=True)
    outside = str(tmp_path / "outside")
    token = "OUTSIDE" + secrets.token_hex(6)
    _write(f"{outside}/secret.txt", token + "\n")
    fn = f"{outside}/pci/{OUTSIDE_BDF}"
    for attr, value in (("vendor", "0x" + token), ("device", "0x1234"), ("class", "0x010802")):
        _write(f"{fn}/{attr}", value + "\n")
    _write(f"{fn}/current_link_speed", "16.0 GT/s PCIe\n")
    _write(f"{outside}/blk/size", token + "\n")
    _write(f"{outside}/hwmon/temp1_input", "99000\n")
    _write(f"{outside}/img/backing.img", token)
    # A loop device whose backing file sits behind a link out of the tree.
    loop = os.path.join(root, "sys/devices/virtual/block/loop0")
    _write(f"{loop}/dev", "7:0\n")
    _write(f"{loop}/size", "8\n")
    _write(f"{loop}/loop/backing_file", "/img/backing.img\n")
    _link(root, "sys/block/loop0", "../devices/virtual/block/loop0")
    t = Escaping(root, outside, token, _host_disk(root))
    _link(root, "img", t.out("img"))
    _link(root, f"{DISK}/holders", "/etc")  # absolute: means <root>/etc, which the tree does not hold
    _link(root, f"{DISK}/slaves", CLIMB + "etc")  # relative, climbing above the root
    _link(root, f"{DISK}/size", t.out("secret.txt"))  # an attribute that is a file outside
    _link(root, f"{ENDPOINT}/current_link_speed", t.out("secret.txt"))
    _link(root, f"sys/bus/pci/devices/{OUTSIDE_BDF}", t.out(f"pci/{OUTSIDE_BDF}"))
    _link(root, "sys/block/outsider", t.out("blk"))
    _link(root, f"{CTRL}/hwmon1", t.out("hwmon"))
    if t.host_disk:  # the `device -> /sys/devices/...` style: absolute, naming the host's own sysfs
        _link(root, "sys/block/hostdisk", f"/sys/block/{t.host_disk}")
    return t


def _devices(cli, root: str) -> dict[str, dict]:
    res = cli("list", "--json", "--all", "--sysfs-root", root)
    assert res.code == 0, res.err
    return {d["name"]: d for d in res.json()["devices"]}


def test_list_reads_nothing_outside_the_root(cli, escaping):
    res = cli("list", "--json", "--all", "--sysfs-root", escaping.root)
    assert res.code == 0, res.err
    assert escaping.token not in res.out + res.err
    devices = _devices(cli, escaping.root)
    disk = devices["nvme0n1"]
    assert disk["holders"] == [] and disk["slaves"] == []  # before: every name in /etc
    assert disk["size_bytes"] is None
    assert any("leads out of the --sysfs-root tree" in n for n in disk["notes"])
    assert disk["model"] == "Samsung SSD 970 EVO Plus 250GB"  # the tree's own links still work
    assert devices["outsider"]["size_bytes"] is None
    assert any("leads out" in n for n in devices["outsider"]["notes"])
    if escaping.host_disk:  # before: this machine's own disk, with its size and model
        assert devices["hostdisk"]["size_bytes"] is None and devices["hostdisk"]["transport"] == "unknown"


def test_links_reads_nothing_outside_the_root(cli, escaping):
    res = cli("links", "--json", "--sysfs-root", escaping.root)
    assert res.code == 0, res.err
    assert escaping.token not in res.out + res.err
    functions = {f["bdf"]: f for f in res.json()["functions"]}
    outsider = functions[OUTSIDE_BDF]
    assert outsider["vendor_device"] is None and outsider["speed_gtps"] is None
    assert any("leads out of the --sysfs-root tree" in n for n in outsider["notes"])
    endpoint = functions["0000:01:00.0"]
    assert endpoint["speed_gtps"] is None and endpoint["width"] == 4 and endpoint["max_speed_gtps"] == 8.0


def test_explain_finds_no_device_outside_the_root(cli, escaping):
    res = cli("explain", "outsider", "--read", "100MB/s", "--sysfs-root", escaping.root)
    assert escaping.token not in res.out + res.err
    assert res.code == 2 and "no such block device" in res.err


def _file(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read() or None
    except OSError:
        return None


def test_capture_holds_nothing_from_outside(cli, escaping, tmp_path):
    bundle = str(tmp_path / "c.tar.gz")
    res = cli("capture", "-o", bundle, "--sysfs-root", escaping.root)
    assert res.code == 0, res.err
    host_files = {p: _file(p) for p in ("/etc/hostname", "/etc/shadow", "/etc/passwd")}
    with tarfile.open(bundle) as tar:
        members = tar.getmembers()
        contents = {m.name: tar.extractfile(m).read() for m in members if m.isfile()}
    names = {os.path.basename(m.name) for m in members}
    assert not names & {"shadow", "gshadow", "passwd", "hostname", "secret.txt", "backing.img"}, names
    for name, content in contents.items():
        assert escaping.token.encode() not in content, name
        for path, host in host_files.items():
            assert host is None or content != host, f"{name} holds {path}"
    for m in members:  # every link stays inside the bundle, so the bundle reads back
        if m.issym():
            assert not m.linkname.startswith("/") and ".." not in os.path.normpath(
                os.path.join(os.path.dirname(m.name), m.linkname)
            ).split("/"), (m.name, m.linkname)
    meta = json.loads(contents["disksleuth-capture.json"])
    assert any("slaves" in r for r in meta["links_out_of_root_not_followed"])
    back = _devices(cli, bundle)
    assert back["nvme0n1"]["model"] == "Samsung SSD 970 EVO Plus 250GB"


def test_the_resolver_keeps_inside_links_and_refuses_the_rest(escaping):
    root = escaping.root
    fs = Sysfs(root)
    # The tree's relative links resolve inside it, also through `device -> ..`.
    assert fs.realpath(fs.p("/sys/block/nvme0n1")) == os.path.join(root, DISK)
    assert fs.read(fs.p("/sys/block/nvme0n1/device/model")) == "Samsung SSD 970 EVO Plus 250GB"
    # An absolute target is taken from the root, never from the host's "/".
    _link(root, "sys/abs", "/sys/devices/pci0000:00")
    assert fs.realpath(fs.p("/sys/abs")) == os.path.join(root, "sys/devices/pci0000:00")
    assert "0000:00:01.0" in fs.listdir(fs.p("/sys/abs"))
    assert fs.listdir(fs.p("/sys/block/nvme0n1/holders")) == []  # <root>/etc: not there
    # Whatever climbs above the root is refused, and named.
    assert fs.listdir(fs.p("/sys/block/nvme0n1/slaves")) == []
    assert fs.read(fs.p("/sys/block/nvme0n1/size")) is None
    assert fs.read(fs.p("/..", os.path.relpath(escaping.outside, os.path.dirname(root)), "secret.txt")) is None
    assert not fs.isdir(fs.p("/sys/block/outsider")) and fs.leaves_root(fs.p("/sys/block/outsider"))
    assert fs.stat(fs.p("/img/backing.img")) is None
    assert any(r.startswith(f"/{DISK}/slaves -> ../") for r in fs.refused)
    # A link loop ends, as the kernel's lookup does, without reading anything.
    _link(root, "sys/loop_a", "loop_b")
    _link(root, "sys/loop_b", "loop_a")
    started = time.monotonic()
    assert fs.read(fs.p("/sys/loop_a")) is None and fs.listdir(fs.p("/sys/loop_a/x")) == []
    assert time.monotonic() - started < 1.0


def test_hwmon_and_loop_readers_stay_inside(escaping):
    assert hwmon_temp_input("nvme0n1", escaping.root) is None  # before: the outside temp1_input
    assert read_loop_table(escaping.root).keys == {"loop0": None}  # before: the outside file's inode
