"""Vendor and device names from the system's pci.ids, as lspci shows them.

File format (the header of pci.ids itself, and pciutils lib/names-parse.c):
  vendor lines   "VVVV  vendor_name"            (4 lower-case hex digits, two spaces)
  device lines   "<TAB>DDDD  device_name"
  subsystems     "<TAB><TAB>SSSS SSSS  name"     (ignored here)
  comments       lines starting with "#", anywhere; blank lines
  after the vendors: "C cc  class_name" blocks (classes), then "<TAB>subclass" lines
The file is ~1.3 MB and ~37,000 lines. `links` needs a handful of names, so instead of parsing every
line we look each vendor up with bytes.find (C speed) and scan only that vendor's block: about 1 ms
against ~100 ms for a full parse (docs/PERFORMANCE.md, benchmarks/bench_pciids.py).
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterable

# pciutils' PCI_IDS_DIR: Debian and Ubuntu /usr/share/misc, Fedora/Arch/SUSE /usr/share/hwdata (the
# hwdata package), some builds /usr/share; each may ship pci.ids.gz when built with zlib (lspci(8) -i).
PCI_IDS_PATHS = (
    "/usr/share/misc/pci.ids",
    "/usr/share/hwdata/pci.ids",
    "/usr/share/pci.ids",
    "/usr/share/misc/pci.ids.gz",
    "/usr/share/hwdata/pci.ids.gz",
)

def find_pci_ids(paths: Iterable[str] | None = None) -> str | None:
    for path in PCI_IDS_PATHS if paths is None else paths:
        if os.path.isfile(path):
            return path
    return None


def read_pci_ids(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return gzip.decompress(data) if path.endswith(".gz") else data
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def _name(data: bytes, start: int) -> str:
    end = data.find(b"\n", start)
    line = data[start : end if end >= 0 else len(data)]
    return line.decode("utf-8", "replace").strip()


def lookup_pci_names(
    data: bytes, ids: Iterable[tuple[str, str | None]]
) -> dict[tuple[str, str | None], tuple[str | None, str | None]]:
    """{(vendor, device): (vendor_name, device_name)} for the hex ids asked for ("8086", "a36d"),
    from the contents of a pci.ids file. Unknown ids map to None; device may be None (vendor only)."""
    text = b"\n" + data  # so the first line can match "\nVVVV  " too
    out: dict[tuple[str, str | None], tuple[str | None, str | None]] = {}
    blocks: dict[str, tuple[str | None, int, int]] = {}  # vendor -> (name, block start, block end)
    for vendor, device in ids:
        v = vendor.lower()
        if v not in blocks:
            pos = text.find(b"\n" + v.encode("ascii", "replace") + b"  ") if len(v) == 4 else -1
            if pos < 0:
                blocks[v] = (None, 0, 0)
            else:
                body = pos + 7  # "\n" + 4 hex digits + 2 spaces
                next_vendor = _TOP_LEVEL_LINE.search(text, body)
                blocks[v] = (_name(text, body), body, next_vendor.start() if next_vendor else len(text))
        vendor_name, start, end = blocks[v]
        device_name = None
        if vendor_name is not None and device and len(device) == 4:
            pos = text.find(b"\n\t" + device.lower().encode("ascii", "replace") + b"  ", start, end)
            if pos >= 0:
                device_name = _name(text, pos + 8)  # "\n\t" + 4 hex digits + 2 spaces
        out[(vendor, device)] = (vendor_name, device_name)
    return out


# A line that is not a device or subsystem (tabs), a comment or blank ends a vendor's block: the next
# vendor, or the class section ("C cc  name"). A plain character class keeps re's scan at ~0.2 ms for
# Intel's 370 kB block; an alternation of whole line shapes was ten times slower.
_TOP_LEVEL_LINE = re.compile(rb"\n[^\t#\n]")


def split_vendor_device(vendor_device: str | None) -> tuple[str, str | None] | None:
    """"144d:a808" -> ("144d", "a808")."""
    if not vendor_device:
        return None
    vendor, _, device = vendor_device.partition(":")
    return vendor, device or None


def pci_names(
    vendor_devices: Iterable[str | None], paths: Iterable[str] | None = None
) -> dict[str, tuple[str | None, str | None]] | None:
    """{"144d:a808": (vendor name, device name)} from the system's pci.ids; None when none is installed."""
    path = find_pci_ids(paths)
    data = read_pci_ids(path) if path else None
    if data is None:
        return None
    wanted = {vd: split_vendor_device(vd) for vd in vendor_devices if vd}
    found = lookup_pci_names(data, [ids for ids in wanted.values() if ids])
    return {vd: found[ids] for vd, ids in wanted.items() if ids}
