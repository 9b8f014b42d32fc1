"""smartctl text as pasted (issue 40 §4): attribute 183 *_Downshift counts link slow-downs, not corrupted
transfers; a packed 48-bit 175 raw value is decoded where smartmontools' drive database names its format, else not
counted; `health --from-smartctl` reads smartctl's text as `explain` does.

Real reports: tests/data/paste/smartctl (linuxhw/EnterpriseDrive, CC BY 4.0; SOURCES.md there)."""

from __future__ import annotations

import os

from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# --- 175: a packed raw value is not a count of failures ---------------------------------------------------------

LK0480 = os.path.join(DATA, "pastes", "smartctl", "linuxhw-ata-LK0480GFJSK-1D4ADDD7766B.txt")

# Written here in drivedb.h's layout (not copied from it): a VERSION entry, DEFAULT, a USB bridge, two families.
_DB = r"""
const drive_settings builtin_knowndrives[] = {
  { "VERSION: 7.3 $Id: drivedb.h test $",
    "-", "-",
    "Written for tests",
    ""
  },
  { "DEFAULT",
    "-", "", "", // comment, with a "quote" in it
    "-v 175,raw48,Program_Fail_Count_Chip,SSD "
  },
  { "USB: Some bridge; ",
    "0x1234:0x5678", "", "", ""
  },
  { "Example packed family", /* a block comment { with a brace } */
    "EXAMPLE (A|B)[0-9]+", // model
    "",
    "",
    "-v 175,raw16(raw16),Power_Loss_Cap_Test "
    "-v 183,raw48,SATA_Downshift_Count"
  },
  { "Example counting family",
    "COUNT.*", "FW1", "", "-v 175,raw48,Program_Fail_Count "
  },
};
"""


def test_drivedb_entries_and_presets_are_read() -> None:
    from disksleuth.probe.drivedb import matching_entry, parse_drivedb

    entries = parse_drivedb(_DB)
    assert [e.family for e in entries][1:] == ["DEFAULT", "USB: Some bridge; ", "Example packed family",
                                               "Example counting family"]  # fmt: skip
    assert entries[1].attribute(175) == ("raw48", "Program_Fail_Count_Chip")
    packed = matching_entry(entries, "EXAMPLE A12", None)
    assert packed is not None and packed.attribute(175) == ("raw16(raw16)", "Power_Loss_Cap_Test")
    assert packed.attribute(183) == ("raw48", "SATA_Downshift_Count")
    assert matching_entry(entries, "EXAMPLE A12 X", None) is None  # the whole model, not a prefix
    assert matching_entry(entries, "COUNT 1", "FW2") is None  # its firmware regex too
    assert matching_entry(entries, "COUNT 1", "FW1") is not None


def test_a_packed_175_under_the_default_name_is_not_counted_as_failures() -> None:
    """HPE's LK0480GFJSK (an Intel drive, WWN 5cd2e4) with smartctl 7.1, which does not know it: "175
    Program_Fail_Count_Chip ... 494449925062" (0x73_1F6C_0FC6: packed fields) was read as 494 billion failed
    programs, a media_errors warning."""
    (d,) = explain_paste([LK0480]).devices
    assert "media_errors" not in [f.code for f in d.findings]


def test_a_small_175_count_under_the_default_name_still_counts(tmp_path) -> None:
    path = tmp_path / "smart.txt"
    with open(LK0480, encoding="utf-8") as f:
        path.write_text(f.read().replace("494449925062", "3"))
    (d,) = explain_paste([str(path)]).devices
    (f,) = [f for f in d.findings if f.code == "media_errors"]
    assert "Program_Fail_Count_Chip (ATA 175) 3" in f.message


def test_the_installed_drive_database_names_intels_175() -> None:
    import pytest

    from disksleuth.probe.drivedb import attribute_preset, installed_drivedb

    if not installed_drivedb():
        pytest.skip("no smartmontools drivedb.h installed (apt-get install smartmontools)")
    assert attribute_preset("INTEL SSDSC2BB012T7", "N2010121", 175) == ("raw16(raw16)", "Power_Loss_Cap_Test")
    assert attribute_preset("NO SUCH DRIVE 1", None, 175) is None


_DB_TOKENS = ['"', "{", "}", ",", "//", "/*", "*/", "\\", "\n", "a", " -v 175,raw48,X"]


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_DB_TOKENS), max_size=60).map("".join))
def test_drivedb_parser_never_raises(text: str) -> None:
    from disksleuth.probe.drivedb import parse_drivedb

    parse_drivedb(text)


def test_drivedb_parser_is_linear() -> None:
    import time

    from disksleuth.probe.drivedb import parse_drivedb

    start = time.process_time()
    parse_drivedb("/*" + "*" * 200_000 + '{ "' + "\\" * 100_000)
    parse_drivedb('"\\' * 50_000)  # an open literal was tried again from each later quote: 14 s
    assert time.process_time() - start < 1.0
