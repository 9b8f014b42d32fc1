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


def paste_document(x: Any) -> dict[str, Any]:
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
        "source": {
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
        },
    }
