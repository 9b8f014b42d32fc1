"""Issue 39's reproductions through the command line alone (no new module imported), so they fail on the old
code for the reason the issue gives: `list --json` named no class of a C10 U3 V30 A2 card, and an eMMC reporting
life_time 0x0b 0x02 got no finding."""

from __future__ import annotations

import os

from conftest import SYSFS


def test_list_json_names_the_classes_the_ssr_claims(cli) -> None:
    doc = cli("list", "--sysfs-root", os.path.join(SYSFS, "sd_goodram_irdm_v30_a2"), "--json").json()
    assert doc["devices"][0].get("card", {}).get("classes") == ["C10", "U3", "V30", "A2"]


def test_emmc_past_its_life_has_a_critical_finding(cli) -> None:
    doc = cli("list", "--sysfs-root", os.path.join(SYSFS, "emmc_worn"), "--json").json()
    found = {f["code"]: f["severity"] for f in doc["devices"][0]["findings"]}
    assert found.get("emmc_worn") == "critical"
