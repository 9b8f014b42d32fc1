"""cgroup I/O limits of a process (issue 36): /proc/PID/cgroup names its cgroups, the cgroup file systems hold
the limits.

Kernel layout relied on:
  proc(5) /proc/PID/cgroup: `hierarchy-ID:controller-list:cgroup-path` a line; `0::/path` for the unified (v2)
      hierarchy; the path is relative to the mount's root and may hold spaces or colons; a removed v2 cgroup's path
      ends in " (deleted)"
  Documentation/admin-guide/cgroup-v1/blkio-controller.rst: blkio.throttle.{read,write}_{bps,iops}_device, lines
      `MAJ:MIN VALUE` (the root group has the files too)
  Documentation/admin-guide/cgroup-v2.rst "IO Interface Files": io.max, lines `MAJ:MIN rbps=N wbps=N riops=N
      wiops=N`, `max` for none; no io.max in the root cgroup
  The usual mounts (systemd): v1 controllers at ROOT/<controllers> (ROOT/blkio), the unified hierarchy at ROOT
      itself (cgroup v2 only: ROOT/cgroup.controllers exists) or ROOT/unified (the hybrid layout).

Every file is read through Sysfs under the cgroup root, so a captured or hostile tree is confined to it; lines are
cut before they are split, files and levels are counted: a planted tree cannot make this slow.
"""

from __future__ import annotations

import os

from disksleuth.model.limits import SETTINGS, CgroupLimits, IoLimit
from disksleuth.probe.sysfs import Sysfs, read_regular_file

MAX_CGROUP_FILE_BYTES = 64 * 1024  # /proc/PID/cgroup: a line per hierarchy, a path of at most PATH_MAX
MAX_LIMIT_FILE_BYTES = 256 * 1024  # a limit file: a line per device with a limit (tens, on a big machine)
MAX_LINE_BYTES = 4096 + 64  # PATH_MAX and the hierarchy's fields; a limit line is under 100 bytes
MAX_LINES = 4096
MAX_LEVELS = 64  # cgroup v2 allows any depth (cgroup.max.depth); real trees are a handful deep
DELETED = " (deleted)"

V1_FILES = {
    "blkio.throttle.read_bps_device": "read_bps",
    "blkio.throttle.write_bps_device": "write_bps",
    "blkio.throttle.read_iops_device": "read_iops",
    "blkio.throttle.write_iops_device": "write_iops",
}
V2_KEYS = {"rbps": "read_bps", "wbps": "write_bps", "riops": "read_iops", "wiops": "write_iops"}
assert set(V1_FILES.values()) == set(V2_KEYS.values()) == set(SETTINGS)


