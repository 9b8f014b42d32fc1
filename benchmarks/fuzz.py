"""Fuzz every public parser of disksleuth and count crashes: the reliability table of docs/RELIABILITY.md.

    .venv/bin/python benchmarks/fuzz.py                  # 120,000 inputs, updates docs/RELIABILITY.md
    .venv/bin/python benchmarks/fuzz.py --no-write       # only prints the table
    .venv/bin/python benchmarks/fuzz.py --inputs 20000   # a quicker pass

Each parser gets the same share of inputs: mutations of the real fixtures it reads in the field (fio
JSON from tests/data/fio, smartctl JSON from tests/data/smartctl, the sysfs attribute values and
mountinfo files under tests/data/sysfs plus this machine's, an export of benchmarks/sample_run.json),
and random text and JSON. Mutations: characters inserted (controls, non-ASCII, brackets), spans
deleted, duplicated or truncated, and JSON values replaced by hostile ones (the wrong type, NaN,
Infinity, negative numbers, integers of 2^64, 2^128 and 5,000 digits, nesting 5,000 deep).

An outcome is "model" (a value was returned), "typed error" (the parser's documented error:
ParseError, or UsageError for command-line values) or "crash" (any other exception, which the CLI
shows as "internal error"). Parsers are looked up by name at run time, so fixes made elsewhere
(the store's import, the rate parser) show in the table. Target: 0 crashes everywhere.
Seeded (--seed), so a run can be repeated exactly.
"""

from __future__ import annotations

import argparse
import collections
import glob
import importlib
import json
import os
import random
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOC = os.path.join(ROOT, "docs", "RELIABILITY.md")
BEGIN, END = "<!-- fuzz:begin -->", "<!-- fuzz:end -->"
DATA = os.path.join(ROOT, "tests", "data")

HUGE_INT_TEXT = "9" * 5000  # past Python's 4,300-digit limit for int(); spliced in as text
HUGE_INT_MARK = "__huge_int__"
# Command-line values get floods of at most 4,096 characters (files get 70,000): parse_rate_mbps
# backtracks quadratically on a long run of spaces (16,000 take 4 s), which would make the run hours long.
ARGV_FLOOD = 4096


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


# --- seeds --------------------------------------------------------------------------------------


