"""`disksleuth capture`: bundle the sysfs files our readers use, symlinks kept, into a tar.gz.

Unpacked, the bundle is a root that every reader accepts through `--sysfs-root`. sysfs files
report a size of 4096 whatever they hold, so each file is read and added with its real length.

Unless --keep-serials, nothing that identifies one drive leaves the machine: every attribute that
carries a serial number, WWN or namespace ID is masked wherever it sits, and every serial found is
also replaced inside all other contents (an NVMe subsysnqn embeds the serial). Device names that carry
an id (by-id, by-uuid, UUID=, labels: _DISK_NAME_RE) are masked whole in every content, so a mount
source is masked whether or not its drive is in the capture. Masks are keyed with a random
per-capture secret, so a short serial cannot be recovered by hashing candidates, and the same serial
gets the same mask within a bundle.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
import lzma
import os
import platform
import posixpath
import re
import secrets
import shutil
import signal
import stat
import tarfile
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any

from disksleuth import __version__
from disksleuth.errors import TERMINATING_SIGNALS, ParseError, Terminated, UsageError
from disksleuth.probe.capture_names import NameMasker
from disksleuth.probe.smbios import MAX_TABLE_BYTES, mask_identifiers
from disksleuth.probe.sysfs import (
    BDF_RE,
    MAX_PROC_BYTES,
    Sysfs,
    block_cap_note,
    block_device_names,
)

# A capture of a large server holds a few thousand entries and a few MB; these caps leave ample room
# and stop an archive bomb (a 1 MB .tar.gz can hold a 1 GiB file of zeros) before it fills $TMPDIR.
MAX_CAPTURE_ENTRIES = 50_000
MAX_CAPTURE_BYTES = 64 * 1024 * 1024
# sysfs is never deeper than this: the deepest real paths (USB behind hubs behind PCIe switches, a partition's
# holders) are about 25 names. A bundle 1,100 directories deep ended in a RecursionError in shutil.rmtree, and left
# its extraction folder behind; such a bundle is refused from its member names, before anything is unpacked.
MAX_CAPTURE_DEPTH = 64
# What `capture` writes stays within what a reader accepts: sysfs gets the entries and bytes the two proc files
# (MAX_PROC_BYTES each), the SMBIOS table and the summary leave over, and masks at most 2.5 times longer than the
# serials they replace (6 characters and more, to "MASKED-" and 8 hex digits).
_SYSFS_ENTRY_BUDGET = MAX_CAPTURE_ENTRIES - 64
_SYSFS_BYTE_BUDGET = 12 * 1024 * 1024

_SMBIOS_TABLE = os.path.join("sys", "firmware", "dmi", "tables", "DMI")
# What the capture document counts as masked (capture_names.NameMasker.counts).
_MASKED_KEYS = ("backing_files", "swap_files", "mount_sources", "mount_points", "bind_roots", "mount_options")
_MOUNTINFO = "/proc/self/mountinfo"
_SWAPS = "/proc/swaps"

# Attributes the readers (and a human debugging them) look at.
_DEVICE_ATTRS = (
    "vendor",
    "device",
    "class",
    "subsystem_vendor",
    "subsystem_device",
    "revision",
    "current_link_speed",
    "current_link_width",
    "max_link_speed",
    "max_link_width",
    "speed",
    "version",
    "idVendor",
    "idProduct",
    "manufacturer",
    "product",
    "serial",
    "bcdDevice",
    "maxchild",
    "removable",
    "model",
    "firmware_rev",
    "rev",
    "type",
    "name",
    "state",
    "transport",
    "cntlid",
    "subsysnqn",
    "queue_count",
    "numa_node",
    "vpd_pg80",
    "wwid",
    "fwrev",
    "hwrev",
    "date",
    "manfid",
    "oemid",
    "ssr",
    "scr",
    "csd",  # the card's capacity and version (issue 39); cid is masked whole (SERIAL_BEARING)
    "life_time",
    "pre_eol_info",
    "cmdq_en",
    "preferred_erase_size",
    "driver",
    "subsystem",
    "device_type",
    # PCIe AER counters (probe/aer.py): a capture reads back with each hop's error counts (issue 36).
    "aer_dev_correctable",
    "aer_dev_nonfatal",
    "aer_dev_fatal",
    "aer_rootport_total_err_cor",
    "aer_rootport_total_err_nonfatal",
    "aer_rootport_total_err_fatal",
)
_BLOCK_ATTRS = (
    "size",
    "ro",
    "removable",
    "dev",
    "range",
    "ext_range",
    "hidden",
    "serial",
    "device",
    "queue/logical_block_size",
    "queue/physical_block_size",
    "queue/rotational",
    "queue/scheduler",
    "queue/write_cache",
    "queue/hw_sector_size",
    "queue/max_sectors_kb",
    "queue/nr_requests",
    "loop/backing_file",
    "loop/offset",
    "loop/dio",
    "dm/name",
    "dm/uuid",
    # What probe.stack reads of an array: a capture of a degraded md array once read back as a healthy one.
    "queue/minimum_io_size",
    "queue/optimal_io_size",
    "md/level",
    "md/raid_disks",
    "md/chunk_size",
    "md/degraded",
    "md/array_state",
    "md/sync_action",
    "md/sync_completed",
    "comp_algorithm",
    "disksize",
)
_PART_ATTRS = ("size", "start", "partition", "dev", "ro")
_ATA_LINK_ATTRS = ("sata_spd", "sata_spd_limit", "hw_sata_spd_limit")
_HWMON_RE = re.compile(r"^temp\d+_(input|label|max|min|crit|alarm)$")
# Attributes that carry a drive's identity, by file name wherever they sit (device/, the block
# device, an nvme-subsystem, a USB device). Documentation/ABI/testing/sysfs-block (wwid, uuid, nguid,
# eui), drivers/nvme/host/sysfs.c (serial, subsysnqn embeds the serial after the vendor ids, wwid
# falls back to "nvme.VID-<serial hex>-<model hex>-NSID", hostnqn and hostid name the host),
# drivers/scsi/scsi_sysfs.c (vpd_pg80 = Unit Serial Number, vpd_pg83 = Device Identification with
# the NAA WWN and often a T10 "vendor model serial" designator, wwid), drivers/ata/libata-sata.c and
# SAS transport (sas_address, unique_id), drivers/mmc/core/bus.c (cid holds the card's serial),
# drivers/usb/core/sysfs.c (serial), dm uuid (LVM/LUKS volume ids).
SERIAL_BEARING = frozenset(
    {
        "serial",
        "serial_number",
        "vpd_pg80",
        "vpd_pg83",
        "wwid",
        "wwn",
        "eui",
        "nguid",
        "uuid",
        "subsysnqn",
        "hostnqn",
        "hostid",
        "cid",
        "sas_address",
        "unique_id",
    }
)
# Names that carry a drive's or a volume's identity, wherever a mount source or swap names a device,
# whether or not that drive is in the capture. udev's persistent names (systemd
# rules.d/60-persistent-storage.rules): by-id/<bus>-<model>_<serial>[-partN], wwn-0x<wwn>,
# nvme-eui.<eui>, dm-uuid-..., by-uuid/<fs uuid>, by-partuuid/<partition uuid>, by-label and by-partlabel;
# the same ids as mount(8) and fstab spell them (UUID=, PARTUUID=, LABEL=, PARTLABEL=); and
# systemd-cryptsetup's default mapping name, luks-<LUKS uuid> (also in a dm device's dm/name).
_DISK_NAME_RE = re.compile(rb"(/dev/disk/by-(?:id|uuid|partuuid|label|partlabel)/)([^\s/]+)")
_BY_ID_PART_RE = re.compile(rb"-part\d+\Z")
_ID_KEY_RE = re.compile(rb"(?<![A-Za-z_])((?:PART)?(?:UUID|LABEL)=)([^\s,]+)")
_LUKS_NAME_RE = re.compile(rb"(luks-)([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})")
# Shorter "serials" ("0", "N/A", "1234") are placeholders; replacing them inside other contents
# would garble unrelated values.
_MIN_EMBEDDED_SERIAL = 6


class _Masker:
    def __init__(self) -> None:
        self.key = secrets.token_bytes(16)
        self.serials: set[str] = set()

    def tag(self, value: bytes) -> str:
        return "MASKED-" + hmac.new(self.key, value.strip(b" \x00\n"), hashlib.sha256).hexdigest()[:8]

    def learn(self, name: str, raw: bytes) -> None:
        """Remember the serial a serial-bearing file holds, to find it embedded elsewhere."""
        if name == "vpd_pg80":  # SPC-4 7.8.19: 4-byte header, then the ASCII serial
            raw = raw[4:]
        text = raw.decode("latin-1").strip(" \x00\n\t")
        if name in ("serial", "serial_number", "vpd_pg80"):
            if len(text) >= _MIN_EMBEDDED_SERIAL:
                self.serials.add(text)
        elif name in ("wwid", "wwn", "eui", "nguid", "uuid"):
            # "naa.5002538e40a1b2c3", "eui.0025388b71b2c3d4", "uuid.…", "0x5002538e…" (wwn): the id
            # reappears in /dev/disk/by-id names ("wwn-0x5002538e…") in mountinfo and swaps. A t10.
            # or nvme. wwid is built from vendor, model and serial; the serial is learnt from its own file.
            kind, dot, ident = text.partition(".")
            if not dot:
                ident = kind
            elif kind not in ("naa", "eui", "uuid"):
                return
            ident = ident.removeprefix("0x")
            if len(ident) >= _MIN_EMBEDDED_SERIAL and " " not in ident:
                self.serials.update({ident, ident.lower(), ident.upper()})

    def whole(self, name: str, raw: bytes) -> bytes:
        """A serial-bearing attribute: its value replaced, vpd_pg80's binary header kept."""
        if not raw.strip(b" \x00\n"):
            return raw
        if name == "vpd_pg80" and len(raw) > 4:
            body = self.tag(raw[4:]).encode()
            return raw[:3] + bytes([len(body)]) + body
        return (self.tag(raw) + "\n").encode()

    def same_length(self, value: bytes) -> bytes:
        """A keyed mask for a field whose length must stay (SMBIOS strings and UUIDs)."""
        digest = hmac.new(self.key, value, hashlib.sha256)
        return ("MASKED-" + digest.hexdigest()).encode() if len(value) >= 15 else digest.hexdigest().encode()

    def variants(self) -> list[tuple[bytes, bytes]]:
        """(found, replacement) pairs: each serial as is, with by-id's underscores, and as the hex
        the NVMe wwid fallback prints; longest first so a serial inside another is not split."""
        pairs: dict[bytes, bytes] = {}
        for serial in self.serials:
            raw = serial.encode("latin-1")
            mask = self.tag(raw).encode()
            for form in (raw, raw.replace(b" ", b"_"), raw.hex().encode(), raw.hex().upper().encode()):
                pairs[form] = mask
        return sorted(pairs.items(), key=lambda kv: -len(kv[0]))

    def device_names(self, raw: bytes) -> bytes:
        """Every identity-bearing device name (_DISK_NAME_RE and friends) with its id masked: a by-id
        name keeps its bus ("nvme-", "wwn-") and partition ("-part1"), so one drive's partitions share
        one mask, and the same id gets the same mask in every spelling (by-uuid/X, UUID=X)."""

        def disk_name(m: re.Match[bytes]) -> bytes:
            name = m.group(2)
            if m.group(1).endswith(b"/by-id/"):
                part = _BY_ID_PART_RE.search(name)
                ident = name[: part.start()] if part else name
                bus, dash, _ = ident.partition(b"-")
                masked = self.tag(ident).encode()
                return m.group(1) + (bus + b"-" if dash else b"") + masked + (part.group(0) if part else b"")
            return m.group(1) + self.tag(name).encode()

        raw = _DISK_NAME_RE.sub(disk_name, raw)
        raw = _ID_KEY_RE.sub(lambda m: m.group(1) + self.tag(m.group(2)).encode(), raw)
        return _LUKS_NAME_RE.sub(lambda m: m.group(1) + self.tag(m.group(2)).encode(), raw)

    def embedded(self, raw: bytes, pairs: list[tuple[bytes, bytes]]) -> bytes:
        for found, mask in pairs:
            raw = raw.replace(found, mask)
        return raw


