"""Issue 39: an SD card's and an eMMC's registers decoded, their claims held against figures, eMMC wear.

Register values are real cards' (tests/data/mmc/SOURCES.md names each source and its licence); the expected
decodings are the sources' own (usbsdmux's reference decodings, the P2-uSD-FS card pages) or worked out by
hand from the SD Physical Layer Simplified Specification 9.10's bit positions.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import SYSFS
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from disksleuth.analysis.card_claims import card_claim_unmet, emmc_worn, host_limits_card
from disksleuth.analysis.card_registers import class_labels, decode_card, sd_spec_version
from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.verdicts import Figures, verdicts
from disksleuth.doc.schema import load_schema
from disksleuth.model.card import CardRegisters
from disksleuth.probe.block import read_device

# usbsdmux tests/reference/*.json (CC0-1.0): raw CID, CSD, SCR of four real cards, and what they decode to.
USBSDMUX = [
    # cid, csd, scr, manufacturer id, oem, product, date, capacity (spec: (C_SIZE+1) x 512 KiB), spec version
    ("02544d53413034471027b7748500bc00", "400e00325b5900001d177f800a400000", "0235800001000000",
     0x02, "TM", "SA04G", "2011-12", (0x1D17 + 1) * 512 * 1024, "3.0X"),
    ("1b534d474638533530d8466363a16700", "400e0032db79000eebff7f800a400000", "0205848700000000",
     0x1B, "SM", "GF8S5", "2022-07", (0xEEBFF + 1) * 512 * 1024, "6.XX"),
    ("744a605553442020104182bbc7010600", "007f00325b5a83bd6db7ff800a800000", "0225800000000000",
     0x74, "J`", "USD", "2016-06", (3829 + 1) * 2 ** (7 + 2) * 2**10, "3.0X"),
    ("9f5449303030303000a1114bb5011400", "400e00325b5900003b877f800a400000", "02b5800200000000",
     0x9F, "TI", "00000", "2017-04", (0x3B87 + 1) * 512 * 1024, "3.0X"),
]  # fmt: skip
# P2-uSD-FS DOCs/cards/*.md (MIT): raw registers with their decoding on the same page.
P2_SANDISK_SN64G = ("03534453 4e363447 867e6507 71016b8d", "400e0032 db790001 dbd37f80 0a4040f9", "0245848700000000")
# A real SanDisk Ultra 16 GB (SC16G) as `udevadm info -a` printed its attributes (SOURCES.md).
SC16G_SSR = (
    "0000000004000000040090000f051a00000000000001000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000"
)


@pytest.mark.parametrize("case", USBSDMUX, ids=[c[5] for c in USBSDMUX])
def test_usbsdmux_reference_cards_decode_as_their_references(case: tuple) -> None:
    cid, csd, scr, mid, oem, product, date, capacity, spec = case
    card = decode_card(CardRegisters(card_type="SD", cid=cid, csd=csd, scr=scr))
    assert (card.manufacturer_id, card.oem_id, card.product, card.date) == (mid, oem, product, date)
    assert card.capacity_bytes == capacity
    assert card.spec_version == spec
    assert card.bus_widths == (1, 4)
    assert card.notes == ()


def test_p2_sandisk_extreme_page_decodes_as_the_page_says() -> None:
    """DOCs/cards/sandisk-sn64g-64gb.md: SanDisk SN64G rev 8.6, 2022-11, C_SIZE 0x1DBD3 (124,735,488 sectors),
    SD_SPEC 2 + SD_SPEC3 + SD_SPEC4 + SD_SPECX 2 = 6.XX, SDXC. The words between the hex groups are allowed."""
    cid, csd, scr = P2_SANDISK_SN64G
    card = decode_card(CardRegisters(card_type="SD", cid=cid, csd=csd, scr=scr))
    assert (card.manufacturer, card.oem_id, card.product, card.revision, card.date) == (
        "SanDisk", "SD", "SN64G", "8.6", "2022-11"
    )  # fmt: skip
    assert card.capacity_bytes == 124_735_488 * 512
    assert (card.capacity_class, card.spec_version) == ("SDXC", "6.XX")


def test_real_sd_status_decodes_to_the_classes_the_card_carries() -> None:
    """SanDisk Ultra A1 (SC16G, 2017): SPEED_CLASS 04h = C10, AU_SIZE 9h = 4 MiB (the kernel's
    preferred_erase_size 4194304 agrees), UHS_SPEED_GRADE 1 = U1, UHS_AU_SIZE Ah = 8 MiB, no video class,
    APP_PERF_CLASS 1 = A1, no command queue, no cache."""
    card = decode_card(CardRegisters(card_type="SD", ssr=SC16G_SSR))
    assert class_labels(card) == ["C10", "U1", "A1"]
    assert (card.speed_class, card.uhs_grade, card.video_class, card.app_class) == (10, 1, 0, 1)
    assert (card.au_size_bytes, card.uhs_au_size_bytes) == (4 * 2**20, 8 * 2**20)
    assert (card.command_queue, card.cache) == (0, False)


def _ssr(**fields: int) -> str:
    """A 512-bit SD Status with the named fields set at the spec's bit positions (4.10.2, Table 4-44)."""
    spots = {"speed": (447, 440), "au": (431, 428), "uhs": (399, 396), "uhs_au": (395, 392),
             "video": (391, 384), "app": (339, 336), "perf": (335, 328)}  # fmt: skip
    value = 1 << 511  # DAT_BUS_WIDTH 10b: 4 bits
    for name, v in fields.items():
        high, low = spots[name]
        assert v < 1 << (high - low + 1)
        value |= v << low
    return f"{value:0128x}"


