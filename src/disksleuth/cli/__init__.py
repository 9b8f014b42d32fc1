"""The command line: one module per command family, each declaring its own options beside its code
(inventory, measure, history, explain, health, fleet, top), listed with their help in `commands`; `app` assembles
the parser, importing only the chosen command's module, runs it with an `Environment` and maps library errors to
one line and an exit code."""

from disksleuth.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