class _Bundle:
    def __init__(self, fs: Sysfs, keep_serials: bool, keep_names: bool = False):
        self.fs = fs
        self.keep_serials = keep_serials
        self.entries: dict[str, tarfile.TarInfo] = {}
        self.data: dict[str, bytes] = {}
        self.data_bytes = 0
        self.full = False  # the sysfs budget is spent: the rest of sysfs is left out (the proc files still go in)
        self.masker = _Masker()
        self.binary: set[str] = set()  # masked field by field (the SMBIOS table), never by text substitution
        self.device_dirs: set[str] = set()  # device directories already added, with their ancestors
        self.block_devices: list[str] = []  # those in the bundle
        self.block_devices_total = 0  # under /sys/block
        # None with --keep-names: mount table, swaps and backing files as they are.
        self.names: NameMasker | None = None
        if not keep_names:
            mountinfo = fs.read_bytes(fs.p(_MOUNTINFO), MAX_PROC_BYTES)
            block_names = set(fs.listdir(fs.p("/sys/class/block")))
            self.names = NameMasker(self.masker.tag, mountinfo, block_names)

    def _arcname(self, host_path: str) -> str:
        prefix = self.fs.root.rstrip("/") + "/"
        if host_path.startswith(prefix) and "/." not in host_path:  # as fs.p() and fs.realpath() give them
            return host_path[len(prefix) :]
        return os.path.relpath(host_path, self.fs.root)

    def _add_dirs(self, arcname: str) -> None:
        parent = os.path.dirname(arcname)
        while parent and parent not in self.entries:
            info = tarfile.TarInfo(parent)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            self.entries[parent] = info
            parent = os.path.dirname(parent)

    def add(self, host_path: str, always: bool = False) -> None:
        """Add one file or symlink (not recursing); missing or unreadable ones are skipped, and so is
        everything that is, or is reached through, a link out of the root (noted in `refused`), deeper than
        a bundle may be, or past the sysfs budget (unless `always`: the proc files and the SMBIOS table)."""
        arcname = self._arcname(host_path)
        if arcname in self.entries or arcname.startswith(".."):
            return
        if not always and (len(self.entries) >= _SYSFS_ENTRY_BUDGET or self.data_bytes >= _SYSFS_BYTE_BUDGET):
            self.full = True
            return
        if arcname.count(os.sep) >= MAX_CAPTURE_DEPTH:
            return
        # One look-up whatever it is (not islink, isfile and isdir in turn): most attributes asked for are missing.
        st = self.fs.stat(host_path, follow_last=False)
        if st is None:
            return
        if stat.S_ISLNK(st.st_mode):
            linkname = self._linkname(host_path, arcname)
            if linkname is None:
                return
            info = tarfile.TarInfo(arcname)
            info.type = tarfile.SYMTYPE
            info.linkname = linkname
        elif stat.S_ISREG(st.st_mode):
            limit = MAX_PROC_BYTES if arcname.startswith("proc" + os.sep) else None
            limit = MAX_TABLE_BYTES if arcname == _SMBIOS_TABLE else limit
            raw = self.fs.read_bytes(host_path, limit) if limit else self.fs.read_bytes(host_path)
            if raw is None:
                return
            name = os.path.basename(host_path)
            if not self.keep_serials and name in SERIAL_BEARING:
                self.masker.learn(name, raw)
                raw = self.masker.whole(name, raw)
            if arcname == _SMBIOS_TABLE:
                if not self.keep_serials:
                    raw = mask_identifiers(raw, self.masker.same_length)
                self.binary.add(arcname)
            if self.names is not None:
                raw = self._mask_names(arcname, raw)
            info = tarfile.TarInfo(arcname)
            info.size = len(raw)
            info.mode = 0o444
            self.data[arcname] = raw
            self.data_bytes += len(raw)
        elif stat.S_ISDIR(st.st_mode):
            info = tarfile.TarInfo(arcname)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
        else:
            return
        info.mtime = int(time.time())
        self._add_dirs(arcname)
        self.entries[arcname] = info

    def contents(self) -> dict[str, Any]:
        """What the bundle holds and what was masked or left out, for `capture`'s summary and its --json."""
        doc: dict[str, Any] = {
            "entries": len(self.entries),
            "serials_masked": not self.keep_serials,
            "names_masked": self.names is not None,
            "block_devices": {"in_bundle": len(self.block_devices), "total": self.block_devices_total},
            # The sysfs budget was spent (MAX_CAPTURE_ENTRIES, MAX_CAPTURE_BYTES): the rest of sysfs is not in it.
            "sysfs_cut": self.full,
        }
        held, total = len(self.block_devices), self.block_devices_total
        if held < total:
            doc["block_devices"]["note"] = (
                f"{total:,} block devices, the first {held:,} in the bundle: it holds at most "
                f"{MAX_CAPTURE_ENTRIES:,} entries"
                if self.full
                else block_cap_note(total, held)
            )
        if self.names is not None:
            counts = self.names.counts
            doc["mount_lines"] = {"kept": counts["mount_lines_kept"], "total": counts["mount_lines"]}
            doc["network_mounts_left_out"] = counts["network_mounts_left_out"]
            doc["masked"] = {key: counts[key] for key in _MASKED_KEYS}
        return doc

    def _mask_names(self, arcname: str, raw: bytes) -> bytes:
        assert self.names is not None
        if arcname == _MOUNTINFO.lstrip("/"):
            return self.names.mountinfo()  # every backing file was read before: their mounts are kept
        if arcname == _SWAPS.lstrip("/"):
            return self.names.swaps(raw)
        if arcname.endswith(os.sep + os.path.join("loop", "backing_file")):
            return self.names.backing_file(raw)
        return raw

    def _linkname(self, host_path: str, arcname: str) -> str | None:
        """The target to store for a link, relative as the kernel writes them; None for a link that
        leads out of the root (an unpacked bundle could not hold it: _name_refusal)."""
        target = self.fs.readlink(host_path)
        if target is None or self.fs.leaves_root(host_path):
            return None
        if target.startswith("/"):  # a crafted tree's absolute link means the same path inside the root
            target = posixpath.relpath(posixpath.normpath(target), "/" + posixpath.dirname(arcname))
        # Textually too: `a/../../..` through a link `a` stays inside, yet a bundle may hold no such name.
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(arcname), target))
        if joined == ".." or joined.startswith("../"):
            self.fs.refused.append(f"/{arcname} -> {target}")
            return None
        return target

    def add_attrs(self, directory: str, names: Iterable[str]) -> None:
        """The attributes of `names` that the directory has (one listing, rather than a look-up of each name)."""
        present = set(self.fs.listdir(directory))
        for name in names:
            if name.partition("/")[0] in present:
                self.add(os.path.join(directory, name))

    def add_links_in(self, directory: str) -> None:
        self.add(directory)
        for entry in self.fs.listdir(directory):
            self.add(os.path.join(directory, entry))

    def refused_links(self, most: int = 100) -> list[str]:
        refused = sorted(set(self.fs.refused))[:most]
        if self.keep_serials:
            return refused
        pairs = self.masker.variants()
        masked = (self.masker.embedded(r.encode("utf-8", "surrogateescape"), pairs) for r in refused)
        return [m.decode("utf-8", "replace") for m in masked]

    def mask_embedded(self) -> None:
        """Replace every serial learnt from serial-bearing files inside all contents, link targets
        and names (a subsysnqn, a wwid fallback, a /dev/disk/by-id mount source)."""
        if self.keep_serials:
            return
        pairs = self.masker.variants()
        entries: dict[str, tarfile.TarInfo] = {}
        data: dict[str, bytes] = {}
        for arcname, info in self.entries.items():
            new_name = self.masker.embedded(arcname.encode("utf-8", "surrogateescape"), pairs).decode(
                "utf-8", "surrogateescape"
            )
            info.name = new_name
            if info.issym():
                info.linkname = self.masker.embedded(
                    info.linkname.encode("utf-8", "surrogateescape"), pairs
                ).decode("utf-8", "surrogateescape")
            if arcname in self.binary:
                data[new_name] = self.data[arcname]
            elif arcname in self.data:
                # Whole device names first, so a by-id name is masked the same whether its drive is here.
                raw = self.masker.device_names(self.data[arcname])
                data[new_name] = self.masker.embedded(raw, pairs)
                info.size = len(data[new_name])
            entries[new_name] = info
        self.entries, self.data = entries, data

    def write(self, out_path: str, extra: dict[str, bytes]) -> None:
        from disksleuth.outfile import private_output

        self.mask_embedded()
        with private_output(out_path) as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
            for name, raw in extra.items():
                info = tarfile.TarInfo(name)
                info.size = len(raw)
                info.mtime = int(time.time())
                tar.addfile(info, io.BytesIO(raw))
            for arcname in sorted(self.entries):
                info = self.entries[arcname]
                payload = self.data.get(arcname)
                tar.addfile(info, io.BytesIO(payload) if payload is not None else None)


