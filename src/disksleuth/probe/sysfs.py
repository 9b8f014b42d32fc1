"""Low-level sysfs access under a root, so tests and `capture` bundles can stand in for /.

Every read returns None for a missing or unreadable attribute; malformed values are recorded as
notes by the caller, never raised.

A --sysfs-root may be hostile (a FIFO, a symlink to /dev/zero, a huge file, a link out of the tree):
every path is resolved inside the root, reads open only regular files, never block, and read a
bounded amount. Value parsers run in linear time on any input.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator

BDF_RE = re.compile(r"^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")

# A sysfs attribute holds at most one page (fs/sysfs/file.c, sysfs_kf_seq_show: PAGE_SIZE), and
# PAGE_SIZE is at most 64 KiB (arm64, ppc64). Anything longer did not come from a kernel.
MAX_ATTR_BYTES = 64 * 1024
# /proc/self/mountinfo grows with the mounts; 10,000 container mounts are about 2 MB.
MAX_PROC_BYTES = 16 * 1024 * 1024


def read_regular_file(path: str, limit: int, *, dir_fd: int | None = None, follow: bool = True) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes, else None; never blocks.

    stat() first so a FIFO or device node is never opened (opening some devices has side
    effects); O_NONBLOCK plus fstat() on the opened file close the race where the name is swapped
    for a FIFO or device between the two. sysfs and procfs files report a size of 4096 or 0
    whatever they hold, so the size is checked by reading at most limit + 1 bytes. With `dir_fd`,
    `path` is a name in that directory; `follow=False` refuses a final name that is a link.
    """
    nofollow = 0 if follow else os.O_NOFOLLOW
    try:
        if not stat.S_ISREG(os.stat(path, dir_fd=dir_fd, follow_symlinks=follow).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | nofollow, dir_fd=dir_fd)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(limit + 1 - total, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks) if total <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


# Linux follows at most 40 links in one lookup (include/linux/namei.h MAXSYMLINKS); a loop stops there too.
MAX_LINKS = 40


class LeavesRoot(Exception):
    """A path, or a link on its way, leads out of the root."""


