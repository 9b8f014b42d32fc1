"""Every command's --json output is valid against the JSON Schema that ships in the package
(disksleuth/doc/schema.json), and the schema can fail: a document with a key it requires removed, a figure of
the wrong type or a severity it does not know is rejected.

Each document is checked against its own definition in the schema's $defs (for a precise message) and
against the whole schema (an `anyOf` over every document). Inventory commands read tests/data/sysfs trees,
health reads tests/data/smartctl, the store commands read a throwaway store filled by `import` of
tests/data/store/real-runs-export.json (real runs from this project's VM). The benchmark commands run real
fio on a small file (slow)."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from conftest import DATA, SMARTCTL_FIXTURES, SYSFS, needs_fio, result_with_series
from jsonschema import Draft202012Validator

from disksleuth.cli import build_parser, main
from disksleuth.cli.env import Environment
from disksleuth.doc.schema import load_schema

TREE = os.path.join(SYSFS, "scenario_gen4_on_gen3")  # an NVMe drive behind a PCIe link
EXPORT = os.path.join(DATA, "store", "real-runs-export.json")  # runs 1-4: riscos, mixed, quick on vda, quick
SMARTCTL = os.path.join(SMARTCTL_FIXTURES, "WDC_WD20EFRX-68EUZN0_17.json")

SCHEMA = load_schema()
WHOLE = Draft202012Validator(SCHEMA)


def validator(name: str) -> Draft202012Validator:
    """The schema narrowed to one document of its $defs (same $id and $defs, so its references resolve)."""
    assert name in SCHEMA["$defs"], name
    narrowed = {k: v for k, v in SCHEMA.items() if k != "anyOf"}
    return Draft202012Validator({**narrowed, "$ref": f"#/$defs/{name}"})


def assert_valid(doc: dict, name: str) -> None:
    validator(name).validate(doc)  # raises with the path and the reason
    WHOLE.validate(doc)


def is_valid(doc: dict, name: str | None = None) -> bool:
    return (validator(name) if name else WHOLE).is_valid(doc)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$defs"]["schema_tag"]["const"] == "disksleuth/1"
    for ref in SCHEMA["anyOf"]:  # every document requires its schema tag
        document = SCHEMA["$defs"][ref["$ref"].rsplit("/", 1)[1]]
        assert "schema" in document["required"]
        assert document["properties"]["schema"] == {"$ref": "#/$defs/schema_tag"}
    assert not WHOLE.is_valid({"schema": "disksleuth/1"})  # no document is only a tag


# --- the store commands read a store filled once by `import` -----------------------------------------


def _run(*argv: str) -> tuple[int, dict]:
    out = io.StringIO()
    env = Environment(io.StringIO(), out, io.StringIO(), dict(os.environ), False, False, False)
    code = main(list(argv), env=env)
    return code, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("schema-store") / "runs.sqlite")
    code, doc = _run("import", EXPORT, "--db", db, "--json")
    assert code == 0 and doc["imported"] == [1, 2, 3, 4], doc
    assert_valid(doc, "import")
    return db


# (arguments, the $defs document, the exit codes it may give); {db} and {tmp} are filled in.
CASES: dict[str, tuple[tuple[str, ...], str, frozenset[int]]] = {
    "list": (("list", "--sysfs-root", TREE), "list", frozenset({0})),
    "links": (("links", "--sysfs-root", TREE), "links", frozenset({0})),
    "capture": (("capture", "-o", "{tmp}/capture.tar.gz", "--sysfs-root", TREE), "capture", frozenset({0})),
    "explain": (
        ("explain", "nvme0n1", "--sysfs-root", TREE, "--read", "1.2GB/s", "--write-iops", "42.9k"),
        "explain",
        frozenset({0, 1}),
    ),
    "explain, no figures": (("explain", "nvme0n1", "--sysfs-root", TREE), "explain", frozenset({0, 1})),
    "explain FILE (pasted)": (
        (
            "explain",
            os.path.join(DATA, "paste", "smartctl", "linuxhw-ata-HDS721010DLE630-E2B8EB3D132B.txt"),
            os.path.join(DATA, "paste", "lspci", "rendered", "lspci390-vvnn-cap-phy32.txt"),
            os.path.join(DATA, "paste", "hdparm", "pippim-askubuntu-1033986-hdparm-tT.txt"),
        ),
        "explain",
        frozenset({1}),
    ),
    "health": (("health", "--from-smartctl", SMARTCTL), "health", frozenset({0, 1})),
    "runs": (("runs", "--db", "{db}"), "runs", frozenset({0})),
    "runs list --tag": (("runs", "list", "--tag", "nothing-has-it", "--db", "{db}"), "runs", frozenset({0})),
    "runs prune --dry-run": (
        ("runs", "prune", "--tag", "mixed", "--dry-run", "--db", "{db}"),
        "runs_deleted",
        frozenset({0}),
    ),
    "show riscos (with reference)": (("show", "1", "--db", "{db}"), "stored_run_document", frozenset({0})),
    "show mixed": (("show", "2", "--db", "{db}"), "stored_run_document", frozenset({0})),
    "show quick on a device": (("show", "3", "--db", "{db}"), "stored_run_document", frozenset({0})),
    "compare": (("compare", "1", "2", "3", "--db", "{db}"), "compare", frozenset({0})),
    "compare --relative-to": (("compare", "3", "4", "--relative-to", "4", "--db", "{db}"), "compare", frozenset({0})),
    # Run 1 (riscos) has no test in common with 3 and 4 (quick): nothing to compare, an error document.
    "error: nothing to compare": (("compare", "3", "4", "--relative-to", "1", "--db", "{db}"), "error", frozenset({2})),
    "compare --format json": (("compare", "3", "4", "--format", "json", "--db", "{db}"), "compare", frozenset({0})),
    "report": (("report", "2", "-o", "{tmp}/report.html", "--db", "{db}"), "report", frozenset({0})),
    "report --fleet": (("report", "--fleet", "-o", "{tmp}/fleet.html", "--db", "{db}"), "report", frozenset({0})),
    "export": (("export", "1", "2", "3", "4", "-o", "{tmp}/export.json", "--db", "{db}"), "export", frozenset({0})),
    "import again (all skipped)": (("import", EXPORT, "--db", "{db}"), "import", frozenset({0})),
    "fleet": (("fleet", "--db", "{db}"), "fleet", frozenset({0, 1})),
    "completion": (("completion", "fish"), "completion", frozenset({0})),
    "manpage": (("manpage",), "manpage", frozenset({0})),
    "exporter --textfile": (
        ("exporter", "--textfile", "{tmp}", "--no-health", "--sysfs-root", TREE, "--db", "{db}"),
        "exporter",
        frozenset({0}),
    ),
    "top --once": (("top", "--once", "--seconds", "0.2"), "top", frozenset({0, 1})),
    "watch": (
        ("watch", "--sysfs-root", os.path.join(SYSFS, "array_raid1_failing_member"), "--db", "{db}"),
        "watch",
        frozenset({1}),
    ),
    "watch --install": (("watch", "--install", "--unit-dir", "{tmp}", "--db", "{db}"), "watch_units", frozenset({0})),
    "error: a bad sample length": (("top", "--seconds", "0"), "error", frozenset({2})),
    "error: an unknown option": (("list", "--bogus"), "error", frozenset({2})),
    "error: a missing run": (("show", "999", "--db", "{db}"), "error", frozenset({2})),
    "error: a missing device": (("explain", "nosuchdev", "--sysfs-root", TREE), "error", frozenset({2})),
    "error: not a smartctl file": (("health", "--from-smartctl", "/nonexistent.json"), "error", frozenset({2})),
}


@pytest.mark.parametrize("case", list(CASES))
def test_json_output_is_valid(cli, store, tmp_path, case):
    argv, name, codes = CASES[case]
    argv = tuple(a.replace("{db}", store).replace("{tmp}", str(tmp_path)) for a in argv)
    res = cli(*argv, "--json")
    assert res.code in codes, (res.code, res.err)
    assert_valid(res.json(), name)


@pytest.mark.parametrize("tree", sorted(t for t in os.listdir(SYSFS) if os.path.isdir(os.path.join(SYSFS, t, "sys"))))
def test_list_and_links_of_every_sysfs_tree(cli, tree):
    """Every recorded machine: PCIe, SATA, USB and MMC hops, partitions, malformed sysfs."""
    for argv, name in ((("list", "--all"), "list"), (("links",), "links")):
        res = cli(*argv, "--sysfs-root", os.path.join(SYSFS, tree), "--json")
        assert res.code == 0, res.err
        assert_valid(res.json(), name)


def test_export_file_is_valid(cli, store, tmp_path):
    """The file `export -o` writes (what `import` reads), serial numbers only hashed."""
    path = tmp_path / "export.json"
    assert cli("export", "1", "2", "3", "4", "-o", str(path), "--db", store, "--json").code == 0
    bundle = json.loads(path.read_text())
    assert_valid(bundle, "export_file")
    assert len(bundle["runs"]) == 4
    with_serial = copy.deepcopy(bundle)
    with_serial["runs"][2]["device"]["serial"] = "S4EUNX0N123456"  # run 3 has a device
    assert not is_valid(with_serial, "export_file")


def test_runs_delete_is_valid(cli, tmp_path):
    db = str(tmp_path / "own.sqlite")  # its own store: it deletes
    assert cli("import", EXPORT, "--db", db, "--json").code == 0
    res = cli("runs", "delete", "2", "--db", db, "--json")
    assert res.code == 0 and res.json()["deleted"] == [2]
    assert_valid(res.json(), "runs_deleted")


def test_no_command_is_an_error_document(cli):
    res = cli("--json")
    assert res.code == 2
    assert_valid(res.json(), "error")


def test_exporter_listen_documents_are_valid(tmp_path):
    """`exporter --listen --json` prints where it serves once ready, and nothing more when stopped (SIGTERM):
    one document per invocation (test_one_document.py)."""
    import disksleuth

    src = os.path.dirname(os.path.dirname(disksleuth.__file__))  # the disksleuth under test, not another
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    argv = [sys.executable, "-m", "disksleuth", "exporter", "--listen", "127.0.0.1:0", "--no-health", "--no-bench"]
    proc = subprocess.Popen(
        [*argv, "--sysfs-root", TREE, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        lines = []
        while not lines or lines[-1] != "}\n":  # emit() indents: the document ends with "}" alone
            line = proc.stdout.readline()
            assert line, f"exporter ended before it was ready: {proc.stderr.read()}"
            lines.append(line)
        ready = json.loads("".join(lines))
        assert_valid(ready, "exporter")
        assert ready["exporter"]["url"].startswith("http://127.0.0.1:")
        proc.send_signal(signal.SIGTERM)
        rest, _err = proc.communicate(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + 15
    assert rest == ""


def test_every_command_has_a_case():
    """A command added later fails here until its --json document is validated above."""
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    # check and bench: the slow tests below; verify writes across a device: tests/test_verify.py validates its
    # documents on loop devices (a good one, fake ones, a stopped run)
    covered = {c[0][0] for c in CASES.values()} | {"check", "bench", "verify"}
    assert set(sub.choices) <= covered, set(sub.choices) - covered


# --- the run document of check and bench, built without fio --------------------------------------------


def _run_document(with_fill: bool) -> dict:
    """A run document as check and bench build it (doc.run.run_document), from a real device of a sysfs
    tree and a recorded result: the fast lane's look at the document the slow tests below get from fio."""
    from disksleuth.doc import SCHEMA as TAG
    from disksleuth.doc.run import run_document
    from disksleuth.model.run import Run
    from disksleuth.model.sustained import FillPoint, Phase, Sustained
    from disksleuth.run.inventory import devices

    row = devices(TREE)[0]
    test = result_with_series([900.0, 910.0, 905.0])
    if with_fill:
        fill = Sustained(
            written_bytes=3 << 30,
            duration_s=6.0,
            cache_exhausted_at_bytes=1 << 30,
            burst_mbps=1200.0,
            sustained_mbps=300.0,
            phases=(Phase(0, 1 << 30, 0.0, 1.0, 1200.0), Phase(1 << 30, 3 << 30, 1.0, 6.0, 300.0)),
            cause="cache",
            points=tuple(FillPoint(0.5 * i, (i * 3 << 30) // 12, 600.0) for i in range(1, 13)),
        )
        test = dataclasses.replace(test, id="SEQ1M_Q4T1_fill", rw="write", sustained=fill)
    run = Run(
        target="/mnt/x",
        profile="sustained" if with_fill else "quick",
        started_at="2026-11-24T08:00:00+0000",
        fio_version="fio-3.33",
        engine="io_uring",
        host={"hostname": "h", "kernel": "6.1", "cpus": 2},
        tests=(test,),
        kind="check",
        device=row.device.name,
    )
    doc = run_document(run, row.device, row.chain, row.findings, "a summary", skipped=("health: no smartctl",))
    return json.loads(json.dumps({"schema": TAG, **doc}, default=str))  # as emit() prints it


@pytest.mark.parametrize("with_fill", [False, True], ids=["quick", "sustained"])
def test_run_document_is_valid(with_fill):
    doc = _run_document(with_fill)
    assert_valid(doc, "run_document")
    assert ("sustained" in doc) is with_fill


# --- the schema fails: keys removed, wrong types, unknown words ------------------------------------------


def _drop(path: str):
    def mutate(doc: dict) -> None:
        *parents, last = path.split(".")
        node = doc
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        del node[int(last) if last.isdigit() else last]

    return mutate


def _set(path: str, value):
    def mutate(doc: dict) -> None:
        *parents, last = path.split(".")
        node = doc
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[last] = value

    return mutate


BROKEN = {
    "no summary": _drop("summary"),
    "no skipped": _drop("skipped"),
    "no device": _drop("device"),
    "no run.started_at": _drop("run.started_at"),
    "no tests[0].read_mbps": _drop("tests.0.read_mbps"),
    "no tests[0].lat_p99_us": _drop("tests.0.lat_p99_us"),
    "no tests[0].ci95_pct": _drop("tests.0.ci95_pct"),
    "no health.not_read_reason": _drop("health.not_read_reason"),
    "no device.link": _drop("device.link"),
    "no device.link.hops[0].label": _drop("device.link.hops.0.label"),
    "no device.link.hops[0].width (a PCIe hop)": _drop("device.link.hops.0.width"),
    "no device.transport": _drop("device.transport"),
    "read_mbps as text": _set("tests.0.read_mbps", "905"),
    "a negative read_mbps": _set("tests.0.read_mbps", -1.0),
    "ci95_pct as text": _set("tests.0.ci95_pct", "3%"),
    "a severity it does not know": _set("findings.0.severity", "bad"),
    "a finding without a hint": _drop("findings.0.hint"),
    "an unknown kind": _set("run.kind", "guess"),
    "another schema": _set("schema", "disksleuth/2"),
}


@pytest.mark.parametrize("what", list(BROKEN))
def test_schema_rejects_a_broken_run_document(what):
    doc = _run_document(with_fill=False)
    assert doc["findings"] and doc["device"]["link"]["hops"][0]["kind"] == "pcie"  # what BROKEN breaks is there
    BROKEN[what](doc)
    assert not is_valid(doc, "run_document")
    assert not is_valid(doc)


def test_schema_rejects_a_fill_without_the_top_level_sustained():
    """Issue 14: check --profile sustained --json once lacked the top-level `sustained` that bench had."""
    doc = _run_document(with_fill=True)
    del doc["sustained"]
    assert not is_valid(doc, "run_document")
    assert not is_valid(doc)
    doc = _run_document(with_fill=True)
    del doc["sustained"]["phases"][0]["mbps"]
    assert not is_valid(doc)


@pytest.mark.parametrize(
    "case", ["list", "links", "health", "explain", "runs", "fleet", "compare", "error: a missing run"]
)
def test_schema_rejects_each_required_key_removed(cli, store, tmp_path, case):
    """Every key a document has at the top (and in its first nested object) is required: drop any one and
    the whole schema rejects the document."""
    argv, name, _codes = CASES[case]
    doc = cli(*(a.replace("{db}", store).replace("{tmp}", str(tmp_path)) for a in argv), "--json").json()
    assert_valid(doc, name)
    paths = [[k] for k in doc]
    for k, v in doc.items():
        inner = v[0] if isinstance(v, list) and v and isinstance(v[0], dict) else v
        if isinstance(inner, dict):
            paths += [[k, *([0] if isinstance(v, list) else []), kk] for kk in inner]
    for path in paths:
        if path[0] == "findings" and path[-1] == "device":
            continue  # a finding names its device only when it is about one
        broken = copy.deepcopy(doc)
        node = broken
        for p in path[:-1]:
            node = node[p]
        del node[path[-1]]
        assert not is_valid(broken), f"{case}: still valid without {'.'.join(map(str, path))}"


def test_stored_run_keeps_serials_hashed(cli, store):
    doc = cli("show", "3", "--db", store, "--json").json()
    assert "serial_sha256" in doc["device"]
    doc["device"]["serial"] = "S4EUNX0N123456"
    assert not is_valid(doc, "stored_run_document")
    assert not is_valid(doc)


# --- the model's fields are all typed in the schema ------------------------------------------------------


def test_schema_types_every_field_of_the_models():
    """A field added to a model that a document carries gets a type in the schema too (fields are only
    added: consumers' validators keep accepting documents either way, as objects stay open)."""
    from disksleuth.analysis.fleet import FleetRow
    from disksleuth.model import MmcHop, PcieHop, SataHop, UsbHop, VirtualHop
    from disksleuth.model.run import Health, LbaFormat, SelfTest, SeriesPoint, SmartAttribute, TestResult
    from disksleuth.model.sustained import Sustained

    defs = SCHEMA["$defs"]

    def props(name: str) -> set[str]:
        return set(defs[name]["properties"])

    def names(cls) -> set[str]:
        return {f.name for f in dataclasses.fields(cls)}

    assert names(TestResult) <= props("test")
    assert names(TestResult) <= props("stored_test")
    assert names(SeriesPoint) <= props("series_point")
    health_id = {"device", "model", "serial", "firmware", "protocol", "capacity_bytes"}  # in `device` instead
    assert names(Health) - health_id <= props("health_record")
    assert health_id - {"device"} | {"name"} <= props("health_device")
    assert names(LbaFormat) <= props("lba_format")
    assert names(SmartAttribute) <= props("smart_attribute")
    assert names(SelfTest) <= props("self_test")
    assert names(FleetRow) <= set(defs["fleet"]["properties"]["fleet"]["properties"]["rows"]["items"]["properties"])
    # sustained_to_dict writes `temperatures` as temperature_series
    assert names(Sustained) - {"temperatures"} | {"temperature_series", "mbps"} <= props("sustained")
    hop_props = props("hop")
    for branch in defs["hop"]["allOf"]:
        hop_props |= set(branch["then"]["properties"])
    for cls in (PcieHop, UsbHop, SataHop, MmcHop, VirtualHop):
        assert names(cls) <= hop_props, cls.__name__


# --- check and bench on real fio ------------------------------------------------------------------------


def _skeleton(doc: dict) -> dict:
    """The keys of a run document: at the top, and of each object one level down (first test's too)."""
    out: dict = {"": set(doc)}
    for k, v in doc.items():
        if isinstance(v, dict):
            out[k] = set(v)
    out["tests[0]"] = set(doc["tests"][0]) if doc["tests"] else set()
    return out


@pytest.mark.slow
@needs_fio
@pytest.mark.parametrize("command", ["check", "bench"])
def test_check_and_bench_documents_are_valid(cli, tmp_path, command):
    target = tmp_path / "target"
    target.mkdir()
    res = cli(command, str(target), "--json", "--size", "16M", "--time", "1", "--no-save")
    assert res.code in (0, 1), res.err
    doc = res.json()
    assert doc["tests"], doc["skipped"]
    assert_valid(doc, "run_document")


@pytest.mark.slow
@needs_fio
def test_sustained_check_and_bench_give_the_same_keys(cli, tmp_path):
    """Issue 19: `check --profile sustained` had no top-level `sustained` while `bench` had one. Both now
    give the same keys, both valid, and both read back from the store (show) valid too."""
    target = tmp_path / "target"
    target.mkdir()
    db = str(tmp_path / "runs.sqlite")
    check = cli("check", str(target), "--json", "--profile", "sustained", "--size", "64M", "--db", db)
    bench = cli(
        "bench", str(target), "--json", "--profile", "sustained", "--size", "64M", "--max-time", "5", "--db", db
    )
    assert check.code in (0, 1) and bench.code in (0, 1), (check.err, bench.err)
    check_doc, bench_doc = check.json(), bench.json()
    assert "sustained" in check_doc and "sustained" in bench_doc
    assert _skeleton(check_doc) == _skeleton(bench_doc)
    assert set(check_doc["sustained"]) == set(bench_doc["sustained"])
    for doc in (check_doc, bench_doc):
        assert_valid(doc, "run_document")
        shown = cli("show", str(doc["run"]["id"]), "--db", db, "--json")
        assert shown.code == 0, shown.err
        assert_valid(shown.json(), "stored_run_document")
        assert shown.json()["sustained"] == doc["sustained"]