def _add_device_tree(bundle: _Bundle, fs: Sysfs, start: str) -> None:
    """Attributes of `start` and every ancestor up to /sys/devices, with bus-specific extras."""
    top = fs.p("/sys/devices")
    cur = start
    # Once per directory: its ancestors were added with it. Climbing again for each of 49,990 loop devices under
    # /sys/devices/virtual/block listed that directory 49,990 times (quadratic: 80 s for 5,000 devices).
    while cur.startswith(top) and cur != top and cur not in bundle.device_dirs:
        bundle.device_dirs.add(cur)
        bundle.add_attrs(cur, _DEVICE_ATTRS)
        base = os.path.basename(cur)
        for entry in fs.listdir(cur):
            sub = os.path.join(cur, entry)
            if re.match(r"^ata\d+$", base) and entry.startswith("link"):
                inner = os.path.join(sub, "ata_link", entry)
                bundle.add_attrs(inner, _ATA_LINK_ATTRS)
            elif re.match(r"^usb\d+$", entry):  # sibling root hubs of a USB host controller
                bundle.add_attrs(sub, ("speed", "version", "idVendor", "idProduct"))
            elif entry.startswith("hwmon") and fs.isdir(sub):
                bundle.add(os.path.join(sub, "name"))
                bundle.add_attrs(sub, [f for f in fs.listdir(sub) if _HWMON_RE.match(f)])
            elif entry == "hwmon" and fs.isdir(sub):  # class dir layout: .../hwmon/hwmon3
                for hw in fs.listdir(sub):
                    hw_dir = os.path.join(sub, hw)
                    bundle.add(os.path.join(hw_dir, "name"))
                    bundle.add_attrs(hw_dir, [f for f in fs.listdir(hw_dir) if _HWMON_RE.match(f)])
        cur = os.path.dirname(cur)


