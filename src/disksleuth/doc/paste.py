"""The --json document of `explain FILE...` (pasted text): the live `explain` document of the paste's first
device, every device in `devices`, every finding with its source line, and `source` saying what was read."""

from __future__ import annotations

from typing import Any

from disksleuth.doc.inventory import device_to_dict
from disksleuth.doc.run import figures_to_tests


def _device_doc(d: Any) -> dict[str, Any]:
    out: dict[str, Any] = device_to_dict(d.device, d.chain)
    out["serial"] = None  # a paste's serial is never echoed; its keyed id only
    out["serial_id"] = d.serial_id
    out["chain_known"] = d.chain_known
    out["notes"] = list(out.get("notes", [])) + list(d.notes)
    return out


def _findings(d: Any) -> list[dict[str, Any]]:
    out = []
    for f, where in zip(d.findings, d.sources, strict=True):
        item: dict[str, Any] = f.to_dict()
        item["source"] = {"file": where.file, "line": where.line} if where is not None else None
        out.append(item)
    return out


def _source_doc(x: Any) -> dict[str, Any]:
    return {
        "kind": "pasted",
        "files": list(x.files),
        "sections": [
            {
                "kind": s.kind,
                "file": s.file,
                "first_line": s.first_line,
                "last_line": s.last_line,
                "device": s.device,
                "status": s.status,
            }
            for s in x.sections
        ],
        "skipped": list(x.skipped),
        "notes": list(x.notes),
        "figures_not_used": list(x.figures_unused),
    }


def _line(x: Any, line: int | None) -> dict[str, Any] | None:
    """A slot's line in the paste: the dmidecode section's lines are numbered from its first."""
    section = next((s for s in x.sections if s.kind == "dmidecode" and s.file == x.slots_file), None)
    if line is None or section is None or x.slots_file is None:
        return None
    return {"file": x.slots_file, "line": section.first_line + line - 1}


def slots_document(x: Any) -> dict[str, Any]:
    """A paste that holds dmidecode's slots and no device: its slot table (issue 40)."""
    slots = []
    for sl in x.slots.smbios_slots:
        item: dict[str, Any] = {
            "designation": sl.designation,
            "type": sl.type_name,
            "width_lanes": sl.width_lanes,
            "width": sl.width_name,
            "current_usage": sl.current_usage,
            "bus_address": sl.bus_address,
            "generation": sl.generation,
        }
        if (where := _line(x, sl.line)) is not None:
            item["source"] = where
        slots.append(item)
    onboard = []
    for o in x.slots.onboard:
        dev: dict[str, Any] = {
            "designation": o.designation,
            "type": o.type_name,
            "enabled": o.enabled,
            "bus_address": o.bus_address,
        }
        if (where := _line(x, o.line)) is not None:
            dev["source"] = where
        onboard.append(dev)
    in_use = sum(1 for sl in x.slots.smbios_slots if (sl.current_usage or "").lower() == "in use")
    return {
        "devices": [],
        "findings": [],
        "summary": f"{len(slots):,} slot(s), {in_use:,} in use; {len(onboard):,} onboard device(s); "
        "no device to put them on",
        "slots": slots,
        "onboard": onboard,
        "source": _source_doc(x),
    }


def paste_document(x: Any) -> dict[str, Any]:
    if not x.devices:
        return slots_document(x)
    first = x.devices[0]
    devices = [
        {
            "device": _device_doc(d),
            "given": d.given,
            "tests": figures_to_tests(d.figures),
            "findings": _findings(d),
            "summary": d.summary,
        }
        for d in x.devices
    ]
    return {
        "device": devices[0]["device"],
        "given": [g for d in devices for g in d["given"]],
        "tests": figures_to_tests(first.figures),
        "findings": [f for d in devices for f in d["findings"]],
        "summary": first.summary,
        "devices": devices,
        "source": _source_doc(x),
    }
