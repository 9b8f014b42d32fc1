"""`explain FILE` on pasted SD-card and eMMC register text (issue 39): mmc-utils `mmc extcsd read` and a card's sysfs
files as people post them, decoded and judged as a live card (the card's claims, emmc_worn, host_limits_card).

The pastes are real (tests/data/pastes/mmc/SOURCES.md: linux-mmc list posts). Where a test needs another shape of
the same values (`cat` of named files, `head`'s headers), it re-lays the real values of one of them, as a shell
prints them. probe.mmc_text is imported inside the tests that use it, so on the code before it the explain tests
fail for the reason the issue gives ("no device in the paste"), not at import."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re

import pytest
from conftest import DATA
from hostile_pastes import cpu_seconds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_json_schema import assert_valid

from disksleuth.cli import main
from disksleuth.cli.env import Environment
from disksleuth.errors import ParseError
from disksleuth.probe.paste_text import MAX_LINE_CHARS, read_paste
from disksleuth.run.paste import explain_paste

MMC = os.path.join(DATA, "pastes", "mmc")
KINGSTON = os.path.join(MMC, "linux-mmc-2023-06-kingston-canvas-go-plus-grep.txt")
WORN = os.path.join(MMC, "linux-mmc-2025-04-worn-emmc-extcsd.txt")
BEAGLE = os.path.join(MMC, "linux-mmc-2025-02-beaglebone-black-emmc.txt")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The terminal view or --json (rich writes to the process's stdout, which capsys holds)."""
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(""), out, err, {**os.environ, "NO_COLOR": "1"}, False, False, False)
    capsys.readouterr()
    code = main(["explain", *argv], env=env)
    cap = capsys.readouterr()
    return code, out.getvalue() + cap.out, err.getvalue() + cap.err


