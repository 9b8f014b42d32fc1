"""A results store shaped like a fleet: HOSTS hosts x DRIVES drives x RUNS runs per drive, from a real run.

    .venv/bin/python benchmarks/fleet_store.py sqlite:////tmp/fleet.sqlite --hosts 1000 --drives 24
    .venv/bin/python benchmarks/fleet_store.py postgresql://u@127.0.0.1:5432/db --hosts 10 --drives 4 --runs 3

Every run is benchmarks/sample_run.json (a real exported run) with its host, device, serial, model,
firmware, link ceiling, figures, start time and findings varied, deterministically (the same arguments give
the same store): most drives are ok, about 1 in 30 has a warn finding, about 1 in 300 a critical one, and the
rest of the codes are spread over them. `build_store` is imported by benchmarks/fleet_scale.py.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE_RUN = os.path.join(HERE, "sample_run.json")

# (model, firmware, transport, link ceiling MB/s, typical sequential read MB/s)
MODELS = (
    ("Samsung SSD 870 EVO 1TB", "SVT02B6Q", "sata", 570.0, 550.0),
    ("WDC WD40EFRX-68N32N0", "82.00A82", "sata", 570.0, 180.0),
    ("Samsung SSD 980 PRO 2TB", "5B2QGXA7", "nvme", 7090.0, 6900.0),
    ("INTEL SSDPE2KX040T8", "VDV10131", "nvme", 3545.0, 3200.0),
    ("ST16000NM001G-2KK103", "SN03", "sata", 570.0, 260.0),
    ("Micron_5300_MTFDDAK3T8TDS", "D3MU001", "sata", 570.0, 540.0),
)
# (code, severity, share of drives): what a fleet's findings look like
FINDINGS = (
    ("health_critical", "critical", 1 / 300),
    ("link_downgraded", "warn", 1 / 90),
    ("interface_crc_errors", "warn", 1 / 120),
    ("health_worn", "warn", 1 / 200),
    ("sata_link_downgraded", "info", 1 / 60),
    ("behind_chipset", "info", 1 / 40),
)
START = datetime(2026, 11, 1, tzinfo=UTC)


def _sample() -> dict[str, Any]:
    with open(SAMPLE_RUN) as fh:
        doc = json.load(fh)
    doc["run"].pop("id", None)
    return doc


def _device_name(model_transport: str, index: int) -> str:
    if model_transport == "nvme":
        return f"nvme{index}n1"
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "sd" + (letters[index] if index < 26 else letters[index // 26 - 1] + letters[index % 26])


def documents(
    hosts: int, drives: int, runs_per_drive: int, seed: int = 27, first_run: int = 0
) -> Iterator[dict[str, Any]]:
    """The run documents of the fleet, oldest run of every drive first (so ids grow with time): runs (days)
    first_run..runs_per_drive-1 of every drive (the same drives and findings whatever first_run is)."""
    base = _sample()
    rng = random.Random(seed)
    layout = []  # per drive: host, device, model tuple, serial, findings
    for h in range(hosts):
        host = f"host-{h:04d}"
        for d in range(drives):
            model = MODELS[(h + d) % len(MODELS)] if d % 3 else MODELS[h % len(MODELS)]
            found = [(code, sev) for code, sev, share in FINDINGS if rng.random() < share]
            layout.append((host, _device_name(model[2], d), model, f"SER-{h:04d}-{d:02d}", found))
    for r in range(first_run, runs_per_drive):
        when = START + timedelta(days=r)
        for i, (host, device, model, serial, found) in enumerate(layout):
            doc = copy.deepcopy(base)
            name, firmware, transport, ceiling_mbps, read_mbps = model
            run = doc["run"]
            run["uuid"] = str(uuid.UUID(int=(r << 64) | i))
            run["kind"] = "check"
            started = when + timedelta(seconds=i)
            run["started_at"] = started.strftime("%Y-%m-%dT%H:%M:%S%z")
            run["finished_at"] = (started + timedelta(seconds=12)).strftime("%Y-%m-%dT%H:%M:%S%z")
            run["host"]["hostname"] = host
            run["device"] = device
            run["target"] = f"/dev/{device}"
            dev = doc["device"]
            dev.update(name=device, path=f"/dev/{device}", model=name, firmware=firmware, serial=serial)
            dev["transport"] = transport
            dev["link"]["current_ceiling_mbps"] = ceiling_mbps
            dev["link"]["capable_ceiling_mbps"] = ceiling_mbps
            # 1 in 500 drives reads at a third of its siblings: unlike_siblings finds it
            slow = (i * 7919) % 500 == 0
            scale = (read_mbps / 1549.07) * (0.34 if slow else 1.0 + ((i * 31 + r) % 11 - 5) / 200)
            for t in doc["tests"]:
                for k in ("read_mbps", "read_iops", "write_mbps", "write_iops"):
                    if t.get(k) is not None:
                        t[k] = round(t[k] * scale, 2)
            doc["findings"] = [
                {"code": c, "severity": s, "message": f"{device} on {host}: {c}", "evidence": {}, "hint": ""}
                for c, s in found
            ] or [{"code": "ok", "severity": "ok", "message": f"{device} on {host}: ok", "evidence": {}, "hint": ""}]
            doc["summary"] = found[0][0] if found else "ok"
            yield doc


def build_store(url: str, hosts: int, drives: int, runs_per_drive: int) -> None:
    """Fill the store at `url` (created when missing) with hosts x drives x runs_per_drive runs, through
    Store.import_runs (the path `disksleuth import` takes, in its batches), without writing a bundle."""
    from disksleuth.store.db import Store

    with Store(url) as store:
        store.import_runs(documents(hosts, drives, runs_per_drive))


def write_bundle(path: str, docs: Iterator[dict[str, Any]]) -> int:
    """An export bundle (the shape `disksleuth export` writes) of `docs`, written a run at a time; returns
    the runs written."""
    written = 0
    with open(path, "w") as fh:
        fh.write('{\n "schema": "disksleuth/1",\n "kind": "export",\n "runs": [')
        for doc in docs:
            fh.write(("," if written else "") + "\n" + json.dumps(doc, indent=1))
            written += 1
        fh.write("\n ]\n}\n")
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("url", help="the store to fill (sqlite:///PATH or postgresql://...)")
    p.add_argument("--hosts", type=int, default=1000)
    p.add_argument("--drives", type=int, default=24)
    p.add_argument("--runs", type=int, default=1, help="runs per drive")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    build_store(args.url, args.hosts, args.drives, args.runs)
    n = args.hosts * args.drives * args.runs
    took_s = time.perf_counter() - t0
    print(f"{n:,} runs in {took_s:.1f} s ({n / took_s:,.0f} runs/s) into {args.url}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
