"""nvme-cli text (issue 21): smart-log, list, id-ns and id-ctrl read from real texts (tests/data/paste/nvme;
SOURCES.md names each one's repository and licence), the same findings as smartctl's NVMe text, hostile input, and
properties."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disksleuth.analysis.health import health_findings
from disksleuth.errors import ParseError
from disksleuth.model.paste import PastedNvmeNamespace
from disksleuth.model.run import LbaFormat
from disksleuth.probe.nvme_text import parse_nvme_id_ctrl, parse_nvme_id_ns, parse_nvme_list, parse_nvme_smart_log
from disksleuth.probe.paste_text import read_paste
from disksleuth.probe.smartctl_text import parse_smartctl_text

FAST = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
DATA = os.path.join(os.path.dirname(__file__), "data", "paste")


def _read(*parts: str) -> str:
    with open(os.path.join(DATA, *parts), encoding="utf-8") as f:
        return f.read()


def _section(name: str, kind: str) -> tuple[str, int]:
    sections = [s for s in read_paste(_read("nvme", name)).sections if s.kind == kind]
    assert len(sections) == 1, [s.kind for s in read_paste(_read("nvme", name)).sections]
    return sections[0].text, sections[0].first_line


# --- smart-log ---


def test_nvme_cli_1x_smart_log_of_a_samsung_960_pro() -> None:
    text, first = _section("pippim-swap-smart-log.txt", "nvme_smart_log")
    pasted = parse_nvme_smart_log(text, first_line=first)
    h = pasted.health
    assert h.device == "/dev/nvme0"  # from "Smart Log for NVME device:nvme0"
    assert h.protocol == "NVMe"
    assert (h.temperature_c, h.percentage_used, h.available_spare_pct, h.available_spare_threshold_pct) == (
        36,
        0,
        100,
        10,
    )
    # "8,743,226"-style thousands separators on the counters.
    assert (h.power_on_hours, h.power_cycles, h.unsafe_shutdowns, h.media_errors, h.error_log_entries) == (
        376,
        519,
        66,
        0,
        198,
    )
    assert h.critical_warning == () and h.smart_passed is True
    # Sensors 3-8 print "0 C" (not reported) and are left out, as smartctl leaves out 0 K sensors.
    assert h.temperature_sensors_c == (36.0, 43.0)
    assert h.throttle == {"warning_temp_time": 0, "critical_comp_time": 0}
    # Each fact names its line in the paste (line 1 is the prompt, 2 the header).
    assert pasted.source_lines["temperature_c"] == 4
    assert pasted.source_lines["error_log_entries"] == 17
    assert pasted.source_lines["power_on_hours"] == 14
    assert {f.code for f in health_findings(h)} == set()


def test_a_quoted_indented_smart_log_from_a_forum_answer() -> None:
    # "> " quoting, a 4-space Markdown code indent and two trailing spaces on every line (pippim's quote of an
    # Ask Ubuntu answer): the normaliser strips the quoting, the parser the rest.
    text, first = _section("pippim-greyed-smart-log-quoted.txt", "nvme_smart_log")
    h = parse_nvme_smart_log(text, device="/dev/nvme0n1", first_line=first).health
    assert h.device == "/dev/nvme0n1"  # the caller's name wins over the header's
    assert (h.temperature_c, h.power_on_hours, h.power_cycles, h.error_log_entries) == (40, 1363, 2385, 608)
    assert h.temperature_sensors_c == (40.0, 51.0)


def _as_nvme_cli_1x(smartctl_text: str) -> str:
    """The NVMe health log of a real smartctl capture, printed as nvme-cli 1.x prints the same log page."""
    names = {
        "Critical Warning": "critical_warning",
        "Temperature": "temperature",
        "Available Spare": "available_spare",
        "Available Spare Threshold": "available_spare_threshold",
        "Percentage Used": "percentage_used",
        "Power Cycles": "power_cycles",
        "Power On Hours": "power_on_hours",
        "Unsafe Shutdowns": "unsafe_shutdowns",
        "Media and Data Integrity Errors": "media_errors",
        "Error Information Log Entries": "num_err_log_entries",
    }
    out = ["Smart Log for NVME device:nvme0 namespace-id:ffffffff"]
    for line in smartctl_text.splitlines():
        m = re.match(r"^([A-Za-z ]+):\s+(.*)$", line)
        if m and m.group(1) in names:
            value = m.group(2).replace(" Celsius", " C")
            out.append(f"{names[m.group(1)]:<36}: {value}")
    return "\n".join(out)


@pytest.mark.parametrize(
    "capture",
    [
        "linuxhw-nvme-SSDPEDMW400G4-B18E616856A8.txt",  # critical warning 0x08 (read-only), 109% used
        "linuxhw-nvme-MZQLB7T6HALA-00W07_1GB-FF392388F6DB.txt",  # spare 0%, 255% used, temperature "-"
        "linuxhw-nvme-MZPLL1T6HEHP-00003-610237FEB63E.txt",  # healthy
    ],
)
def test_the_same_warning_signs_as_smartctls_nvme_text(capture: str) -> None:
    real = _read("smartctl", capture)
    from_smartctl = parse_smartctl_text(real).health
    from_nvme_cli = parse_nvme_smart_log(_as_nvme_cli_1x(real)).health
    for name in (
        "critical_warning",
        "smart_passed",
        "temperature_c",
        "percentage_used",
        "available_spare_pct",
        "available_spare_threshold_pct",
        "media_errors",
        "error_log_entries",
        "unsafe_shutdowns",
    ):
        # power_on_hours is left out: smartctl_text does not carry the NVMe log's hours into power_on_time (as
        # smartctl --json does), so it reads None there; this parser fills it (checked on the real logs above).
        assert getattr(from_nvme_cli, name) == getattr(from_smartctl, name), name
    assert {f.code for f in health_findings(from_nvme_cli)} == {f.code for f in health_findings(from_smartctl)}


def test_the_read_only_drive_is_critical() -> None:
    h = parse_nvme_smart_log(_as_nvme_cli_1x(_read("smartctl", "linuxhw-nvme-SSDPEDMW400G4-B18E616856A8.txt"))).health
    assert h.critical_warning == ("media placed in read-only mode",)
    assert h.smart_passed is False
    assert {"health_critical", "health_worn"} <= {f.code for f in health_findings(h)}


@pytest.mark.parametrize(
    ("line", "celsius"),
    [
        ("temperature                         : 36 C", 36),  # nvme-cli 1.x (pippim)
        ("temperature\t\t\t\t: 32°C (305 Kelvin)", 32),  # nvme-cli 2.x, tabs (shape of Techno Tim's post)
        ("temperature                             : 33°C (306 Kelvin)", 33),
        ("temperature                             : -273 °C (0 K, -459 °F)", None),  # 0 K: not reported
        ("temperature : 309 K", 36),  # nvme-cli 0.x printed Kelvin
    ],
)
def test_temperature_forms(line: str, celsius: int | None) -> None:
    h = parse_nvme_smart_log("critical_warning : 0\n" + line).health
    assert h.temperature_c == celsius


def test_nvme_cli_2x_capitalised_keys_and_units_after_counters() -> None:
    # nvme-cli 2.x: "Data Units Read : 7,871 (4.03 GB)", "Warning Temperature Time", "Thermal Management T1 ...".
    text = "\n".join(
        [
            "critical_warning                        : 0x9",
            "Data Units Read                         : 7,871 (4.03 GB)",
            "percentage_used                         : 3%",
            "Thermal Management T1 Trans Count       : 12",
            "power_on_hours                          : 1,234,567",
        ]
    )
    h = parse_nvme_smart_log(text).health
    assert h.critical_warning == ("available spare below threshold", "media placed in read-only mode")
    assert h.percentage_used == 3 and h.power_on_hours == 1234567
    assert h.throttle["thermal_mgmt_temperature_1_transition_count"] == 12


# --- list ---


def test_nvme_cli_0_7_list_with_a_version_column() -> None:
    text, first = _section("oogali-ebs-nvme-cli-0.7-list-id-ctrl.txt", "nvme_list")
    rows = parse_nvme_list(text, first_line=first)
    assert rows == [
        PastedNvmeNamespace(
            node="/dev/nvme0n1",
            serial="vol11111111111111111",
            model="Amazon Elastic Block Store",
            namespace=1,
            usage_bytes=0,
            capacity_bytes=8_590_000_000,
            sector_bytes=512,
            metadata_bytes=0,
            firmware="1.0",
            source_line=4,
        ),
        PastedNvmeNamespace(
            node="/dev/nvme1n1",
            serial="vol22222222222222222",
            model="Amazon Elastic Block Store",
            namespace=1,
            usage_bytes=0,
            capacity_bytes=10_740_000_000,
            sector_bytes=512,
            metadata_bytes=0,
            firmware="1.0",
            source_line=5,
        ),
    ]


def test_nvme_cli_2x_list_with_generic_hex_namespace_and_4k_format() -> None:
    # Rows shaped as nvme-cli 2.x prints them (Techno Tim's and FEMU's lists): "Generic" column, NSID "0x1".
    text = "\n".join(
        [
            "Node                  Generic               SN                   Model                                    "
            "Namespace  Usage                      Format           FW Rev",
            "--------------------- --------------------- -------------------- ---------------------------------------- "
            "---------- -------------------------- ---------------- --------",
            "/dev/nvme0n1          /dev/ng0n1            S76ENL0X900787H      Samsung SSD 980 PRO 2TB                  "
            "0x1        244.43  GB /   2.00  TB    512   B +  0 B   5B2QGXA7",
            "/dev/nvme0n4          /dev/ng0n4            952103002724         NetApp E-Series                          "
            "0x4        214.75  GB / 214.75  GB      4 KiB +  0 B   08900900",
        ]
    )
    first, second = parse_nvme_list(text, first_line=10)
    assert (first.node, first.generic, first.model, first.namespace) == (
        "/dev/nvme0n1",
        "/dev/ng0n1",
        "Samsung SSD 980 PRO 2TB",
        1,
    )
    assert (first.usage_bytes, first.capacity_bytes, first.sector_bytes, first.firmware) == (
        244_430_000_000,
        2_000_000_000_000,
        512,
        "5B2QGXA7",
    )
    assert (second.namespace, second.sector_bytes, second.metadata_bytes, second.source_line) == (4, 4096, 0, 13)


def test_a_comma_locale_list() -> None:
    # A Ceph NVMe-oF guide's list: "10,49  MB /  10,49  MB" (LC_NUMERIC with a decimal comma).
    row = parse_nvme_list(
        "/dev/nvme1n1          /dev/ng1n1            Ceph00000000000001   Ceph bdev Controller"
        "                     1          10,49  MB /  10,49  MB      4 KiB +  0 B   23.01"
    )[0]
    assert (row.usage_bytes, row.capacity_bytes, row.model, row.firmware) == (
        10_490_000,
        10_490_000,
        "Ceph bdev Controller",
        "23.01",
    )


def test_a_narrowed_list_without_usage_columns() -> None:
    # AWS's EC2 guide shows Node, SN, Model and Namespace only, with "..." after the last row.
    rows = parse_nvme_list(
        "/dev/nvme1n1     AWS2C1436F5159EB6614 Amazon EC2 NVMe Instance Storage         1\n"
        "/dev/nvme2n1     AWSB1F4FF0C0A6C281EA Amazon EC2 NVMe Instance Storage         1         ..."
    )
    assert [(r.model, r.namespace, r.capacity_bytes) for r in rows] == [
        ("Amazon EC2 NVMe Instance Storage", 1, None)
    ] * 2


# --- id-ns and id-ctrl ---


def test_id_ns_human_readable_lines_alone_are_recognised_and_read() -> None:
    # Guides paste `nvme id-ns -H | grep "LBA Format"`: the rows alone, the second with a trailing space.
    text, first = _section("anduinos-id-ns-H.txt", "nvme_id_ns")
    assert first == 1
    assert parse_nvme_id_ns(text) == (LbaFormat(0, 512, 0, 2, True), LbaFormat(1, 4096, 0, 1, False))


def test_id_ns_without_h() -> None:
    text = "nlbaf   : 1\nflbas   : 0\nlbaf  0 : ms:0   lbads:9  rp:0x2 (in use)\nlbaf  1 : ms:0   lbads:12 rp:0x1"
    assert parse_nvme_id_ns(text) == (LbaFormat(0, 512, 0, 2, True), LbaFormat(1, 4096, 0, 1, False))


def test_id_ns_h_wrapped_by_a_mail_client() -> None:
    # Coly Li's linux-bcache reply quotes `id-ns -H` broken after "Data Size: 512 bytes -".
    text = (
        "LBA Format  0 : Metadata Size: 0   bytes - Data Size: 512 bytes -\n"
        "Relative Performance: 0x2 Good\n"
        "LBA Format  1 : Metadata Size: 0   bytes - Data Size: 4096 bytes -\n"
        "Relative Performance: 0x1 Better (in use)"
    )
    assert parse_nvme_id_ns(text) == (LbaFormat(0, 512, 0, 2, False), LbaFormat(1, 4096, 0, 1, True))


def test_id_ctrl_of_an_ebs_volume() -> None:
    text, first = _section("oogali-ebs-nvme-cli-0.7-list-id-ctrl.txt", "nvme_id_ctrl")
    ctrl = parse_nvme_id_ctrl(text, first_line=first)
    assert (ctrl.model, ctrl.serial, ctrl.firmware, ctrl.total_capacity_bytes) == (
        "Amazon Elastic Block Store",
        "vol22222222222222222",
        "1.0",
        None,  # tnvmcap 0: not reported
    )
    assert ctrl.source_lines["model"] == 12


def test_id_ctrl_capacity_with_thousands_separators() -> None:
    assert parse_nvme_id_ctrl("mn : X\ntnvmcap   : 1,600,321,314,816").total_capacity_bytes == 1_600_321_314_816


# --- hostile input ---

PARSERS = [parse_nvme_smart_log, parse_nvme_list, parse_nvme_id_ns, parse_nvme_id_ctrl]


@pytest.mark.parametrize("parse", PARSERS)
@pytest.mark.parametrize(
    "text", ["", "\n", "junk", ":", "critical", "\x00\x01" * 50, "Node SN Model", "lbaf  0 :", "LBA Format  0 : x"]
)
def test_junk_gives_a_parse_error(parse: object, text: str) -> None:
    with pytest.raises(ParseError):
        parse(text)  # type: ignore[operator]


def test_truncated_smart_log_gives_what_was_read() -> None:
    text, _ = _section("pippim-swap-smart-log.txt", "nvme_smart_log")
    cut = text[: text.index("percentage_used") + 10]
    h = parse_nvme_smart_log(cut).health
    assert h.temperature_c == 36 and h.available_spare_pct == 100 and h.percentage_used is None


def test_huge_numbers_are_not_counters() -> None:
    h = parse_nvme_smart_log("media_errors : " + "9" * 5000 + "\npower_on_hours : 1,234,567,890,123,456,789,012").health
    assert h.media_errors is None  # 5,000 digits: not a 128-bit counter
    assert h.power_on_hours == 1_234_567_890_123_456_789_012
    assert parse_nvme_smart_log("temperature : 99999999 C\ncritical_warning : 0").health.temperature_c is None


def test_a_one_megabyte_line_is_cut_not_read() -> None:
    big = "x" * (1 << 20)
    assert parse_nvme_smart_log(f"{big}\ncritical_warning : 0").health.critical_warning == ()
    with pytest.raises(ParseError):
        parse_nvme_list("/dev/nvme0n1 " + " " * (1 << 20) + "1")
    with pytest.raises(ParseError):
        parse_nvme_id_ns("lbaf  0 : ms:0 " + " " * (1 << 20))


@FAST
@given(st.text(max_size=300))
def test_any_text_gives_a_result_or_a_parse_error(text: str) -> None:
    for parse in PARSERS:
        with contextlib.suppress(ParseError):
            parse(text)  # type: ignore[operator]


@FAST
@given(
    st.lists(
        st.sampled_from(
            _read("nvme", "oogali-ebs-nvme-cli-0.7-list-id-ctrl.txt").splitlines()
            + _read("nvme", "pippim-swap-smart-log.txt").splitlines()
            + _read("nvme", "anduinos-id-ns-H.txt").splitlines()
        ),
        max_size=40,
    ),
    st.integers(min_value=0, max_value=200),
)
def test_real_lines_cut_anywhere_give_a_result_or_a_parse_error(lines: list[str], cut: int) -> None:
    text = "\n".join(lines)
    text = text[: len(text) - cut] if cut < len(text) else text
    for parse in PARSERS:
        with contextlib.suppress(ParseError):
            parse(text)  # type: ignore[operator]


@pytest.mark.slow  # megabytes of text through each parser: the fast lane has the hypothesis tests above
@pytest.mark.long
@pytest.mark.parametrize("parse", PARSERS)
def test_reading_is_linear(parse: object) -> None:
    """Ten times the text takes about ten times as long (under 15x)."""
    block = "\n".join(
        [
            _read("nvme", "pippim-swap-smart-log.txt"),
            _read("nvme", "oogali-ebs-nvme-cli-0.7-list-id-ctrl.txt"),
            _read("nvme", "anduinos-id-ns-H.txt"),
        ]
    )

    def cost(copies: int) -> float:
        text = "\n".join([block] * copies)
        gc.collect()
        gc.disable()  # CPU time of this process only (other jobs share the cores), no collection in one run
        try:
            start = time.process_time()
            with contextlib.suppress(ParseError):
                parse(text)  # type: ignore[operator]
            return time.process_time() - start
        finally:
            gc.enable()

    # Big enough that the small run is not all cache-warm start-up (40 copies take ~1 ms and read 3x cheaper a
    # copy than 400, linear or not).
    small = min(cost(200) for _ in range(5))
    large = min(cost(2000) for _ in range(3))
    assert large < small * 15
