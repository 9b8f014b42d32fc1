"""Files the user names with -o (report, export, capture): they hold host names, targets, notes and
device details, so they are 0600 like the store, and they are never written through a symbolic link,
which under root would let any user who planted /tmp/x -> /root/.bashrc choose the file we overwrite."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from disksleuth.errors import UsageError

STDOUT = "-"  # as -o's value: standard output, as for tar, curl and gzip (not a file named "-")


@contextlib.contextmanager
def private_output(path: str) -> Iterator[BinaryIO]:
    """A binary file to write PATH's new content to. It is a new temp file beside PATH (O_EXCL: never a
    link), renamed over PATH when the block ends without an error: rename replaces a link or file at PATH,
    it never writes through it, and a reader never sees half a file. One usage line for a PATH that is a
    symlink, a directory or unwritable. PATH "-" is standard output (a file named so: ./-)."""
    if path == STDOUT:
        import sys

        sys.stdout.flush()  # text already written to it goes first
        out = sys.stdout.buffer
        yield out  # neither writer here closes what it is given (tarfile leaves a fileobj open)
        out.flush()
        return
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{path} is a symbolic link; not writing through it (remove it or give another file)")
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"cannot write {path}: it is a directory; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UsageError(f"cannot write {path}: not a regular file (a device, FIFO or socket)")
    try:
        fd, temp = tempfile.mkstemp(prefix=".disksleuth-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o600)  # mkstemp's mode already; said on the descriptor, so no umask or path race matters
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_private_text(path: str, text: str) -> None:
    with private_output(path) as fh:
        fh.write(text.encode("utf-8"))

