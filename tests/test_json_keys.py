"""Golden key sets for every command's --json document: an added key needs a golden update, a dropped or
renamed key fails here.

A document's key paths are its nested keys joined by dots, with a list's items collapsed to `[]` and their
keys united (`tests[].read_mbps`); a key whose value is null, empty or a scalar is a path as well. Each case
runs one or more invocations through the `cli` fixture on cheap, real inputs (the sysfs trees and smartctl
captures under tests/data, a store filled by `import` of tests/data/store and benchmarks/sample_run.json,
and real fio on a small file in /dev/shm) and compares the union of their paths with
tests/data/golden/json_keys/<command>.json, which holds {case: [paths]}.

To accept a change on purpose: DISKSLEUTH_REGEN_GOLDEN=1 pytest tests/test_json_keys.py, then review the
diff of tests/data/golden/json_keys/ like any other change of the documents' shape (DESIGN.md: fields are
only ever added, never renamed).

Two kinds of dict hold data, not schema, so only the dict itself is pinned, not its keys: SMART error counts
keyed by attribute name, and, in measured documents (check, bench), a finding's evidence, since which
findings a measurement gives depends on the measurement."""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from conftest import DATA, SAMPLE_RUN, SMARTCTL_FIXTURES, SYSFS, needs_fio
from fakecards import short_card
from test_contract import command_paths

from disksleuth.cli import main

GOLDEN_DIR = os.path.join(DATA, "golden", "json_keys")
REGEN = os.environ.get("DISKSLEUTH_REGEN_GOLDEN") == "1"
TREES = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(SYSFS, "*", "sys")))
GEN4_ON_GEN3 = os.path.join(SYSFS, "scenario_gen4_on_gen3")
DATA_KEYED = {"media_error_counts", "interface_error_counts"}  # keyed by SMART attribute name
# One small file on memory, and the one-test mixed profile (a read and a write direction, so every test key):
# fio runs in a second or two, and tmpfs always gives the memory_backed finding.
BENCH_ARGS = ["--profile", "mixed", "--time", "1", "--size", "16M", "--no-save"]
SUSTAINED_ARGS = ["--profile", "sustained", "--size", "64M", "--no-save"]


def key_paths(value: object, prefix: str = "", open_keys: frozenset[str] = frozenset()) -> set[str]:
    """Every key path in a JSON value: nested keys joined by '.', list items collapsed to '[]'. Below a key
    named in `open_keys` (a dict whose keys are data) only the key itself is a path."""
    paths = {prefix} if prefix else set()
    last = prefix.rsplit(".", 1)[-1]
    if isinstance(value, dict) and last not in open_keys:
        for key, item in value.items():
            paths |= key_paths(item, f"{prefix}.{key}" if prefix else key, open_keys)
    elif isinstance(value, list):
        for item in value:
            paths |= key_paths(item, prefix + "[]", open_keys)
    return paths


def test_key_paths_collapse_lists_and_keep_empty_values() -> None:
    doc = {"a": {"b": None, "c": []}, "l": [{"x": 1}, {"y": {"z": 2}}], "m": {"k": {"q": 1}}}
    assert key_paths(doc, open_keys=frozenset({"m"})) == {
        "a", "a.b", "a.c", "l", "l[]", "l[].x", "l[].y", "l[].y.z", "m",
    }  # fmt: skip


# --- the inputs --------------------------------------------------------------------------------


@dataclass
class Inputs:
    tmp: str
    shm: str
    store: str  # a sqlite file: runs 1-4 from real-runs-export.json, 5 standard-budget, 6 sample_run, 7 members
    card: str = ""  # a fake card (tests/fakecards.short_card) that `verify` writes across

    def store_copy(self) -> str:
        """A store of this test's own, for commands that change it."""
        path = os.path.join(self.tmp, f"store-{uuid.uuid4().hex[:8]}.sqlite")
        shutil.copyfile(self.store, path)
        os.chmod(path, 0o600)  # a store is written only when private (copyfile gives 0644)
        return f"sqlite:///{path}"

    @property
    def db(self) -> str:
        return f"sqlite:///{self.store}"


