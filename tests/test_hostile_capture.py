"""`capture` leaks no serial, and reading a capture back leaves nothing behind, whatever the archive.

Real archives, real extraction into a private $TMPDIR, real SIGINT to a real process.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time

import pytest
from conftest import SYSFS

from disksleuth.probe.capture import MAX_CAPTURE_BYTES

SERIAL = "S4EWNX0R912345X"
MODEL = "Samsung SSD 970 EVO Plus 250GB"
SUBSYS = "sys/devices/virtual/nvme-subsystem/nvme-subsys0"
CTRL = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/nvme/nvme0"


def write(root: str, rel: str, content: str | bytes) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(content if isinstance(content, bytes) else content.encode())


@pytest.fixture
def leaky_tree(tmp_path):
    """An NVMe multipath tree whose serial is also inside subsysnqn, wwid, a by-id mount source and
    a namespace id, as a real Samsung drive shows it."""
    root = str(tmp_path / "tree")
    shutil.copytree(os.path.join(SYSFS, "nvme_multipath"), root, symlinks=True)
    nqn = f"nqn.2014.08.org.nvmexpress:144d144d{SERIAL}     {MODEL}\n"
    for directory in (SUBSYS, CTRL):
        write(root, f"{directory}/serial", f"{SERIAL}     \n")
        write(root, f"{directory}/subsysnqn", nqn)
    # The kernel's wwid fallback: "nvme.VID-<serial hex>-<model hex>-NSID".
    wwid = f"nvme.144d-{SERIAL.encode().hex()}-{MODEL.encode().hex()}-00000001\n"
    write(root, f"{SUBSYS}/nvme0n1/wwid", wwid)
    write(root, f"{CTRL}/wwid", wwid)
    by_id = f"/dev/disk/by-id/nvme-{MODEL.replace(' ', '_')}_{SERIAL}-part1"
    write(root, "proc/self/mountinfo", f"29 1 259:1 / /data rw - ext4 {by_id} rw\n")
    write(root, "proc/swaps", "Filename Type Size Used Priority\n")
    return root


def archive_bytes(bundle: str) -> bytes:
    with open(bundle, "rb") as fh:
        packed = fh.read()
    return packed + gzip.decompress(packed)


def test_capture_leaves_no_trace_of_the_serial(cli, leaky_tree, tmp_path):
    bundle = str(tmp_path / "c.tar.gz")
    res = cli("capture", "-o", bundle, "--sysfs-root", leaky_tree)
    assert res.code == 0, res.err
    blob = archive_bytes(bundle)
    for form in (SERIAL, SERIAL.lower(), SERIAL.encode().hex(), SERIAL.encode().hex().upper()):
        assert form.encode() not in blob, f"serial leaks as {form!r}"
    assert b"MASKED-" in blob
    # The bundle still reads back, with the model, the masked serial and the mount.
    dev = next(d for d in cli("list", "--json", "--sysfs-root", bundle).json()["devices"] if d["name"] == "nvme0n1")
    assert dev["model"] and dev["serial"].startswith("MASKED-")
    assert SERIAL not in res.out + res.err


def test_capture_leaves_no_trace_of_a_wwn(cli, tmp_path):
    """A SATA drive's WWN (scsi wwid "naa.…") reappears as /dev/disk/by-id/wwn-0x… in mountinfo."""
    root = str(tmp_path / "tree")
    shutil.copytree(os.path.join(SYSFS, "sata_3g_on_6g"), root, symlinks=True)
    device = "sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0"
    wwn = "5002538e40a1b2c3"
    write(root, f"{device}/wwid", f"naa.{wwn}\n")
    write(root, "proc/self/mountinfo", f"29 1 8:1 / /data rw - ext4 /dev/disk/by-id/wwn-0x{wwn}-part1 rw\n")
    swap = f"/dev/disk/by-id/wwn-0x{wwn.upper()}-part2 partition 1 0 -2"
    write(root, "proc/swaps", f"Filename Type Size Used Priority\n{swap}\n")
    bundle = str(tmp_path / "c.tar.gz")
    assert cli("capture", "-o", bundle, "--sysfs-root", root).code == 0
    blob = archive_bytes(bundle)
    assert wwn.encode() not in blob and wwn.upper().encode() not in blob
    assert b"/data" in blob  # the mount itself survives


def test_capture_keeps_serials_only_when_asked(cli, leaky_tree, tmp_path):
    bundle = str(tmp_path / "c.tar.gz")
    assert cli("capture", "-o", bundle, "--keep-serials", "--sysfs-root", leaky_tree).code == 0
    assert SERIAL.encode() in archive_bytes(bundle)


# --- reading captures back --------------------------------------------------------------------


@pytest.fixture
def private_tmpdir(tmp_path, monkeypatch):
    tmp = tmp_path / "TMPDIR"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read $TMPDIR in this process too
    return tmp


def leftovers(tmp) -> list[str]:
    return sorted(os.listdir(tmp))


