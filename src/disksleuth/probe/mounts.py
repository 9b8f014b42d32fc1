"""Mounts and swap, from <root>/proc/self/mountinfo (or a capture's proc/ copy) and proc/swaps."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from disksleuth.probe.sysfs import MAX_PROC_BYTES, Sysfs


@dataclass(frozen=True)
class MountTable:
    by_dev: dict[str, tuple[str, ...]] = field(default_factory=dict)  # "MAJ:MIN" -> mountpoints
    by_source: dict[str, tuple[str, ...]] = field(default_factory=dict)  # "/dev/sda1" -> mountpoints
    swaps: frozenset[str] = frozenset()
    fstypes: dict[str, tuple[str, str]] = field(default_factory=dict)  # mountpoint -> (fstype, source)

    def mountpoints_for(self, name: str, dev: str | None, dm_name: str | None) -> tuple[str, ...]:
        found: list[str] = []
        for key in (f"/dev/{name}", f"/dev/mapper/{dm_name}" if dm_name else None):
            if key:
                found.extend(self.by_source.get(key, ()))
        if dev:
            found.extend(self.by_dev.get(dev, ()))
        return tuple(dict.fromkeys(found))

    def fstype_for(self, mountpoints: tuple[str, ...]) -> str | None:
        for mp in mountpoints:
            if mp in self.fstypes:
                return self.fstypes[mp][0]
        return None

    def dev_holding(self, path: str) -> str | None:
        """The "MAJ:MIN" of the mount whose mount point is the longest prefix of `path` (lexically, so it works on a
        captured table too)."""
        best: tuple[int, str] | None = None
        for dev, mountpoints in self.by_dev.items():
            for mp in mountpoints:
                inside = path == mp or path.startswith(mp.rstrip("/") + "/")
                if inside and (best is None or len(mp) > best[0]):
                    best = (len(mp), dev)
        return best[1] if best else None

    def is_swap(self, name: str, dm_name: str | None) -> bool:
        return f"/dev/{name}" in self.swaps or (dm_name is not None and f"/dev/mapper/{dm_name}" in self.swaps)


# fs/proc_namespace.c mangles space, tab, newline and backslash as octal escapes (\040). Only
# three octal digits are an escape ("\\999" or non-ASCII digits stay as they are).
_OCTAL_ESCAPE_RE = re.compile(r"\\([0-7]{3})")


def _unescape(field_text: str) -> str:
    return _OCTAL_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 8)), field_text)


unescape_field = _unescape  # for probe.capture_names, which reads the same fields


def parse_mountinfo(text: str) -> MountTable:
    """proc(5) mountinfo: 'ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER'."""
    by_dev: dict[str, list[str]] = {}
    by_source: dict[str, list[str]] = {}
    fstypes: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 7 or "-" not in fields:
            continue
        sep = fields.index("-")
        mountpoint = _unescape(fields[4])
        by_dev.setdefault(fields[2], []).append(mountpoint)
        if sep + 2 < len(fields):
            source = _unescape(fields[sep + 2])
            by_source.setdefault(source, []).append(mountpoint)
            for part in multi_device_source(fields[sep + 1], source)[1:]:  # each device of a bcachefs set holds it
                by_source.setdefault(part, []).append(mountpoint)
            fstypes[mountpoint] = (fields[sep + 1], source)
    return MountTable(
        {k: tuple(v) for k, v in by_dev.items()},
        {k: tuple(v) for k, v in by_source.items()},
        fstypes=fstypes,
    )


def multi_device_source(fstype: str, source: str) -> list[str]:
    """A multi-device bcachefs is mounted with its devices joined by ':' (mount -t bcachefs /dev/sdb:/dev/sdc /mnt),
    and mountinfo shows that source: [the source, then each /dev/ path in it]; [source] for anything else."""
    if fstype != "bcachefs" or ":" not in source:
        return [source]
    return [source] + [p for p in source.split(":") if p.startswith("/dev/")]


def parse_swaps(text: str) -> frozenset[str]:
    # /proc/swaps: a header line, then 'Filename Type Size Used Priority'.
    return frozenset(_unescape(line.split()[0]) for line in text.splitlines()[1:] if line.split())


def read_mount_table(root: str = "/") -> MountTable:
    fs = Sysfs(root)
    text = fs.read(fs.p("/proc/self/mountinfo"), MAX_PROC_BYTES)
    if text is None:
        text = fs.read(fs.p("/proc/mountinfo"), MAX_PROC_BYTES) or ""
    table = parse_mountinfo(text)
    swaps = fs.read(fs.p("/proc/swaps"), MAX_PROC_BYTES)
    return MountTable(table.by_dev, table.by_source, parse_swaps(swaps) if swaps else frozenset(), table.fstypes)


def mount_of_path(path: str) -> str:
    """The mount point that holds `path` (live system only)."""
    path = os.path.realpath(path)
    while not os.path.ismount(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path
