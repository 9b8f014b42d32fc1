"""The package type-checks clean under mypy with the project's configuration ([tool.mypy] in pyproject.toml)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow  # ~10 s of CPU from a fresh clone (no .mypy_cache): CI's full suite runs it
@pytest.mark.long  # 40-46 s in a loaded full run: collected last (test_t...), it was the suite's tail
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e .[dev])")
def test_mypy_is_clean():
    # From the repository root, so mypy reads pyproject.toml and checks src/disksleuth (its `files`), and
    # keeps its cache in .mypy_cache there: a rerun checks only what changed.
    res = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    if res.returncode != 0:
        pytest.fail(f"mypy exited {res.returncode}:\n{res.stdout}{res.stderr}", pytrace=False)
