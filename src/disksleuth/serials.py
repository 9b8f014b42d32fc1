"""Drive serial numbers as ids that may leave the machine: keyed (HMAC-SHA256), never a plain digest.

An SD card's serial is 32 bits, so its plain SHA-256 is found by trying every value in under an hour:
a plain digest is the serial. The id is keyed instead, as `capture` masks serials (HMAC-SHA256 with a
key from `secrets`). The key comes from DISKSLEUTH_SERIAL_KEY when a fleet sets one, so the same drive
has the same id on every host; otherwise a results store keeps its own key (generated on first use), so
every host sharing a PostgreSQL store agrees. Without either there is no id at all, never a weaker one.

Pure: no SQLAlchemy, no I/O besides the environment variable, so the exporter imports it cheaply.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping

from disksleuth.errors import UsageError

ENV_KEY = "DISKSLEUTH_SERIAL_KEY"
KEY_BYTES = 32
MIN_ENV_KEY_CHARS = 16  # a short passphrase would be searched as fast as the serial it hides
_CONTEXT = b"disksleuth serial id v1\0"


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def key_from_env(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The fleet's key (DISKSLEUTH_SERIAL_KEY, any text of 16 characters or more), or None if unset."""
    text = (os.environ if environ is None else environ).get(ENV_KEY)
    if text is None or text == "":
        return None
    if len(text) < MIN_ENV_KEY_CHARS:
        raise UsageError(
            f"{ENV_KEY} is {len(text)} characters; use {MIN_ENV_KEY_CHARS} or more, "
            "e.g. python3 -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return text.encode()


def plain_digest(serial: str) -> str:
    """SHA-256 of the serial, as stores and exports before schema 4 kept it. Never shown or stored on its
    own: it is only the message the key signs, so a store migrated from plain digests gets exactly the ids
    its drives would get now."""
    return hashlib.sha256(serial.encode()).hexdigest()


def id_from_plain_digest(digest: str, key: bytes) -> str:
    return hmac.new(key, _CONTEXT + digest.encode(), hashlib.sha256).hexdigest()


def serial_id(serial: str | None, key: bytes | None) -> str | None:
    """The keyed id of a serial (64 hex digits), or None without a serial or without a key."""
    if not serial or key is None:
        return None
    return id_from_plain_digest(plain_digest(serial), key)
