"""What `capture` keeps of the mount table, the swap list and loop backing files, and how it masks the rest.

/proc/self/mountinfo names far more than disks: network shares with their user, domain and server
(`//alice@fileserver.corp.example/finance`, CIFS `username=`/`domain=`/`addr=`, NFS `addr=`, sshfs
`alice@host:/path`), bind mounts by the path they show (`/home/alice/project`), mount points under home
directories; loop/backing_file and /proc/swaps name files (`/home/alice/secret-project.img`). The readers of a
capture need little of it (probe.mounts, probe.loops, probe.memory, probe.stack):

- a block device's mount lines: device number, mount point, file system type and source (`/dev/sda1`, a bcachefs
  `/dev/sdb:/dev/sdc`, a by-uuid name that the serial masking then masks);
- the mount line of the file system under each loop backing file: the longest mount point above it, its type
  (tmpfs: the loop device stands on memory) and device number (the disk beneath, `backing_device`);
- a backing file's path only as far as that mount point: the rest is one keyed mask.

So every other line is left out, and what is kept is masked to that: sources that are not device names, the
root of a bind mount, options that are not plain flags, and every mount point component that is not a common
system directory name (`/home/alice` -> `/home/MASKED-…`). Masks are keyed per capture, so one name gets one
mask everywhere in a bundle (mount points and the backing paths under them stay prefixes of each other) and a
short name cannot be found again by hashing guesses.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from disksleuth.probe.mounts import unescape_field
from disksleuth.probe.sysfs import MAX_PROC_BYTES

# Mount point components kept as they are: the Filesystem Hierarchy Standard 3.0's directories, and the places
# systems mount things (systemd, udisks, snapd, container engines). Anything else may be someone's name.
_SYSTEM_DIRS = frozenset(
    {
        "boot", "efi", "home", "srv", "var", "tmp", "opt", "usr", "mnt", "media", "run", "dev", "shm", "lib",
        "log", "cache", "spool", "snap", "docker", "containers", "lxc", "lxd", "local", "nix", "store", "root",
        "proc", "sys", "fs", "firmware", "data", "storage", "backup", "export", "mqueue", "hugepages", "pts",
    }
)  # fmt: skip
# fs/proc_namespace.c show_mnt_opts: the per-mount flags are words; the optional fields are these tags.
_MOUNT_FLAG_RE = re.compile(r"[a-z_]{1,32}\Z")
_OPTIONAL_RE = re.compile(r"(?:(?:shared|master|propagate_from):[0-9]{1,10}|unbindable)\Z")
_FSTYPE_RE = re.compile(r"[a-z0-9_.+-]{1,64}\Z")
_MAJMIN_RE = re.compile(r"[0-9]{1,10}:[0-9]{1,10}\Z")
_ID_SOURCE_RE = re.compile(r"(?:PART)?(?:UUID|LABEL)=")  # masked by the serial masking (capture._ID_KEY_RE)
# Super-block options: flags ("discard", "inode64") and these keys with a short plain value. A path, a user, a host
# or an address never sits in one of them (CIFS username=/domain=/addr=, NFS addr=/clientaddr=, btrfs subvol=,
# uid=/gid=, SELinux context= are all left out).
_OPTION_FLAG_RE = re.compile(r"[a-z0-9_]{1,32}\Z")
_OPTION_VALUE_RE = re.compile(r"[A-Za-z0-9_.+-]{1,32}\Z")
_PLAIN_OPTION_KEYS = frozenset(
    {
        "errors", "data", "commit", "stripe", "barrier", "journal_ioprio", "inode_readahead_blks", "max_batch_time",
        "min_batch_time", "subvolid", "space_cache", "compress", "compress-force", "discard", "logbufs", "logbsize",
        "sunit", "swidth", "allocsize", "fmask", "dmask", "codepage", "iocharset", "shortname", "blksize", "size",
        "nr_inodes", "mode", "alloc_mode", "active_logs", "fsync_mode", "background_gc", "compress_algorithm",
        "compress_log_size", "discard_unit", "memory", "inline_xattr_size", "metadata_ratio", "thread_pool",
        "degraded", "version",
    }
)  # fmt: skip
# Network and FUSE file systems, named in the summary as such: their lines are left out unless a loop device's
# backing file is on one, and then their source and options are masked whole.
NETWORK_FSTYPES = frozenset(
    {"cifs", "smb3", "smbfs", "nfs", "nfs4", "9p", "ceph", "glusterfs", "afs", "ncpfs", "coda", "lustre", "davfs"}
)
# Block file systems whose mount lines carry an anonymous device number: btrfs (one per subvolume), bcachefs, and
# FUSE's block-device mounts (ntfs-3g). Their device is read from the source instead.
_ANON_DEV_FSTYPES = frozenset({"btrfs", "bcachefs", "fuseblk"})
DELETED_SUFFIX = " (deleted)"  # fs/d_path.c, after an unlinked backing file's path
# The masked table stays well inside what a reader reads of it (MAX_PROC_BYTES), however long its masks.
MAX_TABLE_BYTES = MAX_PROC_BYTES // 2
# A kernel's line holds two paths of at most PATH_MAX (4,096 bytes, four times that escaped) and a page of options;
# a longer one did not come from a kernel, and is left out before it is split.
MAX_LINE_CHARS = 64 * 1024


def is_network(fstype: str) -> bool:
    return fstype in NETWORK_FSTYPES or fstype == "fuse" or fstype.startswith("fuse.")


@dataclass(frozen=True)
class _MountLine:
    fields: list[str]  # as the kernel wrote them (octal escapes kept)
    sep: int  # index of the "-" separator
    mountpoint: str  # unescaped

    @property
    def majmin(self) -> str:
        return self.fields[2]

    @property
    def fstype(self) -> str:
        return self.fields[self.sep + 1]

    @property
    def source(self) -> str:
        return unescape_field(self.fields[self.sep + 2])

    @property
    def is_block(self) -> bool:
        """On a block device: its device number has a major (tmpfs, NFS, FUSE, overlay have 0), or it is a file
        system that shows an anonymous 0:N (fs/super.c set_anon_super) with its device as the source."""
        if not self.majmin.startswith("0:"):
            return True
        return self.fstype in _ANON_DEV_FSTYPES and self.source.startswith("/dev/")


def _parse(text: str) -> tuple[list[_MountLine], int]:
    """proc(5) mountinfo lines: 'ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER';
    (the well-formed ones, how many lines there were)."""
    lines: list[_MountLine] = []
    total = 0
    for line in text.split("\n"):
        if not line.strip():
            continue
        total += 1
        if len(line) > MAX_LINE_CHARS:
            continue
        fields = line.split(" ")
        try:
            sep = fields.index("-", 6)
        except ValueError:
            continue
        if sep + 2 >= len(fields) or not _MAJMIN_RE.match(fields[2]) or not fields[4].startswith("/"):
            continue
        lines.append(_MountLine(fields, sep, unescape_field(fields[4])))
    return lines, total


class NameMasker:
    """Masks one capture's mount table, swap list and backing files (see the module's docstring).

    Feed every loop/backing_file through backing_file() first: the mount lines they stand on are kept, then
    mountinfo() gives the table. `counts` says what was kept, left out and masked, for the capture's summary."""

    def __init__(self, tag: Callable[[bytes], str], mountinfo: bytes | None, block_names: set[str]):
        self._tag = tag
        self._text = (mountinfo or b"").decode("utf-8", "surrogateescape")
        self._lines, total = _parse(self._text)
        self._mountpoints = {line.mountpoint for line in self._lines}
        self._block_names = block_names
        self._holding: set[str] = set()  # mount points a backing file stands on
        self._tags: dict[str, str] = {}
        self.counts: Counter[str] = Counter(mount_lines=total)

    def tag(self, text: str) -> str:
        """The keyed mask of a name, computed once per name (a table repeats its mount point components)."""
        found = self._tags.get(text)
        if found is None:
            found = self._tags[text] = self._tag(text.encode("utf-8", "surrogateescape"))
        return found

    def path(self, path: str) -> str:
        """A mount point with every component that is not a common system directory masked."""
        parts = [p if p in _SYSTEM_DIRS else self.tag(p) for p in path.split("/") if p]
        return "/" + "/".join(parts)

    def _file(self, path: str, keep_mount: bool) -> str:
        """A file's path: its file system's mount point (masked as in the table), then one mask for the rest.
        With keep_mount, that file system's mount line is kept in the table."""
        best = None
        candidate = path.rstrip("/")
        while best is None:  # the longest mount point above it: one look-up per level, whatever the table's size
            if (candidate or "/") in self._mountpoints:
                best = candidate or "/"
            elif not candidate:
                break
            candidate = candidate.rpartition("/")[0]
        if best is not None and keep_mount:
            self._holding.add(best)
        return (self.path(best).rstrip("/") if best else "") + "/" + self.tag(path)

    def backing_file(self, raw: bytes) -> bytes:
        """loop/backing_file: a block device (/dev/NAME of a device in the capture) as it is, a file masked."""
        text = raw.decode("utf-8", "surrogateescape").rstrip("\n")
        if not text:
            return raw
        path = text.removesuffix(DELETED_SUFFIX)
        name = path.removeprefix("/dev/")
        if path.startswith("/dev/") and "/" not in name and name in self._block_names:
            return raw
        self.counts["backing_files"] += 1
        masked = self._file(path, keep_mount=True) + (DELETED_SUFFIX if text.endswith(DELETED_SUFFIX) else "")
        return (masked + "\n").encode("utf-8", "surrogateescape")

    def swaps(self, raw: bytes) -> bytes:
        """/proc/swaps: a partition's device name as it is, a swap file's path masked (the readers look up
        /dev/NAME only)."""
        out: list[str] = []
        size = 0
        for number, line in enumerate(raw.decode("utf-8", "surrogateescape").split("\n")):
            fields = line.split()
            if number and fields and not (fields[0].startswith("/dev/") and fields[1:2] == ["partition"]):
                self.counts["swap_files"] += 1
                rest = line[line.index(fields[0]) + len(fields[0]) :]
                line = self._file(unescape_field(fields[0]), keep_mount=False) + rest
            size += len(line) + 1
            if size > MAX_TABLE_BYTES:
                break
            out.append(line)
        return "\n".join(out).encode("utf-8", "surrogateescape")

    def mountinfo(self) -> bytes:
        """The lines of block devices and of the file systems under backing files, masked."""
        out: list[str] = []
        size = 0
        for line in self._lines:
            if line.is_block or line.mountpoint in self._holding:
                before = self.counts.copy()
                masked = self._masked(line, block=line.is_block)
                size += len(masked) + 1
                if size > MAX_TABLE_BYTES:  # masks are longer than short names: the table stays readable
                    self.counts = before
                    break
                out.append(masked)
            elif is_network(line.fstype):
                self.counts["network_mounts_left_out"] += 1
        self.counts["mount_lines_kept"] = len(out)
        return "".join(line + "\n" for line in out).encode("utf-8", "surrogateescape")

    def _masked(self, line: _MountLine, block: bool) -> str:
        fields, sep = line.fields, line.sep
        root = fields[3] if fields[3] == "/" else "/" + self.tag(unescape_field(fields[3]))
        self.counts["bind_roots"] += root != fields[3]
        mountpoint = self.path(line.mountpoint)
        self.counts["mount_points"] += mountpoint != line.mountpoint
        flags = [f for f in fields[5].split(",") if _MOUNT_FLAG_RE.match(f)] or ["rw"]
        optional = [f for f in fields[6:sep] if _OPTIONAL_RE.match(f)]
        fstype = line.fstype if _FSTYPE_RE.match(line.fstype) else self.tag(line.fstype)
        source_field = fields[sep + 2]
        device = block and (line.source.startswith("/dev/") or _ID_SOURCE_RE.match(line.source))
        if device or source_field == line.fstype:  # "tmpfs tmpfs": the type again, nothing else
            source = source_field
        else:
            source = self.tag(line.source)
            self.counts["mount_sources"] += 1
        given = fields[sep + 3].split(",") if sep + 3 < len(fields) else []
        options = [o for o in given if block and _plain_option(o)] or [o for o in given[:1] if o in ("ro", "rw")]
        self.counts["mount_options"] += len(given) - len(options)
        return " ".join(
            [*fields[:3], root, mountpoint, ",".join(flags), *optional, "-", fstype, source, ",".join(options)]
        )


def _plain_option(option: str) -> bool:
    key, eq, value = option.partition("=")
    if not eq:
        return bool(_OPTION_FLAG_RE.match(option))
    return key in _PLAIN_OPTION_KEYS and bool(_OPTION_VALUE_RE.match(value))
