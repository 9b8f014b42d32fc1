"""--sysfs-root on a directory that holds no sysfs is one line and exit 2 (issue 20: `list --sysfs-root DIR`
printed a header and exited 0, as if the machine had no devices)."""

from __future__ import annotations

import os

import pytest

SYSFS = os.path.join(os.path.dirname(__file__), "data", "sysfs", "nvme_multipath")


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["links"],
        ["explain", "nvme0n1", "--read", "300MB/s"],
        ["capture", "-o", "{tmp}/out.tar.gz"],
        ["exporter", "--textfile", "{tmp}/textfile"],
    ],
    ids=lambda a: a[0],
)
def test_a_directory_that_is_not_sysfs_is_refused(cli, tmp_path, argv):
    notsys = tmp_path / "notsys"
    (notsys / "etc").mkdir(parents=True)
    (tmp_path / "textfile").mkdir()
    res = cli(*[a.format(tmp=tmp_path) for a in argv], "--sysfs-root", str(notsys))
    assert res.code == 2, (res.out, res.err)
    assert res.err.count("\n") == 1 and res.err.startswith(f"disksleuth: --sysfs-root {notsys} is not a sysfs tree")
    assert res.out == ""
    assert not (tmp_path / "out.tar.gz").exists() and list((tmp_path / "textfile").iterdir()) == []


def test_json_gets_one_error_document(cli, tmp_path):
    res = cli("list", "--json", "--sysfs-root", str(tmp_path))
    assert res.code == 2 and "is not a sysfs tree" in res.json()["error"]["message"]


def test_sys_itself_is_told_to_give_the_directory_above(cli):
    res = cli("list", "--sysfs-root", "/sys")
    assert res.code == 2 and "give the directory above it" in res.err


def test_capture_of_no_sysfs_writes_no_empty_bundle(cli, tmp_path):
    """It wrote "0 sysfs entries" and a bundle that read back as a machine without devices."""
    bundle = tmp_path / "empty.tar.gz"
    (tmp_path / "empty").mkdir()
    assert cli("capture", "-o", str(bundle), "--sysfs-root", str(tmp_path / "empty")).code == 2
    assert not bundle.exists()


def test_a_real_tree_and_a_capture_of_it_still_read(cli, tmp_path):
    assert "nvme0n1" in cli("list", "--sysfs-root", SYSFS).out
    bundle = tmp_path / "b.tar.gz"
    assert cli("capture", "-o", str(bundle), "--sysfs-root", SYSFS).code == 0
    res = cli("list", "--sysfs-root", str(bundle))
    assert res.code == 0 and "nvme0n1" in res.out