def seeds() -> dict[str, list[str]]:
    fio = [_read(p) for p in sorted(glob.glob(os.path.join(DATA, "fio", "*.json")))]
    smart = [_read(p) for p in sorted(glob.glob(os.path.join(DATA, "smartctl", "*.json")))]
    smart += [_read(p) for p in sorted(glob.glob(os.path.join(DATA, "smartctl-bad", "*")))]
    mountinfo = [_read(p) for p in sorted(glob.glob(os.path.join(DATA, "sysfs", "*", "proc", "self", "mountinfo")))]
    swaps = [_read(p) for p in sorted(glob.glob(os.path.join(DATA, "sysfs", "*", "proc", "swaps")))]
    for live, into in (("/proc/self/mountinfo", mountinfo), ("/proc/swaps", swaps)):
        if os.path.exists(live):
            into.append(_read(live))
    attrs: list[str] = []
    ios: list[str] = []
    for top, _, files in os.walk(os.path.join(DATA, "sysfs")):  # symlinks not followed: sysfs has loops
        for file_name in files:
            path = os.path.join(top, file_name)
            if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) < 4096:
                (ios if file_name == "ios" else attrs).append(_read(path).strip())
    attrs += ["8.0 GT/s PCIe", "2.5 GT/s", "Unknown", "Unknown speed", "6.0 Gbps", "<unknown>", "5000", "0x060400"]
    attrs += ["mq-deadline kyber [bfq] none", "[none] mq-deadline", "none"]
    sample = json.loads(_read(os.path.join(HERE, "sample_run.json")))
    export = json.dumps({"schema": "disksleuth/1", "kind": "export", "exported_at": "2026-11-21", "runs": [sample]})
    nvme = json.dumps(
        {"nsze": 488397168, "flbas": 1, "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}]}
    )
    sizes = ["1G", "512MiB", "500MB", "4096", "1.5G", " 64M ", "2TB", "0.5k"]
    rates = ["373MB/s", "1.2GB/s", "350MiB/s", "373", "1,243 MB/s", "480 Mb/s", "BW=599KiB/s", "= 373.60 MB/sec"]
    return {
        "fio": fio,
        "smartctl": smart,
        "nvme": [nvme],
        "mountinfo": mountinfo,
        "swaps": swaps,
        "attr": sorted(set(attrs)),
        "ios": ios or ["clock:\t\t200000000 Hz\nbus width:\t2 (4 bits)\ntiming spec:\t6 (sd uhs SDR104)\n"],
        "size": sizes,
        "rate": rates,
        "export": [export],
    }


# --- mutations ----------------------------------------------------------------------------------

ODD_CHARS = "\x00\x07\x1b\x7f\x9b\u202e\ufeff\\[]{}()\"':,.-+eE0123456789 \t\n٣Ⅷ½GTsbpK"
HOSTILE_TOKENS = [
    HUGE_INT_TEXT,
    "-" + HUGE_INT_TEXT,
    "NaN",
    "Infinity",
    "-Infinity",
    "-1",
    "1e999",
    str(2**64),
    str(2**128),
    "[" * 5000 + "]" * 5000,
    '{"a":' * 3000 + "1" + "}" * 3000,
    "null",
    "true",
    '""',
    "[]",
    "{}",
]


def hostile_value(rng: random.Random) -> object:
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([-1, -(2**63), 0, 2**64, 2**128, 10**30])
    if choice == 3:
        return rng.choice([float("nan"), float("inf"), float("-inf"), -0.5, 1e308])
    if choice == 4:
        return "".join(rng.choice(ODD_CHARS) for _ in range(rng.randrange(1, 30)))
    if choice == 5:
        return []
    if choice == 6:
        return {}
    if choice == 7:
        return [hostile_value(rng) for _ in range(rng.randrange(1, 4))]
    if choice == 8:
        return {rng.choice(["id", "ds", "jobs", "read", "x"]): hostile_value(rng)}
    if choice == 9:
        return "x" * rng.randrange(1000, 100_000)
    if choice == 10:
        return HUGE_INT_MARK  # becomes a 5,000-digit integer once serialised
    return rng.random() * 10**rng.randrange(0, 20)


def _paths(doc: object, prefix: tuple = (), limit: int = 400) -> list[tuple]:
    out = [prefix]
    stack = [(doc, prefix)]
    while stack and len(out) < limit:
        node, path = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            out.append((*path, key))
            stack.append((value, (*path, key)))
    return out


def _set(doc: object, path: tuple, value: object) -> object:
    if not path:
        return value
    node = doc
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]
    return doc


def mutate_json(text: str, rng: random.Random) -> str:
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        doc = None
    if doc is None:
        return mutate_text(text, rng)
    paths = _paths(doc)
    for _ in range(rng.randrange(1, 4)):
        doc = _set(doc, rng.choice(paths), hostile_value(rng))
        paths = _paths(doc)
    out = text[:start] + json.dumps(doc).replace(f'"{HUGE_INT_MARK}"', HUGE_INT_TEXT)
    if rng.random() < 0.3:
        at = rng.randrange(len(out) + 1)
        out = out[:at] + rng.choice(HOSTILE_TOKENS) + out[at:]
    return out


