"""analysis/pathdiff.py on run documents built from real-layout sysfs trees (the device and link chain
`explain` reads from each tree): each kind of change, and the explanation each gives (issue 28). Fast: no fio;
the measured pairs are in test_compare_paths.py."""

from __future__ import annotations

import copy
import hashlib
import json
import os

import pytest
from conftest import SAMPLE_RUN, SYSFS

from disksleuth.analysis.compare import compare
from disksleuth.analysis.pathdiff import by_column, path_changes, path_columns
from disksleuth.store.db import Store


@pytest.fixture
def tree_run(cli):  # noqa: ANN001, ANN201
    """A run document on the machine of a sysfs tree: its device, link chain and findings (`explain` with
    the figures given), with the sample run's measured tests scaled to `read_mbps`."""
    made = [0]

    def make(tree: str, name: str, read_mbps: float, rnd_iops: float = 20_000.0) -> dict:
        res = cli(
            "explain", name, "--sysfs-root", os.path.join(SYSFS, tree), "--read", f"{read_mbps}MB/s",
            "--read-iops", str(rnd_iops), "--json",
        )  # fmt: skip
        explained = res.json()
        with open(SAMPLE_RUN) as fh:
            doc = json.load(fh)
        made[0] += 1
        doc["run"]["id"] = made[0]
        doc["device"] = explained["device"]
        serial = str(explained["device"].pop("serial")).encode()
        doc["device"]["serial_id"] = hashlib.sha256(b"test key" + serial).hexdigest()  # keyed, as a store has it
        doc["findings"] = explained["findings"]
        seq = next(t for t in doc["tests"] if t["id"] == "SEQ1M_Q8T1_read")
        seq.update(read_mbps=read_mbps, read_iops=read_mbps, ci95_pct=2.0)
        rnd = next(t for t in doc["tests"] if t["id"] == "RND4K_Q32T1_read")
        rnd.update(read_iops=rnd_iops, read_mbps=rnd_iops * 4096 / 1e6, ci95_pct=2.0)
        return doc

    return make


def _explained(a: dict, b: dict) -> dict[str, object]:
    (pair,) = compare([a, b]).paths
    return {e.figure.test_id: e for e in pair.explanations}


def test_two_runs_of_an_unchanged_device_differ_in_nothing(tree_run) -> None:  # noqa: ANN001
    a = tree_run("scenario_x4_after_bios", "nvme0n1", 1243)
    b = tree_run("scenario_x4_after_bios", "nvme0n1", 1243)
    assert path_changes(a, b) == ()
    (pair,) = compare([a, b]).paths
    assert pair.changes == () and pair.explanations == ()


def test_a_hop_slot_is_diffed_when_the_key_is_there_and_ignored_when_not(tree_run) -> None:  # noqa: ANN001
    a = tree_run("scenario_x4_after_bios", "nvme0n1", 1243)
    b = copy.deepcopy(a)
    assert path_changes(a, b) == ()  # no slot key (before issue 22): nothing to diff, no error
    a["device"]["link"]["hops"][0]["slot"] = "PCIEX16_2"
    b["device"]["link"]["hops"][0]["slot"] = {"name": "PCIEX1_1", "type": "x1 PCI Express 3"}
    (slot,) = path_changes(a, b)
    assert (slot.what, slot.hop, slot.before, slot.after) == ("slot", "PCIe 0000:03:00.0", "PCIEX16_2", "PCIEX1_1")


def test_a_usb_bridge_appearing_explains_the_fall(tree_run) -> None:  # noqa: ANN001
    """The NVMe drive moved from its M.2 slot into a USB caddy on a USB 2 port: the PCIe hop went, a USB
    bridge hop appeared, and the USB 2 ceiling explains the fall."""
    a = tree_run("nvme_new_format", "nvme0n1", 1549)
    b = tree_run("scenario_usb2_caddy", "sdb", 36.4, rnd_iops=8_800)
    changes = path_changes(a, b)
    hops = [(c.before, c.after) for c in changes if c.what == "hop"]
    assert hops == [("PCIe 3.0 x4 (~3,545 MB/s)", None), (None, "USB 2.0 480 Mb/s, usb-storage (~40 MB/s)")]
    assert {c.what for c in changes if c.area == "device"} >= {"device", "model", "transport"}
    seq = _explained(a, b)["SEQ1M_Q8T1_read"]
    assert seq.verdict == "link", seq.text
    assert "to USB 2.0 480 Mb/s, usb-storage (~40 MB/s): that explains the fall" in seq.text
    assert "The new figure is 91% of the new ceiling" in seq.text and "so the link limits it now" in seq.text


