"""An export bundle read one run at a time: `import` of a fleet's bundle (6,000 runs, 119 MB) held the whole
file, then all its values (625 MB at peak); now memory is one window of the file and one run.

Why not a general incremental JSON parser (ijson): an export is always one object whose `runs` list holds
the run documents, and each run is small (10-40 KB). So a byte scanner finds where each value of the
envelope ends (skipping strings whole with one regular expression, counting brackets between them), and
each run is then decoded on its own: by json's C decoder when its text is small (a hostile run of 1 MB can
take at most ~30 MB of values, so no budget is needed), else by store.boundedjson within a budget of a few
times its size, as the whole file was decoded before. No new dependency, and json's own speed for the runs
that are real (ijson's pure-Python backend is slower than json by ~20x, and its C backend needs yajl).

Pure: no SQLAlchemy. Every problem is a ParseError of one line naming the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from disksleuth.errors import ParseError, first_line, json_problem
from disksleuth.store import boundedjson

_READ_BYTES = 1 << 20
_MAX_READ_BYTES = 64 << 20  # at most this much a read: a window near the bound holds the bound, not twice it
# A run larger than this is decoded within a budget (boundedjson); smaller ones by json's C decoder, whose
# worst case (a run of `{}` or of unique keys) takes ~25 times the text.
FAST_DECODE_BYTES = 1 << 20
# No run, nor any other value of the envelope, may be larger: the whole file's bound before streaming.
MAX_VALUE_BYTES = 256 << 20
# What the decoded values of a large run may take in memory, per byte of its text, plus a floor. A real run
# takes 2x (indented, as `export` writes it) to 3.6x (compact): series points are small dicts of floats.
VALUES_PER_BYTE = 5
VALUES_FLOOR_BYTES = 64 << 20
ENVELOPE_DEPTH = 2  # the bundle and its runs list, above each run document

# No possessive quantifiers (`*+`, `++`): Python 3.11.2's re (Debian 12's) gets a possessive repeat of a group
# wrong (later 3.11 releases fix it): `_TO_BRACKET` ran past a nested container, so every valid export read as
# "not JSON" in CI. Without them, a plain repeat of a group keeps a state per turn, so its turns are bounded
# (_TURNS; the loop in _container_end goes on where a bounded match stopped), and a run of text outside strings
# is taken whole by a lookahead and a backreference (a lookahead is atomic), so a failed attempt never tries the
# ways of splitting it.
_TURNS = 4096
# A string keeps its possessive repeats: without them a string of 10 million escapes kept a state per escape
# (1.1 GB); with them 0 MB, and this form (no alternatives inside) reads strings as json does on 3.11.2 too
# (tests/test_export_stream_system_python.py).
_STR = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'


def _text(name: bytes) -> bytes:
    return rb"(?=(?P<" + name + rb'>[^"{}\[\]]+))(?P=' + name + rb")"


def _flat(name: bytes) -> bytes:
    return rb"(?:" + _text(name) + b"|" + _STR + rb"){0,%d}" % _TURNS


# Everything up to the next bracket that opens or closes a nested container, or an unfinished string: text
# outside strings, whole strings, and whole containers with none inside (a series point), so the loop in
# Python runs once per nested container, not once per bracket.
_TO_BRACKET = re.compile(
    rb"(?:" + _text(b"t") + b"|" + _STR + rb"|\{" + _flat(b"o") + rb"\}|\[" + _flat(b"l") + rb"\]){0,%d}" % _TURNS,
    re.DOTALL,
)
_STRING = re.compile(_STR, re.DOTALL)
# Inside a string, from after its quote: stops at the closing quote, or at the window's end (before a
# backslash the window ends on), where it can go on after the next read.
_STRING_BODY = re.compile(_STR[1:-1], re.DOTALL)
_SCALAR = re.compile(rb"[^\s,\]}:]*")
_WS = re.compile(rb"[ \t\n\r]*")
# Where a run of the runs list closes when written indented: `export` (json indent=1) puts its brace on a line
# of its own two spaces in, a nested container's three or more.
_RUN_END = re.compile(rb"\n {0,2}\}")


class _Refused(Exception):
    """Not an export, said in `reason` (the file's name is added by the reader)."""

    def __init__(self, reason: str):
        self.reason = reason


def _refuse_constant(word: str) -> Any:
    raise boundedjson.Constant(word)


class ExportReader:
    """The run documents of one export file, in order, from a binary stream (a file, or standard input).
    `runs()` yields each decoded run (not yet checked, see store.files); `envelope` holds the bundle's
    other members once read. Raises ParseError."""

    def __init__(self, stream: BinaryIO, name: str):
        self.stream = stream
        self.name = name
        self.buf = bytearray()
        self.pos = 0  # where reading goes on, in buf
        self.lines_before = 0  # newlines in the bytes already dropped from buf, for line numbers
        self._counted_at = self._counted_lines = 0  # newlines in buf[:_counted_at] (_lineno)
        self.eof = False
        self.envelope: dict[str, Any] = {}
        self.reading = "a value"  # what is being read, as a refusal names it: "run 3"
        from disksleuth.doc.validate import MAX_DEPTH

        self.max_depth = MAX_DEPTH + ENVELOPE_DEPTH

    # --- the window of bytes ---------------------------------------------------------------------

    def _more(self, keep_from: int) -> int | None:
        """Read on, dropping what lies before `keep_from`: returns how far positions moved back, or None at
        the end of the file (then nothing is dropped)."""
        if self.eof:
            return None
        # At least as much again as is held: a long value is read in O(n) copies, not O(n^2 / window). But
        # never much past the bound of one value: a window already near it grows by what reaching it takes.
        held = len(self.buf) - keep_from
        chunk = self.stream.read(max(_READ_BYTES, min(held, _MAX_READ_BYTES, MAX_VALUE_BYTES + 1 - held)))
        if not chunk:
            self.eof = True
            return None
        if keep_from:
            self.lines_before += self.buf.count(b"\n", 0, keep_from)
            del self.buf[:keep_from]
            self._counted_at = self._counted_lines = 0
            self.pos -= keep_from
        self.buf += chunk
        return keep_from

    def _lineno(self, at: int) -> int:
        # Counted on from the last position asked (runs come in order): counting from the window's start for
        # every run cost O(window) a run, a fifth of an import's CPU.
        if at < self._counted_at:
            self._counted_at = self._counted_lines = 0
        self._counted_lines += self.buf.count(b"\n", self._counted_at, at)
        self._counted_at = at
        return self.lines_before + self._counted_lines + 1

    def _not_json(self, msg: str, at: int) -> ParseError:
        return ParseError(f"{self.name}: not JSON ({json_problem(msg, self._lineno(at))})")

    def _skip_ws(self) -> None:
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.buf) or self._more(self.pos) is None:
                return

    def _peek(self) -> bytes:
        self._skip_ws()
        return bytes(self.buf[self.pos : self.pos + 1])

    # --- one value -------------------------------------------------------------------------------

    def _value_end(self, depth: int) -> int:
        """Where the value at self.pos ends (reading on as needed); self.pos may move back as the
        window drops what was read before it, never past the value's start."""
        start = self.pos
        first = bytes(self.buf[start : start + 1])
        if first in (b"{", b"["):
            return self._container_end(depth)
        string = first == b'"'
        regex = _STRING_BODY if string else _SCALAR
        scan = start + 1 if string else start
        while True:
            # Read on from where the last look stopped, never from the value's start again: each byte once.
            scan = regex.match(self.buf, scan).end()  # type: ignore[union-attr]  # always matches
            if scan < len(self.buf) and (not string or self.buf[scan] == ord('"')):
                return scan + 1 if string else scan
            if self._too_long():
                raise self._too_large()
            shift = self._more(self.pos)
            if shift is None:
                if string:
                    raise self._not_json("Unterminated string starting at", self.pos)
                return scan
            scan -= shift

    def _container_end(self, depth: int) -> int:
        # Scanning starts inside the value: _TO_BRACKET skips a flat container whole, and from the value's own
        # bracket it skipped a flat run ({"x": 1}) and its closing brackets too, and read the list's end as the run's.
        buf_pos = self.pos + 1  # scanning position; self.pos stays at the value's start
        level = 1
        if depth + level > self.max_depth:
            raise boundedjson.TooDeep("too deep")
        string_at = -1  # the opening quote of a string the window does not hold whole, read up to buf_pos
        while True:
            if string_at < 0:
                buf_pos = _TO_BRACKET.match(self.buf, buf_pos).end()  # type: ignore[union-attr]  # always matches
                if buf_pos < len(self.buf) and not self._at_bracket_or_open_string(buf_pos):
                    continue  # the match stopped at its bound of turns, mid-text: scan on
                if buf_pos < len(self.buf) and self.buf[buf_pos] != ord('"'):
                    char = self.buf[buf_pos]
                    buf_pos += 1
                    if char in b"{[":
                        level += 1
                        if depth + level > self.max_depth:
                            raise boundedjson.TooDeep("too deep")
                    else:
                        level -= 1
                        if level <= 0:
                            return buf_pos
                    continue
                if buf_pos < len(self.buf):
                    string_at, buf_pos = buf_pos, buf_pos + 1
            if string_at >= 0:
                # The string is read on from where the last look stopped: from its quote again after every read,
                # a long string was scanned twice per read, whole.
                buf_pos = _STRING_BODY.match(self.buf, buf_pos).end()  # type: ignore[union-attr]  # always matches
                if buf_pos < len(self.buf) and self.buf[buf_pos] == ord('"'):
                    string_at, buf_pos = -1, buf_pos + 1
                    continue
            # The window ends inside a string or between brackets: read on. The value's size is all the window
            # holds from its start, not the scanning position: that one stayed at the opening quote of a string
            # the window did not hold whole, and a run holding one endless string grew the window without bound.
            if self._too_long():
                raise self._too_large()
            shift = self._more(self.pos)
            if shift is None:
                if string_at >= 0:
                    raise self._not_json("Unterminated string starting at", string_at)
                raise self._not_json("Expecting value", len(self.buf))
            buf_pos -= shift
            if string_at >= 0:
                string_at -= shift

    def _at_bracket_or_open_string(self, buf_pos: int) -> bool:
        """Whether _TO_BRACKET stopped where it must (a bracket, or a string the window does not hold whole)."""
        char = self.buf[buf_pos]
        return char in b"{}[]" or (char == ord('"') and _STRING.match(self.buf, buf_pos) is None)

    def _too_long(self) -> bool:
        """Whether the value at self.pos, not yet whole in the window, is already past the bound."""
        return len(self.buf) - self.pos > MAX_VALUE_BYTES

    def _too_large(self) -> _Refused:
        return _Refused(f"{self.reading} is larger than {MAX_VALUE_BYTES >> 20} MiB")

    def _decode(self, depth: int) -> Any:
        """The value at self.pos, decoded; self.pos moves past it."""
        end = self._value_end(depth)
        start = self.pos
        first_line = self._lineno(start)
        with memoryview(self.buf) as view:  # one copy: a slice of the bytearray, then bytes of it, was two
            raw = bytes(view[start:end])
        if len(raw) > FAST_DECODE_BYTES:  # its bytes are in `raw` now: none held twice while it is decoded
            self.lines_before += self.buf.count(b"\n", 0, end)
            del self.buf[:end]
            self._counted_at = self._counted_lines = 0
            end = 0
        try:
            if len(raw) <= FAST_DECODE_BYTES:
                value = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
            else:
                budget = max(VALUES_FLOOR_BYTES, VALUES_PER_BYTE * len(raw))
                value = boundedjson.loads(raw, budget, self.max_depth - depth)
        except UnicodeDecodeError:
            raise boundedjson.NotUtf8("not UTF-8") from None
        except (json.JSONDecodeError, boundedjson.JsonError) as exc:
            where = first_line + exc.lineno - 1
            raise ParseError(f"{self.name}: not JSON ({json_problem(exc.msg, where)})") from None
        except boundedjson.OverBudget:
            raise _Refused(
                f"its values would take over {budget >> 20} MiB of memory, more than {VALUES_PER_BYTE} times its size"
            ) from None
        except RecursionError:
            raise boundedjson.TooDeep("too deep") from None
        self.pos = end
        return value

    def _decode_as_exported(self) -> tuple[Any] | None:
        """The run at self.pos as `export` writes it (indented, its closing brace on a line of its own), decoded
        by json alone: (value,), and self.pos moves past it; else None and nothing moved (_decode reads it,
        with every bound and message). Scanning a run for its end took twice as long as json's decoding
        of it (0.2 ms against 0.09 for a quick run with its series). The guess is safe: json decodes the text
        only if it is exactly one whole value, which is where the scan would end too (a raw newline never
        lies inside a JSON string); its size is bounded as the fast decoding is. How deep it nests is then
        bounded by the run's checks (check_run_doc), which refuse what is deeper than any real run."""
        found = _RUN_END.search(self.buf, self.pos, self.pos + FAST_DECODE_BYTES)
        if found is None:
            return None
        end = found.end()
        try:
            with memoryview(self.buf) as view:
                value = json.loads(bytes(view[self.pos : end]).decode("utf-8"), parse_constant=_refuse_constant)
        except (ValueError, RecursionError, boundedjson.Constant):  # JSONDecodeError and UnicodeDecodeError too
            return None
        self.pos = end
        return (value,)

    def _expect(self, char: bytes, msg: str) -> None:
        if self._peek() != char:
            raise self._not_json(msg, self.pos)
        self.pos += 1

    # --- the bundle ------------------------------------------------------------------------------

    def runs(self) -> Iterator[Any]:
        """Each element of the bundle's runs list, decoded, in order. The envelope's other members are
        read as they come (in any order); its schema is checked at the end, and before the runs when it
        comes first (as `export` writes it)."""
        try:
            yield from self._runs()
        except _Refused as exc:
            raise ParseError(f"{self.name}: not a disksleuth export ({exc.reason})") from None
        except boundedjson.Constant as exc:
            raise ParseError(f"{self.name}: not JSON ({exc.word} is not a number JSON allows)") from None
        except boundedjson.NotUtf8:
            raise ParseError(f"{self.name}: not UTF-8 text, not a disksleuth export") from None
        except boundedjson.TooDeep:
            raise ParseError(f"{self.name}: nested too deeply to be a disksleuth export") from None
        except ParseError:
            raise
        except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
            raise ParseError(f"{self.name}: not a disksleuth export ({first_line(exc)[:80]})") from None

    def _runs(self) -> Iterator[Any]:
        from disksleuth.doc import SCHEMA

        not_export = _Refused(f"expected schema {SCHEMA} and a runs list")
        first = self._peek()
        if first != b"{":
            if first == b"[":
                raise not_export  # a list is never an export: refused before decoding any of it
            if not first:
                raise self._not_json("Expecting value", self.pos)
            self._decode(0)  # a JSON error says so; a string or a number is no export
            raise not_export
        self.pos += 1
        seen_runs = False
        if self._peek() == b"}":
            raise not_export
        while True:
            if self._peek() != b'"':
                raise self._not_json("Expecting property name enclosed in double quotes", self.pos)
            key = self._decode(1)
            self._expect(b":", "Expecting ':' delimiter")
            self._skip_ws()
            if key == "runs" and not seen_runs and self._peek() == b"[":
                if "schema" in self.envelope and self.envelope["schema"] != SCHEMA:
                    raise not_export
                seen_runs = True
                yield from self._run_list()
            elif key == "runs":
                raise not_export  # not a list, or a second one
            else:
                value = self._decode(1)
                if key in ("schema", "kind", "exported_at"):
                    self.envelope[key] = value
            char = self._peek()
            self.pos += 1
            if char == b"}":
                break
            if char != b",":
                raise self._not_json("Expecting ',' delimiter", self.pos - 1)
        self._skip_ws()
        if self.pos < len(self.buf):
            raise self._not_json("Extra data", self.pos)
        if not seen_runs or self.envelope.get("schema") != SCHEMA:
            raise not_export

    def _run_list(self) -> Iterator[Any]:
        self.pos += 1  # the [
        if self._peek() == b"]":
            self.pos += 1
            return
        count = 0
        while True:
            self._skip_ws()
            count += 1
            self.reading = f"run {count}"
            fast = self._decode_as_exported()
            yield fast[0] if fast else self._decode(ENVELOPE_DEPTH)
            self.reading = "a value"
            char = self._peek()
            self.pos += 1
            if char == b"]":
                return
            if char != b",":
                raise self._not_json("Expecting ',' delimiter", self.pos - 1)
