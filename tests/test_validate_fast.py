"""The import's checks answer first with a fast yes or no (doc.validate's twins, no path built) and walk again
for the message only on a no. The twins may never say yes where the full check says no: property-tested
here on the same hostile documents the import's property tests use, against the full check alone."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from test_store_import_props import BASE, mutated_docs

from disksleuth.doc import validate
from disksleuth.errors import ParseError


def _outcome(doc: object) -> str | None:
    try:
        validate.check_run_doc(copy.deepcopy(doc), "runs[0]")
    except ParseError as exc:
        return str(exc)
    except RecursionError:
        return "recursion"
    return None


@pytest.fixture
def full_check_only(monkeypatch):
    """The checks with every fast twin saying no: the full walk decides everything, as before the twins."""

    def never(*_args: object) -> bool:
        return False

    def make(*_args: object):
        return never

    def run(doc: object) -> str | None:
        with monkeypatch.context() as m:
            m.setattr(validate, "_plain_ok", never)
            m.setattr(validate, "_type_ok", make)
            m.setattr(validate, "_fields_ok", make)
            return _outcome(doc)

    return run


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated_docs())
def test_the_fast_checks_agree_with_the_full_ones(full_check_only, doc):
    assert _outcome(doc) == full_check_only(doc)


def test_the_control_is_valid_both_ways(full_check_only):
    assert _outcome(BASE) is None and full_check_only(BASE) is None
    bad = copy.deepcopy(BASE)
    bad["tests"][0]["series"][1]["read_mbps"] = float("nan")
    assert _outcome(bad) == full_check_only(bad) is not None
