"""One --json document out: the schema tag first (the documents themselves are built in doc/)."""

from __future__ import annotations

import json
import sys

from disksleuth.doc import SCHEMA

# Annotations only: importing typing (even for typing.TYPE_CHECKING) costs ~3 ms at start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


def emit(payload: dict[str, Any], stream: TextIO | None = None) -> None:
    """Print one JSON document with the schema tag first (to `stream`, else the current stdout)."""
    out = stream or sys.stdout
    json.dump({"schema": SCHEMA, **payload}, out, indent=2, default=str)
    out.write("\n")
    out.flush()
