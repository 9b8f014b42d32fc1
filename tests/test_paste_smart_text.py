"""smartctl text as pasted (issue 40 §4): attribute 183 *_Downshift counts link slow-downs, not corrupted
transfers; a packed 48-bit 175 raw value is decoded where smartmontools' drive database names its format, else not
counted; `health --from-smartctl` reads smartctl's text as `explain` does.

Real reports: tests/data/paste/smartctl (linuxhw/EnterpriseDrive, CC BY 4.0; SOURCES.md there)."""

from __future__ import annotations

import os

from conftest import DATA

from disksleuth.run.paste import explain_paste

SMART = os.path.join(DATA, "paste", "smartctl")
CRUCIAL_DOWNSHIFT = os.path.join(SMART, "linuxhw-ata-CT500MX200SSD1-8CA288FE94BD.txt")  # 183 = 30, 199 = 0
INTEL_BOTH = os.path.join(SMART, "linuxhw-ata-SSDSC2BW120A4-E035AA5834E0.txt")  # 183 = 5,233, 199 = 19


def _interface(path: str) -> str:
    (d,) = explain_paste([path]).devices
    (f,) = [f for f in d.findings if f.code == "interface_crc_errors"]
    return f.message


def test_downshift_alone_is_said_as_link_slow_downs_not_corrupted_transfers() -> None:
    message = _interface(CRUCIAL_DOWNSHIFT)
    assert "corrupted on the way" not in message
    assert "slowed the SATA link down" in message and "SATA_Interfac_Downshift (ATA 183) 30" in message


def test_downshift_beside_crc_errors_is_told_apart() -> None:
    message = _interface(INTEL_BOTH)
    assert "corrupted on the way (UDMA_CRC_Error_Count (ATA 199) 19 so far)" in message
    assert "slowed the SATA link down after errors (SATA_Downshift_Count (ATA 183) 5,233 so far)" in message


def test_health_from_smartctl_reads_text_as_explain_does(tmp_path) -> None:
    """`health --from-smartctl` refused a text report ("not smartctl JSON output", exit 2) that explain reads."""
    import io
    import json

    from disksleuth.cli import main
    from disksleuth.cli.env import Environment

    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(""), out, err, dict(os.environ), False, False, False)
    db = str(tmp_path / "store.db")
    code = main(["health", "--from-smartctl", CRUCIAL_DOWNSHIFT, "--db", db, "--json"], env=env)
    assert code in (0, 1), err.getvalue()
    doc = json.loads(out.getvalue())
    text = json.dumps(doc)
    assert "CT500MX200SSD1" in text and "interface_crc_errors" in text
    out, err = io.StringIO(), io.StringIO()
    env = Environment(io.StringIO(""), out, err, dict(os.environ), False, False, False)
    hdparm = os.path.join(DATA, "paste", "hdparm", "pippim-askubuntu-1033986-hdparm-tT.txt")
    assert main(["health", "--from-smartctl", hdparm, "--db", db], env=env) == 2
    assert "not smartctl output" in err.getvalue() and "hdparm" in err.getvalue()
