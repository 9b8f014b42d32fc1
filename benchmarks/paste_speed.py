"""Pasted smartctl text (issue 21): 1,000 reports split and read in under 10 s; and (issue 35, defect 7) the whole of
`explain FILE` on 1 MiB of repeated reports, at most 2 s per MiB.

    .venv/bin/python benchmarks/paste_speed.py [N]     # default N=1000

Takes the smartctl reports of the committed corpus (tests/data/paste/smartctl), repeats them until N, and times
the whole path a paste takes: normalise and split (probe.paste_text.read_paste), then read each smartctl
section (probe.smartctl_text.parse_smartctl_text) and derive the findings (analysis.health.health_findings).
Then times run.paste.explain_paste and the terminal view (present.paste_view.render_paste, into a null file) on
1 MiB of the corpus's shortest report (654 bytes: 1,604 drives, the issue's case) and of the whole corpus in turn.
"""

from __future__ import annotations

import contextlib
import glob
import os
import sys
import tempfile
import time

from disksleuth.analysis.health import health_findings
from disksleuth.errors import ParseError
from disksleuth.present.paste_view import render_paste
from disksleuth.probe.paste_text import read_paste
from disksleuth.probe.smartctl_text import parse_smartctl_text
from disksleuth.run.paste import explain_paste

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
    worst_s_per_mib = max(_explain_one_mib("shortest report", [min(texts, key=len)]), _explain_one_mib("corpus", texts))
    return 0 if elapsed_s < 10.0 and worst_s_per_mib <= 2.0 else 1


def _explain_one_mib(label: str, texts: list[str]) -> float:
    """CPU seconds of `explain FILE` (read, judge, print) on 1 MiB of these texts in turn."""
    paste, i = [], 0
    while sum(map(len, paste)) < 1 << 20:
        paste.append(texts[i % len(texts)])
        i += 1
    text = "".join(paste)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        start = time.process_time()
        x = explain_paste([f.name])
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            render_paste(x)
        seconds = time.process_time() - start
    finally:
        os.unlink(f.name)
    per_mib = seconds / (len(text) / (1 << 20))
    print(f"explain on 1 MiB of the {label} ({i:,} reports, {len(x.devices)} devices shown): {per_mib:.2f} s per MiB")
    return per_mib


if __name__ == "__main__":
    sys.exit(main())
