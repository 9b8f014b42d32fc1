"""JSON from outside (an `import` file) decoded within a memory budget and a depth limit.

`json.loads` builds every value before anything can look at them, and small JSON makes large Python:
`{}` is 2 bytes of text and 64 of dict, a unique key of 9 bytes costs about 90. A 100 MB export of junk
keys peaked at 2.56 GB. This decoder charges each value what Python allocates for it (sys.getsizeof,
in the allocator's 16-byte steps) as it builds it, and stops as soon as the total passes the budget or
the nesting passes the limit: a hostile file fails early, at a cost bounded by the budget.

It reads the bytes themselves, one string at a time (json's own C scanstring unescapes), so no str of
the whole file is ever made: one 4-byte character in a text of ASCII would make such a str four times
the file's size. The grammar is RFC 8259's, as `json.loads` (strict) accepts it, minus NaN and Infinity.
"""

from __future__ import annotations

import re
import sys
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, missing from typeshed
from typing import Any

from disksleuth.errors import json_problem

_WS = re.compile(rb"[ \t\n\r]*")
_WS_BYTES = (b" ", b"\t", b"\n", b"\r")
_NUMBER = re.compile(rb"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_PLAIN_STRING = re.compile(rb'[^"\\\x00-\x1f]*+"')  # the common case: no escape, no control character
# Possessive, in the form exportstream._STR reads strings with (no alternatives inside a repeat; Debian 12's
# 3.11.2 gets other possessive forms wrong): `(?:a|\\b)*` kept a state per character, and a run of 4 million
# escapes (12 MB) took 1 GB, a 256 MiB one 20 GB.
_ESCAPED_STRING = re.compile(rb'[^"\\\x00-\x1f]*+(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*+)*+"')
_PLAIN_KEY = re.compile(rb'"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
# The commonest member of a run document (every series point is five): "name": number, then , or }.
_NUMBER_MEMBER = re.compile(
    rb'"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*(-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)[ \t\n\r]*([,}])'
)
_CONSTANTS = (b"NaN", b"Infinity", b"-Infinity")

# Charged while a container grows (then corrected to its real size): a dict entry costs up to ~46
# bytes just after the table doubles, a list slot 8.
_DICT_ENTRY_BYTES = 46
_LIST_SLOT_BYTES = 8
_MEMO_ENTRY_BYTES = 64  # the decoder's table of keys already seen (one str per distinct key)
_LONG_STRING_BYTES = 1 << 16  # a string longer than this is decoded without copies of its bytes (_long_string)
_SMALL_INTS = range(-5, 257)  # CPython shares these: no allocation


def _allocated(nbytes: int) -> int:
    """What an object of `nbytes` takes from the allocator: pymalloc hands out 16-byte multiples."""
    return (nbytes + 15) & ~15


_FLOAT_BYTES = _allocated(sys.getsizeof(0.0))
_EMPTY_LIST_BYTES = _allocated(sys.getsizeof([]))


class JsonError(ValueError):
    """Not JSON: `msg` at `lineno` (1-based), as json.JSONDecodeError words it."""

    def __init__(self, msg: str, data: bytes, pos: int):
        self.msg = msg
        self.pos = pos
        self.lineno = data.count(b"\n", 0, pos) + 1
        super().__init__(json_problem(msg, self.lineno))


class NotUtf8(ValueError):
    pass


class OverBudget(ValueError):
    pass


class TooDeep(ValueError):
    pass


class Constant(ValueError):
    """NaN or Infinity: Python's json reads them, JSON does not have them."""

    def __init__(self, word: str):
        self.word = word
        super().__init__(word)


def skip_ws(data: bytes, pos: int) -> int:
    """The position of the first byte at or after `pos` that is not JSON whitespace."""
    return _WS.match(data, pos).end()  # type: ignore[union-attr]  # always matches (maybe nothing)


def loads(data: bytes, budget_bytes: int, max_depth: int) -> Any:
    """The value `data` holds. Raises JsonError, NotUtf8, Constant, OverBudget (the values would take
    more than `budget_bytes` of memory), TooDeep (nested more than `max_depth` levels), or ValueError
    (an integer past Python's digit limit)."""
    decoder = _Decoder(data, budget_bytes, max_depth)
    value, pos = decoder.value(decoder.skip_ws(0), 0)
    pos = decoder.skip_ws(pos)
    if pos != len(data):
        raise JsonError("Extra data", data, pos)
    return value


class _Decoder:
    """Recursive descent over the bytes; the hot paths (keys, numbers, whitespace) are one regex each."""

    def __init__(self, data: bytes, budget_bytes: int, max_depth: int):
        self.data = data
        self.budget_bytes = budget_bytes
        self.max_depth = max_depth
        self.spent_bytes = 0
        self.keys: dict[bytes, str] = {}  # one str per distinct key, as json's memo keeps them

    def charge(self, nbytes: int) -> None:
        self.spent_bytes += nbytes
        if self.spent_bytes > self.budget_bytes:
            raise OverBudget(f"more than {self.budget_bytes} bytes of values")

    def skip_ws(self, pos: int) -> int:
        if self.data[pos : pos + 1] in _WS_BYTES:
            return _WS.match(self.data, pos).end()  # type: ignore[union-attr]  # always matches
        return pos

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        data = self.data
        char = data[pos : pos + 1]
        if char == b'"':
            text, end = self.string(pos + 1)
            self.charge(_allocated(sys.getsizeof(text)))
            return text, end
        if char == b"{":
            return self.object(pos + 1, depth + 1)
        if char == b"[":
            return self.array(pos + 1, depth + 1)
        m = _NUMBER.match(data, pos)
        if m is not None:
            integer, frac, exp = m.groups()
            if frac or exp:
                number: int | float = float(m.group())
                self.charge(_FLOAT_BYTES)
            else:
                number = int(integer)  # ValueError past Python's 4,300-digit limit
                if number not in _SMALL_INTS:
                    self.charge(_allocated(sys.getsizeof(number)))
            return number, m.end()
        if data.startswith(b"null", pos):
            return None, pos + 4
        if data.startswith(b"true", pos):
            return True, pos + 4
        if data.startswith(b"false", pos):
            return False, pos + 5
        for word in _CONSTANTS:
            if data.startswith(word, pos):
                raise Constant(word.decode())
        raise JsonError("Expecting value", data, pos)

    def string(self, pos: int) -> tuple[str, int]:
        """The string whose opening quote is just before `pos`; returns (text, position after the closing quote)."""
        data = self.data
        m = _PLAIN_STRING.match(data, pos)
        if m is None:  # an escape, a control character, or no closing quote
            m = _ESCAPED_STRING.match(data, pos)
            if m is None:
                raise JsonError("Unterminated string or invalid control character in string", data, pos - 1)
        if m.end() - pos > _LONG_STRING_BYTES:
            return self._long_string(pos, m.end())
        try:
            text = data[pos : m.end()].decode("utf-8")
        except UnicodeDecodeError:
            raise NotUtf8("not UTF-8") from None
        if "\\" not in text:
            return text[:-1], m.end()
        try:
            value, _end = scanstring(text, 0, True)
        except ValueError as exc:  # json.JSONDecodeError: a bad escape
            raise JsonError(str(getattr(exc, "msg", "Invalid \\escape")), data, pos) from None
        return value, m.end()

    def _long_string(self, pos: int, end: int) -> tuple[str, int]:
        """As string(), for a long one: decoded from a view of the bytes, without its closing quote when nothing
        is escaped. A slice of the bytes, then a str without the quote, made a 250 MiB string (as large as a run
        may be) take three times its size while it was built: 815 MB for `import`."""
        data = self.data
        escaped = data.find(b"\\", pos, end) >= 0
        try:
            text = str(memoryview(data)[pos : end if escaped else end - 1], "utf-8")
        except UnicodeDecodeError:
            raise NotUtf8("not UTF-8") from None
        if not escaped:
            return text, end
        try:
            value, _end = scanstring(text, 0, True)
        except ValueError as exc:  # json.JSONDecodeError: a bad escape
            raise JsonError(str(getattr(exc, "msg", "Invalid \\escape")), data, pos) from None
        return value, end

    def key(self, pos: int) -> tuple[str, int]:
        """A property name and its colon, from its opening quote; returns (name, position of the value)."""
        data = self.data
        m = _PLAIN_KEY.match(data, pos)
        if m is not None:
            raw = m.group(1)
            end = m.end()
        else:
            if data[pos : pos + 1] != b'"':
                raise JsonError("Expecting property name enclosed in double quotes", data, pos)
            text, end = self.string(pos + 1)
            raw = text.encode("utf-8", "surrogatepass")
            end = self.skip_ws(end)
            if data[end : end + 1] != b":":
                raise JsonError("Expecting ':' delimiter", data, end)
            end = self.skip_ws(end + 1)
        known = self.keys.get(raw)
        if known is None:
            try:
                known = raw.decode("utf-8") if m is not None else text
            except UnicodeDecodeError:
                raise NotUtf8("not UTF-8") from None
            self.keys[raw] = known
            self.charge(_allocated(sys.getsizeof(known)) + _allocated(sys.getsizeof(raw)) + _MEMO_ENTRY_BYTES)
        return known, end

    def object(self, pos: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth > self.max_depth:
            raise TooDeep(f"nested deeper than {self.max_depth} levels")
        data = self.data
        out: dict[str, Any] = {}
        charged = _allocated(sys.getsizeof(out))
        self.charge(charged)
        pos = self.skip_ws(pos)
        if data[pos : pos + 1] == b"}":
            return out, pos + 1
        keys = self.keys
        budget = self.budget_bytes
        while True:
            m = _NUMBER_MEMBER.match(data, pos)
            if m is not None:  # the fast path: one match for name, number and what follows
                raw, text, frac, exp, char = m.groups()
                key = keys.get(raw)
                if key is None:
                    key, pos = self.key(pos)
                if frac or exp:
                    number: int | float = float(text)
                    cost = _FLOAT_BYTES
                else:
                    number = int(text)
                    cost = 0 if number in _SMALL_INTS else _allocated(sys.getsizeof(number))
                out[key] = number
                charged += _DICT_ENTRY_BYTES
                self.spent_bytes += cost + _DICT_ENTRY_BYTES
                if self.spent_bytes > budget:
                    raise OverBudget(f"more than {budget} bytes of values")
                pos = m.end()
                if char == b",":
                    pos = self.skip_ws(pos)
                    continue
                self.spent_bytes += _allocated(sys.getsizeof(out)) - charged
                return out, pos
            key, pos = self.key(pos)
            out[key], pos = self.value(pos, depth)
            self.charge(_DICT_ENTRY_BYTES)
            charged += _DICT_ENTRY_BYTES
            pos = self.skip_ws(pos)
            char = data[pos : pos + 1]
            if char == b",":
                pos = self.skip_ws(pos + 1)
                continue
            if char == b"}":
                self.spent_bytes += _allocated(sys.getsizeof(out)) - charged  # what the dict really takes
                return out, pos + 1
            raise JsonError("Expecting ',' delimiter", data, pos)

    def array(self, pos: int, depth: int) -> tuple[list[Any], int]:
        if depth > self.max_depth:
            raise TooDeep(f"nested deeper than {self.max_depth} levels")
        data = self.data
        out: list[Any] = []
        self.charge(_EMPTY_LIST_BYTES)
        pos = self.skip_ws(pos)
        if data[pos : pos + 1] == b"]":
            return out, pos + 1
        while True:
            item, pos = self.value(pos, depth)
            out.append(item)
            self.charge(_LIST_SLOT_BYTES)
            pos = self.skip_ws(pos)
            char = data[pos : pos + 1]
            if char == b",":
                pos = self.skip_ws(pos + 1)
                continue
            if char == b"]":
                # The slots as the list really holds them (it over-allocates as it grows).
                self.spent_bytes += _allocated(sys.getsizeof(out)) - _EMPTY_LIST_BYTES - _LIST_SLOT_BYTES * len(out)
                return out, pos + 1
            raise JsonError("Expecting ',' delimiter", data, pos)
