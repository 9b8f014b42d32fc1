"""store/ split by job: the pure parts (URLs and masking, export and unsaved files, the document rules, the
serial ids) import and work without SQLAlchemy, and the command line starts without it.

Masking a URL reads it with SQLAlchemy (loaded only then), so the masking test runs where SQLAlchemy may load."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_store import _doc

from disksleuth.store import urls

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(urls.__file__))))  # src/
NO_SQLALCHEMY = "import sys\nsys.modules['sqlalchemy'] = None  # any import of it fails\n"


def _python(script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
    )


def test_pure_store_modules_work_without_sqlalchemy(tmp_path):
    """An export is written and read back, a refused run is kept in a file, a store URL is resolved and a
    serial gets its keyed id, all with SQLAlchemy unimportable."""
    script = NO_SQLALCHEMY + (
        "import json\n"
        "from disksleuth import serials\n"
        "from disksleuth.store import documents, files, urls\n"
        "import disksleuth.run.selection\n"
        "print(urls.resolve_url('~/r.sqlite'), urls.redact_url('/plain/path'))\n"
        "doc = json.loads(sys.argv[1])\n"
        "files.write_export(sys.argv[2], [doc])\n"
        "(back,) = files.read_export_file(sys.argv[2])\n"
        "print(back['run']['target'], documents.legacy_uuid(back['run']))\n"
        "print(files.keep_unsaved(doc, ['t'], 'n'))\n"
        "print(serials.serial_id('S123', b'k' * 32))\n"
        "print('sqlalchemy' in sys.modules and sys.modules['sqlalchemy'] is not None)\n"
    )
    export = tmp_path / "export.json"
    res = _python(script, json.dumps(_doc(100.0, 1000.0, "pure")), str(export), env={"XDG_DATA_HOME": str(tmp_path)})
    assert res.returncode == 0, res.stderr
    resolved, round_trip, kept, serial_id, loaded = res.stdout.splitlines()
    assert resolved.startswith("sqlite:////") and resolved.endswith("/r.sqlite /plain/path")
    assert round_trip.split()[0] == _doc(100.0, 1000.0, "pure")["run"]["target"]
    assert kept.startswith(str(tmp_path / "disksleuth" / "unsaved")) and os.path.isfile(kept)
    assert len(serial_id) == 64
    assert loaded == "False"


def test_the_command_line_starts_without_sqlalchemy():
    """--version, --help and every command's --help do not load SQLAlchemy: a fast start, and the database
    layer only where a store is opened or a URL is masked."""
    script = (
        "import contextlib, io, sys\n"
        "from disksleuth.cli import build_parser, main\n"
        "commands = [a for a in build_parser()._subparsers._group_actions[0].choices]\n"
        "err = io.StringIO()\n"
        "for argv in (['--version'], ['--help'], *([c, '--help'] for c in commands)):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "print(len(commands), 'sqlalchemy' in sys.modules)\n"
    )
    res = _python(script)
    assert res.returncode == 0, res.stderr
    (counted,) = res.stdout.splitlines()
    assert counted.split() == [counted.split()[0], "False"] and int(counted.split()[0]) >= 10


def test_a_quoted_store_url_is_masked():
    assert urls.redact_url("postgresql://u:hunter2@h/db?sslpassword=s3cret&application_name=x") == (
        "postgresql://u:***@h/db?sslpassword=***&application_name=x"
    )
    masked = urls.redact_urls_in("--db 'postgresql://u:hun ter2@h/db' refused")
    assert masked == "--db 'postgresql://u:***@h/db' refused"


def test_a_pure_module_that_imported_sqlalchemy_would_be_caught():
    """The blocking works: the store itself does not import with SQLAlchemy blocked."""
    res = _python(NO_SQLALCHEMY + "import disksleuth.store.db\n")
    assert res.returncode != 0 and "sqlalchemy" in res.stderr
