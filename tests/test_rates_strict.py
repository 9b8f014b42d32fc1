"""Rates and IOPS as given to `explain --read/--write/--read-iops` (issue 35 §10): exponents are read (as the dd
reader reads dd's seconds, and as fmt_rate itself prints a tiny figure), ranges are refused, only the digits 0-9 are
digits, and a rate below 1 byte/s or above 1 PB/s is refused. The old reader took the last digits it saw: `1e-3 MB/s`
was 3, `1.3e+04 MB/s` 4, `1e-320 MB/s` 320, `5-10 MB/s` 10, and Arabic-Indic digits were read as 0-9."""

from __future__ import annotations

import contextlib
import math
import os
import time

import pytest
from conftest import DATA, SYSFS
from hypothesis import given
from hypothesis import strategies as st

from disksleuth.errors import UsageError
from disksleuth.units import fmt_rate, parse_count, parse_rate

# The bounds the issue asks for: one byte per second, and 1 PB/s (units.MIN_RATE_MBPS, units.MAX_RATE_MBPS).
MIN_RATE_MBPS = 1e-6
MAX_RATE_MBPS = 1e9

ROOT = os.path.join(SYSFS, "scenario_x4_after_bios")
PASTE = os.path.join(DATA, "paste", "smartctl", "linuxhw-ata-HDS721010DLE630-E2B8EB3D132B.txt")

GOOD = [
    ("1,243 MB/s", 1243.0),
    ("480 Mb/s", 60.0),
    ("BW=599KiB/s", 599 * 1024 / 1e6),
    ("= 373.60 MB/sec", 373.6),
    ("1.3e+04 MB/s", 13000.0),  # read as 4 before
    ("1.3E+04MB/s", 13000.0),
    ("1e-3 MB/s", 0.001),  # read as 3 before
    ("1e3", 1000.0),
    ("1.23e-05 MB/s", 1.23e-05),  # what fmt_rate prints for 12.3 bytes/s
    ("2.5e9 bit/s", 312.5),
    ("1 B/s", 1e-6),  # the floor: one byte per second
    ("1000 TB/s", 1e9),  # the ceiling, 1 PB/s
    ("373 MB/s ± 2%", 373.0),  # a spread in percent leaves the figure clear
    ("sda1 - 373 MB/s", 373.0),  # a name ending in a digit is no range's start
    ("   READ: bw=751MiB/s (788MB/s), 751MiB/s-751MiB/s (788MB/s-788MB/s), io=755MiB (792MB)", 751 * 1024**2 / 1e6),
]

BAD = [
    ("1e-320 MB/s", "not a plausible rate"),  # a denormal; read as 320 before
    ("1e-400 MB/s", "not a plausible rate"),  # a float would make it 0
    ("1e400 MB/s", "not a plausible rate"),  # a float would make it inf
    ("1e99999999999999999999999 MB/s", "not a plausible rate"),
    ("0.5 B/s", "not a plausible rate"),
    ("7 bit/s", "not a plausible rate"),
    ("1001 TB/s", "not a plausible rate"),
    ("0e5 MB/s", "rate must be positive"),
    ("5-10 MB/s", "holds a range"),  # read as 10 before
    ("5 - 10 MB/s", "holds a range"),
    ("5\u201310 MB/s", "holds a range"),  # an en dash
    ("5 to 10 MB/s", "holds a range"),
    ("5 MB/s - 10 MB/s", "holds a range"),
    ("5MB/s-10MB/s", "holds a range"),
    ("5..10 MB/s", "holds a range"),
    ("5-10", "holds a range"),
    ("373 \u00b1 5 MB/s", "holds a range"),  # read as 5 before
    ("\u0663\u0667\u0663 MB/s", "digits other than 0-9"),  # Arabic-Indic 373, read as 373 before
    ("\uff13\uff17\uff13MB/s", "digits other than 0-9"),  # full-width
    ("3\u06f77 MB/s", "digits other than 0-9"),  # Extended Arabic-Indic in the middle
    ("BW=\u0665\u0669\u0669KiB/s", "digits other than 0-9"),
]


@pytest.mark.parametrize("text,mbps", GOOD)
def test_good_rates(text: str, mbps: float) -> None:
    assert parse_rate(text).mbps == pytest.approx(mbps, rel=1e-12)