def _quiet_main(*argv: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0, argv


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inputs]:
    tmp = str(tmp_path_factory.mktemp("json-keys"))
    shm = f"/dev/shm/disksleuth-json-keys-{uuid.uuid4().hex[:8]}"
    os.makedirs(shm)
    store = os.path.join(tmp, "seed.sqlite")
    runs = []
    for path in (os.path.join(DATA, "store", "standard-budget-ram-loop.json"), SAMPLE_RUN):
        with open(path) as fh:
            doc = json.load(fh)
        doc["run"].pop("id", None)
        runs.append(doc)
    single = os.path.join(tmp, "single-runs.json")
    with open(single, "w") as fh:
        json.dump({"schema": "disksleuth/1", "kind": "export", "runs": runs}, fh)
    try:
        # bench --members on two real loop devices (#7): a stored members run's keys in show and export (issue 24)
        members = os.path.join(DATA, "store", "members-loops-export.json")
        for export in (os.path.join(DATA, "store", "real-runs-export.json"), single, members):
            _quiet_main("import", export, "--db", f"sqlite:///{store}")
        with short_card(claimed_mib=32, real_mib=8) as card:
            yield Inputs(tmp, shm, store, card)
    finally:
        subprocess.run(["rm", "-rf", shm], check=False)


Invocations = Callable[[Inputs], list[list[str]]]


@dataclass(frozen=True)
class Case:
    command: tuple[str, ...]  # the command path (as test_contract walks the parser)
    name: str
    invocations: Invocations  # argv lists (without --json) whose documents' paths are united
    measured: bool = False  # check/bench: a finding's evidence is data
    slow: bool = False
    files: tuple[str, ...] = field(default=())  # besides stdout, JSON files the invocations wrote
    # top: lists whose items depend on the moment (which processes did I/O, what was found): only the list is
    # pinned here; its items' keys are required by the schema (tests/test_top_cli.py validates every document).
    moment: tuple[str, ...] = field(default=())


def _devices(tree: str) -> list[str]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        main(["list", "--json", "--sysfs-root", tree])
    return [d["name"] for d in json.loads(out.getvalue())["devices"]]


def _explain_all(_: Inputs) -> list[list[str]]:
    figures = ["--read", "1.2GB/s", "--write", "900MB/s", "--read-iops", "200k", "--write-iops", "50k"]
    return [
        ["explain", dev, "--sysfs-root", tree, *figures]
        for tree in TREES
        for dev in _devices(tree)
        if os.path.exists(os.path.join(tree, "sys", "block", dev))  # not malformed's dangling sdz: no device
    ]


# explain FILE... (issue 21): a drive with a slow SATA link, a PCIe function pasted alone, hdparm and fio figures
PASTED = [
    ("smartctl", "linuxhw-ata-HDS721010DLE630-E2B8EB3D132B.txt"),
    ("lspci", "rendered", "lspci390-vvnn-cap-phy32.txt"),
    ("hdparm", "pippim-askubuntu-1033986-hdparm-tT.txt"),
    ("fio", "fio-howto-client1-write-7k.txt"),
    ("lspci", "pciutils-cap-vendor-virtio.txt"),  # lines it does not read: source.skipped[] holds them
]


def _watch_twice(inputs: Inputs) -> list[list[str]]:
    """A first pass (every finding new) and a second (no change) over a tree with a failing member's SMART."""
    db = inputs.store_copy()
    tree = os.path.join(SYSFS, "array_raid1_failing_member")
    return [["watch", "--sysfs-root", tree, "--db", db]] * 2


def _watch_units(inputs: Inputs) -> list[list[str]]:
    units = os.path.join(inputs.tmp, f"units-{uuid.uuid4().hex[:8]}")
    os.mkdir(units)
    return [["watch", "--install", "--unit-dir", units], ["watch", "--uninstall", "--unit-dir", units]]


def _health_files(*patterns: str) -> Invocations:
    files = sorted(p for pattern in patterns for p in glob.glob(pattern))
    return lambda _: [["health", "--from-smartctl", p] for p in files]


def _first_disk() -> str:
    """A device /proc/diskstats lists on any machine the suite runs on (its first line)."""
    with open("/proc/diskstats") as fh:
        return fh.readline().split()[2]


def _show_against_a_baseline(i: Inputs) -> list[list[str]]:
    """The x1 → x4 pair (real runs): what changed on the path and whether it explains the figures."""
    db = f"sqlite:///{i.tmp}/x1-to-x4-{uuid.uuid4().hex[:8]}.sqlite"
    _quiet_main("import", os.path.join(DATA, "store", "x1-to-x4-export.json"), "--db", db)
    return [["show", "2", "--baseline", "1", "--db", db]]


