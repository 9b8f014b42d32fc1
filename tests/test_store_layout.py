"""store/ split by job: the pure parts (URLs and masking, export and unsaved files, the document rules, the
serial ids) import and work without SQLAlchemy, and the command line starts without it.

The URL masking no longer asks SQLAlchemy to read the URL; a property test holds it to what the SQLAlchemy
reading gave (the code before the split, kept here as the oracle)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse

import sqlalchemy as sa
from hypothesis import example, given, settings
from hypothesis import strategies as st
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
    """URLs are masked, an export is written and read back, a refused run is kept in a file and a serial
    gets its keyed id, all with SQLAlchemy unimportable."""
    script = NO_SQLALCHEMY + (
        "import json\n"
        "from disksleuth import serials\n"
        "from disksleuth.store import documents, files, urls\n"
        "import disksleuth.run.selection\n"
        "print(urls.redact_url('postgresql://u:hunter2@h/db?sslpassword=s3cret&application_name=x'))\n"
        "print(urls.redact_urls_in(\"--db 'postgresql://u:hun ter2@h/db' refused\"))\n"
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
    masked, in_text, round_trip, kept, serial_id, loaded = res.stdout.splitlines()
    assert masked == "postgresql://u:***@h/db?sslpassword=***&application_name=x"
    assert in_text == "--db 'postgresql://u:***@h/db' refused"
    assert round_trip.split()[0] == _doc(100.0, 1000.0, "pure")["run"]["target"]
    assert kept.startswith(str(tmp_path / "disksleuth" / "unsaved")) and os.path.isfile(kept)
    assert len(serial_id) == 64
    assert loaded == "False"


def test_the_command_line_starts_without_sqlalchemy():
    """--version, --help, every command's --help and a usage error that quotes a store URL (masked) do not
    load SQLAlchemy: a fast start, and the database layer only where a store is opened."""
    script = (
        "import contextlib, io, sys\n"
        "from disksleuth.cli import build_parser, main\n"
        "commands = [a for a in build_parser()._subparsers._group_actions[0].choices]\n"
        "err = io.StringIO()\n"
        "for argv in (['--version'], ['--help'], *([c, '--help'] for c in commands), ['postgresql://u:pw@h/db']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "print(len(commands), 'sqlalchemy' in sys.modules)\n"
        "print(err.getvalue().strip().splitlines()[-1])\n"
    )
    res = _python(script)
    assert res.returncode == 0, res.stderr
    counted, usage_error = res.stdout.splitlines()
    assert counted.split() == [counted.split()[0], "False"] and int(counted.split()[0]) >= 10
    assert "'postgresql://u:***@h/db'" in usage_error and "pw" not in usage_error


def test_a_pure_module_that_imported_sqlalchemy_would_be_caught():
    """The blocking works: the store itself does not import with SQLAlchemy blocked."""
    res = _python(NO_SQLALCHEMY + "import disksleuth.store.db\n")
    assert res.returncode != 0 and "sqlalchemy" in res.stderr


# --- the URL reading, held to SQLAlchemy's ----------------------------------------------------------------


def _oracle_redact_url(url: str) -> str:
    """redact_url as it was before the split, reading the URL with SQLAlchemy."""
    if "://" not in url:
        return url
    try:
        parsed = sa.engine.make_url(url)
    except Exception:
        return url.split("://", 1)[0] + "://..."
    secret_keys = [key for key in parsed.query if urls._secret_key(key)]
    if parsed.password is None and not secret_keys:
        return url
    base = parsed.set(query={}).render_as_string(hide_password=True)
    if not parsed.query:
        return base
    pairs = []
    for key, values in parsed.query.items():
        for value in values if isinstance(values, tuple) else (values,):
            shown = urls.MASK if key in secret_keys else urllib.parse.quote_plus(value)
            pairs.append(f"{urllib.parse.quote_plus(key)}={shown}")
    return base + "?" + "&".join(pairs)


def _oracle_already_masked(url: str) -> bool:
    try:
        parsed = sa.engine.make_url(url)
    except Exception:
        return False
    values = [
        value
        for key, given in parsed.query.items()
        if urls._secret_key(key)
        for value in (given if isinstance(given, tuple) else (given,))
    ]
    masked = (urls.MASK, *(urls.MASK + end for end in ":,;.)"))
    return parsed.password in (None, masked[0]) and all(value in masked for value in values)


# The characters that decide how a URL splits, and a few that get quoted.
_PIECES = st.sampled_from(
    [
        *":/@?&=#%+[]. ;,)'\"*",
        "%40",
        "%3A",
        "%2F",
        "%zz",
        "password",
        "secret",
        "***",
        "u",
        "h",
        "db",
        "5432",
        "é",
        "\n",
    ]
)
_URLS = st.builds(
    lambda scheme, rest: f"{scheme}://{rest}",
    st.sampled_from(["postgresql", "postgresql+psycopg", "sqlite", "mysql", "pg-sql", "Postgres", ""]),
    st.lists(_PIECES, max_size=24).map("".join),
)


@settings(max_examples=1500, deadline=None)
@given(_URLS)
@example("postgresql://u:p@ss@h:5432/d%2Fb?password=a&password=b&Secret=c&x=&y")
@example("postgresql://u:***@h/db?sslpassword=***:")
@example("postgresql://[::1]:5432/db?oauth_client_secret=z")
@example("postgresql://u:pw@h:notaport/db")
@example("postgresql://:")
@example("postgresql://u:pw@h:" + "9" * 5000 + "/db")
@example("postgresql://u:pw@h:٥٤/db")
@example("sqlite:////tmp/a b?password=x")
def test_redact_url_reads_a_url_as_sqlalchemy_does(url):
    assert urls.redact_url(url) == _oracle_redact_url(url)
    assert urls._already_masked(url) == _oracle_already_masked(url)
