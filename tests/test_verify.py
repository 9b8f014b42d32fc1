"""`verify DEV --destructive` (issue 39 item 4): does the device hold what it says?

The plan and the judgement are pure (analysis/verify.py), tested first, with the write-highest-first rule simulated on
fake cards of every real size (hypothesis). Then real block devices: a RAM loop device that holds what it claims, a
loop device over a tmpfs smaller than it (writes past the real part fail with ENOSPC), one over a FUSE file that wraps
offsets modulo its real size (tests/fakecards.py), a throttled one that the time limit thins and Ctrl-C stops; and the
refusals bench --destructive has (no --destructive, mounted, no terminal without --yes), and a regular file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import blkio_throttle, drain_terminal, have_blkio, in_cgroup, loop_device, mounted_ext4, needs_loop
from fakecards import fuse_missing, short_card, wrapping_card
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from disksleuth.analysis.verify import (
    BLOCK_BYTES,
    classify,
    judge,
    level_that_fits,
    make_block,
    plan_probes,
)
from disksleuth.doc.schema import load_schema
from disksleuth.model.verify import ERASED, GARBAGE, HELD, STALE, WRAPPED, ZEROS, BlockOutcome

MIB = 1 << 20
NONCE = bytes(range(16))
SCHEMA = load_schema()
needs_fuse = pytest.mark.skipif(fuse_missing() is not None, reason=fuse_missing() or "")


def assert_verify_document(doc: dict) -> None:
    narrowed = {k: v for k, v in SCHEMA.items() if k != "anyOf"}
    Draft202012Validator({**narrowed, "$ref": "#/$defs/verify"}).validate(doc)
    Draft202012Validator(SCHEMA).validate(doc)


# --- the plan ------------------------------------------------------------------------------------------------


def test_the_plan_holds_every_boundary_highest_first_and_an_even_spread() -> None:
    claimed = 64 * MIB + 12345  # not a whole number of blocks: the last block ends inside the claim
    probes = plan_probes(claimed, BLOCK_BYTES, 64)
    offsets = [p.offset for p in probes]
    assert offsets == sorted(offsets, reverse=True) and len(set(offsets)) == len(offsets)
    assert all(o % BLOCK_BYTES == 0 and o + BLOCK_BYTES <= claimed for o in offsets)
    boundaries = {p.offset for p in probes if p.level == 0}
    last = (claimed - BLOCK_BYTES) // BLOCK_BYTES * BLOCK_BYTES
    assert {0, last, 16 * MIB, 16 * MIB - BLOCK_BYTES, 32 * MIB, 64 * MIB - BLOCK_BYTES} <= boundaries
    spread = [p for p in probes if p.level > 0]
    step = 1 * MIB  # the largest power of two that gives the 64 asked for
    assert set(range(step, last, step)) <= set(offsets) and all(p.offset % step == 0 for p in spread)
    assert len(offsets) == len(set(range(0, last, step)) | boundaries)
    by_offset = {p.offset: p.level for p in spread}
    assert by_offset[48 * MIB] == 3 and by_offset[24 * MIB] == by_offset[40 * MIB] == 4  # coarser kept longer
    assert {p.level for p in spread if (p.offset // step) % 2} == {7}  # odd multiples are dropped first


def test_a_device_smaller_than_a_block_has_nothing_to_test() -> None:
    assert plan_probes(2048, BLOCK_BYTES, 64) == []
    assert [p.offset for p in plan_probes(BLOCK_BYTES, BLOCK_BYTES, 64)] == [0]


def test_the_spread_is_thinned_finest_level_first_and_never_grows_back() -> None:
    remaining = [10, 2, 4, 8, 16]
    assert level_that_fits(remaining, 0.01, 100.0, 4) == 4
    assert level_that_fits(remaining, 1.0, 24.0, 4) == 3  # 10+2+4+8 = 24 blocks fit, 40 do not
    assert level_that_fits(remaining, 1.0, 24.0, 2) == 2  # the ceiling chosen before holds
    assert level_that_fits(remaining, 1.0, 0.0, 4) == 0  # the boundaries always


# --- what a block read back is -------------------------------------------------------------------------------


def test_a_block_read_back_is_told_apart() -> None:
    mine = make_block(NONCE, 8 * MIB, BLOCK_BYTES)
    assert len(mine) == BLOCK_BYTES
    assert classify(mine, NONCE, 8 * MIB, mine).state == HELD
    other = make_block(NONCE, 0, BLOCK_BYTES)
    wrapped = classify(other, NONCE, 8 * MIB, mine)
    assert (wrapped.state, wrapped.carries_offset) == (WRAPPED, 0)
    earlier_run = make_block(bytes(16), 8 * MIB, BLOCK_BYTES)
    assert classify(earlier_run, NONCE, 8 * MIB, mine).state == STALE
    assert classify(bytes(BLOCK_BYTES), NONCE, 8 * MIB, mine).state == ZEROS
    assert classify(b"\xff" * BLOCK_BYTES, NONCE, 8 * MIB, mine).state == ERASED
    flipped = bytearray(other)
    flipped[BLOCK_BYTES - 1] ^= 1  # one bit of the payload: the checksum no longer holds, so no tag is trusted
    assert classify(bytes(flipped), NONCE, 8 * MIB, mine).state == GARBAGE


def test_the_judgement_names_usable_bytes_the_wrap_and_fake_capacity() -> None:
    held = [BlockOutcome(o, HELD) for o in (0, 4096, 16 * MIB - 4096)]
    wrapped = [BlockOutcome(16 * MIB, WRAPPED, 0), BlockOutcome(20 * MIB, WRAPPED, 4 * MIB)]
    v = judge(32 * MIB, BLOCK_BYTES, [*wrapped, *held], "/dev/sdz")
    assert v.usable_bytes == 16 * MIB and v.wraps_every_bytes == 16 * MIB
    assert v.failures[WRAPPED] == 2 and v.blocks_held == 3 and v.blocks_tested == 5
    (finding,) = v.findings
    assert finding.code == "fake_capacity" and finding.severity == "critical"
    assert finding.evidence["usable_bytes"] == 16 * MIB and "wrap every 16.8 MB" in finding.message
    good = judge(32 * MIB, BLOCK_BYTES, held, "/dev/sdz")
    assert good.usable_bytes == 32 * MIB and not good.findings and "holds what it claims" in good.summary
    assert judge(32 * MIB, BLOCK_BYTES, [], "/dev/sdz").usable_bytes is None


def test_a_run_stopped_early_claims_no_more_than_it_read() -> None:
    write_errors = [BlockOutcome(o, "write_error", error="EIO: Input/output error") for o in (24 * MIB, 28 * MIB)]
    stopped_writing = judge(32 * MIB, BLOCK_BYTES, write_errors, "/dev/sdz", complete=False)
    assert stopped_writing.usable_bytes is None and not stopped_writing.findings
    held = [BlockOutcome(o, HELD) for o in (0, MIB, 8 * MIB)]
    stopped_reading = judge(32 * MIB, BLOCK_BYTES, [*held, *write_errors], "/dev/sdz", complete=False)
    assert stopped_reading.usable_bytes == 8 * MIB + BLOCK_BYTES and not stopped_reading.findings
    assert stopped_reading.blocks_tested == 3 and "past that it was not tested" in stopped_reading.summary
    found = judge(32 * MIB, BLOCK_BYTES, [*held, BlockOutcome(16 * MIB, ZEROS)], "/dev/sdz", complete=False)
    assert found.usable_bytes == 16 * MIB and found.findings[0].code == "fake_capacity"


def _simulate(claimed: int, real: int, spread: int, lose: bool) -> int | None:
    """A fake card in memory, tested as run/verify does (highest offset first, then read back). Past `real` it wraps
    (offset modulo real) or, with `lose`, keeps nothing (reads zeros)."""
    store = bytearray(real)
    probes = plan_probes(claimed, BLOCK_BYTES, spread)

    def places(offset: int) -> list[int]:
        return [(offset + i) % real for i in range(0, BLOCK_BYTES, 512)]

    for p in probes:
        data = make_block(NONCE, p.offset, BLOCK_BYTES)
        if lose and p.offset + BLOCK_BYTES > real:
            continue
        for i, at in enumerate(places(p.offset)):
            store[at : at + 512] = data[i * 512 : (i + 1) * 512]
    outcomes = []
    for p in probes:
        if lose and p.offset + BLOCK_BYTES > real:
            got = bytes(BLOCK_BYTES)
        else:
            got = b"".join(bytes(store[at : at + 512]) for at in places(p.offset))
        outcomes.append(classify(got, NONCE, p.offset, make_block(NONCE, p.offset, BLOCK_BYTES)))
    return judge(claimed, BLOCK_BYTES, outcomes, "fake").usable_bytes


@settings(max_examples=40, deadline=None)
@given(real_sectors=st.integers(min_value=16, max_value=(8 * MIB) // 512 - 1), lose=st.booleans())
def test_no_real_block_is_ever_blamed_whatever_the_real_size(real_sectors: int, lose: bool) -> None:
    """Whatever the real size, in sectors, every block below it holds: of two offsets sharing a place the lower is
    written last. A card that loses what it cannot store is found within one spread step (128 KiB here) above it.
    (A wrap at a size that is no multiple of the step maps the blocks past it onto places the test did not write,
    so it is found further up: fakes wrap at a power of two, where the high address bits are dropped.)"""
    real = real_sectors * 512
    usable = _simulate(8 * MIB, real, 64, lose)
    assert usable is not None and usable > real - BLOCK_BYTES
    if lose:
        assert usable <= real + 128 * 1024


@settings(max_examples=20, deadline=None)
@given(steps=st.integers(min_value=1, max_value=63))
def test_a_card_that_wraps_at_a_multiple_of_the_step_is_found_exactly(steps: int) -> None:
    assert _simulate(8 * MIB, steps * 128 * 1024, 64, lose=False) == steps * 128 * 1024


# --- real devices ----------------------------------------------------------------------------------------------


def _verify_json(cli, dev: str, *extra: str) -> tuple[int, dict, str]:  # noqa: ANN001
    res = cli("verify", dev, "--destructive", "--yes", "--quick", "--json", *extra)
    doc = res.json()
    assert_verify_document(doc)
    return res.code, doc, res.err


@pytest.mark.root
@needs_loop
def test_a_ram_loop_device_holds_what_it_claims(cli) -> None:  # noqa: ANN001
    with loop_device(32) as dev:
        code, doc, err = _verify_json(cli, dev)
    assert code == 0, doc
    assert doc["usable_bytes"] == doc["claimed_bytes"] == 32 * MIB
    assert doc["findings"] == [] and doc["complete"] and doc["blocks_held"] == doc["blocks_tested"] > 60
    assert "DESTRUCTIVE" in err and "destroyed" in err and dev in err


@pytest.mark.root
@needs_loop
def test_a_card_whose_writes_fail_past_its_real_size(cli) -> None:  # noqa: ANN001
    with short_card(claimed_mib=64, real_mib=16) as dev:
        code, doc, _err = _verify_json(cli, dev)
        human = cli("verify", dev, "--destructive", "--yes", "--quick")
    assert code == 1, doc
    assert doc["claimed_bytes"] == 64 * MIB and doc["usable_bytes"] == 16 * MIB
    assert doc["failures"]["write_error"] > 0 and doc["blocks_held"] > 0
    assert doc["first_failure"]["offset"] == 16 * MIB and "ENOSPC" in doc["first_failure"]["error"]
    (finding,) = doc["findings"]
    assert finding["code"] == "fake_capacity" and finding["severity"] == "critical"
    assert human.code == 1 and "usable       16.8 MB (16,777,216 bytes)" in human.out, human.out
    assert "fake_capacity" in human.out and "write errors" in human.out


@pytest.mark.root
@needs_loop
@needs_fuse
def test_a_card_that_wraps_to_lower_addresses(cli) -> None:  # noqa: ANN001
    with wrapping_card(claimed_mib=64, real_mib=16) as dev:
        code, doc, _err = _verify_json(cli, dev)
    assert code == 1, doc
    assert doc["usable_bytes"] == 16 * MIB and doc["wraps_every_bytes"] == 16 * MIB
    assert doc["failures"]["wrapped"] > 0 and doc["first_failure"]["carries_offset"] == 0
    held_below = doc["blocks_held"] - doc["held_past_usable"]
    assert held_below > 0 and doc["findings"][0]["code"] == "fake_capacity"


@pytest.mark.root
@needs_loop
@needs_fuse
def test_a_card_that_drops_what_it_cannot_store_without_an_error(cli) -> None:  # noqa: ANN001
    with wrapping_card(claimed_mib=64, real_mib=16, drop=True) as dev:
        code, doc, _err = _verify_json(cli, dev)
    assert code == 1, doc
    assert doc["usable_bytes"] == 16 * MIB and doc["wraps_every_bytes"] is None
    assert doc["failures"]["zeros"] > 0 and doc["failures"]["write_error"] == 0 == doc["failures"]["wrapped"]
    assert doc["first_failure"] == {"offset": 16 * MIB, "state": "zeros", "carries_offset": None, "error": None}
    assert "lost (read back as zeros)" in doc["findings"][0]["message"]


# --- refusals ------------------------------------------------------------------------------------------------


@pytest.mark.root
@needs_loop
def test_the_refusals_of_bench_destructive_and_nothing_is_written(cli, tmp_path) -> None:  # noqa: ANN001
    with loop_device(16) as dev:
        sentinel = os.urandom(4096)
        with open(dev, "r+b") as fh:
            fh.write(sentinel)
        res = cli("verify", dev, "--quick")
        assert res.code == 2 and "add --destructive" in res.err and res.err.count("\n") == 1, res.err
        res = cli("verify", dev, "--destructive", "--quick")  # no terminal here, and no --yes
        assert res.code == 2 and "without a terminal to confirm; add --yes" in res.err, res.err
        with open(dev, "rb") as fh:
            assert fh.read(4096) == sentinel
        with mounted_ext4(dev) as mnt:
            res = cli("verify", dev, "--destructive", "--yes", "--quick", "--json")
            assert res.code == 2 and f"mounted at {mnt}" in res.json()["error"]["message"], res.out
            assert res.json()["error"]["code"] == "safety_refusal"
            res = cli("verify", os.path.join(mnt, "lost+found"), "--destructive", "--yes")
            assert res.code == 2 and "is a directory" in res.err, res.err
    image = tmp_path / "card.img"
    image.write_bytes(b"x" * 8192)
    res = cli("verify", str(image), "--destructive", "--yes")
    assert res.code == 2 and "is a file" in res.err and "the device under it is /dev/" in res.err, res.err
    assert image.read_bytes() == b"x" * 8192
    res = cli("verify", dev, "--destructive", "--yes", "--max-time", "0.5")
    assert res.code == 2 and "--max-time must be from 1" in res.err, res.err


@pytest.mark.root
@needs_loop
def test_what_is_written_is_the_device_held_even_if_its_name_moved(tmp_path) -> None:  # noqa: ANN001
    """The claim holds one device; verify opens the path again for direct I/O. A symlink re-pointed in between
    (to another device) is caught: nothing is written."""
    from disksleuth.errors import SafetyRefusal
    from disksleuth.probe.blockio import open_direct
    from disksleuth.probe.claim import exclusive_claim

    link = tmp_path / "card"
    with loop_device(16) as held_dev, loop_device(16) as other:
        link.symlink_to(held_dev)
        with exclusive_claim(str(link)) as claim:
            link.unlink()
            link.symlink_to(other)
            with (
                pytest.raises(SafetyRefusal, match="now names another device"),
                open_direct(str(link), BLOCK_BYTES, same_as=claim.fd),
            ):
                pass
            link.unlink()
            link.symlink_to(held_dev)
            with open_direct(str(link), BLOCK_BYTES, same_as=claim.fd) as io:
                assert io.size_bytes() == 16 * MIB


def _root_block_device() -> str | None:
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            if fields[4] == "/" and " - " in line:
                source = line.split(" - ", 1)[1].split()[1]
                if source.startswith("/dev/") and os.path.exists(source):
                    return source
    return None


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
@pytest.mark.skipif(_root_block_device() is None, reason="/ is not mounted from a block device here")
def test_the_disk_that_holds_root_is_refused(cli) -> None:  # noqa: ANN001
    res = cli("verify", str(_root_block_device()), "--destructive", "--yes", "--quick")
    assert res.code == 2 and "holds the root file system (/)" in res.err and res.err.count("\n") == 1, res.err


def _typed(argv: list[str], answer: bytes) -> tuple[int, str]:
    """`disksleuth ARGV` on a pseudo-terminal 200 columns wide; `answer` typed at the confirmation."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "disksleuth", *argv], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 20
    while b"Type 'yes' to continue" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 65536)
    os.write(master, answer + b"\n")
    seen += drain_terminal(master, proc, 20)
    return proc.returncode, seen.decode("utf-8", "replace")


