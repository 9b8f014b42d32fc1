"""The export reader under the system's own Python (Debian 12's 3.11.2), which CI installs with.

Its `re` gets possessive quantifiers wrong: the scanner that finds where each run of an export ends stopped past a
nested container there, so `import` of a valid export said "not JSON (Expecting ',' delimiter at line 35)" and
every test that imports a store failed in CI, while the same code passed under 3.11.7."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(__file__)), "src")
EXPORT = os.path.join(os.path.dirname(__file__), "data", "store", "real-runs-export.json")
SYSTEM_PYTHON = "/usr/bin/python3"

_COUNT_RUNS = """
import sys
from disksleuth.store.exportstream import ExportReader
with open(sys.argv[1], "rb") as f:
    print(sum(1 for _ in ExportReader(f, sys.argv[1]).runs()))
"""


@pytest.mark.parametrize("python", [sys.executable, SYSTEM_PYTHON])
def test_a_real_export_is_read_run_by_run(python: str) -> None:
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} is not installed")
    res = subprocess.run(
        [python, "-c", _COUNT_RUNS, EXPORT], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "4"


def test_the_scanner_stops_at_a_nested_container() -> None:
    from disksleuth.store.exportstream import _TO_BRACKET

    text = b'"a": 1, "b": "x\\"y", "c": {"d": 2}, "e": [1,2], "f": {"g": {"h": 1}}'
    end = _TO_BRACKET.match(text).end()  # type: ignore[union-attr]
    assert text[end:].startswith(b'{"g"')
