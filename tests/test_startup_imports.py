"""What a command imports before it answers (issue 37: `list --json` took 10.8-13.5x a bare interpreter start: every
command family's modules, the benchmark's among them, and 74 dataclasses built before `list` ran). Each case runs
the command line in a fresh interpreter and reads sys.modules after it: a module imported at the top of a file
where a function would do brings its whole tree back, and these fail. The timing itself is benchmarks/startup.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import SYSFS

# Imported nowhere on the way to `list`'s answer: the store, the reports and charts, the exporter, the live view,
# fio and the benchmark, the capture writer, the arrays' modules on a machine without arrays, and every other
# command's declarations.
NOT_FOR_LIST = (
    "sqlalchemy",
    "matplotlib",
    "numpy",
    "ruptures",
    "prometheus_client",
    "rich",
    "rich.live",
    "jsonschema",
    "disksleuth.store",
    "disksleuth.present.report",
    "disksleuth.present.charts",
    "disksleuth.present.prometheus",
    "disksleuth.present.top_view",
    "disksleuth.present.text",
    "disksleuth.run.exporter",
    "disksleuth.run.bench",
    "disksleuth.run.members",
    "disksleuth.run.top",
    "disksleuth.probe.fio",
    "disksleuth.probe.capture",
    "disksleuth.analysis.members",
    "disksleuth.analysis.confidence",
    "disksleuth.doc.arrays",
    "disksleuth.doc.validate",
    "disksleuth.model.run",
    "disksleuth.cli.measure",
    "disksleuth.cli.history",
    "disksleuth.cli.health",
    "disksleuth.cli.explain",
    "disksleuth.cli.fleet",
    "disksleuth.cli.top",
)
COMMAND_MODULES = ("inventory", "measure", "history", "explain", "health", "fleet", "top")


def _modules_after(*argv: str) -> tuple[int, list[str], str]:
    """(exit code, sys.modules after `disksleuth ARGV` in a new interpreter, what it printed)."""
    script = (
        "import contextlib, io, json, sys\n"
        "from disksleuth.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        code = main({list(argv)!r})\n"
        "    except SystemExit as exc:\n"
        "        code = exc.code\n"
        "print(json.dumps([code, sorted(sys.modules), out.getvalue()]))\n"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    code, modules, out = json.loads(res.stdout)
    return code, modules, out


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """The names (or modules below them) that were imported."""
    return [n for n in names if any(m == n or m.startswith(n + ".") for m in modules)]


def _without(names: tuple[str, ...], *allowed: str) -> tuple[str, ...]:
    return tuple(n for n in names if n not in allowed)


def test_list_of_this_machine_imports_only_its_own_modules():
    code, modules, out = _modules_after("list", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "disksleuth/1" and doc["devices"]
    # An array's members are read with their SMART health (run/members): only where there is one.
    expected = NOT_FOR_LIST if not doc["arrays"] else NOT_FOR_LIST[:6]
    assert _loaded(modules, expected) == []
    # The SMBIOS table's parser only where there is a table (not in a VM like this one, nor in most containers).
    if not os.path.exists("/sys/firmware/dmi/tables/DMI") and not os.path.isdir("/sys/firmware/dmi/entries"):
        assert _loaded(modules, ("disksleuth.probe.smbios",)) == []


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        # A --sysfs-root may be a capture bundle: probe/capture opens either.
        (("list", "--json", "--sysfs-root", os.path.join(SYSFS, "desktop_chipset_m2")), ("disksleuth.probe.capture",)),
        (("list", "--json", "--sysfs-root", os.path.join(SYSFS, "scenario_usb2_caddy")), ("disksleuth.probe.capture",)),
        # A PCIe function is a model.run record (it is stored with each run).
        (
            ("--json", "links", "--sysfs-root", os.path.join(SYSFS, "desktop_amd_chipset")),
            ("disksleuth.probe.capture", "disksleuth.model.run"),
        ),
    ],
    ids=["list-nvme", "list-usb", "links"],
)
def test_list_and_links_import_only_their_own_modules(argv, allowed):
    code, modules, out = _modules_after(*argv)
    assert code == 0 and json.loads(out)["schema"] == "disksleuth/1"
    assert _loaded(modules, _without(NOT_FOR_LIST, *allowed)) == []


def test_list_of_a_machine_with_an_array_still_reads_its_members():
    """The arrays' modules come in where there is an array, and the tree is what it was."""
    code, modules, out = _modules_after("list", "--json", "--sysfs-root", os.path.join(SYSFS, "array_raid1"))
    assert code == 0
    arrays = json.loads(out)["arrays"]
    assert arrays and arrays[0]["kind"] == "md" and arrays[0]["children"]
    assert _loaded(modules, ("disksleuth.doc.arrays", "disksleuth.analysis.members")) == [
        "disksleuth.doc.arrays",
        "disksleuth.analysis.members",
    ]
    assert _loaded(modules, ("sqlalchemy", "matplotlib", "disksleuth.store", "disksleuth.cli.measure")) == []


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ("--json", "--version")], ids=str)
def test_the_overview_imports_no_command(argv):
    """`--help` lists every command from cli/commands.py: no command's module, nothing of run/."""
    code, modules, out = _modules_after(*argv)
    assert code == 0 and out
    assert [m for m in modules if m.startswith("disksleuth.run")] == []
    assert _loaded(modules, tuple(f"disksleuth.cli.{m}" for m in COMMAND_MODULES)) == []
    assert _loaded(modules, ("disksleuth.model", "disksleuth.profiles", "rich", "sqlalchemy")) == []
    if argv == ("--help",):
        assert "top" in out and "list" in out and "exporter" in out


@pytest.mark.parametrize(("command", "module"), [("top", "top"), ("check", "measure"), ("runs", "history")])
def test_a_commands_help_imports_its_declarations_only(command, module):
    code, modules, out = _modules_after(command, "--help")
    assert code == 0 and f"disksleuth {command}" in out
    assert [m for m in modules if m.startswith("disksleuth.run")] == []
    others = tuple(f"disksleuth.cli.{m}" for m in COMMAND_MODULES if m != module)
    assert _loaded(modules, (f"disksleuth.cli.{module}",)) == [f"disksleuth.cli.{module}"]
    assert _loaded(modules, others) == []
    assert _loaded(modules, ("rich", "sqlalchemy", "matplotlib", "disksleuth.store", "disksleuth.model.run")) == []


def test_list_leaves_unattached_devices_unread(cli, monkeypatch):
    """An unattached loop device or unconfigured zram is not shown without --all, and now not read either (32 free
    loop devices cost `list` 12 ms of its start here); with --all it is read and shown as before."""
    from disksleuth.probe import block

    read: list[str] = []
    real = block.read_device

    def reading(name: str, *args, **kwargs):
        read.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(block, "read_device", reading)
    tree = os.path.join(SYSFS, "capture_private_names")
    everything = cli("list", "--json", "--all", "--sysfs-root", tree).json()["devices"]
    assert "zram0" in read and any(d["name"] == "zram0" and not d["size_bytes"] for d in everything)
    read.clear()
    shown = cli("list", "--json", "--sysfs-root", tree).json()["devices"]
    assert "zram0" not in read and {"loop0", "loop1"} <= set(read)
    assert [d["name"] for d in shown] == [d["name"] for d in everything if d["name"] != "zram0"]
