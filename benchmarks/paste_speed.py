"""Pasted smartctl text (issue 21): 1,000 reports split and read in under 10 s.

    .venv/bin/python benchmarks/paste_speed.py [N]     # default N=1000

Takes the smartctl reports of the committed corpus (tests/data/paste/smartctl), repeats them until N, and times
the whole path a paste takes: normalise and split (probe.paste_text.read_paste), then read each smartctl
section (probe.smartctl_text.parse_smartctl_text) and derive the findings (analysis.health.health_findings).
"""

from __future__ import annotations

import glob
import os
import sys
import time

from disksleuth.analysis.health import health_findings
from disksleuth.errors import ParseError
from disksleuth.probe.paste_text import read_paste
from disksleuth.probe.smartctl_text import parse_smartctl_text

CORPUS = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "paste", "smartctl")


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    texts = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.txt"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
    if not texts:
        print("no smartctl texts under", CORPUS)
        return 2
    batch = [texts[i % len(texts)] for i in range(count)]
    sections = findings = unread = 0
    start = time.perf_counter()
    for text in batch:
        for section in read_paste(text).sections:
            if section.kind != "smartctl":
                continue
            sections += 1
            try:
                pasted = parse_smartctl_text(section.text, first_line=section.first_line)
            except ParseError:
                unread += 1
                continue
            findings += len(health_findings(pasted.health))
    elapsed_s = time.perf_counter() - start
    print(
        f"{count} smartctl texts ({len(texts)} distinct, {sum(map(len, batch)) / 1e6:.1f} MB): "
        f"{sections} sections, {unread} unread, {findings} findings in {elapsed_s:.2f} s "
        f"({elapsed_s / count * 1000:.2f} ms per text)"
    )
    return 0 if elapsed_s < 10.0 else 1


if __name__ == "__main__":
    sys.exit(main())
