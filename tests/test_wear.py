"""Issue 38 item 3: the wear forecast. Data written and read, NVMe percentage used and SATA SSD wear indicators over
the stored readings give a projected date of 100% (or "no measurable wear in N days"); health_worn says when."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from disksleuth.analysis.health import health_findings
from disksleuth.model.health_history import HealthReading
from disksleuth.model.run import Health
from disksleuth.probe.smart_parse import parse_smartctl_json
from disksleuth.probe.smartctl_text import parse_smartctl_text

DATA = Path(__file__).parent / "data"
DAY = 86_400.0
T0 = 1_780_000_000.0  # 2026-05-28
WRITTEN_KEY = "wear.data_written_bytes"  # analysis.wear's key in a stored reading's counters


def _json(name: str) -> Health:
    return parse_smartctl_json((DATA / name).read_text())


def _samsung_860() -> Health:
    """A real Samsung 860 EVO (smartctl -x --json): ATA 177 Wear_Leveling_Count 81 is 19% used."""
    return _json("smartctl-x/scrutiny-smart-ata-full.json")


def _reading(h: Health, at_s: float, pct: int | None, written: int | None = None) -> HealthReading:
    counters = {WRITTEN_KEY: written} if written is not None else {}
    return HealthReading(at_s, "h", "sda", "k", None, percentage_used=pct, counters=counters)


def test_data_written_and_read_from_real_captures() -> None:
    nvme = _json("smartctl/nvme-null-Micron_7450_MTFDKCC3T2TFS-nvme1.json")  # data units of 512,000 bytes
    assert nvme.data_written_bytes == 1_248_078 * 512_000 and nvme.data_read_bytes == 170_056 * 512_000
    sata = _samsung_860()  # ATA 241 Total_LBAs_Written x 512-byte sectors
    assert sata.data_written_bytes == 64_777_770_148 * 512
    scsi = _json("smartctl/SEAGATE_ST373453LC_26.json")  # gigabytes_processed "11151.772"
    assert scsi.data_written_bytes == 11_151_772_000_000
    text = parse_smartctl_text(
        (DATA / "smartctl-selftest" / "linuxhw-ata-ST10000NM0016-1TT101-6B4ADAE142C4.txt").read_text()
    ).health
    assert text.data_written_bytes == 330_495_024_338 * 512 and text.data_read_bytes == 614_670_252_546 * 512


def test_sata_wear_indicator_over_readings_gives_a_date() -> None:
    from disksleuth.analysis.wear import forecast_text, forecast_wear

    h = _samsung_860()
    assert h.percentage_used == 19 and "177" in (h.percentage_used_source or "")
    readings = [
        _reading(h, T0, 17, 10**13),
        _reading(h, T0 + 60 * DAY, 18),
        _reading(h, T0 + 120 * DAY, 19, 2 * 10**13),
    ]
    f = forecast_wear(h, readings)
    assert f is not None and f.basis == "history" and f.readings == 3
    assert abs((f.pct_per_day or 0) - 1 / 60) < 1e-9
    assert abs((f.days_left or 0) - 81 * 60) < 1e-6
    assert f.projected_full_at_s == T0 + 120 * DAY + 81 * 60 * DAY
    assert abs((f.written_bytes_per_day or 0) - 10**13 / 120) < 1
    text = forecast_text(f) or ""
    date = dt.datetime.fromtimestamp(T0 + (120 + 4860) * DAY, dt.UTC).strftime("%Y-%m-%d")
    assert f"around {date}" in text and "120 days" in text and "0.50% a month" in text


def test_no_measurable_wear_in_n_days() -> None:
    from disksleuth.analysis.wear import forecast_text, forecast_wear

    h = _json("smartctl/nvme-null-Micron_7450_MTFDKCC3T2TFS-nvme1.json")  # percentage_used 0
    f = forecast_wear(h, [_reading(h, T0, 0), _reading(h, T0 + 45 * DAY, 0)])
    assert f is not None and f.days_left is None and f.no_wear_days == 45
    assert forecast_text(f) == "No measurable wear in 45 days of readings."
    alone = forecast_wear(h, [])  # no history: its whole life (2,884 power-on hours) without a percent
    assert alone is not None and alone.basis == "lifetime" and alone.days_left is None
    assert forecast_text(alone, h.power_on_hours) == "No measurable wear in its 2,884 power-on hours."


def test_lifetime_average_when_the_history_is_too_short() -> None:
    from disksleuth.analysis.wear import forecast_text, forecast_wear

    h = _samsung_860()  # 19% in 14,551 power-on hours
    f = forecast_wear(h, [_reading(h, T0, 19), _reading(h, T0 + 3600, 19)])
    assert f is not None and f.basis == "lifetime"
    assert abs((f.days_left or 0) - 81 / (19 / (14_551 / 24))) < 1e-6
    assert "lifetime average (19% in 14,551 power-on hours)" in (forecast_text(f, h.power_on_hours) or "")


def test_health_worn_says_when_through_the_store(tmp_path: Path) -> None:
    """Three readings of a worn drive a month apart kept in a real SQLite store: the third one's health_worn names
    the date of 100% (the finding only said "has used 80%" before)."""
    from disksleuth.run.health_history import observe

    db = f"sqlite:///{tmp_path}/store.sqlite"
    base = _samsung_860()
    observed = None
    for i, pct in enumerate((78, 79, 80)):
        h = replace(base, percentage_used=pct)
        at = T0 + i * 30 * DAY
        observed = observe(h, health_findings(h), db, device_name="sda", source="health", read_at_s=at, now_s=at)
    assert observed is not None and observed.error is None
    worn = next(f for f in observed.findings if f.code == "health_worn")
    date = dt.datetime.fromtimestamp(T0 + 60 * DAY + 20 * 30 * DAY, dt.UTC).strftime("%Y-%m-%d")
    assert f"reaches 100% around {date}" in worn.message
    assert worn.evidence["forecast"]["days_left"] == 600
    assert observed.wear is not None and observed.wear.basis == "history" and observed.wear.readings == 3


def test_data_moved_alone_never_makes_a_reading_new(tmp_path: Path) -> None:
    """Data written grows with every read: kept with a reading, but not a reason to store one (the exporter's
    hourly reads of a quiet drive stay one row per 6 hours)."""
    from disksleuth.analysis.wear import wear_counters
    from disksleuth.store.db import Store
    from disksleuth.store.health import history, record

    h = _samsung_860()
    with Store(f"sqlite:///{tmp_path}/s.sqlite", create=True) as store:
        first = _reading(h, T0, 19, 10**13)
        assert record(store, replace(first, counters={**wear_counters(h), WRITTEN_KEY: 10**13}))
        assert not record(store, replace(first, read_at_s=T0 + 3600, counters={WRITTEN_KEY: 10**13 + 5}))
        assert record(store, replace(first, read_at_s=T0 + 7 * 3600, counters={WRITTEN_KEY: 10**13 + 9}))
        kept = history(store, hostname="h", device_name="sda")
    assert [r.counters.get(WRITTEN_KEY) for r in kept] == [10**13, 10**13 + 9]


def test_exporter_publishes_days_left_and_the_date() -> None:
    from disksleuth.analysis.wear import forecast_wear
    from disksleuth.model import Device, LinkChain
    from disksleuth.model.exporter import DiskState, Snapshot
    from disksleuth.present.prometheus import health_families

    h = _samsung_860()
    wear = forecast_wear(h, [_reading(h, T0, 17), _reading(h, T0 + 120 * DAY, 19)])
    device = Device(name="sda", path="/dev/sda", transport="sata")
    snap = Snapshot((DiskState(device, LinkChain((), None, None, None), (), h, T0, wear),), (), None, "h")
    samples = {
        (m.name, s.labels.get("basis")): s.value
        for m in health_families(snap)
        for s in m.samples
        if s.value is not None
    }
    assert samples[("disksleuth_health_endurance_days_left", "history")] == 81 * 60
    assert samples[("disksleuth_health_endurance_full_timestamp_seconds", None)] == T0 + 120 * DAY + 4860 * DAY
    assert samples[("disksleuth_health_data_written_bytes", None)] == 64_777_770_148 * 512
