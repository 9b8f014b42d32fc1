"""Deep checks of run documents that come from outside (an `import` file), before anything is stored.

What passes here renders in `show`, `compare` and `report`: every field those read has the type they
expect, every number is finite and fits the store's 64-bit integers, and nesting is bounded. Test,
series, health and device fields are checked against the model's own dataclass annotations, so a field
added to the model is checked without a change here. Unknown fields are kept (the schema only grows)
but must be plain, bounded JSON.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from disksleuth.errors import ParseError

MAX_DEPTH = 24  # deepest real document: export > runs > doc > health > before > lba_formats > item
MAX_STRING = 1 << 20
INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # SQLite's and PostgreSQL's BIGINT
SEVERITIES = ("ok", "info", "warn", "critical")
# Numbers that are amounts (sizes, rates, counts, times): never negative in a real run.
_SIGNED = {"temperature_c", "temperature_warning_c", "temperature_critical_c"}
# Test fields the store keeps in INTEGER columns, 32 bits on PostgreSQL: larger ones passed here, then the
# shared store refused the whole import ("integer out of range") while SQLite took it.
_INT32_FIELDS = {"bs_bytes", "iodepth", "numjobs"}
INT32_MAX = 2**31 - 1


class Invalid(ParseError):
    pass


MAX_FLOAT = 1e15  # larger than any MB/s, IOPS, latency in µs or timestamp a run records
# The times a run may start at (run.started_at): from the epoch to a day ahead of this machine's clock (a
# day allows for clocks that are a little off, and for time zones).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
MAX_AHEAD_S = 86_400


def _fail(path: str, what: str) -> typing.NoReturn:
    raise Invalid(f"{path}: {what}")


def check_plain(value: Any, path: str, depth: int = 0) -> None:
    """Any JSON value, bounded: no NaN or infinity, integers that fit 64 bits, limited depth."""
    if _plain_ok(value, depth):
        return
    if depth > MAX_DEPTH:
        _fail(path, f"nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            _fail(path, "integer out of range")
    elif isinstance(value, float):
        if not math.isfinite(value):
            _fail(path, "not a finite number")
        if abs(value) > MAX_FLOAT:
            # 1e308 MB/s passed once and then broke the report's axes; no figure of ours comes near 1e15.
            _fail(path, "implausibly large")
    elif isinstance(value, str):
        if len(value) > MAX_STRING:
            _fail(path, "string too long")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_plain(item, f"{path}[{i}]", depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                _fail(path, "keys must be strings")
            check_plain(item, f"{path}.{key}", depth + 1)
    else:
        _fail(path, f"unexpected {type(value).__name__}")


def _number(value: Any, path: str, name: str, integer: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        _fail(path, "expected " + ("a whole number" if integer else "a number"))
    check_plain(value, path)
    if integer and name in _INT32_FIELDS and value > INT32_MAX:
        _fail(path, "implausibly large")
    if not integer and abs(value) > MAX_FLOAT:
        # A whole number in a figure is stored as a float and exported as one: write_iops 9223372036854775807
        # passed here as an int, and its own export (9.2e18) was then refused. One bound for both forms.
        _fail(path, "implausibly large")
    if value < 0 and name not in _SIGNED:
        _fail(path, "must not be negative")


def check_type(value: Any, hint: Any, path: str, name: str = "", depth: int = 0) -> None:
    """`value` as JSON holds what `hint` (a resolved annotation of the model) describes."""
    if _type_ok(hint, name)(value, depth):
        return
    if depth > MAX_DEPTH:
        _fail(path, f"nested deeper than {MAX_DEPTH} levels")
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        check_plain(value, path, depth)
    elif hint is type(None):
        if value is not None:
            _fail(path, "expected null")
    elif origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                check_type(value, arg, path, name, depth)
                return
            except Invalid as exc:
                errors.append(exc)
        raise errors[0]
    elif hint is bool:
        if not isinstance(value, bool):
            _fail(path, "expected true or false")
    elif hint is int:
        _number(value, path, name, integer=True)
    elif hint is float:
        _number(value, path, name, integer=False)
    elif hint is str:
        if not isinstance(value, str):
            _fail(path, "expected a string")
        check_plain(value, path)
    elif origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list):
            _fail(path, "expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            for i, item in enumerate(value):
                check_type(item, args[0], f"{path}[{i}]", name, depth + 1)
        else:
            if len(value) != len(args):
                _fail(path, f"expected {len(args)} items")
            for i, (item, arg) in enumerate(zip(value, args, strict=True)):
                check_type(item, arg, f"{path}[{i}]", name, depth + 1)
    elif origin in (Mapping, dict, typing.Mapping) or hint in (dict, Mapping):
        args = typing.get_args(hint) or (str, Any)
        if not isinstance(value, dict):
            _fail(path, "expected an object")
        for key, item in value.items():
            if not isinstance(key, str):
                _fail(path, "keys must be strings")
            check_type(item, args[1], f"{path}.{key}", key, depth + 1)
    elif origin is list:
        if not isinstance(value, list):
            _fail(path, "expected a list")
        for i, item in enumerate(value):
            check_type(item, typing.get_args(hint)[0], f"{path}[{i}]", name, depth + 1)
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a class, never an instance, in a hint
        check_fields(value, hint, path, depth + 1)
    else:  # an annotation this checker does not know: at least plain, bounded JSON
        check_plain(value, path, depth)


def check_fields(
    value: Any, cls: type, path: str, depth: int = 0, skip: tuple[str, ...] = (), require: bool = True
) -> None:
    """An object holding a dataclass's fields (as JSON): known fields typed, required ones present
    (with `require`), others plain JSON."""
    if _fields_ok(cls, skip, require)(value, depth):
        return
    if not isinstance(value, dict):
        _fail(path, "expected an object")
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        if f.name in value:
            check_type(value[f.name], hints[f.name], f"{path}.{f.name}", f.name, depth)
        elif require and _required(f) and type(None) not in typing.get_args(hints[f.name]):
            _fail(path, f"{f.name} is missing")  # a missing optional one reads as null
    for key, item in value.items():
        if not isinstance(key, str):
            _fail(path, "keys must be strings")
        if key not in hints:
            check_plain(item, f"{path}.{key}", depth + 1)


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        import sys

        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


# --- the same checks, fast: a yes or no with no path built ------------------------------------------------
# Each check above first asks its fast twin, and walks again building the path (for the message) only when the
# answer is no. Building a path string per value made validation ~70% of an import's time (11 s of 17 s for
# 1,000 runs). A twin may say no where the full check says yes (the full check decides); never the other way.

Ok = typing.Callable[[Any, int], bool]


def _plain_ok(value: Any, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is str:
        return len(value) <= MAX_STRING
    if kind is int:
        return bool(INT_MIN <= value <= INT_MAX)
    if kind is float:
        return bool(abs(value) <= MAX_FLOAT)  # False for NaN and infinity too
    if kind is list:
        return all(_plain_ok(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain_ok(item, depth + 1) for key, item in value.items())
    return False


def _number_bounds(integer: bool, name: str) -> tuple[float, float]:
    top = INT32_MAX if integer and name in _INT32_FIELDS else INT_MAX if integer else MAX_FLOAT
    return (-top if name in _SIGNED else 0), top


def _number_ok(integer: bool, name: str) -> Ok:
    low, top = _number_bounds(integer, name)
    kinds = (int,) if integer else (int, float)

    def ok(value: Any, depth: int) -> bool:
        return depth <= MAX_DEPTH and type(value) in kinds and low <= value <= top and (integer or abs(value) <= top)

    return ok


_TYPE_OK: dict[tuple[Any, str], Ok] = {}


def _type_ok(hint: Any, name: str) -> Ok:
    key = (hint, name)
    found = _TYPE_OK.get(key)
    if found is None:
        found = _TYPE_OK[key] = _make_type_ok(hint, name)
    return found


def _make_type_ok(hint: Any, name: str) -> Ok:  # noqa: C901  # one branch per kind of annotation, as check_type
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        return _plain_ok
    if hint is type(None):
        return lambda value, depth: depth <= MAX_DEPTH and value is None
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        nullable = type(None) in args
        each = [_type_ok(arg, name) for arg in args if arg is not type(None)]
        return lambda value, depth: (
            depth <= MAX_DEPTH and ((value is None and nullable) or any(ok(value, depth) for ok in each))
        )
    if hint is bool:
        return lambda value, depth: depth <= MAX_DEPTH and type(value) is bool
    if hint is int or hint is float:
        return _number_ok(hint is int, name)
    if hint is str:
        return lambda value, depth: depth <= MAX_DEPTH and type(value) is str and len(value) <= MAX_STRING
    if origin is tuple or origin is list:
        args = typing.get_args(hint)
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            records_ok = _number_records_ok(args[0])
            if records_ok is not None:
                return records_ok
            item_ok = _type_ok(args[0], name)
            return lambda value, depth: (
                depth <= MAX_DEPTH and type(value) is list and all(item_ok(item, depth + 1) for item in value)
            )
        each = [_type_ok(arg, name) for arg in args]
        return lambda value, depth: (
            depth <= MAX_DEPTH
            and type(value) is list
            and len(value) == len(each)
            and all(ok(item, depth + 1) for ok, item in zip(each, value, strict=True))
        )
    if origin in (Mapping, dict, typing.Mapping) or hint in (dict, Mapping):
        value_hint = (typing.get_args(hint) or (str, Any))[1]
        return lambda value, depth: (
            depth <= MAX_DEPTH
            and type(value) is dict
            and all(type(key) is str and _type_ok(value_hint, key)(item, depth + 1) for key, item in value.items())
        )
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        fields_ok = _fields_ok(hint, (), True)
        return lambda value, depth: depth <= MAX_DEPTH and fields_ok(value, depth + 1)
    return _plain_ok


def _number_records_ok(cls: Any) -> Ok | None:
    """For a list of a dataclass whose fields are all numbers (a test's series: ~30 points a test, 120 a quick
    run, most of the values of a run), one loop over the points instead of a call per point and per field,
    which was a third of an import's checks. The same answer as the generic twin (which it falls back to
    where the depth bound is near), or None when `cls` is not such a dataclass."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return None
    hints = _hints(cls)
    bounds: dict[str, tuple[float, float, bool, bool]] = {}  # name: low, top, whole numbers only, null allowed
    required = set()
    for f in dataclasses.fields(cls):
        args = typing.get_args(hints[f.name]) or (hints[f.name],)
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) != 1 or kinds[0] not in (int, float):
            return None
        nullable = len(kinds) < len(args)
        bounds[f.name] = (*_number_bounds(kinds[0] is int, f.name), kinds[0] is int, nullable)
        if _required(f) and not nullable:
            required.add(f.name)
    generic = _type_ok(cls, "")
    needed = frozenset(required)

    def ok(value: Any, depth: int) -> bool:
        if type(value) is not list or depth > MAX_DEPTH:
            return False
        if depth + 3 > MAX_DEPTH:  # where a point's own values or extra members would pass the bound
            return all(generic(item, depth + 1) for item in value)
        for item in value:
            if type(item) is not dict or not needed <= item.keys():
                return False
            for key, v in item.items():
                spec = bounds.get(key)
                if spec is None:
                    if type(key) is not str or not (key in hints or _plain_ok(v, depth + 3)):
                        return False
                    continue
                if v is None:
                    if not spec[3]:
                        return False
                    continue
                kind = type(v)
                if not ((kind is int or (kind is float and not spec[2])) and spec[0] <= v <= spec[1]):
                    return False  # NaN fails the comparison
        return True

    return ok


