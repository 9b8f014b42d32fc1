"""May we write to this device? (pure; DESIGN.md "Safety: nothing is lost")."""

from __future__ import annotations

from disksleuth.model import Device
from disksleuth.units import fmt_bytes


def write_refusal(device: Device) -> str | None:
    """Why writing to `device` (a whole disk or a partition) must be refused, or None."""
    parts = (device, *device.partitions)
    for d in parts:
        if "/" in d.mountpoints:
            return f"{d.path} holds the root file system (/)"
    for d in parts:
        if d.mountpoints:
            return f"{d.path} is mounted at {', '.join(d.mountpoints)}"
    for d in parts:
        if d.swap:
            return f"{d.path} is in use as swap"
    for d in parts:
        if d.holders:
            return f"{d.path} is in use by {', '.join(d.holders)} (LVM, md or dm)"
    return None


def identity_line(device: Device) -> str:
    model = device.model or device.transport
    serial = f"serial {device.serial}" if device.serial else "no serial"
    return f"{device.path}: {model}, {serial}, {fmt_bytes(device.size_bytes)} ({device.size_bytes} bytes)"
