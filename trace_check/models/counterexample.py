"""Counterexamples people can read: numbered steps (their sequence diagrams: ``trace_check.traces.diagrams``).

Each step shows the action that produced it and only what it changed, down to the field:
``wk["w1"].phase: "idle" -> "fetched"`` rather than the whole worker table again.

Specs may keep a history variable ``action`` holding ``[name |-> ..., actor |-> ..., args |-> ...]``
for the last step (see specs/README.md). When present it names the step with its parameters
("Fetch w1 src=1 off=0") and who did it, whichever engine found the trace; otherwise the action
name the engine reported is used. Any other field holding a non-empty string says what the step
concerns, for an actor that serves many (``txn_id |-> "t2"`` on a coordinator's step) and is
shown after the actor ("TcAppend coordinator txn_id=t2 epoch=0").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from trace_check.models.result import Counterexample, Step
from trace_check.values.tla import FnMap, Record, format_value, sort_key

ACTION_VAR = "action"
_LABEL_FIELDS = frozenset({"name", "actor", "args", "note"})


@attrs.frozen
class Change:
    """One changed place: a variable, then the keys leading into it (field names, function arguments)."""

    var: str
    keys: tuple[Any, ...] = ()
    old: Any = None
    new: Any = None
    appended: tuple[Any, ...] = ()  # for a sequence that grew at its end: the new elements
    added: frozenset[Any] = frozenset()  # for a set: elements that came in ...
    removed: frozenset[Any] = frozenset()  # ... and elements that went

    @property
    def path(self) -> str:
        return self.var + _keys_text(self.keys)

    def describe(self) -> str:
        if self.appended:
            return f"{self.path} appended {', '.join(format_value(v) for v in self.appended)}"
        if self.added or self.removed:
            return f"{self.path}: {_set_delta(self.added, self.removed)}"
        return f"{self.path}: {format_value(self.old)} -> {format_value(self.new)}"


def _set_delta(added: frozenset[Any], removed: frozenset[Any]) -> str:
    parts = [f"+ {format_value(v)}" for v in sorted(added, key=sort_key)]
    parts += [f"- {format_value(v)}" for v in sorted(removed, key=sort_key)]
    return ", ".join(parts)


def _keys_text(keys: tuple[Any, ...]) -> str:
    return "".join(f".{k}" if _is_field(k) else f"[{k}]" if isinstance(k, _Range) else f"[{format_value(k)}]" for k in keys)


class _Field(str):
    """A record field name (printed ``.name``), as opposed to a function argument (printed ``[arg]``)."""


def _is_field(key: Any) -> bool:
    return isinstance(key, _Field)


@attrs.frozen
class StepLabel:
    name: str
    actor: str | None
    args: tuple[tuple[str, Any], ...]
    note: str = ""  # e.g. the error code a step received
    about: tuple[tuple[str, str], ...] = ()  # what the step concerns, e.g. (("txn_id", "t2"),)

    def __str__(self) -> str:
        parts = [self.name] + ([self.actor] if self.actor else [])
        parts += [f"{k}={v}" for k, v in self.about]
        parts += [f"{k}={format_value(v)}" for k, v in self.args]
        parts += [f"-> {self.note}"] if self.note else []
        return " ".join(parts)


def label(step: Step) -> StepLabel:
    """What happened in this step, from the ``action`` variable if the spec keeps one."""
    act = step.state.get(ACTION_VAR)
    if isinstance(act, Mapping) and "name" in act:
        args = act.get("args", ())
        pairs = tuple(args.items()) if isinstance(args, Mapping) else ()
        actor = act.get("actor") or None
        note = act.get("note") or ""
        about = tuple(
            (str(k), v) for k, v in sorted(act.items(), key=lambda kv: str(kv[0]))
            if k not in _LABEL_FIELDS and isinstance(v, str) and v
        )
        return StepLabel(
            name=str(act["name"]), actor=str(actor) if actor else None, args=pairs, note=str(note), about=about
        )
    return StepLabel(name=step.action or ("Init" if step.index == 1 else "?"), actor=None, args=())


def changes(old: Mapping[str, Any], new: Mapping[str, Any], hide: tuple[str, ...] = (ACTION_VAR,)) -> list[Change]:
    """What differs between two states, variable by variable, descending into records, functions and sequences.

    ``hide`` names variables to leave out, or ``var.field`` for a record field of ``var`` at any depth.
    """
    whole, fields = _hidden(hide)
    out: list[Change] = []
    for var in new:
        if var in whole:
            continue
        if var not in old:
            out.append(Change(var, (), None, new[var]))
        else:
            out.extend(c for c in _diff(var, (), old[var], new[var]) if not (set(c.keys) & fields.get(var, set())))
    return out


def _hidden(hide: tuple[str, ...]) -> tuple[set[str], dict[str, set[str]]]:
    whole = {h for h in hide if "." not in h}
    fields: dict[str, set[str]] = {}
    for h in hide:
        if "." in h:
            var, field = h.split(".", 1)
            fields.setdefault(var, set()).add(field)
    return whole, fields


def _strip(value: Any, fields: set[str]) -> Any:
    """The value without the named record fields, at any depth (for showing an initial state)."""
    if isinstance(value, Record):
        return Record({k: _strip(v, fields) for k, v in value.items() if k not in fields})
    if isinstance(value, FnMap):
        return FnMap({k: _strip(v, fields) for k, v in value.items()})
    if isinstance(value, tuple):
        return tuple(_strip(v, fields) for v in value)
    return value


def _diff(var: str, keys: tuple[Any, ...], old: Any, new: Any) -> Iterator[Change]:
    if old == new:
        return
    if isinstance(old, (Record, FnMap)) and isinstance(new, (Record, FnMap)) and old.keys() == new.keys():
        for key in new:
            yield from _diff(var, (*keys, _Field(key) if isinstance(new, Record) else key), old[key], new[key])
        return
    if isinstance(old, tuple) and isinstance(new, tuple):
        if len(old) == len(new):  # a function over 1..n (TLC prints it as a sequence): compare by index
            for i, (a, b) in enumerate(zip(old, new, strict=False), start=1):
                yield from _diff(var, (*keys, i), a, b)
            return
        if len(new) > len(old) and new[: len(old)] == old:
            yield Change(var, keys, old, new, appended=new[len(old) :])
            return
    if isinstance(old, frozenset) and isinstance(new, frozenset) and old and new:
        # a set that gained or lost a few elements (a network, a set of pending things)
        yield Change(var, keys, old, new, added=new - old, removed=old - new)
        return
    yield Change(var, keys, old, new)


@attrs.frozen
class Reading:
    """How to show a counterexample to a reader rather than in full: the property it breaks
    (``broken``), its named part that is false (``part``, when the engine checked its parts one
    by one: CheckTask.parts), and the variables that part or property reads (``reads``): the first
    state shows only those, and the last state is marked as the one that breaks it, with their
    values there; a
    ``witness`` is marked as the example run it is. A state's value too long for ``width``
    columns is shown part by part, a line per element or field (None: every value on one line)."""

    broken: str
    reads: frozenset[str]
    witness: bool = False
    width: int | None = None
    part: str | None = None

    @property
    def reader(self) -> str:
        """What reads the variables shown: the false part, or the property."""
        return self.part or self.broken


INDENT = "       "


def state_lines(var: str, value: Any, width: int | None, indent: str = INDENT) -> list[str]:
    """``var = value`` on one line, or, when that is longer than ``width``, a line per element of a
    sequence or function (``plog[1][2] = [...]``), and per field of a record twice as long
    (``cl[<<"t1", 1>>].st = "down"``), split again where still too long; nothing is cut. Each
    line starts with ``indent`` (a counterexample's steps; a rejected trace's state indents less)."""
    return list(_split(var, (), value, width, indent))


def _split(var: str, keys: tuple[Any, ...], value: Any, width: int | None, indent: str) -> Iterator[str]:
    line = f"{indent}{var}{_keys_text(keys)} = {format_value(value)}"
    # a record of plain fields is one thing (a log entry, a client): kept on one line up to twice the width
    if width is None or len(line) <= width * (2 if _flat(value) else 1) or not value:
        yield line
    elif isinstance(value, Record):
        for key in value:
            yield from _split(var, (*keys, _Field(key)), value[key], width, indent)
    elif isinstance(value, (FnMap, tuple)):
        entries = list(enumerate(value, start=1)) if isinstance(value, tuple) else [(k, value[k]) for k in sorted(value, key=sort_key)]
        for key, element in _runs(entries):
            yield from _split(var, (*keys, key), element, width, indent)
    else:
        yield line  # a set or a long string: whole


class _Range(str):
    """Consecutive arguments of a function whose values are all the same (printed ``[3..6]``)."""


def _runs(entries: list[tuple[Any, Any]]) -> Iterator[tuple[Any, Any]]:
    """``entries`` (argument, value), with each run of consecutive integer arguments that have the
    same value as one entry, its argument the range: ``kqp[3..6]`` for four sessions not begun."""
    k = 0
    while k < len(entries):
        key, value = entries[k]
        end = k
        while (end + 1 < len(entries) and isinstance(key, int) and entries[end + 1][0] == key + (end + 1 - k)
               and entries[end + 1][1] == value):
            end += 1
        yield (_Range(f"{key}..{entries[end][0]}") if end > k else key), value
        k = end + 1


def _flat(value: Any) -> bool:
    """A record whose fields hold no record, function or sequence of them."""

    def plain(v: Any) -> bool:
        return not isinstance(v, (Record, FnMap)) and not (isinstance(v, tuple) and not all(map(plain, v)))

    return isinstance(value, Record) and all(map(plain, value.values()))


def render_steps(cex: Counterexample, hide: tuple[str, ...] = (), reading: Reading | None = None) -> list[str]:
    """The trace as numbered steps: the initial state in full, then each action and what it changed.

    Variables in ``hide`` are left out (a model's ``trace_hide``); a first line says so. With a
    ``reading``, the initial state shows only the variables the broken property reads (a line
    names the others), the last state is marked with their values there, and a value too long for
    the reading's width is shown part by part.
    """
    hidden = (ACTION_VAR, *hide)
    whole, fields = _hidden(hidden)
    width = reading.width if reading is not None else None
    lines: list[str] = [f"     (not shown: {', '.join(hide)})"] if hide else []
    previous: Mapping[str, Any] | None = None

    def values(state: Mapping[str, Any], shown: list[str]) -> list[str]:
        return [line for var in shown for line in state_lines(var, _strip(state[var], fields.get(var, set())), width)]

    for step in cex.steps:
        lines.append(f"{step.index:>3}. {label(step)}")
        if previous is None:
            visible = [var for var in step.state if var not in whole]
            if reading is None:
                lines += values(step.state, visible)
            else:
                lines += values(step.state, [v for v in visible if v in reading.reads])
                others = [v for v in visible if v not in reading.reads]
                if others:
                    lines.append(f"{INDENT}(and {', '.join(others)}, which {reading.reader} does not read)")
        else:
            found = changes(previous, step.state, hidden)
            lines += [f"{INDENT}{c.describe()}" for c in found] or [f"{INDENT}(no change)"]
        previous = step.state
    if cex.loop is not None and cex.steps and cex.loop == cex.steps[-1].index:
        lines.append(f"{INDENT}... and nothing more happens: the behaviour stays in state {cex.loop} for ever")
    elif cex.loop is not None:
        lines.append(f"{INDENT}... and back to state {cex.loop}: the behaviour loops from there for ever")
    elif reading is not None and cex.steps:
        last = cex.steps[-1]
        if reading.witness:
            lines.append(f"  => state {last.index} is the one the witness {reading.broken} asks for; what it reads there:")
        elif reading.part:
            lines.append(f"  => state {last.index} breaks {reading.broken}: its part {reading.part} is false; what that reads there:")
        else:
            lines.append(f"  => state {last.index} breaks {reading.broken}; what it reads there:")
        lines += values(last.state, [v for v in last.state if v not in whole and v in reading.reads])
    return lines

