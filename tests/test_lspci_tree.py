"""`lspci -t` / `lspci -tv` trees (issue 21): parents read from real trees (tests/data/paste/lspci-tree and
lspci/rendered; SOURCES.md names each one's repository and licence), hostile input, and properties."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disksleuth.errors import ParseError
from disksleuth.probe.lspci_tree import parse_lspci_tree
from disksleuth.probe.paste_text import read_paste

FAST = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
DATA = os.path.join(os.path.dirname(__file__), "data", "paste")
PUGET = os.path.join(DATA, "lspci-tree", "stelline-puget-wrx90-tv.txt")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _tree_section(path: str) -> str:
    sections = [s for s in read_paste(_read(path)).sections if s.kind == "lspci_tree"]
    assert len(sections) == 1
    return sections[0].text


def test_a_threadripper_tree_with_four_domains_and_nested_switches() -> None:
    parents = parse_lspci_tree(_tree_section(PUGET))
    assert len(parents) == 113
    # Root-complex functions of each of the four domains have no parent.
    for bdf in ("0000:00:00.0", "0000:00:03.1", "0000:20:03.1", "0000:c0:01.1", "0000:e0:07.1"):
        assert parents[bdf] is None
    # An NVMe drive behind three switch levels: 03.1-[01-13] -> 00.0-[02-13] -> 00.0-[03-08] -> 00.0-[04-08] ->
    # 10.0-[05] -> 00.0.
    chain = ["0000:05:00.0"]
    while (up := parents[chain[-1]]) is not None:
        chain.append(up)
    assert chain == ["0000:05:00.0", "0000:04:10.0", "0000:03:00.0", "0000:02:00.0", "0000:01:00.0", "0000:00:03.1"]
    # A sibling drawn lines below its bridge's first child, at the bridge's column: 04.0-[09-0e] is on bus 02.
    assert parents["0000:02:04.0"] == "0000:01:00.0"
    assert parents["0000:0b:00.0"] == "0000:0a:00.0"
    # An empty downstream port ("\-1c.0-[13]--") is still a function; its bus has nothing.
    assert parents["0000:02:1c.0"] == "0000:01:00.0"
    assert not any(bdf.startswith("0000:13:") for bdf in parents)
    # The chipset SATA controller: 03.4-[8b-8e] -> 00.0-[8c-8e] -> 0d.0-[8e] -> 00.0.
    assert parents["0000:8e:00.0"] == "0000:8c:0d.0"
    assert parents["0000:8c:0d.0"] == "0000:8b:00.0"
    assert parents["0000:8b:00.0"] == "0000:20:03.4"
    # A single child drawn after "----" and a bridge whose range has one bus: 05.2-[e1-e2]----00.0-[e2]----00.0.
    assert parents["0000:e2:00.0"] == "0000:e1:00.0"
    # Names with brackets and hex-looking words ("[AMD] Device 14a4", "S4LV008[Pascal]") are not read as tree.
    assert "0000:00:14.a" not in parents
    assert all(re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", bdf) for bdf in parents)


def test_pciutils_rendered_trees() -> None:
    # "\-[0000:2e]---00.0": a second domain whose only function hangs off its root bus.
    phy = parse_lspci_tree(_read(os.path.join(DATA, "lspci", "rendered", "lspci390-tv-cap-phy32.txt")))
    assert phy == {"0000:2e:00.0": None}
    virtio = parse_lspci_tree(_read(os.path.join(DATA, "lspci", "rendered", "lspci390-tv-cap-vendor-virtio.txt")))
    assert virtio == {"0000:00:04.0": None, "0000:00:09.0": None}


def test_without_names_lspci_t_gives_the_same_parents() -> None:
    """`lspci -t` is `-tv` without the names: the real tree with its names cut off reads the same."""
    text = _tree_section(PUGET)
    bare = "\n".join(re.sub(r"(\d\.[0-7])  \S.*$", r"\1", line) for line in text.splitlines())
    assert "Samsung" not in bare
    assert parse_lspci_tree(bare) == parse_lspci_tree(text)


def test_old_pciutils_root_without_domain() -> None:
    # pciutils 2.x drew the root as "-[00]-" (no domain); the domain is then 0000.
    parents = parse_lspci_tree("-[00]-+-00.0\n       +-1c.0-[02]----00.0\n       \\-1f.2")
    assert parents == {"0000:00:00.0": None, "0000:00:1c.0": None, "0000:02:00.0": "0000:00:1c.0", "0000:00:1f.2": None}


def test_first_line_is_named_in_the_error() -> None:
    with pytest.raises(ParseError, match="line 40"):
        parse_lspci_tree("no tree here", first_line=40)


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "junk", "-[", "-[0000:00]-", "-[0000:00]-+-", "\x00" * 100, "[zz:zz]", " |  +-00.0  orphan"],
)
def test_junk_and_truncation_give_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_lspci_tree(text)


def test_a_truncated_tree_gives_what_was_read() -> None:
    text = _tree_section(PUGET)
    cut = text[: text.index("+-[0000:c0]") + 30]  # cut mid-line in the third domain
    parents = parse_lspci_tree(cut)
    assert parents["0000:8e:00.0"] == "0000:8c:0d.0"
    assert "0000:c1:00.0" not in parents


def test_a_paste_starting_mid_tree_skips_what_it_cannot_place() -> None:
    lines = _tree_section(PUGET).splitlines()
    parents = parse_lspci_tree("\n".join(lines[10:]))  # starts inside domain 0000, without its "[0000:00]"
    assert "0000:0b:00.0" not in parents  # its bus is unknown
    assert parents["0000:21:00.0"] == "0000:20:01.1"  # later domains are read


def test_a_one_megabyte_line_is_cut_not_read() -> None:
    parents = parse_lspci_tree("-[0000:00]-+-00.0  " + "x" * (1 << 20) + "\n           \\-01.0")
    assert parents == {"0000:00:00.0": None, "0000:00:01.0": None}
    with pytest.raises(ParseError):
        parse_lspci_tree("-" * (1 << 20))


@FAST
@given(st.text(alphabet=st.sampled_from(list("-+|\\[]0123456789abcdef:. \n")), max_size=400))
def test_tree_alphabet_never_raises_anything_but_parse_error(text: str) -> None:
    try:
        parents = parse_lspci_tree(text)
    except ParseError:
        return
    for bdf, parent in parents.items():
        assert re.fullmatch(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", bdf)
        assert parent is None or parent in parents


@FAST
@given(st.lists(st.sampled_from(_read(PUGET).splitlines()), max_size=60))
def test_shuffled_real_lines_never_raise_anything_but_parse_error(lines: list[str]) -> None:
    with contextlib.suppress(ParseError):
        parse_lspci_tree("\n".join(lines))


@pytest.mark.slow  # megabytes of text: the fast lane has the hypothesis tests above
def test_reading_is_linear_in_the_tree() -> None:
    """Ten times the tree takes about ten times as long (under 15x), not a hundred."""
    text = _tree_section(PUGET)

    def cost(copies: int) -> float:
        big = "\n".join([text] * copies)
        gc.collect()
        gc.disable()  # process CPU time (others share the cores), and no collection in one run only
        try:
            start = time.process_time()
            parse_lspci_tree(big)
            return time.process_time() - start
        finally:
            gc.enable()

    small = min(cost(40) for _ in range(5))
    large = min(cost(400) for _ in range(3))
    assert large < small * 15
