"""Property-based tests: every parser, given any input, returns a model or raises the library's typed
error (ParseError, or UsageError for command-line values) — never anything else.

Inputs are arbitrary text, arbitrary JSON, and the real fixtures with one value swapped for a hostile
one (wrong type, NaN/Infinity, a 5,000-digit integer, a negative number, deep nesting). The example
counts keep the whole module near 20 s; benchmarks/fuzz.py runs the long version.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import fields, is_dataclass

from conftest import FIO_FIXTURES, SMARTCTL_FIXTURES
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from disksleuth.errors import ParseError, UsageError
from disksleuth.model.run import Health, LbaFormat
from disksleuth.probe.fio_parse import aggregate, parse_fio_json, report_from_document, split_documents
from disksleuth.probe.mounts import MountTable, parse_mountinfo, parse_swaps
from disksleuth.probe.smart_parse import parse_nvme_id_ns_json, parse_smartctl_json
from disksleuth.probe.sysfs import (
    Notes,
    parse_int,
    parse_mmc_ios,
    parse_pcie_speed,
    parse_pcie_width,
    parse_sata_speed,
    parse_scheduler,
    parse_usb_speed,
)
from disksleuth.units import parse_size

FAST = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _load(folder: str, ext: str = ".json") -> list[str]:
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(ext):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                out.append(fh.read())
    return out


FIO_TEXTS = _load(FIO_FIXTURES)
SMART_TEXTS = _load(SMARTCTL_FIXTURES)
NVME_ID_NS = json.dumps(
    {"nsze": 488397168, "flbas": 0, "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 1}]}
)

HOSTILE_TEXT = [
    "1" * 5000,  # past Python's 4,300-digit int limit
    "-1",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "[" * 5000 + "]" * 5000,  # deeper than the recursion limit
    '{"a":' * 3000 + "1" + "}" * 3000,
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from([-1, 0, 2**64, 2**128, -(2**63)])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            out += _paths(v, (*prefix, i))
    return out


def _replace(doc: object, path: tuple, value: object) -> object:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: _replace(doc[head], rest, value)}
    copy = list(doc)  # type: ignore[call-overload]
    copy[head] = _replace(copy[head], rest, value)
    return copy


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    """A real fixture with one value (or a whole subtree) replaced, serialised as Python's json does
    (NaN and Infinity included), sometimes with a raw hostile token spliced in."""
    text = draw(st.sampled_from(texts))
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        doc = None
    if doc is None:
        return text
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        doc = _replace(doc, path, draw(json_values))
    out = text[:start] + json.dumps(doc)
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(out)))
        out = out[:cut] + draw(st.sampled_from(HOSTILE_TEXT)) + out[cut:]
    return out


any_json_text = json_values.map(json.dumps)
fio_inputs = st.one_of(mutated(FIO_TEXTS), any_json_text, st.text(max_size=200), st.sampled_from(HOSTILE_TEXT))
smart_inputs = st.one_of(
    mutated(SMART_TEXTS),
    any_json_text,
    json_values.map(lambda v: json.dumps({"json_format_version": [1, 0], "model_name": "x", "smartctl": v})),
    st.text(max_size=200),
    st.sampled_from(HOSTILE_TEXT),
)


def check_model(obj: object) -> None:
    """Numbers in a model are finite, strings are strings: nothing that later crashes a renderer."""
    if isinstance(obj, float):
        assert math.isfinite(obj), obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            check_model(item)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            check_model(k)
            check_model(v)
    elif is_dataclass(obj):
        for f in fields(obj):
            check_model(getattr(obj, f.name))


def model_or_parse_error(fn, *args):  # noqa: ANN001, ANN201
    try:
        result = fn(*args)
    except ParseError:
        return None
    check_model(result)
    return result


@FAST
@given(fio_inputs)
def test_parse_fio_json(text):
    report = model_or_parse_error(parse_fio_json, text)
    if report is not None and report.jobs:
        check_model(aggregate(report))


@FAST
@given(fio_inputs)
def test_split_documents_and_report_from_document(text):
    try:
        docs, stray, rest = split_documents(text)
    except ParseError:
        return
    assert all(isinstance(d, dict) for d in docs) and isinstance(rest, str)
    for doc in docs:
        model_or_parse_error(report_from_document, doc)


@FAST
@given(json_values)
def test_report_from_any_document(doc):
    model_or_parse_error(report_from_document, doc)


@FAST
@given(smart_inputs)
def test_parse_smartctl_json(text):
    health = model_or_parse_error(parse_smartctl_json, text)
    if health is not None:
        assert isinstance(health, Health)
        for name in ("device", "protocol", "model", "serial", "firmware"):
            assert getattr(health, name) is None or isinstance(getattr(health, name), str)
        assert health.smart_passed in (None, True, False)


@FAST
@given(st.one_of(mutated([NVME_ID_NS]), any_json_text, st.text(max_size=100), st.sampled_from(HOSTILE_TEXT)))
def test_parse_nvme_id_ns_json(text):
    formats = model_or_parse_error(parse_nvme_id_ns_json, text)
    for f in formats or ():
        assert isinstance(f, LbaFormat) and 512 <= f.data_bytes <= 1 << 32


mount_line = st.lists(
    st.one_of(st.text(max_size=12), st.sampled_from(["-", "\\040", "\\999", "\\1", "259:1", "/dev/sda1"])),
    max_size=12,
).map(" ".join)


@FAST
@given(st.one_of(st.text(max_size=300), st.lists(mount_line, max_size=6).map("\n".join)))
def test_parse_mountinfo_and_swaps(text):
    assert isinstance(parse_mountinfo(text), MountTable)
    assert all(isinstance(s, str) for s in parse_swaps(text))


sysfs_values = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["8.0 GT/s PCIe", "5 GT/s", "Unknown", "6.0 Gbps", "<unknown>", "nan GT/s", "inf", "-4", "0x0604"]),
    st.sampled_from(HOSTILE_TEXT),
    st.none(),
)


@FAST
@given(sysfs_values)
def test_sysfs_value_parsers(text):
    notes = Notes()
    for base in (10, 16):
        value = parse_int(text, "x", notes, base=base)
        assert value is None or (isinstance(value, int) and value >= 0)
    for parse in (parse_pcie_speed, parse_sata_speed, parse_usb_speed):
        value = parse(text, "x", notes)
        assert value is None or (math.isfinite(value) and value > 0)
    width = parse_pcie_width(text, "x", notes)
    assert width is None or 1 <= width <= 32
    if text is not None:
        timing, clock, bus = parse_mmc_ios(text)
        assert timing is None or isinstance(timing, str)
        scheduler = parse_scheduler(text)
        assert scheduler is None or isinstance(scheduler, str)
    assert all(len(n) < 300 for n in notes.items)


@FAST
@given(st.one_of(st.text(max_size=40), st.from_regex(r"\s*[0-9.]{1,60}\s*[kKmMgGtTiIbB]{0,3}\s*", fullmatch=True)))
@example("9" * 400)  # float() of it is inf: int(inf) raised OverflowError
@example("0.0000001k")  # rounded down to a 0-byte size
def test_parse_size(text):
    try:
        value = parse_size(text)
    except UsageError:
        return
    assert isinstance(value, int) and 1 <= value <= 1 << 60