@pytest.mark.parametrize(
    ("fields", "labels", "queue", "cache"),
    [
        ({"speed": 4, "uhs": 3, "video": 0x1E, "app": 2, "perf": 0b11111_1_0_0}, ["C10", "U3", "V30", "A2"], 32, True),
        ({"speed": 1}, ["C2"], 0, False),
        ({"speed": 3, "video": 6}, ["C6", "V6"], 0, False),
        ({"speed": 4, "uhs": 1, "video": 10, "app": 1}, ["C10", "U1", "V10", "A1"], 0, False),
        ({"speed": 4, "uhs": 3, "video": 0x5A, "app": 2, "perf": 0b00001_0_1_1}, ["C10", "U3", "V90", "A2"], 2, False),
        ({"speed": 4, "uhs": 3, "video": 0x3C, "perf": 0b00000_1_0_0}, ["C10", "U3", "V60"], 0, True),
        # reserved values: a higher grade or class reads as the highest defined (4.10.2.2, .8, .13)
        ({"speed": 7, "uhs": 2, "app": 5}, ["C10", "U3", "A2"], 0, False),
    ],
)
def test_sd_status_fields_at_the_spec_bit_positions(fields: dict, labels: list, queue: int, cache: bool) -> None:
    card = decode_card(CardRegisters(card_type="SD", ssr=_ssr(**fields)))
    assert class_labels(card) == labels
    assert (card.command_queue, card.cache) == (queue, cache)


def test_scr_versions_follow_table_5_19() -> None:
    def scr(spec: int, spec3: int = 0, spec4: int = 0, specx: int = 0) -> int:
        return spec << 56 | spec3 << 47 | spec4 << 42 | specx << 38

    assert sd_spec_version(scr(0)) == "1.0"
    assert sd_spec_version(scr(1)) == "1.10"
    assert sd_spec_version(scr(2)) == "2.00"
    assert sd_spec_version(scr(2, 1)) == "3.0X"
    assert sd_spec_version(scr(2, 1, 1)) == "4.XX"
    assert sd_spec_version(scr(2, 1, 0, 1)) == "5.XX"
    assert sd_spec_version(scr(2, 1, 1, 5)) == "9.XX"
    assert sd_spec_version(scr(3)) is None


def test_all_zero_ssr_is_unknown_not_class_0() -> None:
    """The kernel prints zeros when ACMD13 failed (drivers/mmc/core/sd.c leaves raw_ssr zero)."""
    card = decode_card(CardRegisters(card_type="SD", ssr="0" * 128))
    assert card.speed_class is None and card.app_class is None
    assert any("all zeros" in n for n in card.notes)


