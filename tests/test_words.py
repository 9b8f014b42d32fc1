"""Words a user reads (issue 20, section 3): json's message not given a second "at", one clear sentence for an
unsupported --db scheme, a binary --size echoed in binary units, "no cliff" saying within how much was written,
and a kept unsaved run's file named as deletable once imported. (A short fill's reason said once is tested beside
the other short-fill tests, in test_sustained_device.py, on the same fill.)"""

from __future__ import annotations

import json
import os

import pytest
from conftest import SMARTCTL_FIXTURES, sample_export

SUPPORTED = "give a file path, sqlite:///PATH or postgresql://USER@HOST/DB"


def test_a_truncated_smartctl_json_says_at_once(cli, tmp_path):
    """json says "Unterminated string starting at"; wrapped as "... at line 74" it read "starting at at line 74"."""
    with open(os.path.join(SMARTCTL_FIXTURES, "WDC_WD20EFRX-68EUZN0_17.json")) as fh:
        lines = fh.read().splitlines(keepends=True)
    cut = tmp_path / "cut.json"
    cut.write_text("".join(lines[:73]) + lines[73][:12])  # ends inside a string on line 74
    res = cli("health", "--from-smartctl", str(cut))
    assert res.code == 2
    assert "the smartctl JSON is truncated or malformed (Unterminated string starting at line 74)" in res.err, res.err
    assert "at at" not in res.err


@pytest.mark.parametrize(
    ("given", "shown", "scheme"),
    [
        ("http://...", "http://...", "http"),  # the text: it came out "--db http://... http:// is ..."
        ("HTTP://nas", "HTTP://nas", "http"),
        ("https://me:hunter2@nas/results", "https://me:***@nas/results", "https"),
    ],
)
def test_an_unsupported_db_scheme_is_one_clear_sentence(cli, given, shown, scheme):
    res = cli("runs", "--db", given)
    assert res.code == 2 and res.out == ""
    expected = f"disksleuth: --db {shown}: {scheme}:// is not supported; {SUPPORTED}\n"
    assert res.err == expected
    assert "hunter2" not in res.err


def test_a_binary_size_is_echoed_in_binary_units(cli, tmp_path):
    """A bare 1K is 1,024 bytes (as in fio): it was echoed as "1.0 kB"."""
    res = cli("bench", str(tmp_path), "--size", "1K", "--no-save")
    assert res.code == 2
    assert "--size 1 KiB (1,024 bytes) is too small for a scratch file" in res.err, res.err
    assert "kB" not in res.err


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("1K", "1 KiB (1,024 bytes)"),
        ("1KiB", "1 KiB (1,024 bytes)"),
        ("1000K", "1,000 KiB (1.0 MB)"),
        ("1.5K", "1,536 bytes"),
        ("1KB", "1.0 kB"),
        ("300M", "300 MiB (314.6 MB)"),
        ("300MB", "300.0 MB"),
    ],
)
def test_sizes_are_echoed_in_the_family_given(given, shown):
    from disksleuth.units import fmt_size, parse_size

    assert fmt_size(parse_size(given)) == shown


def test_no_cliff_says_within_how_much_was_written(capsys):
    """A recorded flat fill (1.05 GB at 120 MB/s): "no cliff: 120 MB/s throughout" did not say over how much."""
    from test_sustained_phases import recorded

    from disksleuth.present.sustained_view import render_sustained

    _doc, flat = recorded("flat")
    render_sustained(flat)
    out = capsys.readouterr().out
    assert "no cliff within the 1.05 GB written: 120 MB/s throughout" in out, out


def test_importing_a_kept_unsaved_run_says_its_file_can_be_deleted(cli, tmp_path, monkeypatch):
    """After `import` of a run the store had refused, its file stayed in unsaved/ with no word about it. The
    file is named as deletable, and left in place: it is the person's to delete."""
    from disksleuth.store.files import keep_unsaved, read_export_file

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    (doc,) = read_export_file(sample_export(tmp_path))
    kept = keep_unsaved(doc, ["kept"], None)
    assert os.path.dirname(kept) == str(tmp_path / "xdg" / "disksleuth" / "unsaved")
    db = f"sqlite:///{tmp_path}/r.sqlite"
    hint = f"{kept} is now in the store and can be deleted (it is kept until you do)"
    monkeypatch.setenv("COLUMNS", "400")
    res = cli("import", kept, "--db", db)
    assert res.code == 0, res.err
    assert res.out.splitlines() == ["imported 1 run, #1", hint], res.out
    assert os.path.exists(kept)
    res = cli("import", kept, "--db", db)  # already stored: still in the store, still deletable
    assert res.out.splitlines() == ["imported 0 runs; skipped 1 already stored (#1)", hint], res.out
    # The same runs from a file of the user's own: nothing to say about it.
    own = tmp_path / "mine.json"
    with open(kept) as fh:
        own.write_text(json.dumps(json.load(fh)))
    res = cli("import", str(own), "--db", f"sqlite:///{tmp_path}/other.sqlite")
    assert res.out.splitlines() == ["imported 1 run, #1"], res.out
    assert os.path.exists(own)
