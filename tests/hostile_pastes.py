"""Crafted pastes that made the pasted-text readers slow (issue 35, defect 4), built to a size: each is the line a
reader choked on, repeated. Used by tests/test_paste_bounds.py and benchmarks/paste_shapes.py.

Each shape is built with the reported line length (64 KiB: `explain FILE` cuts it to 4,096 characters) or with
lines just under the cut, so a reader meets the whole run in every line: 1 MiB is 16 lines of the first kind and
256 of the second."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

KIB = 1 << 10
MIB = 1 << 20
LONG = 64 * KIB  # the length of each crafted line in the report
CUT = 4 * KIB - 64  # under the normaliser's cut (probe/paste_text.py MAX_LINE_CHARS), prefix included

SMARTCTL_HEADER = "smartctl 7.4 2023-08-01 r5530 [x86_64-linux-6.8.0] (local build)\n"
ATTR_HEADER = "ID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE\n"
ATTR_OLD_HEADER = "ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  WHEN_FAILED RAW_VALUE\n"
SELF_TEST_HEADER = "Num  Test_Description    Status                  Remaining  LifeTime(hours)  LBA_of_first_error\n"
ATTR_OLD_ROW = "  5 Reallocated_Sector_Ct   0x0033   100   100   010    Pre-fail  Always       -       0"
ATTR_BRIEF_ROW = "  5 Reallocated_Sector_Ct   PO--CK   100   100   010    -    0"

# name -> (lines before the crafted ones, the crafted line's start, the run repeated in it, its end)
_PARTS: dict[str, tuple[str, str, str, str]] = {
    "json_open": ("", "", "", "{"),
    "lspci_header_spaces": ("", "01:00.0 Non-Volatile memory controller: ", " ", "X"),
    "smartctl_kv_spaces": (SMARTCTL_HEADER, "Device Model:     X", " ", "Y"),
    "self_test_padding": (
        SMARTCTL_HEADER + SELF_TEST_HEADER,
        "# 1  Short offline       Completed without error",
        " -       -",
        "",
    ),
    "prompt_at": ("", "", "@", "@"),
    "attr_brief_spaces": (SMARTCTL_HEADER + ATTR_HEADER, ATTR_BRIEF_ROW, " ", "x"),
    "attr_old_spaces": (SMARTCTL_HEADER + ATTR_OLD_HEADER, ATTR_OLD_ROW, " ", "x"),
    "scsi_counter_spaces": (SMARTCTL_HEADER, "read:   0 ", " ", "x"),
    "lspci_tree_spaces": ("-[0000:00]-+-00.0\n", "", " ", "x"),
    "nvme_kv_tabs": ("Smart Log for NVME device:nvme0 namespace-id:ffffffff\n", "temperature", "\t", "x"),
    "sata_digits": (SMARTCTL_HEADER, "SATA Version is:  ", "9", "x"),
    "fio_digits": ("fio-3.33\n", "  read: IOPS=", "9", "x"),
    "dmidecode_colons": (
        "# dmidecode 3.4\nHandle 0x0009, DMI type 9, 17 bytes\nSystem Slot Information\n",
        "\tDesignation",
        ": ",
        "",
    ),
}
# The shapes of the report first (defect 4), then those the audit of every pattern added.
REPORTED = ("json_open", "lspci_header_spaces", "smartctl_kv_spaces", "self_test_padding", "prompt_at")


def build(name: str, size: int, line_chars: int = LONG) -> str:
    """The shape `name` as a paste of about `size` characters, its crafted lines `line_chars` long."""
    head, start, run, end = _PARTS[name]
    if name == "json_open":
        return "{\n" * (size // 2)  # the report's shape: a line of one "{" each
    if name == "prompt_at":
        line_chars = min(line_chars, 4095)  # the report's: just under the detectors' old cut
    fill = max(0, line_chars - len(start) - len(end))
    line = start + run * (fill // len(run)) + end + "\n"
    return head + line * max(1, (size - len(head)) // len(line))


SHAPES: dict[str, Callable[[int], str]] = {name: (lambda size, n=name: build(n, size)) for name in _PARTS}


class OverBudget(Exception):
    """The CPU budget of `cpu_budget` ran out."""


@contextmanager
def cpu_budget(seconds: float) -> Iterator[None]:
    """Stop the block with OverBudget after `seconds` of this process's CPU time (SIGPROF: what a loaded machine
    does not inflate). A regular expression is interrupted too (re checks for signals as it runs), so a reader that
    would run for hours fails the test in seconds."""

    def over(_signum: int, _frame: object) -> None:
        raise OverBudget(f"over {seconds:g} s of CPU")

    previous = signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def cpu_seconds(run: Callable[[], object], budget_s: float = 10.0) -> float:
    """CPU seconds `run()` took (time.process_time), stopped at `budget_s`."""
    with cpu_budget(budget_s):
        start = time.process_time()
        run()
        return time.process_time() - start