class Sysfs:
    """Reads under a root: "/" for the live system, or a directory standing in for it (--sysfs-root, an
    unpacked capture).

    A tree other than "/" may be hostile: a `holders -> ../../../../etc` link made every reader list
    and read the host's files. So under such a root every path is resolved inside it, as
    openat2(RESOLVE_IN_ROOT) would: one name at a time from a descriptor of the root, an absolute link
    target taken relative to the root (the kernel's sysfs links are relative anyway), and a `..` that
    would climb above the root refused, with every path through it. Each step holds a descriptor of a
    real directory and opens the next name with O_NOFOLLOW, so a name swapped for a link meanwhile is
    never followed unchecked. What was refused is kept in `refused`, for the readers' notes. Under "/"
    the kernel resolves paths as it always did.

    Every method takes a host path under the root (from p()) and never raises for a missing,
    unreadable or refused path: it answers None, False or [] instead.
    """

    def __init__(self, root: str = "/"):
        # abspath() keeps POSIX's "//", which is "/" on Linux.
        self.root = "/" if os.path.abspath(root) == "//" else os.path.abspath(root)
        self.confined = self.root != "/"
        self.refused: list[str] = []  # "/sys/.../holders -> ../../../etc", as met (once per refused read)

    def p(self, *parts: str) -> str:
        """An absolute host path for a path given relative to the root (or as '/sys/...')."""
        return os.path.join(self.root, *(part.lstrip("/") for part in parts))

    def rel(self, host_path: str) -> str:
        """Inverse of p(): '/sys/devices/...' as the kernel would name it."""
        relative = os.path.relpath(host_path, self.root)
        return "/" + relative if not relative.startswith("..") else host_path

    # --- resolution inside the root -----------------------------------------------------------

    def _refuse(self, what: str) -> LeavesRoot:
        self.refused.append(what)
        return LeavesRoot(what)

    def _kernel_name(self, names: list[str]) -> str:
        return "/" + "/".join(names)

    def _walk(self, host_path: str, follow_last: bool) -> tuple[list[int], list[str], str]:
        """Resolve `host_path` inside the root: (descriptors of the root and of each directory down to
        the final name's parent, those directories' names, the final name: "." for the directory
        itself). The final name exists and is no link unless follow_last is False. The caller closes
        the descriptors. Raises OSError for a missing part or a link loop, LeavesRoot when refused."""
        if host_path == self.root:
            relative = ""
        elif host_path.startswith(self.root + "/"):
            relative = host_path[len(self.root) + 1 :]  # not normpath(): `link/..` is the link target's parent
        else:
            raise self._refuse(host_path)
        pending = relative.split("/")
        fds = [os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)]
        names: list[str] = []
        links = 0
        via: str | None = None  # the last link followed, named when a `..` climbs out
        try:
            while pending:
                part = pending.pop(0)
                if part in ("", "."):
                    continue
                if part == "..":
                    if not names:
                        raise self._refuse(via or self.rel(host_path))
                    os.close(fds.pop())
                    names.pop()
                    continue
                if not pending and not follow_last:
                    return fds, names, part
                try:
                    target = os.readlink(part, dir_fd=fds[-1])
                except OSError as exc:
                    if exc.errno != errno.EINVAL:  # EINVAL: there, and not a link
                        raise
                else:
                    links += 1
                    if links > MAX_LINKS:
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), host_path)
                    via = f"{self._kernel_name([*names, part])} -> {target}"
                    if target.startswith("/"):  # taken from the root, as RESOLVE_IN_ROOT does
                        while names:
                            os.close(fds.pop())
                            names.pop()
                    pending[:0] = target.split("/")
                    continue
                if not pending:
                    return fds, names, part
                # O_NOFOLLOW: a name made a link since readlink() fails here (ENOTDIR), it is never followed.
                flags = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
                fds.append(os.open(part, flags, dir_fd=fds[-1]))
                names.append(part)
            return fds, names, "."
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise

    @contextlib.contextmanager
    def _at(self, host_path: str, follow_last: bool = True) -> Iterator[tuple[int | None, str]]:
        """(dir_fd, name) for the os functions that take dir_fd: under "/" (None, the path itself);
        under another root, the resolved parent directory's descriptor and the final name."""
        if not self.confined:
            yield None, host_path
            return
        fds, _, last = self._walk(host_path, follow_last)
        try:
            yield fds[-1], last
        finally:
            for fd in fds:
                os.close(fd)

    def realpath(self, host_path: str) -> str:
        """The host path with every link resolved (inside the root). A path that is missing, loops or
        leads out of the root comes back as given, which every other method then finds missing too."""
        if not self.confined:
            return os.path.realpath(host_path)
        try:
            fds, names, last = self._walk(host_path, True)
        except (OSError, ValueError, LeavesRoot):
            return host_path
        for fd in fds:
            os.close(fd)
        return os.path.join(self.root, *names, *([last] if last != "." else []))

    def leaves_root(self, host_path: str) -> bool:
        """Does the path, or a link on its way, lead out of the root? (A missing path does not.)"""
        try:
            with self._at(host_path):
                return False
        except LeavesRoot:
            return True
        except (OSError, ValueError):
            return False

    # --- reads --------------------------------------------------------------------------------

    def read(self, host_path: str, limit: int = MAX_ATTR_BYTES) -> str | None:
        raw = self.read_bytes(host_path, limit)
        return raw.decode("utf-8", "replace").strip() if raw is not None else None

    def read_bytes(self, host_path: str, limit: int = MAX_ATTR_BYTES) -> bytes | None:
        try:
            with self._at(host_path) as (dir_fd, name):
                return read_regular_file(name, limit, dir_fd=dir_fd, follow=not self.confined)
        except (OSError, ValueError, LeavesRoot):
            return None

    def listdir(self, host_path: str) -> list[str]:
        try:
            with self._at(host_path) as (dir_fd, name):
                if dir_fd is None:
                    return sorted(os.listdir(name))
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
                try:
                    return sorted(os.listdir(fd))
                finally:
                    os.close(fd)
        except (OSError, ValueError, LeavesRoot):
            return []

    def readlink(self, host_path: str) -> str | None:
        """A link's target as written (not followed); None when the path is no link."""
        try:
            with self._at(host_path, follow_last=False) as (dir_fd, name):
                return os.readlink(name, dir_fd=dir_fd)
        except (OSError, ValueError, LeavesRoot):
            return None

    def link_name(self, host_path: str) -> str | None:
        """Basename of a symlink's target (driver links); works on dangling links too."""
        target = self.readlink(host_path)
        return os.path.basename(target) if target is not None else None

    def stat(self, host_path: str, follow_last: bool = True) -> os.stat_result | None:
        try:
            with self._at(host_path, follow_last) as (dir_fd, name):
                return os.stat(name, dir_fd=dir_fd, follow_symlinks=follow_last and not self.confined)
        except (OSError, ValueError, LeavesRoot):
            return None

    def isdir(self, host_path: str) -> bool:
        st = self.stat(host_path)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def isfile(self, host_path: str) -> bool:
        st = self.stat(host_path)
        return st is not None and stat.S_ISREG(st.st_mode)

    def islink(self, host_path: str) -> bool:
        st = self.stat(host_path, follow_last=False)
        return st is not None and stat.S_ISLNK(st.st_mode)