_FIELDS_OK: dict[tuple[type, tuple[str, ...], bool], Ok] = {}


def _fields_ok(cls: type, skip: tuple[str, ...], require: bool) -> Ok:
    key = (cls, skip, require)
    found = _FIELDS_OK.get(key)
    if found is not None:
        return found
    hints = _hints(cls)
    spec = [
        (
            f.name,
            _type_ok(hints[f.name], f.name),
            require and _required(f) and type(None) not in typing.get_args(hints[f.name]),
        )
        for f in dataclasses.fields(cls)
        if f.name not in skip
    ]

    def ok(value: Any, depth: int) -> bool:
        if type(value) is not dict:
            return False
        for field_name, field_ok, needed in spec:
            if field_name in value:
                if not field_ok(value[field_name], depth):
                    return False
            elif needed:
                return False
        return all(type(key) is str and (key in hints or _plain_ok(item, depth + 1)) for key, item in value.items())

    _FIELDS_OK[key] = ok
    return ok


# --- the run document -------------------------------------------------------------------------


def _opt(value: Any, kinds: tuple[type, ...], path: str, what: str) -> None:
    if value is not None and (not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds):
        _fail(path, f"expected {what} or null")
    check_plain(value, path)


def _strings(value: Any, path: str) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        _fail(path, "expected a list of strings")
    check_plain(value, path)


