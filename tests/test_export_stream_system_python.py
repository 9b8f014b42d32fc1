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


_STRINGS_AS_JSON = """
import json, random, resource
from disksleuth.store.exportstream import _STRING
random.seed(7)
wrong = 0
for _ in range(20000):
    text = ('"' + ''.join(random.choice('a"\\\\nu0') for _ in range(random.randint(0, 12))) + '"').encode()
    try:
        json.loads(text)
    except ValueError:
        continue
    m = _STRING.match(text)
    wrong += m is None or m.end() != len(text)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
escapes = b'"' + b'\\\\n' * 5_000_000 + b'"'
assert _STRING.match(escapes).end() == len(escapes)
print(wrong, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


@pytest.mark.parametrize("python", [sys.executable, SYSTEM_PYTHON])
def test_strings_are_read_as_json_reads_them_in_bounded_memory(python: str) -> None:
    """Every string json accepts is matched whole, and 5 million escapes take no memory per escape (a plain
    repeat kept a state per escape: 1.1 GB for 10 million)."""
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} is not installed")
    res = subprocess.run(
        [python, "-c", _STRINGS_AS_JSON], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    wrong, grown_mb = map(int, res.stdout.split())
    assert wrong == 0
    assert grown_mb < 50