def _add_class_links(bundle: _Bundle, fs: Sysfs, name: str, dev: str | None) -> None:
    bundle.add(fs.p("/sys/class/block", name))
    if dev:
        bundle.add(fs.p("/sys/dev/block", dev))


def _add_btrfs(bundle: _Bundle, fs: Sysfs) -> None:
    """A mounted btrfs names its member devices only under /sys/fs/btrfs (probe.stack.read_btrfs, probe.claim):
    without it a capture's btrfs members read back as members of nothing."""
    base = fs.p("/sys/fs/btrfs")
    for fsid in fs.listdir(base):
        fs_dir = os.path.join(base, fsid)
        if not fs.isdir(os.path.join(fs_dir, "devices")):
            continue
        bundle.add_attrs(fs_dir, ("label",))
        bundle.add_links_in(os.path.join(fs_dir, "devices"))
        for devid in fs.listdir(os.path.join(fs_dir, "devinfo")):
            bundle.add_attrs(os.path.join(fs_dir, "devinfo", devid), ("missing", "error_stats"))
        data = os.path.join(fs_dir, "allocation", "data")
        for profile in fs.listdir(data):  # the data profile is the name of a directory (raid1, single, ...)
            if fs.isdir(os.path.join(data, profile)):
                bundle.add(os.path.join(data, profile))


