"""The command-line contract, checked for EVERY command the parser has: a command added later is
walked too, and fails here until it has a line in CASES.

For each command: `--help`; no arguments; `--json` with valid arguments and with invalid ones;
plain output with stdout not a terminal; and, in a real pseudo-terminal 60, 80 and 120 columns wide
(NO_COLOR=1 at 80), the human output. Asserted: never a traceback; exit codes as documented
(0 ok, 1 findings at warn/critical for check/bench/explain/health/fleet, 2 usage or environment error); under
--json stdout is exactly one JSON document with "schema": "disksleuth/1", and an error is
{"error": {"code", "message"}} on stdout with exit 2 (plus its one line on stderr); off a terminal
no ANSI codes and no trailing spaces; on a terminal every line within its width.

Sysfs comes from tests/data/sysfs trees, runs from a throwaway store seeded with real runs from
this project's VM (tests/data/store/real-runs-export.json); the two benchmark commands use the
one-test `mixed` profile with --time 1 on a 16 MiB file in /dev/shm.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass

import pytest
from conftest import DATA, SMARTCTL_FIXTURES, SYSFS, drain_terminal

from disksleuth.cli import build_parser, main

EXPORT = os.path.join(DATA, "store", "real-runs-export.json")
BENCH_ARGS = ["--profile", "mixed", "--time", "1", "--size", "16M", "--no-save"]


@dataclass(frozen=True)
class Case:
    valid: tuple[str, ...]  # arguments that work; {tree}, {shm}, {tmp}, {export}, {smartctl} filled in
    invalid: tuple[str, ...]  # arguments that must fail cleanly with exit 2
    codes: frozenset[int] = frozenset({0})  # exit codes of the valid run
    bare_codes: frozenset[int] = frozenset({2})  # exit codes with no arguments
    # When no arguments at all would start a full benchmark (check measures the current directory)
    # or a server (exporter), the "no arguments" run adds only these options (in a scratch directory).
    bare: tuple[str, ...] = ()
    shows: tuple[str, ...] = ()  # text the human output on a terminal must contain


FINDINGS = frozenset({0, 1})
CASES: dict[tuple[str, ...], Case] = {
    ("list",): Case(("--sysfs-root", "{tree}"), ("--sysfs-root", "/nonexistent"), bare_codes=frozenset({0})),
    ("links",): Case(("--sysfs-root", "{tree}"), ("--sysfs-root", "/nonexistent"), bare_codes=frozenset({0})),
    ("capture",): Case(("-o", "{tmp}/capture.tar.gz", "--sysfs-root", "{tree}"), ("-o", "/nonexistent/x.tar.gz")),
    ("check",): Case(
        ("{shm}", *BENCH_ARGS, "--commands"),
        ("/nonexistent/dir",),
        FINDINGS,
        FINDINGS,
        bare=tuple(BENCH_ARGS),
        shows=("fio command lines", "RND4K_Q64T1_randrw75: fio "),
    ),
    # On a terminal the finished-test line comes from the live progress (stderr); at 120 columns
    # bench's stdout goes to a file, as in `bench DIR > out.txt`, and the progress must still show.
    # /dev/shm is memory: memory_backed is a warn finding, so bench exits 1 as check would.
    ("bench",): Case(
        ("{shm}", *BENCH_ARGS),
        ("/nonexistent/dir", *BENCH_ARGS),
        frozenset({1}),
        shows=("✓ RND4K_Q64T1_randrw75",),
    ),
    ("runs",): Case((), ("--limit", "many"), bare_codes=frozenset({0})),
    ("runs", "list"): Case(("--tag", "cmp"), ("--limit", "many"), bare_codes=frozenset({0})),
    ("runs", "delete"): Case(("2",), ("999999",)),
    ("runs", "prune"): Case(("--tag", "mixed"), ("--older-than", "soon")),
    ("fleet",): Case((), ("--db", "/nonexistent/dir/x.sqlite"), FINDINGS, FINDINGS),
    ("show",): Case(("1",), ("999999",), bare_codes=frozenset({0})),  # no run: the newest
    ("compare",): Case(("3", "4"), ("1", "999999")),
    ("report",): Case(("2", "-o", "{tmp}/report.html"), ("999999", "-o", "{tmp}/report.html")),
    ("export",): Case(("1", "-o", "{tmp}/export.json"), ("999999", "-o", "{tmp}/export.json")),
    ("import",): Case(("{export}",), ("/nonexistent.json",)),
    ("explain",): Case(
        ("nvme0n1", "--sysfs-root", "{tree}", "--read", "1.2GB/s"), ("nosuchdev", "--sysfs-root", "{tree}"), FINDINGS
    ),
    # exporter with no arguments serves /metrics until stopped: its "no arguments" run writes the textfile
    ("exporter",): Case(
        ("--textfile", "{tmp}", "--sysfs-root", "{tree}", "--no-health"),
        ("--textfile", "/nonexistent/dir", "--sysfs-root", "{tree}", "--no-health"),
        bare_codes=frozenset({0}),
        bare=("--textfile", "{tmp}", "--no-health"),
    ),
    # Bare `top` is the live view until Ctrl-C: its "no arguments" run stops it after one refresh.
    ("top",): Case(
        ("--once", "--seconds", "0.3"),
        ("--seconds", "0"),
        FINDINGS,
        bare_codes=frozenset({0}),
        bare=("--seconds", "0.3", "--interval", "0.3"),
        shows=("DEVICE",),
    ),
    # On a terminal `completion` and `manpage` say how to install what they print into a file or a pipe.
    ("completion",): Case(("bash",), ("tcsh",), shows=("disksleuth completion bash >",)),
    ("completion", "bash"): Case((), ("extra",), bare_codes=frozenset({0})),
    ("completion", "zsh"): Case((), ("extra",), bare_codes=frozenset({0})),
    ("completion", "fish"): Case((), ("extra",), bare_codes=frozenset({0})),
    ("manpage",): Case((), ("extra",), bare_codes=frozenset({0}), shows=("disksleuth manpage >",)),
    # Bare `watch` is one pass over this machine's drives (a virtio disk here: nothing to tell); a tree with a
    # failing drive gives 1 on its first pass (news at critical).
    ("watch",): Case(
        ("--sysfs-root", os.path.join(SYSFS, "array_raid1_failing_member")),
        ("--config", "/nonexistent.toml"),
        frozenset({0, 1}),
        bare_codes=frozenset({0, 1}),
    ),
    # `verify` writes across a RAM loop device (it holds what it claims: 0); without --destructive it is refused.
    ("verify",): Case(("{card}", "--destructive", "--yes", "--quick"), ("{card}",), shows=("holds what it claims",)),
    # Bare `health` lists every drive, worst first (issue 23): 1 when one of them is at warn or critical.
    ("health",): Case(
        ("--from-smartctl", "{smartctl}"), ("--from-smartctl", "/nonexistent.json"), FINDINGS, bare_codes=FINDINGS
    ),
}


def command_paths(parser: argparse.ArgumentParser | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command in the parser, e.g. ("runs",), ("runs", "delete"): sub-parsers,
    and a command's leading positional with fixed choices (`runs delete|prune`) as its actions."""
    parser = parser or build_parser()
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths.append((*prefix, name))
                paths += command_paths(sub, (*prefix, name))
    if prefix:
        positionals = [a for a in parser._actions if not a.option_strings and a.dest != "help"]
        if positionals and positionals[0].choices and not isinstance(positionals[0], argparse._SubParsersAction):
            paths += [(*prefix, str(choice)) for choice in positionals[0].choices]
    return paths