def mutate_text(text: str, rng: random.Random, flood_max: int = 70_000) -> str:
    out = text
    for _ in range(rng.randrange(1, 5)):
        n = len(out)
        at = rng.randrange(n + 1)
        op = rng.randrange(7)
        if op == 0:  # insert odd characters
            out = out[:at] + "".join(rng.choice(ODD_CHARS) for _ in range(rng.randrange(1, 8))) + out[at:]
        elif op == 1 and n:  # delete a span
            out = out[:at] + out[at + rng.randrange(1, 64) :]
        elif op == 2 and n:  # duplicate a span
            span = out[at : at + rng.randrange(1, 256)]
            out = out[:at] + span * rng.randrange(2, 50) + out[at:]
        elif op == 3:  # truncate
            out = out[:at]
        elif op == 4:  # a hostile token
            out = out[:at] + rng.choice(HOSTILE_TOKENS) + out[at:]
        elif op == 5 and n:  # replace a digit run with a huge or negative number
            out = out[:at] + rng.choice(["-", "", "1e400", HUGE_INT_TEXT[: rng.randrange(1, 5000)]]) + out[at:]
        else:  # a flood of one character (quadratic parsers show here)
            out = out[:at] + rng.choice("[({ \\0-") * rng.randrange(100, flood_max) + out[at:]
    return out


