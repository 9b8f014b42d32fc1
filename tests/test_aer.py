"""PCIe AER counters on every hop of a path, and `link_errors` when they grow (issue 36).

This machine (a VM) has no PCIe AER files at all, so the tests read trees: real AER files in the kernel's format
(prometheus/procfs's and node_exporter's fixtures, tests/data/procfs/*aer*.ttar) placed on the NVMe path of a
sysfs tree (tests/data/sysfs/make_aer_trees.py: aer_clean, aer_oculink_before, aer_oculink_after), and copies of
them rewritten between two readings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import DATA, SYSFS, metric_value, needs_fio
from test_array_stack import unpack_ttar
from test_hostile_sysfs import run_cli

from disksleuth.analysis.aer import (
    aer_growth,
    aer_text,
    link_errors_finding,
    path_counters,
    path_functions,
    path_growth,
    path_roles,
)
from disksleuth.analysis.pathdiff import FigureChange, change_line, explain_figure, path_changes
from disksleuth.model import AerCount, AerCounters, PcieHop
from disksleuth.probe.aer import parse_aer_dev, parse_aer_total, read_aer, read_aers
from disksleuth.probe.block import read_device
from disksleuth.probe.sysfs import Notes
from disksleuth.run.link_errors import errors_during

CLEAN = os.path.join(SYSFS, "aer_clean")
BEFORE = os.path.join(SYSFS, "aer_oculink_before")
AFTER = os.path.join(SYSFS, "aer_oculink_after")
DRIVE = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
PORT = "sys/devices/pci0000:00/0000:00:01.0"
PROCFS = "fixtures/sys/devices/pci0000:00"

OCULINK_MESSAGE = (
    "correctable errors on 0000:01:00.0 grew by 1,240 during the test (RxErr 1,200, BadDLLP 40): a riser, cable "
    "(OCuLink) or seating fault makes the link retransmit. Also: correctable errors on the root port 0000:00:01.0 "
    "grew by 12 (RxErr 12)."
)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> str:
    dest = str(tmp_path_factory.mktemp("aer"))
    unpack_ttar(os.path.join(DATA, "procfs", "sys-pci-aer.ttar"), dest)
    unpack_ttar(os.path.join(DATA, "procfs", "node-exporter-sys-pci-aer.ttar"), dest)
    return dest


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _copy(tree: str, dest: str) -> str:
    root = os.path.join(dest, os.path.basename(tree))
    shutil.copytree(tree, root, symlinks=True)
    return root


def _write(root: str, rel: str, text: str) -> None:
    path = os.path.join(root, rel)
    os.remove(path)  # a test's copy: never write through to the committed tree
    with open(path, "w") as fh:
        fh.write(text)


# --- the parsers on the kernel's files ---------------------------------------------------------------------------


def test_the_fixtures_files_parse_as_the_kernel_wrote_them(fixtures: str) -> None:
    port = os.path.join(fixtures, PROCFS, "0000:00:03.0")
    for severity, name in (
        ("correctable", "aer_dev_correctable"),
        ("nonfatal", "aer_dev_nonfatal"),
        ("fatal", "aer_dev_fatal"),
    ):
        for fn in (port, os.path.join(port, "0000:03:00.0")):
            assert parse_aer_dev(_read(os.path.join(fn, name)), severity) == (0, (), None)
        ne = os.path.join(fixtures, "sys/devices/pci0000:40/0000:40:01.3/0000:45:00.0", name)
        assert parse_aer_dev(_read(ne), severity) == (0, (), None)
    for name in ("aer_rootport_total_err_cor", "aer_rootport_total_err_fatal", "aer_rootport_total_err_nonfatal"):
        assert parse_aer_total(_read(os.path.join(port, name))) == 0
    counted = os.path.join(fixtures, PROCFS, "0000:00:1f.6")
    total, kinds, problem = parse_aer_dev(_read(os.path.join(counted, "aer_dev_correctable")), "correctable")
    assert (total, problem) == (9, None)
    assert [(k.name, k.count) for k in kinds] == [
        ("RxErr", 1), ("BadTLP", 2), ("BadDLLP", 3), ("Rollover", 4), ("Timeout", 5), ("NonFatalErr", 6),
        ("CorrIntErr", 7), ("HeaderOF", 8),
    ]  # fmt: skip
    total, kinds, problem = parse_aer_dev(_read(os.path.join(counted, "aer_dev_fatal")), "fatal")
    assert total == 28 and len(kinds) == 18 and kinds[-1] == AerCount("fatal", "PoisonTLPBlocked", 27)
    # procfs's own slip: its nonfatal file ends in TOTAL_ERR_FATAL. The per-kind counts never stand in for a total.
    total, kinds, problem = parse_aer_dev(_read(os.path.join(counted, "aer_dev_nonfatal")), "nonfatal")
    assert total is None and len(kinds) == 18
    assert problem == "TOTAL_ERR_FATAL where TOTAL_ERR_NONFATAL belongs"


def test_an_unnamed_bit_and_the_largest_count_the_kernel_can_print() -> None:
    text = "RxErr 0\nBadTLP 18446744073709551615\ndev_cor_errs_bit[15] 2\nTOTAL_ERR_COR 18446744073709551615\n"
    total, kinds, problem = parse_aer_dev(text, "correctable")
    assert total == 2**64 - 1 and problem is None
    assert [k.name for k in kinds] == ["BadTLP", "dev_cor_errs_bit[15]"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("RxErr 0\nBadTLP 0\n", "no TOTAL_ERR_COR line"),  # cut short
        ("", "no TOTAL_ERR_COR line"),
        ("RxErr x\nTOTAL_ERR_COR 3\n", "unreadable count 'RxErr x'"),
        ("RxErr -1\nTOTAL_ERR_COR 3\n", "unreadable count 'RxErr -1'"),
        ("RxErr 18446744073709551616\nTOTAL_ERR_COR 3\n", "unreadable count 'RxErr 18446744073709551616'"),
        ("RxErr 1 2\nTOTAL_ERR_COR 3\n", "unreadable line 'RxErr 1 2'"),
        ("RxErr ３\nTOTAL_ERR_COR 3\n", "unreadable count 'RxErr ３'"),  # a digit, but not one the kernel prints
        ("TOTAL_ERR_COR 1e3\n", "unreadable count 'TOTAL_ERR_COR 1e3'"),
        ("TOTAL_ERR_COR " + "9" * 5000 + "\n", f"unreadable count {('TOTAL_ERR_COR ' + '9' * 26)!r}"),
    ],
)
def test_bad_counter_files_say_what_is_wrong(text: str, problem: str) -> None:
    total, _, said = parse_aer_dev(text, "correctable")
    assert said == problem
    assert total == (3 if "TOTAL_ERR_COR 3" in text else None)


def test_a_long_file_is_cut_before_it_is_split() -> None:
    text = "RxErr 1\n" * 1_000_000 + "TOTAL_ERR_COR 5\n"  # 8 MB: the kernel's file is one page
    total, kinds, problem = parse_aer_dev(text, "correctable")
    assert total is None and problem == "no TOTAL_ERR_COR line" and len(kinds) <= 64
    assert parse_aer_total("12\n") == 12 and parse_aer_total("12 13") is None and parse_aer_total("-1") is None


# --- each hop carries both ends' counters --------------------------------------------------------------------------


def test_each_pcie_hop_carries_both_ends_counters() -> None:
    hop = read_device("nvme0n1", BEFORE).hops[0]
    assert isinstance(hop, PcieHop)
    assert hop.aer == AerCounters(
        "0000:01:00.0",
        9,
        0,
        0,
        counts=tuple(
            AerCount("correctable", n, c)
            for n, c in (
                ("RxErr", 1),
                ("BadTLP", 2),
                ("BadDLLP", 3),
                ("Rollover", 4),
                ("Timeout", 5),
                ("NonFatalErr", 6),
                ("CorrIntErr", 7),
                ("HeaderOF", 8),
            )
        ),  # fmt: skip
    )
    assert hop.port_aer == AerCounters("0000:00:01.0", 0, 0, 0, 9, 0, 0)
    assert aer_text(hop.aer) == "9 correctable (HeaderOF 8, CorrIntErr 7, NonFatalErr 6, …)"
    assert aer_text(hop.port_aer) == "reported to it from below: 9 correctable"
    clean = read_device("nvme0n1", CLEAN).hops[0]
    assert isinstance(clean, PcieHop) and aer_text(clean.aer) is None and aer_text(clean.port_aer) is None
    # A tree without AER files (an older kernel, firmware-first error handling): none, and nothing said.
    old = read_device("nvme0n1", os.path.join(SYSFS, "nvme_new_format"))
    assert isinstance(old.hops[0], PcieHop) and old.hops[0].aer is None and old.notes == ()


def test_read_aer_by_bdf_for_top() -> None:
    assert read_aer("0000:01:00.0", AFTER) is not None
    assert read_aer("0000:01:00.0", AFTER).correctable == 1249  # type: ignore[union-attr]
    assert read_aer("0000:09:00.0", AFTER) is None  # no such function
    assert read_aer("../../../etc", AFTER) is None  # not a BDF: never a path
    assert set(read_aers(["0000:01:00.0", "0000:00:01.0", "0000:00:00.0"], AFTER)) == {"0000:01:00.0", "0000:00:01.0"}
    hops = read_device("nvme0n1", AFTER).hops
    assert path_functions(hops) == ("0000:01:00.0", "0000:00:01.0")
    assert path_roles(hops) == {"0000:01:00.0": "0000:01:00.0", "0000:00:01.0": "the root port 0000:00:01.0"}


# --- growth ---------------------------------------------------------------------------------------------------------


def test_growth_during_a_test_is_link_errors_with_the_numbers() -> None:
    before = read_device("nvme0n1", BEFORE)
    device, found = errors_during(before, AFTER)
    assert [f.code for f in found] == ["link_errors"]
    f = found[0]
    assert f.severity == "warn" and f.device == "nvme0n1"
    assert f.message == OCULINK_MESSAGE
    assert f.evidence["grew_by"] == 1240 and f.evidence["kinds"] == {"RxErr": 1200, "BadDLLP": 40}
    assert [(g["bdf"], g["grew_by"]) for g in f.evidence["growth"]] == [("0000:01:00.0", 1240), ("0000:00:01.0", 12)]
    assert "OCuLink" in f.hint and "Back up" not in f.hint
    # The run keeps the newer reading: the next comparison counts only what came after it.
    assert path_counters(device.hops)["0000:01:00.0"].correctable == 1249


def test_counters_that_hold_still_are_silent_even_when_not_zero() -> None:
    for tree in (BEFORE, CLEAN):
        assert errors_during(read_device("nvme0n1", tree), tree)[1] == []
    # A counter that went down (a reset, or a reboot between two stored readings) is no growth either.
    assert errors_during(read_device("nvme0n1", AFTER), BEFORE)[1] == []
    # The path gone after the test (a drive that dropped off the bus): nothing read again, nothing said.
    assert errors_during(read_device("nvme0n1", CLEAN), "/nonexistent")[1] == []


def test_uncorrectable_growth_is_worded_more_strongly(tmp_path) -> None:  # noqa: ANN001
    root = _copy(CLEAN, str(tmp_path))
    before = read_device("nvme0n1", root)
    nonfatal = _read(os.path.join(root, DRIVE, "aer_dev_nonfatal"))
    _write(
        root,
        f"{DRIVE}/aer_dev_nonfatal",
        nonfatal.replace("CmpltTO 0", "CmpltTO 3").replace("NONFATAL 0", "NONFATAL 3"),
    )
    fatal = _read(os.path.join(root, DRIVE, "aer_dev_fatal"))
    _write(root, f"{DRIVE}/aer_dev_fatal", fatal.replace("SDES 0", "SDES 1").replace("FATAL 0", "FATAL 1"))
    _write(root, f"{PORT}/aer_rootport_total_err_fatal", "1\n")
    _, found = errors_during(before, root)
    f = found[0]
    assert f.message.startswith(
        "fatal errors on 0000:01:00.0 grew by 1 during the test (SDES 1): the link or the device failed and had to be "
        "reset, and I/O in flight could be lost"
    ), f.message
    assert "Also: uncorrectable (non-fatal) errors on 0000:01:00.0 grew by 3 (CmpltTO 3)." in f.message
    assert "received" not in f.message  # the root port's total counts the drive's own: said once
    assert f.hint.startswith("Back up the drive's data first.")
    only_nonfatal = link_errors_finding([g for g in path_growth(path_counters(before.hops), read_aers(
        path_functions(before.hops), root)) if g.severity == "nonfatal"], during="in the last 5 s")  # fmt: skip
    assert only_nonfatal is not None and only_nonfatal.message.startswith(
        "uncorrectable (non-fatal) errors on 0000:01:00.0 grew by 3 in the last 5 s (CmpltTO 3): the link lost "
        "transfers it could not retransmit"
    )


def test_a_root_port_total_speaks_only_when_no_function_counter_grew() -> None:
    before = AerCounters("0000:00:01.0", 0, 0, 0, 5, 0, 0)
    after = AerCounters("0000:00:01.0", 0, 0, 0, 17, 0, 0)
    growth = aer_growth(before, after)
    assert [(g.severity, g.grew_by, g.rootport) for g in growth] == [("correctable", 12, True)]
    f = link_errors_finding(growth, roles={"0000:00:01.0": "the root port 0000:00:01.0"})
    assert f is not None and f.message.startswith(
        "the root port 0000:00:01.0 received 12 more correctable error messages from the devices below it during "
        "the test: "
    )
    assert aer_growth(before, None) == () and aer_growth(before, AerCounters("0000:00:02.0", 0, 0, 0, 99)) == ()
    assert link_errors_finding([]) is None


# --- hostile trees ----------------------------------------------------------------------------------------------------


def _plant(root: str, rel: str, make) -> None:  # noqa: ANN001
    path = os.path.join(root, rel)
    os.remove(path)
    make(path)


@pytest.mark.parametrize(
    "attack",
    ["fifo", "zero", "huge", "junk", "nul", "dir", "rootport_fifo", "rootport_huge"],
)
def test_hostile_aer_files_give_a_note_and_no_traceback(tmp_path, cli, attack: str) -> None:  # noqa: ANN001
    root = _copy(AFTER, str(tmp_path))
    drive_cor = f"{DRIVE}/aer_dev_correctable"
    if attack == "fifo":
        _plant(root, drive_cor, os.mkfifo)
    elif attack == "zero":
        _plant(root, drive_cor, lambda p: os.symlink("/dev/zero", p))
    elif attack == "huge":
        _write(root, drive_cor, "RxErr 1\n" * 200_000 + "TOTAL_ERR_COR 1\n")
    elif attack == "junk":
        _write(root, drive_cor, "\x1b[31mRxErr\x1b[0m 12\nTOTAL_ERR_COR ten\n")
    elif attack == "nul":
        _write(root, drive_cor, "RxErr 1\x00\nTOTAL_ERR_COR 1\n")
    elif attack == "dir":
        _plant(root, drive_cor, os.mkdir)
    elif attack == "rootport_fifo":
        _plant(root, f"{PORT}/aer_rootport_total_err_cor", os.mkfifo)
    elif attack == "rootport_huge":
        _write(root, f"{PORT}/aer_rootport_total_err_cor", "1" * 100_000)
    notes = Notes()
    counters = read_aer("0000:01:00.0", root, notes=notes) if not attack.startswith("rootport") else read_aer(
        "0000:00:01.0", root, notes=notes)  # fmt: skip
    assert counters is not None
    if attack.startswith("rootport"):
        assert counters.rootport_correctable is None
    else:  # a NUL after a count spoils only that line: the total stands
        assert counters.correctable == (1 if attack == "nul" else None) and counters.fatal == 0
    assert len(notes.items) == 1 and notes.items[0].startswith(("0000:01:00.0 aer_dev", "0000:00:01.0 aer_root"))
    if attack in ("fifo", "zero"):  # what could hang or fill memory: a subprocess, with a timeout and a memory limit
        res = run_cli("list", "--sysfs-root", root, timeout=30)
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    for command in ("list", "links"):
        res = cli(command, "--sysfs-root", root)
        assert res.code == 0 and "Traceback" not in res.err, res.err
    doc = cli("list", "--json", "--sysfs-root", root).json()
    assert any("aer_" in n for n in doc["devices"][0]["notes"])
    # The growth judge takes what could be read: a count it cannot read is never growth.
    found = errors_during(read_device("nvme0n1", BEFORE), root)[1]
    grew = {g["bdf"] for f in found for g in f.evidence["growth"]}
    assert grew == ({"0000:01:00.0", "0000:00:01.0"} if attack.startswith("rootport") else {"0000:00:01.0"})


# --- the views, the document, stored readings ---------------------------------------------------------------------


def test_list_links_and_explain_show_counters_that_are_not_zero_and_nothing_when_they_are(cli) -> None:  # noqa: ANN001
    res = cli("list", "--sysfs-root", AFTER)
    assert res.code == 0
    assert (
        "PCIe errors since boot on 0000:01:00.0: 1,249 correctable (RxErr 1,201, BadDLLP 43, HeaderOF 8, …)" in res.out
    )
    assert (
        "PCIe errors since boot on root port 0000:00:01.0: 12 correctable (RxErr 12); reported to it from below: 1,261"
        in res.out
    )
    res = cli("links", "--sysfs-root", AFTER)
    assert "PCIe errors since boot on 0000:01:00.0: 1,249 correctable" in res.out
    res = cli("explain", "nvme0n1", "--read", "3000 MB/s", "--sysfs-root", AFTER)
    assert "PCIe errors since boot on 0000:01:00.0" in res.out and "link_errors" not in res.out
    for command in (("list",), ("links",), ("explain", "nvme0n1", "--read", "3000 MB/s")):
        res = cli(*command, "--sysfs-root", CLEAN)
        assert "PCIe errors" not in res.out and "link_errors" not in res.out


def test_the_documents_carry_the_counters_and_meet_the_schema(cli) -> None:  # noqa: ANN001
    from test_json_schema import assert_valid

    doc = cli("list", "--json", "--sysfs-root", AFTER).json()
    assert_valid(doc, "list")
    hop = doc["devices"][0]["link"]["hops"][0]
    assert hop["aer"]["correctable"] == 1249 and hop["port_aer"]["rootport_correctable"] == 1261
    assert {"severity": "correctable", "name": "RxErr", "count": 1201} in hop["aer"]["counts"]
    links = cli("links", "--json", "--sysfs-root", AFTER).json()
    assert_valid(links, "links")
    assert {f["bdf"]: (f["aer"] or {}).get("correctable") for f in links["functions"]} == {
        "0000:00:00.0": None, "0000:00:01.0": 12, "0000:01:00.0": 1249,
    }  # fmt: skip
    clean = cli("list", "--json", "--sysfs-root", CLEAN).json()
    assert_valid(clean, "list")
    assert clean["devices"][0]["link"]["hops"][0]["aer"]["counts"] == []


def _run_doc(tree: str, run_id: int, read_mbps: float) -> dict:
    """A stored run of the tree's drive, shaped as `Store.load` returns it (device from `list --json`)."""
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.doc.inventory import device_to_dict

    device = read_device("nvme0n1", tree)
    return {
        "device": device_to_dict(device, link_chain(device.hops)),
        "run": {"id": run_id, "host": {"hostname": "h", "kernel": "6.1"}, "fio_version": "fio-3.33"},
        "tests": [{"id": "SEQ1M_Q8T1_read", "read_mbps": read_mbps}],
        "findings": [],
        "health": {},
    }