def collect(sysfs_root: str = "/", keep_serials: bool = False, keep_names: bool = False) -> _Bundle:
    fs = Sysfs(sysfs_root)
    bundle = _Bundle(fs, keep_serials, keep_names)
    block = fs.p("/sys/block")
    names, bundle.block_devices_total = block_device_names(fs)
    for name in names:
        if bundle.full:
            break
        bundle.block_devices.append(name)
        link = os.path.join(block, name)
        bundle.add(link)
        block_dir = fs.realpath(link)
        if not fs.isdir(block_dir):
            continue
        bundle.add_attrs(block_dir, _BLOCK_ATTRS)
        _add_class_links(bundle, fs, name, fs.read(os.path.join(block_dir, "dev")))
        bundle.add_links_in(os.path.join(block_dir, "holders"))
        bundle.add_links_in(os.path.join(block_dir, "slaves"))
        for entry in fs.listdir(os.path.join(block_dir, "md")):  # each md member's state, slot and errors
            if entry.startswith("dev-"):
                bundle.add_attrs(os.path.join(block_dir, "md", entry), ("state", "slot", "errors"))
        for part in fs.listdir(block_dir):
            part_dir = os.path.join(block_dir, part)
            if fs.isfile(os.path.join(part_dir, "partition")):
                bundle.add_attrs(part_dir, _PART_ATTRS)
                _add_class_links(bundle, fs, part, fs.read(os.path.join(part_dir, "dev")))
                bundle.add_links_in(os.path.join(part_dir, "holders"))
        _add_device_tree(bundle, fs, os.path.dirname(block_dir))
        if "nvme-subsystem" in fs.rel(block_dir).split("/"):  # native multipath head
            subsys = os.path.dirname(block_dir)
            bundle.add_attrs(subsys, ("model", "serial", "firmware_rev", "subsysnqn", "iopolicy"))
            for entry in fs.listdir(subsys):
                if re.match(r"^nvme\d+$", entry):
                    bundle.add(os.path.join(subsys, entry))
                    _add_device_tree(bundle, fs, fs.realpath(os.path.join(subsys, entry)))
    pci = fs.p("/sys/bus/pci/devices")
    for bdf in fs.listdir(pci):
        if bundle.full:
            break
        link = os.path.join(pci, bdf)
        bundle.add(link)
        target = fs.realpath(link)
        if fs.isdir(target) and BDF_RE.match(os.path.basename(target)):
            _add_device_tree(bundle, fs, target)
    _add_btrfs(bundle, fs)
    debug = fs.p("/sys/kernel/debug")
    for entry in fs.listdir(debug):
        if re.match(r"^mmc\d+$", entry):
            bundle.add(os.path.join(debug, entry, "ios"))
            # The host's modes and an eMMC's EXT_CSD (issue 39): the host's limit told from the card's, and the
            # wear estimates. EXT_CSD holds no serial (that is the CID's).
            for name in ("caps", "caps2"):
                bundle.add(os.path.join(debug, entry, name))
            for card in fs.listdir(os.path.join(debug, entry)):
                if re.match(r"^mmc\d+:[0-9a-fA-F]{4}$", card):
                    bundle.add(os.path.join(debug, entry, card, "ext_csd"))
    for proc_file in (_MOUNTINFO, _SWAPS):
        bundle.add(fs.p(proc_file), always=True)
    # The SMBIOS table names the slots (probe.slots); its serials, asset tags and UUID are masked in add().
    for name in ("smbios_entry_point", "DMI"):
        bundle.add(fs.p("/sys/firmware/dmi/tables", name), always=True)
    return bundle


