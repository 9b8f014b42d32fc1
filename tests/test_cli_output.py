"""Human output at the terminal's width: numbers never cut, lines never wider than the terminal,
no trailing spaces off a terminal, progress on stderr whenever stderr is a terminal."""

from __future__ import annotations

import os
import re

import pytest
from conftest import DATA

EXPORT = os.path.join(DATA, "store", "real-runs-export.json")
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


@pytest.fixture
def store(cli, tmp_path, monkeypatch):
    """Real runs from this project's VM: #1 riscos, #2 mixed, #3 quick on vda, #4 quick on /dev/shm."""
    url = f"sqlite:///{tmp_path}/runs.sqlite"
    assert cli("import", EXPORT, "--db", url).code == 0
    monkeypatch.setenv("DISKSLEUTH_DB", url)
    return url


def _figures(doc: dict) -> list[str]:
    """Every figure of the run's tests as the table prints it (1 or 0 decimals, thousands commas)."""
    out = []
    for t in doc["tests"]:
        for key in ("read_mbps", "write_mbps", "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_p999_us"):
            if t[key] is not None:
                out.append((key, f"{t[key]:,.1f}"))
        for key in ("read_iops", "write_iops", "lat_max_us"):
            if t[key] is not None:
                out.append((key, f"{t[key]:,.0f}"))
    return out


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("run_id", ["1", "3"])
def test_show_never_cuts_a_number_and_fits_the_width(cli, store, monkeypatch, columns, run_id):
    monkeypatch.setenv("COLUMNS", str(columns))
    doc = cli("show", run_id, "--json").json()
    out = cli("show", run_id).out
    assert "…" not in out, out
    for line in out.splitlines():
        assert len(line) <= columns, (columns, line)
    # Throughput and IOPS always print in full; a latency column may be hidden, and says so.
    hidden = re.search(r"hidden at \d+ columns: (.*?)\s\(--json", out, re.S)
    for key, figure in _figures(doc):
        if key.startswith("lat") and hidden:
            continue
        assert re.search(rf"(^|\s){re.escape(figure)}(\s|$)", out, re.M), (columns, key, figure, out)
    if columns == 120:
        assert not hidden, out  # the full table fits a common wide terminal


DROP_ORDER = ["max µs", "p99.9 µs", "lat mean µs", "p50 µs", "p99 µs"]


@pytest.mark.parametrize("columns", [60, 70, 80])
def test_narrow_show_drops_latency_first(cli, store, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    out = cli("show", "3").out
    hidden = re.search(r"hidden at \d+ columns: (.*?)\s\(--json", out, re.S)
    assert hidden, out
    names = set(hidden.group(1).replace("\n", " ").split(", "))
    assert names == set(DROP_ORDER[: len(names)]), (columns, names)  # in the stated order


def test_riscos_reference_column_does_not_wrap(cli, store, monkeypatch):
    """The % of RAM reference sits on its test's line, at every width that shows a table."""
    monkeypatch.setenv("COLUMNS", "80")
    out = cli("show", "1").out
    randrw = next(line for line in out.splitlines() if line.startswith("RND4K_Q1T1_randrw80"))
    assert re.search(r"\d+%/\d+%$", randrw), randrw
    assert not any(line.strip() in ("/", "%") for line in out.splitlines())


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_compare_fits_and_keeps_every_figure(cli, store, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    out = cli("compare", "3", "4").out
    assert "…" not in out, out
    assert all(len(line) <= columns for line in out.splitlines()), out
    from disksleuth.analysis.compare import format_ratio, format_value

    rows = cli("compare", "3", "4", "--json").json()["comparison"]["rows"]
    for row in rows:
        for value in row["values"]:
            assert format_value(value, row["metric"]) in out, (columns, row, out)
        assert format_ratio(row["ratios"][1]) in out, (columns, row, out)


def test_no_trailing_spaces_off_a_terminal(cli, store, tmp_path):
    tree = f"{DATA}/sysfs/sata_3g_on_6g"
    for argv in (("show", "1"), ("compare", "3", "4"), ("runs",), ("list", "--sysfs-root", tree)):
        out = cli(*argv).out
        assert out.strip(), argv
        assert [line for line in out.splitlines() if line != line.rstrip()] == [], argv


def test_progress_clock_never_passes_the_total():
    from disksleuth.present.bench_view import progress_clock

    assert progress_clock(1.2, 2.0) == "1/2 s"
    assert progress_clock(3.0, 2.0) == "3 s"  # not "3/2 s"
    assert progress_clock(3.0, 0.0) == "3 s"


@pytest.mark.parametrize("width", [30, 40, 60])
def test_progress_rate_fits_its_room(width):
    from disksleuth.present.bench_view import progress_rate

    text = progress_rate(2037.5, 759.6, 35331, width)
    assert 0 < len(text) <= width
    assert progress_rate(2037.5, 759.6, 35331, 200) == "read 2,037.5 MB/s  write 759.6 MB/s  35,331 IOPS"


def test_progress_goes_to_a_terminal_stderr_whatever_stdout_is(monkeypatch):
    """`bench DIR > out.txt`: stdout a file, stderr a terminal: live progress (as curl, pip, fio).
    End to end, with a real benchmark, in test_contract.py's terminal run."""
    import argparse
    import io
    import pty

    from disksleuth.cli.env import Environment
    from disksleuth.cli.measure import _events
    from disksleuth.present.bench_view import TtyEvents
    from disksleuth.run.context import QuietEvents

    master, slave = pty.openpty()
    try:
        with open(slave, "w", closefd=False) as terminal:
            monkeypatch.setenv("TERM", "xterm")
            monkeypatch.setattr("sys.stdout", io.StringIO())
            monkeypatch.setattr("sys.stderr", terminal)
            args = argparse.Namespace(json=False, no_color=False)
            events = _events(args, Environment.from_process())
            assert isinstance(events, TtyEvents)
            events.close()
            monkeypatch.setattr("sys.stderr", io.StringIO())  # no terminal at all: nothing drawn
            assert isinstance(_events(args, Environment.from_process()), QuietEvents)
    finally:
        os.close(master)
        os.close(slave)


def test_output_decisions_follow_the_injected_environment():
    """No real terminal needed: the Environment says what is a terminal and what TERM is."""
    import argparse
    import io

    from disksleuth.cli.env import Environment
    from disksleuth.cli.measure import _events, bench_options
    from disksleuth.run.context import QuietEvents

    def env(**kw: object) -> Environment:
        streams = {"stdin": io.StringIO(), "stdout": io.StringIO(), "stderr": io.StringIO()}
        flags = {"stdin_isatty": False, "stdout_isatty": False, "stderr_isatty": False, "environ": {}}
        return Environment(**{**streams, **flags, **kw})  # type: ignore[arg-type]

    args = argparse.Namespace(json=False, no_color=True)
    assert env(stderr_isatty=True).progress_on_stderr
    assert not env(stderr_isatty=True, environ={"TERM": "dumb"}).progress_on_stderr
    assert isinstance(_events(args, env(stderr_isatty=True, environ={"TERM": "dumb"})), QuietEvents)
    bench_args = argparse.Namespace(
        profile="quick", size=None, engine=None, destructive=False, yes=False, time=None, precision=None, baseline=None
    )
    assert bench_options(bench_args, env(stdin_isatty=True, stderr_isatty=True)).interactive
    assert not bench_options(bench_args, env(stdin_isatty=True)).interactive
