"""The HTML report's history chart (issue 23): per drive and test, the figure over time across the drive's
runs measured the same way, with the baseline's median and band, read from a real SQLite store filled by real
`check` runs of a real loop device; "too little history" while there is. The file stays self-contained."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import needs_fio, needs_loop
from test_loop_device_runs import disk_file_loop

from disksleuth.analysis.baseline import Baseline, Choice, History
from disksleuth.model.baseline import EarlierRun, TestFigures
from disksleuth.present.report_history import history_html

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]
CHECK = ["--time", "2", "--engine", "libaio"]


def _report(cli, path: str) -> str:  # noqa: ANN001
    res = cli("report", "-o", path)
    assert res.code == 0, res.err
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _self_contained(text: str) -> None:
    """Nothing fetched: no script, stylesheet, image or font from anywhere (SVG's namespaces are not fetched)."""
    assert "<script" not in text and "<link " not in text and "<img" not in text and "@import" not in text
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", text) and "url(http" not in text


@pytest.mark.root
@pytest.mark.slow
@needs_fio
@needs_loop
def test_history_chart_from_a_real_store(cli, tmp_path) -> None:  # noqa: ANN001
    # A loop device over a file on a disk, not on /dev/shm: a RAM-backed one's tests measure memory and are
    # cache-affected (issue 40, defect 11), and a baseline leaves those out. Its reads are of a sparse file.
    with disk_file_loop(direct=True, size_mb=256) as (dev, _image, _holder):
        name = dev.rsplit("/", 1)[-1]
        res = subprocess.run([*DISKSLEUTH, "check", dev, *CHECK], capture_output=True, text=True, timeout=300)
        assert res.returncode in (0, 1), res.stderr
        first = _report(cli, str(tmp_path / "one.html"))
        assert f"History of {name}, measured this way" in first
        assert "too little history: no earlier runs of" in first
        assert "· SEQ1M Q8T1 read: over time" not in first  # one run: no chart
        for _ in range(3):
            res = subprocess.run([*DISKSLEUTH, "check", dev, *CHECK], capture_output=True, text=True, timeout=300)
            assert res.returncode in (0, 1), res.stderr
    text = _report(cli, str(tmp_path / "four.html"))
    assert "too little history" not in text
    assert "4 run(s) of this drive measured this way" in text
    # One chart per test of the quick profile's reads (a raw device: reads only), each with the baseline band.
    for label in ("SEQ1M Q8T1 read", "RND4K Q32T1 read"):
        assert f"{name} · {label}: over time" in text
    assert text.count("baseline: median") == 2 and text.count("of 3 run(s), band ±") == 2
    assert re.search(r"run #4: [\d,.]+ MB/s", text) and re.search(r"run #4: [\d,.]+ IOPS", text)
    _self_contained(text)


def _runs(n: int) -> tuple[EarlierRun, ...]:
    return tuple(
        EarlierRun(i, f"2026-11-0{i}T10:00:00+0000", 1_793_000_000.0 + i * 86_400,
                   {"SEQ1M_Q8T1_read": TestFigures(1 << 20, read_mbps=500.0 + i, ci95_pct=2.0)})
        for i in range(n, 0, -1)
    )  # fmt: skip


def test_two_runs_are_too_little_history_but_still_drawn() -> None:
    b = Baseline(Choice("median"), None, status="too_little_history", reason="1 earlier run of sda measured this way")
    text = history_html(History(2, _runs(2), b), "sda")
    assert "too little history: 1 earlier run of sda measured this way (a baseline needs 3)." in text
    assert "sda · SEQ1M Q8T1 read: over time" in text and "baseline: median" not in text
