"""Files the user names for us to read (an export to import, saved smartctl JSON): only a regular file
is opened, and at most a bound is read, so a FIFO never blocks and a link to /dev/zero never fills
memory. The counterpart of outfile.py."""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from disksleuth.errors import ParseError, UsageError

_READ_CHUNK_BYTES = 1 << 20


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_user_file(path: str, what: str) -> BinaryIO:
    """PATH opened for reading in binary, a regular file (links followed) of any size, for a reader that
    streams it; the same refusals as read_user_file, as UsageError."""
    fd = _open_regular(path, what)
    return os.fdopen(fd, "rb")


def _open_regular(path: str, what: str) -> int:
    """stat() first, so a FIFO or device is never opened (opening some devices has side effects); O_NONBLOCK
    and fstat() on what was opened close the race where the name is swapped for one meanwhile."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise UsageError(f"cannot read {path}: it is {_kind(mode)}; give {what} in a file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError:  # a NUL byte in the path
        raise UsageError(f"cannot read {path!r}: not a file name") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"cannot read {path}: it is {_kind(st.st_mode)}; give {what} in a file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_user_file(path: str, max_bytes: int, what: str) -> bytes:
    """The bytes of PATH, a regular file (links followed) of at most max_bytes.

    One line for anything else: UsageError for a file that cannot be read or is not a regular file (a
    directory, FIFO, device or socket), ParseError for one larger than max_bytes ("PATH: larger than
    N MiB, not WHAT"). stat() first, so a FIFO or device is never opened (opening some devices has side
    effects); O_NONBLOCK and fstat() on what was opened close the race where the name is swapped for
    one meanwhile. The size is checked by reading at most max_bytes + 1 bytes, whatever st_size says."""
    fd = _open_regular(path, what)
    too_big = ParseError(f"{path}: larger than {max_bytes / (1 << 20):g} MiB, not {what}")
    try:
        if os.fstat(fd).st_size > max_bytes:
            raise too_big
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(max_bytes + 1 - total, _READ_CHUNK_BYTES))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if total > max_bytes:
        raise too_big
    return b"".join(chunks)
