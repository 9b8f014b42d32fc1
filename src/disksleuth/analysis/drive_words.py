"""The words of the temperature and error-log findings and rows (issue 38), in one place: `health`, `check`,
`explain`, the exporter and `top` say the same things about heat and a drive's error log, with a unit on every
figure."""

from __future__ import annotations

# NVMe SMART / Health log counters (NVMe base spec 2.0, Log Page 02h: bytes 192-199 in minutes, 216-231 in seconds;
# smartmontools nvmeprint.cpp names): key -> (words, unit). Thermal management temperature 1 is the drive's light
# throttling point, 2 its heavy one (NVMe base spec, Host Controlled Thermal Management: TMT1, TMT2).
THROTTLE_WORDS = {
    "warning_temp_time": ("time above the warning temperature", "min"),
    "critical_comp_time": ("time above the critical temperature", "min"),
    "thermal_mgmt_temperature_1_transition_count": ("light throttling (thermal management 1) started", "times"),
    "thermal_mgmt_temperature_2_transition_count": ("heavy throttling (thermal management 2) started", "times"),
    "thermal_mgmt_temperature_1_total_time": ("time in light throttling (thermal management 1)", "s"),
    "thermal_mgmt_temperature_2_total_time": ("time in heavy throttling (thermal management 2)", "s"),
}

# The drive classes whose default limits analysis/temperature.py uses, as the findings name them.
CLASS_WORDS = {"hdd": "a hard disk", "ssd": "a SATA/SAS SSD", "nvme": "an NVMe drive"}

HEAT_HINT = (
    "Give it airflow or a heatsink (M.2 drives often need one); check that a fan covers the slot, and that a dock or "
    "enclosure is not trapping heat."
)
HOT_NOW_HINT = HEAT_HINT + " Above its critical temperature a drive may shut itself down or lose data: cool it first."
ERROR_LOG_HINT = "Read them with `smartctl -x` (ATA: the error log) or `nvme error-log` (NVMe) to see what failed."
BENIGN_HINT = (
    "Nothing to do for the drive: a tool (smartctl, nvme-cli, a monitoring agent) asked for a feature or log page the "
    "drive does not have. Watch for entries with other statuses."
)


def duration(value: int, unit: str) -> str:
    """'1,873 min (31 h 13 min)', '1,440 s (24 min)', '18 times': the drive's own unit first, then a readable one."""
    shown = f"{value:,} {unit}"
    minutes = value if unit == "min" else value // 60 if unit == "s" else None
    if minutes is None or minutes < 60:
        return shown if unit != "s" or value < 60 else f"{shown} ({minutes} min)"
    hours, rest = divmod(minutes, 60)
    readable = f"{hours:,} h" + (f" {rest} min" if rest else "")
    return f"{shown} ({readable})"


def throttle_row(key: str) -> tuple[str, str]:
    """(label, unit) of a throttle counter; an unknown one keeps its key and no unit."""
    return THROTTLE_WORDS.get(key, (key.replace("_", " "), ""))


def throttle_text(key: str, value: int) -> str:
    """'time above the warning temperature 1,873 min (31 h 13 min)', 'light throttling (...) started 18 times'."""
    label, unit = throttle_row(key)
    return f"{label} {duration(value, unit) if unit else f'{value:,}'}"


def growth_text(key: str, before: int, after: int) -> str:
    label, unit = throttle_row(key)
    return f"{label} {before:,} → {after:,} {unit} (+{duration(after - before, unit)})".replace("  ", " ")


def limit_source(protocol: str | None, which: str) -> str:
    """Where the drive's own limit came from, in its protocol's words."""
    if protocol == "NVMe":
        return "the drive's WCTEMP" if which == "warning" else "the drive's CCTEMP"
    if protocol == "SCSI":
        return "the drive's trip temperature"
    return "the drive's SCT limit" if protocol == "ATA" else "the drive's own limit"


def temperature_high(name: str, temp_c: float, level: str, limit: str, source: str, other: str) -> str:
    """'/dev/nvme0 is at 86 °C, at or above its critical temperature 85 °C (the drive's CCTEMP; warning at 70 °C).'"""
    which = "critical" if level == "critical" else "warning"
    return (
        f"{name} is at {temp_c:g} °C, at or above its {which} temperature {limit} ({source}"
        + (f"; {other}" if other else "")
        + "). Drives slow themselves down to cool, and wear faster hot."
    )


def drive_says_hot(name: str, temp: str) -> str:
    return (
        f"{name} reports its temperature out of its own thresholds (NVMe critical warning, temperature bit) while "
        f"its composite temperature reads {temp}: another of its sensors is over its limit, or it is too cold."
    )


def lifetime_heat(parts: list[str]) -> str:
    return f" Over its life: {'; '.join(parts)}." if parts else ""


def thermal_standing(name: str, parts: list[str]) -> str:
    return (
        f"{name} has run hot before: {'; '.join(parts)} over its life. Whether that is still happening shows in "
        "the growth between readings: each health reading is kept, and disksleuth warns when these grow."
    )


def thermal_grew(name: str, parts: list[str], when: str) -> str:
    return f"{name} throttled for heat {when}: {'; '.join(parts)}."


def error_log_grew(name: str, kind: str, before: int, after: int, when: str, newest: str, benign: bool) -> str:
    added = after - before
    text = f"{name} logged {added:,} new error(s) in its {kind} error log {when} (its count {before:,} → {after:,})."
    if newest:
        text += f" Newest: {newest}."
    if benign:
        text += (
            " Every new entry is a command the drive refused as unsupported (Invalid Field in Command, Invalid Log "
            "Page): a tool probing it, not a fault of the drive."
        )
    return text


def error_entry_text(number: int | None, what: str | None, hours: int | None, lba: int | None, command: str | None,
                     status: int | None, kind: str) -> str:  # fmt: skip
    """'#56 at 61,957 h: Error: IDNF at LBA = 0x06f57ae8 = 116751080 (READ FPDMA QUEUED)'."""
    head = f"#{number:,}" if number is not None else "#?"
    if kind == "NVMe":
        head = f"error count {number:,}" if number is not None else "an entry"
    if hours is not None:
        head += f" at {hours:,} h"
    body = what or (f"status 0x{status:04x}" if status is not None else "no description")
    if lba and (kind == "NVMe" or not what):  # NVMe's 0 is no address; ATA's description names its own
        body += f", LBA {lba:,}"
    if command:
        body += f" ({command})"
    return f"{head}: {body}"


def warning_above_critical(critical_source: str, warning_c: float) -> str:
    """A drive whose warning limit is above its critical one: the critical one is used for both, and said so."""
    return f"{critical_source}; its warning limit, {warning_c:g} °C, is above it"


def temperature_text(value_c: float, plausible_max_c: float) -> str:
    """The temperature row: a reading no drive survives (255 °C from a bridge, a dead sensor) is said not judged."""
    return f"{value_c:g} °C" + (" (not a plausible reading: not judged)" if value_c > plausible_max_c else "")


def class_default_note(what: str) -> str:
    return f"class default for {what}; the drive reports none"


def limit_text(value_c: float | None, source: str, default_for: str | None) -> str:
    """'70 °C (the drive's WCTEMP)' or '60 °C (class default for a hard disk ...)', for a health row."""
    if value_c is None:
        return ""
    said = class_default_note(default_for or "its class") if source == "class default" else source
    return f"{value_c:g} °C ({said})"
