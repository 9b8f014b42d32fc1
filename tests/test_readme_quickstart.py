"""The README's quick start says what `./quickstart test` installs, and its `check` sample is today's output.

The README said `./quickstart test` installs "the same" as `check` (it also installs btrfs-progs, Prometheus,
PostgreSQL and Chromium), and its `check` sample had no `± 95%` column, no health line and "268.4 MB tested"
where the tool prints "256 MiB (268.4 MB) tested".
"""

from __future__ import annotations

import os
import re

from conftest import HERE

REPO = os.path.dirname(HERE)


def read(name: str) -> str:
    with open(os.path.join(REPO, name), encoding="utf-8") as fh:
        return fh.read()


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else None]


def test_the_quick_start_names_what_quickstart_test_installs():
    script = read("quickstart")
    test_block = script[script.index('if [ "$mode" = test ]; then') :]
    test_block = test_block[: test_block.index("\nfi\n")]
    packages = {p for line in re.findall(r"apt-get install -y --no-install-recommends ([^>|\n]+)", test_block)
                for p in line.split()}
    assert packages >= {"btrfs-progs", "prometheus", "postgresql", "chromium"}
    quick_start = section(read("README.md"), "## Quick start").lower()
    missing = sorted(p for p in packages if p not in quick_start)
    assert missing == [], f"README's quick start does not say ./quickstart test installs {missing}"
    assert re.search(r"suite takes about [\d-]+ minutes", quick_start)


def test_the_check_sample_has_todays_shape():
    text = read("README.md")
    sample = text[text.index("$ cd /tmp/somewhere && disksleuth check") :]
    sample = sample[: sample.index("```")]
    assert "health: " in sample
    assert re.search(r"\d+ MiB \([\d.]+ MB\) tested", sample)
    header = next(line for line in sample.splitlines() if line.startswith("test "))
    assert "± 95%" in header
    assert "saved as run #" in sample
