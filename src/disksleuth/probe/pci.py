"""Every PCI function with its link, for `disksleuth links` (what `lspci -vv | grep LnkCap|LnkSta` shows)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace

from disksleuth.model.run import PciFunction
from disksleuth.probe.aer import read_aer_at
from disksleuth.probe.block import board_functions, pcie_hops, read_pci_fn
from disksleuth.probe.pciids import pci_names
from disksleuth.probe.slots import read_slot_table
from disksleuth.probe.sysfs import BDF_RE, Notes, Sysfs, refused_notes
from disksleuth.probe.uplink import BoardFn, chipset_uplink


def pci_role(path_bdfs_are_bridges: list[bool]) -> str:
    """Role of the last function on a top-down path of PCI functions, given which are bridges.

    PCIe alternates down- and up-facing ends: root port -> [switch upstream -> switch downstream]* ->
    endpoint. A non-bridge at the top of the hierarchy is a root-complex integrated endpoint."""
    expecting_port = True
    role = "integrated"
    for is_bridge in path_bdfs_are_bridges:
        if expecting_port:
            role = ("root_port" if role == "integrated" else "downstream_port") if is_bridge else "integrated"
            expecting_port = not is_bridge
        else:
            role = "upstream_port" if is_bridge else "endpoint"
            expecting_port = True
    return role


def list_pci_functions(sysfs_root: str = "/", pci_ids_paths: Iterable[str] | None = None) -> list[PciFunction]:
    """Every PCI function, named from this system's pci.ids when one is installed (also for a capture)."""
    fns = _read_functions(sysfs_root)
    names = pci_names([fn.vendor_device for fn in fns], pci_ids_paths)
    if not names:
        return fns
    return [
        replace(fn, vendor_name=names[fn.vendor_device][0], device_name=names[fn.vendor_device][1])
        if fn.vendor_device in names
        else fn
        for fn in fns
    ]


def _read_functions(sysfs_root: str) -> list[PciFunction]:
    fs = Sysfs(sysfs_root)
    slots = read_slot_table(sysfs_root, fs)
    board: list[BoardFn] = []
    out = []
    bus_dir = fs.p("/sys/bus/pci/devices")
    for bdf in fs.listdir(bus_dir):
        notes = Notes()
        refused_before = len(fs.refused)
        link = os.path.join(bus_dir, bdf)
        path = fs.realpath(link)
        if not fs.isdir(path):
            if not fs.leaves_root(link):
                notes.add(f"/sys/bus/pci/devices/{bdf} is a dangling link")
            refused_notes(fs, refused_before, notes)
            out.append(
                PciFunction(
                    bdf=bdf,
                    vendor_device=None,
                    class_code=None,
                    speed_gtps=None,
                    width=None,
                    max_speed_gtps=None,
                    max_width=None,
                    parent=None,
                    parent_max_speed_gtps=None,
                    parent_max_width=None,
                    driver=None,
                    role="unknown",
                    notes=notes.as_tuple(),
                )
            )
            continue
        fn = read_pci_fn(fs, path, notes)
        chain = []
        cur = path
        while BDF_RE.match(os.path.basename(cur)):
            chain.append(cur)
            cur = os.path.dirname(cur)
        bridges = [read_pci_fn(fs, p, Notes()).is_bridge for p in reversed(chain[1:])] + [fn.is_bridge]
        parent = parent_max_speed = parent_max_width = None
        if len(chain) > 1:
            pfn = read_pci_fn(fs, chain[1], Notes())
            parent, parent_max_speed, parent_max_width = pfn.bdf, pfn.max_speed, pfn.max_width
        # Each function's own counters below; its path's would read every port again for each function under it.
        hops = tuple(pcie_hops(fs, chain, [os.path.basename(p) for p in chain], Notes(), slots, with_aer=False))
        aer = read_aer_at(fs, path, fn.bdf, notes)
        driver = fs.link_name(os.path.join(path, "driver"))
        uplink = None
        if not fn.is_bridge and any(h.port_is_chipset for h in hops):
            board = board or board_functions(fs, slots)  # read once, and only on a machine with a chipset
            uplink = chipset_uplink(hops, board)
        refused_notes(fs, refused_before, notes)
        out.append(
            PciFunction(
                bdf=fn.bdf,
                vendor_device=fn.vendor_device,
                class_code=fn.class_code,
                speed_gtps=fn.speed,
                width=fn.width,
                max_speed_gtps=fn.max_speed,
                max_width=fn.max_width,
                parent=parent,
                parent_max_speed_gtps=parent_max_speed,
                parent_max_width=parent_max_width,
                driver=driver,
                role=pci_role(bridges),
                notes=notes.as_tuple(),
                path=hops,
                chipset_uplink=uplink,
                aer=aer,
            )
        )
    return out