# Block devices read from one machine or capture. A SAN host with four paths to each of 1,024 LUNs has 4,096
# sd devices (plus as many dm ones), and the largest JBODs hold ~100 disks; past this cap a tree is read in part,
# and says so. Reading costs ~1 ms per device from an unpacked capture: 49,990 devices took 63 s and 724 MB.
MAX_BLOCK_DEVICES = 4096
# Devices that come by the thousand (snap and container images, RAM disks, network disks) go after the others
# when a machine has more devices than the cap: the disks a reader is after are never the ones left out.
_MANY_OF_A_KIND = ("loop", "ram", "zram", "nbd")
_DIGITS_RE = re.compile(r"(\d+)")


def _block_order(name: str) -> tuple[bool, list[str | int]]:
    natural: list[str | int] = [int(p) if p.isdigit() else p for p in _DIGITS_RE.split(name)[:64]]
    return name.startswith(_MANY_OF_A_KIND), natural


def block_device_names(fs: Sysfs, most: int | None = None) -> tuple[list[str], int]:
    """(the names under /sys/block to read, sorted, at most `most` (MAX_BLOCK_DEVICES) of them; how many there are)."""
    most = MAX_BLOCK_DEVICES if most is None else most
    names = fs.listdir(fs.p("/sys/block"))
    if len(names) <= most:
        return names, len(names)
    return sorted(sorted(names, key=_block_order)[:most]), len(names)


def block_cap_note(total: int, read: int) -> str | None:
    """The words for a tree with more block devices than are read, else None."""
    return f"{total:,} block devices, reading the first {read:,}" if total > read else None


