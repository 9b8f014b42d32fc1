"""`verify` attacked (the review of issue 39 item 4): what the exclusive claim cannot see is refused, the checks and
the identity shown are of the device held, and a cache that hands back what the card lost is not believed."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from conftest import loop_device, needs_loop
from fakecards import fuse_missing, wrapping_card

needs_fuse = pytest.mark.skipif(fuse_missing() is not None, reason=fuse_missing() or "")


def _losetup(backing: str) -> str:
    return subprocess.run(
        ["losetup", "-f", "--show", backing], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.root
@needs_fuse
def test_a_cache_that_hands_back_what_the_card_lost_is_not_believed(cli) -> None:  # noqa: ANN001
    """A loop device without direct I/O over a FUSE file whose page cache is kept: every block written past the
    real 16 MiB is dropped by the file, yet the cache gave it back and the card was said to hold what it claims."""
    with wrapping_card(claimed_mib=64, real_mib=16, drop=True, cached=True) as dev:
        res = cli("verify", dev, "--destructive", "--yes", "--quick", "--json")
    doc = res.json()
    assert res.code == 1, res.out
    assert doc["usable_bytes"] == 16 << 20 and [f["code"] for f in doc["findings"]] == ["fake_capacity"]


@pytest.mark.root
@needs_loop
def test_a_name_repointed_between_the_claim_and_the_checks_is_refused(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The claim holds the device a symlink names; the link is re-pointed for the checks (and the identity the user
    confirms) and back for the writes. The old code checked and showed one device and destroyed the other."""
    from disksleuth.errors import SafetyRefusal
    from disksleuth.run import verify as run_verify

    link = tmp_path / "card"
    real_inspect = run_verify.inspect_target
    with loop_device(16) as held, loop_device(16) as shown:
        sentinel = os.urandom(4096)
        with open(held, "r+b") as fh:
            fh.write(sentinel)
        link.symlink_to(held)
        calls = []

        def swapped(path: str):  # noqa: ANN202
            calls.append(path)
            if len(calls) != 2:
                return real_inspect(path)
            link.unlink()
            link.symlink_to(shown)
            try:
                return real_inspect(path)
            finally:
                link.unlink()
                link.symlink_to(held)

        monkeypatch.setattr(run_verify, "inspect_target", swapped)
        opts = run_verify.VerifyOptions(destructive=True, yes=True, quick=True)
        with pytest.raises(SafetyRefusal, match="now names another device"):
            run_verify.run_verify(str(link), opts)
        with open(held, "rb") as fh:
            assert fh.read(4096) == sentinel


@pytest.mark.root
@needs_loop
def test_a_device_that_backs_an_attached_loop_device_is_refused(cli) -> None:  # noqa: ANN001
    """losetup /dev/loopB /dev/loopA: writing A rewrites what B shows; the kernel lets A be claimed exclusively."""
    with loop_device(16) as dev:
        upper = _losetup(dev)
        try:
            res = cli("verify", dev, "--destructive", "--yes", "--quick")
        finally:
            subprocess.run(["losetup", "-d", upper], check=False)
    assert res.code == 2 and f"it backs {upper} (attached, so in use)" in res.err, res.err
    assert res.err.count("\n") == 1


@pytest.mark.root
@needs_loop
def test_a_device_another_process_holds_open_is_refused(cli) -> None:  # noqa: ANN001
    """A process with the device open without O_EXCL (a virtual machine's disk, dd): the claim cannot see it."""
    with loop_device(16) as dev:
        code = f"import time; f = open({dev!r}, 'rb'); print(1, flush=True); time.sleep(60)"
        holder = subprocess.Popen(["python3", "-c", code], stdout=subprocess.PIPE)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == b"1"
            started = time.monotonic()
            res = cli("verify", dev, "--destructive", "--yes", "--quick")
            took = time.monotonic() - started
        finally:
            holder.kill()
            holder.wait()
    assert res.code == 2 and f"it is open in process {holder.pid} (python3)" in res.err, res.err
    assert took < 5


@pytest.mark.root
@needs_loop
def test_a_read_only_card_is_refused_not_called_counterfeit(cli) -> None:  # noqa: ANN001
    """An SD card with its write-protect switch on: every write failed with EPERM, and the verdict was fake_capacity
    (critical, "holds only 0 B ... counterfeit (return it)")."""
    with loop_device(16) as dev:
        subprocess.run(["blockdev", "--setro", dev], check=True)
        try:
            res = cli("verify", dev, "--destructive", "--yes", "--quick")
        finally:
            subprocess.run(["blockdev", "--setrw", dev], check=True)
    assert res.code == 2 and f"{dev} is read-only (a card's write-protect switch" in res.err, res.out + res.err
    assert "fake_capacity" not in res.out and res.err.count("\n") == 1
