"""Plain dicts for --json (pure). Fields are only ever added, never renamed: schema disksleuth/1."""

from __future__ import annotations

import json
import sys

from disksleuth.doc import SCHEMA

# Annotations only: importing typing (even for typing.TYPE_CHECKING) costs ~3 ms at start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def emit(payload: dict[str, Any]) -> None:
    """Print one JSON document with the schema tag first."""
    doc = {"schema": SCHEMA, **payload}
    json.dump(doc, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
