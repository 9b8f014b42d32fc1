"""`lspci -t` and `lspci -tv` text (pciutils ls-tree.c) read into parents: each function's full BDF and the bridge
above it (pure).

The drawing, from pciutils' ls-tree.c and the real trees in tests/data/paste/lspci-tree and lspci/rendered:
- a domain and its root bus: "-[0000:00]-" ("-+-[0000:00]-" and " +-[0000:20]-" / " \\-[0000:e0]-" when there are
  several); old pciutils without domains print "-[00]-";
- a function: "NN.F" after "+-" (more siblings follow), "\\-" (the last one), "--"/"---" (an only child);
  with -v its name follows after two spaces;
- a bridge: its function followed by "-[SS-EE]--" or "-[SS]--" (the secondary bus, and the subordinate one); its
  children are on bus SS, drawn to the right of the "[" on the same line and on the lines below.
So the column of each token says where it belongs: a function at column c belongs to the innermost bus opened
left of c. One pass, each bus pushed and popped once: linear in the text.
"""

from __future__ import annotations

import re

from disksleuth.errors import ParseError
from disksleuth.probe.paste_text import iter_lines

# The tree is drawn with these; anything else after a function (its -v name) ends the line's drawing.
_CONNECTORS = re.compile(r"[ |+\\-]+")
# "[0000:00]": a domain's root bus. pciutils prints 4 hex digits; VMD domains have 5 ("[10000:e0]").
_DOMAIN = re.compile(r"\[([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2})\]")
# "[01]" or "[61-73]": a bridge's secondary (and subordinate) bus; at the start of a line, an old root bus.
_BUS = re.compile(r"\[([0-9a-fA-F]{2})(?:-[0-9a-fA-F]{2})?\]")
_FUNCTION = re.compile(r"([0-9a-fA-F]{2})\.([0-7])")


def parse_lspci_tree(text: str, first_line: int = 1) -> dict[str, str | None]:
    """Every function in the tree by full BDF ("0000:01:00.0") -> the BDF of the bridge above it, or None for a
    function on a root bus. ParseError when the text holds no tree at all.

    Lines the tree cannot place (a paste that starts mid-tree, with no domain above) are left out."""
    parents: dict[str, str | None] = {}
    # Open buses, innermost last: (column of "[", domain, bus, the bridge's BDF or None for a root bus).
    stack: list[tuple[int, str, str, str | None]] = []
    for line in iter_lines(text):
        _read_line(line, stack, parents)  # cut to the normaliser's limit already
    if not parents:
        raise ParseError(f"no lspci -t tree in the text (from line {first_line})")
    return parents


def _read_line(line: str, stack: list[tuple[int, str, str, str | None]], parents: dict[str, str | None]) -> None:
    pos, n = 0, len(line)
    last_fn: str | None = None  # the function just read on this line: a "[" right after it is its secondary bus
    while pos < n:
        m = _CONNECTORS.match(line, pos)
        if m:
            if last_fn is not None and not m.group().startswith("-"):
                return  # "00.0  Samsung ...": the -v name, not drawing
            pos = m.end()
            continue
        col = pos
        m = _DOMAIN.match(line, pos)
        if m:
            _close(stack, col)
            stack.append((col, m.group(1).lower(), m.group(2).lower(), None))
            last_fn, pos = None, m.end()
            continue
        m = _BUS.match(line, pos)
        if m:
            if last_fn is not None:
                domain = last_fn.split(":")[0]
                stack.append((col, domain, m.group(1).lower(), last_fn))
            elif not stack or col <= stack[0][0]:
                # "-[00]-+-00.0": a root bus drawn by pciutils before domains were printed (2.x); domain 0000.
                _close(stack, col)
                stack.append((col, "0000", m.group(1).lower(), None))
            else:
                return
            last_fn, pos = None, m.end()
            continue
        m = _FUNCTION.match(line, pos)
        if m and (m.end() == n or line[m.end()] in " -"):
            _close(stack, col)
            if not stack:
                return  # no domain above it (the paste starts mid-tree): its bus is unknown
            _, domain, bus, bridge = stack[-1]
            bdf = f"{domain}:{bus}:{m.group(1).lower()}.{m.group(2)}"
            parents.setdefault(bdf, bridge)
            last_fn, pos = bdf, m.end()
            continue
        return  # anything else: not tree drawing


def _close(stack: list[tuple[int, str, str, str | None]], col: int) -> None:
    """A token at this column ends every bus opened at or right of it (those were a previous sibling's)."""
    while stack and stack[-1][0] >= col:
        stack.pop()
