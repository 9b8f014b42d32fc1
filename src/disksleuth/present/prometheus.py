"""Prometheus metrics from an exporter snapshot (pure: no I/O).

Naming follows the Prometheus guidelines (https://prometheus.io/docs/practices/naming/): base units
(bytes, seconds, bytes per second), `_info` gauges with value 1 carry labels, and `device` is the kernel
name without /dev/, as node_exporter and smartctl_exporter write it, so the three join on `device`.
PCIe hops also carry node_exporter's pcidevice location (segment, bus, device, function; the PCI
device number is `pci_device` here, because `device` already names the disk).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from disksleuth import __version__, serials
from disksleuth.model import PcieHop, SataHop, UsbHop
from disksleuth.model.exporter import Snapshot
from disksleuth.present.prometheus_card import card_families

MB = 1e6
# Stored latency figures are in microseconds; Prometheus wants seconds.
_LATENCY_STATS = (
    ("mean", "lat_mean_us"),
    ("p50", "lat_p50_us"),
    ("p99", "lat_p99_us"),
    ("p99.9", "lat_p999_us"),
    ("max", "lat_max_us"),
)


# C0 and C1 control characters: a label is text for people too (`curl /metrics` in a terminal), and a
# sysfs or smartctl string must not smuggle terminal escapes through it.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def _label(value: Any) -> str:
    return "" if value is None else _CONTROL.sub(" ", str(value)).strip()


def _pci_location(bdf: str | None) -> list[str]:
    """'0000:03:00.0' -> ['0000', '03', '00', '0'] as node_exporter's pcidevice labels spell it."""
    if not bdf:
        return ["", "", "", ""]
    try:
        domain, bus, devfn = bdf.split(":")
        dev, fn = devfn.split(".")
    except ValueError:
        return ["", "", "", ""]
    return [domain, bus, dev, fn]


def _hop_address(hop: object) -> tuple[str, str]:
    """(address, the port above it) of a hop, for joins and for people."""
    if isinstance(hop, PcieHop):
        return hop.name, _label(hop.port)
    if isinstance(hop, SataHop):
        return hop.name, _label(hop.port)
    if isinstance(hop, UsbHop):
        return hop.name, ""
    return _label(getattr(hop, "name", "")), _label(getattr(hop, "host", ""))


