"""What `capture` says of the bundle it wrote: what it holds, what was masked, what was left out."""

from __future__ import annotations

from typing import Any

# The `masked` keys of the capture document, in the words a user reads, singular and plural.
_MASKED_WORDS = {
    "backing_files": ("loop backing-file path", "loop backing-file paths"),
    "swap_files": ("swap file path", "swap file paths"),
    "mount_sources": ("mount source", "mount sources"),
    "mount_points": ("mount point", "mount points"),
    "bind_roots": ("bind-mount path", "bind-mount paths"),
    "mount_options": ("mount option", "mount options"),
}


def _count(n: int, words: tuple[str, str]) -> str:
    return f"{n:,} {words[0] if n == 1 else words[1]}"


def capture_lines(doc: dict[str, Any]) -> list[str]:
    """The lines after "wrote FILE: N sysfs entries", from the capture document's keys."""
    devices = doc["block_devices"]
    holds = _count(devices["in_bundle"], ("block device", "block devices"))
    if "note" in devices:  # more than it holds: "49,990 block devices, reading the first 4,096"
        holds += f" ({devices['note']})"
    if "mount_lines" not in doc:
        return [
            f"it holds {holds}",
            "mount table, swap list and loop backing files copied as they are (--keep-names)",
        ]
    mounts = doc["mount_lines"]
    lines = [
        f"it holds {holds}, and {mounts['kept']:,} of {mounts['total']:,} mount lines: those of block devices and of "
        "the file systems under loop backing files"
    ]
    masked = [_count(n, _MASKED_WORDS[key]) for key, n in doc["masked"].items() if n and key in _MASKED_WORDS]
    left = mounts["total"] - mounts["kept"]
    said = f"masked: {', '.join(masked)}" if masked else "masked: no user, host or file name was in what it holds"
    if left:
        network = doc["network_mounts_left_out"]
        said += f"; left out: {_count(left, ('mount line', 'mount lines'))}"
        said += f" ({network:,} of network or FUSE file systems)" if network else ""
    lines.append(said)
    return lines
