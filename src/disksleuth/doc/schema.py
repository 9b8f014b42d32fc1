"""The JSON Schema of `disksleuth/1` (schema.json beside this file): every `--json` document and the export
file. It ships in the package for consumers and the tests; disksleuth itself never validates against it
(imports are checked by doc/validate.py), so nothing here needs a validator at run time."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def load_schema() -> dict[str, Any]:
    """The schema as a dict (JSON Schema draft 2020-12); its `$defs` name each document."""
    schema: dict[str, Any] = json.loads(
        resources.files("disksleuth.doc").joinpath("schema.json").read_text(encoding="utf-8")
    )
    return schema