COMMANDS = command_paths()


def _case(path: tuple[str, ...]) -> Case:
    if path not in CASES:
        pytest.fail(f"`disksleuth {' '.join(path)}` has no contract case: add one to CASES in {__file__}")
    return CASES[path]


@pytest.fixture(scope="module")
def ctx():
    tmp = tempfile.mkdtemp(prefix="disksleuth-contract-")
    shm = f"/dev/shm/disksleuth-contract-{uuid.uuid4().hex[:8]}"
    cards: list[str] = []  # 16 MiB RAM loop devices that `verify` writes across: one per terminal (it holds O_EXCL)
    try:  # a set-up that fails (an import refused) removes what it made too: one was left in /dev/shm by CI
        os.makedirs(shm)
        for n in range(3):
            with open(os.path.join(shm, f"card{n}.img"), "wb") as fh:
                fh.truncate(16 << 20)
            run = subprocess.run(["losetup", "-f", "--show", fh.name], check=True, capture_output=True, text=True)
            cards.append(run.stdout.strip())
        seed = os.path.join(tmp, "seed.sqlite")
        assert main(["import", EXPORT, "--db", f"sqlite:///{seed}"]) == 0
        yield {
            "tree": os.path.join(SYSFS, "scenario_gen4_on_gen3"),
            "shm": shm,
            "tmp": tmp,
            "export": EXPORT,
            "smartctl": os.path.join(SMARTCTL_FIXTURES, "nvme-null-CT250P2SSD8-nvme0.json"),
            "seed": seed,
            "card": cards[0],
            "cards": cards,
        }
    finally:
        for card in cards:
            subprocess.run(["losetup", "-d", card], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


def _fill(args: tuple[str, ...], ctx: dict) -> list[str]:
    return [a.format(**ctx) for a in args]


def _fresh_store(ctx: dict) -> str:
    """A copy of the seeded store per run: import, export and friends may change it."""
    path = os.path.join(ctx["tmp"], f"store-{uuid.uuid4().hex[:8]}.sqlite")
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # a store is written only when private
    with sqlite3.connect(ctx["seed"]) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    return f"sqlite:///{path}"


TRACEBACK = re.compile(r"Traceback \(most recent call last\)|internal error")
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def _in_process(argv: list[str], ctx: dict, monkeypatch, capsys, cwd: str | None = None, **env: str):
    monkeypatch.setenv("DISKSLEUTH_DB", _fresh_store(ctx))
    monkeypatch.delenv("COLUMNS", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if cwd:
        monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    out, err = capsys.readouterr()
    assert not TRACEBACK.search(out + err), (argv, out, err)
    return code, out, err


def _assert_one_json(out: str, argv: list[str]) -> dict:
    doc = json.loads(out)  # exactly one document: json.loads rejects anything after it
    assert isinstance(doc, dict), argv
    assert doc.get("schema") == "disksleuth/1", (argv, out[:200])
    return doc


def _assert_json_error(code: int, out: str, err: str, argv: list[str]) -> None:
    assert code == 2, (argv, code, out, err)
    doc = _assert_one_json(out, argv)
    error = doc.get("error")
    assert isinstance(error, dict), (argv, out)
    assert isinstance(error.get("code"), str) and error["code"], (argv, out)
    assert isinstance(error.get("message"), str) and error["message"], (argv, out)
    assert err.count("\n") == 1 and err.startswith("disksleuth: "), (argv, err)


def _assert_plain(out: str, argv: list[str]) -> None:
    assert "\x1b" not in out, (argv, out[:300])
    trailing = [line for line in out.splitlines() if line != line.rstrip()]
    assert not trailing, (argv, trailing[:3])


# The two benchmark commands run fio (5-9 s each) and `report` renders its charts: the slow lane's.
SLOW_PATHS = {("check",), ("bench",), ("report",)}


@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_PATHS else p for p in COMMANDS], ids=" ".join
)
def test_contract_off_a_terminal(path, ctx, monkeypatch, capsys):
    case = _case(path)
    cmd = list(path)

    # --help
    code, out, err = _in_process([*cmd, "--help"], ctx, monkeypatch, capsys)
    assert code == 0 and out.startswith(f"usage: disksleuth {path[0]}"), (code, out[:200], err)
    _assert_plain(out, cmd)

    # no arguments: a clean usage error (one line on stderr, nothing on stdout) or a sensible default
    bare = [*cmd, *_fill(case.bare, ctx)]
    code, out, err = _in_process(bare, ctx, monkeypatch, capsys, cwd=ctx["shm"])
    assert code in case.bare_codes, (bare, code, out, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("disksleuth: "), (bare, out, err)
    else:
        _assert_plain(out, bare)

    # --json, valid: one document, no error member; and the same with --json before the command
    valid = [*cmd, *_fill(case.valid, ctx)]
    code, out, err = _in_process([*valid, "--json"], ctx, monkeypatch, capsys)
    assert code in case.codes, (valid, code, out[:500], err)
    assert "error" not in _assert_one_json(out, valid)

    # --json, invalid: an unknown option, and arguments that fail after parsing
    for invalid in ([*cmd, "--no-such-option"], [*cmd, *_fill(case.invalid, ctx)]):
        code, out, err = _in_process([*invalid, "--json"], ctx, monkeypatch, capsys)
        _assert_json_error(code, out, err, invalid)
        code, out, err = _in_process(["--json", *invalid], ctx, monkeypatch, capsys)
        _assert_json_error(code, out, err, invalid)
        code, out, err = _in_process(invalid, ctx, monkeypatch, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, (invalid, code, out, err)

    # human output with stdout not a terminal (pytest's capture), and with NO_COLOR=1
    # check's "no arguments" run was already plain output; bench's runs with stdout in a file on the terminal
    if path not in (("check",), ("bench",)):
        code, out, err = _in_process(valid, ctx, monkeypatch, capsys, NO_COLOR="1")
        assert code in case.codes, (valid, code, out, err)
        _assert_plain(out, valid)


# --- on a real terminal ----------------------------------------------------------------------------

_DRIVER = r"""
import json, os, sys
from disksleuth.cli import main
for i, (argv, db, stdout_file) in enumerate(json.load(open(sys.argv[1]))):
    os.environ["DISKSLEUTH_DB"] = db
    if stdout_file:  # `disksleuth ... > FILE`: stdout a file, stderr still the terminal
        saved = os.dup(1)
        fd = os.open(stdout_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.close(fd)
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    sys.stdout.flush(); sys.stderr.flush()
    if stdout_file:
        os.dup2(saved, 1)
        os.close(saved)
    print(f"\n@@@ {i} {code}", flush=True)
"""


def _run_in_pty(runs: list[tuple[list[str], str, str | None]], columns: int, env: dict[str, str], cwd: str) -> str:
    """Every run in one Python process whose stdin, stdout and stderr are a pseudo-terminal of the
    given width, as a person at a terminal would see it (progress included)."""
    import fcntl
    import pty
    import struct
    import termios

    plan = os.path.join(cwd, f"plan-{uuid.uuid4().hex[:8]}.json")
    with open(plan, "w") as fh:
        json.dump(runs, fh)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, plan],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color", **env},
        cwd=cwd,
        close_fds=True,
    )
    os.close(slave)
    output = drain_terminal(master, proc, 120)
    return output.decode("utf-8", "replace")


