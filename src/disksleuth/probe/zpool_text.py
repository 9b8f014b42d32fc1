"""`zpool status -P` text -> the pool's tree (pure). ZFS cannot run on the machines disksleuth is tested on
(no zfs module), so this is tested only against real captured output (tests/data/zpool/).

The layout (OpenZFS cmd/zpool/zpool_main.c, status_callback and print_status_config): a header of
"  pool: NAME", " state: STATE", "  scan: ..." lines; "config:"; a table "NAME STATE READ WRITE CKSUM" whose
rows are indented two more columns per level (pool, top-level vdev such as raidz2-0 or mirror-1, then
devices; replacing-N and spare-N nest one level more); section rows "logs", "cache", "spares", "special",
"dedup" with no state; then "errors: ...". Error counts may be abbreviated ("1.68K"). Extra words after the
counts ("(resilvering)", "too many errors", "was /dev/sdv1") are kept as the row's notes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from disksleuth.errors import ParseError
from disksleuth.model.arrays import StackNode

_SECTIONS = ("logs", "cache", "spares", "special", "dedup")
_VDEV_PREFIXES = ("mirror", "raidz", "draid", "replacing", "spare")
MAX_ROWS = 10_000
_SUFFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


@dataclass
class _Row:
    indent: int
    name: str
    state: str | None
    errors: int | None
    extra: str
    children: list[_Row] = field(default_factory=list)


def _count(text: str) -> int | None:
    """'0', '14', '1.68K' -> an integer; None when it is not a count."""
    if not text or len(text) > 12:
        return None
    scale = _SUFFIX.get(text[-1].upper(), 1.0) if not text[-1].isdigit() else 1.0
    number = text[:-1] if scale != 1.0 else text
    try:
        return int(float(number) * scale)
    except ValueError:
        return None


def _row(line: str) -> _Row | None:
    body = line.expandtabs(8)
    indent = len(body) - len(body.lstrip(" "))
    words = body.split()
    if not words or words[0] == "NAME":
        return None
    name = words[0]
    if len(words) == 1:
        return _Row(indent, name, None, None, "")
    state = words[1]
    counts = [_count(w) for w in words[2:5]]
    if len(words) >= 5 and all(c is not None for c in counts):
        errors = sum(c for c in counts if c is not None)
        extra = " ".join(words[5:])
    else:  # spares: "sdz AVAIL", or a row cut short
        errors, extra = None, " ".join(words[2:])
    return _Row(indent, name, state, errors, extra)


def _config_rows(lines: list[str]) -> list[_Row]:
    rows: list[_Row] = []
    inside = False
    for line in lines[:MAX_ROWS]:
        stripped = line.strip()
        if stripped.startswith("config:"):
            inside = True
            continue
        if not inside:
            continue
        if stripped.startswith("errors:") or stripped.startswith("pool:"):
            break
        if not stripped or set(stripped) == {"."}:  # blank lines, and "." where a poster cut rows out
            continue
        row = _row(line)
        if row is not None:
            rows.append(row)
    return rows


def _nest(rows: list[_Row]) -> list[_Row]:
    """Rows into a forest by indentation; a section name ("logs") holds the rows indented under it."""
    top: list[_Row] = []
    stack: list[_Row] = []
    for row in rows:
        while stack and stack[-1].indent >= row.indent:
            stack.pop()
        (stack[-1].children if stack else top).append(row)
        stack.append(row)
    return top


def _node(row: _Row, rebuilding: bool = False) -> StackNode:
    kind_word = row.name.split("-")[0].split(":")[0]  # "raidz2-0" -> "raidz2", "draid2:11d:15c:2s-0" -> "draid2"
    is_vdev = kind_word.startswith(_VDEV_PREFIXES)
    notes = (row.extra,) if row.extra else ()
    # A row with nothing under it is a device, even named like a vdev (draid's distributed spares "draid2-0-0").
    if row.children or row.name in _SECTIONS:
        under_rebuild = rebuilding or kind_word in ("replacing", "spare")
        children = tuple(_node(c, under_rebuild) for c in row.children)
        level = row.name if row.name in _SECTIONS else kind_word if is_vdev else None
        return StackNode(
            row.name,
            "vdev",
            level=level,
            array_state=row.state,
            degraded=sum(1 for leaf in _leaves(children) if leaf.member_state[:1] not in (("online",), ("avail",))),
            member_errors=row.errors,
            children=children,
            notes=notes,
        )
    state = (row.state or "unknown").lower()
    resilvering = "resilvering" in row.extra or (rebuilding and state == "online")
    return StackNode(
        os.path.basename(row.name) if row.name.startswith("/") else row.name,
        "disk" if row.name.startswith("/dev/") else "missing" if state in ("unavail", "removed") else "disk",
        label=row.name,
        member_state=(state, *(("resilvering",) if resilvering else ())),
        member_errors=row.errors,
        notes=notes,
    )


def _leaves(nodes: tuple[StackNode, ...]) -> list[StackNode]:
    return [leaf for n in nodes for leaf in (n.leaves() or (n,))]


def parse_zpool_status(text: str) -> list[StackNode]:
    """Every pool in `zpool status -P` text, as a tree (pool -> vdevs -> devices). Raises ParseError when the
    text holds no pool with a config table."""
    pools: list[StackNode] = []
    blocks: list[list[str]] = []
    for line in text.splitlines()[:MAX_ROWS]:
        if line.strip().startswith("pool:"):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    for block in blocks:
        header = {}
        for line in block:
            key, sep, value = line.strip().partition(":")
            if sep and key in ("pool", "state", "scan") and key not in header:
                header[key] = value.strip()
        forest = _nest(_config_rows(block))
        pool_row = next((r for r in forest if r.name == header.get("pool")), None)
        if pool_row is None:
            continue
        sections = [r for r in forest if r is not pool_row]
        root = _node(_Row(pool_row.indent, pool_row.name, pool_row.state, pool_row.errors, pool_row.extra,
                          [*pool_row.children, *sections]))  # fmt: skip
        data = [c for c in root.children if c.level not in _SECTIONS]
        levels = sorted({c.level for c in data if c.kind == "vdev" and c.level})
        scan = header.get("scan", "")
        action = next((w for w in ("resilver", "scrub") if f"{w} in progress" in scan), None)
        pools.append(
            replace(
                root,
                kind="zfs",
                label=pool_row.name,
                level=", ".join(levels) if levels else ("stripe" if data else None),
                raid_disks=len([leaf for c in data for leaf in (c.leaves() or (c,))]),
                sync_action=action,
                sync_done_pct=_done_pct(block) if action else None,
            )
        )
    if not pools:
        raise ParseError("no pool with a config table in this text: is it the output of zpool status -P?")
    return pools


def _done_pct(block: list[str]) -> float | None:
    """'141G resilvered, 5.55% done, ...' -> 5.55."""
    for line in block:
        for part in line.split(","):
            part = part.strip()
            if part.endswith("% done"):
                words = part[: -len("% done")].split()
                try:
                    return float(words[-1]) if words else None
                except ValueError:
                    return None
    return None
