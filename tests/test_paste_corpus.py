"""The corpus of real pastes (tests/data/paste, issue 21) against its labels (tests/data/paste/EXPECTED*.json).

Each file goes the way a paste goes: normalised and split (probe.paste_text.read_paste), each smartctl section
read (probe.smartctl_text.parse_smartctl_text) and judged (analysis.health.health_findings), each lspci
section read (probe.lspci_text.parse_lspci_vv) and each storage function's link judged
(analysis.pci.pasted_link_status). The labels were made from the texts themselves, line by line, not by this
code (README.md there says how); precision and recall of the warning signs are printed and must be 100% here.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from disksleuth.analysis.health import health_findings
from disksleuth.analysis.pci import pasted_link_status
from disksleuth.model.run import Health
from disksleuth.probe.lspci_text import parse_lspci_vv
from disksleuth.probe.paste_text import read_paste
from disksleuth.probe.smartctl_text import parse_smartctl_text

CORPUS = os.path.join(os.path.dirname(__file__), "data", "paste")


def _labels() -> dict[str, dict]:
    """EXPECTED.json and any EXPECTED-*.json beside it (batches read in by different people), one file once."""
    out: dict[str, dict] = {}
    for name in sorted(os.listdir(CORPUS)):
        if name == "EXPECTED.json" or (name.startswith("EXPECTED-") and name.endswith(".json")):
            with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
                batch = json.load(f)
            twice = set(batch) & set(out)
            assert not twice, f"{name} labels again: {sorted(twice)}"
            out.update(batch)
    return out


EXPECTED: dict[str, dict] = _labels()
SMARTCTL = sorted(k for k in EXPECTED if k.startswith("smartctl/"))
LSPCI = sorted(k for k in EXPECTED if k.startswith("lspci/"))


def _text(rel: str) -> str:
    with open(os.path.join(CORPUS, rel), encoding="utf-8") as f:
        return f.read()


def _media_sign(name: str) -> str:
    """A media_errors count (probe.smart_parse names them) -> the sign it is."""
    if name.startswith("NVMe media"):
        return "nvme_media_errors"
    if name == "SCSI grown defects":
        return "scsi_grown_defects"
    if name.startswith("SCSI uncorrected"):
        return "scsi_uncorrected"
    if name.startswith("SCSI pending"):
        return "scsi_pending"
    if re.search(r"Realloc|Retired_Block", name):
        return "reallocated"
    if "Pending" in name:
        return "pending"
    if name.startswith("Offline_Uncorrectable"):
        return "offline_uncorrectable"
    return "ata_media_other"  # 187 Reported_Uncorrect, Program/Erase_Fail, Runtime_Bad_Block...


def named_signs(health: Health) -> set[str]:
    """The warning signs the findings name, in the labels' vocabulary."""
    out: set[str] = set()
    for f in health_findings(health):
        e = f.evidence
        if f.code == "health_critical":
            if e["critical_warning"]:
                out.add("critical_warning")
            if e["smart_passed"] is False:
                out.add("failed")
            spare, threshold = e["available_spare_pct"], e["available_spare_threshold_pct"]
            if spare is not None and threshold is not None and spare < threshold:
                out.add("spare_low")
            if e["failing_attributes"]:
                out.add("failing_attribute")
        elif f.code == "media_errors":
            out.update(_media_sign(name) for name in e["counts"])
        elif f.code == "interface_crc_errors":
            out.add("interface_errors")
        elif f.code == "health_worn":
            out.add("worn")
        elif f.code == "sata_link_downgraded":
            out.add("sata_link_downgraded")
    return out


def _signs_of(rel: str) -> set[str]:
    got: set[str] = set()
    sections = [s for s in read_paste(_text(rel)).sections if s.kind == "smartctl"]
    assert sections, f"{rel}: no smartctl section recognised"
    for s in sections:
        got |= named_signs(parse_smartctl_text(s.text, first_line=s.first_line).health)
    return got


def test_corpus_and_labels_match() -> None:
    on_disk = {
        os.path.relpath(os.path.join(d, n), CORPUS)
        for kind in ("smartctl", "lspci")
        for d, _, names in os.walk(os.path.join(CORPUS, kind))
        for n in names
        if n.endswith(".txt")
    }
    assert on_disk == set(EXPECTED), "every corpus file has labels and every label a file"


def test_warning_signs_precision_and_recall() -> None:
    """Every (file, sign) pair labelled is named, and no other: precision and recall over the corpus."""
    true_pos = false_pos = false_neg = 0
    wrong: list[str] = []
    for rel in SMARTCTL:
        want = set(EXPECTED[rel]["signs"])
        got = _signs_of(rel)
        true_pos += len(want & got)
        false_pos += len(got - want)
        false_neg += len(want - got)
        if got != want:
            wrong.append(f"{rel}: missed {sorted(want - got)}, extra {sorted(got - want)}")
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    print(
        f"\n{len(SMARTCTL)} smartctl texts, {true_pos + false_neg} labelled signs: "
        f"precision {precision:.1%}, recall {recall:.1%}"
    )
    assert not wrong, "\n".join(wrong)
    assert true_pos >= 50  # the corpus holds failing drives, not only healthy ones


@pytest.mark.parametrize("rel", SMARTCTL)
def test_each_smartctl_text_reads(rel: str) -> None:
    """No exception, a protocol, and the protocol the label names."""
    for s in read_paste(_text(rel)).sections:
        if s.kind == "smartctl":
            health = parse_smartctl_text(s.text, first_line=s.first_line).health
            assert health.protocol == EXPECTED[rel]["protocol"], rel