def parse_proc_cgroup(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(hierarchy id, controllers, path) for each line of /proc/PID/cgroup; a line not shaped so is skipped. v1
    named hierarchies keep their "name=" controller ("name=systemd"); v2's line has none."""
    out = []
    for raw in text.splitlines()[:MAX_LINES]:
        line = raw[:MAX_LINE_BYTES]
        hid, sep, rest = line.partition(":")
        controllers, sep2, path = rest.partition(":")  # the path keeps any further colons
        if not sep or not sep2 or not hid.isascii() or not hid.isdigit() or not path.startswith("/"):
            continue
        out.append((hid, tuple(c for c in controllers.split(",") if c), path))
    return out


def _unsigned(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def _dev(text: str) -> str | None:
    major, sep, minor = text.partition(":")
    if not sep or _unsigned(major) is None or _unsigned(minor) is None or len(text) > 21:
        return None
    return f"{int(major)}:{int(minor)}"


def parse_v1_limit(text: str, setting: str) -> list[tuple[str, str, int, str]]:
    """(MAJ:MIN, setting, value, line) for each `MAJ:MIN VALUE` line of a blkio.throttle file; `max`, 0 or a
    malformed line sets nothing."""
    out = []
    for raw in text.splitlines()[:MAX_LINES]:
        line = raw[:MAX_LINE_BYTES].strip()
        parts = line.split()
        if len(parts) != 2:
            continue
        dev, value = _dev(parts[0]), _unsigned(parts[1])
        if dev is not None and value:
            out.append((dev, setting, value, line))
    return out


def parse_io_max(text: str) -> list[tuple[str, str, int, str]]:
    """(MAJ:MIN, setting, value, line) for each limit of a v2 io.max file; `max` is no limit."""
    out = []
    for raw in text.splitlines()[:MAX_LINES]:
        line = raw[:MAX_LINE_BYTES].strip()
        parts = line.split()
        dev = _dev(parts[0]) if parts else None
        if dev is None:
            continue
        for item in parts[1:8]:
            key, sep, value = item.partition("=")
            number = _unsigned(value)
            if sep and key in V2_KEYS and number:
                out.append((dev, V2_KEYS[key], number, line))
    return out


def _levels(path: str) -> list[str] | None:
    """The path and each parent up to the root ("/a/b" -> ["/a/b", "/a", "/"]); None for a path no kernel
    writes (a `..` or `.` part, a NUL)."""
    parts = [p for p in path.split("/") if p]
    if any(p in (".", "..") for p in parts) or "\0" in path:
        return None
    levels = ["/" + "/".join(parts[:n]) for n in range(len(parts), 0, -1)] + ["/"]
    return levels[:MAX_LEVELS]


class _Reader:
    def __init__(self, cgroup_root: str) -> None:
        self.fs = Sysfs(cgroup_root)
        self.root = cgroup_root.rstrip("/") or "/"
        self.notes: list[str] = []
        self.limits: list[IoLimit] = []

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def shown(self, *parts: str) -> str:
        """A file as the live system names it (the root given, joined): for the findings' words."""
        return os.path.join(self.root, *(p.strip("/") for p in parts if p.strip("/")))

    def mount_of(self, hid: str, controllers: tuple[str, ...]) -> str | None:
        """The directory under the root where this hierarchy is mounted, when it is one that limits I/O."""
        if hid == "0" and not controllers:  # the unified hierarchy
            if self.fs.isfile(self.fs.p("cgroup.controllers")):
                return ""
            return "unified" if self.fs.isdir(self.fs.p("unified")) else None
        if "blkio" not in controllers:
            return None
        for name in (",".join(controllers), "blkio"):
            if self.fs.isdir(self.fs.p(name)):
                return name
        self.note(f"the blkio hierarchy is not mounted under {self.root}: its limits were not read")
        return None

    def read_level(self, mount: str, level: str, version: int) -> None:
        files = V1_FILES if version == 1 else {"io.max": ""}
        for name, setting in files.items():
            host = self.fs.p(mount, level, name)
            raw = self.fs.read_bytes(host, MAX_LIMIT_FILE_BYTES)
            if raw is None:
                if self.fs.stat(host) is not None:  # there, and unreadable (or too large): said, not guessed at
                    self.note(f"could not read {self.shown(mount, level, name)}")
                continue
            text = raw.decode("ascii", errors="replace")
            found = parse_v1_limit(text, setting) if version == 1 else parse_io_max(text)
            for dev, what, value, line in found:
                path = self.shown(mount, level, name)
                self.limits.append(IoLimit(dev, dev, what, value, level, version, name, path, line))


def read_io_limits(pid: str = "self", procfs_root: str = "/proc", cgroup_root: str = "/sys/fs/cgroup") -> CgroupLimits:
    """Every I/O limit the process meets: each of its cgroups with an I/O controller, read from its own level up
    to the root (CgroupLimits.per_device gives the tightest per device and setting). Never raises: what could not
    be read is in `notes`, and `read` is False when /proc/PID/cgroup itself could not be."""
    if pid != "self" and not (pid.isascii() and pid.isdigit()):
        return CgroupLimits(pid, notes=(f"not a process id: {pid!r}",), read=False)
    raw = read_regular_file(os.path.join(procfs_root, pid, "cgroup"), MAX_CGROUP_FILE_BYTES)
    if raw is None:
        where = os.path.join(procfs_root, pid, "cgroup")
        return CgroupLimits(pid, notes=(f"could not read {where}: the cgroup limits are unknown",), read=False)
    reader = _Reader(cgroup_root)
    cgroups: list[tuple[str, str]] = []
    for hid, controllers, path in parse_proc_cgroup(raw.decode("utf-8", errors="replace")):
        mount = reader.mount_of(hid, controllers)
        if mount is None:
            continue
        hierarchy = mount or "unified"
        cgroups.append((hierarchy, path))
        own = path
        if path.endswith(DELETED) and not reader.fs.isdir(reader.fs.p(mount, path)):
            own = path.removesuffix(DELETED)
            reader.note(f"the {hierarchy} cgroup {own} was removed while in use: its own limits are gone, its "
                        "parents' were read")  # fmt: skip
        levels = _levels(own)
        if levels is None:
            reader.note(f"the {hierarchy} cgroup path {path!r} is not one the kernel writes: not read")
            continue
        version = 2 if hid == "0" and not controllers else 1
        for level in levels:
            reader.read_level(mount, level, version)
    return CgroupLimits(pid, tuple(cgroups), tuple(reader.limits), tuple(reader.notes))
