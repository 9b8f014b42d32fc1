"""`disksleuth exporter`: metrics on captured sysfs trees, promtool on both modes, a real Prometheus
server scraping the HTTP endpoint, and the latest stored benchmark figures from a real SQLite store."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator

import pytest
from conftest import HERE, SMARTCTL_FIXTURES, SYSFS, metric_value

from disksleuth.errors import ParseError
from disksleuth.probe.smart_parse import parse_smartctl_json
from disksleuth.run import exporter

BADLY_SEATED = os.path.join(SYSFS, "scenario_badly_seated")  # 8 GT/s x2 where both ends do x4
SAMPLE_RUN = os.path.join(HERE, "..", "benchmarks", "sample_run.json")
CLI = [sys.executable, "-m", "disksleuth"]


def _promtool_check(text: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool missing (Debian package prometheus)")
    res = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip() == "" and res.stderr.strip() == "", res.stdout + res.stderr  # no lint warnings


def test_textfile_on_a_downgraded_link(cli, tmp_path) -> None:
    res = cli("exporter", "--textfile", str(tmp_path), "--sysfs-root", BADLY_SEATED, "--no-bench")
    assert res.code == 0, res.err
    text = (tmp_path / "disksleuth.prom").read_text()
    assert metric_value(text, "disksleuth_finding", device="nvme0n1", code="link_downgraded", severity="warn") == 1
    # PCIe 3.0 x2: 2 lanes x 984.6 MB/s x 0.9 practical = 1,772 MB/s, in bytes per second.
    current = metric_value(text, "disksleuth_link_ceiling_bytes_per_second", device="nvme0n1", state="current")
    capable = metric_value(text, "disksleuth_link_ceiling_bytes_per_second", device="nvme0n1", state="capable")
    assert current == pytest.approx(2 * 984.6 * 0.9 * 1e6, rel=0.01)
    assert capable == pytest.approx(4 * 984.6 * 0.9 * 1e6, rel=0.01)
    # The hop carries node_exporter's pcidevice location, so the two can be joined.
    assert (
        metric_value(
            text,
            "disksleuth_link_hop_info",
            device="nvme0n1",
            kind="pcie",
            address="0000:03:00.0",
            segment="0000",
            bus="03",
            pci_device="00",
            function="0",
            label="PCIe 3.0 x2",
        )
        == 1
    )
    assert metric_value(text, "disksleuth_device_info", device="nvme0n1", transport="nvme") == 1
    assert "S4EUNX0N" not in text  # the serial appears only as its sha256
    assert not [p for p in os.listdir(tmp_path) if p != "disksleuth.prom"]  # no temp file left over
    _promtool_check(text)


def test_textfile_replaces_atomically_and_json(cli, tmp_path) -> None:
    target = tmp_path / "disksleuth.prom"
    target.write_text("old\n")
    inode = target.stat().st_ino
    res = cli("exporter", "--textfile", str(tmp_path), "--sysfs-root", BADLY_SEATED, "--no-bench", "--json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["schema"] == "disksleuth/1"
    assert doc["exporter"]["textfile"] == str(target) and doc["exporter"]["devices"] == 1
    assert target.stat().st_ino != inode  # renamed into place, not rewritten in place
    assert oct(target.stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--textfile", "/no/such/dir"], "no such directory"),
        (["--listen", "nonsense"], "expected ADDR:PORT"),
        (["--listen", "127.0.0.1:99999"], "expected ADDR:PORT"),
        (["--health-max-age", "-3"], "--health-max-age"),
    ],
)
def test_bad_arguments_are_one_line(cli, args, message) -> None:
    res = cli("exporter", *args, "--sysfs-root", BADLY_SEATED)
    assert res.code == 2
    assert message in res.err and len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err


def test_every_scenario_tree_passes_promtool(cli, tmp_path) -> None:
    texts = []
    for name in sorted(os.listdir(SYSFS)):
        if not os.path.isdir(os.path.join(SYSFS, name)):
            continue
        out = tmp_path / name
        out.mkdir()
        res = cli("exporter", "--textfile", str(out), "--sysfs-root", os.path.join(SYSFS, name), "--no-bench")
        assert res.code == 0, (name, res.err)
        texts.append((name, (out / "disksleuth.prom").read_text()))
    by_name = dict(texts)
    assert metric_value(by_name["scenario_usb2_caddy"], "disksleuth_finding", code="usb2_link", severity="warn") == 1
    assert metric_value(by_name["scenario_x1_chipset_slot"], "disksleuth_finding", code="slot_limited") == 1
    assert metric_value(by_name["sata_3g_on_6g"], "disksleuth_finding", code="sata_link_downgraded") == 1
    for _name, text in texts:
        _promtool_check(text)


# --- health cache: real smartctl captures, parsed by the real parser -------------------------------


def test_health_cache_reads_once_per_max_age_and_keeps_the_last_good_reading() -> None:
    calls: list[str] = []
    broken = {"yes": False}

    def reader(path: str):
        calls.append(path)
        if broken["yes"]:
            raise ParseError("asleep")
        with open(os.path.join(SMARTCTL_FIXTURES, "nvme-null-Micron_7450_MTFDKCC3T2TFS-nvme1.json")) as fh:
            return parse_smartctl_json(fh.read())

    clock = {"t": 1000.0}
    cache = exporter.HealthCache(max_age_s=60, reader=reader)
    cache.refresh(["/dev/nvme0n1"], now=lambda: clock["t"])
    cache.refresh(["/dev/nvme0n1"], now=lambda: clock["t"] + 30)  # still fresh: not read again
    assert calls == ["/dev/nvme0n1"]
    health, read_at = cache.get("/dev/nvme0n1")
    assert health is not None and health.model and read_at == 1000.0
    broken["yes"] = True
    clock["t"] += 61
    cache.refresh(["/dev/nvme0n1"], now=lambda: clock["t"])
    assert len(calls) == 2
    assert cache.get("/dev/nvme0n1") == (health, 1000.0)  # a failed read keeps the last good one


def test_health_findings_reach_the_metrics() -> None:
    """A worn drive's health finding shows as disksleuth_finding (health from a real capture)."""
    from dataclasses import replace

    from disksleuth.present.prometheus import exposition
    from disksleuth.probe.block import list_devices

    with open(os.path.join(SMARTCTL_FIXTURES, "nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json")) as fh:
        worn = replace(parse_smartctl_json(fh.read()), percentage_used=91)
    cache = exporter.HealthCache(max_age_s=60, reader=lambda path: worn)
    devices = list_devices(BADLY_SEATED)
    cache.refresh([d.path for d in devices], now=lambda: 1234.0)
    snap = exporter.Snapshot(exporter.disk_states(devices, cache), (), None, "h")
    text = exposition(snap).decode()
    assert metric_value(text, "disksleuth_finding", device="nvme0n1", code="health_worn", severity="warn") == 1
    assert metric_value(text, "disksleuth_health_read_timestamp_seconds", device="nvme0n1") == 1234.0