def write_capture(
    out_path: str,
    sysfs_root: str = "/",
    keep_serials: bool = False,
    versions: dict[str, str | None] | None = None,
    keep_names: bool = False,
) -> dict[str, Any]:
    """Write the bundle; returns what it holds and what was masked (the `capture` document's keys)."""
    bundle = collect(sysfs_root, keep_serials, keep_names)
    contents = bundle.contents()
    meta = {
        "schema": "disksleuth/1",
        "kind": "capture",
        "disksleuth_version": __version__,
        "captured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "serials_masked": not keep_serials,
        "tools": versions or {},
        # Links of a crafted tree that lead out of it: neither they nor anything through them was read.
        "links_out_of_root_not_followed": bundle.refused_links(),
        "contents": contents,
    }
    try:
        bundle.write(out_path, {"disksleuth-capture.json": json.dumps(meta, indent=2).encode()})
    except OSError as exc:
        raise UsageError(f"cannot write {out_path}: {exc.strerror}") from exc
    return contents


_NOT_A_CAPTURE = "expected a .tar.gz written by `disksleuth capture`, or a directory"


def open_root(path: str, register_cleanup: Callable[[str], None] | None = None) -> str:
    """A --sysfs-root argument: a directory as is, or a capture .tar.gz unpacked to a temp dir.

    The temp dir is removed on every way out of here but success (a refused archive, an error,
    Ctrl-C); on success `register_cleanup` takes it over."""
    if os.path.isdir(path):
        _require_sysfs_tree(path, path)
        return path
    if not os.path.isfile(path):
        raise UsageError(f"--sysfs-root {path}: no such directory or capture file")
    previous = _terminate_as_exception()
    tmp = None
    try:
        tmp = tempfile.mkdtemp(prefix="disksleuth-capture-")
        _extract_capture(path, tmp)
        _require_sysfs_tree(tmp, path)
    except BaseException:
        if tmp is not None:
            remove_tree(tmp)
        raise
    finally:
        _restore(previous)
    if register_cleanup:
        register_cleanup(tmp)
    return tmp


@contextlib.contextmanager
def capture_root(path: str) -> Iterator[str]:
    """A --sysfs-root for as long as the context lasts: a directory as is, or a capture unpacked and removed at
    the end, whichever way it comes (an error, Ctrl-C, and SIGTERM or SIGHUP, which unwind like Ctrl-C
    meanwhile instead of killing the process with the folder left in $TMPDIR)."""
    if os.path.isdir(path):
        yield open_root(path)
        return
    previous = _terminate_as_exception()
    unpacked: list[str] = []
    try:
        yield open_root(path, unpacked.append)
    finally:
        try:
            for tmp in unpacked:
                remove_tree(tmp)
        finally:
            _restore(previous)