def test_compare_names_errors_that_grew_between_two_stored_runs() -> None:
    a, b = _run_doc(BEFORE, 1, 3000.0), _run_doc(AFTER, 2, 1900.0)
    changes = [c for c in path_changes(a, b) if c.area == "link_errors"]
    assert [change_line(c) for c in changes] == [
        "correctable errors on PCIe 0000:01:00.0: 9 → 1,249 (+1,240)",
        "correctable errors on PCIe 0000:00:01.0 (root port): 0 → 12 (+12)",
    ]
    assert path_changes(a, a) == () and not [c for c in path_changes(b, a) if c.area == "link_errors"]
    figure = FigureChange("SEQ1M_Q8T1_read", "read", "read_mbps", 3000.0, 1900.0, 0.63, "slower", 3000.0, 1900.0)
    e = explain_figure(a, b, figure, path_changes(a, b))
    assert e is not None and e.verdict == "possible"
    assert "What else changed may explain it: correctable errors on PCIe 0000:01:00.0: 9 → 1,249 (+1,240)" in e.text


def test_the_exporter_serves_each_functions_counters(tmp_path) -> None:  # noqa: ANN001
    res = subprocess.run(
        [sys.executable, "-m", "disksleuth", "exporter", "--textfile", str(tmp_path), "--sysfs-root", AFTER,
         "--no-bench", "--no-health"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    text = _read(os.path.join(tmp_path, "disksleuth.prom"))
    name = "disksleuth_pcie_aer_errors_total"
    assert metric_value(text, name, device="nvme0n1", bdf="0000:01:00.0", kind="correctable") == 1249
    assert metric_value(text, name, device="nvme0n1", bdf="0000:01:00.0", kind="fatal") == 0
    assert metric_value(text, name, device="nvme0n1", bdf="0000:00:01.0", kind="correctable") == 12
    below = "disksleuth_pcie_aer_rootport_errors_total"
    assert metric_value(text, below, device="nvme0n1", bdf="0000:00:01.0", kind="correctable") == 1261
    assert metric_value(text, below, bdf="0000:01:00.0") is None  # an endpoint has no root port totals
    assert "# TYPE disksleuth_pcie_aer_errors_total counter" in text


@needs_fio
@pytest.mark.slow
@pytest.mark.long
def test_check_reads_the_path_again_after_its_test_and_keeps_the_newer_reading(tmp_path) -> None:  # noqa: ANN001
    """measure(), as `check` and `bench` run it, with real fio on a scratch file: the drive is the tree's (the
    counters as read before the test), and the counters are read again from the tree after it (aer_oculink_after)."""
    from dataclasses import replace

    from test_json_schema import assert_valid

    from disksleuth.doc.run import run_document
    from disksleuth.run import check
    from disksleuth.run.plan import BenchOptions

    inspected = replace(check.inspect(str(tmp_path)), device=read_device("nvme0n1", BEFORE), sysfs_root=AFTER)
    opts = BenchOptions(profile="quick", size_bytes=16 << 20, fixed_time_s=1, adaptive=False, engine="psync")
    result = check.measure(inspected, opts)
    assert result.run.tests
    found = [f for f in result.findings if f.code == "link_errors"]
    assert [f.message for f in found] == [OCULINK_MESSAGE]
    assert "ok" not in {f.code for f in result.findings}
    doc = {
        "schema": "disksleuth/1",
        **run_document(result.run, result.device, result.chain, result.findings, result.summary),
    }
    doc = json.loads(json.dumps(doc))  # as --json prints it and the store keeps it
    assert_valid(doc, "run_document")
    hop = doc["device"]["link"]["hops"][0]
    assert hop["aer"]["correctable"] == 1249 and hop["port_aer"]["rootport_correctable"] == 1261


def test_compare_and_show_baseline_name_the_growth_between_two_stored_runs(cli, tmp_path) -> None:  # noqa: ANN001
    """Two runs of the sample benchmark on the tree's drive, the second read after the errors grew: imported into
    a real SQLite store, `compare` and `show --baseline` read them back and say what grew on the path."""
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.doc.inventory import device_to_dict

    with open(os.path.join(os.path.dirname(DATA), "..", "benchmarks", "sample_run.json")) as fh:
        sample = json.load(fh)
    runs = []
    for n, tree in enumerate((BEFORE, AFTER)):
        doc = json.loads(json.dumps(sample))
        doc["run"].pop("id", None)
        doc["run"]["uuid"] = f"00000000-0000-4000-8000-00000000000{n}"
        doc["run"]["started_at"] = f"2026-08-0{n + 1}T10:00:00+0000"
        device = read_device("nvme0n1", tree)
        doc["device"] = json.loads(json.dumps(device_to_dict(device, link_chain(device.hops))))
        doc["run"]["device"] = "nvme0n1"
        for t in doc["tests"]:  # an interval, so show --baseline judges the figures (and then tells the path)
            t["ci95_pct"] = 1.0
        runs.append(doc)
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": runs}))
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    res = cli("import", str(export), "--db", db)
    assert res.code == 0, res.err
    res = cli("compare", "1", "2", "--db", db)
    assert res.code in (0, 1), res.err
    assert "correctable errors on PCIe 0000:01:00.0: 9 → 1,249 (+1,240)" in res.out, res.out
    doc = cli("compare", "1", "2", "--db", db, "--json").json()
    grew = [c for c in doc["comparison"]["path_changes"] if c["area"] == "link_errors"]
    assert [(c["what"], c["hop"], c["before"], c["after"]) for c in grew][0] == (
        "correctable errors", "PCIe 0000:01:00.0", "9", "1,249",
    )  # fmt: skip
    res = cli("show", "2", "--baseline", "1", "--db", db)
    assert "correctable errors on PCIe 0000:01:00.0: 9 → 1,249 (+1,240)" in res.out, res.out