def random_input(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "".join(rng.choice(ODD_CHARS) for _ in range(rng.randrange(0, 200)))
    return json.dumps(hostile_value(rng)).replace(f'"{HUGE_INT_MARK}"', HUGE_INT_TEXT)


def make_input(kind_seeds: list[str], json_like: bool, rng: random.Random, flood_max: int) -> str:
    roll = rng.random()
    if roll < 0.15 or not kind_seeds:
        return random_input(rng)
    seed = rng.choice(kind_seeds)
    if json_like and roll < 0.7:
        return mutate_json(seed, rng)
    return mutate_text(seed, rng, flood_max)


# --- parsers ------------------------------------------------------------------------------------


def _fn(module: str, name: str) -> Callable:
    return getattr(importlib.import_module(module), name)


def _notes() -> object:
    return _fn("disksleuth.probe.sysfs", "Notes")()


def _status_stream(text: str) -> object:
    docs, _, _ = _fn("disksleuth.probe.fio_parse", "split_documents")(text)
    return [_fn("disksleuth.probe.fio_parse", "report_from_document")(d) for d in docs]


def _fio_with_aggregate(text: str) -> object:
    report = _fn("disksleuth.probe.fio_parse", "parse_fio_json")(text)
    return _fn("disksleuth.probe.fio_parse", "aggregate")(report) if report.jobs else report


def _sysfs(name: str, **kw: object) -> Callable[[str], object]:
    return lambda text: _fn("disksleuth.probe.sysfs", name)(text, "attr", _notes(), **kw)


# (name shown, seed kind, JSON input?, call, typed error class names)
PARSERS: list[tuple[str, str, bool, Callable[[str], object], tuple[str, ...]]] = [
    ("fio_parse.parse_fio_json (+ aggregate)", "fio", True, _fio_with_aggregate, ("ParseError",)),
    ("fio_parse.split_documents + report_from_document", "fio", True, _status_stream, ("ParseError",)),
    ("smart_parse.parse_smartctl_json", "smartctl", True, lambda t: _fn("disksleuth.probe.smart_parse",
        "parse_smartctl_json")(t), ("ParseError",)),  # fmt: skip
    ("smart_parse.parse_nvme_id_ns_json", "nvme", True, lambda t: _fn("disksleuth.probe.smart_parse",
        "parse_nvme_id_ns_json")(t), ("ParseError",)),  # fmt: skip
    ("mounts.parse_mountinfo", "mountinfo", False, lambda t: _fn("disksleuth.probe.mounts", "parse_mountinfo")(t), ()),
    ("mounts.parse_swaps", "swaps", False, lambda t: _fn("disksleuth.probe.mounts", "parse_swaps")(t), ()),
    ("sysfs.parse_int", "attr", False, _sysfs("parse_int"), ()),
    ("sysfs.parse_int (hex)", "attr", False, _sysfs("parse_int", base=16), ()),
    ("sysfs.parse_pcie_speed", "attr", False, _sysfs("parse_pcie_speed"), ()),
    ("sysfs.parse_pcie_width", "attr", False, _sysfs("parse_pcie_width"), ()),
    ("sysfs.parse_sata_speed", "attr", False, _sysfs("parse_sata_speed"), ()),
    ("sysfs.parse_usb_speed", "attr", False, _sysfs("parse_usb_speed"), ()),
    ("sysfs.parse_scheduler", "attr", False, lambda t: _fn("disksleuth.probe.sysfs", "parse_scheduler")(t), ()),
    ("sysfs.parse_mmc_ios", "ios", False, lambda t: _fn("disksleuth.probe.sysfs", "parse_mmc_ios")(t), ()),
    ("units.parse_size (--size)", "size", False, lambda t: _fn("disksleuth.units", "parse_size")(t), ("UsageError",)),
    ("units.parse_rate_mbps (--read)", "rate", False, lambda t: _fn("disksleuth.units", "parse_rate_mbps")(t),
        ("UsageError",)),  # fmt: skip
    ("store.files.read_export (import)", "export", True, lambda t: _fn("disksleuth.store.files", "read_export")(t, "x"),
        ("ParseError",)),  # fmt: skip
]


def fuzz(total: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    corpus = seeds()
    share = -(-total // len(PARSERS))
    results = []
    for name, kind, json_like, call, typed in PARSERS:
        counts: collections.Counter[str] = collections.Counter()
        crashes: collections.Counter[str] = collections.Counter()
        slowest = 0.0
        try:
            call(corpus[kind][0] if corpus[kind] else "")
        except AttributeError as exc:  # a parser this version does not have
            if "has no attribute" in str(exc):
                results.append({"parser": name, "inputs": 0, "missing": True})
                continue
        except Exception:  # noqa: BLE001 - judged below like any other input
            pass
        for _ in range(share):
            text = make_input(corpus[kind], json_like, rng, ARGV_FLOOD if kind in ("size", "rate") else 70_000)
            started = time.perf_counter()
            try:
                call(text)
                counts["model"] += 1
            except Exception as exc:  # noqa: BLE001 - counting is the point
                if type(exc).__name__ in typed:
                    counts["typed"] += 1
                else:
                    counts["crash"] += 1
                    crashes[f"{type(exc).__name__}: {str(exc)[:60]}"] += 1
            slowest = max(slowest, time.perf_counter() - started)
        results.append(
            {
                "parser": name,
                "inputs": share,
                "model": counts["model"],
                "typed": counts["typed"],
                "crash": counts["crash"],
                "slowest_ms": slowest * 1000,
                "crash_kinds": crashes.most_common(3),
            }
        )
        print(f"{name}: {counts['crash']} crashes of {share}", file=sys.stderr)
    return results


def table(results: list[dict], total_s: float, seed: int) -> str:
    lines = [
        "| parser | inputs | model | typed error | crashes | slowest input |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r.get("missing"):
            lines.append(f"| `{r['parser']}` | — | — | — | not in this version | — |")
            continue
        lines.append(
            f"| `{r['parser']}` | {r['inputs']:,} | {r['model']:,} | {r['typed']:,} | **{r['crash']:,}** "
            f"| {r['slowest_ms']:,.1f} ms |"
        )
    inputs = sum(r["inputs"] for r in results)
    crashes = sum(r.get("crash", 0) for r in results)
    lines.append(f"| **all** | **{inputs:,}** | | | **{crashes:,}** | |")
    lines.append("")
    lines.append(f"Seed {seed}, {total_s:.0f} s on this machine (Python {sys.version.split()[0]}).")
    kinds = [(r["parser"], k, n) for r in results for k, n in r.get("crash_kinds", [])]
    if kinds:
        lines.append("")
        lines.append("Crashes seen (most common first, per parser):")
        lines.append("")
        for parser, kind, n in kinds:
            lines.append(f"- `{parser}`: {n:,} × `{kind}`")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=120_000)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    results = fuzz(args.inputs, args.seed)
    text = table(results, time.monotonic() - started, args.seed)
    print(text)
    if not args.no_write:
        with open(DOC, encoding="utf-8") as fh:
            doc = fh.read()
        head, _, rest = doc.partition(BEGIN)
        _, _, tail = rest.partition(END)
        with open(DOC, "w", encoding="utf-8") as fh:
            fh.write(f"{head}{BEGIN}\n{text}{END}{tail}")
    return 0 if all(r.get("crash", 0) == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
