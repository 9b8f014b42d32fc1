"""--json prints one document per invocation (issue 20 §3): `--json --version` printed plain text, and
`--json exporter --listen` printed a second (error) document when stopped by a signal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from jsonschema import Draft202012Validator

from disksleuth import __version__
from disksleuth.doc.schema import load_schema

CLI = [sys.executable, "-m", "disksleuth"]
TREE = os.path.join(os.path.dirname(__file__), "data", "sysfs", "nvme_multipath")


def _valid(doc: dict) -> None:
    Draft202012Validator(load_schema()).validate(doc)


@pytest.mark.parametrize("argv", [["--json", "--version"], ["--version", "--json"]])
def test_json_version_is_a_document(cli, argv):
    res = cli(*argv)
    assert res.code == 0
    doc = json.loads(res.out)  # one document, nothing around it
    assert doc == {"schema": "disksleuth/1", "version": {"disksleuth": __version__}}
    _valid(doc)


def test_plain_version_is_unchanged(cli):
    assert cli("--version").out == f"disksleuth {__version__}\n"


def _documents(text: str) -> list[dict]:
    decoder, docs, at = json.JSONDecoder(), [], 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
    return docs


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_exporter_listen_prints_one_document_until_stopped(sig):
    argv = [*CLI, "exporter", "--listen", "127.0.0.1:0", "--no-health", "--no-bench", "--sysfs-root", TREE, "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        first = []
        while not first or first[-1] != "}\n":  # emit() indents: the document ends with "}" alone
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            first.append(line)
        proc.send_signal(sig)
        rest, err = proc.communicate(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    docs = _documents("".join(first) + rest)
    assert len(docs) == 1, docs
    assert docs[0]["exporter"]["url"].startswith("http://127.0.0.1:")
    assert proc.returncode == 128 + sig
    assert "stopped serving http://127.0.0.1:" in err and "Traceback" not in err


def test_an_error_document_into_a_closed_pipe_is_no_traceback():
    """`disksleuth check /proc --json | head -c0`: the reader is gone before the error document is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        res = subprocess.run([*CLI, "check", "/proc", "--json"], stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and "BrokenPipeError" not in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and "kernel pseudo file system" in res.stderr