# --- the reproduction, on trees laid out as the kernel's --------------------------------------------


def test_list_json_names_the_goodram_cards_classes(cli) -> None:
    """Issue 39: `list --json` on a Goodram IRDM V30 A2 whose ssr decodes to C10 U3 V30 A2 named none of them."""
    res = cli("list", "--sysfs-root", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"), "--json")
    assert res.code == 0, res.err
    doc = res.json()
    Draft202012Validator(load_schema()).validate(doc)
    card = doc["devices"][0]["card"]
    assert card["classes"] == ["C10", "U3", "V30", "A2"]
    assert (card["speed_class"], card["uhs_grade"], card["video_class"], card["app_class"]) == (10, 3, 30, 2)
    assert (card["au_size_bytes"], card["command_queue"], card["cache"]) == (4 * 2**20, 32, True)
    assert card["capacity_bytes"] == 124_735_488 * 512
    assert "serial" not in card and "0x0badcafe" not in str(card)


def test_emmc_life_time_0b_is_a_critical_finding(cli) -> None:
    """Issue 39: an eMMC reporting life_time `0x0b 0x02` got no finding."""
    res = cli("list", "--sysfs-root", os.path.join(SYSFS, "emmc_worn"), "--json")
    doc = res.json()
    found = {f["code"]: f for f in doc["devices"][0]["findings"]}
    assert found["emmc_worn"]["severity"] == "critical"
    assert found["emmc_worn"]["evidence"] == {"life_time_a": 0x0B, "life_time_b": 0x02, "pre_eol_info": 0x01}
    assert "type A (SLC areas)" in found["emmc_worn"]["message"] and "type B (MLC" in found["emmc_worn"]["message"]
    assert doc["devices"][0]["card"]["spec_version"] == "5.1"
    assert res.code == 0  # list reports; only check judges a run


@pytest.mark.parametrize(
    ("life", "eol", "severity"),
    [("0x01 0x01", "0x01", None), ("0x08 0x02", "0x01", None), ("0x09 0x02", "0x01", "warn"),
     ("0x02 0x0a", "0x01", "warn"), ("0x01 0x01", "0x02", "warn"), ("0x0a 0x0b", "0x01", "critical"),
     ("0x01 0x01", "0x03", "critical"), ("0x0c 0x01", "0x01", None)],
)  # fmt: skip
def test_emmc_wear_thresholds(life: str, eol: str, severity: str | None) -> None:
    dev = read_device("mmcblk1", os.path.join(SYSFS, "emmc_worn"))
    regs = dev.card_registers
    assert regs is not None
    from dataclasses import replace

    f = emmc_worn(replace(dev, card_registers=replace(regs, life_time=life, pre_eol_info=eol)))
    assert (f.severity if f else None) == severity


def test_host_limits_card_when_the_host_runs_high_speed_only() -> None:
    """A real C10 U1 A1 card on a BeagleBone's host, which offers SD high speed at most (caps 0x40000007)."""
    dev = read_device("mmcblk0", os.path.join(SYSFS, "sd_sandisk_sc16g_hs_host"))
    f = host_limits_card(dev)
    assert f is not None and f.severity == "info"
    assert f.evidence["timing"] == "sd high-speed" and f.evidence["card_max_timing"] == "sd uhs SDR50"
    assert f.evidence["host_max_timing"] == "sd high-speed"
    assert "host controller offers nothing faster" in f.message


def test_claims_held_against_measured_figures() -> None:
    dev = read_device("mmcblk0", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"))
    # 19 MB/s of writing is below U3/V30's 30; 1,800/700 IOPS meet A1, which is what a host without the
    # card's command queue can hold an A2 card to.
    f = card_claim_unmet(dev, 19.0, 1800.0, 700.0)
    assert f is not None and f.severity == "warn"
    assert f.evidence["claimed_write_mbps"] == 30.0 and f.evidence["app_class_judged"] == "A1"
    assert "rand_read_iops" not in f.evidence
    causes = f.evidence["likely_causes"]
    assert "counterfeit" in causes[0] and "reader" in causes[1] and causes[2].startswith("not the bus mode")
    assert "does not run the card's command queue" in f.message
    assert card_claim_unmet(dev, 31.0, 1800.0, 700.0) is None
    f2 = card_claim_unmet(dev, None, 12.0, 3.0)
    assert f2 is not None and f2.evidence["rand_write_iops"] == 3.0


def test_check_verdicts_name_the_claim_not_the_generic_class() -> None:
    """sd_app_class gives way to card_claim_unmet when the card states its class."""
    dev = read_device("mmcblk0", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"))
    found = verdicts(dev, link_chain(dev.hops), Figures(seq_write_mbps=20.0, rand_read_iops=900, rand_write_iops=19))
    codes = [f.code for f in found]
    assert "card_claim_unmet" in codes and "sd_app_class" not in codes


# --- malformed values: never a traceback, bounded -----------------------------------------------------------

_text = st.one_of(st.none(), st.text(max_size=300), st.text(alphabet="0123456789abcdefABCDEFx \n", max_size=1100))


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["SD", "MMC", "SDIO", None, "x"]),
    cid=_text, csd=_text, scr=_text, ssr=_text, life=_text, eol=_text, ext=_text, ios=_text, caps=_text,
    date=_text, manfid=_text, oemid=_text,
)  # fmt: skip
def test_any_register_text_decodes_or_notes(kind, cid, csd, scr, ssr, life, eol, ext, ios, caps, date, manfid, oemid):
    regs = CardRegisters(
        card_type=kind, cid=cid, csd=csd, scr=scr, ssr=ssr, life_time=life, pre_eol_info=eol, ext_csd=ext, ios=ios,
        host_caps=caps, host_caps2=caps, date=date, manfid=manfid, oemid=oemid, name=date, kernel_release=caps,
    )  # fmt: skip
    card = decode_card(regs)
    assert card.speed_class in (None, 0, 2, 4, 6, 10)
    assert card.uhs_grade in (None, 0, 1, 3) and card.app_class in (None, 0, 1, 2)
    assert card.video_class in (None, 0, 6, 10, 30, 60, 90)
    assert card.life_time_a is None or 0 <= card.life_time_a <= 0x0B
    assert all(len(n) < 300 for n in card.notes)
    assert card.timing is None or (len(card.timing) <= 64 and card.timing.isprintable())
    assert card.product is None or card.product.isprintable()


def test_huge_register_text_is_refused_quickly() -> None:
    card = decode_card(CardRegisters(card_type="SD", ssr="f" * 10_000_000, cid="0" * 10_000_000))
    assert card.speed_class is None and any("ssr" in n for n in card.notes)


def test_emmc_life_estimates_are_its_health_reading() -> None:
    """eMMC has no SMART: `health` keeps its life estimates as its wear, in the history like SMART's."""
    from disksleuth.analysis.card_claims import emmc_health

    h = emmc_health(read_device("mmcblk1", os.path.join(SYSFS, "emmc_worn")))
    assert h is not None and h.protocol == "eMMC"
    assert h.percentage_used == 100 and "type A 0x0b, type B 0x02" in (h.percentage_used_source or "")
    assert emmc_health(read_device("mmcblk0", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"))) is None
    # health judges it as emmc_worn does: past its life is critical there too
    from disksleuth.analysis.health import health_findings

    assert {f.code: f.severity for f in health_findings(h, {})}["health_critical"] == "critical"


def test_real_emmc_ext_csd_and_a_host_without_hs400() -> None:
    """A real eMMC 5.1's EXT_CSD as `mmc extcsd read` printed it on linux-mmc (SOURCES.md): rev 8 (5.1), CARD_TYPE
    0x57 (HS400 1.8 V at most), SEC_COUNT 0x0733c000 (57.6 GiB, as its dmesg line says), an 8 MiB cache. On a host
    that runs HS200 and offers nothing faster (caps2 HS200 only), the card's HS400 is the host's limit."""
    dev = read_device("mmcblk0", os.path.join(SYSFS, "emmc_hs400_on_hs200_host"))
    card = decode_card(dev.card_registers, dev.size_bytes)  # type: ignore[arg-type]
    assert (card.spec_version, card.capacity_bytes, card.cache) == ("5.1", 0x0733C000 * 512, True)
    assert (card.card_max_timing, card.timing, card.host_max_timing) == ("mmc HS400", "mmc HS200", "mmc HS200")
    assert (card.life_time_a, card.life_time_b) == (0, 0) and emmc_worn(dev) is None  # 0: not defined
    f = host_limits_card(dev)
    assert f is not None and f.evidence["card_max_mbps"] == 400.0 and f.evidence["current_mbps"] == 200.0


def test_ext_csd_offsets_match_the_debugfs_text() -> None:
    """Byte N of debugfs ext_csd is hex characters 2N..2N+1: life time A is at 536 (byte 268), B at 538."""
    raw = bytearray(512)
    raw[267], raw[268], raw[269], raw[192] = 0x02, 0x0A, 0x03, 7
    raw[308], raw[307] = 1, 31
    card = decode_card(CardRegisters(card_type="MMC", ext_csd=raw.hex()))
    assert (card.pre_eol, card.life_time_a, card.life_time_b, card.spec_version) == (2, 0x0A, 3, "5.0")
    assert card.command_queue == 32


def test_exporter_names_the_card_and_an_emmc_s_wear() -> None:
    from disksleuth.model.exporter import Snapshot
    from disksleuth.present.prometheus_card import card_families
    from disksleuth.run.exporter import disk_states

    dev = read_device("mmcblk1", os.path.join(SYSFS, "emmc_worn"))
    snap = Snapshot(disks=disk_states([dev], None), bench=[], bench_error=None, hostname="h")
    info, life, eol = card_families(snap)
    assert info.samples[0].labels["manufacturer"] == "Samsung" and info.samples[0].labels["kind"] == "mmc"
    assert {s.labels["type"]: s.value for s in life.samples} == {"A": 11, "B": 2}
    assert eol.samples[0].value == 1


def test_report_words_of_a_stored_card(cli) -> None:
    from disksleuth.doc.card import card_lines

    doc = cli("list", "--sysfs-root", os.path.join(SYSFS, "emmc_worn"), "--json").json()
    lines = card_lines(doc["devices"][0]["card"])
    assert lines[0] == "Samsung 8GTF4R eMMC 5.1, made 2019-06"
    assert "runs in mmc HS200" in lines[1] and "type A 0x0b, type B 0x02" in lines[2]
    assert card_lines({"classes": "x", "life_time_a": True, "kind": 5}) == ["SD"]
    assert card_lines(None) == []


@pytest.mark.parametrize(
    ("tree", "name", "codes"),
    [("sd_sandisk_sc16g_hs_host", "mmcblk0", ["host_limits_card"]),
     ("emmc_hs400_on_hs200_host", "mmcblk0", ["host_limits_card"]), ("emmc_worn", "mmcblk1", ["emmc_worn"])],
)  # fmt: skip
def test_capture_reads_back_with_the_same_card_and_no_serial(cli, tmp_path, tree: str, name: str, codes: list) -> None:
    """A capture bundle keeps what decodes a card (csd, ssr, scr, life_time, debugfs ios/caps/ext_csd), masks
    the serial, and leaves the CID out (it holds the serial): the kernel's name, manfid and date stand in."""
    bundle = str(tmp_path / "c.tar.gz")
    assert cli("capture", "-o", bundle, "--sysfs-root", os.path.join(SYSFS, tree)).code == 0
    live = cli("list", "--sysfs-root", os.path.join(SYSFS, tree), "--json").json()["devices"][0]
    back = cli("list", "--sysfs-root", bundle, "--json").json()["devices"][0]
    assert back["name"] == name and back["card"] == live["card"]
    assert [f["code"] for f in back["findings"]] == codes
    assert back["serial"] != live["serial"] and live["serial"] not in json.dumps(back)


def test_a_run_s_device_and_its_stored_form_carry_the_card_within_the_schema() -> None:
    from disksleuth.doc.inventory import device_to_dict
    from disksleuth.store.documents import without_serial

    dev = read_device("mmcblk0", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"))
    live = device_to_dict(dev, link_chain(dev.hops))
    defs = load_schema()["$defs"]
    Draft202012Validator({"$defs": defs, "$ref": "#/$defs/device_with_link"}).validate(live)
    stored = {**without_serial(live), "serial_id": None, "serial_sha256": None}
    Draft202012Validator({"$defs": defs, "$ref": "#/$defs/stored_device"}).validate(stored)
    broken = {**stored, "card": {**stored["card"], "speed_class": "C10"}}
    assert not Draft202012Validator({"$defs": defs, "$ref": "#/$defs/stored_device"}).is_valid(broken)
    assert stored["card"]["classes"] == ["C10", "U3", "V30", "A2"] and "serial" not in stored


@pytest.mark.parametrize(
    ("release", "cmdq_en", "queue_used", "cache_used"),
    [("6.1.0-21-arm64", None, False, True), ("5.10.0-28-arm64", None, False, False),
     ("6.6.51+rpt-rpi-2712", None, None, True), ("6.6.62-v8-16k+", "1", True, True), ("junk", None, False, None)],
)  # fmt: skip
def test_whether_this_kernel_runs_an_a2_cards_queue_and_cache(release, cmdq_en, queue_used, cache_used) -> None:
    card = decode_card(
        CardRegisters(card_type="SD", ssr=_ssr(speed=4, uhs=3, app=2, perf=0b11111_1_0_0), kernel_release=release,
                      cmdq_en=cmdq_en)
    )  # fmt: skip
    assert (card.command_queue_used, card.cache_used) == (queue_used, cache_used)


def test_a_register_link_out_of_the_root_is_refused_and_said(tmp_path) -> None:
    import shutil

    root = tmp_path / "t"
    shutil.copytree(os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"), root, symlinks=True)
    (card_dir,) = root.glob("sys/devices/platform/emmc2bus/fe340000.mmc/mmc_host/mmc0/mmc0:59b4")
    (card_dir / "csd").unlink()
    (card_dir / "csd").symlink_to("../" * 12 + "etc/passwd")
    dev = read_device("mmcblk0", str(root))
    assert dev.card_registers is not None and dev.card_registers.csd is None
    assert any("csd" in n and "not followed" in n for n in dev.notes)
    assert class_labels(decode_card(dev.card_registers)) == ["C10", "U3", "V30", "A2"]


def test_real_emmc_cid_decodes_by_jedec_positions() -> None:
    """A real eMMC's CID, 8801034e436172642021b21d4e60c297, as a device script compares it (SOURCES.md), which
    also reads the kernel's prv as 0x21: MID 0x88, OID 0x03 (111:104), PNM "NCard " (103:56), PRV 0x21 (55:48)."""
    card = decode_card(CardRegisters(card_type="MMC", cid="8801034e436172642021b21d4e60c297", prv="0x21"))
    assert (card.manufacturer_id, card.oem_id, card.product, card.revision) == (0x88, "0x03", "NCard", "2.1")
    assert card.manufacturer is None  # 0x88 is no id this table knows well


def test_a_class_is_held_only_in_the_bus_mode_it_is_defined_for() -> None:
    """U and V classes are promised in UHS modes, Class 10 from High Speed up (SD 4.13): a U1 card at High Speed
    is held to C10/A1's 10 MB/s, and the U1 is left to host_limits_card."""
    dev = read_device("mmcblk0", os.path.join(SYSFS, "sd_sandisk_sc16g_hs_host"))
    f = card_claim_unmet(dev, 8.0, None, None)
    assert f is not None and f.evidence["claimed_write_mbps"] == 10.0
    assert f.evidence["not_held"] == ["U1 (defined in UHS modes; the host runs SD high speed)"]
    from dataclasses import replace

    regs = dev.card_registers
    assert regs is not None
    u3 = replace(regs, ssr=_ssr(speed=4, uhs=3, video=30, app=1))
    at_hs = card_claim_unmet(replace(dev, card_registers=u3), 20.0, None, None)
    assert at_hs is None  # 20 MB/s meets C10 and A1; U3/V30 are not promised at High Speed
    at_uhs = card_claim_unmet(replace(dev, card_registers=replace(u3, ios=None)), 20.0, None, None)
    assert at_uhs is not None and at_uhs.evidence["claimed_write_mbps"] == 30.0  # mode unknown: all held
