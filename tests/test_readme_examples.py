"""The README's examples stay true (issue 40, defect 13): its `explain` example is what the command prints today,
every `$ disksleuth ...` line in it is a command the parser takes, and the quick profile's maximum it names is the
one the profile has and the progress bar shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

from conftest import HERE

REPO = os.path.dirname(HERE)


def _readme() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        return fh.read()


def _block_after(text: str, command: str) -> str:
    """The output under `$ command` in a fenced block, up to the next `$ ` line or the fence's end."""
    start = text.index(f"$ {command}\n") + len(command) + 3
    end = text.index("```", start)
    return "\n".join(line for line in text[start:end].splitlines() if not line.startswith("$ ")).rstrip()


def test_the_explain_example_is_what_the_command_prints():
    """Before: the README's `fix:` and `Summary:` lines were an older wording ("The drive could do ~3,545 MB/s on a
    PCIe 3.0 x4 link") than the command printed ("A PCIe 3.0 x4 link, which the drive supports, would carry ...")."""
    command = "disksleuth explain nvme0n1 --read 373MB/s --sysfs-root tests/data/sysfs/scenario_x1_chipset_slot"
    shown = _block_after(_readme(), command)
    width = max(len(line) for line in shown.splitlines())  # the README's terminal: 100 columns
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "disksleuth", *shlex.split(command)[1:]],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert res.returncode == 1, res.stderr  # link_limited is a warning
    assert width <= 100 and res.stdout.rstrip() == shown


def test_every_disksleuth_line_in_the_readme_is_a_command_it_takes():
    """A flag renamed or dropped (or one the README names before it exists) fails here, not for a reader."""
    from disksleuth.cli.app import build_parser

    parser = build_parser()
    lines = re.findall(r"^\$ disksleuth (.+)$", _readme(), flags=re.MULTILINE)
    assert len(lines) >= 10
    for line in lines:
        argv = shlex.split(line.split(" | ")[0])
        try:
            parser.parse_args(argv)
        except SystemExit as exc:  # argparse's way of refusing
            raise AssertionError(f"README: `disksleuth {line}` is refused by the parser") from exc


def test_the_quick_profiles_maximum_is_the_one_the_readme_and_the_progress_bar_say():
    """Before: the README said a quick test stops at 3 s while the progress bar counted to `/4 s` (3 s and its
    0.5 s ramp, rounded)."""
    from disksleuth.present.bench_view import progress_clock
    from disksleuth.profiles import PROFILES

    text = " ".join(_readme().split())
    quick = PROFILES["quick"]
    said = re.search(r"(\d+(?:\.\d+)?) s in the quick one", text)
    assert said and float(said.group(1)) == quick.max_runtime_s
    bar = re.search(r"`/(\d+(?:\.\d+)?) s` in the quick profile", text)
    total = (quick.max_runtime_s or 0.0) + quick.ramp_s
    assert bar and float(bar.group(1)) == total
    assert progress_clock(1.0, total) == f"1/{bar.group(1)} s"


def test_the_80_column_show_example_is_what_the_command_prints(cli, tmp_path, monkeypatch):
    """The README's narrow-terminal example, from the real riscos run it names."""
    shown = _block_after(_readme(), "disksleuth show 1")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    db = str(tmp_path / "s.db")
    assert cli("import", os.path.join(REPO, "tests/data/store/real-runs-export.json"), "--db", db).code == 0
    res = cli("show", "1", "--db", db)
    assert res.code == 0, res.err
    assert res.out.rstrip() == shown


def _runs_as_shown(command: str, expected_rc: int) -> None:
    shown = _block_after(_readme(), command)
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "disksleuth", *shlex.split(command)[1:]],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert res.returncode == expected_rc, res.stderr
    assert res.stdout.rstrip() == shown


def test_the_card_and_one_tool_paste_examples_are_what_the_commands_print():
    """The README's eMMC (`list` of a worn eMMC's tree) and one-tool paste (`explain` of a dmidecode -t slot dump)
    examples, added with their sections, are today's output at 100 columns."""
    _runs_as_shown("disksleuth list --sysfs-root tests/data/sysfs/emmc_worn", 0)
    _runs_as_shown("disksleuth explain tests/data/smbios/csit-sm_zn2.dmidecode-t-slot.txt", 0)


def test_every_finding_code_is_in_the_readmes_table():
    """Every code analysis.codes knows (and `ok`) has a row in the README's "Finding codes" table, and the table names
    no code that does not exist: a new finding is documented where users look it up."""
    from disksleuth.analysis.codes import FINDING_CODES

    text = _readme()
    start = text.index("## Finding codes\n")
    table = text[start : text.index("\n## ", start + 1)]
    rows = set(re.findall(r"^\| `([a-z0-9_]+)` \|", table, flags=re.MULTILINE))
    assert FINDING_CODES | {"ok"} <= rows, sorted(FINDING_CODES - rows)
    assert rows <= FINDING_CODES | {"ok"}, sorted(rows - FINDING_CODES - {"ok"})
