"""May we write to this device? (pure; DESIGN.md "Safety: nothing is lost")."""

from __future__ import annotations

from disksleuth.model import Device
from disksleuth.model.held import HeldDevice
from disksleuth.units import fmt_bytes

LOOP_DEPTH = 8  # loop links followed from the target; a longer chain is refused rather than guessed
MAX_OPENERS_NAMED = 3  # processes named in a refusal; the rest are counted, so the refusal stays one short line


def write_refusal(device: Device, related: tuple[Device, ...] = ()) -> str | None:
    """Why writing to `device` (a whole disk or a partition) must be refused, or None.

    `related`: the devices linked to it through loop devices (probe's loop_related). Writing a loop
    device writes what it is attached to, and writing a device rewrites every loop device attached to
    it, so any of them mounted, swap or held refuses too, naming the chain."""
    return _in_use(device) or array_refusal(device) or _loop_refusal(device, related) or _backs_refusal(device)


def _backs_refusal(device: Device) -> str | None:
    """A loop device attached over this one (or a partition of it) is in use even when nothing mounts it: writes
    here rewrite what it shows, as a file backing a loop device is refused (file_write_refusal). The kernel lets
    the device be claimed exclusively meanwhile, so only this rule sees it."""
    backs = list(dict.fromkeys(n for d in (device, *device.partitions) for n in d.backs))
    if not backs:
        return None
    names = " ".join(f"/dev/{n}" for n in backs)
    return f"it backs {names.replace(' ', ', ')} (attached, so in use); detach it first (losetup -d {names})"


def renamed_refusal(path: str, device: Device | None, held: HeldDevice) -> str | None:
    """The checks and the identity shown must be of the device held: a name re-pointed between the claim and the
    inspection (a symlink swapped there and back) would have them judge one device while another is written."""
    seen = device.dev if device else None
    if seen == held.dev:
        return None
    return f"{path} now names another device ({seen or 'none'}) than the one held ({held.dev}); refusing to write"


def held_refusal(path: str, held: HeldDevice) -> str | None:
    """What the exclusive claim cannot see, as the one line said, or None: processes holding the device open without
    O_EXCL (dd, a virtual machine's disk), and a read-only device, whose every write fails (a run would measure or
    judge the failures, not the device: verify called a write-protected card counterfeit)."""
    if held.openers:
        named = ", ".join(held.openers[:MAX_OPENERS_NAMED])
        more = len(held.openers) - MAX_OPENERS_NAMED
        named += f" and {more} more" if more > 0 else ""
        return f"refusing to write to {path}: it is open in {named}; close it first"
    if held.read_only:
        return (
            f"{path} is read-only (a card's write-protect switch, blockdev --setro, or losetup -r): refusing to write"
        )
    return None


def array_refusal(device: Device, member_of: str | None = None) -> str | None:
    """Why writing to an array or to one of its members must be refused (issue 24), or None. A member's holders
    already refuse it (_in_use); a btrfs member has none, so `member_of` says it; an md array, or a dm
    mapping over several devices, is refused as a whole."""
    if member_of:
        return f"{device.path} is a member of the mounted {member_of}; writing it corrupts the file system"
    if device.transport == "md" or (device.transport == "dm" and len(device.slaves) > 1):
        over = ", ".join(device.slaves) or "its members"
        return f"{device.path} is an array (over {over}); writes to it are refused, and so are writes to its members"
    return None


def file_write_refusal(backs: tuple[str, ...], related: tuple[Device, ...] = ()) -> str | None:
    """Why writing to an existing file must be refused: it backs a loop device (attached = in use)."""
    if not backs:
        return None
    by_name = {d.name: d for d in related}
    for name in backs:
        start = by_name.get(name)
        if start is not None:
            reason = _in_use(start) or _loop_refusal(start, related)
            if reason:
                return f"it backs /dev/{name}, which {_which(reason, start)}"
    names = ", ".join(f"/dev/{n}" for n in backs)
    return f"it backs {names} (attached, so in use); detach it first (losetup -d {names.replace(', ', ' ')})"


def _which(reason: str, dev: Device) -> str:
    """How `dev` is in use, to follow "..., which": '/dev/loop2 is mounted at /mnt' -> 'is mounted at /mnt'."""
    if reason.startswith(f"{dev.path} "):
        return reason[len(dev.path) + 1 :]
    if reason.startswith("it "):  # a chain of its own
        return reason[3:]
    return f"is in use: {reason}"  # through a partition


def _loop_refusal(start: Device, related: tuple[Device, ...]) -> str | None:
    """Breadth-first along loop links from `start`: the first device in use, with the chain that reaches it."""
    by_name = {d.name: d for d in related}
    seen = {start.name}
    frontier: list[tuple[Device, str]] = [(start, "it")]
    for depth in range(LOOP_DEPTH + 1):
        following: list[tuple[Device, str]] = []
        for dev, chain in frontier:
            for how, name in _links(dev):
                if name in seen:
                    continue
                seen.add(name)
                step = f"{chain} {how} /dev/{name}"
                other = by_name.get(name)
                if other is None:
                    return f"{step}, which could not be read; refusing to write"
                reason = _in_use(other)
                if reason:
                    return f"{step}, which {_which(reason, other)}"
                following.append((other, f"{step}, which"))
        if not following:
            return None
        if depth == LOOP_DEPTH:
            return f"loop devices stacked deeper than {LOOP_DEPTH} links from it; refusing to write"
        frontier = following
    return None


def _links(dev: Device) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for d in (dev, *dev.partitions):
        owner = "" if d is dev else f"(through {d.path}) "
        out.extend((f"{owner}backs", n) for n in d.backs)
        if d.backed_by:
            out.append(("is backed by", d.backed_by))
        out.extend(("shares its backing file with", n) for n in d.shares_backing_with)
    return out


def _in_use(device: Device) -> str | None:
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
