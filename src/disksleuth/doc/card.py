"""A device's `card` object in documents (issue 39): what an SD card or eMMC claims, decoded. Never its serial:
the CID's PSN and the `serial` attribute stay out (the device's own `serial` is masked like every serial)."""

from __future__ import annotations

import dataclasses
from typing import Any

from disksleuth.analysis.card_registers import class_labels, decode_card
from disksleuth.model import Device


def card_to_dict(device: Device) -> dict[str, Any] | None:
    """The card object, or None for a device that is no SD card or eMMC."""
    if device.card_registers is None:
        return None
    card = decode_card(device.card_registers, device.size_bytes)
    out = dataclasses.asdict(card)
    out["bus_widths"] = list(card.bus_widths)
    out["notes"] = list(card.notes)
    out["classes"] = class_labels(card)
    return out
