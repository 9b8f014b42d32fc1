"""The run document and every other `--json` document (schema disksleuth/1): built here from the models,
encoded and decoded here, validated here. Fields are only ever added, never renamed.

present/ renders documents and models and never builds them; store/ saves and loads these documents."""

SCHEMA = "disksleuth/1"
