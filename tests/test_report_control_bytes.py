"""The HTML report shows stored names as the terminal shows them (issue 35 §13): an imported run whose device,
host, model and target hold ESC sequences and BEL put them raw into the report's history heading ("History of
vd<ESC>[31m<BEL>a") and its "too little history" line. The file holds no control byte but newline and tab, and each
name reads as `show` prints it (present.text.safe_text: \\x1b, \\x07)."""

from __future__ import annotations

import html
import re

from conftest import sample_export

from disksleuth.present.text import safe_text

DEVICE = "vd\x1b[31m\x07a"
HOST = "host\x1b]0;owned\x07name"
MODEL = "Model\x1b[31m\x07X\x7f\x9b\u202e"
TARGET = "/tmp/\x1b[2J\x1b[31mRED\x07target"


def _hostile(doc: dict) -> None:
    doc["run"]["device"] = DEVICE
    doc["run"]["target"] = TARGET
    doc["run"]["host"]["hostname"] = HOST
    doc["device"]["name"] = DEVICE
    doc["device"]["model"] = MODEL


def test_the_report_holds_no_control_byte_and_shows_names_as_the_terminal_does(cli, tmp_path) -> None:
    res = cli("import", sample_export(tmp_path, _hostile))
    assert res.code == 0, res
    out = tmp_path / "report.html"
    res = cli("report", "-o", str(out))
    assert res.code == 0, res
    data = out.read_bytes()
    raw = re.findall(rb"[\x00-\x08\x0b-\x1f\x7f]", data)
    assert not raw, [data[max(0, data.index(b) - 60) : data.index(b) + 10] for b in raw[:3]]
    page = data.decode("utf-8")
    assert not re.search("[\x80-\x9f\u202a-\u202e]", page)  # C1 controls and bidi overrides neither
    # The names as the terminal shows them: the history heading and the baseline's words carried them raw.
    assert f"<h3>History of {html.escape(safe_text(DEVICE, markup=False))}, measured this way</h3>" in page
    assert html.escape(safe_text(HOST, markup=False)) in page
    shown = cli("show", "1").out
    for name in (MODEL, TARGET):
        visible = safe_text(name, markup=False)
        assert "\\x1b[31m" in visible or "\\x1b[2J" in visible
        assert visible in shown  # the terminal's form...
        assert html.escape(visible) in page  # ...is the report's
