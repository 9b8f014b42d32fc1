"""Low-level sysfs access under a root, so tests and `capture` bundles can stand in for /.

Every read returns None for a missing or unreadable attribute; malformed values are recorded as
notes by the caller, never raised.

A --sysfs-root may be hostile (a FIFO, a symlink to /dev/zero, a huge file): reads open only regular
files, never block, and read a bounded amount. Value parsers run in linear time on any input.
"""

from __future__ import annotations

import os
import re
import stat

BDF_RE = re.compile(r"^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")

# A sysfs attribute holds at most one page (fs/sysfs/file.c, sysfs_kf_seq_show: PAGE_SIZE), and
# PAGE_SIZE is at most 64 KiB (arm64, ppc64). Anything longer did not come from a kernel.
MAX_ATTR_BYTES = 64 * 1024
# /proc/self/mountinfo grows with the mounts; 10,000 container mounts are about 2 MB.
MAX_PROC_BYTES = 16 * 1024 * 1024


def read_regular_file(path: str, limit: int) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes, else None; never blocks.

    stat() first so a FIFO or device node is never opened (opening some devices has side
    effects); O_NONBLOCK plus fstat() on the opened file close the race where the name is swapped
    for a FIFO or device between the two. sysfs and procfs files report a size of 4096 or 0
    whatever they hold, so the size is checked by reading at most limit + 1 bytes.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(limit + 1 - total, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks) if total <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


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

    def read(self, host_path: str, limit: int = MAX_ATTR_BYTES) -> str | None:
        raw = read_regular_file(host_path, limit)
        return raw.decode("utf-8", "replace").strip() if raw is not None else None

    def read_bytes(self, host_path: str, limit: int = MAX_ATTR_BYTES) -> bytes | None:
        return read_regular_file(host_path, limit)

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


# Decimal or hex counters in sysfs are at most 64-bit: 20 digits (or 0x + 16). A longer run of
# digits is not a kernel value, and Python refuses int() of more than 4,300 digits anyway.
_MAX_INT_DIGITS = 24


def parse_int(text: str | None, what: str, notes: Notes, base: int = 10) -> int | None:
    """A non-negative integer attribute, or None with a note saying why."""
    if text is None or text == "":
        if text == "":
            notes.add(f"{what}: empty value")
        return None
    stripped = text.strip()
    digits = stripped[2:] if base == 16 and stripped[:2].lower() == "0x" else stripped
    valid = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if not digits or len(digits) > _MAX_INT_DIGITS or any(c not in valid for c in digits):
        notes.add(f"{what}: unreadable value {_preview(text)}")
        return None
    return int(digits, base)


def _preview(text: str) -> str:
    return repr(text[:40])


def _parse_decimal(number: str, low: float, high: float) -> float | None:
    """A decimal written by the kernel ("8.0", "5000"), if it lies in (low, high]."""
    if not number or len(number) > _MAX_INT_DIGITS or number.count(".") > 1:
        return None
    if any(c not in "0123456789." for c in number) or number.startswith(".") or number.endswith("."):
        return None
    value = float(number)
    return value if low < value <= high else None


# Kernel speed strings, drivers/pci/pci-sysfs.c and drivers/pci/probe.c:
#   5.6 and older: "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", unknown -> "Unknown speed"
#   5.7 and newer: "2.5 GT/s PCIe", "5.0 GT/s PCIe", ... "64.0 GT/s PCIe", unknown -> "Unknown"
# Split on whitespace rather than a regex so any input is parsed in linear time.
_PCIE_MAX_GTPS = 1000.0  # PCIe 7 is 128 GT/s; leave room, refuse nonsense


