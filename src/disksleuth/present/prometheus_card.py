"""Prometheus families of an SD card's or eMMC's claims and wear (issue 39), from the snapshot's devices.

disksleuth_card_info names what the card says it is (no serial: the CID's serial never leaves the machine);
disksleuth_card_life_time_estimate is an eMMC's own wear estimate, the only health report eMMC has.
"""

from __future__ import annotations

from prometheus_client.core import GaugeMetricFamily, Metric

from disksleuth.analysis.card_claims import card_of
from disksleuth.analysis.card_registers import class_labels
from disksleuth.model.exporter import Snapshot


def _label(value: object) -> str:
    return "" if value is None else str(value)


def card_families(snap: Snapshot) -> list[Metric]:
    info = GaugeMetricFamily(
        "disksleuth_card_info",
        "What an SD card or eMMC says it is, from its registers; value is always 1. classes: the speed, UHS, "
        "video and application classes it claims (C10 U3 V30 A2); timing: the bus mode it runs in (debugfs, root).",
        labels=["device", "kind", "manufacturer", "product", "spec_version", "classes", "timing", "card_max_timing"],
    )
    life = GaugeMetricFamily(
        "disksleuth_card_life_time_estimate",
        "An eMMC's life time estimate (EXT_CSD DEVICE_LIFE_TIME_EST_TYP_A/B): 1 = 0-10% of its life used ... "
        "10 = 90-100%, 11 = past it; type A: SLC areas, B: MLC areas.",
        labels=["device", "type"],
    )
    pre_eol = GaugeMetricFamily(
        "disksleuth_card_pre_eol_info",
        "An eMMC's PRE_EOL_INFO: 1 normal, 2 warning (80% of the reserved blocks used), 3 urgent (90%).",
        labels=["device"],
    )
    for disk in snap.disks:
        card = card_of(disk.device)
        if card is None:
            continue
        name = _label(disk.device.name)
        info.add_metric(
            [name, card.kind, _label(card.manufacturer), _label(card.product), _label(card.spec_version),
             " ".join(class_labels(card)), _label(card.timing), _label(card.card_max_timing)],
            1,
        )  # fmt: skip
        for kind, value in (("A", card.life_time_a), ("B", card.life_time_b)):
            if value:
                life.add_metric([name, kind], value)
        if card.pre_eol:
            pre_eol.add_metric([name], card.pre_eol)
    return [info, life, pre_eol]
