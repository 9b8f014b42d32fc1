"""Hostile inputs to the parsers through the ways users meet them: one clear line, never an internal
error, and no input that takes minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import SMARTCTL_FIXTURES


@pytest.mark.parametrize("size", ["9" * 400, "0.0000001k", "1" + " " * 50_000 + "!"])
def test_size_values_are_one_clear_line(cli, tmp_path, size):
    res = cli("bench", str(tmp_path), "--size", size)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "internal error" not in res.err and "size" in res.err


def _insert_after(key: str, extra: str):  # noqa: ANN202
    return lambda text: text.replace(f'"{key}": {{', f'"{key}": {{{extra}', 1)


def _wrong_types(text: str) -> str:
    doc = json.loads(text)
    doc.update({"smartctl": [], "nvme_smart_health_information_log": 5, "model_name": {"a": 1}})
    return json.dumps(doc)


def _tables_of_the_wrong_type(text: str) -> str:
    # Found by benchmarks/fuzz.py in the -A attribute and self-test readers: `x or []` let 1.5 through.
    doc = json.loads(text)
    doc["ata_smart_attributes"] = {"table": 1.5}
    doc["nvme_self_test_log"] = {"table": True}
    doc["nvme_smart_health_information_log"]["temperature_sensors"] = 7
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("label", "mutate"),
    [
        ("huge integer", _insert_after("power_on_time", '"x": ' + "9" * 5000 + ",")),
        ("NaN", _insert_after("temperature", '"current": NaN}, "was_temperature": {')),
        ("deep nesting", _insert_after("temperature", '"x": ' + "[" * 5000 + "]" * 5000 + ",")),
        ("wrong types", _wrong_types),
        ("tables of the wrong type", _tables_of_the_wrong_type),
    ],
)
def test_hostile_smartctl_files_are_one_clear_line(cli, tmp_path, label, mutate):
    with open(os.path.join(SMARTCTL_FIXTURES, "nvme-null-CT250P2SSD8-nvme0.json")) as fh:
        text = mutate(fh.read())
    path = tmp_path / "smartctl.json"
    path.write_text(text)
    res = cli("health", "--from-smartctl", str(path), "--attributes")
    assert "internal error" not in res.err, f"{label}: {res.err}"
    assert res.code in (0, 1) or (res.code == 2 and res.err.count("\n") == 1), res.err


def test_fio_noise_lines_parse_in_linear_time():
    """60,000 'fio:' lines before a truncated document took 87 s (a list lookup per line)."""
    code = (
        "from disksleuth.errors import ParseError\n"
        "from disksleuth.probe.fio_parse import parse_fio_json\n"
        "text = '{\"jobs\": [\\n' + ''.join(f'fio: noise {i}\\n' for i in range(60000))\n"
        "try:\n    parse_fio_json(text)\nexcept ParseError:\n    pass\n"
    )
    try:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("parse_fio_json took more than 20 s on 60,000 noise lines")
