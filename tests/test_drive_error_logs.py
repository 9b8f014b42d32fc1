"""The drive's own error log summarised (issue 38 item 2): the ATA SMART error log ("Device Error Count: 3" in
`smartctl -x`, `ata_smart_error_log` in JSON) and the NVMe Error Information log: count, newest entries, growth
between readings (error_log_growth), in `health` text and JSON. Real captures (tests/data/drive-logs/SOURCES.md):
scrutiny's smart-fail2.json (a failing Hitachi HDS721050DLE630 with 56 logged errors, MIT) and its copy of a day
before (the count 53 and the entries up to #53: the three newest left out), the pasted texts of
tests/data/paste/smartctl, and the NVMe fixtures of test_drive_heat.py."""

from __future__ import annotations

import os
import time

from conftest import HERE
from hypothesis import given, settings
from hypothesis import strategies as st

LOGS = os.path.join(HERE, "data", "drive-logs")
PASTES = os.path.join(HERE, "data", "paste", "smartctl")
FAIL2 = os.path.join(LOGS, "scrutiny-smart-fail2.json")
FAIL2_BEFORE = os.path.join(LOGS, "scrutiny-smart-fail2-day-before.json")


def _text_health(name: str):  # noqa: ANN202
    from disksleuth.probe.smartctl_text import parse_smartctl_text

    with open(os.path.join(PASTES, name)) as fh:
        return parse_smartctl_text(fh.read()).health


def test_health_shows_the_ata_error_log_and_its_growth(cli) -> None:  # noqa: ANN001
    """Was: only "error log entries 56", nothing of what failed, and no finding when it grew."""
    res = cli("health", "--from-smartctl", FAIL2_BEFORE)
    assert "error_log_growth" not in res.out  # a first reading: history, not news
    res = cli("health", "--from-smartctl", FAIL2)
    assert "ATA error log: 56 error(s) over the drive's life, newest first:" in res.out
    assert "#56 at 61,957 h: Error: IDNF at LBA = 0x06f57ae8 = 116751080 (READ FPDMA QUEUED)" in res.out
    assert "warn · error_log_growth" in res.out
    assert "logged 3 new error(s) in its ATA error log since 2021-11-15" in res.out
    assert "(its count 53 → 56)" in res.out

    res = cli("health", "--json", "--no-save", "--from-smartctl", FAIL2)
    from test_json_schema import assert_valid

    assert_valid(res.json(), "health")
    log = res.json()["health"]["error_log"]
    assert log["kind"] == "ATA" and log["count"] == 56 and len(log["entries"]) == 5
    assert log["entries"][0] == {
        "number": 56,
        "what": "Error: IDNF at LBA = 0x06f57ae8 = 116751080",
        "power_on_hours": 61957,
        "lba": 116751080,
        "status": None,
        "command": "READ FPDMA QUEUED",
    }


def test_refused_nvme_commands_grow_the_log_as_info_between_readings(tmp_path) -> None:  # noqa: ANN001
    from disksleuth.run.health import drive_health

    db = str(tmp_path / "store.sqlite")
    drive_health(from_smartctl=os.path.join(LOGS, "nvme-CT250P2SSD8-hot.json"), db=db)
    later = drive_health(from_smartctl=os.path.join(LOGS, "nvme-CT250P2SSD8-hot-next-day.json"), db=db)
    (f,) = [f for f in later.findings if f.code == "error_log_growth"]
    assert f.severity == "info" and f.evidence["benign"] is True
    assert "error count 4: Invalid Field in Command" in f.message and "a tool probing it" in f.message


def test_ata_error_log_from_text_entries_and_the_failing_command() -> None:
    h = _text_health("linuxhw-ata-HDS721010CLA332-8C32A7A982FE.txt")  # -x: "Device Error Count: 1"
    assert h.error_log is not None and h.error_log.kind == "ATA" and h.error_log.count == 1
    (e,) = h.error_log.entries
    assert (e.number, e.power_on_hours, e.lba, e.command) == (1, 44179, 973506832, "READ FPDMA QUEUED")
    assert e.what == "Error: IDNF at LBA = 0x3a068910 = 973506832"
    h = _text_health("linuxhw-ata-ST31000340NS-F50F19C496DE.txt")  # 8 entries printed
    assert h.error_log is not None and h.error_log.count and len(h.error_log.entries) <= 8
    assert all(e.what and e.what.startswith("Error: ") for e in h.error_log.entries)
    numbers = [e.number or 0 for e in h.error_log.entries]
    assert numbers == sorted(numbers, reverse=True)  # newest first


