"""`lspci -vv` / `-vvv` text (with or without -nn, -k, -D; the whole machine or `-s` one device) read into the
PciFunction model `links` builds from sysfs, with the PCIe path of each function from its bridges' bus numbers.

Lines, from pciutils lspci.c and ls-caps.c (3.x):
- header: "[DDDD:]BB:DD.F Class name [cccc]: Vendor Device [vvvv:dddd] (rev NN) (prog-if ...)"; the "[cccc]" and
  "[vvvv:dddd]" parts only with -nn. Without pci.ids the names read "Device 1234", "Unknown Vendor ...".
- "Bus: primary=00, secondary=01, subordinate=01, sec-latency=0" on bridges: the bus below each bridge.
- "Capabilities: [58] Express (v2) Root Port (Slot+), MSI 00": the function's PCIe role.
- "LnkCap: Port #1, Speed 8GT/s, Width x4, ..." (the function's own maximum);
  "LnkSta: Speed 2.5GT/s (downgraded), Width x1 (downgraded)": the negotiated link; pciutils 3.8 and later add
  "(downgraded)" or "(ok)" by comparing with LnkCap, older ones print nothing.
- "LnkCap2: Supported Link Speeds: 2.5-16GT/s": the speeds vector the kernel also reads for max_link_speed.
- "Kernel driver in use: nvme".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from disksleuth.errors import ParseError
from disksleuth.model import PcieHop
from disksleuth.model.paste import PastedPci
from disksleuth.model.run import PciFunction
from disksleuth.probe.block import link_hop
from disksleuth.probe.paste_text import iter_lines

_HEADER = re.compile(
    r"^\s*+(?P<bdf>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) "
    r"(?P<cls>[^:\[]{2,80}?)(?: \[(?P<code>[0-9a-fA-F]{4})\])?: (?P<rest>.*)$"
)
_IDS = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
# The most functions read from one paste: a large server has a few thousand. Each costs a parse, a link to its
# parent and a device to judge (500,000 pasted headers took 24 s and 879 MB); the rest of a paste is not read.
MAX_FUNCTIONS = 8192
# Where the names end: " (rev 01)" or " (prog-if 02 [NVM Express])". Found without a leading `\s*` (the spaces
# before it are stripped in Python): searched from every position of a run of spaces, `\s*` read the whole run
# each time, and a header with 65,536 spaces took 7 s.
_NAMES_END = re.compile(r"\((?:rev [0-9a-fA-F]++\)|prog-if )")
_SPEED = re.compile(r"Speed (\d++(?:\.\d++)?)GT/s(?: \((downgraded|ok)\))?")
_WIDTH = re.compile(r"Width x(\d++)(?: \((downgraded|ok)\))?")
_BUS = re.compile(r"Bus: primary=([0-9a-fA-F]{2}), secondary=([0-9a-fA-F]{2}), subordinate=([0-9a-fA-F]{2})")
# The role ends at " (Slot+)" or at the comma before the interrupt message number: ", MSI 00" in older pciutils,
# ", IntMsgNum 0" in newer ones (pciutils tests/cap-phy32, an NVMe endpoint: read up to ", MSI" only, its role
# was lost and it was taken for an integrated endpoint, whose link is never judged).
_EXPRESS = re.compile(r"Capabilities: \[[0-9a-fA-F]++\] Express \([^)]*+\) ([A-Za-z /-]+?)(?: \(|,|$)")
_SPEEDS2 = re.compile(r"Supported Link Speeds: ([\d.]++)(?:-([\d.]++))?GT/s")
# What pciutils prints (lib/header.h speed codes, a width field of x1-x32): any other value ("0GT/s", "x64", a
# 10,000-digit width) is not lspci's and is read as unknown, not as a link of 0 MB/s or 10^20 lanes.
_SPEEDS_GTPS = frozenset({2.5, 5.0, 8.0, 16.0, 32.0, 64.0})
_WIDTHS = frozenset({1, 2, 4, 8, 12, 16, 32})


def _speed(text: str | None) -> float | None:
    value = float(text) if text and len(text) <= 8 else None
    return value if value in _SPEEDS_GTPS else None


def _width(text: str | None) -> int | None:
    value = int(text) if text and len(text) <= 3 else None
    return value if value in _WIDTHS else None


_ROLES = {
    "Root Port": "root_port",
    "Upstream Port": "upstream_port",
    "Downstream Port": "downstream_port",
    "Endpoint": "endpoint",
    "Legacy Endpoint": "endpoint",
    "Root Complex Integrated Endpoint": "integrated",
    "PCI-Express to PCI/PCI-X Bridge": "pcie_to_pci_bridge",
}
# Class names lspci prints (pci.ids "C" lines) for the storage and bridge kinds, to a class code when -nn is absent.
_CLASS_CODES = {
    "Non-Volatile memory controller": 0x010802,
    "SATA controller": 0x010601,
    "RAID bus controller": 0x010400,
    "Serial Attached SCSI controller": 0x010700,
    "SCSI storage controller": 0x010000,
    "IDE interface": 0x010100,
    "Mass storage controller": 0x018000,
    "PCI bridge": 0x060400,
    "Host bridge": 0x060000,
    "USB controller": 0x0C0300,
    "Ethernet controller": 0x020000,
    "Network controller": 0x028000,
    "VGA compatible controller": 0x030000,
}


@dataclass
class _Fn:
    bdf: str
    cls: str
    class_code: int | None
    vendor_device: str | None
    vendor_name: str | None
    device_name: str | None
    lines: dict[str, int] = field(default_factory=dict)
    role: str | None = None
    speed: float | None = None
    width: int | None = None
    max_speed: float | None = None
    max_width: int | None = None
    speeds2_max: float | None = None
    speed_tag: bool | None = None
    width_tag: bool | None = None
    secondary_bus: str | None = None
    driver: str | None = None
    subsystem: str | None = None

    @property
    def is_bridge(self) -> bool:
        return self.secondary_bus is not None

    @property
    def cap_speed(self) -> float | None:
        # The kernel reads LnkCap2's speeds vector when it is set (pcie_get_speed_cap), else LnkCap.
        return self.speeds2_max or self.max_speed


def _full_bdf(bdf: str) -> str:
    return bdf.lower() if bdf.count(":") == 2 else "0000:" + bdf.lower()


def parse_lspci_vv(text: str, first_line: int = 1, tree: Mapping[str, str | None] | None = None) -> list[PastedPci]:
    """Every function in an `lspci -vv` paste, with its link, its parent port and its path to the root port.

    A device pasted alone (lspci -s) still gets its own link; `chain_known` is False when a bridge between it and
    the root port is not in the paste. `tree` (full BDF -> parent bridge BDF or None on a root bus, from
    `lspci -t`, probe/lspci_tree.py) places functions whose bridge printed no "Bus:" line, and names the bridge
    above the last pasted one. At most MAX_FUNCTIONS are read. ParseError when the text holds no lspci device."""
    fns: list[_Fn] = []
    cur: _Fn | None = None
    for offset, line in enumerate(iter_lines(text)):  # the normaliser's lines: "\n" only, as numbered
        no = first_line + offset
        m = _HEADER.match(line)
        if m:  # property lines never start with a bus address, however the paste indented them
            if len(fns) == MAX_FUNCTIONS:
                break
            cur = _header(m, no)
            fns.append(cur)
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("LnkCap:"):
            sp, wd = _SPEED.search(s), _WIDTH.search(s)
            cur.max_speed = _speed(sp.group(1)) if sp else None
            cur.max_width = _width(wd.group(1)) if wd else None
            cur.lines["LnkCap"] = no
        elif s.startswith("LnkSta:"):
            sp, wd = _SPEED.search(s), _WIDTH.search(s)
            cur.speed = _speed(sp.group(1)) if sp else None
            cur.width = _width(wd.group(1)) if wd else None
            cur.speed_tag = (sp.group(2) == "downgraded") if sp and sp.group(2) else None
            cur.width_tag = (wd.group(2) == "downgraded") if wd and wd.group(2) else None
            cur.lines["LnkSta"] = no
        elif s.startswith("LnkCap2:"):
            m2 = _SPEEDS2.search(s)
            if m2:
                cur.speeds2_max = _speed(m2.group(2) or m2.group(1))
        elif s.startswith("Bus: primary="):
            mb = _BUS.search(s)
            if mb:
                cur.secondary_bus = mb.group(2).lower()
                cur.lines["Bus"] = no
        elif s.startswith("Capabilities:") and " Express (" in s:
            me = _EXPRESS.search(s)
            if me:
                cur.role = _ROLES.get(me.group(1).strip(), cur.role)
                cur.lines["Express"] = no
        elif s.startswith("Kernel driver in use:"):
            cur.driver = s.split(":", 1)[1].strip() or None
        elif s.startswith("Subsystem:") and cur.subsystem is None:
            cur.subsystem = _IDS.sub("", s[10:]).strip()[:200] or None
            cur.lines["Subsystem"] = no
    if not fns:
        raise ParseError("no lspci device in the text (expected lines like '01:00.0 SATA controller: ...')")
    return _link_up(fns, tree or {})


def _header(m: re.Match[str], no: int) -> _Fn:
    rest = m.group("rest")
    ids = _IDS.findall(rest)
    vendor_device = f"{ids[-1][0]}:{ids[-1][1]}".lower() if ids else None
    end = _NAMES_END.search(rest)
    names = _IDS.sub("", rest[: end.start()] if end else rest).strip()
    cls = m.group("cls").strip()
    code = int(m.group("code"), 16) << 8 if m.group("code") else _CLASS_CODES.get(cls)
    return _Fn(
        bdf=_full_bdf(m.group("bdf")),
        cls=cls,
        class_code=code,
        vendor_device=vendor_device,
        vendor_name=None,
        device_name=names or None,
        lines={"header": no},
    )


def _link_up(fns: list[_Fn], tree: Mapping[str, str | None]) -> list[PastedPci]:
    # The bridge whose secondary bus a function sits on is its parent (same PCI domain); else the one the
    # -t tree draws it under, when that bridge was pasted too.
    below: dict[tuple[str, str], _Fn] = {}
    by_bdf = {f.bdf: f for f in fns}
    for f in fns:
        if f.secondary_bus is not None:
            below[(f.bdf.split(":")[0], f.secondary_bus)] = f
    parent_of: dict[str, _Fn | None] = {}
    for f in fns:
        domain, bus = f.bdf.split(":")[0], f.bdf.split(":")[1]
        p = below.get((domain, bus)) or by_bdf.get(tree.get(f.bdf) or "")
        parent_of[f.bdf] = p if p is not None and p.bdf != f.bdf else None
    out = []
    for f in fns:
        parent = parent_of[f.bdf]
        role = f.role or ("integrated" if parent is None and tree.get(f.bdf) is None else "endpoint")
        top = _top(f, parent_of)
        top_role = top.role or ("integrated" if tree.get(top.bdf) is None else "endpoint")
        # The chain is known when the walk up through pasted bridges ends at a root port, at bus 00, or at a
        # function the -t tree draws on a root bus.
        on_root_bus = top.bdf in tree and tree[top.bdf] is None
        chain_known = top.bdf.split(":")[1] == "00" or top_role in ("root_port", "integrated") or on_root_bus
        above = tree.get(top.bdf) if not chain_known else None  # the bridge the tree names, not pasted
        fn = PciFunction(
            bdf=f.bdf,
            vendor_device=f.vendor_device,
            class_code=f.class_code,
            speed_gtps=f.speed,
            width=f.width,
            max_speed_gtps=f.cap_speed,
            max_width=f.max_width,
            parent=parent.bdf if parent else tree.get(f.bdf),
            parent_max_speed_gtps=parent.cap_speed if parent else None,
            parent_max_width=parent.max_width if parent else None,
            driver=f.driver,
            role=role,
            notes=() if chain_known else ("the bridge above it is not in the paste: its path to the CPU is unknown",),
            device_name=f.device_name,
            path=_path(f, parent_of, tree),
        )
        out.append(PastedPci(fn, dict(f.lines), f.speed_tag, f.width_tag, chain_known, above, f.subsystem))
    return out


def _top(f: _Fn, parent_of: dict[str, _Fn | None]) -> _Fn:
    """The highest pasted function above f (f itself when its parent is not pasted)."""
    seen = {f.bdf}
    while (p := parent_of.get(f.bdf)) is not None and p.bdf not in seen:
        seen.add(p.bdf)
        f = p
    return f


def _path(f: _Fn, parent_of: dict[str, _Fn | None], tree: Mapping[str, str | None]) -> tuple[PcieHop, ...]:
    """The links from this function up to the root port, its own first (as probe.block.pcie_hops builds them).
    Where the walk stops at a pasted function whose bridge is not in the paste, that function's own link is the
    last hop, judged against its own LnkCap (the port's end, named by the -t tree if pasted, is unknown)."""
    hops: list[PcieHop] = []
    lower: _Fn | None = f
    seen: set[str] = set()
    while lower is not None and lower.bdf not in seen:
        seen.add(lower.bdf)
        port = parent_of.get(lower.bdf)
        if port is None:
            on_root_bus = lower.bdf in tree and tree[lower.bdf] is None
            # A downstream port's LnkSta is the link below it (already a hop); its way up is inside the switch.
            upward = lower.role not in ("downstream_port", "root_port")
            if hops and upward and (lower.speed is not None or lower.width is not None) and not on_root_bus:
                hops.append(_own_link(lower, tree.get(lower.bdf)))
            break
        up = parent_of.get(port.bdf)
        port_is_root = port.role == "root_port" or (up is None and port.bdf.split(":")[1] == "00")
        hops.append(link_hop(lower, port, port_is_root))
        # A switch downstream port hangs below the switch's upstream port: that internal hop is not a link.
        switch_inside = up is not None and port.role == "downstream_port"
        lower = up if switch_inside else (None if port_is_root else port)
    return tuple(hops)


def _own_link(f: _Fn, port: str | None) -> PcieHop:
    return PcieHop(f.bdf, port, f.vendor_device, None, f.speed, f.width, f.cap_speed, f.max_width, None, None,
                   is_bridge=f.is_bridge)  # fmt: skip


def with_names(fns: list[PastedPci], names: dict[str, tuple[str, str]]) -> list[PastedPci]:
    """Vendor and device names from pci.ids, for functions pasted with -n only."""
    return [
        replace(p, fn=replace(p.fn, vendor_name=names[p.fn.vendor_device][0], device_name=names[p.fn.vendor_device][1]))
        if p.fn.vendor_device in names
        else p
        for p in fns
    ]