def _storage_links(rel: str) -> dict[str, str | None]:
    """Each storage function's link verdict, per section (a function pasted twice is judged in each paste)."""
    out: dict[str, str | None] = {}
    for s in read_paste(_text(rel)).sections:
        if s.kind != "lspci":
            continue
        for p in parse_lspci_vv(s.text, s.first_line):
            if p.fn.class_code is None or p.fn.class_code >> 16 != 0x01:
                continue
            status = pasted_link_status(p.fn, p.chain_known)
            verdict = "downgraded" if status.downgraded else "port_limited" if status.port_limited else None
            out[p.fn.bdf] = out.get(p.fn.bdf) or verdict
    return out


def test_every_labelled_storage_link_is_found() -> None:
    """Each storage controller is read; each labelled downgraded link is found, and no other is called so."""
    links = dumps = 0
    for rel in LSPCI:
        want = EXPECTED[rel]
        got = _storage_links(rel)
        assert set(want["storage"]) <= set(got), f"{rel}: storage functions not read"
        dumps += bool(want["storage"])
        labelled = {link["bdf"]: link["kind"] for link in want["links"]}
        for bdf, kind in labelled.items():
            links += 1
            assert got.get(bdf) == kind, f"{rel} {bdf}: labelled {kind}, found {got.get(bdf)}"
        extra = {b: k for b, k in got.items() if k and b not in labelled}
        assert not extra, f"{rel}: called downgraded or limited but not labelled: {extra}"
    print(f"\n{len(LSPCI)} lspci texts, {dumps} with storage controllers, {links} labelled storage links found")
    assert links >= 1


def test_newer_pciutils_express_line_keeps_the_role() -> None:
    """pciutils tests/cap-phy32: "Express (v2) Endpoint, IntMsgNum 0" (newer pciutils; older print ", MSI 00").
    Read only up to ", MSI", the role was lost, the NVMe drive was taken for an integrated endpoint and its
    16 GT/s link (32 GT/s capable) was never called downgraded."""
    (section,) = [s for s in read_paste(_text("lspci/pciutils-cap-phy32.txt")).sections if s.kind == "lspci"]
    (nvme,) = [p for p in parse_lspci_vv(section.text, section.first_line) if p.fn.bdf == "0000:2e:00.0"]
    assert nvme.fn.role == "endpoint" and nvme.chain_known is False
    assert pasted_link_status(nvme.fn, nvme.chain_known).downgraded


def _health(rel: str) -> Health:
    (s,) = [s for s in read_paste(_text(rel)).sections if s.kind == "smartctl"]
    return parse_smartctl_text(s.text, first_line=s.first_line).health


def test_german_locale_group_separators_are_read() -> None:
    """py-SMART nvme_6, a Toshiba KBG30 read under a German locale: "Power On Hours: 8.737", "Error Information
    Log Entries: 2.597", "Namespace 1 Size/Capacity: 256.060.514.304". Read up to the dot, they were 8 hours,
    2 entries and 256 bytes."""
    health = _health("smartctl/pysmart-nvme_6-_-d_nvme_--all__dev_nvme0.txt")
    assert health.power_on_hours == 8737 and health.error_log_entries == 2597
    assert health.capacity_bytes == 256_060_514_304


def test_space_group_separators_are_read() -> None:
    """py-SMART sas_ssd_0_issue_57 (Russian locale): "User Capacity: 7 681 501 126 656 bytes" (U+202F in the
    capture, a space in the index's copy) was 7 bytes."""
    assert _health("smartctl/pysmart-sas_ssd_0_issue_57-_-x__dev_sdb.txt").capacity_bytes == 7_681_501_126_656


def test_pre_release_smartctl_header_starts_the_report() -> None:
    """py-SMART nvme_6: "smartctl pre-7.4 2023-03-21 r5470 ... (CircleCI)". The header was not recognised: the
    section began at the banner three lines later and the version was lost."""
    text = _text("smartctl/pysmart-nvme_6-_-d_nvme_--all__dev_nvme0.txt")
    (s,) = [s for s in read_paste(text).sections if s.kind == "smartctl"]
    assert s.first_line == 1
    assert parse_smartctl_text(s.text, first_line=s.first_line).source_lines["smartctl_version"] == 1


def test_attribute_row_with_extra_flag_bits_is_read() -> None:
    """linuxhw 2E256-TU2-510B00: "170 Unknown_Attribute POSR-K+ 000 000 000 - 34688"; the "+" (flag bits without
    a letter) dropped the row."""
    ids = {a.id for a in _health("smartctl/linuxhw-ata-2E256-TU2-510B00-E1D31C1CA503.txt").attributes}
    assert 170 in ids


def test_unset_normalised_wear_value_is_not_wear() -> None:
    """linuxhw 2E256-TU2-510B00 keeps no normalised values (every vendor attribute 000/000/000): its 177
    Wear_Leveling_Count and 233 Media_Wearout_Indicator at 000 were taken for 100% of the endurance used."""
    health = _health("smartctl/linuxhw-ata-2E256-TU2-510B00-E1D31C1CA503.txt")
    assert health.percentage_used is None
    assert "worn" not in named_signs(health)


def test_intel_attribute_175_is_not_a_program_fail_count() -> None:
    """linuxhw INTEL SSDSC2BB012T7 with smartctl 6.6 (drivedb without the model): "175 Program_Fail_Count_Chip
    ... 447025527098" is Intel's Power_Loss_Cap_Test, packed; it was named a media error."""
    health = _health("smartctl/linuxhw-ata-SSDSC2BB012T7-F8E72F6CD299.txt")
    assert "media_errors" not in {f.code for f in health_findings(health)}
