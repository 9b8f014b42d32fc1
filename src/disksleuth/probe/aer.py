"""PCIe Advanced Error Reporting counters of one PCI function, read from sysfs under a root (issue 36).

Kernel layout (Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats, drivers/pci/pcie/aer.c, since 4.19):
  /sys/bus/pci/devices/BDF/aer_dev_correctable   "NAME COUNT" lines, one per kind of error the kernel names
  /sys/bus/pci/devices/BDF/aer_dev_nonfatal      (an unnamed bit with a count shows as "dev_cor_errs_bit[N] COUNT"),
  /sys/bus/pci/devices/BDF/aer_dev_fatal         then "TOTAL_ERR_COR N" / "TOTAL_ERR_NONFATAL N" / "TOTAL_ERR_FATAL N"
  root ports and event collectors only:
  /sys/bus/pci/devices/BDF/aer_rootport_total_err_{cor,nonfatal,fatal}   one number: messages received from below
Every count is a u64 printed with %llu. The files exist only for a function with an AER capability whose errors the
kernel handles itself (not firmware-first), so None is common and says nothing bad.

A reader for `top` and the runs: `read_aer(bdf, root)` per function, `read_aers(bdfs, root)` for a path. The
parsers are pure functions of text, cut to a bounded number of short lines before anything is split.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from disksleuth.model import AerCount, AerCounters
from disksleuth.probe.sysfs import BDF_RE, Notes, Sysfs

SEVERITIES = ("correctable", "nonfatal", "fatal")
DEV_FILES = {"correctable": "aer_dev_correctable", "nonfatal": "aer_dev_nonfatal", "fatal": "aer_dev_fatal"}
TOTAL_LINES = {"correctable": "TOTAL_ERR_COR", "nonfatal": "TOTAL_ERR_NONFATAL", "fatal": "TOTAL_ERR_FATAL"}
ROOTPORT_FILES = {
    "correctable": "aer_rootport_total_err_cor",
    "nonfatal": "aer_rootport_total_err_nonfatal",
    "fatal": "aer_rootport_total_err_fatal",
}
# Every AER file a capture bundle copies (probe/capture.py).
AER_FILES = (*DEV_FILES.values(), *ROOTPORT_FILES.values())

# The kernel writes one line per bit of the 32-bit status register plus the total: 33 lines of at most
# ~40 characters ("PoisonTLPBlocked 18446744073709551615"). Anything past these bounds did not come from it.
MAX_LINES = 64
MAX_LINE_CHARS = 96
MAX_FILE_BYTES = MAX_LINES * MAX_LINE_CHARS
MAX_NAME_CHARS = 48
U64_MAX = (1 << 64) - 1


def _count(word: str) -> int | None:
    """A %llu count, or None: only ASCII digits, at most 20 of them, at most 2**64 - 1."""
    if not word or len(word) > 20 or any(c not in "0123456789" for c in word):
        return None
    value = int(word)
    return value if value <= U64_MAX else None


def _preview(text: str) -> str:
    return repr(text[:40])


def parse_aer_dev(text: str, severity: str) -> tuple[int | None, tuple[AerCount, ...], str | None]:
    """One aer_dev_* file: (its TOTAL_ERR_* count, the kinds with a non-zero count, what was wrong or None).

    The total is None when its line is missing, unreadable or says another severity's total (a file cut short, or
    not the kernel's): the per-kind counts never stand in for it, since one error message can set several bits."""
    total_name = TOTAL_LINES[severity]
    lines = text[: MAX_FILE_BYTES + 1].split("\n", MAX_LINES + 1)[:MAX_LINES]
    total: int | None = None
    problem: str | None = None
    kinds: list[AerCount] = []
    for raw in lines:
        words = raw[:MAX_LINE_CHARS].split()
        if not words:
            continue
        if len(words) != 2:
            problem = problem or f"unreadable line {_preview(raw)}"
            continue
        name, value = words
        count = _count(value)
        if count is None:
            problem = problem or f"unreadable count {_preview(raw)}"
            continue
        if name == total_name:
            total = count
        elif name.startswith("TOTAL_"):
            problem = problem or f"{name} where {total_name} belongs"
        elif count and len(name) <= MAX_NAME_CHARS:
            kinds.append(AerCount(severity, name, count))
    if total is None and problem is None:
        problem = f"no {total_name} line"
    return total, tuple(kinds), problem


