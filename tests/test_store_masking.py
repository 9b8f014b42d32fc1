"""A store URL's password is never shown: not in the query string (password=, sslpassword=,
oauth_client_secret=), not in argparse's echoes, not in the JSON `store.error` of a run the store refused,
and not by a real PostgreSQL server's error messages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import SYSFS, needs_fio, ok_but_for_each_others_io, sample_export

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

    from disksleuth.run import exporter

    snap = exporter.snapshot(os.path.join(SYSFS, "scenario_badly_seated"), None, REFUSED_URL, hostname="h")
    assert snap.bench_error and "password=***" in snap.bench_error
    _no_secret(snap.bench_error)


@pytest.mark.slow
@needs_fio
def test_the_json_store_field_masks_the_query_password(cli, tmp_path, monkeypatch) -> None:
    """A run the store refused: the warning line and the JSON `store.error` name the store, masked."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    target = tmp_path / "t.img"
    target.write_bytes(os.urandom(16 << 20))
    res = cli("bench", str(target), "--time", "1", "--db", REFUSED_URL, "--json")
    # The scratch file is on the disk the other workers' runs share: their I/O is seen (foreign_io, exit 1).
    assert ok_but_for_each_others_io(res.code, res.out), res.err
    store = res.json()["store"]
    assert store["saved"] is False and "password=***" in store["error"], store
    _no_secret(res.out, res.err, Path(store["kept_in"]).read_text())


@pytest.mark.parametrize("url", ["postgresql://u:hun ter2@h/db", "postgresql://u:hun'ter2@h/db"])
def test_a_password_with_a_space_or_a_quote_is_masked_in_argparse_echoes(cli, url):
    # Attacker review of issue 13: the URL pattern stopped at the space or quote; " ter2@h/db" was printed.
    for args in (("runs", url), ("--json", "runs", url)):
        res = cli(*args)
        assert res.code == 2 and "ter2" not in res.err + res.out, res.err
        assert "postgresql://u:***@h/db" in res.err