def test_nvme_error_log_from_text_with_and_without_the_message_column() -> None:
    from disksleuth.analysis.error_logs import is_benign, summary_lines

    h = _text_health("linuxhw-nvme-MZQLB7T6HALA-00W07_1GB-FF392388F6DB.txt")
    assert h.error_log is not None and h.error_log.count == 5
    assert [(e.number, e.what, e.status) for e in h.error_log.entries] == [
        (5, "Invalid Field in Command", 0x4004),
        (4, "Invalid Field in Command", 0x4004),
    ]
    # smartctl 7.1 prints no Message column: the status decodes to the same refusal (SCT 0, SC 02h)
    h = _text_health("pysmart-nvme_6-_-d_nvme_--all__dev_nvme0.txt")
    assert h.error_log is not None
    (e,) = h.error_log.entries
    assert (e.number, e.what, e.status) == (2597, None, 0xC005) and is_benign(e, "NVMe")
    assert summary_lines(h.error_log) == [
        "NVMe error log: 2,597 error(s) over the drive's life, newest first:",
        "  error count 2,597: status 0xc005 (a refused command)",
    ]


def test_an_error_log_that_grew_during_a_run_names_the_new_entries() -> None:
    from disksleuth.analysis.health import health_findings
    from disksleuth.probe.smart_parse import parse_smartctl_json

    with open(FAIL2) as fh:
        h = parse_smartctl_json(fh.read())
    (f,) = [f for f in health_findings(h, {"error_log_entries": (54, 56)}) if f.code == "error_log_growth"]
    assert f.severity == "warn" and "during the run" in f.message
    assert [n.split(":")[0] for n in f.evidence["newest"]] == ["#56 at 61,957 h", "#55 at 61,957 h"]


def test_odd_and_hostile_error_logs_never_raise_and_stay_bounded() -> None:
    from disksleuth.probe.error_logs import parse_error_log
    from disksleuth.probe.smartctl_text import parse_smartctl_text

    for doc in (
        {"nvme_error_information_log": "table"},
        {"nvme_error_information_log": {"table": ["x", {"error_count": True}, {"status_field": 7}]}},
        {"nvme_error_information_log": {"table": [{"error_count": 3, "status_field": {"status_code": 999}}]}},
        {"ata_smart_error_log": {"summary": {"count": "56", "table": [{"error_description": 5}]}}},
        {"ata_smart_error_log": {"extended": {"count": 2, "table": [{"error_number": 1 << 80}]}}},
    ):
        parse_error_log(doc)
    # 100,000 NVMe rows and an ATA description of 60,000 characters: at most 8 entries, read in one pass
    rows = "\n".join(
        f"{i:3d} {100000 - i:10d}     0  0x0015  0xc005  0x028  -  0  -  Invalid Field" for i in range(100000)
    )
    text = (
        "smartctl 7.3 2022-02-28 r5338\n=== START OF INFORMATION SECTION ===\nModel Number: X\n"
        "Error Information Log Entries: 100000\n\nError Information (NVMe Log 0x01, 16 of 64 entries)\n"
        "Num   ErrCount  SQId   CmdId  Status  PELoc          LBA  NSID    VS\n" + rows + "\n"
    )
    start = time.monotonic()
    h = parse_smartctl_text(text).health
    assert time.monotonic() - start < 5
    assert h.error_log is not None and len(h.error_log.entries) == 8 and h.error_log.entries[0].number == 100000
    ata = (
        "smartctl 7.3\nDevice Model: X\nATA Error Count: 1\nError 1 occurred at disk power-on lifetime: 5 hours\n"
        "  40 51 00 00 00 00 00  Error: UNC at LBA = 0x" + "f" * 60000 + " = 1\n"
    )
    h = parse_smartctl_text(ata).health
    assert h.error_log is not None and h.error_log.entries[0].lba is None
    assert len(h.error_log.entries[0].what or "") <= 200


