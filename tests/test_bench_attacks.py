"""`bench DEV --destructive` (and `check`, which measures through the same run) attacked the way verify was: what the
exclusive claim cannot see is refused before fio starts, and the checks, the identity shown and the device fio
writes are the device held. Each refusal is one line, exit 2, and the device's bytes are unchanged."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator

import pytest
from conftest import loop_device, needs_fio, needs_loop, sha256_of

pytestmark = [pytest.mark.root, needs_loop, needs_fio]

BENCH = ("--destructive", "--yes", "--no-save", "--profile", "quick", "--time", "1")


def _backing(dev: str) -> str:
    return subprocess.run(
        ["losetup", "-nO", "BACK-FILE", dev], check=True, capture_output=True, text=True
    ).stdout.strip()


@contextlib.contextmanager
def _device(read_only: bool = False) -> Iterator[tuple[str, str]]:
    """(a 16 MiB loop device of random bytes, its backing file); `read_only`: attached with losetup -r."""
    with loop_device(16, fill=True) as dev:
        if not read_only:
            yield dev, _backing(dev)
            return
        image = _backing(dev)
        subprocess.run(["losetup", "-d", dev], check=True)
        ro = subprocess.run(
            ["losetup", "-f", "--show", "-r", "--direct-io=on", image], check=True, capture_output=True, text=True
        ).stdout.strip()
        try:
            yield ro, image
        finally:
            subprocess.run(["losetup", "-d", ro], check=False)


@contextlib.contextmanager
def _held_open(dev: str) -> Iterator[int]:
    """A process holding `dev` open without O_EXCL (dd, a virtual machine's disk); yields its pid."""
    code = f"import os, time; fd = os.open({dev!r}, os.O_RDONLY); print(1, flush=True); time.sleep(60)"
    holder = subprocess.Popen(["python3", "-c", code], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"1"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def _refused(res, image: str, digest: str) -> str:  # noqa: ANN001
    assert res.code == 2, res.out + res.err
    assert res.err.count("\n") == 1 and "Traceback" not in res.err, res.err
    assert sha256_of(image) == digest
    return res.err.strip()


@pytest.mark.parametrize("command", ["bench", "check"])
def test_a_device_another_process_holds_open_is_refused(cli, command: str) -> None:  # noqa: ANN001
    """The claim cannot see an opener without O_EXCL: fio wrote over what the other process was reading."""
    with _device() as (dev, image):
        digest = sha256_of(image)
        with _held_open(dev) as pid:
            started = time.monotonic()
            res = cli(command, dev, *BENCH)
            took = time.monotonic() - started
        said = _refused(res, image, digest)
    assert f"refusing to write to {dev}: it is open in process {pid} (python3)" in said, said
    assert took < 5


def test_a_device_that_backs_an_attached_loop_device_is_refused(cli) -> None:  # noqa: ANN001
    """losetup /dev/loopB /dev/loopA, B not mounted: writing A rewrites what B shows, and the kernel lets A be
    claimed exclusively; analysis/safety let it through because B was in use by nothing it knew."""
    with _device() as (dev, image):
        digest = sha256_of(image)
        upper = subprocess.run(["losetup", "-f", "--show", dev], check=True, capture_output=True, text=True)
        try:
            res = cli("bench", dev, *BENCH)
        finally:
            subprocess.run(["losetup", "-d", upper.stdout.strip()], check=False)
        said = _refused(res, image, digest)
    assert f"refusing to write to {dev}: it backs {upper.stdout.strip()} (attached, so in use)" in said, said


def test_a_read_only_device_is_refused_before_fio(cli) -> None:  # noqa: ANN001
    """losetup -r (a card's write-protect switch, blockdev --setro): every write test failed inside fio."""
    with _device(read_only=True) as (dev, image):
        digest = sha256_of(image)
        res = cli("bench", dev, *BENCH)
        said = _refused(res, image, digest)
    assert f"{dev} is read-only (a card's write-protect switch" in said, said


def test_a_name_repointed_between_the_claim_and_the_checks_is_refused(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The claim holds the device a symlink names; the link is re-pointed for the checks (and the identity the user
    confirms) and back for fio. The old code checked and showed one device and fio wrote the other."""
    from disksleuth.errors import SafetyRefusal
    from disksleuth.run import bench as run_bench
    from disksleuth.run.plan import BenchOptions

    link = tmp_path / "card"
    real_inspect = run_bench.inspect_target
    with _device() as (held, held_image), _device() as (shown, shown_image):
        digests = sha256_of(held_image), sha256_of(shown_image)
        link.symlink_to(held)
        target = real_inspect(str(link))

        def swapped(path: str):  # noqa: ANN202
            link.unlink()
            link.symlink_to(shown)
            try:
                return real_inspect(path)
            finally:
                link.unlink()
                link.symlink_to(held)

        monkeypatch.setattr(run_bench, "inspect_target", swapped)
        opts = BenchOptions(destructive=True, yes=True, fixed_time_s=1.0)
        with pytest.raises(SafetyRefusal, match="now names another device") as refused:
            run_bench.run_bench(target, opts)
        assert (sha256_of(held_image), sha256_of(shown_image)) == digests
    assert str(refused.value).count("\n") == 0


def test_fio_is_given_the_device_held_not_the_name(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A name re-pointed after the checks, before fio opens it, must not redirect the writes: fio is given the device
    node the claim was checked to hold, never the user's symlink (the old code gave fio the link, and each test
    opened it again: by hand, with the link flipped between two devices, runs wrote the other one or both)."""
    from disksleuth.run import bench as run_bench
    from disksleuth.run.plan import BenchOptions

    link = tmp_path / "card"
    planned = []

    def carried_out(plan, events, version, **kw):  # noqa: ANN001, ANN003, ANN202
        planned.append(plan)
        raise KeyboardInterrupt  # stands in for the run: nothing is written

    with _device() as (dev, _image):
        link.symlink_to(dev)
        target = run_bench.inspect_target(str(link))
        monkeypatch.setattr(run_bench, "execute", carried_out)
        with pytest.raises(KeyboardInterrupt):
            run_bench.run_bench(target, BenchOptions(destructive=True, yes=True, fixed_time_s=1.0))
    assert planned[0].main.path == dev and planned[0].target.path == str(link)


def test_an_opener_of_a_partition_or_of_the_disk_is_named_with_it(tmp_path) -> None:  # noqa: ANN001
    """Writing a disk rewrites its partitions, and a partition is part of its disk: an opener of either is refused,
    and the line says which node it has open. A /proc tree whose descriptor links to a real device node."""
    from disksleuth.probe.claim import open_by_processes

    with _device() as (dev, _image):
        rdev = os.stat(dev).st_rdev
        fds = tmp_path / "proc/4242/fd"
        fds.mkdir(parents=True)
        (fds / "3").symlink_to(dev)
        (fds / "4").symlink_to("socket:[1]")
        (tmp_path / "proc/4242/comm").write_text("qemu-system-x86\n")
        partition = {"loop99p1": f"{os.major(rdev)}:{os.minor(rdev)}", "loop99": "7:4095"}
        assert open_by_processes(partition, proc_root=str(tmp_path / "proc")) == [
            "process 4242 (qemu-system-x86) on /dev/loop99p1"
        ]
        held = {"loop99": f"{os.major(rdev)}:{os.minor(rdev)}"}
        assert open_by_processes(held, proc_root=str(tmp_path / "proc")) == ["process 4242 (qemu-system-x86)"]