def _kingston_values() -> dict[str, str]:
    """The Kingston card's attributes from its real grep -H paste: name -> value."""
    out = {}
    for line in _read(KINGSTON).splitlines():
        m = re.match(r"/sys/class/mmc_host/mmc0/mmc0:5048/(\w+):(.*)$", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out


# --- the real pastes, end to end -------------------------------------------------------------------------------


def test_grep_of_an_sd_cards_sysfs_files_shows_its_claims_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    """A Kingston Canvas Go! Plus 64 GB (linux-mmc, 2023-06): its SSR says C10 U3 V30 A2 with a 32-deep command
    queue and a cache. Before: "no device in the paste" (exit 2). The card's serial (the `serial` line and the CID's
    PSN) is in no output."""
    code, out, err = _cli(capsys, KINGSTON, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert_valid(doc, "explain")
    card = doc["device"]["card"]
    assert card["kind"] == "sd" and card["manufacturer"] == "Kingston" and card["product"] == "SD64G"
    assert card["classes"] == ["C10", "U3", "V30", "A2"] and card["date"] == "2023-04"
    assert card["capacity_class"] == "SDXC" and card["command_queue"] == 32 and card["cache"] is True
    assert doc["device"]["transport"] == "mmc" and doc["device"]["name"] == "mmc0:5048"
    assert "4b1004af" not in out.lower()
    assert [s["kind"] for s in doc["source"]["sections"]] == ["mmc_sysfs"]


def test_mmc_extcsd_read_of_a_worn_emmc_is_critical_and_names_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A switch's boot eMMC that stopped answering (linux-mmc, 2025-04): `mmcutils extcsd read` says life time
    estimate A 0x0b (past its life, SLC areas), B 0x02; its debugfs ios runs it in high speed while its CARD_TYPE
    0x57 takes HS400 and the host's caps offer nothing faster. Before: "no device in the paste" (exit 2)."""
    code, out, err = _cli(capsys, WORN)
    assert code == 1, err
    assert "critical · emmc_worn" in out and "0x0b: past its estimated life" in out
    assert "type B (MLC areas) 0x02" in out and f"{os.path.basename(WORN)}:317" in out
    assert "host_limits_card" in out and "eMMC HS400" in out
    x = explain_paste([WORN])
    (dev,) = x.devices
    assert dev.device.name == "mmcblk0" and dev.device.size_bytes == 0x00EB8000 * 512
    worn = next(f for f in dev.findings if f.code == "emmc_worn")
    assert worn.severity == "critical" and worn.evidence["life_time_a"] == 0x0B


def test_grepped_life_lines_and_a_scripts_report_make_one_card(capsys: pytest.CaptureFixture[str]) -> None:
    """A BeagleBone Black's Kingston eMMC (linux-mmc, 2025-02): `mmc extcsd read | grep` lines, the report of a
    script ("eMMC name: MK2704", "eMMC life_time: 0x01 0x01") and a bare `cat /sys/kernel/debug/mmc1/ios`. One
    card, nothing worn; its serial line is not kept."""
    x = explain_paste([BEAGLE])
    (dev,) = x.devices
    assert dev.device.transport == "mmc" and dev.device.model == "MK2704"
    assert [f.code for f in dev.findings] == ["ok"]
    regs = dev.device.card_registers
    assert regs is not None and regs.life_time == "0x01 0x01" and regs.pre_eol_info == "0x01"
    assert regs.manfid == "0x000070" and regs.ios is not None and "mmc high-speed" in regs.ios
    assert "5992401d" not in repr(regs)
    code, out, err = _cli(capsys, BEAGLE, "--json")
    assert code == 0, err
    card = json.loads(out)["device"]["card"]
    assert card["manufacturer"] == "Kingston" and card["life_time_a"] == 1 and card["timing"] == "mmc high-speed"


# --- the same values as other commands print them -------------------------------------------------------------


def test_cat_of_named_files_maps_each_value_by_the_commands_order() -> None:
    """`cat .../{cid,csd,scr,ssr,...}` prints bare values: the prompt's command names them, in order; a file the
    card lacks prints an error to the terminal, and the next value is the next name's."""
    v = _kingston_values()
    names = ["cid", "csd", "life_time", "scr", "ssr", "name", "manfid", "oemid", "date", "type"]
    lines = [f"pi@raspberrypi:~ $ cat /sys/block/mmcblk0/device/{{{','.join(names)}}}"]
    for n in names:
        lines.append("cat: /sys/block/mmcblk0/device/life_time: No such file or directory" if n == "life_time"
                     else v[n])  # fmt: skip
    x = explain_paste(["-"], stdin_text="\n".join(lines) + "\n")
    (dev,) = x.devices
    assert dev.device.name == "mmcblk0"
    regs = dev.device.card_registers
    assert regs is not None and regs.ssr == v["ssr"] and regs.scr == v["scr"] and regs.date == "04/2023"
    assert regs.card_type == "SD" and regs.life_time is None


def test_head_of_the_files_and_a_pasted_life_time_warn() -> None:
    """`head` prints "==> PATH <==" before each file; an eMMC at 80-90% of its MLC life (0x09) with the reserved
    blocks at the warning mark (pre-EOL 0x02) is a warn, at 0x0b or 0x03 critical (the issue's thresholds)."""
    for life, eol, severity in (("0x01 0x09", "0x01", "warn"), ("0x01 0x01", "0x02", "warn"),
                                ("0x0b 0x01", "0x01", "critical"), ("0x02 0x03", "0x03", "critical")):  # fmt: skip
        text = (f"==> /sys/block/mmcblk1/device/life_time <==\n{life}\n\n"
                f"==> /sys/block/mmcblk1/device/pre_eol_info <==\n{eol}\n\n"
                "==> /sys/block/mmcblk1/device/type <==\nMMC\n")  # fmt: skip
        (dev,) = explain_paste(["-"], stdin_text=text).devices
        worn = [f for f in dev.findings if f.code == "emmc_worn"]
        assert [f.severity for f in worn] == [severity], (life, eol)
        assert dev.sources[dev.findings.index(worn[0])].line == 2


def test_a_cat_of_other_files_stays_prose() -> None:
    """Only a cat/grep of a card's files is taken as one: `$ cat notes.txt` and its text stay skipped, and a SCSI
    disk's sysfs files make no card."""
    x_text = "$ cat notes.txt\ncid: is what the card calls its identity\n"
    with pytest.raises(ParseError, match="no SD or eMMC register"):
        explain_paste(["-"], stdin_text=x_text)
    # A SATA disk's sysfs directory has `type` and `rev` too: one line saying it is not a card's, no mmc device.
    sata = "$ grep . /sys/block/sda/device/*\n/sys/block/sda/device/rev:1B6Q\n/sys/block/sda/device/type:0\n"
    with pytest.raises(ParseError, match="not an SD card's or eMMC's files"):
        explain_paste(["-"], stdin_text=sata)


# --- the parser alone ------------------------------------------------------------------------------------------


def test_extcsd_text_rebuilt_agrees_with_the_raw_register_of_the_same_card() -> None:
    """The worn eMMC's paste holds both its debugfs ext_csd (1,024 hex digits, wrapped in two lines) and mmc-utils'
    reading of it: the register put together from mmc-utils' fields decodes as the raw one does (an independent
    check of the field table)."""
    from disksleuth.analysis.card_registers import decode_card
    from disksleuth.probe.mmc_text import parse_mmc_extcsd, parse_mmc_sysfs

    paste = read_paste(_read(WORN))
    by_kind = {(s.kind, s.command or ""): s for s in paste.sections}
    raw_section = next(s for (k, c), s in by_kind.items() if "ext_csd" in c)
    text_section = next(s for (k, _), s in by_kind.items() if k == "mmc_extcsd")
    raw = parse_mmc_sysfs(raw_section.text, raw_section.first_line, raw_section.command)
    rebuilt = parse_mmc_extcsd(text_section.text, text_section.first_line, text_section.command)
    assert raw.registers.ext_csd is not None and len("".join(raw.registers.ext_csd.split())) == 1024
    assert rebuilt.registers.ext_csd is not None and rebuilt.notes
    a, b = decode_card(raw.registers), decode_card(rebuilt.registers)
    for name in ("spec_version", "capacity_bytes", "cache", "command_queue", "card_max_timing", "life_time_a",
                 "life_time_b", "pre_eol"):  # fmt: skip
        assert getattr(a, name) == getattr(b, name), name
    assert (b.life_time_a, b.capacity_bytes, b.card_max_timing) == (0x0B, 7902068736, "mmc HS400")


def test_a_cut_extcsd_is_not_rebuilt_and_one_estimate_is_not_judged() -> None:
    """Cut before its life time lines, the text does not make an EXT_CSD (its zeros would read as "not defined");
    a lone estimate A leaves life_time unknown."""
    from disksleuth.probe.mmc_text import parse_mmc_extcsd

    text = _read(WORN)
    start = text.index("  Extended CSD rev")
    cut = text[start : text.index("Boot write protection")]
    card = parse_mmc_extcsd(cut)
    assert card.registers.ext_csd is None and card.registers.rev == "0x7" and card.size_bytes == 7902068736
    one = parse_mmc_extcsd("eMMC Life Time Estimation A [EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_A]: 0x0b\n")
    assert one.registers.life_time is None and any("one of the two" in n for n in one.notes)


_REAL_LINES = sorted({line for p in (KINGSTON, WORN, BEAGLE) for line in _read(p).splitlines() if line.strip()})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_REAL_LINES),
            st.sampled_from(_REAL_LINES).map(lambda s: s[: len(s) // 2]),
            st.text(alphabet="0123456789abcdefx:/[]_ =<>{},.*$#-\nSsycid", max_size=80),
        ),
        max_size=25,
    )
)
def test_any_text_gives_a_card_or_the_projects_parse_error(parts: list[str]) -> None:
    """Real lines, halves of them and junk in any order: each parser gives a PastedCard or ParseError, and the
    decoding of what it gives never raises; explain gives devices or its one-line ParseError."""
    from disksleuth.analysis.card_registers import decode_card
    from disksleuth.probe.mmc_text import merge_cards, parse_mmc_extcsd, parse_mmc_sysfs

    text = "\n".join(parts)
    cards = []
    for parse in (parse_mmc_extcsd, parse_mmc_sysfs):
        for command in (None, "cat /sys/block/mmcblk0/device/{cid,ext_csd,ios}", "grep -H . /sys/block/mmcblk0/*"):
            try:
                cards.append(parse(text, 1, command))
            except ParseError:
                continue
    for c in cards:
        decode_card(c.registers, c.size_bytes)
    if cards:
        decode_card(merge_cards(cards).registers)
    with contextlib.suppress(ParseError):
        explain_paste(["-"], stdin_text=text)


