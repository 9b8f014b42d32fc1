"""Argument plumbing: global options before the command, errors under --json, device names, and
options that used to be silently ignored."""

from __future__ import annotations

import json
import os

import pytest
from conftest import DATA, SMARTCTL_FIXTURES, SYSFS

TREE = os.path.join(SYSFS, "scenario_gen4_on_gen3")
SMARTCTL = os.path.join(SMARTCTL_FIXTURES, "nvme-null-CT250P2SSD8-nvme0.json")


def test_json_before_the_command(cli):
    after = cli("list", "--sysfs-root", TREE, "--json")
    before = cli("--json", "list", "--sysfs-root", TREE)
    assert before.code == after.code == 0, before.err
    assert before.json() == after.json()


def test_every_global_option_before_the_command(cli, tmp_path):
    url = f"sqlite:///{tmp_path}/runs.sqlite"
    assert cli("--db", url, "import", os.path.join(DATA, "store", "real-runs-export.json")).code == 0
    res = cli("--json", "--db", url, "runs")
    assert res.code == 0, res.err
    assert res.json()["total"] == 4
    res = cli("--no-color", "--sysfs-root", TREE, "explain", "nvme0n1")
    assert res.code in (0, 1) and "nvme0n1" in res.out, res.err


def test_global_option_a_command_has_no_use_for_is_an_error(cli):
    res = cli("--sysfs-root", TREE, "runs")
    assert res.code == 2 and "--sysfs-root does not apply to 'runs'" in res.err


def test_no_color_flag_removes_colour(cli):
    from disksleuth.present.text import configure, console

    cli("--no-color", "list", "--sysfs-root", TREE)
    assert console().no_color
    configure()


@pytest.mark.parametrize(
    "argv",
    [
        ["--json"],
        ["--json", "show", "--db", "/nonexistent/results.sqlite"],  # no run to default to (the session store has some)
        ["show", "--json", "not-a-number"],
        ["--json", "explain", "nosuchdev", "--sysfs-root", TREE],
        ["list", "--json", "--sysfs-root", "/nonexistent"],
        ["--json", "nosuchcommand"],
    ],
)
def test_errors_under_json_are_one_json_document(cli, argv):
    res = cli(*argv)
    assert res.code == 2
    doc = json.loads(res.out)
    assert doc["schema"] == "disksleuth/1"
    assert set(doc["error"]) == {"code", "message"} and doc["error"]["message"], doc
    assert res.err.startswith("disksleuth: ") and res.err.count("\n") == 1


def test_error_codes_name_the_kind_of_failure(cli):
    assert cli("--json", "explain", "nosuchdev", "--sysfs-root", TREE).json()["error"]["code"] == "device_not_found"
    assert cli("--json", "show", "--db", "/nonexistent/results.sqlite").json()["error"]["code"] == "usage"


def _a_real_disk() -> str:
    names = [n for n in sorted(os.listdir("/sys/block")) if not n.startswith(("loop", "ram", "zram"))]
    if not names:
        pytest.skip("no block device on this machine")
    return names[0]


def test_health_and_explain_accept_the_same_names(cli):
    name = _a_real_disk()  # e.g. vda: `explain vda` works, so `health vda` must find it too
    assert cli("explain", name).code in (0, 1)
    res = cli("health", name)
    assert "no such" not in res.err, res.err
    assert cli("health", "nosuchdev").err == cli("explain", "nosuchdev").err


def test_health_rejects_a_device_and_a_file_together(cli):
    res = cli("health", "/dev/nvme0n1", "--from-smartctl", SMARTCTL)
    assert res.code == 2
    assert "not both" in res.err and res.out == ""


def test_check_commands_prints_the_fio_command_lines(capsys):
    """check --commands reaches the results table (end to end in test_contract.py's terminal run)."""
    from disksleuth.analysis.ceilings import link_chain
    from disksleuth.doc.run import run_from_dict
    from disksleuth.model.run import Run
    from disksleuth.present.check_view import render_check
    from disksleuth.present.text import console
    from disksleuth.probe.block import read_device

    console.cache_clear()  # a console on this test's captured stdout
    with open(os.path.join(DATA, "store", "real-runs-export.json")) as fh:
        doc = json.load(fh)["runs"][1]
    run: Run = run_from_dict(doc)
    device = read_device("nvme0n1", TREE)
    render_check(device, link_chain(device.hops), run, [], "summary", show_commands=True)
    out = capsys.readouterr().out
    assert "fio command lines" in out
    assert f"{run.tests[0].id}: fio " in out.replace("\n", " "), out
    assert "--commands (or fio_command" not in out


@pytest.mark.parametrize(
    "args",
    [
        ["bench", "{tmp}", "--profile", "sustained", "--max-time", "nan", "--no-save"],
        ["bench", "{tmp}", "--profile", "sustained", "--max-time", "inf", "--no-save"],
        ["bench", "{tmp}", "--profile", "sustained", "--recovery", "1e400", "--no-save"],
        ["bench", "{tmp}", "--time", "nan", "--no-save"],
        ["exporter", "--textfile", "{tmp}", "--health-max-age", "inf"],
    ],
)
def test_non_finite_option_values_are_one_line(cli, tmp_path, args) -> None:
    res = cli(*(a.format(tmp=tmp_path) for a in args))
    assert res.code == 2 and "must be positive" in res.err and "internal error" not in res.err, res.err