@pytest.mark.slow
def test_contract_on_a_terminal(ctx):
    """60, 80 and 120 columns (NO_COLOR=1 at 80), the three terminals side by side to save time."""
    import threading

    from rich.cells import cell_len

    paths = list(COMMANDS)
    terminals = {60: False, 80: True, 120: False}
    raws: dict[int, str] = {}

    redirected = os.path.join(ctx["tmp"], "bench-stdout.txt")

    def run(columns: int, no_color: bool) -> None:
        runs = [
            (
                [*path, *_fill(_case(path).valid, {**ctx, "card": ctx["cards"][list(terminals).index(columns)]})],
                _fresh_store(ctx),
                redirected if columns == 120 and path == ("bench",) else None,
            )
            for path in paths
        ]
        raws[columns] = _run_in_pty(runs, columns, {"NO_COLOR": "1" if no_color else ""}, ctx["tmp"])

    threads = [threading.Thread(target=run, args=item) for item in terminals.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for columns, no_color in terminals.items():
        raw = raws[columns]
        assert not TRACEBACK.search(raw), (columns, raw[-3000:])
        if no_color:  # bold and dim may stay; colours (SGR 30-38, 90-97) may not
            sgr = re.findall(r"\x1b\[([0-9;]*)m", raw)
            colours = [m for m in sgr if re.search(r"(^|;)(3[0-8]|9[0-7])(;|$)", m)]
            assert not colours, colours[:5]
        sections = re.split(r"@@@ (\d+) (\d+)\r?\n", raw)
        codes = {int(sections[i]): int(sections[i + 1]) for i in range(1, len(sections) - 1, 3)}
        assert sorted(codes) == list(range(len(paths))), (columns, raw[-3000:])
        for i, path in enumerate(paths):
            output = ANSI.sub("", sections[3 * i])
            assert codes[i] in CASES[path].codes, (path, columns, codes[i], output[-2000:])
            # A fio command line (--commands) is the one exception: it is printed whole, for pasting, and
            # the terminal wraps it; newlines put into it would break the pasted command.
            lines = [line for line in re.split(r"\r\n|\r|\n", output) if ": fio --name=" not in line]
            too_wide = [line for line in lines if cell_len(line) > columns]
            assert not too_wide, (path, columns, too_wide[:3])
            flat = re.sub(r"\s+", " ", output)
            for text in CASES[path].shows:
                assert text in flat, (path, columns, text, output[-2000:])
    with open(redirected, encoding="utf-8") as fh:
        table = fh.read()
    assert "RND4K_Q64T1_randrw75" in table  # the results went to the file ...
    _assert_plain(table, ["bench", "> file"])  # ... as plain text
