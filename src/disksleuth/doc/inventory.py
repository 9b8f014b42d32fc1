"""Devices, link chains and PCIe functions as documents (`list`, `links`, and the device of every run)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from disksleuth.model import Device, Finding, HopCeiling, LinkChain

if TYPE_CHECKING:
    from disksleuth.analysis.pci import LinkStatus
    from disksleuth.model.limits import LimitCeiling


def _r(v: float | None) -> float | None:
    return round(v, 1) if isinstance(v, float) else v


def hop_to_dict(c: HopCeiling | LimitCeiling) -> dict[str, Any]:
    out = dataclasses.asdict(c.hop)
    out["label"] = c.label
    out["encoded_mbps"] = _r(c.encoded_mbps)
    out["ceiling_mbps"] = _r(c.current_mbps)
    out["capable_ceiling_mbps"] = _r(c.capable_mbps)
    out["capable_label"] = c.capable_label
    out["fact"] = c.fact
    if "backing" in out:
        out["backing"] = list(out["backing"])
    for key in ("aer", "port_aer"):  # PCIe error counters (issue 36): lists, as JSON gives them back
        if out.get(key):
            out[key]["counts"] = list(out[key]["counts"])
    if c.hop.kind == "pcie" and "slot" not in out:
        out["slot"] = None
    return out


def chain_to_dict(chain: LinkChain) -> dict[str, Any]:
    out = {
        "hops": [hop_to_dict(c) for c in chain.hops],
        "current_ceiling_mbps": chain.current_ceiling_mbps,
        "capable_ceiling_mbps": chain.capable_ceiling_mbps,
        "bottleneck": chain.bottleneck.label if chain.bottleneck else None,
    }
    if chain.limits is not None:  # a run's: the cgroup I/O limits it was under, [] for none (issue 36)
        from disksleuth.analysis.limits import without_limits

        out["limits"] = [hop_to_dict(c) for c in chain.limits]
        # The links' own ceiling: the device's, what fleet, siblings and the store compare across runs.
        out["link_ceiling_mbps"] = without_limits(chain).current_ceiling_mbps
    return out


def device_to_dict(
    device: Device,
    chain: LinkChain | None = None,
    findings: list[Finding] | None = None,
    include_partitions: bool = True,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": device.name,
        "path": device.path,
        "model": device.model,
        "serial": device.serial,
        "firmware": device.firmware,
        "size_bytes": device.size_bytes,
        "transport": device.transport,
        "rotational": device.rotational,
        "removable": device.removable,
        "read_only": device.read_only,
        "logical_block_size": device.logical_block_size,
        "physical_block_size": device.physical_block_size,
        "scheduler": device.scheduler,
        "write_cache": device.write_cache,
        "dev": device.dev,
        "mountpoints": list(device.mountpoints),
        "swap": device.swap,
        "holders": list(device.holders),
        "slaves": list(device.slaves),
        "backing_file": device.backing_file,
        # Loop devices (added, issue 20): direct I/O on or off (loop/dio), and the device holding the backing.
        "loop_direct_io": device.loop_direct_io,
        "backing_device": device.backing_device,
        "fstype": device.fstype,
        # The disk's own mounts plus its partitions', as the `list` table shows them.
        "all_mountpoints": list(device.all_mountpoints()),
        "fstypes": sorted({d.fstype for d in (device, *device.partitions) if d.fstype}),
    }
    if device.parent:
        out["parent"] = device.parent
    if include_partitions and device.partitions:
        out["partitions"] = [device_to_dict(p) for p in device.partitions]
    if chain is not None:
        out["link"] = chain_to_dict(chain)
    if device.card_registers is not None:  # an SD card's or eMMC's claims (issue 39)
        from disksleuth.doc.card import card_to_dict

        out["card"] = card_to_dict(device)
    if findings is not None:
        out["findings"] = [f.to_dict() for f in findings]
    out["notes"] = list(device.notes)
    return out


def link_status_to_dict(s: LinkStatus) -> dict[str, Any]:
    fn = s.fn
    return {
        "bdf": fn.bdf,
        "vendor_device": fn.vendor_device,
        "vendor_name": fn.vendor_name,
        "device_name": fn.device_name,
        "class": f"{fn.class_code:06x}" if fn.class_code is not None else None,
        "kind": s.kind,
        "role": fn.role,
        "driver": fn.driver,
        "parent": fn.parent,
        "speed_gtps": fn.speed_gtps,
        "width": fn.width,
        "max_speed_gtps": fn.max_speed_gtps,
        "max_width": fn.max_width,
        "current": s.current,
        "capable": s.capable,
        "current_mbps": s.current_mbps,
        "capable_mbps": s.capable_mbps,
        "downgraded": s.downgraded,
        "port_limited": s.port_limited,
        # Added: the path to the CPU carries less than the endpoint can do (list's slot_limited finding).
        "slot_limited": s.slot_limited is not None,
        "findings": [f.to_dict() for f in (s.slot_limited, s.behind_chipset) if f is not None],
        # Added: the physical slot of the function's own link, where the firmware or kernel names one.
        "slot": next((h.slot.name for h in fn.path if h.name == fn.bdf and h.slot is not None), None),
        # Added (issue 36): its PCIe error counters since boot, null when it has none.
        "aer": {**dataclasses.asdict(fn.aer), "counts": [dataclasses.asdict(c) for c in fn.aer.counts]}
        if fn.aer
        else None,
        "notes": list(fn.notes),
    }