def families(snap: Snapshot) -> list[Metric]:
    build = GaugeMetricFamily("disksleuth_build_info", "disksleuth's version; value is always 1.", labels=["version"])
    build.add_metric([__version__], 1)

    info = GaugeMetricFamily(
        "disksleuth_device_info",
        "A block device as disksleuth sees it; value is always 1. serial_id is the serial keyed (HMAC-SHA256 with "
        "DISKSLEUTH_SERIAL_KEY or the store's key; empty without a key); serial_sha256 is the same value, kept "
        "under its old name.",
        labels=["device", "model", "serial_sha256", "firmware", "transport", "rotational", "serial_id"],
    )
    size = GaugeMetricFamily("disksleuth_device_size_bytes", "Size of the block device.", labels=["device"])
    ceiling = GaugeMetricFamily(
        "disksleuth_link_ceiling_bytes_per_second",
        "Practical ceiling of the device's link chain: `current` at the negotiated rates, `capable` if every hop "
        "ran at the best rate both of its ends support.",
        labels=["device", "state"],
    )
    hops = GaugeMetricFamily(
        "disksleuth_link_hop_info",
        "One hop of the path from the device to the CPU (hop 0 is nearest the device); value is always 1. "
        "PCIe hops carry node_exporter's pcidevice location (pci_device is its `device` label) and `slot`, the "
        "physical slot the firmware or kernel names for the link (empty when none does).",
        labels=[
            "device",
            "hop",
            "kind",
            "address",
            "port",
            "label",
            "capable_label",
            "segment",
            "bus",
            "pci_device",
            "function",
            "slot",
        ],
    )
    hop_ceiling = GaugeMetricFamily(
        "disksleuth_link_hop_ceiling_bytes_per_second",
        "Practical ceiling of one hop, at its negotiated (`current`) or best common (`capable`) rate.",
        labels=["device", "hop", "state"],
    )
    finding = GaugeMetricFamily(
        "disksleuth_finding",
        "An active finding about the device (link, health); value is always 1. Severity is info, warn or critical.",
        labels=["device", "code", "severity"],
    )
    health_age = GaugeMetricFamily(
        "disksleuth_health_read_timestamp_seconds",
        "When the cached SMART health behind the health findings was read (smartctl -n standby).",
        labels=["device"],
    )
    for disk in snap.disks:
        dev = disk.device
        name = _label(dev.name)
        # Keyed, never the plain SHA-256: a 32-bit SD serial's digest is reversed by trying them all.
        serial_id = _label(serials.serial_id(dev.serial, snap.serial_key))
        info.add_metric(
            [
                name,
                _label(dev.model),
                serial_id,
                _label(dev.firmware),
                dev.transport,
                _label(None if dev.rotational is None else int(dev.rotational)),
                serial_id,
            ],
            1,
        )
        if dev.size_bytes is not None:
            size.add_metric([name], dev.size_bytes)
        for state, mbps in (("current", disk.chain.current_ceiling_mbps), ("capable", disk.chain.capable_ceiling_mbps)):
            if mbps is not None:
                ceiling.add_metric([name, state], round(mbps * MB))  # whole bytes: 4292.82 * 1e6 is 4292819999.9999995
        for index, hc in enumerate(disk.chain.hops):
            address, port = _hop_address(hc.hop)
            location = _pci_location(hc.hop.name) if isinstance(hc.hop, PcieHop) else ["", "", "", ""]
            hops.add_metric(
                [name, str(index), hc.hop.kind, _label(address), _label(port), _label(hc.label)]
                + [_label(hc.capable_label), *(_label(part) for part in location)]
                + [_label(hc.hop.slot.name if isinstance(hc.hop, PcieHop) and hc.hop.slot else None)],
                1,
            )
            for state, mbps in (("current", hc.current_mbps), ("capable", hc.capable_mbps)):
                if mbps is not None:
                    hop_ceiling.add_metric([name, str(index), state], round(mbps * MB))
        for f in disk.findings:
            finding.add_metric([name, _label(f.code), f.severity], 1)
        if disk.health_read_at is not None:
            health_age.add_metric([name], disk.health_read_at)

    health_metrics = health_families(snap)
    aer_metrics = aer_families(snap)

    bench_bps = GaugeMetricFamily(
        "disksleuth_bench_bytes_per_second",
        "Throughput of the newest stored benchmark of each device and test (fio, direct I/O).",
        labels=["device", "test", "direction"],
    )
    bench_iops = GaugeMetricFamily(
        "disksleuth_bench_iops",
        "I/O operations per second of the newest stored benchmark of each device and test.",
        labels=["device", "test", "direction"],
    )
    bench_latency = GaugeMetricFamily(
        "disksleuth_bench_latency_seconds",
        "Total I/O latency (fio's lat: submission to completion) of the newest stored benchmark of each device and "
        "test (stat: mean, p50, p99, p99.9, max). A mixed read/write test is in "
        "disksleuth_bench_direction_latency_seconds instead.",
        labels=["device", "test", "stat"],
    )
    # A mixed test's one latency was whichever direction did a few more I/Os, so its p99 could switch
    # between reads and writes from one run to the next: each direction is a series of its own.
    direction_latency = GaugeMetricFamily(
        "disksleuth_bench_direction_latency_seconds",
        "Total I/O latency of each direction (read, write) of a mixed read/write test (randrw, rw) in the newest "
        "stored benchmark of each device and test (stat: mean, p50, p99, p99.9, max).",
        labels=["device", "test", "direction", "stat"],
    )
    bench_time = GaugeMetricFamily(
        "disksleuth_bench_timestamp_seconds",
        "When the newest stored benchmark of each device and test started.",
        labels=["device", "test"],
    )
    baseline_ratio = GaugeMetricFamily(
        "disksleuth_bench_baseline_ratio",
        "The newest stored figure of each device and test (MB/s for large blocks, IOPS for 4K) divided by its "
        "median over the drive's 5 earlier runs of the same test, measured the same way (1 = as usual; absent "
        "until 3 earlier runs exist). disksleuth flags slower_than_usual only when the difference also exceeds "
        "the run's interval and the usual spread.",
        labels=["device", "test", "direction"],
    )
    for t in snap.bench:
        labels = [_label(t["device"]), _label(t["test_id"])]
        for direction in ("read", "write"):
            if t.get(f"baseline_{direction}_ratio") is not None:
                baseline_ratio.add_metric([*labels, direction], t[f"baseline_{direction}_ratio"])
        for direction in ("read", "write"):
            if t.get(f"{direction}_mbps") is not None:
                bench_bps.add_metric([*labels, direction], round(t[f"{direction}_mbps"] * MB))
            if t.get(f"{direction}_iops") is not None:
                bench_iops.add_metric([*labels, direction], t[f"{direction}_iops"])
        split = any(t.get(f"{d}_{key}") is not None for d in ("read", "write") for _, key in _LATENCY_STATS)
        for stat, key in _LATENCY_STATS:
            if split:
                for d in ("read", "write"):
                    if t.get(f"{d}_{key}") is not None:
                        direction_latency.add_metric([*labels, d, stat], round(t[f"{d}_{key}"] / 1e6, 9))
            elif t.get(key) is not None:
                bench_latency.add_metric([*labels, stat], round(t[key] / 1e6, 9))
        if t.get("started_at_s") is not None:
            bench_time.add_metric(labels, t["started_at_s"])

    store_up = GaugeMetricFamily(
        "disksleuth_store_up",
        "1 when the results store could be read for the benchmark metrics, 0 when not (none exists yet, it is "
        "unreadable, or it did not answer in time).",
    )
    store_up.add_metric([], 0 if snap.bench_error else 1)
    store_read = GaugeMetricFamily(
        "disksleuth_store_last_success_timestamp_seconds",
        "When this exporter last read the results store successfully.",
    )
    if snap.bench_read_at is not None:
        store_read.add_metric([], snap.bench_read_at)
    return [
        build,
        info,
        size,
        ceiling,
        hops,
        hop_ceiling,
        finding,
        health_age,
        bench_bps,
        bench_iops,
        bench_latency,
        direction_latency,
        bench_time,
        baseline_ratio,
        store_up,
        store_read,
        *health_metrics,
        *aer_metrics,
        *card_families(snap),  # an SD card's or eMMC's claims and wear (issue 39)
    ]


