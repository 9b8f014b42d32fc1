"""Quirks of real smartctl texts found while adding the smart batch of the paste corpus (tests/data/paste)."""

from __future__ import annotations

import os

from disksleuth.analysis.health import failing_attributes, health_findings
from disksleuth.model.run import Health
from disksleuth.probe.paste_text import read_paste
from disksleuth.probe.smartctl_text import parse_smartctl_text

CORPUS = os.path.join(os.path.dirname(__file__), "data", "paste")


def _health(rel: str) -> Health:
    with open(os.path.join(CORPUS, rel), encoding="utf-8") as f:
        (s,) = [s for s in read_paste(f.read()).sections if s.kind == "smartctl"]
    return parse_smartctl_text(s.text, first_line=s.first_line).health


def test_brief_form_now_marks_an_attribute_failing() -> None:
    """linuxhw CT500MX200SSD1-8CA288FE94BD (smartctl -x): "202 Percent_Lifetime_Remain ----CK 000 000 001 NOW 100".
    The brief form writes FAILING_NOW as "NOW"; read as "-", an attribute that is not pre-fail but at its
    threshold was not named failing."""
    health = _health("smartctl/linuxhw-ata-CT500MX200SSD1-8CA288FE94BD.txt")
    assert [a.id for a in failing_attributes(health)] == [202]
    (critical,) = [f for f in health_findings(health) if f.code == "health_critical"]
    assert [a["id"] for a in critical.evidence["failing_attributes"]] == [202]


def test_brief_form_past_is_not_failing_now() -> None:
    """linuxhw ST3750640AS-F2DBE2D65A88: "190 Airflow_Temperature_Cel -O---K 059 043 045 Past ..." failed once,
    not now."""
    health = _health("smartctl/linuxhw-ata-ST3750640AS-F2DBE2D65A88.txt")
    (airflow,) = [a for a in health.attributes if a.id == 190]
    assert airflow.when_failed == "past"
    assert 190 not in [a.id for a in failing_attributes(health)]