def make_archive(path: str, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w:gz") -> str:
    with tarfile.open(path, mode, compresslevel=1) if mode.endswith("gz") else tarfile.open(path, mode) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def member(name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE, link: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 5
    return info, data if kind == tarfile.REGTYPE else None


HOSTILE = {
    "traversal": [member("sys/ok"), member("../../escaped")],
    "link_out": [member("sys/ok"), member("sys/out", kind=tarfile.SYMTYPE, link="/etc/passwd")],
    "device_node": [member("sys/ok"), member("sys/zero", kind=tarfile.CHRTYPE)],
    "fifo": [member("sys/ok"), member("sys/pipe", kind=tarfile.FIFOTYPE)],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_refused_archives_leave_nothing_behind(cli, private_tmpdir, tmp_path, case):
    bundle = make_archive(str(tmp_path / f"{case}.tar.gz"), HOSTILE[case])
    res = cli("list", "--sysfs-root", bundle)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "capture bundle" in res.err
    assert leftovers(private_tmpdir) == []
    assert not os.path.exists("/etc/escaped")


def test_archive_bomb_is_refused_before_it_fills_tmpdir(cli, private_tmpdir, tmp_path):
    # A few hundred KB of gzip that unpacks past the cap (the report: 1 MB holding 1 GiB).
    big = MAX_CAPTURE_BYTES + (1 << 20)
    info = tarfile.TarInfo("sys/block/zero")
    info.size = big
    path = str(tmp_path / "bomb.tar.gz")
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        tar.addfile(info, io.BytesIO(bytes(big)))
    assert os.path.getsize(path) < big // 100
    res = cli("list", "--sysfs-root", path)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "MiB" in res.err
    assert leftovers(private_tmpdir) == []


def test_too_many_entries_are_refused(cli, private_tmpdir, tmp_path, monkeypatch):
    # A lower cap keeps the test fast (50,000 mkdirs take minutes on overlayfs); the code path is the same.
    monkeypatch.setattr("disksleuth.probe.capture.MAX_CAPTURE_ENTRIES", 200, raising=False)
    path = str(tmp_path / "many.tar")
    dirs = [member(f"sys/d{i}", kind=tarfile.DIRTYPE) for i in range(201)]
    make_archive(path, dirs, mode="w")
    res = cli("list", "--sysfs-root", path)
    assert res.code == 2 and "entries" in res.err and res.err.count("\n") == 1, res.err
    assert leftovers(private_tmpdir) == []


def test_too_many_entries_are_refused_before_anything_is_extracted(cli, private_tmpdir, tmp_path, monkeypatch):
    """Review of e9e3807 (attacker): 200,000 empty members took 14.6 s to refuse, as the first 50,000 were
    extracted (and then removed) before the cap was reached. The headers are checked first: nothing is
    written, and reading stops at the cap (timings: docs/RELIABILITY.md)."""
    cap = 200
    monkeypatch.setattr("disksleuth.probe.capture.MAX_CAPTURE_ENTRIES", cap, raising=False)
    path = make_archive(str(tmp_path / "many.tar.gz"), [member(f"sys/f{i}", b"") for i in range(20 * cap)])
    headers: list[str] = []
    extracted: list[str] = []
    read_header = tarfile.TarInfo.fromtarfile.__func__
    from disksleuth.probe import capture

    unpack = capture._unpack_member

    def counted_header(cls, tar):
        info = read_header(cls, tar)
        headers.append(info.name)
        return info

    def counted_unpack(tar, member, *args):
        extracted.append(member.name)
        return unpack(tar, member, *args)

    monkeypatch.setattr(tarfile.TarInfo, "fromtarfile", classmethod(counted_header))
    monkeypatch.setattr(capture, "_unpack_member", counted_unpack)
    res = cli("list", "--sysfs-root", path)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert f"more than {cap:,} entries" in res.err
    assert extracted == []
    assert len(headers) == cap + 1  # of 4,000: the cap's first excess entry, and not one more
    assert leftovers(private_tmpdir) == []


def test_a_capture_within_the_caps_is_extracted_whole(tmp_path):
    from disksleuth.probe.capture import open_root

    path = make_archive(
        str(tmp_path / "small.tar.gz"),
        [
            member("sys", kind=tarfile.DIRTYPE),
            member("sys/devices", kind=tarfile.DIRTYPE),  # a sysfs tree has its top directories (open_root checks)
            *(member(f"sys/devices/f{i}", b"%d\n" % i) for i in range(300)),
        ],
    )
    root = open_root(path)
    try:
        assert len(os.listdir(os.path.join(root, "sys", "devices"))) == 300
        with open(os.path.join(root, "sys", "devices", "f299"), "rb") as fh:
            assert fh.read() == b"299\n"
    finally:
        shutil.rmtree(root)


def test_a_json_export_is_one_clear_line(cli, private_tmpdir, tmp_path):
    export = tmp_path / "export.json"
    export.write_text('{"schema": "disksleuth/1", "runs": []}')
    res = cli("list", "--sysfs-root", str(export))
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "not a readable capture bundle" in res.err and "Traceback" not in res.err
    assert leftovers(private_tmpdir) == []


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_extraction_leaves_nothing_behind(tmp_path, signum, exit_code):
    """A real process, interrupted (Ctrl-C) or terminated while it unpacks a large, allowed capture."""
    tmpdir = tmp_path / "TMPDIR"
    tmpdir.mkdir()
    path = str(tmp_path / "slow.tar.gz")
    files = [member(f"sys/f{i:05d}", b"%d\n" % i) for i in range(10_000)]
    make_archive(path, [member("sys", kind=tarfile.DIRTYPE), *files])
    proc = subprocess.Popen(
        [sys.executable, "-m", "disksleuth", "list", "--sysfs-root", path],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    interrupted = False
    while time.monotonic() < deadline and proc.poll() is None:
        extracting = [d for d in os.listdir(tmpdir) if os.path.isdir(tmpdir / d / "sys")]
        if extracting and len(os.listdir(tmpdir / extracting[0] / "sys")) > 100:
            proc.send_signal(signum)
            interrupted = True
            break
        time.sleep(0.005)
    _, err = proc.communicate(timeout=60)
    assert interrupted, "extraction finished before it could be interrupted"
    assert proc.returncode == exit_code, err
    assert leftovers(tmpdir) == []


def _link_chain_escape(victim: str) -> list[tuple]:
    """The attacker review's bundle (CVE-2025-4517): a chain of links makes the resolved path longer than
    PATH_MAX, so the "data" filter's realpath gives up and takes `escape` for a link inside the bundle; a
    file is then written through it, into `victim`."""
    comp, steps, path, out = "d" * 247, "abcdefghijklmnop", "", [member("sys/ok")]
    for step in steps:
        out.append(member(os.path.join(path, comp), kind=tarfile.DIRTYPE))
        out.append(member(os.path.join(path, step), kind=tarfile.SYMTYPE, link=comp))
        path = os.path.join(path, comp)
    linkpath = os.path.join(*steps, "l" * 254)
    out.append(member(linkpath, kind=tarfile.SYMTYPE, link="../" * len(steps)))
    out.append(member("escape", kind=tarfile.SYMTYPE, link=linkpath + "/" + "../" * 15 + victim.lstrip("/")))
    out.append(member("escape/pwned", b"written by a capture bundle\n"))
    return out


def test_a_link_chain_past_path_max_cannot_write_outside_the_bundle(cli, private_tmpdir, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "pwned").write_text("original content\n")
    bundle = make_archive(str(tmp_path / "chain.tar.gz"), _link_chain_escape(str(victim)))
    res = cli("list", "--sysfs-root", bundle, "--json")
    # The old code exited 0 with an empty device list, and victim/pwned said "written by a capture bundle".
    assert res.code == 2 and "not a plausible capture bundle" in res.json()["error"]["message"]
    assert (victim / "pwned").read_text() == "original content\n"
    assert leftovers(private_tmpdir) == []


@pytest.mark.parametrize(
    "case, says",
    [
        # A file written through a link the bundle made (links are made last, so the name is a directory).
        ([member("sys/ok"), member("sys/l", kind=tarfile.SYMTYPE, link="."), member("sys/l/f")], "capture bundle"),
        ([member("sys/ok"), member("sys/h", kind=tarfile.LNKTYPE, link="sys/ok")], "a hard link"),
        ([member("sys/ok"), member("sys/" + "n" * 300)], "NAME_MAX"),
        ([member("sys/ok"), member("sys/x", kind=tarfile.SYMTYPE, link="../../etc")], "leaves the bundle"),
    ],
)
def test_links_and_names_no_capture_holds_are_refused(cli, private_tmpdir, tmp_path, case, says):
    bundle = make_archive(str(tmp_path / "odd.tar", ), case, mode="w")
    res = cli("list", "--sysfs-root", bundle)
    assert res.code == 2 and says in res.err and res.err.count("\n") == 1, res.err
    assert leftovers(private_tmpdir) == []


def test_a_huge_long_name_header_is_refused_before_it_is_read_into_memory(cli, private_tmpdir, tmp_path):
    # The attacker review: a 389 KB .tar.gz with one 400 MB GNU long name took 3.1 GB of RAM before the
    # name was refused. The header's size is checked first now; 2 MB here keeps the test light.
    path = str(tmp_path / "longname.tar.gz")
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(member("sys", kind=tarfile.DIRTYPE)[0])
        tar.addfile(tarfile.TarInfo("sys/" + "a" * 2_000_000), io.BytesIO(b""))
    res = cli("list", "--sysfs-root", path)
    assert res.code == 2 and "a long-name header of 2,000,005 bytes" in res.err
    assert leftovers(private_tmpdir) == []