@pytest.mark.parametrize("text,needle", BAD)
def test_bad_rates_are_one_usage_error(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle) as caught:
        parse_rate(text)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "text,iops", [("4.29e4", 42900.0), ("1E3 IOPS", 1000.0), ("42.9k", 42900.0), ("IOPS=1.46e2k", 146000.0)]
)
def test_iops_read_exponents_too(text: str, iops: float) -> None:
    assert parse_count(text, "--read-iops") == pytest.approx(iops)


@pytest.mark.parametrize(
    "text,needle",
    [
        ("\u0664\u0662\u0669\u0660\u0660", "digits other than 0-9"),
        ("5-10", "holds a range"),
        ("5 to 10k", "holds a range"),
        ("1e-320", "not a plausible count"),
        ("2e9", "not a plausible count"),
        ("1e99999999999999999999999", "not a plausible count"),
    ],
)
def test_bad_iops(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        parse_count(text, "--read-iops")


@pytest.mark.parametrize("text,_needle", BAD[:3] + BAD[8:9] + BAD[17:18])
def test_explain_refuses_in_one_line_exit_2_naming_the_value(cli, text: str, _needle: str) -> None:
    """Both ways in: a live (sysfs) device, and a pasted report. The same words each time."""
    live = cli("explain", "nvme0n1", "--sysfs-root", ROOT, "--read", text)
    pasted = cli("explain", PASTE, "--write", text)
    for res in (live, pasted):
        assert res.code == 2 and not res.out, res
        assert res.err.count("\n") == 1 and repr(text) in res.err and "Traceback" not in res.err
    assert live.err == pasted.err


def test_explain_reads_an_exponent(cli) -> None:
    doc = cli("explain", "nvme0n1", "--sysfs-root", ROOT, "--json", "--read", "1.3e+03 MB/s").json()
    assert doc["given"][0]["mbps"] == 1300.0 and doc["given"][0]["read_as"] == "1,300 MB/s"


# Characters people type and paste around figures, and the digits that are not 0-9.
_ALPHABET = st.sampled_from(list("0123456789.,_eE+-~ \t/:=()%") + ["to", "MB", "Mb", "KiB", "GB", "bit", "/s", "ps"]
                            + ["\u0663", "\uff17", "\u2013", "\u00b1", "bw=", "BW=", "sec", "x", "nan"])  # fmt: skip


@given(st.lists(_ALPHABET, max_size=24).map("".join))
def test_property_any_text_is_a_rate_in_bounds_or_one_usage_error(text: str) -> None:
    try:
        rate = parse_rate(text)
    except UsageError as exc:
        assert "\n" not in str(exc)
    else:
        assert math.isfinite(rate.mbps) and MIN_RATE_MBPS <= rate.mbps <= MAX_RATE_MBPS
        assert all(c.isascii() for c in text if c.isdigit())


@given(st.lists(_ALPHABET, max_size=24).map("".join))
def test_property_any_text_is_a_count_or_one_usage_error(text: str) -> None:
    try:
        iops = parse_count(text, "--read-iops")
    except UsageError as exc:
        assert "\n" not in str(exc)
    else:
        assert math.isfinite(iops) and iops > 0


@given(st.floats(min_value=MIN_RATE_MBPS, max_value=MAX_RATE_MBPS, allow_nan=False, allow_infinity=False))
def test_property_a_formatted_rate_reads_back(mbps: float) -> None:
    """What disksleuth prints (fmt_rate, and a Rate's read_as) reads back as the figure, to its rounding: tiny
    figures are printed with an exponent (1.23e-05 MB/s), which the old reader took for 5 MB/s."""
    shown = fmt_rate(mbps)
    assert parse_rate(shown).mbps == pytest.approx(mbps, rel=5.01e-3)
    rate = parse_rate(shown)
    assert parse_rate(rate.read_as.split(" = ")[0]).mbps == pytest.approx(rate.mbps, rel=1e-5)


@pytest.mark.parametrize(
    "text",
    [
        "1-" * 50_000 + " MB/s",
        "5 to " * 30_000 + "MB/s",
        "1 MB/s - " * 20_000,
        "1e-" * 40_000 + "1 MB/s",
        "1e" + "9" * 100_000 + " MB/s",
        "1 MB/s " * 20_000,
    ],
)
def test_crafted_long_inputs_stay_linear(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(UsageError):
        parse_count(text, "--read-iops")
    with contextlib.suppress(UsageError):
        parse_rate(text)
    assert time.perf_counter() - started < 2.0
