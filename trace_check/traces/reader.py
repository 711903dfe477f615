"""Reading a trace file: untrusted input, checked line by line before anything is generated.

The header names the protocol; its plug-in says which constants and columns there are and what each
event must satisfy. Every problem is one line naming the file, the line and the field, and saying
what is expected.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from trace_check.errors import TxconformError, suggest
from trace_check.traces import format as tf
from trace_check.traces import plugins
from trace_check.traces.protocol import BOOL, INT, INT64, LIST, OFFSETS, STRING, Protocol, ProtocolInputError


class TraceError(TxconformError, ValueError):
    """A trace file that cannot be checked; the message names the file, line and field."""


@attrs.frozen
class Trace:
    path: Path
    header: dict[str, Any]
    events: tuple[dict[str, Any], ...]
    first: int = 1  # the number of events[0] in the whole trace (a window of it starts later)

    @property
    def constants(self) -> dict[str, Any]:
        constants: dict[str, Any] = self.header["constants"]
        return constants

    @property
    def protocol(self) -> Protocol:
        return plugins.get(self.header["protocol"])

    @property
    def version(self) -> int:
        """The trace format version the header names (one of ``format.READ_VERSIONS``)."""
        return int(self.header["version"])


def _is_ident_text(s: str) -> bool:
    """Printable ASCII (32 to 126) only; the same as asking each character, in C."""
    return s.isascii() and s.isprintable()


def _fail(path: Path, line: int, what: str) -> TraceError:
    return TraceError(f"{path}:{line}: {what}")


_KIND_TEXT = {LIST: "a list", INT: "an integer", INT64: "an integer", BOOL: "a boolean", STRING: "a string", OFFSETS: "a list"}


def check_header(path: Path, h: Any) -> tuple[dict[str, Any], Protocol]:
    """The header ``h`` (the first line of ``path``, parsed) checked as ``read_trace`` checks it: the
    format and version, a protocol with a plug-in, the constants it needs (its defaults filled in).
    Returns the header and the plug-in; raises a one-line ``TraceError`` naming ``path``."""
    if not isinstance(h, dict):
        raise _fail(path, 1, "the first line must be the trace header, a JSON object (see docs/trace-format.md)")
    if h.get("format") != tf.FORMAT:
        raise _fail(path, 1, f'header: "format" must be "{tf.FORMAT}"; is this a txconform trace?')
    version = h.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in tf.READ_VERSIONS:
        readable = " and ".join(str(v) for v in tf.READ_VERSIONS)
        raise _fail(path, 1, f'header: "version" {json.dumps(version)} is not supported; this txconform reads versions {readable}')
    name = h.get("protocol")
    try:
        protocol = plugins.get(name if isinstance(name, str) else None)
    except plugins.UnknownProtocol:  # a plug-in that fails to load says so itself
        raise _fail(path, 1, f'header: "protocol" {json.dumps(name)} has no plug-in; supported: '
                    + ", ".join(json.dumps(n) for n in plugins.names())) from None
    k = h.get("constants")
    if not isinstance(k, dict):
        raise _fail(path, 1, 'header: "constants" must be an object with the spec\'s constants')
    for name, value in protocol.defaults.items():
        k.setdefault(name, value)
    # every problem of the constants at once: a hand-written header should not take a run per fix
    problems = []
    missing = [name for name in protocol.constants if name not in k]
    if missing:
        problems.append(f"missing {', '.join(json.dumps(n) for n in missing)} (give "
                        + ", ".join(f"{json.dumps(n)}: {_KIND_TEXT[protocol.constants[n]]}" for n in missing) + ")")
    for name, kind in protocol.constants.items():
        if name not in k:
            continue
        v = k[name]
        ok = isinstance(v, _PYTHON_KINDS[kind]) and not (kind == INT and isinstance(v, bool))
        if not ok:
            problems.append(f'"{name}" must be {_KIND_TEXT[kind]}, got {json.dumps(v)[:60]}')
        elif kind == INT and v < 0:
            problems.append(f'"{name}" must be >= 0, got {v}')
    problems += [f'unknown constant "{name}"{suggest(name, protocol.constants)}' for name in k if name not in protocol.constants]
    if problems:
        raise _fail(path, 1, "header: constants: " + "; ".join(problems))
    try:
        protocol.check_constants(k)
    except ProtocolInputError as e:
        raise _fail(path, 1, f"header: constants: {e}") from None
    return h, protocol


_PYTHON_KINDS: dict[str, type] = {LIST: list, OFFSETS: list, INT: int, INT64: int, BOOL: bool, STRING: str}


def _check_value(path: Path, line: int, col: str, kind: str, enum: frozenset[str] | None, v: Any, version: int) -> None:
    def bad(expected: str) -> TraceError:
        return _fail(path, line, f'field "{col}": expected {expected}, got {json.dumps(v)[:60]}')

    if kind == STRING:
        if not isinstance(v, str):
            raise bad("a string")
        if not _is_ident_text(v):
            raise bad("printable ASCII text")
        if enum is not None and v not in enum:
            raise _fail(path, line, f'field "{col}": unknown value {json.dumps(v)[:60]}{suggest(v, enum)}')
    elif kind == BOOL:
        if not isinstance(v, bool):
            raise bad("true or false")
    elif kind == OFFSETS:
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
            raise bad("a list of offsets (whole numbers >= 0)")
    elif kind == LIST:
        if not isinstance(v, list):
            raise bad("a list")
    else:
        if not isinstance(v, int) or isinstance(v, bool):
            raise bad("a whole number")
        if kind == INT64 and version >= 2:  # a column the spec never reads (format version 2)
            if not -(2**63) <= v < 2**63:
                raise bad("a signed 64-bit integer")
        elif not -(2**31) <= v < 2**31:
            raise bad("a number TLC can represent (32-bit)")


def _check_event(
    path: Path, line: int, ev: object, protocol: Protocol, k: dict[str, Any], number: int, version: int = tf.FORMAT_VERSION
) -> dict[str, Any]:
    if not isinstance(ev, dict):
        raise _fail(path, line, "an event must be a JSON object")
    ev = {c: v for c, v in ev.items() if v is not None}  # null means: not logged
    cols = protocol.columns
    for col, v in ev.items():
        if col not in cols.kinds:
            raise _fail(path, line, f'unknown field "{col}"{suggest(col, cols.order)} (fields: docs/trace-format.md)')
        since = cols.since.get(col, 1)
        if since > version:
            raise _fail(path, line, f'field "{col}" is new in trace format version {since}, and the header says version {version}; '
                        "leave it out or make the trace a later version")
        _check_value(path, line, col, cols.kinds[col], cols.enums.get(col), v, version)
    if "action" not in ev:
        raise _fail(path, line, 'field "action" is missing: every event names the spec action it implements')
    if "event" in ev and ev["event"] != number:
        raise _fail(path, line, f'field "event": this is event {number}, but it says {ev["event"]}; events are numbered 1, 2, ... in order')
    try:
        protocol.check_event(ev, k)
    except ProtocolInputError as e:
        raise _fail(path, line, str(e)) from None
    return ev


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """The JSON value of each line, numbered from 1."""
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115 - entered below (with f:), so that only open's OSError is this message
    except OSError as e:
        raise TraceError(f"{path}: cannot read the trace: {e.strerror}") from None
    with f:
        try:
            for n, raw in enumerate(f, 1):
                if not raw.strip():
                    raise _fail(path, n, "empty line; a trace has one JSON object per line")
                try:
                    yield n, json.loads(raw, parse_constant=functools.partial(_nan, path, n))
                except json.JSONDecodeError as e:
                    raise _fail(path, n, f"not valid JSON ({e.msg} at column {e.colno})") from None
        except UnicodeDecodeError:
            raise TraceError(f"{path}: not UTF-8 text; a trace is JSON Lines") from None


def _events(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """The checked header, and an iterator over the checked events: the file is read as they are taken."""
    lines = _lines(path)
    first = next(lines, None)
    if first is None:
        raise TraceError(f"{path}: empty file; a trace starts with a header line (see docs/trace-format.md)")
    header, protocol = check_header(path, first[1])

    def events() -> Iterator[dict[str, Any]]:
        for number, (n, obj) in enumerate(lines, 1):
            yield _check_event(path, n, obj, protocol, header["constants"], number, header["version"])

    return header, events()


def read_trace(path: Path, limit: int | None = None) -> Trace:
    """Read and check a trace file; raises TraceError naming the line of the first problem."""
    header, events = _events(path)
    taken: list[dict[str, Any]] = []
    for ev in events:
        taken.append(ev)
        if limit and len(taken) >= limit:
            break
    return Trace(path, header, tuple(taken))


def count_events(path: Path) -> int:
    """Check the whole file, keeping nothing: the number of events, or a TraceError for the first bad line."""
    _header, events = _events(path)
    return sum(1 for _ in events)


def read_windows(path: Path, size: int) -> Iterator[Trace]:
    """The trace in windows of ``size`` events (the last may be shorter; a trace without events is one
    empty window), read from the file as they are taken: memory holds one window, not the trace."""
    header, events = _events(path)
    window: list[dict[str, Any]] = []
    first = 1
    for ev in events:
        window.append(ev)
        if len(window) == size:
            yield Trace(path, header, tuple(window), first)
            first += size
            window = []
    if window or first == 1:
        yield Trace(path, header, tuple(window), first)


def windows_of(trace: Trace, size: int) -> Iterator[Trace]:
    """An in-memory trace in windows of ``size`` events, as ``read_windows`` gives a file's."""
    return windows_ending(trace, range(size, len(trace.events), size))


def windows_ending(trace: Trace, ends: Iterable[int]) -> Iterator[Trace]:
    """An in-memory trace in windows that end after the given events (ascending, each in
    1..len - 1); the last window ends with the trace."""
    start = 0
    for end in [*ends, len(trace.events)]:
        if not start < end <= len(trace.events) and trace.events:
            raise ValueError(f"window ends must ascend within 1..{len(trace.events) - 1}, got {end} after {start}")
        yield Trace(trace.path, trace.header, trace.events[start:end], trace.first + start)
        start = end


def _nan(path: Path, line: int, c: str) -> Any:
    raise _fail(path, line, f"{c} is not a number JSON allows")