def test_an_error_description_cannot_reach_the_terminal_as_markup_or_escapes(cli, tmp_path) -> None:  # noqa: ANN001
    import json

    with open(FAIL2) as fh:
        doc = json.load(fh)
    doc["ata_smart_error_log"]["summary"]["table"][0]["error_description"] = "Error: [bold]x[/] \x1b[2J\x1b]0;owned\x07"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(doc))
    res = cli("health", "--no-save", "--from-smartctl", str(path))
    assert "\x1b" not in res.out and "\x07" not in res.out
    assert "#56 at 61,957 h: Error: [bold]x[/] \\x1b[2J" in res.out


def test_smartctl_exporter_error_logs_with_and_without_descriptions() -> None:
    from disksleuth.analysis.error_logs import summary_lines
    from disksleuth.probe.smart_parse import parse_smartctl_json

    def health(name: str):  # noqa: ANN202
        with open(os.path.join(LOGS, name)) as fh:
            return parse_smartctl_json(fh.read())

    log = health("smartctl_exporter-HGST_HUS724020ALE640_28.json").error_log
    assert log is not None and (log.kind, log.count, len(log.entries)) == ("ATA", 12, 5)
    assert log.entries[0].what == "Error: ICRC, ABRT at LBA = 0x07ffaa67 = 134195815"
    assert (log.entries[0].number, log.entries[0].power_on_hours, log.entries[0].lba) == (12, 15760, 134195815)
    log = health("smartctl_exporter-ST3200820AS_16.json").error_log
    assert log is not None and log.count == 98 and log.entries[0].what is None
    assert (log.entries[0].lba, log.entries[0].command) == (4843886, "SET NATIVE MAX ADDRESS EXT [OBS-ACS-3]")
    no_words = "  #98 at 7,042 h: no description, LBA 4,843,886 (SET NATIVE MAX ADDRESS EXT [OBS-ACS-3])"
    assert summary_lines(log)[1] == no_words


# The members the parser looks at, and lines of the text sections it reads, so that random shapes reach them.
_KEYS = [
    "summary", "extended", "count", "table", "error_number", "lifetime_hours", "error_description",
    "previous_commands", "command_name", "completion_registers", "lba", "value", "error_count", "status_field",
    "status_code", "status_code_type", "do_not_retry", "string", "printed",
]  # fmt: skip
_TEXT_LINES = [
    "Error Information (NVMe Log 0x01, 16 of 64 entries)",
    "Num   ErrCount  SQId   CmdId  Status  PELoc          LBA  NSID    VS  Message",
    "  0       2888     0  0x0015  0xc005  0x028            -     0     -  Invalid Field in Command",
    "  1 99999999999999999999999     0  0x0015  0xffff  0x028  123456789012345678901  0  -",
    "ATA Error Count: 3",
    "Device Error Count: 2",
    "Error 3 [2] occurred at disk power-on lifetime: 44179 hours (1840 days + 19 hours)",
    "Error 1 occurred at disk power-on lifetime: 5 hours",
    "  10 -- 51 00 08 00 00 3a 06 89 10 0a 00  Error: IDNF at LBA = 0x3a068910 = 973506832",
    "  Commands leading to the command that caused the error were:",
    "  CR FEATR COUNT  LBA_48  LH LM LL DV DC  Powered_Up_Time  Command/Feature_Name",
    "  60 01 00 00 28 00 00 6b fc 41 00 40 00  1d+ ...          READ FPDMA QUEUED",
    "",
]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=60, deadline=None)
@given(log=_JSON, nvme=_JSON)
def test_any_error_log_shape_gives_a_model(log, nvme) -> None:  # noqa: ANN001
    """Whatever sits where the logs should be: an ErrorLog or None, never an exception (the parser's property)."""
    from disksleuth.analysis.error_logs import summary_lines
    from disksleuth.probe.error_logs import parse_error_log

    for doc in ({"ata_smart_error_log": log}, {"nvme_error_information_log": nvme}, {"ata_smart_error_log": nvme}):
        result = parse_error_log(doc)
        if result is not None:
            assert len(result.entries) <= 8
            summary_lines(result)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.sampled_from(_TEXT_LINES) | st.text(max_size=80), max_size=30))
def test_any_error_log_text_gives_a_model_or_a_parse_error(lines) -> None:  # noqa: ANN001
    from disksleuth.errors import ParseError
    from disksleuth.probe.smartctl_text import parse_smartctl_text

    try:
        h = parse_smartctl_text("\n".join(["smartctl 7.3", "Model Number: X", *lines]))
    except ParseError:
        return
    log = h.health.error_log
    assert log is None or len(log.entries) <= 8
