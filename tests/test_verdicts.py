"""The verdicts through `explain` (analysis/verdicts.py): findings and summary agree with the link arithmetic,
cache_suspected words what is known (a virtual disk has no hardware ceiling), and the wording of link advice."""

from __future__ import annotations

import os
from dataclasses import replace

from conftest import SYSFS, result_with_series

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.verdicts import Figures, figures_from_tests, verdicts
from disksleuth.model import Device

X1 = os.path.join(SYSFS, "scenario_x1_chipset_slot")  # a PCIe 3.0 x4 drive on a PCIe 2.0 x1 port: ~450 MB/s


def _explain(cli, tree: str, device: str, *figures: str):
    res = cli("explain", device, "--sysfs-root", tree, "--json", *figures)
    doc = res.json()
    return res.code, {f["code"]: f for f in doc["findings"]}, doc["summary"]


# IOPS the link cannot carry: 500,000 x 4 KiB = 2,048 MB/s through a 450 MB/s link.
def test_iops_beyond_the_link_are_cache_suspected_with_the_arithmetic(cli):
    code, found, summary = _explain(cli, X1, "nvme0n1", "--read-iops", "500k")
    cache = found["cache_suspected"]
    assert cache["severity"] == "warn" and code == 1
    assert "500,000 random read IOPS x 4 KiB = 2,048 MB/s" in cache["message"]
    assert "PCIe 2.0 x1 ceiling of ~450 MB/s" in cache["message"]
    assert cache["evidence"]["rand_read_mbps"] == 2048.0
    assert cache["evidence"]["arithmetic"] == "500,000 read IOPS x 4096 B = 2,048.0 MB/s"
    assert "2,048 MB/s, more than its PCIe 2.0 x1 link can carry" in summary
    # 100,000 IOPS (410 MB/s) fits through the link: no such finding.
    _, found, _ = _explain(cli, X1, "nvme0n1", "--read-iops", "100k")
    assert "cache_suspected" not in found


# The summary agrees with cache_suspected: above the link is not "133% of its link ... could do more".
def test_summary_above_the_link_says_so(cli):
    code, found, summary = _explain(cli, X1, "nvme0n1", "--read", "600MB/s")
    assert found["cache_suspected"]["severity"] == "warn" and code == 1
    assert summary == (
        "reads 600 MB/s, more than its PCIe 2.0 x1 link can carry (~450 MB/s, 133%): a cache answered, not the drive"
    )
    assert "could" not in summary and "3,545" not in summary


# Far below the link: the link is not the bottleneck, and no link fix is pointed at.
def test_far_below_the_link_says_the_link_is_not_the_bottleneck(cli):
    code, found, summary = _explain(cli, X1, "nvme0n1", "--read", "480Mb/s")
    assert code == 0 and "cache_suspected" not in found and "link_limited" not in found
    assert summary.startswith("reads 60 MB/s, 13% of its PCIe 2.0 x1 link (450 MB/s); the link is not the bottleneck")
    assert "3,545" not in summary and "could" not in summary
    code, found, summary = _explain(cli, os.path.join(SYSFS, "nvme_new_format"), "nvme0n1", "--read", "500MB/s")
    ok = found["ok"]["message"]
    assert "500 MB/s is 14% of the ~3,545 MB/s PCIe 3.0 x4 link" in ok
    for text in (ok, summary):
        assert "the link is not the bottleneck here" in text
        assert "the drive, the file system, the queue depth or the test" in text


def test_a_link_bound_figure_names_the_capable_links_ceiling_not_the_drives(cli):
    _, found, summary = _explain(cli, X1, "nvme0n1", "--read", "400MB/s")
    assert found["link_limited"]["severity"] == "warn"
    assert summary.endswith(
        "the link is the limit: a PCIe 3.0 x4 link, which the drive supports, would carry ~3,545 MB/s"
    )
    assert "the drive could do" not in summary + found["link_limited"]["hint"]


# A virtual disk has no hardware ceiling known: say what is known, and never advise what was done.
def test_cache_suspected_on_a_virtual_disk_words_what_is_known():
    disk = Device("vdz", "/dev/vdz", "virtio", size_bytes=1 << 30)
    read = result_with_series([664.0] * 3)  # measured by disksleuth: direct I/O
    write = replace(read, id="SEQ1M_Q8T1_write", rw="write", read_mbps=None, write_mbps=817.0)
    figures = figures_from_tests([read, write])
    assert figures.measured_direct
    cache = next(f for f in verdicts(disk, link_chain(disk.hops), figures) if f.code == "cache_suspected")
    assert "faster than the hardware allows" not in cache.message
    assert cache.message == (
        "Sequential writes (817 MB/s) beat reads (664 MB/s) on a virtio virtual disk: "
        "the host is probably caching the writes in its memory."
    )
    assert "Measure with direct I/O" not in cache.hint and "cache=none" in cache.hint
    assert "measured with direct I/O (fio --direct=1)" in cache.hint
    # Figures given by hand (explain) may not be direct I/O: there the advice stands.
    given = next(f for f in verdicts(disk, link_chain(disk.hops), Figures(664.0, 817.0)) if f.code == "cache_suspected")
    assert "Measure with direct I/O (fio --direct=1)" in given.hint


# Wording.
def test_link_is_said_once_and_small_figures_keep_their_digits(cli):
    _, found, summary = _explain(cli, os.path.join(SYSFS, "sata_3g_on_6g"), "sda", "--read", "270MB/s")
    assert "link link" not in found["link_limited"]["message"] + summary
    assert "of the SATA 3 Gb/s link's ~285 MB/s" in found["link_limited"]["message"]
    assert "95% of its SATA 3 Gb/s link (285 MB/s)" in summary
    _, _, summary = _explain(cli, X1, "nvme0n1", "--read", "373 kB/s")
    assert summary.startswith("reads 0.373 MB/s, 0.083% of its PCIe 2.0 x1 link")


def test_sd_card_is_not_given_pcie_advice(cli):
    _, found, _ = _explain(cli, os.path.join(SYSFS, "sd_card_sdr104"), "mmcblk0", "--read", "90MB/s")
    hint = found["link_limited"]["hint"]
    assert "lanes" not in hint and "generation" not in hint and "UHS-II" in hint