def _restore(previous: dict[int, Callable[[int, FrameType | None], Any] | int]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def remove_tree(top: str) -> None:
    """`rm -rf top`, for an unpacked capture: without recursion (shutil.rmtree recursed once per level and a bundle
    1,100 levels deep ended in a RecursionError, the folder left behind), with two descriptors at most (one per
    level would run out at 1,024), never following a link, and with Ctrl-C, SIGTERM and SIGHUP held off until it
    is done. Best effort: what cannot be removed is left, never raised."""
    blocked = {signal.SIGINT, *TERMINATING_SIGNALS}
    held = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        with contextlib.suppress(OSError):
            _remove_tree(top)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove_tree(top: str) -> None:
    try:
        fd = os.open(top, _DIR_FLAGS)
    except FileNotFoundError:
        return
    except OSError:  # a file or a link where the folder was: removed as it is
        os.unlink(top)
        return
    # One level per item, from the top down: (the directory's name in its parent, its identity, what is left in it).
    # Climbing back with ".." is checked against the identity, so a directory moved meanwhile stops the removal.
    st = os.fstat(fd)
    levels: list[tuple[str, tuple[int, int], list[tuple[int, str, bool]]]] = [
        ("", (st.st_dev, st.st_ino), _entries(fd))
    ]
    try:
        while levels:
            name, identity, left = levels[-1]
            if left:
                _, entry, is_dir = left.pop()
                with contextlib.suppress(OSError):  # gone meanwhile, or a directory with something in it
                    (os.rmdir if is_dir else os.unlink)(entry, dir_fd=fd)
                    continue
                try:
                    child = os.open(entry, _DIR_FLAGS, dir_fd=fd)
                except OSError:  # gone, or not to be entered: the rest is still removed
                    continue
                os.close(fd)
                fd = child
                st = os.fstat(fd)
                levels.append((entry, (st.st_dev, st.st_ino), _entries(fd)))
                continue
            levels.pop()
            if not levels:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != levels[-1][1]:
                return
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(top)


def _entries(fd: int) -> list[tuple[int, str, bool]]:
    """A directory's entries as (inode, name, is a directory), to be taken from the end: lowest inode first, as
    rm(1) does for large directories (50,000 entries went in 3 s so, 18 s in the order readdir gives them)."""
    with os.scandir(fd) as it:
        found = [(e.inode(), e.name, e.is_dir(follow_symlinks=False)) for e in it]
    return sorted(found, reverse=True)


# What every sysfs has at its top (Documentation/filesystems/sysfs.rst); a tree with none of them is not one.
SYSFS_TOP_DIRS = ("block", "bus", "class", "dev", "devices")


def _require_sysfs_tree(root: str, given: str) -> None:
    """A --sysfs-root must hold a sysfs (a sys/ with its usual top directories): any other directory used to
    read as a machine with no devices at all, a header and exit 0."""
    sys_dir = os.path.join(root, "sys")
    if os.path.isdir(sys_dir) and any(os.path.isdir(os.path.join(sys_dir, d)) for d in SYSFS_TOP_DIRS):
        return
    hint = "give the directory above it" if os.path.basename(os.path.normpath(given)) == "sys" else "give /"
    raise UsageError(
        f"--sysfs-root {given} is not a sysfs tree: it has no sys/ with block, bus, class or devices in it "
        f"({hint}, a copy of a machine's /sys under DIR/sys, or a bundle made by `disksleuth capture`)"
    )


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _terminate_as_exception() -> dict[int, Callable[[int, FrameType | None], Any] | int]:
    """While unpacking, SIGTERM and SIGHUP unwind like Ctrl-C (so the temp dir is removed) instead of
    killing the process on the spot; a handler someone else installed is left alone. Returns the
    handlers to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Callable[[int, FrameType | None], Any] | int] = {}
    for sig in TERMINATING_SIGNALS:
        if signal.getsignal(sig) is signal.SIG_DFL:
            previous[sig] = signal.signal(sig, _raise_terminated) or signal.SIG_DFL
    return previous


# Longer names than the kernel takes are never in a capture (PATH_MAX 4096, NAME_MAX 255: linux/limits.h).
MAX_NAME_BYTES = 4096
MAX_COMPONENT_BYTES = 255
# A GNU long-name or pax extended header is read whole into memory by tarfile before its member is seen:
# a 389 KB .tar.gz with one 400 MB name took 3.1 GB of RAM (review of issue 13). Ours are under 4 KiB.
MAX_EXTENDED_HEADER_BYTES = 64 * 1024


class _BoundedTarInfo(tarfile.TarInfo):
    """A TarInfo whose extended headers (GNU long names and links, pax records) are refused before
    tarfile reads them into memory when they are larger than any capture's (CPython 3.11-3.13 tarfile:
    _proc_gnulong and _proc_pax read `self.size` bytes at once)."""

    def _proc_gnulong(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.size > MAX_EXTENDED_HEADER_BYTES:
            raise tarfile.HeaderError(f"a long-name header of {self.size:,} bytes")
        info: tarfile.TarInfo = super()._proc_gnulong(tarfile_)  # type: ignore[misc]  # private, untyped
        return info

    def _proc_pax(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.size > MAX_EXTENDED_HEADER_BYTES:
            raise tarfile.HeaderError(f"an extended (pax) header of {self.size:,} bytes")
        info: tarfile.TarInfo = super()._proc_pax(tarfile_)  # type: ignore[misc]  # private, untyped
        return info


def _name_refusal(member: tarfile.TarInfo) -> str | None:
    """Why a member may not be unpacked at all. Only what `disksleuth capture` writes gets through:
    directories, regular files and links that stay inside the bundle, with relative names and no special
    mode bits. Checked here, member by member, rather than by tarfile's extraction filters (PEP 706),
    which the Pythons Debian 12 (3.11.2) and Ubuntu 22.04 (3.11.0) ship do not have."""
    name = member.name.encode("utf-8", "surrogateescape")
    link = member.linkname.encode("utf-8", "surrogateescape")
    if len(name) > MAX_NAME_BYTES or len(link) > MAX_NAME_BYTES:
        return "a name longer than the kernel's PATH_MAX"
    if any(len(part) > MAX_COMPONENT_BYTES for part in name.split(b"/") + link.split(b"/")):
        return "a name part longer than the kernel's NAME_MAX"
    if b"\0" in name or b"\0" in link:
        return "a name with a NUL byte"
    if member.name.startswith("/"):
        return f"an absolute name ({member.name})"
    depth = len([part for part in name.split(b"/") if part not in (b"", b".")])
    if depth > MAX_CAPTURE_DEPTH or link.count(b"/") >= 2 * MAX_CAPTURE_DEPTH:
        deep = f"{depth} levels deep" if depth > MAX_CAPTURE_DEPTH else "a link of more than 128 names"
        return f"a name {deep}; sysfs is never deeper than {MAX_CAPTURE_DEPTH}"
    if ".." in member.name.split("/"):
        return f"a name that climbs out with .. ({member.name})"
    if posixpath.normpath(member.name) == "." and not member.isdir():
        return "an entry without a name"
    if member.mode & 0o7000:
        return f"a setuid, setgid or sticky bit ({member.name})"
    if member.islnk():
        return f"a hard link ({member.name}); `disksleuth capture` writes none"
    if member.issym():
        return _link_refusal(member)
    if member.isdir() or (member.isreg() and not member.issparse()):
        return None if member.size >= 0 else f"a negative size ({member.name})"
    kind = (
        "a device node" if member.ischr() or member.isblk()
        else "a FIFO" if member.isfifo()
        else "a sparse file" if member.issparse()
        else f"an entry of type {member.type!r}"
    )
    return f"{kind} ({member.name}); `disksleuth capture` writes only directories, files and links"


def _link_refusal(member: tarfile.TarInfo) -> str | None:
    """A link is kept only in the kernel's own form, some `..` then names (`../../devices/pci0000:00/...`),
    and only when its `..` stay inside the bundle. Its directory is a real one (_refuse_linked_parent),
    so each `..` climbs exactly one level there; the names after them descend, through real directories
    or through links held to the same rule. So every link resolves inside the bundle, decided from the
    text alone: no realpath, which gives up past PATH_MAX (how CVE-2025-4517 escaped the data filter)."""
    target = member.linkname
    parts = target.split("/")
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    depth = posixpath.normpath(member.name).count("/")  # directories between the bundle's root and the link
    if target.startswith("/") or ups > depth:
        return f"a link that leaves the bundle ({member.name} -> {target})"
    if not target or any(part in ("", ".", "..") for part in parts[ups:]):
        return f"a link not of the kernel's form ../name ({member.name} -> {target})"
    return None


def _checked_members(tar: tarfile.TarFile, path: str) -> list[tarfile.TarInfo]:
    """Every member's header, read one at a time and checked against the caps before anything is
    extracted: an archive past a cap is refused after reading MAX_CAPTURE_ENTRIES + 1 headers, with
    nothing written (extracting first cost 14.6 s for 200,000 empty members: 50,000 files made, then
    removed). Headers only: the data of each member is skipped, not read into memory."""
    members: list[tarfile.TarInfo] = []
    unpacked = 0
    for member in tar:  # streamed: not getmembers(), which reads every header first
        refusal = _name_refusal(member)
        if refusal:
            raise ParseError(f"{path} is not a plausible capture bundle: it holds {refusal}")
        members.append(member)
        if len(members) > MAX_CAPTURE_ENTRIES:
            raise ParseError(f"{path} is not a plausible capture bundle: more than {MAX_CAPTURE_ENTRIES:,} entries")
        unpacked += member.size if member.isfile() else 0
        if unpacked > MAX_CAPTURE_BYTES:
            raise ParseError(
                f"{path} is not a plausible capture bundle: it unpacks to more than "
                f"{MAX_CAPTURE_BYTES // (1024 * 1024)} MiB"
            )
    return members


def _refuse_linked_parent(dest: str, name: str, path: str) -> None:
    """A link may only be made inside a real directory of the bundle, never through another link."""
    here = dest
    for part in posixpath.dirname(posixpath.normpath(name)).split("/"):
        if part in ("", "."):
            continue
        here = os.path.join(here, part)
        if os.path.islink(here):
            raise ParseError(f"{path} is not a plausible capture bundle: it makes a link inside a link ({name})")
    if os.path.lexists(os.path.join(dest, posixpath.normpath(name))):
        raise ParseError(f"{path} is not a plausible capture bundle: a link and a file share a name ({name})")


def _unpack_member(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: str, path: str, made: set[str]) -> None:
    """Make one checked member under dest ourselves: a directory 0755, a file 0644 with exactly its
    data, a link with its checked target. Never as the archive says (no owner, mode or time from it),
    never over an existing entry (O_EXCL) and never through a link (O_NOFOLLOW; links come last)."""
    name = posixpath.normpath(member.name)
    if name == ".":
        return
    target = os.path.join(dest, name)
    try:
        parent = os.path.dirname(target)
        if parent not in made:  # one makedirs per directory, not per member: mkdir is most of the time unpacking
            os.makedirs(parent, mode=0o755, exist_ok=True)
            made.add(parent)
        if member.issym():
            os.symlink(member.linkname, target)
        elif member.isdir():
            if not os.path.isdir(target) or os.path.islink(target):
                os.mkdir(target, 0o755)
        else:
            source = tar.extractfile(member)
            if source is None:  # tarfile returns None only for what is not a file; checked above
                raise ParseError(f"{path} is not a plausible capture bundle: {member.name} has no data")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with source, os.fdopen(os.open(target, flags, 0o644), "wb") as out:
                shutil.copyfileobj(source, out, 64 * 1024)
    except (FileExistsError, NotADirectoryError):
        raise ParseError(f"{path} is not a plausible capture bundle: two entries share the name {name}") from None


def _extract_capture(path: str, dest: str) -> None:
    try:
        tar = tarfile.open(path, "r:*", tarinfo=_BoundedTarInfo)  # noqa: SIM115 (closed by the `with tar` below)
    except (tarfile.TarError, OSError, EOFError):
        # tarfile's own message lists every compression it tried, one per line.
        raise ParseError(f"{path} is not a readable capture bundle ({_NOT_A_CAPTURE})") from None
    try:
        with tar:
            # Two passes over the (decompressed) stream: the headers against the caps, then extraction.
            members = _checked_members(tar, path)
            # Directories and files first, links last: nothing is ever written through a link the bundle
            # made (the escape of CVE-2025-4517 writes a file through such a link), and a link whose name
            # a file or directory already took is refused. Never tarfile's extract or extractall: an
            # archive from elsewhere gets no say in what is made, and no Python version changes that.
            made: set[str] = set()
            for member in (m for m in members if not m.issym()):
                _unpack_member(tar, member, dest, path, made)
            for member in (m for m in members if m.issym()):
                _refuse_linked_parent(dest, member.name, path)
                _unpack_member(tar, member, dest, path, made)
    except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ParseError(f"{path} is not a readable capture bundle: {reason}") from None
    if not os.path.isdir(os.path.join(dest, "sys")):
        raise ParseError(f"{path} holds no sys/ tree ({_NOT_A_CAPTURE})")
