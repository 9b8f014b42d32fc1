"""Fake cards for `verify`: real block devices that claim more than they hold, each removed in a finally.

- `short_card`: a loop device over a file on a tmpfs smaller than the file. The first `real_mib` of the file are
  allocated and the tmpfs is then full, so a write past them fails: the loop driver (--direct-io=off, through the
  page cache of the backing file) ends it with ENOSPC ("critical space allocation error" in the kernel log), and a
  read there gives the hole's zeros. A card whose controller drops what it cannot store, with an error.
- `wrapping_card`: a loop device over a file served by FUSE (fusepy over libfuse2, in a process of its own) that maps
  every offset modulo `real_mib`: writes past the real size land on lower addresses, as on a counterfeit card whose
  controller ignores the high address bits. direct_io keeps the kernel's page cache out of the FUSE file, so every
  read reaches the mapping.
  With `drop=True` it keeps nothing past the real size instead: writes there succeed and vanish, reads give zeros,
  as on a fake whose controller says yes to everything (no error ever tells the user). With `cached=True` the
  kernel's page cache of the FUSE file is kept (no direct_io): the loop device then reads back every block just
  written from that cache, whatever the file kept, unless verify drops it.
- `good_card`: a RAM-backed loop device with direct I/O (conftest.loop_device).

Run as a script, this file is the FUSE server: python fakecards.py MOUNTPOINT REAL_BYTES CLAIMED_BYTES [drop]."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
CARD = "card"


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def fuse_missing() -> str | None:
    """Why the wrapping card cannot be made here, or None."""
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse in this kernel"
    try:
        import fuse  # noqa: F401  (fusepy: loads libfuse2 when imported)
    except (ImportError, OSError) as exc:
        return f"fusepy or libfuse2 missing ({exc}); apt-get install libfuse2, pip install fusepy"
    return None


@contextlib.contextmanager
def short_card(claimed_mib: int = 64, real_mib: int = 16) -> Iterator[str]:
    mnt = tempfile.mkdtemp(prefix="disksleuth-shortcard-")
    dev = None
    mounted = False
    try:
        _run("mount", "-t", "tmpfs", "-o", f"size={real_mib}M,mode=0700", "tmpfs", mnt)
        mounted = True
        image = os.path.join(mnt, "img")
        with open(image, "wb") as fh:
            fh.truncate(claimed_mib << 20)
            os.posix_fallocate(fh.fileno(), 0, real_mib << 20)  # the real part, allocated: the tmpfs is now full
        dev = _run("losetup", "-f", "--show", "--direct-io=off", image)
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        if mounted:
            subprocess.run(["umount", "-l", mnt], check=False)
        shutil.rmtree(mnt, ignore_errors=True)


@contextlib.contextmanager
def wrapping_card(claimed_mib: int = 64, real_mib: int = 16, drop: bool = False, cached: bool = False) -> Iterator[str]:
    mnt = tempfile.mkdtemp(prefix="disksleuth-wrapcard-")
    mode = (["drop"] if drop else []) + (["cached"] if cached else [])
    server = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), mnt, str(real_mib << 20), str(claimed_mib << 20), *mode],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    dev = None
    try:
        card = os.path.join(mnt, CARD)
        deadline = time.monotonic() + 10
        while not os.path.exists(card):
            if server.poll() is not None or time.monotonic() > deadline:
                err = server.stderr.read().decode() if server.stderr and server.poll() is not None else ""
                raise RuntimeError(f"the FUSE server did not come up: {err[-500:]}")
            time.sleep(0.02)
        dev = _run("losetup", "-f", "--show", "--direct-io=off", card)
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        subprocess.run(["umount", "-l", mnt], check=False, capture_output=True)
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if server.stderr:
            server.stderr.close()
        shutil.rmtree(mnt, ignore_errors=True)


def _serve(mountpoint: str, real: int, claimed: int, drop: bool, cached: bool = False) -> None:
    from fuse import FUSE, FuseOSError, Operations

    class Wrapping(Operations):  # type: ignore[misc]
        """One file, CARD, of `claimed` bytes kept in `real` bytes of memory: offset o is stored at o % real."""

        def __init__(self) -> None:
            self.data = bytearray(real)

        def getattr(self, path: str, fh: object = None) -> dict[str, int]:
            if path == "/":
                return {"st_mode": stat.S_IFDIR | 0o700, "st_nlink": 2}
            if path == f"/{CARD}":
                return {"st_mode": stat.S_IFREG | 0o600, "st_nlink": 1, "st_size": claimed}
            raise FuseOSError(errno.ENOENT)

        def readdir(self, path: str, fh: object) -> list[str]:
            return [".", "..", CARD]

        def open(self, path: str, flags: int) -> int:
            return 0

        def truncate(self, path: str, length: int, fh: object = None) -> None:
            pass

        def read(self, path: str, size: int, offset: int, fh: object) -> bytes:
            out = bytearray()
            size = max(0, min(size, claimed - offset))
            while size > 0:
                if drop and offset >= real:  # nothing kept up there: the hole's zeros
                    out += bytes(size)
                    break
                at = offset % real
                n = min(size, real - at)
                out += self.data[at : at + n]
                offset += n
                size -= n
            return bytes(out)

        def write(self, path: str, buf: bytes, offset: int, fh: object) -> int:
            done = 0
            while done < len(buf):
                if drop and offset + done >= real:  # accepted, and gone
                    return len(buf)
                at = (offset + done) % real
                n = min(len(buf) - done, real - at)
                self.data[at : at + n] = buf[done : done + n]
                done += n
            return done

    FUSE(Wrapping(), mountpoint, foreground=True, nothreads=True, direct_io=not cached)


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), "drop" in sys.argv[4:], "cached" in sys.argv[4:])
