"""Sizes and rates: parsing user input and formatting honestly (pure). MB = 10^6 bytes, MiB = 2^20."""

from __future__ import annotations

import re

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
# fio's convention: a bare K/M/G suffix is binary (fio HOWTO "Parameter types", kb_base=1024).


def parse_size(text: str) -> int:
    """'1G', '512MiB', '500MB', '4096' -> bytes. Bare K/M/G are binary, as in fio."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text or "")
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise UsageError(f"not a size: {text!r} (try 1G, 512MiB or 500MB)")
    value = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if value <= 0:
        raise UsageError(f"size must be positive: {text!r}")
    return int(value)


_RATE_UNITS = {
    "b/s": 1e-6,
    "kb/s": 1e-3,
    "mb/s": 1.0,
    "gb/s": 1e3,
    "kib/s": 1024 / 1e6,
    "mib/s": 1024**2 / 1e6,
    "gib/s": 1024**3 / 1e6,
    "mbps": 1.0,  # as written on forums, meaning MB/s; megabits are spelled Mbit/s below
    "mbit/s": 1 / 8,
    "gbit/s": 1e3 / 8,
    "mb": 1.0,
}


def parse_rate_mbps(text: str) -> float:
    """'373MB/s', '1.2GB/s', '350MiB/s', '373' (MB/s) -> MB/s (10^6 bytes per second)."""
    m = re.fullmatch(r"\s*(-?\d+(?:[.,]\d+)?)\s*([a-zA-Z/]*)\s*", text or "")
    if not m:
        raise UsageError(f"not a rate: {text!r} (try 373MB/s, 1.2GB/s or 350MiB/s)")
    number = float(m.group(1).replace(",", "."))
    unit = m.group(2).lower() or "mb/s"
    if unit not in _RATE_UNITS:
        raise UsageError(f"unknown rate unit in {text!r} (try MB/s, GB/s, MiB/s)")
    value = number * _RATE_UNITS[unit]
    if value <= 0:
        raise UsageError(f"rate must be positive: {text!r}")
    return value


def parse_positive(text: str, what: str) -> float:
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise UsageError(f"{what} must be a number: {text!r}") from None
    if value <= 0:
        raise UsageError(f"{what} must be positive: {text!r}")
    return value


def fmt_bytes(n: int | None) -> str:
    """Decimal units, as drive vendors label capacity."""
    if n is None:
        return "?"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def fmt_mbps(v: float | None) -> str:
    return f"{v:,.0f} MB/s" if v is not None else "—"