CASES = [
    Case(("verify",), "short_card", lambda i: [["verify", i.card, "--destructive", "--yes", "--quick"]]),
    Case(("completion",), "every_shell", lambda _: [["completion", s] for s in ("bash", "zsh", "fish")]),
    Case(("completion", "bash"), "bash", lambda _: [["completion", "bash"]]),
    Case(("completion", "zsh"), "zsh", lambda _: [["completion", "zsh"]]),
    Case(("completion", "fish"), "fish", lambda _: [["completion", "fish"]]),
    Case(("manpage",), "page", lambda _: [["manpage"]]),
    Case(("watch",), "two_passes_over_a_failing_member", _watch_twice, measured=True),
    Case(("watch",), "units", _watch_units),
    Case(("list",), "every_tree", lambda _: [["list", "--sysfs-root", t] for t in TREES]),
    Case(("list",), "every_tree_all", lambda _: [["list", "--all", "--sysfs-root", t] for t in TREES]),
    Case(("links",), "every_tree", lambda _: [["links", "--sysfs-root", t] for t in TREES]),
    Case(("explain",), "every_device_of_every_tree", _explain_all),
    Case(("explain",), "pasted", lambda _: [["explain", *(os.path.join(DATA, "paste", *p) for p in PASTED)]]),
    Case(("health",), "ata", _health_files(*(os.path.join(SMARTCTL_FIXTURES, p) for p in ("sat-*", "WDC_*")))),
    Case(("health",), "scsi", _health_files(os.path.join(SMARTCTL_FIXTURES, "SEAGATE_*.json"))),
    Case(("health",), "nvme", _health_files(os.path.join(SMARTCTL_FIXTURES, "nvme-*.json"))),
    Case(("health",), "smartctl_x", _health_files(os.path.join(DATA, "smartctl-x", "*.json"))),
    Case(("runs",), "store", lambda i: [["runs", "--db", i.db]]),
    Case(("runs", "list"), "store", lambda i: [["runs", "list", "--tag", "cmp", "--db", i.db]]),
    Case(("runs", "delete"), "one_run", lambda i: [["runs", "delete", "2", "--db", i.store_copy()]]),
    Case(("runs", "prune"), "by_tag", lambda i: [["runs", "prune", "--tag", "cmp", "--db", i.store_copy()]]),
    Case(("runs", "prune"), "dry_run", lambda i: [["runs", "prune", "--older-than", "1d", "--dry-run", "--db", i.db]]),
    Case(("show",), "every_run", lambda i: [["show", str(n), "--db", i.db] for n in range(1, 8)]),
    Case(("show",), "against_a_baseline_run", _show_against_a_baseline),
    Case(("compare",), "two_runs", lambda i: [["compare", "3", "4", "--db", i.db]]),
    Case(
        ("compare",),
        "relative_to_a_reference",
        lambda i: [["compare", "1", "2", "3", "--baseline", "2", "--relative-to", "1", "--db", i.db]],
    ),
    Case(("fleet",), "store", lambda i: [["fleet", "--db", i.db]]),
    Case(("export",), "one_run", lambda i: [["export", "1", "-o", f"{i.tmp}/export-1.json", "--db", i.db]]),
    # The export file is the document `import` validates: its keys are pinned too.
    Case(
        ("export",),
        "file",
        lambda i: [["export", *map(str, range(1, 8)), "-o", f"{i.tmp}/export-all.json", "--db", i.db]],
        files=("{tmp}/export-all.json",),
    ),
    Case(
        ("import",),
        "export_file",
        lambda i: [["import", os.path.join(DATA, "store", "real-runs-export.json"), "--db", i.store_copy()]],
    ),
    Case(("report",), "one_run", lambda i: [["report", "1", "-o", f"{i.tmp}/report.html", "--db", i.db]]),
    Case(("capture",), "tree", lambda i: [["capture", "-o", f"{i.tmp}/c.tar.gz", "--sysfs-root", GEN4_ON_GEN3]]),
    Case(
        ("exporter",),
        "textfile",
        lambda i: [["exporter", "--textfile", i.tmp, "--sysfs-root", GEN4_ON_GEN3, "--no-health", "--db", i.db]],
    ),
    Case(
        ("top",),
        "one_device",
        lambda _: [["top", "--once", "--seconds", "0.2", "--device", _first_disk()]],
        moment=("processes", "findings", "temperatures", "notes"),
    ),
    Case(("check",), "mixed_on_tmpfs", lambda i: [["check", i.shm, *BENCH_ARGS]], measured=True, slow=True),
    Case(("check",), "sustained_on_tmpfs", lambda i: [["check", i.shm, *SUSTAINED_ARGS]], measured=True),
    Case(("bench",), "mixed_on_tmpfs", lambda i: [["bench", i.shm, *BENCH_ARGS]], measured=True, slow=True),
    Case(("bench",), "sustained_on_tmpfs", lambda i: [["bench", i.shm, *SUSTAINED_ARGS]], measured=True),
]


