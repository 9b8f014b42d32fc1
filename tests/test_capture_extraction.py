"""Reading a capture bundle back makes every entry itself: tarfile only reads the archive.

Debian 12's Python (3.11.2) and Ubuntu 22.04's (3.11.0) have no tarfile extraction filters (PEP 706), so the
safety of `--sysfs-root bundle.tar.gz` may not depend on them. Real archives, real extraction into a
private $TMPDIR. tests/test_install_python.py runs these cases again under the system's own Python.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile

import pytest
from conftest import SYSFS

TREE = os.path.join(SYSFS, "sata_3g_on_6g")


def entry(name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = mode
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 7, 0
    return info, data if kind == tarfile.REGTYPE else None


def write_archive(path: str, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> str:
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


OK = entry("sys/ok")
DIR = tarfile.DIRTYPE
SYM = tarfile.SYMTYPE

# Each: members, and the words of the one-line refusal. None of them is something `capture` writes.
REFUSED = {
    "absolute_name": ([OK, entry("/sys/abs")], "an absolute name (/sys/abs)"),
    "dotdot_inside_a_name": ([OK, entry("sys/a/../../x")], "climbs out with .."),
    "setuid_file": ([OK, entry("sys/su", mode=0o4755)], "a setuid, setgid or sticky bit (sys/su)"),
    "setgid_directory": ([OK, entry("sys/d", kind=DIR, mode=0o2755)], "a setuid, setgid or sticky bit (sys/d)"),
    "sticky_directory": ([OK, entry("sys/t", kind=DIR, mode=0o1777)], "a setuid, setgid or sticky bit (sys/t)"),
    "block_device": ([OK, entry("sys/loop", kind=tarfile.BLKTYPE)], "a device node (sys/loop)"),
    "char_device": ([OK, entry("sys/mem", kind=tarfile.CHRTYPE)], "a device node (sys/mem)"),
    "fifo": ([OK, entry("sys/pipe", kind=tarfile.FIFOTYPE)], "a FIFO (sys/pipe)"),
    "hard_link": ([OK, entry("sys/h", kind=tarfile.LNKTYPE, link="sys/ok")], "a hard link (sys/h)"),
    "hard_link_out": ([OK, entry("sys/h", kind=tarfile.LNKTYPE, link="/etc/passwd")], "a hard link (sys/h)"),
    "absolute_link": ([OK, entry("sys/out", kind=SYM, link="/etc/passwd")], "leaves the bundle"),
    "link_above_the_root": ([OK, entry("sys/a/x", kind=SYM, link="../../../etc")], "leaves the bundle"),
    # Textually `sys/y/../..` is the bundle's root; through the link y (-> ..) it is the root's parent.
    "link_climbing_through_a_link": (
        [OK, entry("sys/y", kind=SYM, link=".."), entry("sys/x", kind=SYM, link="y/../..")],
        "not of the kernel's form",
    ),
    "link_to_itself": ([OK, entry("sys/l", kind=SYM, link=".")], "not of the kernel's form"),
    "link_with_empty_target": ([OK, entry("sys/l", kind=SYM, link="")], "not of the kernel's form"),
    "file_written_through_a_link": (
        [OK, entry("sys/d", kind=SYM, link="ok"), entry("sys/d/f")],
        "a link and a file share a name (sys/d)",  # links are made last: sys/d is a directory by then
    ),
    "link_inside_a_link": (
        [OK, entry("sys/real", kind=DIR), entry("sys/l", kind=SYM, link="real"), entry("sys/l/m", kind=SYM, link="x")],
        "a link inside a link (sys/l/m)",
    ),
    "same_file_twice": ([OK, entry("sys/f", b"first"), entry("sys/f", b"second")], "two entries share the name sys/f"),
    "file_then_directory": ([OK, entry("sys/f"), entry("sys/f", kind=DIR)], "two entries share the name sys/f"),
    "file_under_a_file": ([OK, entry("sys/f"), entry("sys/f/g")], "two entries share the name sys/f/g"),
    "link_over_a_file": ([OK, entry("sys/f"), entry("sys/f", kind=SYM, link="ok")], "a link and a file share a name"),
    "file_without_a_name": ([OK, entry(".")], "an entry without a name"),
}


@pytest.fixture
def private_tmpdir(tmp_path, monkeypatch):
    tmp = tmp_path / "TMPDIR"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read $TMPDIR in this process too
    return tmp


@pytest.fixture
def no_tarfile_extraction(monkeypatch):
    """tarfile may read the archive, never make anything from it."""

    def refuse(*args, **kwargs):
        raise AssertionError("tarfile extraction called on an archive disksleuth did not write")

    for name in ("extract", "extractall", "_extract_member", "_extract_one"):
        if hasattr(tarfile.TarFile, name):
            monkeypatch.setattr(tarfile.TarFile, name, refuse)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_entries_no_capture_holds_are_refused(cli, private_tmpdir, tmp_path, no_tarfile_extraction, case):
    members, says = REFUSED[case]
    bundle = write_archive(str(tmp_path / f"{case}.tar.gz"), members)
    res = cli("list", "--sysfs-root", bundle)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "is not a plausible capture bundle" in res.err and says in res.err, res.err
    assert os.listdir(private_tmpdir) == []


def test_a_real_capture_reads_back_without_tarfile_extraction(cli, tmp_path, no_tarfile_extraction):
    bundle = str(tmp_path / "c.tar.gz")
    assert cli("capture", "--json", "-o", bundle, "--keep-serials", "--sysfs-root", TREE).code == 0
    back = cli("list", "--json", "--sysfs-root", bundle)
    assert back.code == 0, back.err
    assert back.json()["devices"] == cli("list", "--json", "--sysfs-root", TREE).json()["devices"]


def test_modes_come_from_disksleuth_not_from_the_archive(tmp_path):
    from disksleuth.probe.capture import open_root

    members = [
        entry("sys", kind=DIR, mode=0o777),
        entry("sys/devices", kind=DIR, mode=0o777),  # a sysfs tree, as open_root requires
        entry("sys/run", b"#!/bin/sh\n", mode=0o777),
    ]
    bundle = write_archive(str(tmp_path / "modes.tar.gz"), members)
    root = open_root(bundle)
    try:
        file_mode = stat.S_IMODE(os.lstat(os.path.join(root, "sys", "run")).st_mode)
        dir_mode = stat.S_IMODE(os.lstat(os.path.join(root, "sys")).st_mode)
        assert file_mode & 0o133 == 0, oct(file_mode)  # not executable, only its owner may write
        assert dir_mode & 0o022 == 0, oct(dir_mode)
    finally:
        shutil.rmtree(root)


def test_links_of_the_kernels_form_are_kept(tmp_path):
    from disksleuth.probe.capture import open_root

    members = [
        entry("sys/devices/pci0000:00/block/sda", kind=DIR),
        entry("sys/devices/pci0000:00/block/sda/size", b"100\n"),
        entry("sys/block/sda", kind=SYM, link="../devices/pci0000:00/block/sda"),
        entry("sys/class/block/sda", kind=SYM, link="../../block/sda"),  # through another link, inside
    ]
    root = open_root(write_archive(str(tmp_path / "links.tar.gz"), members))
    try:
        with open(os.path.join(root, "sys/class/block/sda/size")) as fh:
            assert fh.read() == "100\n"
        assert os.readlink(os.path.join(root, "sys/block/sda")) == "../devices/pci0000:00/block/sda"
    finally:
        shutil.rmtree(root)