def _check_started_at(text: str, path: str, now_s: float | None) -> None:
    """A start time a clock could have given: not before 1970, not more than a day ahead of ours. One run dated
    year 1 or 9999 broke `report` for every later run of its drive (matplotlib draws years 1 to 9999 only, and
    the axis around them ran past); a drive's history is ordered by these times."""
    import time

    when = datetime.fromisoformat(text)
    if when.tzinfo is None:  # a naive time: read as UTC, well within a day of any zone
        when = when.replace(tzinfo=UTC)
    if when < EARLIEST:
        _fail(path, f"{text} is before {EARLIEST.year} (was the clock never set?)")
    now = datetime.fromtimestamp(time.time() if now_s is None else now_s, UTC)
    if (when - now).total_seconds() > MAX_AHEAD_S:
        _fail(path, f"{text} is more than a day ahead of this machine's clock ({now:%Y-%m-%dT%H:%M%z})")


def _check_series_times(series: Any, path: str) -> None:
    """Each point of a test's series at its own time: the store keeps one point per test and time, and a
    repeated t_s passed here, then failed the store's UNIQUE constraint as a fault of the store."""
    if not series or len({float(p["t_s"]) for p in series}) == len(series):
        return
    seen: dict[float, int] = {}
    for j, point in enumerate(series):
        at = float(point["t_s"])
        if at in seen:
            _fail(f"{path}[{j}].t_s", f"{point['t_s']} again (as series[{seen[at]}]): one point per time")
        seen[at] = j


