"""Windows of a long trace, and the exact hand-off of spec states from one window to the next.

A long trace is checked in windows of a few thousand events, each a TLC run of its own. TLC's
search of a trace is breadth-first and level by level: level ``k`` holds every spec state that
explains events 1..k. A window that starts from exactly the states of the level where the last
window ended explores exactly the levels the whole-trace search would, so the verdict (accepted,
an invariant violated at event N, rejected at event N, and the diagnosis) is the whole trace's.

The hand-off: the window's last level is where ``l = TraceLen + 1``. An extra invariant,
``TraceHandOffOut``, prints each state of that level once (TLC checks invariants once per
distinct state) as one line, ``"txconform-handoff [v1 |-> ..., v2 |-> ...]"``, with TLC's own
``ToString``; with partial logging there may be several. The next window's initial states are
the set of those records (``TraceHandOff``), its ``l`` restarts at 1, and its events are the next
slice of the trace.

Bases (``Protocol.log_bases``). A window that starts from one state does not carry its logs in
the state: their entries, as far as no step of the window can cut them back
(``Protocol.base_limits``), are the spec's bases (Kafka: PlogBase, TlogBase), which TLC reads once
from files, and the state's logs hold only the entries after them. TLC copies, normalizes and
fingerprints a state at every step; with whole logs a window at 995,000 events of a faulty Kafka
run took 85.1 s, against 9.5 s at 5,000 (docs/benchmarks.md). The base only grows: the next
window's is this one's and the entries its last state's logs gained.

The printed text is TLA+ that TLC wrote: strings from the trace reach it only through the spec's
state, escaped by ToString. SANY's time grows with the length of a line (1.7 MB on one line took
18 s, the same broken at its commas 1.4 s), so the text is broken at the commas outside strings.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from trace_check.traces.protocol import Protocol
from trace_check.traces.spec_text import spec_variables
from trace_check.values.tla import format_log, format_value, function_value
from trace_check.values.tlc_print import TlcValueError, parse_value

MARK = "txconform-handoff "
TRACE_VARIABLE = "l"  # the trace spec's own variable: the index of the next event

_SPLIT_STRINGS = re.compile(r'("(?:[^"\\]|\\.)*")')
LINE = 100  # break hand-off text at the first comma after this many characters


class HandOffError(RuntimeError):
    """TLC printed a hand-off line that is not a state record (never expected; a bug if seen)."""


def state_fields(protocol: Protocol) -> tuple[str, ...]:
    """The variables a hand-off carries: all but the trace's index, which each window restarts at 1."""
    return tuple(v for v in spec_variables(protocol) if v != TRACE_VARIABLE)


def out_definition(fields: Iterable[str]) -> list[str]:
    """The invariant that prints each state of a window's last level (it always holds)."""
    record = ", ".join(f"{v} |-> {v}" for v in fields)
    return [f'TraceHandOffOut == l = TraceLen + 1 => PrintT("{MARK}" \\o ToString([{record}]))']


def _broken(text: str) -> str:
    """``text`` with a line break after a comma outside a string literal every LINE characters or so."""
    out: list[str] = []
    run = 0
    for k, part in enumerate(_SPLIT_STRINGS.split(text)):
        if k % 2 == 1:  # a string literal, kept whole
            out.append(part)
            run += len(part)
            continue
        start = 0
        while True:
            comma = part.find(", ", start + max(0, LINE - run))
            if comma < 0:
                out.append(part[start:])
                run += len(part) - start
                break
            out.append(part[start : comma + 1] + "\n")
            start = comma + 2
            run = 0
    return "".join(out)


