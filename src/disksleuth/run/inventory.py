"""`list`, `links` and `capture`: the machine's block devices and PCIe links, from sysfs or a capture.

Imported by every run of `list`, `links` and `capture`, and before anything is read: what only one of them needs, or
only a machine with arrays (SMART of the members: run/members, which brings the benchmark's modules with it),
is imported where it is used (issue 37: start-up)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from disksleuth.analysis.ceilings import link_chain
from disksleuth.analysis.links import static_findings
from disksleuth.errors import DisksleuthError, ParseError
from disksleuth.model import Device, Finding, LinkChain
from disksleuth.probe.block import list_devices
from disksleuth.probe.stack import list_bcachefs, list_btrfs, read_stack, tops_above
from disksleuth.probe.sysfs import Sysfs

if TYPE_CHECKING:
    from disksleuth.analysis.pci import LinkStatus
    from disksleuth.model.arrays import StackNode


@contextlib.contextmanager
def sysfs_root(path: str | None) -> Iterator[str]:
    """A --sysfs-root: "/" (the live machine), a directory, or a capture bundle unpacked for as long as
    the context lasts."""
    if not path or path == "/":
        yield "/"
        return
    from disksleuth.probe.capture import capture_root

    with capture_root(path) as root:
        yield root


@dataclass(frozen=True)
class DeviceRow:
    device: Device
    chain: LinkChain
    findings: list[Finding]
    member_of: tuple[str, ...] = ()  # the arrays at the top of the stacks this device is part of (issue 24)


@dataclass(frozen=True)
class ArrayRow:
    tree: StackNode
    findings: list[Finding]


@dataclass(frozen=True)
class Inventory:
    devices: list[DeviceRow]
    arrays: list[ArrayRow]
    notes: tuple[str, ...] = ()  # what was left unread ("49,990 block devices, reading the first 4,096")


MAX_ZPOOL_STATUS_BYTES = 4 * 1024 * 1024  # zpool status of a thousand-disk pool is ~100 KB


def inventory(root: str, *, include_unattached: bool = False, zpool_status: str | None = None) -> Inventory:
    """`list`: the block devices, and every array (md, dm over several devices, mounted btrfs) as a tree down to
    its disks, with the findings its state and its members' links give; with `zpool_status`, the pools in that
    saved `zpool status -P` output too (ZFS is read from its text: there is no sysfs view of a pool)."""
    pools: list[StackNode] = []
    if zpool_status:
        from disksleuth.infile import read_user_file
        from disksleuth.probe.zpool_text import parse_zpool_status

        raw = read_user_file(zpool_status, MAX_ZPOOL_STATUS_BYTES, "zpool status -P output")
        try:
            pools = parse_zpool_status(raw.decode("utf-8", errors="replace"))
        except ParseError as exc:
            raise ParseError(f"{zpool_status}: {exc}") from None
    notes: list[str] = []
    rows = devices(root, include_unattached=include_unattached, notes=notes)
    fs = Sysfs(root)
    trees = [read_stack(r.device.name, root, fs=fs) for r in rows if r.device.slaves and not r.device.holders]
    sets = list_btrfs(root, fs) + list_bcachefs(root, fs)
    trees = [t for t in trees if t.is_array] + sets
    if trees:
        from disksleuth.run.members import with_member_health

        trees = [with_member_health(t, root) for t in trees]
    names = {t.name: (f"{t.kind} {t.label or t.name}" if t.kind in ("btrfs", "bcachefs") else t.name) for t in trees}
    with_members = []
    for row in rows:
        tops = [names[t] for t in tops_above(row.device.name, root, fs) if t in names]
        tops += [names[t.name] for t in trees
                 if t.kind in ("btrfs", "bcachefs") and row.device.name in {x.name for x in t.walk()}]  # fmt: skip
        with_members.append(replace(row, member_of=tuple(dict.fromkeys(tops))))
    arrays: list[ArrayRow] = []
    if trees or pools:
        from disksleuth.analysis.members import tree_findings

        arrays = [ArrayRow(t, tree_findings(t)) for t in [*trees, *pools]]
    return Inventory(with_members, arrays, tuple(notes))


def devices(root: str, *, include_unattached: bool = False, notes: list[str] | None = None) -> list[DeviceRow]:
    """Block devices with their link chains and the findings that need no benchmark."""
    # Unattached loop devices and unconfigured zram have size 0; lsblk hides them too, and they are not read.
    found = list_devices(root, notes=notes, unattached=include_unattached)
    if not include_unattached:
        found = [d for d in found if not d.is_unattached]
    return [DeviceRow(d, link_chain(d.hops), static_findings(d)) for d in found]


def pci_links(root: str) -> list[LinkStatus]:
    """Every PCIe function: negotiated against capable link."""
    from disksleuth.analysis.pci import link_status
    from disksleuth.probe.pci import list_pci_functions

    return [link_status(fn) for fn in list_pci_functions(root)]


def tool_versions() -> dict[str, str | None]:
    from disksleuth.probe import runner

    versions: dict[str, str | None] = {}
    for tool, argv in (
        ("fio", ["fio", "--version"]),
        ("smartctl", ["smartctl", "--version"]),
        ("nvme", ["nvme", "version"]),
    ):
        try:
            out = runner.run(argv, timeout_s=10).stdout.strip().splitlines()
            versions[tool] = out[0] if out else None
        except DisksleuthError:  # not installed, or failed: the capture goes on without its version
            versions[tool] = None
    return versions


def capture(output: str, root: str, *, keep_serials: bool, keep_names: bool = False) -> dict[str, Any]:
    """Write a capture bundle; what it holds and what was masked (the `capture` document's keys)."""
    from disksleuth.probe.capture import write_capture

    return write_capture(output, root, keep_serials=keep_serials, versions=tool_versions(), keep_names=keep_names)