def check_run_doc(doc: Any, path: str, *, now_s: float | None = None) -> None:
    """One run as `check --json`, `bench --json` or `export` write it. `now_s` (the clock by default) is
    what a start time may not be more than a day ahead of."""
    from disksleuth.model import Device
    from disksleuth.model.run import Health, TestResult

    if not isinstance(doc, dict):
        _fail(path, "expected an object")
    run = doc.get("run")
    if not isinstance(run, dict):
        _fail(path, "run is missing")
    rp = f"{path}.run"
    for key in ("target", "profile", "started_at"):
        if not isinstance(run.get(key), str) or not run[key]:
            _fail(rp, f"{key} is missing")
    try:
        datetime.fromisoformat(run["started_at"])
    except ValueError:
        _fail(f"{rp}.started_at", "not an ISO 8601 time")
    _check_started_at(run["started_at"], f"{rp}.started_at", now_s)
    for key in ("kind", "finished_at", "fio_version", "engine", "device", "note", "uuid"):
        _opt(run.get(key), (str,), f"{rp}.{key}", "a string")
    if run.get("kind") is not None and not run["kind"]:
        _fail(f"{rp}.kind", "empty")
    if run.get("uuid") is not None:
        import uuid

        try:
            uuid.UUID(run["uuid"])
        except ValueError:
            _fail(f"{rp}.uuid", "not a UUID")
    _opt(run.get("id"), (int,), f"{rp}.id", "a whole number")
    if run.get("size_bytes") is not None:
        _number(run["size_bytes"], f"{rp}.size_bytes", "size_bytes", integer=True)
    _strings(run.get("notes"), f"{rp}.notes")
    _strings(run.get("tags"), f"{rp}.tags")
    for i, tag in enumerate(run.get("tags") or []):
        if not tag or len(tag) > 128:
            _fail(f"{rp}.tags[{i}]", "a tag is 1 to 128 characters")
    host = run.get("host")
    if host is not None:
        if not isinstance(host, dict):
            _fail(f"{rp}.host", "expected an object")
        for key in ("hostname", "kernel", "cpu", "disksleuth_version"):
            _opt(host.get(key), (str,), f"{rp}.host.{key}", "a string")
        check_plain(host, f"{rp}.host")
    for key in run:
        check_plain(run[key], f"{rp}.{key}")

    for key in ("tests", "reference"):
        tests = doc.get(key)
        if tests is None:
            continue
        if not isinstance(tests, list):
            _fail(f"{path}.{key}", "expected a list")
        for i, t in enumerate(tests):
            check_fields(t, TestResult, f"{path}.{key}[{i}]")
            _check_series_times(t.get("series"), f"{path}.{key}[{i}].series")

    device = doc.get("device")
    if device is not None:
        _check_device(device, Device, f"{path}.device", 0)

    health = doc.get("health")
    if health is not None:
        hp = f"{path}.health"
        if not isinstance(health, dict):
            _fail(hp, "expected an object")
        for key in ("before", "after"):
            if health.get(key) is not None:
                check_fields(health[key], Health, f"{hp}.{key}", require=False)
        if health.get("changes") is not None:
            check_type(health["changes"], Mapping[str, tuple[int, int]], f"{hp}.changes")
        _opt(health.get("temperature_source"), (str,), f"{hp}.temperature_source", "a string")
        series = health.get("temperature_series")
        if series is not None:
            check_type(series, list[Mapping[str, float]], f"{hp}.temperature_series")
            for i, p in enumerate(series):
                if not isinstance(p.get("t_s"), (int, float)) or not isinstance(p.get("temperature_c"), (int, float)):
                    _fail(f"{hp}.temperature_series[{i}]", "needs t_s and temperature_c")
        check_plain(health, hp)

    findings = doc.get("findings")
    if findings is not None:
        if not isinstance(findings, list):
            _fail(f"{path}.findings", "expected a list")
        for i, f in enumerate(findings):
            fp = f"{path}.findings[{i}]"
            if not isinstance(f, dict):
                _fail(fp, "expected an object")
            if not isinstance(f.get("code"), str) or not f["code"]:
                _fail(fp, "code is missing")
            if f.get("severity") not in SEVERITIES:
                _fail(f"{fp}.severity", f"expected one of {', '.join(SEVERITIES)}")
            for key in ("message", "hint", "device"):
                _opt(f.get(key), (str,), f"{fp}.{key}", "a string")
            if f.get("evidence") is not None and not isinstance(f["evidence"], dict):
                _fail(f"{fp}.evidence", "expected an object")
            check_plain(f, fp)
    _opt(doc.get("summary"), (str,), f"{path}.summary", "a string")
    for key in doc:
        if key not in ("tests", "reference"):  # checked field by field above, which is stricter than plain
            check_plain(doc[key], f"{path}.{key}")