def parse_aer_total(text: str) -> int | None:
    """An aer_rootport_total_err_* file: one count, or None."""
    words = text[:MAX_LINE_CHARS].split()
    return _count(words[0]) if len(words) == 1 else None


def read_aer_at(fs: Sysfs, fn_dir: str, bdf: str, notes: Notes | None = None) -> AerCounters | None:
    """The AER counters in a function's sysfs directory (a host path under fs's root), or None when it has no AER
    file at all. A file that cannot be used leaves its count None and a note saying why."""
    notes = notes if notes is not None else Notes()
    totals: dict[str, int | None] = {}
    kinds: list[AerCount] = []
    found = False
    for severity in SEVERITIES:
        path = os.path.join(fn_dir, DEV_FILES[severity])
        raw = fs.read_bytes(path, MAX_FILE_BYTES)
        if raw is None:
            totals[severity] = None
            if fs.stat(path, follow_last=False) is not None:  # there, but no counter file
                found = True
                notes.add(f"{bdf} {DEV_FILES[severity]}: not a readable kernel counter file")
            continue
        found = True
        total, counts, problem = parse_aer_dev(raw.decode("ascii", "replace"), severity)
        if problem:
            notes.add(f"{bdf} {DEV_FILES[severity]}: {problem}")
        totals[severity] = total
        kinds.extend(counts)
    rootport: dict[str, int | None] = {}
    for severity in SEVERITIES:
        path = os.path.join(fn_dir, ROOTPORT_FILES[severity])
        text = fs.read(path, MAX_LINE_CHARS)
        rootport[severity] = parse_aer_total(text) if text is not None else None
        if text is not None:
            found = True
            if rootport[severity] is None:
                notes.add(f"{bdf} {ROOTPORT_FILES[severity]}: unreadable value {_preview(text)}")
        elif fs.stat(path, follow_last=False) is not None:
            found = True
            notes.add(f"{bdf} {ROOTPORT_FILES[severity]}: not a readable kernel counter file")
    if not found:
        return None
    return AerCounters(
        bdf=bdf,
        correctable=totals["correctable"],
        nonfatal=totals["nonfatal"],
        fatal=totals["fatal"],
        rootport_correctable=rootport["correctable"],
        rootport_nonfatal=rootport["nonfatal"],
        rootport_fatal=rootport["fatal"],
        counts=tuple(kinds),
    )


def read_aer(
    bdf: str, sysfs_root: str = "/", *, fs: Sysfs | None = None, notes: Notes | None = None
) -> AerCounters | None:
    """The AER counters of PCI function `bdf` ("0000:03:00.0") under a sysfs root, or None (no such function, a name
    that is not a BDF, or no AER file). Never raises."""
    if not BDF_RE.match(bdf):
        return None
    fs = fs or Sysfs(sysfs_root)
    return read_aer_at(fs, fs.realpath(fs.p("/sys/bus/pci/devices", bdf)), bdf, notes)


def read_aers(bdfs: Iterable[str], sysfs_root: str = "/", notes: Notes | None = None) -> dict[str, AerCounters]:
    """The counters of each function that has them, by BDF (one Sysfs for them all): a path read again after a test,
    or each second in `top`."""
    fs = Sysfs(sysfs_root)
    out: dict[str, AerCounters] = {}
    for bdf in dict.fromkeys(bdfs):
        counters = read_aer(bdf, fs=fs, notes=notes)
        if counters is not None:
            out[bdf] = counters
    return out