# --- stored benchmark figures ----------------------------------------------------------------------


def _store_with_sample_run(tmp_path, cli) -> str:
    """A real SQLite store holding the sample run twice, recorded as this host's: once on the test tree's
    nvme0n1, once on a device the tree does not have (vdz)."""
    runs = []
    for device in ("nvme0n1", "vdz"):
        with open(SAMPLE_RUN) as fh:
            doc = json.load(fh)
        doc["run"]["host"]["hostname"] = socket.gethostname()
        doc["run"]["device"] = doc["device"]["name"] = device
        doc["run"].pop("id", None)
        doc["run"]["uuid"] = str(uuid.uuid4())  # two runs, not one imported twice
        runs.append(doc)
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": runs}))
    db = f"sqlite:///{tmp_path}/results.sqlite"
    res = cli("import", str(export), "--db", db)
    assert res.code == 0, res.err
    return db


def test_latest_benchmark_figures(cli, tmp_path) -> None:
    db = _store_with_sample_run(tmp_path, cli)
    with open(SAMPLE_RUN) as fh:
        doc = json.load(fh)
    device = "nvme0n1"
    seq = next(t for t in doc["tests"] if t["id"].startswith("SEQ") and t.get("read_mbps"))
    res = cli("exporter", "--textfile", str(tmp_path), "--db", db, "--sysfs-root", BADLY_SEATED)
    assert res.code == 0, res.err
    text = (tmp_path / "disksleuth.prom").read_text()
    value = metric_value(text, "disksleuth_bench_bytes_per_second", device=device, test=seq["id"], direction="read")
    assert value == pytest.approx(seq["read_mbps"] * 1e6)
    iops = metric_value(text, "disksleuth_bench_iops", device=device, test=seq["id"], direction="read")
    assert iops == pytest.approx(seq["read_iops"])
    p99 = metric_value(text, "disksleuth_bench_latency_seconds", device=device, test=seq["id"], stat="p99")
    assert p99 == pytest.approx(seq["lat_p99_us"] / 1e6)
    stamp = metric_value(text, "disksleuth_bench_timestamp_seconds", device=device, test=seq["id"])
    assert stamp is not None and abs(stamp - time.time()) < 10 * 365 * 86400
    assert metric_value(text, "disksleuth_store_up") == 1
    # vdz is stored but not in this tree (another machine, or a loop device long gone): not exported.
    assert 'device="vdz"' not in text
    _promtool_check(text)


def test_other_hosts_runs_and_a_missing_store_are_not_exported(cli, tmp_path) -> None:
    db = _store_with_sample_run(tmp_path, cli)
    snap = exporter.snapshot(BADLY_SEATED, None, db, hostname="some-other-host")
    assert snap.bench == ()
    missing = tmp_path / "nothing-here.sqlite"
    snap = exporter.snapshot(BADLY_SEATED, None, f"sqlite:///{missing}")
    assert snap.bench == () and "no results store" in (snap.bench_error or "")
    assert not missing.exists()  # the exporter never creates a store