def aer_families(snap: Snapshot) -> list[Metric]:
    """The PCIe error counters of every function on each device's path (issue 36), as the kernel counts them since
    boot: an alert rule watches them grow. A function on several devices' paths (a root port, a switch) is a series
    under each device. The error's severity is `kind` (correctable, nonfatal, fatal): a `severity` label would be
    overwritten by an alert's own (warning, critical), and two kinds on one function would collide."""
    own = CounterMetricFamily(
        "disksleuth_pcie_aer_errors",
        "PCIe AER errors a function on the device's path to the CPU reported since boot (sysfs aer_dev_correctable, "
        "aer_dev_nonfatal, aer_dev_fatal: TOTAL_ERR_*). Growth means the link retransmits (correctable) or lost "
        "transfers (nonfatal, fatal): a riser, cable (OCuLink) or seating fault, or a failing device. 0 again at "
        "boot.",
        labels=["device", "bdf", "kind"],
    )
    below = CounterMetricFamily(
        "disksleuth_pcie_aer_rootport_errors",
        "PCIe AER error messages a root port on the device's path received from everything below it since boot "
        "(sysfs aer_rootport_total_err_cor, _nonfatal, _fatal).",
        labels=["device", "bdf", "kind"],
    )
    for disk in snap.disks:
        name = _label(disk.device.name)
        seen: set[str] = set()
        for hc in disk.chain.hops:
            hop = hc.hop
            if not isinstance(hop, PcieHop):
                continue
            for counters in (hop.aer, hop.port_aer):
                if counters is None or counters.bdf in seen:
                    continue
                seen.add(counters.bdf)
                bdf = _label(counters.bdf)
                for severity in ("correctable", "nonfatal", "fatal"):
                    value = getattr(counters, severity)
                    if value is not None:
                        own.add_metric([name, bdf, severity], value)
                    value = getattr(counters, f"rootport_{severity}")
                    if value is not None:
                        below.add_metric([name, bdf, severity], value)
    return [own, below]


# Health gauges: (family name, help, Health field, scale). Ratios and seconds are Prometheus' base units; the same
# figures smartctl_exporter publishes as smartctl_device_temperature, _percentage_used, _available_spare and
# _power_on_seconds, so a dashboard needs only this exporter.
_HEALTH_GAUGES = (
    ("disksleuth_health_temperature_celsius", "Drive temperature (SMART).", "temperature_c", 1.0),
    (
        "disksleuth_health_temperature_warning_celsius",
        "The drive's own warning temperature (NVMe WCTEMP, ATA SCT limits).",
        "temperature_warning_c",
        1.0,
    ),
    (
        "disksleuth_health_temperature_critical_celsius",
        "The drive's own critical temperature.",
        "temperature_critical_c",
        1.0,
    ),
    (
        "disksleuth_health_endurance_used_ratio",
        "Share of the rated endurance used (NVMe percentage_used / 100, or a SATA/SAS wear attribute); may pass 1.",
        "percentage_used",
        0.01,
    ),
    ("disksleuth_health_available_spare_ratio", "NVMe available spare (0 to 1).", "available_spare_pct", 0.01),
    (
        "disksleuth_health_available_spare_threshold_ratio",
        "NVMe available spare threshold: below it the drive warns.",
        "available_spare_threshold_pct",
        0.01,
    ),
    ("disksleuth_health_power_on_seconds", "Power-on time the drive reports (whole hours).", "power_on_hours", 3600.0),
    (
        "disksleuth_health_data_written_bytes",
        "Data the host wrote over the drive's life (NVMe data units, ATA 241 or device statistics, SCSI).",
        "data_written_bytes",
        1.0,
    ),
    ("disksleuth_health_data_read_bytes", "Data the host read over the drive's life.", "data_read_bytes", 1.0),
)