def _check_device(device: Any, cls: type, path: str, depth: int) -> None:
    check_fields(device, cls, path, depth, skip=("hops", "partitions"), require=False)
    if depth > 2:
        _fail(path, "partitions nested too deep")
    for i, part in enumerate(device.get("partitions") or []):
        _check_device(part, cls, f"{path}.partitions[{i}]", depth + 1)
    if device.get("partitions") is not None and not isinstance(device["partitions"], list):
        _fail(f"{path}.partitions", "expected a list")
    _opt(device.get("serial_sha256"), (str,), f"{path}.serial_sha256", "a string")
    _opt(device.get("serial_id"), (str,), f"{path}.serial_id", "a string")
    link = device.get("link")
    if link is None:
        return
    lp = f"{path}.link"
    if not isinstance(link, dict):
        _fail(lp, "expected an object")
    for key in ("current_ceiling_mbps", "capable_ceiling_mbps"):
        if link.get(key) is not None:
            _number(link[key], f"{lp}.{key}", key, integer=False)
    _opt(link.get("bottleneck"), (str,), f"{lp}.bottleneck", "a string")
    hops = link.get("hops")
    if hops is not None and not isinstance(hops, list):
        _fail(f"{lp}.hops", "expected a list")
    for i, hop in enumerate(hops or []):
        hp = f"{lp}.hops[{i}]"
        if not isinstance(hop, dict):
            _fail(hp, "expected an object")
        for key in ("kind", "name", "label", "capable_label"):
            _opt(hop.get(key), (str,), f"{hp}.{key}", "a string")
        for key in ("ceiling_mbps", "encoded_mbps", "capable_ceiling_mbps"):
            if hop.get(key) is not None:
                _number(hop[key], f"{hp}.{key}", key, integer=False)
        check_plain(hop, hp)
    check_plain(link, lp)
