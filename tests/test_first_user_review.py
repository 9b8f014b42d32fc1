"""Issue 40's first-user defects, reviewed as a new user meets them (REVIEW3): each test failed before its fix."""

from __future__ import annotations

from conftest import HERE

SMARTCTL_FILE = f"{HERE}/data/smartctl-selftest/linuxhw-ata-HD103SJ-91BBA7CDEF01.txt"


def test_health_does_not_say_the_store_is_empty_when_it_keeps_a_files_reading(cli, tmp_path):
    """Before: after `health --from-smartctl FILE` kept a reading (apart from this host's drives, defect 8), `health`
    said "no health readings in the store": false, and the user's reading seemed lost. Now it says that the store has
    none of this host's drives, and where a file's reading went."""
    db = str(tmp_path / "h.db")
    assert cli("health", "--from-smartctl", SMARTCTL_FILE, "--db", db).code in (0, 1)
    res = cli("health", "--db", db)
    assert "no health readings in the store" not in res.out, res.out
    if "No drive with SMART data here" in res.out:  # a machine with SMART drives lists them instead
        assert "--as-device" in res.out and "apart" in res.out, res.out


def test_hdparm_tT_is_not_called_several_figures_of_one_kind(tmp_path):
    """Before: `hdparm -tT` (the usual way it is run, as on linuxavid.blogspot.com's 2015 tuning post) gave "several
    figures of one kind: the best of each is judged", yet its -T (memory) and -t (the drive) are of two kinds and only
    -t is judged. Two -t runs of one drive are several of one kind, and still say so."""
    from disksleuth.run.paste import explain_paste

    one = tmp_path / "tT.txt"
    one.write_text(
        "# hdparm -tT /dev/sda\n\n/dev/sda:\n Timing cached reads:   33020 MB in  1.99 seconds = 16597.47 MB/sec\n"
        " Timing buffered disk reads: 1548 MB in  3.00 seconds = 515.57 MB/sec\n"
    )
    two = tmp_path / "tt.txt"
    two.write_text(
        "# hdparm -t /dev/sda\n\n/dev/sda:\n Timing buffered disk reads: 1548 MB in  3.00 seconds = 515.57 MB/sec\n"
        "# hdparm -t /dev/sda\n\n/dev/sda:\n Timing buffered disk reads: 1500 MB in  3.00 seconds = 499.95 MB/sec\n"
    )
    several = "several figures of one kind: the best of each is judged"
    assert several not in explain_paste([str(one)]).devices[0].notes
    assert several in explain_paste([str(two)]).devices[0].notes


def test_a_downgraded_link_of_unknown_width_is_not_said_as_unknown_mb_s():
    """Before: a pasted LnkSta cut after its speed ("LnkSta: Speed 5GT/s (downgraded)," and nothing more: a paste cut
    off, or a hostile one) read "runs at PCIe 2.0 (width unknown) (~unknown), but both ends support ...". A figure
    that is not known is left out, not printed as one."""
    from disksleuth.analysis.links import static_findings
    from disksleuth.model import Device, PcieHop

    hop = PcieHop("0000:01:00.0", None, None, None, 5.0, None, 8.0, 4, None, None)
    device = Device(name="nvme0n1", path="/dev/nvme0n1", transport="nvme", model=None, firmware=None, size_bytes=None,
                    hops=(hop,))  # fmt: skip
    found = [f for f in static_findings(device) if f.code == "link_downgraded"]
    assert found and "~unknown" not in found[0].message and "PCIe 2.0 (width unknown)" in found[0].message


def test_a_paste_of_half_a_million_pci_headers_is_read_in_bounded_work():
    """Before: a 47 MB paste of 500,000 wrapped `lspci` headers (every line a join candidate) took 23.6 s and 879 MB
    (`/usr/bin/time -v`): every function was parsed and linked, though only 256 devices are shown. Now the parser
    reads at most MAX_FUNCTIONS (more than any machine has) and the paste says the rest was not read. Counted in
    parsed functions, not seconds, so the test is fast and steady."""
    from disksleuth.probe import lspci_text

    one = "01:00.0 SATA controller [0106]: ASMedia Technology Inc. ASM1062 Serial ATA Controller [1b21:0612]\n"
    cap = lspci_text.MAX_FUNCTIONS
    found = lspci_text.parse_lspci_vv(one * (cap + 500))
    assert len(found) == cap
    assert 1024 <= cap <= 16384  # a big server has a few thousand functions


def test_a_smartctl_command_line_pasted_without_a_prompt_names_the_drive(tmp_path):
    """Before: a forum post that opens with its command line bare ("smartctl -a /dev/sdb", no `$ `, as serverparts.pl's
    smartmontools guide shows it) had that line skipped, and the drive was named "drive at FILE:2", not sdb. A bare
    line that is a smartctl or nvme-cli command on a /dev/ path is the command of the section below it; prose that
    names the tool is not."""
    from disksleuth.run.paste import explain_paste

    report = (
        "smartctl 5.41 2011-06-09 r3365 [x86_64-linux-3.2.0-48-generic] (local build)\n"
        "START OF INFORMATION SECTION\nDevice Model: WDC WD5003ABYX-01WERA1\n\n"
        "Vendor Specific SMART Attributes with Thresholds:\n"
        "ID# ATTRIBUTE_NAME FLAG VALUE WORST THRESH TYPE UPDATED WHEN_FAILED RAW_VALUE\n"
        "5 Reallocated_Sector_Ct 0x0033 199 199 140 Pre-fail Always - 40\n"
    )
    bare = tmp_path / "bare.txt"
    bare.write_text("smartctl -a /dev/sdb\n" + report)
    assert [d.device.name for d in explain_paste([str(bare)]).devices] == ["sdb"]
    prose = tmp_path / "prose.txt"
    prose.write_text("I ran smartctl -a /dev/sdb and got:\n" + report)
    assert [d.device.name for d in explain_paste([str(prose)]).devices] != ["sdb"]


