"""`compare` at the extremes (issue 35 §11), through the CLI on two imported runs (benchmarks/sample_run.json):
a figure of nothing (0.0, or a stored 1e-320) has no ratio: the change is "from nothing" or "to nothing", never
"infx faster"; and an interval wider than its figure (a crafted ci95_pct of 1e15) cannot make a change "same"
("within the intervals"): the change is shown with its direction and said too wide to judge."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import SAMPLE_RUN
from test_json_schema import assert_valid

SEQ = 0  # SEQ1M_Q8T1_read in the sample run: 1,549.07 MB/s, 1,473.8 IOPS


def _import(cli, tmp_path, change_first=None, change_second=None) -> None:  # noqa: ANN001
    with open(SAMPLE_RUN) as fh:
        doc = json.load(fh)
    doc["run"].pop("id", None)
    first, second = copy.deepcopy(doc), copy.deepcopy(doc)
    second["run"]["started_at"] = "2026-11-21T02:23:14+0000"
    second["run"]["finished_at"] = "2026-11-21T02:23:26+0000"
    for run, change in ((first, change_first), (second, change_second)):
        if change:
            change(run["tests"])
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"schema": "disksleuth/1", "kind": "export", "runs": [first, second]}))
    res = cli("import", str(path))
    assert res.code == 0, res


def _set(figure: str, value: float):  # noqa: ANN202
    def change(tests: list[dict]) -> None:
        tests[SEQ][figure] = value

    return change


def _cis(pct: float):  # noqa: ANN202
    def change(tests: list[dict]) -> None:
        for t in tests:
            t["ci95_pct"] = pct

    return change


def _seq_row(doc: dict) -> dict:
    return next(r for r in doc["comparison"]["rows"] if r["test"] == "SEQ1M_Q8T1_read" and r["metric"] == "read_mbps")


@pytest.mark.parametrize("nothing", [0.0, 1e-320])
def test_a_figure_rising_from_nothing_has_no_ratio(cli, tmp_path, nothing: float) -> None:
    _import(cli, tmp_path, change_first=_set("read_mbps", nothing))
    table = cli("compare", "1", "2")
    assert table.code == 0, table
    seq = next(line for line in table.out.splitlines() if line.startswith("SEQ1M_Q8T1_read"))
    assert seq.split()[-2:] == ["from", "nothing"], seq
    assert "inf" not in table.out.replace("info", "")
    markdown = cli("compare", "1", "2", "--format", "markdown").out
    assert "| from nothing |" in markdown and "inf" not in markdown.replace("info", "")
    doc = _strict_json(cli("compare", "1", "2", "--json").out)  # the ratio was Infinity, which is not JSON
    assert_valid(doc, "compare")
    row = _seq_row(doc)
    assert row["ratios"] == [None, None] and row["changes"][1] == "faster"
    assert row["change_notes"] == [None, "from nothing"]
    # The path did not change: "nothing on its path changed", said of the figure in compare's words ("rose infx").
    (said,) = [e for e in doc["comparison"]["explanations"] if e["test"] == "SEQ1M_Q8T1_read"]
    assert said["note"] == "from nothing" and said["figure"] == "SEQ1M_Q8T1_read rose from nothing (0.0 → 1,549 MB/s)"
    assert said["ratio"] is None and "inf" not in said["text"].replace("info", "")


def test_a_figure_falling_to_nothing_says_so(cli, tmp_path) -> None:
    _import(cli, tmp_path, change_second=_set("read_mbps", 0.0))
    table = cli("compare", "1", "2")
    seq = next(line for line in table.out.splitlines() if line.startswith("SEQ1M_Q8T1_read"))
    assert seq.split()[-2:] == ["to", "nothing"], seq
    doc = cli("compare", "1", "2", "--json").json()
    assert_valid(doc, "compare")
    row = _seq_row(doc)
    assert row["ratios"][1] == 0.0 and row["changes"][1] == "slower" and row["change_notes"] == [None, "to nothing"]
    # The other way round, the baseline is nothing: run 1 rose from it.
    back = _seq_row(cli("compare", "2", "1", "--json").json())
    assert back["change_notes"] == [None, "from nothing"] and back["ratios"] == [None, None]


def test_an_interval_wider_than_its_figure_cannot_call_a_change_the_same(cli, tmp_path) -> None:
    """A 6.7e11x change, both runs claiming ±1e15%: it was "same", within what the intervals allow."""
    _import(
        cli,
        tmp_path,
        change_first=lambda t: (_set("read_mbps", 1549.07 / 1e6)(t), _cis(1e15)(t)),
        change_second=lambda t: (_set("read_mbps", 1549.07 * 6.7e11 / 1e6)(t), _cis(1e15)(t)),
    )
    table = cli("compare", "1", "2")
    assert table.code == 0, table
    seq = next(line for line in table.out.splitlines() if line.startswith("SEQ1M_Q8T1_read"))
    assert seq.endswith("670,000,000,000x faster?"), seq
    assert "too wide to judge" in table.out and "#1 ±1e+15%" in table.out
    doc = cli("compare", "1", "2", "--json").json()
    assert_valid(doc, "compare")
    row = _seq_row(doc)
    assert row["changes"][1] == "faster" and row["change_notes"] == [None, "too wide to judge"]
    for e in doc["comparison"]["explanations"]:
        assert "within the two runs' intervals" not in e["text"]
    markdown = cli("compare", "1", "2", "--format", "markdown").out
    assert "670,000,000,000x faster? |" in markdown and "too wide to judge" in markdown


def test_ordinary_intervals_still_judge(cli, tmp_path) -> None:
    """A 5% change on ±8% intervals is still "same" (issue 13), and on ±1% intervals "faster": the cap touches
    only intervals wider than their figure."""
    _import(
        cli,
        tmp_path,
        change_first=_cis(8.0),
        change_second=lambda t: (_set("read_mbps", 1549.07 * 1.05)(t), _cis(8.0)(t)),
    )
    row = _seq_row(cli("compare", "1", "2", "--json").json())
    assert row["changes"][1] == "same" and row["change_notes"] == [None, None]


def test_tight_intervals_judge_a_small_change(cli, tmp_path) -> None:
    _import(
        cli,
        tmp_path,
        change_first=_cis(1.0),
        change_second=lambda t: (_set("read_mbps", 1549.07 * 1.05)(t), _cis(1.0)(t)),
    )
    row = _seq_row(cli("compare", "1", "2", "--json").json())
    assert row["changes"][1] == "faster" and row["change_notes"] == [None, None]


def _strict_json(text: str) -> dict:
    """JSON as the standard has it: Python's json reads Infinity and NaN, which no other reader takes."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_a_figure_relative_to_a_reference_of_nothing_has_no_percentage(cli, tmp_path) -> None:
    """`--relative-to` a run whose figure is a stored 1e-320: "inf%" in the table, and `Infinity` (not JSON) in
    --json, before."""
    _import(cli, tmp_path, change_first=_set("read_mbps", 1e-320))
    table = cli("compare", "2", "--relative-to", "1")
    assert table.code == 0 and "inf" not in table.out.replace("info", ""), table
    seq = next(line for line in table.out.splitlines() if line.startswith("SEQ1M_Q8T1_read"))
    assert seq.split()[-1] == "—", seq
    doc = _strict_json(cli("compare", "2", "--relative-to", "1", "--json").out)
    assert_valid(doc, "compare")
    assert _seq_row(doc)["pct_of_reference"] == [None]
