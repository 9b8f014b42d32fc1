"""Orchestration: one function per command that inspects, plans, measures, judges and saves (cli -> run -> the rest)."""