def test_health_counters_that_grew_or_appeared_may_explain_a_fall(tree_run) -> None:  # noqa: ANN001
    a = tree_run("sata_6g_on_6g", "sda", 530)
    b = tree_run("sata_6g_on_6g", "sda", 300)
    a["health"]["after"] = {"media_errors": None, "ata_pending_sectors": 0, "ata_crc_errors": 2, "power_on_hours": 10}
    b["health"]["after"] = {
        "ata_pending_sectors": 8,
        "ata_crc_errors": 2,
        "power_on_hours": 900,  # not a counter of trouble: never a change
        "interface_error_counts": {"UDMA_CRC_Error_Count (ATA 199)": 5},
    }
    health = [(c.what, c.before, c.after) for c in path_changes(a, b) if c.area == "health"]
    assert health == [("pending sectors", "0", "8"), ("UDMA_CRC_Error_Count (ATA 199)", None, "5")]
    seq = _explained(a, b)["SEQ1M_Q8T1_read"]
    assert (seq.verdict, seq.explained) == ("possible", None)
    assert "may explain it: health pending sectors: 0 → 8" in seq.text


def test_a_kernel_change_with_figures_held_names_the_hop_that_still_limits(tree_run) -> None:  # noqa: ANN001
    a = tree_run("sata_1g5_on_6g", "sda", 140)
    b = tree_run("sata_1g5_on_6g", "sda", 140.5)
    b["run"]["host"]["kernel"] = "6.19.0"
    b["run"]["fio_version"] = "fio-3.38"
    changes = path_changes(a, b)
    assert [(c.what, c.before, c.after) for c in changes] == [
        ("kernel", "6.18.44-fc-v669", "6.19.0"),
        ("fio", "fio-3.33", "fio-3.38"),
    ]
    seq = _explained(a, b)["SEQ1M_Q8T1_read"]
    assert seq.verdict == "unchanged"
    assert "SATA 1.5 Gb/s link still limits it (99% of its ~142 MB/s)" in seq.text


def test_a_faster_link_that_never_limited_does_not_explain_a_rise(tree_run) -> None:  # noqa: ANN001
    a = tree_run("scenario_x1_chipset_slot", "nvme0n1", 200)  # 44% of ~450: not link-limited
    b = tree_run("scenario_x4_after_bios", "nvme0n1", 600)
    seq = _explained(a, b)["SEQ1M_Q8T1_read"]
    assert (seq.verdict, seq.explained) == ("none", False)
    assert "but the old figure was 44% of that ceiling, so the link did not limit it" in seq.text
    assert "Nothing else on its path changed" in seq.text


def test_different_drives_side_by_side_by_column_with_relative_to(tree_run, cli, tmp_path) -> None:  # noqa: ANN001
    """The drive-against-drive post: an NVMe drive and a SATA SSD against a RAM disk, figures as % of it and
    the path by column."""
    ram = tree_run("nvme_new_format", "nvme0n1", 4000)
    ram["device"] = {"name": "ram0", "transport": "brd", "model": None}
    nvme = tree_run("nvme_new_format", "nvme0n1", 1549)
    sata = tree_run("sata_6g_on_6g", "sda", 530)
    c = compare([nvme, sata], reference=ram)
    assert by_column(c.paths)
    columns = {(what, hop): values for what, hop, values in path_columns(c.paths, c.run_ids, c.baseline)}
    assert columns[("model", "")] == ["Samsung SSD 970 EVO Plus 250GB", "Samsung SSD 860"]
    db = f"sqlite:///{tmp_path}/drives.sqlite"
    with Store(db) as store:
        runs = [ram, nvme, sata]
        ids = [store.save({**d, "run": {**d["run"], "id": None, "uuid": f"u{i}"}}) for i, d in enumerate(runs)]
    out = cli("compare", str(ids[1]), str(ids[2]), "--relative-to", str(ids[0]), "--db", db).out
    assert "39%" in out and "13%" in out  # 1,549 and 530 of 4,000 MB/s
    assert "What differs on the path (runs side by side):" in out
    assert "Samsung SSD 860" in out.split("What differs on the path", 1)[1]
    md = cli("compare", str(ids[1]), str(ids[2]), "--relative-to", str(ids[0]), "--db", db, "--format", "markdown")
    assert "| model |  | Samsung SSD 970 EVO Plus 250GB | Samsung SSD 860 |" in md.out
    report = tmp_path / "r.html"
    assert cli("report", str(ids[1]), str(ids[2]), "--db", db, "-o", str(report)).code == 0
    html = report.read_text()
    # The report says it in compare's words: the SATA link's ceiling explains the NVMe drive's lead.
    assert "What differs on the path (runs side by side):" in html
    assert "to SATA 6 Gb/s link (~570 MB/s): that explains the fall" in html