def _golden_path(command: tuple[str, ...]) -> str:
    return os.path.join(GOLDEN_DIR, "_".join(command) + ".json")


def _load_golden(command: tuple[str, ...]) -> dict[str, list[str]]:
    try:
        with open(_golden_path(command)) as fh:
            return json.load(fh)
    except FileNotFoundError:
        return {}


def _paths_of(case: Case, inputs: Inputs, cli) -> set[str]:
    open_keys = frozenset(DATA_KEYED | ({"evidence"} if case.measured else set()))
    paths: set[str] = set()
    argvs = case.invocations(inputs)
    assert argvs, case.name
    for argv in argvs:
        res = cli(*argv, "--json")
        assert res.code in (0, 1), (argv, res.err)
        doc = res.json()
        assert doc["schema"] == "disksleuth/1" and "error" not in doc, (argv, doc)
        paths |= key_paths(doc, open_keys=open_keys)
    for name in case.files:
        with open(name.format(tmp=inputs.tmp)) as fh:
            paths |= {f"<file>.{p}" for p in key_paths(json.load(fh), open_keys=open_keys)}
    return {p for p in paths if not any(p.startswith(f"{key}[]") for key in case.moment)}


def _param(case: Case):  # noqa: ANN202
    marks = [needs_fio, pytest.mark.slow] if case.slow else [needs_fio] if case.measured else []
    return pytest.param(case, id=f"{' '.join(case.command)}:{case.name}", marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_json_keys_match_the_golden_file(case: Case, inputs: Inputs, cli) -> None:
    paths = _paths_of(case, inputs, cli)
    golden = _load_golden(case.command)
    if REGEN:
        golden[case.name] = sorted(paths)
        os.makedirs(GOLDEN_DIR, exist_ok=True)
        with open(_golden_path(case.command), "w") as fh:
            json.dump(dict(sorted(golden.items())), fh, indent=1)
            fh.write("\n")
        return
    assert case.name in golden, f"no golden keys for {case.name}: run with DISKSLEUTH_REGEN_GOLDEN=1"
    expected = set(golden[case.name])
    added, dropped = sorted(paths - expected), sorted(expected - paths)
    assert not added and not dropped, (
        f"`disksleuth {' '.join(case.command)} --json` ({case.name}) changed its keys; "
        f"added: {added}; dropped: {dropped}. If on purpose, regenerate with DISKSLEUTH_REGEN_GOLDEN=1 "
        f"and review the diff of {os.path.relpath(_golden_path(case.command))}"
    )


def test_every_command_has_golden_keys_and_no_golden_case_is_stale() -> None:
    """A command added later fails here until it has a case; a case removed leaves no golden keys behind."""
    covered = {c.command for c in CASES}
    assert set(command_paths()) <= covered, sorted(set(command_paths()) - covered)
    declared = {(c.command, c.name) for c in CASES}
    commands = {_golden_path(c): c for c in covered}
    on_disk = set()
    for path in glob.glob(os.path.join(GOLDEN_DIR, "*.json")):
        with open(path) as fh:
            on_disk |= {(commands.get(path, ("<no such command>", path)), name) for name in json.load(fh)}
    if not REGEN:
        assert on_disk == declared, {"stale": sorted(on_disk - declared), "missing": sorted(declared - on_disk)}


# --- check and bench give the same document for the same run ---------------------------------------


@needs_fio
def test_check_and_bench_sustained_have_the_same_keys(inputs: Inputs, cli) -> None:
    """`bench --profile sustained --json` has a top-level `sustained` object; `check` with the same profile
    on the same target must give the same document's keys (issue 19), down to the sustained object's."""
    docs = {}
    for command in ("check", "bench"):
        res = cli(command, inputs.shm, *SUSTAINED_ARGS, "--json")
        assert res.code in (0, 1), res.err
        docs[command] = res.json()
    assert set(docs["check"]) == set(docs["bench"])
    check, bench = (key_paths(docs[c].get("sustained"), "sustained") for c in ("check", "bench"))
    assert check == bench