def test_bare_command_lines_are_read_in_one_pass():
    """The bare smartctl/nvme command pattern is linear: a 4,095-character line of options with no device fails fast."""
    import time

    from disksleuth.probe.paste_text import _prompt

    assert _prompt("smartctl -d sat -x /dev/sdb") is not None
    assert _prompt("nvme smart-log /dev/nvme0") is not None
    line = "smartctl " + "-a " * 1362
    started = time.perf_counter()
    for _ in range(200):
        assert _prompt(line) is None
    assert time.perf_counter() - started < 1.0


def test_a_grep_of_lspci_link_lines_says_what_is_missing(tmp_path):
    """Before: `lspci -vvvs c9:00.0 | grep -i speed` pasted alone (as cloudnetops.tech's guide to PCIe downgrades shows
    it: LnkCap, LnkSta "(downgraded)", LnkCtl2, no device line) got the generic "no storage controller in lspci -vv,
    no smartctl report ...". Now the one line says the link lines have no device header and asks for the record."""
    import pytest

    from disksleuth.errors import ParseError
    from disksleuth.run.paste import explain_paste

    paste = tmp_path / "grep.txt"
    paste.write_text(
        "$ lspci -vvvs c9:00.0 | grep -i speed\n"
        "LnkCap: Port #0, Speed 16GT/s, Width x4, ASPM L0s L1, Exit Latency L0 <512ns, L1 <16us\n"
        "LnkSta: Speed 8GT/s (downgraded), Width x2 (downgraded)\n"
    )
    with pytest.raises(ParseError) as err:
        explain_paste([str(paste)])
    said = str(err.value)
    assert "\n" not in said and "line 3" in said and "device line" in said and "lspci -vv -s" in said, said


def test_a_figure_no_machine_gives_is_not_judged(tmp_path):
    """Before: a fio JSON whose job says 1e308 IOPS and bytes per second (hand-made, or a corrupt file) printed a
    300-digit MB/s figure over three lines and a clean "ok". A figure above anything a storage path or memory gives
    (1 TB/s, a billion IOPS) is listed as not used, with why, and judges nothing."""
    import json

    from disksleuth.run.paste import explain_paste

    doc = {
        "fio version": "fio-3.1",
        "jobs": [{"jobname": "x", "job options": {"filename": "/dev/sdz", "rw": "write", "bs": "1M"},
                  "write": {"iops": 1e308, "bw_bytes": 1e308, "io_bytes": 1, "runtime": 1}}],
        "disk_util": [{"name": "sdz"}],
    }  # fmt: skip
    paste = tmp_path / "huge.json"
    paste.write_text(json.dumps(doc))
    found = explain_paste([str(paste)])
    assert all(not d.figures.any() for d in found.devices)
    assert found.figures_unused and "any storage" in found.figures_unused[0]["not_used"]


def test_a_member_far_below_its_peers_is_not_said_to_read_0_percent():
    """Before: a member at 10.6 MB/s beside a 3,684 MB/s peer (loop devices on /dev/shm, one behind a 20 MB/s blkio
    throttle, `bench --members --level raid1 --time 1`) was said to read "0% of its peers' 3,684 MB/s"."""
    from disksleuth.analysis.members import member_slow
    from disksleuth.model.arrays import MemberReading

    readings = [
        MemberReading("loop2", "/dev/loop2", alone_mbps=3684.0, alone_ci95_pct=20.7),
        MemberReading("loop3", "/dev/loop3", alone_mbps=10.6, alone_ci95_pct=10.0),
    ]
    (found,) = member_slow(readings)
    assert " 0% of its peers'" not in found.message and "under 1% of its peers'" in found.message, found.message


def test_a_big_slot_tables_count_is_written_as_its_other_counts(tmp_path, capsys):
    """Before: a dmidecode of 10,000 slots ended "... and 9,936 more" and then "Summary: 10000 slot(s)"."""
    from disksleuth.present.paste_view import render_paste
    from disksleuth.run.paste import explain_paste

    slot = (
        "Handle 0x{i:04X}, DMI type 9, 17 bytes\nSystem Slot Information\n\tDesignation: PCIE{i}\n"
        "\tType: x16 PCI Express 3\n\tCurrent Usage: Available\n\tLength: Long\n\tID: {i}\n"
        "\tBus Address: 0000:{b:02x}:00.0\n\n"
    )
    paste = tmp_path / "slots.txt"
    paste.write_text(
        "# dmidecode 3.3\nSMBIOS 3.2.0 present.\n\n" + "".join(slot.format(i=i, b=i % 256) for i in range(1200))
    )
    render_paste(explain_paste([str(paste)]))
    out = capsys.readouterr().out
    assert "Summary: 1,200 slot(s)" in out, out[-300:]
