"""`import` of a run holding one huge string (issue 35, defect 3): the reader measured a run's size from the
opening quote of a string the window did not hold whole, so the window grew with the string. A 3 GB sparse file
(`"target":"` then zeros) ended in `internal error: MemoryError` at 4.2 GB, an endless standard input grew until
killed. Now a run, like any value of the envelope, is refused at 256 MiB (exportstream.MAX_VALUE_BYTES) in one
line, exit 2, and memory stays within what that bound takes."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import threading
import time

import pytest

from disksleuth.errors import ParseError
from disksleuth.store import exportstream
from disksleuth.store.exportstream import ExportReader

SRC = os.path.join(os.path.dirname(os.path.dirname(__file__)), "src")
SYSTEM_PYTHON = "/usr/bin/python3"
RUN_STRING = b'{"schema":"disksleuth/1","kind":"export","runs":[{"run":{"target":"'
ENVELOPE_STRING = b'{"schema":"disksleuth/1","kind":"'
MiB = 1 << 20


class EndlessStream(io.RawIOBase):
    """`head`, then `fill` forever, as a pipe from `yes` gives it; a reader that takes more than `limit` bytes
    has no bound (the test fails there instead of taking the machine's memory)."""

    def __init__(self, head: bytes, fill: bytes, limit: int):
        self.head, self.fill, self.limit, self.given = head, fill, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # noqa: ANN001
        if self.given > self.limit:
            raise AssertionError(f"read {self.given} bytes of an endless input: no bound")
        data = self.head[self.given : self.given + len(b)]
        data += self.fill * ((len(b) - len(data)) // len(self.fill) + 1)
        n = len(b)
        b[:n] = data[:n]
        self.given += n
        return n


@pytest.mark.parametrize(
    "head,fill,what",
    [
        (RUN_STRING, b"y\n", "run 1"),
        (RUN_STRING, b"\0", "run 1"),
        (RUN_STRING, b'\\\\\\"', "run 1"),  # escapes, a backslash at every window's end at some point
        (RUN_STRING.replace(b'"target":"', b'"x":[["'), b"ab", "run 1"),  # inside nested containers
        (ENVELOPE_STRING, b"y\n", "a value"),
    ],
)
def test_an_endless_string_is_refused_at_the_bound(monkeypatch, head, fill, what) -> None:
    monkeypatch.setattr(exportstream, "MAX_VALUE_BYTES", 2 * MiB)
    stream = EndlessStream(head, fill, limit=16 * MiB)
    reader = ExportReader(io.BufferedReader(stream), "standard input")
    with pytest.raises(ParseError) as caught:
        list(reader.runs())
    said = str(caught.value)
    assert said.startswith(f"standard input: not a disksleuth export ({what}") and said.endswith("larger than 2 MiB)")
    assert stream.given <= 4 * MiB  # the bound and at most what reaching it took, not the input


def test_a_string_just_under_the_bound_is_read(monkeypatch) -> None:
    monkeypatch.setattr(exportstream, "MAX_VALUE_BYTES", 2 * MiB)
    target = "y" * (2 * MiB - 200)
    text = json.dumps({"schema": "disksleuth/1", "runs": [{"run": {"target": target}}, {}]}).encode()
    run = next(ExportReader(io.BufferedReader(EndlessStream(text, b" ", 8 * MiB)), "x").runs())
    assert run["run"]["target"] == target


class ShortReads(io.RawIOBase):
    """A stream that gives 1 to 9 bytes a read, as a slow pipe does: every string is cut at every place."""

    def __init__(self, data: bytes, seed: int):
        self.data, self.at, self.rng = data, 0, random.Random(seed)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # noqa: ANN001
        n = min(len(b), self.rng.randint(1, 9), len(self.data) - self.at)
        b[:n] = self.data[self.at : self.at + n]
        self.at += n
        return n


def test_strings_cut_by_short_reads_are_read_as_json_reads_them() -> None:
    """The string scanner goes on from where the last read stopped (not from the quote again): escapes and
    quotes cut at a read's end are read on correctly, in runs, in nested values and in the envelope."""
    rng = random.Random(35)
    for seed in range(200):
        words = ["".join(rng.choice('ab"\\\n\u00e9{}[],:') for _ in range(rng.randint(0, 12))) for _ in range(4)]
        runs = [{"run": {"target": w, "x": [[w], {w: w}]}} for w in words]
        bundle = {"schema": "disksleuth/1", "kind": words[0], "runs": runs}
        data = json.dumps(bundle, ensure_ascii=bool(seed % 2)).encode()
        raw = ShortReads(data, seed)
        reader = ExportReader(raw, "x")  # type: ignore[arg-type]  # read() of a RawIOBase: short reads
        assert list(reader.runs()) == runs
        assert reader.envelope["kind"] == words[0]


_SHORT_READS_SYSTEM = """
import io, json, random, sys
from disksleuth.store.exportstream import ExportReader
rng = random.Random(7)
for seed in range(300):
    words = ["".join(rng.choice('ab"\\\\\\n{}[]') for _ in range(rng.randint(0, 12))) for _ in range(3)]
    runs = [{"run": {"target": w, "x": [[w], {w: w}]}} for w in words]
    data = json.dumps({"schema": "disksleuth/1", "runs": runs}).encode()
    class Short(io.RawIOBase):
        at = 0
        def readable(self): return True
        def readinto(self, b):
            n = min(len(b), rng.randint(1, 9), len(data) - self.at)
            b[:n] = data[self.at:self.at + n]
            self.at += n
            return n
    assert list(ExportReader(Short(), "x").runs()) == runs, (seed, data)
print("ok")
"""


def test_strings_cut_by_short_reads_under_the_system_python() -> None:
    """Debian 12's 3.11.2 gets some possessive repeats wrong (tests/test_export_stream_system_python.py):
    the string scanner that goes on after a read is checked there too."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"{SYSTEM_PYTHON} is not installed")
    res = subprocess.run(
        [SYSTEM_PYTHON, "-c", _SHORT_READS_SYSTEM],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]


# --- the real bound, in a process of its own ------------------------------------------------------------------

# Peak resident set of the import: the window holds one value up to the bound (256 MiB) and what reaching it
# takes; before, 4.2 GB and MemoryError. The address space is capped (3 GiB) so the old code fails fast.
PEAK_LIMIT_BYTES = 640 << 20
_PEAK_OF_CHILD = (
    "import os, resource, subprocess, sys\n"
    "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
    "proc = subprocess.Popen(sys.argv[1:], stderr=subprocess.PIPE, text=True)\n"
    "os.close(0)  # the import alone holds the pipe: when it stops reading, the writer is told\n"
    "err = proc.stderr.read()\n"
    "print(proc.wait(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    "sys.stderr.write(err)\n"
)


def _import_argv(path: str, db: str) -> list[str]:
    return [sys.executable, "-c", _PEAK_OF_CHILD, sys.executable, "-m", "disksleuth", "import", path, "--db", db]


def _refused_in_one_line(code: int, err: str, name: str) -> None:
    assert code == 2, err
    assert err == f"disksleuth: {name}: not a disksleuth export (run 1 is larger than 256 MiB)\n", err


@pytest.mark.slow
@pytest.mark.long
def test_a_sparse_3_gb_run_is_refused_in_bounded_memory(tmp_path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as fh:
        fh.write(RUN_STRING)
        fh.truncate(3 << 30)  # sparse: no disk, and zeros inside the string when read
    started = time.monotonic()
    res = subprocess.run(_import_argv(str(path), str(tmp_path / "r.sqlite")), capture_output=True, text=True)
    took = time.monotonic() - started
    code, peak = map(int, res.stdout.split())
    _refused_in_one_line(code, res.stderr, str(path))
    assert peak < PEAK_LIMIT_BYTES, f"peak {peak >> 20} MiB"
    assert took < 60, f"{took:.1f} s"


@pytest.mark.slow
@pytest.mark.long
def test_an_endless_standard_input_is_refused_in_bounded_memory(tmp_path) -> None:
    """`yes` after the opening of a run's string, through a pipe: read until the bound, then one line, exit 2."""
    proc = subprocess.Popen(
        _import_argv("-", str(tmp_path / "r.sqlite")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    stdin = proc.stdin

    def endless() -> None:
        chunk = b"y\n" * (MiB // 2)
        try:
            stdin.write(RUN_STRING)
            while True:  # until the reader stops reading
                stdin.write(chunk)
        except (BrokenPipeError, ValueError):  # ValueError: closed below after a timeout
            pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    try:
        proc.wait(timeout=60)  # not communicate(): it would close the pipe, an end the input never has
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("import went on reading an endless standard input for a minute")
    finally:
        writer.join(timeout=10)
    assert proc.stdout is not None and proc.stderr is not None
    code, peak = map(int, proc.stdout.read().split())
    _refused_in_one_line(code, proc.stderr.read().decode(), "standard input")
    assert peak < PEAK_LIMIT_BYTES, f"peak {peak >> 20} MiB"


_ESCAPES_DECODED = """
import json, random, resource
from disksleuth.store import boundedjson
random.seed(11)
wrong = 0
for _ in range(8000):
    chars = [random.choice('a"\\\\\\\\nu0\\x01\\u00e9') for _ in range(random.randint(0, 12))]
    text = ('"' + ''.join(chars) + '"').encode()
    try:
        want = json.loads(text)
    except ValueError:
        want = ValueError
    try:
        got = boundedjson.loads(text, 1 << 20, 4)
    except ValueError:
        got = ValueError
    wrong += got != want
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
escapes = b'"' + b'y\\\\\\\\n' * 2_000_000 + b'"'
assert boundedjson.loads(escapes, 1 << 30, 4) == 'y\\\\n' * 2_000_000
print(wrong, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


@pytest.mark.parametrize("python", [sys.executable, SYSTEM_PYTHON])
def test_a_run_of_escapes_is_decoded_in_bounded_memory(python: str) -> None:
    """A large run is decoded by boundedjson: its pattern for a string with escapes kept a state per character,
    and 4 million escapes (a 16 MB run) took 1.4 GB, a 240 MiB run 20 GB and 100 s. Every string is still read
    as json reads it, under the system's 3.11.2 too."""
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} is not installed")
    res = subprocess.run(
        [python, "-c", _ESCAPES_DECODED], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    wrong, grown_mb = map(int, res.stdout.split())
    assert wrong == 0
    assert grown_mb < 60  # the text (8 MB), its str and the value: not a state per escape