@pytest.mark.root
@pytest.mark.slow
@needs_loop
def test_on_a_terminal_only_a_typed_yes_destroys_the_data() -> None:
    with loop_device(16) as dev:
        sentinel = os.urandom(4096)
        with open(dev, "r+b") as fh:
            fh.write(sentinel)
        code, seen = _typed(["verify", dev, "--destructive", "--quick"], b"y")
        assert code == 2 and "not confirmed; nothing was written" in seen, seen
        assert "the data on it is destroyed, by design" in seen and f"Destroy the data on {dev}" in seen, seen
        with open(dev, "rb") as fh:
            assert fh.read(4096) == sentinel
        code, seen = _typed(["verify", dev, "--destructive", "--quick"], b"yes")
        assert code == 0 and "holds what it claims" in seen, seen
        with open(dev, "rb") as fh:
            assert fh.read(4096) != sentinel


# --- the time limit, and Ctrl-C ------------------------------------------------------------------------------


@pytest.mark.root
@pytest.mark.slow
@needs_loop
@needs_fuse
@pytest.mark.skipif(have_blkio() is not None, reason=have_blkio() or "")
def test_the_time_limit_thins_the_spread_and_still_finds_the_wrap() -> None:
    """200 writes a second: the full plan (about 1,040 blocks) would take 5 s; --max-time 1 keeps what fits."""
    with wrapping_card(claimed_mib=64, real_mib=16) as dev, blkio_throttle(dev, write_iops=200) as procs:
        argv = [sys.executable, "-m", "disksleuth", "verify", dev, "--destructive", "--yes", "--json"]
        started = time.monotonic()
        proc = subprocess.run(in_cgroup(procs, [*argv, "--max-time", "1"]), capture_output=True, text=True)
        took = time.monotonic() - started
    doc = json.loads(proc.stdout)
    assert_verify_document(doc)
    assert proc.returncode == 1, proc.stderr
    assert doc["blocks_skipped"] > 100 and doc["usable_bytes"] == 16 * MIB, doc
    assert "left out to finish within 1 s" in " ".join(doc["notes"])
    assert took < 4, took


@pytest.mark.root
@pytest.mark.slow
@needs_loop
@pytest.mark.skipif(have_blkio() is not None, reason=have_blkio() or "")
def test_ctrl_c_stops_cleanly_and_says_how_far_it_got() -> None:
    with loop_device(64) as dev, blkio_throttle(dev, write_iops=50) as procs:
        argv = [sys.executable, "-m", "disksleuth", "verify", dev, "--destructive", "--yes", "--quick", "--json"]
        proc = subprocess.Popen(in_cgroup(procs, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the DESTRUCTIVE line: the writes begin
        assert "DESTRUCTIVE" in line
        time.sleep(0.4)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert_verify_document(doc)
    assert not doc["complete"] and doc["stopped"].startswith("interrupted while writing: ")
    assert 0 < doc["blocks_written"] < doc["blocks_planned"]
    assert doc["usable_bytes"] is None and doc["findings"] == []  # nothing read back: nothing claimed
    assert "stopped: interrupted while writing" in err
