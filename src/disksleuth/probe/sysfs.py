"""Low-level sysfs access under a root, so tests and `capture` bundles can stand in for /.

Every read returns None for a missing or unreadable attribute; malformed values are recorded as
notes by the caller, never raised.
"""

from __future__ import annotations

import os
import re

BDF_RE = re.compile(r"^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


class Sysfs:
    def __init__(self, root: str = "/"):
        self.root = os.path.abspath(root)

    def p(self, *parts: str) -> str:
        """An absolute host path for a path given relative to the root (or as '/sys/...')."""
        return os.path.join(self.root, *(part.lstrip("/") for part in parts))

    def rel(self, host_path: str) -> str:
        """Inverse of p(): '/sys/devices/...' as the kernel would name it."""
        relative = os.path.relpath(host_path, self.root)
        return "/" + relative if not relative.startswith("..") else host_path

    def read(self, host_path: str) -> str | None:
        try:
            with open(host_path, encoding="utf-8", errors="replace") as fh:
                return fh.read().strip()
        except (OSError, ValueError):
            return None

    def read_bytes(self, host_path: str) -> bytes | None:
        try:
            with open(host_path, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def link_name(self, host_path: str) -> str | None:
        """Basename of a symlink's target (driver links); works on dangling links too."""
        try:
            return os.path.basename(os.readlink(host_path))
        except OSError:
            return None

    def listdir(self, host_path: str) -> list[str]:
        try:
            return sorted(os.listdir(host_path))
        except OSError:
            return []

    def realpath(self, host_path: str) -> str:
        return os.path.realpath(host_path)


class Notes:
    """Collects plain-words notes about values we could not use."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items:
            self.items.append(text)

    def as_tuple(self) -> tuple[str, ...]:
        return tuple(self.items)


def parse_int(text: str | None, what: str, notes: Notes, base: int = 10) -> int | None:
    if text is None or text == "":
        if text == "":
            notes.add(f"{what}: empty value")
        return None
    try:
        return int(text, base)
    except ValueError:
        notes.add(f"{what}: unreadable value {text[:40]!r}")
        return None


# Kernel speed strings, drivers/pci/pci-sysfs.c and drivers/pci/probe.c:
#   5.6 and older: "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", unknown -> "Unknown speed"
#   5.7 and newer: "2.5 GT/s PCIe", "5.0 GT/s PCIe", ... "64.0 GT/s PCIe", unknown -> "Unknown"
_PCIE_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GT/s(?:\s+PCIe)?\s*$")


def parse_pcie_speed(text: str | None, what: str, notes: Notes) -> float | None:
    if text is None:
        return None
    m = _PCIE_SPEED_RE.match(text)
    if m:
        return float(m.group(1))
    if text.lower().startswith("unknown"):
        notes.add(f"{what}: the kernel reports the link speed as {text!r}")
    else:
        notes.add(f"{what}: unreadable link speed {text[:40]!r}")
    return None


def parse_pcie_width(text: str | None, what: str, notes: Notes) -> int | None:
    # current_link_width is a plain number ("4"); 0 means the link is down.
    width = parse_int(text, what, notes)
    if width is not None and width <= 0:
        notes.add(f"{what}: link width {width} (link down?)")
        return None
    return width


# libata, drivers/ata/libata-transport.c: sata_spd shows "1.5 Gbps", "3.0 Gbps", "6.0 Gbps", or
# "<unknown>" (and sata_spd_limit shows "<unknown>" when no limit is set).
_SATA_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gbps\s*$")


def parse_sata_speed(text: str | None, what: str, notes: Notes) -> float | None:
    if text is None:
        return None
    m = _SATA_SPEED_RE.match(text)
    if m:
        return float(m.group(1))
    if text.strip() != "<unknown>":
        notes.add(f"{what}: unreadable SATA speed {text[:40]!r}")
    return None


def parse_mmc_ios(text: str) -> tuple[str | None, int | None, int | None]:
    """(timing name, clock Hz, bus width bits) from debugfs mmcN/ios.

    drivers/mmc/core/debugfs.c prints 'clock:\\t\\t200000000 Hz', 'bus width:\\t2 (4 bits)' and
    'timing spec:\\t6 (sd uhs SDR104)'. Older kernels (before 4.x) named HS200 'mmc high-speed SDR200'.
    """
    timing = clock = width = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "timing spec":
            m = re.search(r"\((.+)\)", value)
            timing = m.group(1) if m else None
        elif key == "clock":
            m = re.match(r"(\d+)", value)
            clock = int(m.group(1)) if m else None
        elif key == "bus width":
            m = re.search(r"\((\d+) bits\)", value)
            width = int(m.group(1)) if m else None
    return timing, clock, width
