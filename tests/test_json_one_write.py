"""Every --json document is encoded once and written in one call (issue 27: `json.dump` to stdout made 1.49
million small writes for a fleet of 24,000 devices), and reads exactly as before: indented by two, keys in
the order the document builds them, one newline after it."""

from __future__ import annotations

import io
import json
import os

from test_store import _doc

from disksleuth.cli import main
from disksleuth.cli.env import Environment
from disksleuth.store.db import Store


class CountingStream(io.StringIO):
    """A text stream that counts the write calls made to it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def _store_of(tmp_path, runs: int) -> str:
    db = f"sqlite:///{tmp_path}/r.sqlite"
    with Store(db) as store:
        store.save_many(
            (
                _doc(
                    100.0 + i,
                    1000.0,
                    f"Model {i % 7} \u00e9",
                    started=f"2026-11-21T10:{i // 60 % 60:02d}:{i % 60:02d}+0000",
                ),
                ["t"],
                None,
            )
            for i in range(runs)
        )
    return db


def _run_json(argv: list[str]) -> CountingStream:
    out = CountingStream()
    env = Environment(io.StringIO(), out, io.StringIO(), dict(os.environ), False, False, False)
    assert main([*argv, "--json"], env) == 0, env.stderr.getvalue()  # type: ignore[attr-defined]
    return out


def test_a_large_document_is_written_in_one_call(tmp_path):
    db = _store_of(tmp_path, 400)
    out = _run_json(["runs", "--limit", "0", "--db", db])
    text = out.getvalue()
    assert len(text) > 100_000 and len(json.loads(text)["runs"]) == 400
    assert out.writes == 1, f"{out.writes} writes for {len(text)} characters"


def test_the_document_reads_as_before(tmp_path):
    """Byte for byte what json.dump(indent=2) and a newline wrote: non-ASCII escaped, keys in order."""
    db = _store_of(tmp_path, 3)
    for argv in (["runs", "--db", db], ["show", "2", "--db", db]):
        text = _run_json(argv).getvalue()
        assert text == json.dumps(json.loads(text), indent=2) + "\n"
        assert text.startswith('{\n  "schema": "disksleuth/1",\n') and "\\u00e9" in text
