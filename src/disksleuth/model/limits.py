"""cgroup I/O limits a process runs under (issue 36): one record per limit line, with where it was set.

cgroup v1 (Documentation/admin-guide/cgroup-v1/blkio-controller.rst): blkio.throttle.{read,write}_{bps,iops}_device,
lines `MAJ:MIN VALUE`. cgroup v2 (Documentation/admin-guide/cgroup-v2.rst, "IO Interface Files"): io.max, lines
`MAJ:MIN rbps=N wbps=N riops=N wiops=N`, `max` for none. A limit holds at every level of the hierarchy: the tightest
on the way from a process's cgroup up to the root is the one it meets."""

from __future__ import annotations

from dataclasses import dataclass, field

SETTINGS = ("read_bps", "write_bps", "read_iops", "write_iops")  # the four limits either version can set


@dataclass(frozen=True)
class IoLimit:
    """One limit on one device, as one cgroup file sets it. In a link chain it is a hop of its own (kind "limit"):
    not a link, but a ceiling on the path all the same."""

    name: str  # the device it is set on, by kernel name ("loop2", "sda"), or its MAJ:MIN when not known
    dev: str  # "7:2"
    setting: str  # read_bps, write_bps, read_iops, write_iops
    value: int  # bytes per second, or I/Os per second
    cgroup: str  # the level that sets it, as /proc/PID/cgroup names paths: "/system.slice/backup.service"
    version: int  # 1 (blkio controller) or 2 (io controller, unified hierarchy)
    file: str  # "blkio.throttle.read_bps_device", "io.max"
    path: str  # the file: "/sys/fs/cgroup/blkio/system.slice/backup.service/blkio.throttle.read_bps_device"
    line: str  # the file's line that sets it: "7:2 50000000", "7:2 rbps=50000000 wbps=max riops=max wiops=max"
    kind: str = field(default="limit", init=False)

    @property
    def direction(self) -> str:
        return self.setting.split("_", 1)[0]

    @property
    def per_second(self) -> str:
        """ "bps" or "iops"."""
        return self.setting.split("_", 1)[1]

    @property
    def mbps(self) -> float | None:
        """The limit in MB/s (10^6 bytes) for a bandwidth limit; None for an IOPS limit."""
        return self.value / 1e6 if self.per_second == "bps" else None


@dataclass(frozen=True)
class CgroupLimits:
    """What one process's cgroups limit (probe.cgroups.read_io_limits): every limit line met from each of its
    cgroups up to the root, in every hierarchy that has an I/O controller."""

    pid: str  # "self" or a pid
    cgroups: tuple[tuple[str, str], ...] = ()  # (hierarchy, path): ("blkio", "/g"), ("unified", "/user.slice")
    limits: tuple[IoLimit, ...] = ()  # every limit line met, every level and device (tightest: per_device)
    notes: tuple[str, ...] = ()  # what could not be read, in plain words
    read: bool = True  # False: /proc/PID/cgroup itself could not be read (the process is gone, or no procfs)

    def per_device(self) -> dict[str, dict[str, IoLimit]]:
        """The limit each device meets per setting: the tightest on the way up, in either hierarchy."""
        return tightest(self.limits)


def tightest(limits: tuple[IoLimit, ...] | list[IoLimit]) -> dict[str, dict[str, IoLimit]]:
    """MAJ:MIN -> setting -> the lowest value among `limits` (the first met, the process's own level, on a tie)."""
    out: dict[str, dict[str, IoLimit]] = {}
    for limit in limits:
        mine = out.setdefault(limit.dev, {})
        held = mine.get(limit.setting)
        if held is None or limit.value < held.value:
            mine[limit.setting] = limit
    return out


@dataclass(frozen=True)
class LimitCeiling:
    """A limit as a hop of the link chain (analysis.limits.limit_ceiling), shaped as a link's HopCeiling: a
    bandwidth limit's ceiling in MB/s; an IOPS limit has none in MB/s."""

    hop: IoLimit
    label: str  # "cgroup I/O limit, reads 50 MB/s on loop2"
    encoded_mbps: None
    current_mbps: float | None
    capable_mbps: None  # lifting a limit is what "capable" means for it: none of its own
    capable_label: None
    fact: str | None = None  # the file, its line and the cgroup
