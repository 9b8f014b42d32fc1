"""Sizes and rates: parsing user input and formatting honestly (pure). MB = 10^6 bytes, MiB = 2^20."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

from disksleuth.errors import UsageError

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kib": 1024,
    "kb": 1000,
    "m": 1024**2,
    "mib": 1024**2,
    "mb": 1000**2,
    "g": 1024**3,
    "gib": 1024**3,
    "gb": 1000**3,
    "t": 1024**4,
    "tib": 1024**4,
    "tb": 1000**4,
}
# fio's convention: a bare K/M/G suffix is binary (fio HOWTO "Parameter types", kb_base=1024), as in dd, truncate
# and losetup. Kept so: `--size 1G` in a script means the bytes it always meant. It is honest because the CLI's help
# says so and every view of the size labels it (fmt_size: "300 MiB (314.6 MB)"); KB/MB/GB/TB are 10^3..10^12.


# An exbibyte is far past any device or file fio can address (its sizes are 64-bit byte counts).
_MAX_SIZE = 1 << 60


def parse_size(text: str) -> int:
    """'1G', '512MiB', '500MB', '4096' -> bytes. Bare K/M/G are binary, as in fio.

    Exact decimal arithmetic (no float): '1e400'-sized or 5,000-digit inputs are a clear error,
    never an OverflowError, and '0.0000001' is not silently rounded to 0 bytes."""
    text = text or ""
    shown = repr(text[:40] + ("…" if len(text) > 40 else ""))
    # One variable-width gap in the pattern, and the ends stripped first: a regex with \s* on both
    # sides of an optional part backtracks quadratically on a long run of spaces.
    m = re.fullmatch(r"([0-9]{1,30}(?:\.[0-9]{1,30})?)[ \t]*([a-zA-Z]{0,3})", text.strip(), re.ASCII)
    if m and m.group(2) in ("Kb", "Mb", "Gb", "Tb"):
        # Written with care for case, b is a bit (IEC 80000-13): 300Mb is megabits, never 300 MB. All
        # lower case (300mb) is loose writing that means bytes in a size, as scripts already use it.
        n, big = m.group(1), m.group(2)[0]
        raise UsageError(f"not a size: {shown}: a lower-case b is a bit; give bytes: {n}{big}B or {n}{big}iB")
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise UsageError(f"not a size: {shown} (try 1G, 512MiB or 500MB)")
    value = int(Decimal(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    if value <= 0:
        raise UsageError(f"not a size: {shown} is no bytes at all (try 1G, 512MiB or 500MB)")
    if value > _MAX_SIZE:
        raise UsageError(f"size too large: {shown} (at most 1 EiB)")
    return value


# --- rates -------------------------------------------------------------------------------------
#
# Rates are read the way people write and paste them: `1,243MB/s`, `480 Mb/s`, `10Gbps`, hdparm's
# `= 373.60 MB/sec`, fio's `BW=599KiB/s (613kB/s)`, dd's `1.1 GB/s`. B is a byte and b a bit (the
# IEEE 1541 / IEC 80000-13 symbols); KiB/MiB/GiB are binary (IEC 60027-2); k/M/G/T decimal. The
# prefix's case carries no meaning, B vs b does. But a lower-case m/g/t before a lower-case b
# (`mb/s`, `gbps`) is written too loosely to trust the b: refused as ambiguous, never guessed.

_PREFIX_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_PREFIX_SCALE |= {"ki": 1024.0, "mi": 1024.0**2, "gi": 1024.0**3, "ti": 1024.0**4}
# Digits, optionally grouped by thousands separators (1,243 or 1_243), a decimal point, and an exponent (1.3e+04, as
# fmt_rate itself prints a tiny figure: 1.23e-05 MB/s). ASCII digits only: `\d` and float() also take Arabic-Indic
# and full-width digits, which no tool prints; they are refused by name (_foreign_digits), never read.
_NUMBER = r"(?:[0-9]{1,3}(?:[,_][0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
_PER_SECOND = r"/\s?s(?:ec(?:ond)?s?)?|ps|p/s"
_UNIT = rf"(?P<prefix>[kmgt]i?)?(?P<what>bytes?|bits?|b)(?P<per>{_PER_SECOND})?"
# Not after a letter, digit or point, nor after an exponent's sign: the `3` of `1e-3 MB/s` is no figure of its own.
_RATE_IN_TEXT = re.compile(rf"(?<![\w.])(?<![eE][-+])(?P<num>{_NUMBER})\s*(?P<unit>{_UNIT})(?![\w/])", re.I)
# Matched against the stripped text, with one variable-width gap (number to unit): `\s*` on both sides
# of an optional part backtracks quadratically on a long run of spaces (16,000 spaces took 3.9 s).
_SIMPLE = re.compile(r"(?P<sign>[-+])?(?P<num>[0-9.,_]+(?:[eE][-+]?[0-9]+)?)\s*(?P<unit>[A-Za-z][A-Za-z/ ]*)?")
# A range (`5-10 MB/s`, `5 to 10 MB/s`, `5 MB/s - 10 MB/s`) or a spread (`373 ± 5 MB/s`) is no one figure: reading
# either end (the old reader took the 10 of `5-10`) is a guess. Gaps are bounded ({0,3}), so no run of spaces is
# backtracked over; the patterns are tried only beside a figure found, in a window of _RANGE_WINDOW characters.
_RANGE_SEP = r"(?:-|\u2010|\u2011|\u2012|\u2013|\u2014|~|\.\.\.?|\bto\b|\u00b1|\+/-)"
_RANGE_BEFORE = re.compile(
    rf"(?<![\w.:])(?:{_NUMBER})[ \t]{{0,3}}(?:[a-z]{{1,5}}(?:/s(?:ec)?|ps)?[ \t]{{0,3}})?{_RANGE_SEP}[ \t]{{0,3}}\Z",
    re.I,
)
# A spread in percent after the figure (`373 MB/s ± 2%`) leaves the figure itself clear.
_RANGE_AFTER = re.compile(rf"[ \t]{{0,3}}{_RANGE_SEP}[ \t]{{0,3}}(?:{_NUMBER})(?![0-9.]|[ \t]?%)")
_RANGE_BARE = re.compile(rf"(?<![\w.:])(?:{_NUMBER})[ \t]{{0,3}}{_RANGE_SEP}[ \t]{{0,3}}(?:{_NUMBER})(?![0-9.])")
_RANGE_WINDOW = 40
# What a storage path can carry: below a byte per second nothing is being measured (1e-320 MB/s is a float's
# denormal, not a drive), and 1 PB/s is beyond any storage path.
MIN_RATE_MBPS = 1e-6
MAX_RATE_MBPS = 1e9
_TRY = "try 373MB/s, 1.2GB/s, 350MiB/s, or 480Mb/s and 10Gbit/s for bits"


@dataclass(frozen=True)
class Rate:
    """A rate as given and as read: `text` is what was written, `mbps` what it means (10^6 bytes/s)."""

    text: str
    mbps: float
    value: float  # the number as written
    unit: str  # the unit as read, normalised: "MB/s", "Mbit/s", "KiB/s"

    @property
    def read_as(self) -> str:
        """'480 Mbit/s = 60 MB/s': shown back so a misread is visible."""
        shown = f"{self.value:,g} {self.unit}"
        return shown if self.unit == "MB/s" else f"{shown} = {fmt_rate(self.mbps)}"


def _shown(text: str) -> str:
    """User text in an error line: quoted, and cut short so the line stays one line."""
    return repr(text if len(text) <= 80 else text[:77] + "...")


def fmt_rate(mbps: float) -> str:
    """MB/s, with decimals only where a small figure needs them: 1,243 MB/s, 60 MB/s, 0.075 MB/s."""
    if mbps >= 10:
        return f"{mbps:,.0f} MB/s" if mbps >= 100 or mbps == int(mbps) else f"{mbps:,.1f} MB/s"
    return f"{mbps:.3g} MB/s"


def _foreign_digits(text: str, original: str, what: str) -> None:
    """Digits other than 0-9 (Arabic-Indic, full-width...) are refused by name, the same way in every reader."""
    if re.search(r"(?![0-9])\d", text):
        raise UsageError(f"{what}: {_shown(original)} has digits other than 0-9 (write the figure with 0-9)")


def _read_number(text: str, original: str) -> Decimal:
    """The number as written, exactly: a Decimal, so '1e-400' is not silently 0 and '1e400' not inf."""
    if not re.fullmatch(_NUMBER, text):
        raise UsageError(
            f"not a rate: cannot read the number {_shown(text)} in {_shown(original)} "
            "(commas only between groups of three digits, a point for decimals: 1,243.5)"
        )
    try:
        return Decimal(text.replace(",", "").replace("_", ""))
    except ArithmeticError:  # an exponent of thousands of digits
        raise UsageError(f"not a plausible rate: {_shown(original)} (a storage rate is {_BOUNDS})") from None


_BOUNDS = "between 1 byte/s and 1 PB/s"


def _rate(original: str, number: Decimal, scale: float, unit: str) -> Rate:
    """The Rate of a number in a unit, refused when it is no rate a storage path has: zero, negative, or out of
    MIN_RATE_MBPS..MAX_RATE_MBPS. Checked exactly (Decimal), before any float can round it to 0 or inf."""
    if number <= 0:
        raise UsageError(f"rate must be positive: {_shown(original)}")
    try:
        mbps = number * Decimal(scale) / Decimal(10**6)
        plausible = Decimal(str(MIN_RATE_MBPS)) <= mbps <= Decimal(str(MAX_RATE_MBPS))
    except ArithmeticError:
        plausible = False
    if not plausible:
        raise UsageError(
            f"not a plausible rate: {_shown(original)} reads as {number:.3g} {unit} (a storage rate is {_BOUNDS})"
        )
    return Rate(original, float(mbps), float(number), unit)


def _read_unit(unit: str, original: str, *, need_per_second: bool) -> tuple[float, str]:
    """'MB/s' -> (bytes per second per unit, normalised name); UsageError when unknown or ambiguous."""
    m = re.fullmatch(_UNIT, unit, re.I)
    what = m.group("what") if m else ""
    # Single-letter B/b is case-sensitive; the words byte/bit and the rest are not.
    if m is None or (len(what) == 1 and what not in "Bb") or (need_per_second and not m.group("per")):
        raise UsageError(f"unknown rate unit {unit!r} in {_shown(original)} ({_TRY})")
    prefix = m.group("prefix") or ""
    bits = what == "b" or what.lower().startswith("bit")
    if what == "b" and prefix[:1] in ("m", "g", "t"):
        big = prefix[:1].upper() + prefix[1:]
        raise UsageError(
            f"ambiguous rate unit {unit!r} in {_shown(original)}: write {big}B/s for bytes or {big}bit/s for bits"
        )
    key = prefix.lower()
    name = ("k" if key == "k" else key[:1].upper()) + ("i" if key.endswith("i") else "")
    return _PREFIX_SCALE[key] / (8 if bits else 1), name + ("bit/s" if bits else "B/s")


def parse_rate(text: str) -> Rate:
    """A rate as people write or paste it -> Rate in MB/s (10^6 bytes per second).

    '373' and '373MB/s' are MB/s; '1,243 MB/s' is 1243; '1.3e+04 MB/s' is 13000; '480Mb/s', '10Gbps',
    '1 Gbit/s' are bits; '350MiB/s' is binary; a pasted tool line ('... = 373.60 MB/sec', 'BW=599KiB/s
    (613kB/s)') is read for the rate in it. Anything unclear (a range, two rates, digits other than 0-9, a rate
    below 1 byte/s or above 1 PB/s) is one UsageError, never a guess."""
    original = text or ""
    if re.search(r"\b(?:nan|inf(?:inity)?)(?![a-z])", original, re.I):
        raise UsageError(f"not a rate: {_shown(original)} (a finite number is needed; {_TRY})")
    _foreign_digits(original, original, "not a rate")
    simple = _SIMPLE.fullmatch(original.strip())
    if simple:
        if _RANGE_BARE.search(simple.group("num")):  # `5..10`
            raise _range_error(original, simple.group("num"))
        number = _read_number(simple.group("num"), original)
        unit_text = (simple.group("unit") or "").replace(" ", "")
        # A bare number is MB/s; `373MB` without "/s" is still a rate, as the option asks for one.
        scale, unit = _read_unit(unit_text, original, need_per_second=False) if unit_text else (1e6, "MB/s")
        if simple.group("sign") == "-":
            raise UsageError(f"rate must be positive: {_shown(original)}")
        return _rate(original, number, scale, unit)
    # fio labels its figure `bw=` (and prints min-max ranges after it): read the labelled one.
    labelled = re.search(r"\bbw\s*=", original, re.I)
    scan = original[labelled.end() :] if labelled else original
    found: list[tuple[re.Match[str], Decimal, float, str]] = []
    for m in _RATE_IN_TEXT.finditer(scan):
        if not m.group("per"):
            continue  # `1122 MB in 3.00 seconds`, `(1.1 GB, 1.0 GiB)`: amounts, not rates
        number = _read_number(m.group("num"), original)
        scale, unit = _read_unit(m.group("unit"), original, need_per_second=True)
        found.append((m, number, scale, unit))
    if not found:
        bare = _RANGE_BARE.search(original)
        if bare:
            raise _range_error(original, bare.group(0))
        if re.search(r"[0-9]", original):
            raise UsageError(f"not a rate: {_shown(original)} has no figure per second in it ({_TRY})")
        raise UsageError(f"not a rate: {_shown(original)} ({_TRY})")
    if labelled:
        found = found[:2]
    for m, *_ in found:
        start, end = m.span()
        before = _RANGE_BEFORE.search(scan, max(0, start - _RANGE_WINDOW), start)
        after = _RANGE_AFTER.match(scan, end, end + _RANGE_WINDOW)
        if before or after:
            raise _range_error(original, scan[before.start() if before else start : after.end() if after else end])
    rates = [_rate(original, number, scale, unit) for _, number, scale, unit in found]
    first = rates[0]
    # fio prints one rate twice, binary then decimal (`599KiB/s (613kB/s)`): the same figure, rounded.
    if any(abs(r.mbps - first.mbps) > 0.02 * first.mbps for r in rates[1:]):
        listed = ", ".join(f"{r.value:,g} {r.unit}" for r in rates)
        raise UsageError(f"several different rates in {_shown(original)} ({listed}): give just one")
    return first


def _range_error(original: str, shown: str) -> UsageError:
    return UsageError(f"not a rate: {_shown(original)} holds a range ({shown.strip()}): give one figure")


def parse_rate_mbps(text: str) -> float:
    """'373MB/s', '1.2GB/s', '350MiB/s', '480Mb/s', '373' (MB/s) -> MB/s (10^6 bytes per second)."""
    return parse_rate(text).mbps


# IOPS a device can do: a failing card still completes an I/O now and then, and a billion per second is beyond any.
MIN_IOPS = 1e-3
MAX_IOPS = 1e9


def parse_count(text: str, what: str) -> float:
    """IOPS as written or pasted: '50,000', '42.9k', '4.29e4', '42900 IOPS', fio's 'IOPS=146k' (k = 1000 in fio's
    IOPS). Numbers are read as parse_rate reads them: ASCII digits, exponents, no ranges, plausible magnitudes."""
    original = text or ""
    _foreign_digits(original, original, f"{what} must be a number")
    num = r"(?P<num>[0-9.,_]+(?:[eE][-+]?[0-9]+)?)"
    # Stripped first, and one gap before the suffix: three `\s*` around optional parts backtrack
    # cubically on a run of spaces (2,000 spaces took 28 s).
    m = re.fullmatch(rf"{num}\s*(?:(?P<k>[kKmM])|(?P<k2>[kKmM])?\s?(?:iops|IO/s))?", original.strip(), re.I)
    if m is None:
        m = re.search(rf"IOPS\s*=\s*{num}(?P<k>[kKmM])?\b", original)
    if m is None or not re.fullmatch(_NUMBER, m.group("num")):
        if _RANGE_BARE.search(original):
            raise UsageError(f"{what} must be one number: {_shown(original)} holds a range")
        raise UsageError(f"{what} must be a number: {_shown(original)} (e.g. 50,000 or 42.9k)")
    try:
        number = Decimal(m.group("num").replace(",", "").replace("_", ""))
    except ArithmeticError:
        raise UsageError(f"{what} is not a plausible count: {_shown(original)}") from None
    suffix = m.group("k") or (m.groupdict().get("k2") or "")
    number *= {"k": Decimal(1000), "m": Decimal(10**6)}.get(suffix.lower(), Decimal(1))
    if number <= 0:
        raise UsageError(f"{what} must be positive: {_shown(original)}")
    if not Decimal(str(MIN_IOPS)) <= number <= Decimal(str(MAX_IOPS)):
        raise UsageError(
            f"{what} is not a plausible count: {_shown(original)} reads as {number:.3g} (from 0.001 to a billion)"
        )
    return float(number)


# Seconds, percentages and counts given as options: a billion of any of them is already absurd.
MAX_OPTION_VALUE = 1e9


def parse_positive(text: str, what: str) -> float:
    given = text.strip()
    # "1,5" is a decimal comma to many users: never read it as 15. Digits are ASCII, as --size reads them.
    if not given.isascii() or (("," in given or "_" in given) and not re.fullmatch(_NUMBER, given)):
        raise UsageError(
            f"{what} must be a number: {text!r} (a point for decimals, 1.5; commas only between groups of three digits)"
        )
    try:
        value = float(given.replace(",", "").replace("_", ""))
    except ValueError:
        raise UsageError(f"{what} must be a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:  # float() takes 'nan', 'inf' and '1e400' (= inf)
        raise UsageError(f"{what} must be positive: {text!r}")
    if value > MAX_OPTION_VALUE:
        raise UsageError(f"{what} is too large: {text!r} (at most {MAX_OPTION_VALUE:,.0f})")
    return value


def fmt_bytes(n: int | None) -> str:
    """Decimal units, as drive vendors label capacity."""
    if n is None:
        return "?"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def fmt_size(n: int | None) -> str:
    """A tested or requested size: '300 MiB (314.6 MB)' when it is a whole number of KiB/MiB/GiB/TiB (a bare
    `--size 300M` or `1K` is binary), so the binary figure is labelled and the decimal one is there too
    ('1 KiB (1,024 bytes)', never '1.0 kB'); an odd size under a megabyte in bytes; otherwise fmt_bytes."""
    if n is None:
        return "?"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0 and n % (10**6 if n >= 10**6 else 10**3):
            if n < 10**6:
                decimal = f"{n:,} bytes"
            else:
                decimal = f"{n / 1e9:,.2f} GB" if n >= 10**10 else f"{n / 1e6:,.1f} MB"
            return f"{n // scale:,} {unit} ({decimal})"
    if n < 10**6 and n % 1000:
        return f"{n:,} bytes"  # 1.5K: "1,536 bytes", where "1.5 kB" would be neither what was given nor exact
    return fmt_bytes(n)


def fmt_mbps(v: float | None) -> str:
    return f"{v:,.0f} MB/s" if v is not None else "—"