class Notes:
    """Collects plain-words notes about values we could not use."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items:
            self.items.append(text)

    def as_tuple(self) -> tuple[str, ...]:
        return tuple(self.items)


def refused_notes(fs: Sysfs, since: int, notes: Notes) -> None:
    """A note for each path out of the root that one reader met: fs.refused from index `since` on."""
    for what in fs.refused[since:]:
        shown = what if len(what) <= 300 else what[:300] + "..."
        notes.add(f"{shown}: leads out of the --sysfs-root tree, not followed")


# Decimal or hex counters in sysfs are at most 64-bit: 20 digits (or 0x + 16). A longer run of
# digits is not a kernel value, and Python refuses int() of more than 4,300 digits anyway.
_MAX_INT_DIGITS = 24


def parse_int(text: str | None, what: str, notes: Notes, base: int = 10) -> int | None:
    """A non-negative integer attribute, or None with a note saying why."""
    if text is None or text == "":
        if text == "":
            notes.add(f"{what}: empty value")
        return None
    stripped = text.strip()
    digits = stripped[2:] if base == 16 and stripped[:2].lower() == "0x" else stripped
    valid = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if not digits or len(digits) > _MAX_INT_DIGITS or any(c not in valid for c in digits):
        notes.add(f"{what}: unreadable value {_preview(text)}")
        return None
    return int(digits, base)


def _preview(text: str) -> str:
    return repr(text[:40])


def _parse_decimal(number: str, low: float, high: float) -> float | None:
    """A decimal written by the kernel ("8.0", "5000"), if it lies in (low, high]."""
    if not number or len(number) > _MAX_INT_DIGITS or number.count(".") > 1:
        return None
    if any(c not in "0123456789." for c in number) or number.startswith(".") or number.endswith("."):
        return None
    value = float(number)
    return value if low < value <= high else None


# Kernel speed strings, drivers/pci/pci-sysfs.c and drivers/pci/probe.c:
#   5.6 and older: "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", unknown -> "Unknown speed"
#   5.7 and newer: "2.5 GT/s PCIe", "5.0 GT/s PCIe", ... "64.0 GT/s PCIe", unknown -> "Unknown"
# Split on whitespace rather than a regex so any input is parsed in linear time.
_PCIE_MAX_GTPS = 1000.0  # PCIe 7 is 128 GT/s; leave room, refuse nonsense


def parse_pcie_speed(text: str | None, what: str, notes: Notes) -> float | None:
    if text is None:
        return None
    words = text.split()
    number = None
    if len(words) >= 2 and words[1] == "GT/s" and (len(words) == 2 or words[2:] == ["PCIe"]):
        number = words[0]
    elif words and words[0].endswith("GT/s") and (len(words) == 1 or words[1:] == ["PCIe"]):
        number = words[0][: -len("GT/s")]
    if number is not None:
        value = _parse_decimal(number, 0.0, _PCIE_MAX_GTPS)
        if value is not None:
            return value
    if text.lower().startswith("unknown"):
        notes.add(f"{what}: the kernel reports the link speed as {_preview(text)}")
    else:
        notes.add(f"{what}: unreadable link speed {_preview(text)}")
    return None


def parse_pcie_width(text: str | None, what: str, notes: Notes) -> int | None:
    # current_link_width is a plain number ("4"); 0 means the link is down.
    width = parse_int(text, what, notes)
    if width is not None and width <= 0:
        notes.add(f"{what}: link width {width} (link down?)")
        return None
    if width is not None and width > 32:  # PCIe defines x1 to x32
        notes.add(f"{what}: unreadable link width {width}")
        return None
    return width


# libata, drivers/ata/libata-transport.c: sata_spd shows "1.5 Gbps", "3.0 Gbps", "6.0 Gbps", or
# "<unknown>" (and sata_spd_limit shows "<unknown>" when no limit is set).
def parse_sata_speed(text: str | None, what: str, notes: Notes) -> float | None:
    if text is None:
        return None
    words = text.split()
    number = None
    if len(words) == 2 and words[1] == "Gbps":
        number = words[0]
    elif len(words) == 1 and words[0].endswith("Gbps"):
        number = words[0][: -len("Gbps")]
    value = _parse_decimal(number, 0.0, 100.0) if number is not None else None
    if value is not None:
        return value
    if text.strip() != "<unknown>":
        notes.add(f"{what}: unreadable SATA speed {_preview(text)}")
    return None


def parse_usb_speed(text: str | None, what: str, notes: Notes) -> float | None:
    # drivers/usb/core/sysfs.c speed_show: "1.5", "12", "480", "5000", "10000", "20000" (Mb/s).
    if text is None:
        return None
    value = _parse_decimal(text.strip(), 0.0, 1_000_000.0)
    if value is None:
        notes.add(f"{what}: unreadable USB speed {_preview(text)}")
    return value


def parse_scheduler(text: str | None) -> str | None:
    """The active I/O scheduler: queue/scheduler reads "mq-deadline kyber [bfq] none".

    Found with str.find, never a backtracking regex: "[[[[..." made a regex search quadratic."""
    if not text:
        return None
    pos = 0
    while (start := text.find("[", pos)) >= 0:
        end = text.find("]", start + 1)
        if end < 0:
            break
        if end > start + 1:
            return text[start + 1 : end]
        pos = end + 1
    words = text.split(maxsplit=1)
    return words[0] if words else None


def parse_mmc_ios(text: str) -> tuple[str | None, int | None, int | None]:
    """(timing name, clock Hz, bus width bits) from debugfs mmcN/ios.

    drivers/mmc/core/debugfs.c prints 'clock:\\t\\t200000000 Hz', 'bus width:\\t2 (4 bits)' and
    'timing spec:\\t6 (sd uhs SDR104)'. Older kernels (before 4.x) named HS200 'mmc high-speed SDR200'.
    Parsed with str methods (linear time on any input).
    """
    timing = clock = width = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "timing spec":
            start, end = value.find("("), value.rfind(")")
            timing = value[start + 1 : end] if 0 <= start < end - 1 else None
        elif key == "clock":
            digits = len(value) - len(value.lstrip("0123456789"))
            clock = int(value[:digits]) if 0 < digits <= 12 else None
        elif key == "bus width":
            start, end = value.find("("), value.rfind(" bits)")
            number = value[start + 1 : end] if 0 <= start < end else ""
            width = int(number) if number.isascii() and number.isdigit() and len(number) <= 3 else None
    return timing, clock, width