_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|<<|>>|[\[\]{}(),]|[^"\[\]{}(),<>]+|[<>]')
_FIELD_RE = re.compile(r"\s*([A-Za-z_]\w*)\s*\|->\s*(.*?)\s*", re.DOTALL)
_CLOSE = {"[": "]", "<<": ">>", "{": "}", "(": ")"}


class _Records:
    """Record literals as calls of one operator per set of field names: ``[a |-> 1, b |-> 2]``
    becomes ``TraceRec1(1, 2)`` with ``TraceRec1(trArg1, trArg2) == [a |-> trArg1, b |-> trArg2]``.

    SANY keeps a node, with its level-checking tables, for every part of every expression of the
    module for as long as TLC runs: a log entry of ten fields written as a record is eleven
    operator applications, as a call one. A 3.7 MB hand-off of a 60,000-event Kafka trace held
    about 600 MB of TLC's heap that way (and a 1 GB heap ran six times slower from there on)."""

    def __init__(self) -> None:
        self.shapes: dict[tuple[str, ...], int] = {}

    def compact(self, text: str) -> str:
        stack: list[tuple[str, list[str], list[str]]] = [("", [], [])]  # (opener, elements, current element's pieces)
        for m in _TOKEN_RE.finditer(text):
            tok = m.group()
            if tok in _CLOSE:
                stack.append((tok, [], []))
            elif len(stack) > 1 and tok == _CLOSE[stack[-1][0]]:
                opener, elements, pieces = stack.pop()
                elements.append("".join(pieces))
                stack[-1][2].append(self._closed(opener, elements))
            elif tok == "," and len(stack) > 1:
                stack[-1][1].append("".join(stack[-1][2]))
                stack[-1][2].clear()
            else:
                stack[-1][2].append(tok)
        if len(stack) != 1:
            raise HandOffError("a hand-off state's brackets do not match")
        return "".join(stack[0][2])

    def _closed(self, opener: str, elements: list[str]) -> str:
        fields = [_FIELD_RE.fullmatch(e) for e in elements] if opener == "[" else []
        if not fields or not all(fields):
            return opener + ",".join(elements) + _CLOSE[opener]
        names = tuple(f.group(1) for f in fields if f)
        k = self.shapes.setdefault(names, len(self.shapes) + 1)
        return f"TraceRec{k}(" + ", ".join(f.group(2) for f in fields if f) + ")"

    def definitions(self) -> list[str]:
        lines = []
        for names, k in self.shapes.items():
            params = ", ".join(f"trArg{i}" for i in range(1, len(names) + 1))
            record = ", ".join(f"{n} |-> trArg{i}" for i, n in enumerate(names, 1))
            lines.append(f"TraceRec{k}({params}) == [{record}]")
        return lines


# The file a window's start states are read from, in its folder, when TLC reads them itself
# (trace_check/engines/tlc_java.py): the set of states, as TLA+ text.
START_FILE = "TraceStart.txt"


def start_file_text(states: list[str]) -> str:
    return "{" + ",\n".join(states) + "}\n"


def in_definitions(states: list[str], fields: Iterable[str], loaded: bool = False) -> list[str]:
    """The set of handed-off states, and the initial predicate that starts a window from them.
    ``loaded``: TLC reads the states from START_FILE (TraceLoad's TraceLoaded), not from the module."""
    if loaded:
        lines = [f'TraceHandOff == TraceLoaded("{START_FILE}")']
    else:
        records = _Records()
        body = ",\n".join(_broken(records.compact(s)) for s in states)
        lines = [*records.definitions(), "", "TraceHandOff == {", body, "}"]
    lines += ["", "TraceHandOffInit ==", "    \\E s \\in TraceHandOff :"]
    lines += [f"        /\\ {v} = s.{v}" for v in fields]
    lines.append("        /\\ l = 1")
    return lines


def view_definitions(fields: Iterable[str], logs: Iterable[str]) -> list[str]:
    """For a window that starts from one state: a VIEW that leaves out of each state what every
    state of the window shares with it, the entries of its logs (``Protocol.logs``), and the
    invariant that keeps this exact.

    Why it is exact: every state of the window descends from the one it started from; a log
    changes only by an append at its end or a cut back to a prefix (the plug-in's claim, tested on
    the spec); so while no log is shorter than it was at the start (``TraceLogsKept``), each
    state's logs begin with the start state's entries, and the view, which keeps everything else
    and the entries beyond them, tells any two states apart. TLC fingerprints every state it
    reaches, and a whole log costs time in proportion to its length at every step (20,000 steps
    appending to a log of records: 59 s, and 6 s with the log left out); this view costs the
    entries appended in the window. Should a log be cut shorter, ``TraceLogsKept`` fails and the
    checker runs the window again without the view."""
    logs = tuple(logs)
    lines = ["TraceBase == CHOOSE s \\in TraceHandOff : TRUE"]
    for v in logs:
        lines.append(f"TraceBaseLen_{v} == [logKey \\in DOMAIN TraceBase.{v} |-> Len(TraceBase.{v}[logKey])]")
    parts = []
    for v in fields:
        if v in logs:
            parts.append(f"[logKey \\in DOMAIN {v} |-> SubSeq({v}[logKey], TraceBaseLen_{v}[logKey] + 1, Len({v}[logKey]))]")
        else:
            parts.append(v)
    lines.append("TraceView == <<" + ",\n    ".join([*parts, "l"]) + ">>")
    kept = " /\\ ".join(f"(\\A logKey \\in DOMAIN {v} : Len({v}[logKey]) >= TraceBaseLen_{v}[logKey])" for v in logs)
    lines.append(f"TraceLogsKept == {kept}")
    return lines


def read_states(log_file: Path | None) -> list[str]:
    """The states a window's run printed, as TLA+ text, in the order TLC printed them."""
    if log_file is None:
        raise HandOffError("the window's run left no log to read its last states from")
    states = []
    with open(log_file, encoding="utf-8") as f:
        for line in f:
            if line.startswith('"' + MARK):
                try:
                    text = parse_value(line.strip())
                except TlcValueError as e:
                    raise HandOffError(f"{log_file}: a hand-off line is not a TLA+ string: {e}") from None
                if not isinstance(text, str) or not text.startswith(MARK + "["):
                    raise HandOffError(f"{log_file}: a hand-off line does not hold a state record")
                states.append(text[len(MARK) :])
    return states


# --- Bases of logs (Protocol.log_bases) ---


def keyed(value: Any) -> list[tuple[Any, Any]]:
    """A function's (key, value) pairs, as ``parse_value`` gives functions: a tuple is one on 1..n."""
    if isinstance(value, tuple):
        return list(enumerate(value, 1))
    if isinstance(value, Mapping):
        return list(value.items())
    raise HandOffError(f"a log is not a function: {format_value(value)[:80]}")


@attrs.frozen
class Base:
    """The first entries of each log that every start state of a window shares, given to TLC as
    the spec's bases (``Protocol.log_bases``, read once from a file), while the start states hold
    only the entries after them. It only grows from window to window: each log's base ends where
    the plug-in says no step can cut it back (``Protocol.base_limits``).

    ``objects`` holds, where known, the entries as the reference engine's replay gave them (the
    same objects state after state), so that a replayed state is compared with a hand-off by
    identity over the base, not entry by entry (``matches``)."""

    texts: Mapping[str, Mapping[Any, tuple[str, ...]]]  # log -> key -> each entry in TLA+
    objects: Mapping[str, Mapping[Any, tuple[Any, ...]]]  # log -> key -> each entry as replayed (None: not known)

    def length(self, log: str, key: Any) -> int:
        return len(self.texts.get(log, {}).get(key, ()))

    def file_name(self, log: str) -> str:
        return f"TraceBase_{log}.txt"

    def file_text(self, log: str) -> str:
        """The base of ``log`` as TLA+ (a function from each key to its entries), as TLC prints it."""
        return format_log(function_value(dict(self.texts[log])), lambda text: text) + "\n"

    def joined(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """``state`` (its logs the entries after the base) with whole logs: the base's entries read
        back from their text. For people (a rejected event's state before), not for speed."""
        out = dict(state)
        for log, keys in self.texts.items():
            if log in out:
                after = dict(keyed(out[log]))
                out[log] = function_value({k: tuple(parse_value(e) for e in keys.get(k, ())) + tuple(after.get(k, ()))
                                           for k in after})
        return out

    def begins(self, other: Base) -> bool:
        """Does every log of this base begin with ``other``'s entries (same texts, key by key)?"""
        for log, keys in other.texts.items():
            mine = self.texts.get(log, {})
            for key, texts in keys.items():
                have = mine.get(key, ())
                if len(have) < len(texts) or have[: len(texts)] != texts:
                    return False
        return True


@attrs.frozen
class Prior:
    """For a window with a base: the index (``IndexOf_L``, the plug-in's, through which the trace
    checker reads an indexed log) of each log's first entries, as a TLC run of an earlier window
    saved it of its own base (``TraceSave``). The window computes its base's index from it and the
    entries after them (``IndexOf_LSince``), not from the whole base: that took TLC 10 s at the
    start of each window near the end of a million-event run."""

    lengths: Mapping[str, Mapping[Any, int]]  # log -> key -> how many of the base's first entries the saved index is of
    files: Mapping[str, str]  # log -> the file TLC saved that index in


def prior_of(saved: Iterable[tuple[Base, Mapping[str, Path]]], base: Base) -> Prior | None:
    """The index files a run saved of an earlier base that ``base`` begins with (the latest such
    whose files are written), as a Prior for ``base``; None when there is none."""
    for earlier, files in reversed(list(saved)):
        if files and all(f.is_file() for f in files.values()) and base.begins(earlier):
            lengths = {log: {key: earlier.length(log, key) for key in base.texts.get(log, {})} for log in files}
            return Prior(lengths, {log: str(f) for log, f in files.items()})
    return None


def rebase(protocol: Protocol, state: Mapping[str, Any], base: Base | None, text_of: Callable[[Any], str],
           replayed: bool, known: Base | None = None) -> tuple[Base, dict[str, Any]]:
    """``state``, whose logs are the entries after ``base`` (None: whole logs), as a larger base and
    the state of the entries after it: each log's base reaches as far as ``Protocol.base_limits``
    allows. ``text_of`` writes an entry in TLA+; ``replayed``: the state's entries are the replay's
    own objects (kept in ``Base.objects``). ``known``: a base of an earlier state of the same
    replay; where a log begins with its entries, the very objects, their texts are taken from it
    and ``text_of`` writes only the entries after them (a start costs its new entries, not its
    whole logs again: asked of every entry, text_of cost 77 s of the million-event check)."""
    limits = protocol.base_limits(state)
    texts: dict[str, dict[Any, tuple[str, ...]]] = {}
    objects: dict[str, dict[Any, tuple[Any, ...]]] = {}
    rest = dict(state)
    for log in protocol.log_bases:
        if log not in state:
            raise HandOffError(f"a start state has no log {log}")
        texts[log], objects[log] = {}, {}
        after: dict[Any, Any] = {}
        for key, entries in keyed(state[log]):
            if not isinstance(entries, tuple):
                raise HandOffError(f"{log}[{format_value(key)}] is not a sequence")
            had_texts = base.texts[log].get(key, ()) if base is not None else ()
            had_objects = base.objects[log].get(key, ()) if base is not None else ()
            limit = limits.get(log, {}).get(key)
            more = len(entries) if limit is None else max(0, min(len(entries), limit - len(had_texts)))
            same = _same_prefix(known, log, key, entries[:more]) if replayed and base is None else 0
            reused = known.texts[log][key][:same] if known is not None and same else ()
            texts[log][key] = had_texts + reused + tuple(text_of(e) for e in entries[same:more])
            objects[log][key] = had_objects + (tuple(entries[:more]) if replayed else (None,) * more)
            after[key] = entries[more:]
        rest[log] = function_value(after) if after else state[log]
    return Base(texts, objects), rest


def _same_prefix(known: Base | None, log: str, key: Any, entries: Sequence[Any]) -> int:
    """How many of ``entries`` begin with ``known``'s entries of the log's key, object for object:
    all of them or none (a log changes only at its end or by a cut to a prefix, so a known log
    that is no longer a prefix is written again whole)."""
    if known is None:
        return 0
    objects = known.objects.get(log, {}).get(key, ())
    n = len(objects)
    return n if n <= len(entries) and all(map(operator.is_, entries[:n], objects)) else 0


def matches(base: Base | None, state: Mapping[str, Any], whole: Mapping[str, Any], ignore: Iterable[str] = ()) -> bool:
    """Is ``state`` (its logs the entries after ``base``) the state ``whole``, whose logs are whole,
    variables ``ignore`` aside? Over a base, an entry is the replay's object it was made from, or
    else is compared with its text read back."""
    skip = set(ignore)
    if set(state) - skip != set(whole) - skip:
        return False
    for name, value in state.items():
        if name in skip:
            continue
        if base is None or name not in base.texts:
            if value != whole[name]:
                return False
            continue
        after, full = dict(keyed(value)), dict(keyed(whole[name]))
        if set(after) != set(full):
            return False
        for key, entries in full.items():
            texts, objects = base.texts[name].get(key, ()), base.objects[name].get(key, ())
            n = len(texts)
            if len(entries) != n + len(after[key]) or tuple(entries[n:]) != tuple(after[key]):
                return False
            if all(map(operator.is_, entries[:n], objects)):  # the replay's own objects (most often)
                continue
            for i in range(n):
                if entries[i] is not objects[i] and parse_value(texts[i]) != entries[i]:
                    return False
    return True
