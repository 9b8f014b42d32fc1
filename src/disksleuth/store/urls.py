"""Where the results store is, and its URL fit to show: --db and DISKSLEUTH_DB resolved, passwords masked.

Imports without SQLAlchemy, so the command line starts without the database layer; masking a URL reads it
with SQLAlchemy (`make_url`), loaded then, so what is masked is exactly what the driver would take as a password.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import Any

from disksleuth.errors import EnvironmentProblem, UsageError

SUPPORTED = "a file path, sqlite:///PATH or postgresql://USER@HOST/DB"
# libpq's secret connection parameters (the ones PQconndefaults marks "*", shown hidden in its own
# dialogs): password and sslpassword, and PostgreSQL 18's OAuth client secret. A URL may carry any of them
# in its query string (postgresql://u@h/db?password=...), which libpq and SQLAlchemy both accept.
_SECRET_QUERY_KEYS = ("password", "sslpassword", "oauth_client_secret")
MASK = "***"


def default_url() -> str:
    url = os.environ.get("DISKSLEUTH_DB")
    if url:
        return url
    return f"sqlite:///{os.path.join(data_dir(), 'results.sqlite')}"


def data_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "disksleuth")


def resolve_url(text: str) -> str:
    """--db / DISKSLEUTH_DB as given -> a SQLAlchemy URL. A plain path is a SQLite file, as the README says."""
    if "://" not in text:
        if not text.strip():
            raise UsageError(f"--db {text!r}: give {SUPPORTED}")
        return "sqlite:///" + os.path.abspath(os.path.expanduser(text))
    scheme, _, rest = text.partition("://")
    scheme = scheme.lower()
    if scheme == "sqlite":
        return text
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        try:
            import psycopg  # noqa: F401  (psycopg 3: `pip install 'disksleuth[postgres]'`)
        except ImportError:
            raise EnvironmentProblem(
                "--db postgresql://...: the PostgreSQL driver is not installed; pip install 'disksleuth[postgres]'"
            ) from None
        return "postgresql+psycopg://" + rest
    what = f"{scheme}:// is not supported" if scheme else "a URL needs a scheme"
    raise UsageError(f"--db {redact_url(text)}: {what}; give {SUPPORTED}")


def _parse(url: str) -> Any:
    """The URL as the driver reads it (sqlalchemy's make_url), so a password masked here is the one it
    would send. Imported here, not at the top: only a message that quotes a URL pays for SQLAlchemy."""
    from sqlalchemy.engine import make_url

    return make_url(url)


def _values(given: Any) -> tuple[str, ...]:
    return given if isinstance(given, tuple) else (given,)


def _secret_key(key: str) -> bool:
    key = key.lower()
    return key in _SECRET_QUERY_KEYS or "password" in key or "secret" in key


def redact_url(url: str) -> str:
    """A store URL fit for a message, a JSON field or a header: the userinfo password and every secret
    query parameter shown as ***. The one function every place that shows a store URL goes through."""
    if "://" not in url:
        return url  # a plain path holds no credentials
    try:
        parsed = _parse(url)
    except Exception:  # not even URL-shaped: the scheme is all we need to name
        return url.split("://", 1)[0] + "://..."
    secret_keys = [key for key in parsed.query if _secret_key(key)]
    if parsed.password is None and not secret_keys:
        return url  # nothing to hide: shown as the user typed it
    base: str = parsed.set(query={}).render_as_string(hide_password=True)
    if not parsed.query:
        return base
    pairs = []
    for key, values in parsed.query.items():  # kept in the order given, values quoted as SQLAlchemy reads them
        for value in _values(values):
            shown = MASK if key in secret_keys else urllib.parse.quote_plus(value)
            pairs.append(f"{urllib.parse.quote_plus(key)}={shown}")
    return f"{base}?{'&'.join(pairs)}"


def redact_urls_in(text: str) -> str:
    """Text that may quote a store URL (a usage error echoing --db, an unexpected exception) with every
    URL in it passed through redact_url."""
    if "://" not in text:
        return text

    def redacted(match: re.Match[str]) -> str:
        url = match.group()
        # A message of ours already shows the URL masked, often followed by ':' — leave it as it reads.
        if _already_masked(url):
            return url
        # The punctuation after a URL that hides nothing is the sentence's, not the URL's: "--db http://...:"
        # came out as "--db http://..." (the colon taken as an empty port, the URL unparseable). A URL
        # with something to hide is masked whole, its last characters included.
        bare = url.rstrip(":,;.)")
        if bare != url and redact_url(bare) == bare:
            return url
        return redact_url(url)

    def quoted(match: re.Match[str]) -> str:
        # A quoted argument (argparse echoes repr()) is one URL even with a space or the other quote
        # in its password: "postgresql://u:hun ter2@h/db" leaked " ter2@h/db" to the plain pattern.
        quote = match.group(1) or match.group(3)
        url = match.group(2) if match.group(1) else match.group(4)
        return quote + (url if _already_masked(url) else redact_url(url)) + quote

    text = re.sub(r"(')([^']*://[^']*)'|(\")([^\"]*://[^\"]*)\"", quoted, text)
    return re.sub(r"[^\s'\"]+://[^\s'\"]+", redacted, text)


def _already_masked(url: str) -> bool:
    try:
        parsed = _parse(url)
    except Exception:
        return False
    values = [value for key, given in parsed.query.items() if _secret_key(key) for value in _values(given)]
    masked = (MASK, *(MASK + end for end in ":,;.)"))
    return parsed.password in (None, MASK) and all(value in masked for value in values)
