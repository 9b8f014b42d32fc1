"""What an exclusive claim on a block device sees of it (probe/claim.held_state), for analysis/safety to judge."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeldDevice:
    """The device a destructive run holds with O_EXCL, as the kernel gives it through the claim's descriptor (never
    through the name the user gave, which can be re-pointed)."""

    dev: str  # MAJ:MIN of the device held
    node: str | None  # a device node checked to be that device (/dev/NAME, not a link): what fio is given to open
    read_only: bool  # BLKROGET: a card's write-protect switch, blockdev --setro, losetup -r
    openers: tuple[str, ...] = ()  # other processes holding it (or a partition, or its disk) open without O_EXCL
