"""Regressions from the attacker review: a PostgreSQL password in the URL's query string was printed in full,
`export -o` (and `report -o`) wrote 0644 files through a planted symlink, and `report` let matplotlib print
raw ESC/BEL from stored test ids on stderr."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SYSFS, needs_fio, sample_export

DISKSLEUTH = [sys.executable, "-m", "disksleuth"]

# Port 1 on localhost refuses at once: the store cannot be opened, and the error names it.
SECRETS = ("SECRETPW", "SSLSECRET", "OAUTHSECRET")
REFUSED_URL = (
    "postgresql://u@127.0.0.1:1/x?password=SECRETPW&sslmode=disable&sslpassword=SSLSECRET"
    "&oauth_client_secret=OAUTHSECRET"
)


def _no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, text


# --- 1. passwords in a store URL's query string -----------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["runs"],
        ["runs", "--json"],
        ["fleet", "--json"],
        ["show", "1"],
        ["runs", "delete", "1", "--json"],
        ["list", "--db-typo"],  # argparse echoes what it did not recognise, --db's URL included
    ],
)
def test_a_password_in_the_query_string_is_never_shown(cli, argv) -> None:
    res = cli(*argv, "--db", REFUSED_URL)
    assert res.code == 2, res.err
    _no_secret(res.out, res.err)
    assert res.err.count("\n") == 1, res.err
    if argv[0] != "list":
        assert "password=***" in res.err and "sslpassword=***" in res.err and "oauth_client_secret=***" in res.err
        assert "sslmode=disable" in res.err  # what is not secret is still shown, to find the mistake by


def test_an_unsupported_scheme_masks_the_query_password_too(cli) -> None:
    res = cli("runs", "--db", "mysql://u@h/x?password=SECRETPW")
    assert res.code == 2 and "mysql://u@h/x?password=***" in res.err, res.err


def test_a_password_in_the_query_string_is_masked_by_a_real_server(cli, tmp_path, fresh_postgres_url) -> None:
    """The server trusts local users, so the password is accepted and ignored: the store opens, and the
    messages that name it (no such run, a database that does not exist) still mask it."""
    url = fresh_postgres_url + "?password=SECRETPW&sslpassword=SSLSECRET"
    assert cli("import", sample_export(tmp_path), "--db", url, "--json").json()["imported"] == [1]
    for argv in (["show", "999"], ["runs", "delete", "999"], ["export", "999", "-o", str(tmp_path / "e.json")]):
        res = cli(*argv, "--db", url, "--json")
        assert res.code == 2 and "no run 999 in postgresql://" in res.err, res.err
        _no_secret(res.out, res.err)
        assert "password=***&sslpassword=***" in res.err
    missing = url.replace(url.rsplit("/", 1)[1].split("?")[0], "no_such_database")
    res = cli("runs", "--db", missing)
    assert res.code == 2 and "no_such_database" in res.err and res.err.count("\n") == 1, res.err
    _no_secret(res.err)

    from disksleuth import exporter

    snap = exporter.snapshot(os.path.join(SYSFS, "scenario_badly_seated"), None, REFUSED_URL, hostname="h")
    assert snap.bench_error and "password=***" in snap.bench_error
    _no_secret(snap.bench_error)


@needs_fio
def test_the_json_store_field_masks_the_query_password(cli, tmp_path, monkeypatch) -> None:
    """A run the store refused: the warning line and the JSON `store.error` name the store, masked."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    target = tmp_path / "t.img"
    target.write_bytes(os.urandom(16 << 20))
    res = cli("bench", str(target), "--time", "1", "--db", REFUSED_URL, "--json")
    assert res.code == 0, res.err
    store = res.json()["store"]
    assert store["saved"] is False and "password=***" in store["error"], store
    _no_secret(res.out, res.err, Path(store["kept_in"]).read_text())


# --- 2. -o files: private, and never through a symlink -----------------------------------------


OUTPUT_COMMANDS = ["export", "report", "capture"]


