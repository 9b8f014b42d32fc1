"""The monitoring mixin (monitoring/): rules pass promtool, each alert fires and stays silent in promtool's unit
tests, every metric named is one the exporter serves, and a real Prometheus scraping a real exporter with the
rules loaded evaluates every dashboard query and every rule without error."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest
from conftest import HERE
from test_exporter import BADLY_SEATED, _exporter_process, _free_port, _stop

MIXIN = os.path.join(HERE, "..", "monitoring")
RULE_FILES = [os.path.join(MIXIN, n) for n in ("prometheus_rules.yaml", "prometheus_alerts.yaml")]
DASHBOARD = os.path.join(MIXIN, "dashboards", "disksleuth.json")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} missing (Debian package prometheus)")
    return path


def _rules() -> list[dict]:
    """Each rule of the mixin's files: {"alert" or "record": name, "expr": text}. A reader for these files' own
    layout (one key a line, `expr: >-` folded over the indented lines below it), not for YAML at large: the
    project has no YAML dependency, and promtool checks the files as YAML."""
    out: list[dict] = []
    for path in RULE_FILES:
        with open(path) as fh:
            lines = fh.read().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\s*- (alert|record): (\S+)", line)
            if m:
                out.append({m.group(1): m.group(2)})
                continue
            m = re.match(r"(\s*)expr: (.*)", line)
            if m and out:
                expr, indent = m.group(2), len(m.group(1))
                if expr == ">-":
                    folded = []
                    for more in lines[i + 1 :]:
                        if len(more) - len(more.lstrip()) <= indent:
                            break
                        folded.append(more.strip())
                    expr = " ".join(folded)
                out[-1]["expr"] = expr
    return out


def _dashboard_exprs() -> list[str]:
    with open(DASHBOARD) as fh:
        dash = json.load(fh)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dash["templating"]["list"] if v.get("definition")]
    return exprs


def _as_query(expr: str) -> str:
    """A dashboard expression as Prometheus gets it with every variable at "All"; label_values(SEL, L) as SEL."""
    expr = expr.replace("$instance", ".*").replace("$device", ".*")
    m = re.fullmatch(r"label_values\((.*), *\w+\)", expr)
    return m.group(1) if m else expr


def test_promtool_check_and_unit_tests_pass():
    promtool = _tool("promtool")
    res = subprocess.run([promtool, "check", "rules", *RULE_FILES], capture_output=True, text=True)
    assert res.returncode == 0 and "SUCCESS" in res.stdout, res.stdout + res.stderr
    res = subprocess.run(
        [promtool, "test", "rules", os.path.join(MIXIN, "tests", "alerts_test.yaml")], capture_output=True, text=True
    )
    assert res.returncode == 0 and "SUCCESS" in res.stdout, res.stdout + res.stderr


def test_every_alert_is_tested_firing_and_silent():
    with open(os.path.join(MIXIN, "tests", "alerts_test.yaml")) as fh:
        text = fh.read()
    # Each case: `alertname: X` then `exp_alerts: []` (silent) or `exp_alerts:` and a list (firing).
    cases = re.findall(r"alertname: (\S+)\n\s*exp_alerts:( \[\])?", text)
    assert cases
    for rule in _rules():
        if "alert" not in rule:
            continue
        mine = [silent for name, silent in cases if name == rule["alert"]]
        assert "" in mine, f"{rule['alert']} is never tested firing"
        assert " []" in mine, f"{rule['alert']} is never tested silent"


def test_every_metric_named_is_served():
    """No typo can hide in a rule or a panel: each metric name is one the exporter serves, or a recording rule."""
    from disksleuth.model.exporter import Snapshot
    from disksleuth.present.prometheus import exporter_families, families

    metrics = families(Snapshot((), (), None, "h")) + exporter_families(0, {})
    # A counter family is named without its samples' `_total`, the name a rule uses.
    served = {m.name for m in metrics} | {f"{m.name}_total" for m in metrics if m.type == "counter"}
    recorded = {r["record"] for r in _rules() if "record" in r}
    exprs = [r["expr"] for r in _rules()] + _dashboard_exprs()
    named = {n for e in exprs for n in re.findall(r"\b(disksleuth[:_][a-z0-9_:]+)", e)}
    assert named and named - served - recorded == set()
    assert {"disksleuth_health_temperature_celsius", "disksleuth_health_errors"} <= named


@pytest.mark.slow
def test_a_real_prometheus_evaluates_every_dashboard_query_and_rule(tmp_path):
    prometheus = _tool("prometheus")
    with _exporter_process("--sysfs-root", BADLY_SEATED, "--no-bench") as base:
        config = tmp_path / "prometheus.yml"
        rules = "".join(f"  - {p}\n" for p in RULE_FILES)
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            f"rule_files:\n{rules}"
            "scrape_configs:\n  - job_name: disksleuth\n    static_configs:\n"
            f"      - targets: ['{base.removeprefix('http://')}']\n"
        )
        web = f"127.0.0.1:{_free_port()}"
        data = tempfile.mkdtemp(prefix="disksleuth-prom-", dir=tmp_path)
        server = subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={data}", f"--web.listen-address={web}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

        def api(path: str, **params: str) -> dict:
            url = f"http://{web}/api/v1/{path}?" + urllib.parse.urlencode(params)
            with urllib.request.urlopen(url, timeout=5) as resp:
                return json.load(resp)

        try:
            deadline = time.monotonic() + 45
            seen: list = []
            while time.monotonic() < deadline and not seen:
                time.sleep(1)
                try:
                    seen = api("query", query="disksleuth_device_info")["data"]["result"]
                except OSError:
                    continue
            assert seen, "Prometheus never scraped the exporter"
            time.sleep(2)  # a few rule evaluations over the scraped series
            answered = {}
            for expr in _dashboard_exprs():
                doc = api("query", query=_as_query(expr))
                assert doc["status"] == "success", (expr, doc)
                answered[expr] = len(doc["data"]["result"])
            # The panels over link metrics answer with data from this tree, not only without error.
            assert any(n for e, n in answered.items() if "disksleuth_finding" in e)
            assert any(n for e, n in answered.items() if "disksleuth_link_ceiling" in e)
            groups = api("rules")["data"]["groups"]
            evaluated = [r for g in groups for r in g["rules"]]
            assert len(evaluated) == len(_rules())
            assert all(r["health"] == "ok" for r in evaluated), [(r["name"], r.get("lastError")) for r in evaluated]
        finally:
            _stop(server, timeout_s=15)