def parse_pcie_speed(text: str | None, what: str, notes: Notes) -> float | None:
    if text is None:
        return None
    words = text.split()
    number = None
    if len(words) >= 2 and words[1] == "GT/s" and (len(words) == 2 or words[2:] == ["PCIe"]):
        number = words[0]
    elif words and words[0].endswith("GT/s") and (len(words) == 1 or words[1:] == ["PCIe"]):
        number = words[0][: -len("GT/s")]
    if number is not None:
        value = _parse_decimal(number, 0.0, _PCIE_MAX_GTPS)
        if value is not None:
            return value
    if text.lower().startswith("unknown"):
        notes.add(f"{what}: the kernel reports the link speed as {_preview(text)}")
    else:
        notes.add(f"{what}: unreadable link speed {_preview(text)}")
    return None


def parse_pcie_width(text: str | None, what: str, notes: Notes) -> int | None:
    # current_link_width is a plain number ("4"); 0 means the link is down.
    width = parse_int(text, what, notes)
    if width is not None and width <= 0:
        notes.add(f"{what}: link width {width} (link down?)")
        return None
    if width is not None and width > 32:  # PCIe defines x1 to x32
        notes.add(f"{what}: unreadable link width {width}")
        return None
    return width


# libata, drivers/ata/libata-transport.c: sata_spd shows "1.5 Gbps", "3.0 Gbps", "6.0 Gbps", or
# "<unknown>" (and sata_spd_limit shows "<unknown>" when no limit is set).
def parse_sata_speed(text: str | None, what: str, notes: Notes) -> float | None:
    if text is None:
        return None
    words = text.split()
    number = None
    if len(words) == 2 and words[1] == "Gbps":
        number = words[0]
    elif len(words) == 1 and words[0].endswith("Gbps"):
        number = words[0][: -len("Gbps")]
    value = _parse_decimal(number, 0.0, 100.0) if number is not None else None
    if value is not None:
        return value
    if text.strip() != "<unknown>":
        notes.add(f"{what}: unreadable SATA speed {_preview(text)}")
    return None


def parse_usb_speed(text: str | None, what: str, notes: Notes) -> float | None:
    # drivers/usb/core/sysfs.c speed_show: "1.5", "12", "480", "5000", "10000", "20000" (Mb/s).
    if text is None:
        return None
    value = _parse_decimal(text.strip(), 0.0, 1_000_000.0)
    if value is None:
        notes.add(f"{what}: unreadable USB speed {_preview(text)}")
    return value


def parse_scheduler(text: str | None) -> str | None:
    """The active I/O scheduler: queue/scheduler reads "mq-deadline kyber [bfq] none".

    Found with str.find, never a backtracking regex: "[[[[..." made a regex search quadratic."""
    if not text:
        return None
    pos = 0
    while (start := text.find("[", pos)) >= 0:
        end = text.find("]", start + 1)
        if end < 0:
            break
        if end > start + 1:
            return text[start + 1 : end]
        pos = end + 1
    words = text.split(maxsplit=1)
    return words[0] if words else None


def parse_mmc_ios(text: str) -> tuple[str | None, int | None, int | None]:
    """(timing name, clock Hz, bus width bits) from debugfs mmcN/ios.

    drivers/mmc/core/debugfs.c prints 'clock:\\t\\t200000000 Hz', 'bus width:\\t2 (4 bits)' and
    'timing spec:\\t6 (sd uhs SDR104)'. Older kernels (before 4.x) named HS200 'mmc high-speed SDR200'.
    Parsed with str methods (linear time on any input).
    """
    timing = clock = width = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "timing spec":
            start, end = value.find("("), value.rfind(")")
            timing = value[start + 1 : end] if 0 <= start < end - 1 else None
        elif key == "clock":
            digits = len(value) - len(value.lstrip("0123456789"))
            clock = int(value[:digits]) if 0 < digits <= 12 else None
        elif key == "bus width":
            start, end = value.find("("), value.rfind(" bits)")
            number = value[start + 1 : end] if 0 <= start < end else ""
            width = int(number) if number.isascii() and number.isdigit() and len(number) <= 3 else None
    return timing, clock, width