# --- bounded ---------------------------------------------------------------------------------------------------


def test_a_megabyte_of_register_text_is_read_in_linear_time() -> None:
    """1 MiB of the three real pastes over and over, and lines at the cut built to make the patterns backtrack
    ("[" runs, path parts, colons after a card's directory name): each read under a second of CPU."""
    real = "\n".join(_read(p) for p in (KINGSTON, WORN, BEAGLE)) + "\n"
    n = MAX_LINE_CHARS - 2
    crafted = [
        "[" * n,
        "[A" * (n // 2),
        "/sys/" + "a/" * (n // 2 - 3),
        "/sys/" + "mmc0:0001/" * (n // 10 - 1),
        "eMMC " + "mmc0:" * (n // 5 - 1),
        "$ cat " + " " * (n - 6),
        "==> /sys/" + "x" * (n - 9),
        "Card Type [CARD_TYPE: 0x" + "5" * (n - 24),
    ]
    for body in [real * (2 * 2**20 // len(real) // 2), *(f"{c}\n" * 64 for c in crafted)]:
        seconds = cpu_seconds(lambda b=body: _explain_or_none(b), budget_s=10)
        assert seconds < 1.0, f"{body[:40]!r}: {seconds:.2f} s"


def _explain_or_none(text: str) -> object:
    try:
        return explain_paste(["-"], stdin_text=text)
    except ParseError:
        return None


def test_the_new_patterns_do_not_backtrack_over_a_run() -> None:
    """Every pattern of probe/mmc_text.py and the normaliser's mmc ones, on the real lines they match cut at token
    boundaries, then a run of one character to the line cut: a backtracking one takes 50-500 ms, a linear one < 5."""
    from disksleuth.probe import mmc_text, paste_text

    patterns = [v for v in vars(mmc_text).values() if isinstance(v, re.Pattern)]
    patterns += [paste_text._MMC_EXTCSD, paste_text._MMC_SYSFS, paste_text._PROMPT, paste_text._BARE_COMMAND]
    slow = []
    for pattern in patterns:
        use = pattern.match if pattern.pattern.startswith("^") else pattern.search
        for line in [x for x in _REAL_LINES if pattern.search(x)][:3]:
            for cut in sorted({0, len(line) // 2, len(line)}):
                for run in (" ", "9", "/", "[", ":", "a"):
                    text = line[:cut] + run * MAX_LINE_CHARS + "x"
                    seconds = cpu_seconds(lambda t=text, u=use: u(t), budget_s=5)
                    if seconds > 0.02:
                        slow.append(f"{pattern.pattern[:40]} on {line[:cut][-30:]!r} + {run!r}: {seconds:.3f} s")
    assert not slow, "\n".join(slow[:10])