# --- a real Prometheus server scrapes the HTTP endpoint --------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen, timeout_s: float) -> None:
    """SIGTERM, then SIGKILL if it has not gone within timeout_s."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _exporter_process(*args: str) -> Iterator[str]:
    """`disksleuth exporter --listen 127.0.0.1:0 ...`; yields its base URL once it listens."""
    proc = subprocess.Popen(
        [*CLI, "exporter", "--listen", "127.0.0.1:0", "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = ""
        deadline = time.monotonic() + 20
        buf = ""
        while time.monotonic() < deadline:
            line = proc.stdout.readline() if proc.stdout else ""
            if not line:
                break
            buf += line
            if line.startswith("}"):
                break
        doc = json.loads(buf)
        yield doc["exporter"]["url"].removesuffix("/metrics")
    finally:
        _stop(proc, timeout_s=10)
    assert proc.returncode in (0, 143, -15), proc.stderr.read() if proc.stderr else ""


@pytest.mark.slow
def test_http_endpoint_scraped_by_a_real_prometheus(tmp_path) -> None:
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("prometheus missing (Debian package prometheus)")
    with _exporter_process("--sysfs-root", BADLY_SEATED, "--no-bench") as base:
        started = time.monotonic()
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        scrape_s = time.monotonic() - started
        assert scrape_s < 5  # generous: the real figure for 64 devices is in docs/PERFORMANCE.md
        assert metric_value(text, "disksleuth_finding", code="link_downgraded") == 1
        _promtool_check(text)

        host_port = base.removeprefix("http://")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: disksleuth\n    static_configs:\n"
            f"      - targets: ['{host_port}']\n"
        )
        web = f"127.0.0.1:{_free_port()}"
        data = tempfile.mkdtemp(prefix="disksleuth-prom-", dir=tmp_path)
        server = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address={web}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            query = urllib.parse.quote('disksleuth_finding{code="link_downgraded"}')
            result: list = []
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline and not result:
                time.sleep(1)
                url = f"http://{web}/api/v1/query?query={query}"
                with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(url, timeout=5) as resp:
                    result = json.load(resp)["data"]["result"]
            assert result, "Prometheus never saw disksleuth_finding"
            sample = result[0]
            assert sample["metric"]["device"] == "nvme0n1" and sample["metric"]["severity"] == "warn"
            assert sample["metric"]["job"] == "disksleuth" and sample["value"][1] == "1"
            up = urllib.parse.quote('up{job="disksleuth"}')
            with urllib.request.urlopen(f"http://{web}/api/v1/query?query={up}", timeout=5) as resp:
                assert json.load(resp)["data"]["result"][0]["value"][1] == "1"
        finally:
            _stop(server, timeout_s=15)


def test_documented_alert_rules_pass_promtool(tmp_path) -> None:
    """The alert rules in docs/FLEET.md are valid and use metric names the exporter really serves."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool missing (Debian package prometheus)")
    with open(os.path.join(HERE, "..", "docs", "FLEET.md"), encoding="utf-8") as fh:
        doc = fh.read()
    rules = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "disksleuth.rules.yml"
    path.write_text(rules)
    res = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "3 rules found" in res.stdout
    served = set(re.findall(r"disksleuth_[a-z_]+", _served_metric_names()))
    for name in re.findall(r"disksleuth_[a-z_]+", rules):
        assert name in served, name


def _served_metric_names() -> str:
    from disksleuth.present.prometheus import families

    snap = exporter.Snapshot((), (), None, "h")
    return " ".join(f.name for f in families(snap))


def test_hostile_strings_stay_labels(cli, tmp_path) -> None:
    """Quotes, newlines and terminal escapes in sysfs strings neither break the format nor reach a
    terminal that shows /metrics."""
    tree = tmp_path / "tree"
    shutil.copytree(BADLY_SEATED, tree, symlinks=True)
    model = next(p for p in tree.rglob("model") if p.is_file())
    model.write_bytes(b'Evil "model"\nnext} 1\x1b]0;pwned\x07 \\ end')
    # A device name is a directory entry: it can carry escapes too.
    (tree / "sys" / "block" / "nvme0n1").rename(tree / "sys" / "block" / "nvme0n1\x1b[31m")
    out = tmp_path / "out"
    out.mkdir()
    assert cli("exporter", "--textfile", str(out), "--sysfs-root", str(tree), "--no-bench").code == 0
    text = (out / "disksleuth.prom").read_text()
    assert "\x1b" not in text and "\x07" not in text
    assert metric_value(text, "disksleuth_finding", code="link_downgraded") == 1  # the document still parses
    _promtool_check(text)