def health_families(snap: Snapshot) -> list[Metric]:
    """Each drive's cached SMART health as numbers, labelled `device` like node_exporter and smartctl_exporter."""
    gauges = [
        (GaugeMetricFamily(name, text, labels=["device"]), key, scale) for name, text, key, scale in _HEALTH_GAUGES
    ]
    passed = GaugeMetricFamily(
        "disksleuth_health_smart_passed", "1 when the drive's SMART self-assessment passed, 0 when it failed.",
        labels=["device"],
    )  # fmt: skip
    errors = GaugeMetricFamily(
        "disksleuth_health_errors",
        "The drive's warning-sign counters as it reports them: `interface` (CRC and link errors: a cable, backplane "
        "or connector) and `media` (reallocated, pending, uncorrectable, NVMe media errors). A drop means another "
        "drive or a reset, never repair.",
        labels=["device", "kind", "counter"],
    )
    acked = GaugeMetricFamily(
        "disksleuth_health_errors_acknowledged",
        "The value of a counter someone accepted (disksleuth health --ack): its finding stays info until the counter "
        "passes it.",
        labels=["device", "kind", "counter"],
    )
    for disk in snap.disks:
        h = disk.health
        if h is None:
            continue
        name = _label(disk.device.name)
        for family, key, scale in gauges:
            value = getattr(h, key, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                family.add_metric([name], value * scale)
        smart_passed = getattr(h, "smart_passed", None)
        if isinstance(smart_passed, bool):
            passed.add_metric([name], 1 if smart_passed else 0)
        for kind in ("interface", "media"):
            for counter, value in (getattr(h, f"{kind}_error_counts", None) or {}).items():
                errors.add_metric([name, kind, _label(counter)], value)
        for f in disk.findings:
            history = f.evidence.get("history") if isinstance(f.evidence, dict) else None
            for story in history if isinstance(history, list) else ():
                if story.get("acknowledged_value") is not None:
                    kind, _, counter = str(story.get("counter", "")).partition(".")
                    acked.add_metric([name, kind, _label(counter)], story["acknowledged_value"])
    return [*(g for g, _, _ in gauges), passed, errors, acked, *wear_families(snap), *heat_families(snap)]


def wear_families(snap: Snapshot) -> list[Metric]:
    """When each drive reaches 100% of its rated endurance at the rate it wears (analysis.wear): `basis` is
    "history" (the stored readings) or "lifetime" (the share used over the power-on hours)."""
    days = GaugeMetricFamily(
        "disksleuth_health_endurance_days_left",
        "Days until the drive reaches 100% of its rated endurance at its wear rate (power-on days for basis "
        "lifetime); 0 at or past it; absent when no wear is measurable.",
        labels=["device", "basis"],
    )
    full = GaugeMetricFamily(
        "disksleuth_health_endurance_full_timestamp_seconds",
        "The projected date of 100% endurance used, from the stored readings (basis history only).",
        labels=["device"],
    )
    for disk in snap.disks:
        wear = disk.wear
        if wear is None:
            continue
        name = _label(disk.device.name)
        left = getattr(wear, "days_left", None)
        if isinstance(left, int | float):
            days.add_metric([name, str(getattr(wear, "basis", ""))], left)
        at = getattr(wear, "projected_full_at_s", None)
        if isinstance(at, int | float):
            full.add_metric([name], at)
    return [days, full]


# NVMe heat counters (Health.throttle), in seconds: the drive counts its time above the warning and critical
# temperatures in minutes, its thermal-management time in seconds (NVMe base spec, SMART / Health log).
_HEAT_SECONDS = {
    "warning_temp_time": 60,
    "critical_comp_time": 60,
    "thermal_mgmt_temperature_1_total_time": 1,
    "thermal_mgmt_temperature_2_total_time": 1,
}


def heat_families(snap: Snapshot) -> list[Metric]:
    """What `health` judges temperature_high and thermal_throttled on (issue 38): the limits it uses, the drive's own
    or a class default (`source`), so the alert rules and the CLI judge against the same figure; the heat counters;
    the error log's count."""
    from disksleuth.analysis.temperature import limits_of
    from disksleuth.model.run import Health

    limit = GaugeMetricFamily(
        "disksleuth_health_temperature_limit_celsius",
        "The temperature disksleuth judges the drive against: `level` warning (temperature_high warn) or critical "
        "(temperature_high critical); `source` drive (NVMe WCTEMP/CCTEMP, ATA SCT, SCSI trip) or default (the "
        "class default for a drive that reports none).",
        labels=["device", "level", "source"],
    )
    heat = GaugeMetricFamily(
        "disksleuth_health_heat_seconds",
        "NVMe heat counters over the drive's life, in seconds: warning_temp_time and critical_comp_time (time above "
        "the warning and critical temperatures), thermal_mgmt_temperature_{1,2}_total_time (time throttled, light "
        "and heavy). Growth is thermal_throttled.",
        labels=["device", "counter"],
    )
    transitions = GaugeMetricFamily(
        "disksleuth_health_throttle_transitions",
        "Times the NVMe drive entered thermal-management throttling over its life (`level` 1 light, 2 heavy).",
        labels=["device", "level"],
    )
    log = GaugeMetricFamily(
        "disksleuth_health_error_log_entries",
        "The drive's error log count over its life (ATA SMART error log, NVMe Error Information log). NVMe drives "
        "also log commands they refuse; the error_log_growth finding tells those apart.",
        labels=["device", "kind"],
    )
    for disk in snap.disks:
        h = disk.health
        if not isinstance(h, Health):
            continue
        name = _label(disk.device.name)
        if h.temperature_c is not None:
            lim = limits_of(h)
            for level, value, source in (
                ("warning", lim.warning_c, lim.warning_source),
                ("critical", lim.critical_c, lim.critical_source),
            ):
                if value is not None:
                    limit.add_metric([name, level, "default" if source == "class default" else "drive"], value)
        for key, scale in _HEAT_SECONDS.items():
            if (value := h.throttle.get(key)) is not None:
                heat.add_metric([name, key], value * scale)
        for level in ("1", "2"):
            if (value := h.throttle.get(f"thermal_mgmt_temperature_{level}_transition_count")) is not None:
                transitions.add_metric([name, level], value)
        if h.error_log_entries is not None:
            kind = h.error_log.kind if h.error_log else "NVMe" if h.protocol == "NVMe" else "ATA"
            log.add_metric([name, kind], h.error_log_entries)
    return [limit, heat, transitions, log]


def exporter_families(snapshots_taken: int, dropped: dict[str, int]) -> list[Metric]:
    """The HTTP exporter's own counters."""
    snapshots = CounterMetricFamily(
        "disksleuth_exporter_snapshots",
        "Snapshots taken (each reads sysfs and the results store). Scrapes that arrive while one is taken, or "
        "within a second after, share it.",
        value=snapshots_taken,
    )
    drops = CounterMetricFamily(
        "disksleuth_exporter_connections_dropped",
        "Connections closed unanswered: `timeout` (the request did not arrive whole, or the response was not "
        "taken, in time), `capacity` (too many connections open at once).",
        labels=["reason"],
    )
    for reason, count in sorted(dropped.items()):
        drops.add_metric([reason], count)
    return [snapshots, drops]


def select_families(metrics: list[Metric], names: list[str]) -> list[Metric]:
    """The families `name[]=` asks for, by family name or sample name (`..._total`), as prometheus_client
    and node_exporter filter."""
    wanted = set(names)

    def named(m: Metric) -> bool:
        if m.name in wanted or (m.type == "counter" and f"{m.name}_total" in wanted):
            return True
        return any(s.name in wanted for s in m.samples)

    return [m for m in metrics if named(m)]


class _Families:
    def __init__(self, metrics: list[Metric]):
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        yield from self._metrics


def encode(metrics: list[Metric], accept_header: str | None) -> tuple[bytes, str]:
    """(body, Content-Type) in the format the scraper's Accept header asks for: OpenMetrics or the text format."""
    from prometheus_client.exposition import choose_encoder

    encoder, content_type = choose_encoder(accept_header or "")
    return encoder(_Families(metrics)), content_type


def exposition(snap: Snapshot) -> bytes:
    """The text exposition format of one snapshot (the textfile)."""
    return encode(families(snap), None)[0]
