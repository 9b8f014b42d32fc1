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


def card_lines(card: Any) -> list[str]:
    """A stored document's card object in words, for the report: what it claims, its bus modes, an eMMC's wear.
    Reads only what it finds (a document from elsewhere may hold anything)."""
    if not isinstance(card, dict):
        return []

    def text(key: str) -> str:
        value = card.get(key)
        return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""

    kind = "eMMC" if card.get("kind") == "mmc" else "SD"
    version = text("spec_version")
    raw_classes = card.get("classes")
    classes: list[Any] = raw_classes if isinstance(raw_classes, list) else []
    who = " ".join(p for p in (text("manufacturer"), text("product")) if p)
    first = " ".join(p for p in (who, f"{kind} {version}".strip(), text("capacity_class"), *map(str, classes)) if p)
    if text("date"):
        first += f", made {text('date')}"
    lines = [first]
    if text("timing"):
        modes = f"runs in {text('timing')}"
        if text("card_max_timing"):
            modes += f"; the card takes {text('card_max_timing')}"
        if text("host_max_timing"):
            modes += f"; the host offers {text('host_max_timing')}"
        lines.append(modes)
    life = [f"type {t} 0x{card[k]:02x}" for t, k in (("A", "life_time_a"), ("B", "life_time_b"))
            if isinstance(card.get(k), int) and not isinstance(card.get(k), bool) and 0 <= card[k] <= 0xFF]  # fmt: skip
    if life:
        lines.append("life time estimates " + ", ".join(life) + " (0x01 = 0-10% used ... 0x0b = past its life)")
    return lines