def _writer(cli, tmp_path, command: str):  # noqa: ANN202
    """`disksleuth COMMAND ... -o PATH` as a function of PATH, with a stored run to write where one is needed."""
    if command == "capture":
        return lambda out: cli("capture", "--sysfs-root", os.path.join(SYSFS, "scenario_badly_seated"), "-o", out)
    db = f"sqlite:///{tmp_path}/s.sqlite"
    assert cli("import", sample_export(tmp_path), "--db", db).code == 0
    return lambda out: cli(command, "1", "-o", out, "--db", db)


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
def test_an_output_file_is_private_and_replaced_safely(cli, tmp_path, command) -> None:
    write = _writer(cli, tmp_path, command)
    before = set(os.listdir(tmp_path))
    old_umask = os.umask(0o022)
    try:
        out = tmp_path / "out"
        assert write(str(out)).code == 0
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
        out.write_text("old")  # an existing, world-readable file is replaced by a private one
        os.chmod(out, 0o644)
        assert write(str(out)).code == 0
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o600 and out.read_bytes() != b"old"
    finally:
        os.umask(old_umask)
    assert set(os.listdir(tmp_path)) == before | {"out"}  # no temp file left beside it


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
def test_a_planted_symlink_is_never_written_through(cli, tmp_path, command) -> None:
    """Root running `export -o /tmp/x` where a user planted /tmp/x -> /root/.bashrc overwrote .bashrc."""
    write = _writer(cli, tmp_path, command)
    victim = tmp_path / "bashrc"
    victim.write_bytes(b"alias ls='ls --color'\n")
    before = victim.read_bytes()
    planted = tmp_path / "x.out"
    planted.symlink_to(victim)
    res = write(str(planted))
    assert res.code == 2 and "symbolic link" in res.err and res.err.count("\n") == 1, res.err
    assert victim.read_bytes() == before and os.path.islink(planted)
    dangling = tmp_path / "dangling.out"
    dangling.symlink_to(tmp_path / "nothing-yet")
    assert write(str(dangling)).code == 2
    assert not (tmp_path / "nothing-yet").exists()


def test_an_output_path_that_is_a_directory_is_one_line(cli, tmp_path) -> None:
    db = f"sqlite:///{tmp_path}/s.sqlite"
    assert cli("import", sample_export(tmp_path), "--db", db).code == 0
    res = cli("export", "1", "-o", str(tmp_path), "--db", db)
    assert res.code == 2 and "directory" in res.err and res.err.count("\n") == 1, res.err


# --- 3. third-party warnings on the terminal ---------------------------------------------------


def test_report_with_escapes_in_stored_text_keeps_stderr_clean(tmp_path) -> None:
    """Test ids and host names with ESC/OSC/BEL: matplotlib warned `Glyph 27 (ESC) missing` with the raw
    character, plus the source line of our savefig call, on stderr. Run as a process: pytest would
    otherwise collect the warnings itself. A glyph no font has (private use) still makes a warning:
    one note line, through safe_text."""
    evil = "\x1b]0;PWN\x07\x1b[2J\u009b31m"

    def mutate(doc: dict) -> None:
        doc["run"]["host"]["hostname"] = "host" + evil
        doc["run"]["target"] = "/t" + evil
        for test in doc["tests"]:
            test["id"] += evil + "\ue000"

    db = f"sqlite:///{tmp_path}/s.sqlite"
    env = {**os.environ, "NO_COLOR": "1"}
    imported = subprocess.run([*DISKSLEUTH, "import", sample_export(tmp_path, mutate), "--db", db], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    res = subprocess.run([*DISKSLEUTH, "report", "1", "-o", str(tmp_path / "r.html"), "--db", db], env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    for char in "\x1b\x07\x9b":
        assert char not in res.stderr, repr(res.stderr)
    # matplotlib's one-off notice on a machine where it has never run (its logging, not a warning)
    lines = [line for line in res.stderr.splitlines() if not line.startswith("Matplotlib is building the font cache")]
    assert all(line.startswith("disksleuth: note: ") for line in lines), lines
    assert any("Glyph 57344" in line for line in lines), lines  # the private-use glyph: one note
    assert len(lines) == len(set(lines)) and "savefig" not in res.stderr
    charts = re.findall(r"<svg.*?</svg>", (tmp_path / "r.html").read_text(), re.S)
    assert charts and not any("\x1b" in svg or "\x07" in svg for svg in charts)
    assert any("\\x1b]0;PWN\\x07" in svg for svg in charts)  # shown as text, as the terminal views show it


@pytest.mark.parametrize("url", ["postgresql://u:hun ter2@h/db", "postgresql://u:hun'ter2@h/db"])
def test_a_password_with_a_space_or_a_quote_is_masked_in_argparse_echoes(cli, url):
    # Attacker review of issue 13: the URL pattern stopped at the space or quote; " ter2@h/db" was printed.
    for args in (("runs", url), ("--json", "runs", url)):
        res = cli(*args)
        assert res.code == 2 and "ter2" not in res.err + res.out, res.err
        assert "postgresql://u:***@h/db" in res.err
