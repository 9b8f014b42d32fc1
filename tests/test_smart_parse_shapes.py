"""smartctl JSON members of the wrong JSON type are left out, never an internal error."""

from __future__ import annotations

import json
import os

import pytest
from conftest import SMARTCTL_FIXTURES

from disksleuth.probe.smart_parse import parse_smartctl_json

_ATA = "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"


@pytest.mark.parametrize("table", [5, 1.5, True, "ab", {"id": 1}])
def test_sata_phy_table_of_the_wrong_type_is_ignored(cli, tmp_path, table):
    # `x or []` let a number through to a for loop: "internal error: TypeError: 'int' object is not iterable".
    with open(os.path.join(SMARTCTL_FIXTURES, _ATA)) as fh:
        doc = json.load(fh)
    doc["sata_phy_event_counters"] = {"table": table}
    text = json.dumps(doc)
    health = parse_smartctl_json(text)
    assert not any(k.startswith("SATA phy") for k in health.interface_error_counts)
    path = tmp_path / "smartctl.json"
    path.write_text(text)
    res = cli("health", "--from-smartctl", str(path))
    assert "internal error" not in res.err, res.err
    assert res.code in (0, 1), res.err
