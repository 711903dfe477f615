"""TLA+ values as Python values, shared by every engine.

Both engines' counterexamples end up in this one model, so the printer, the ITF writer and the
Mermaid writer never need to know which engine found a trace:

=====================  ==========================  =========================================
TLA+                   Python                      notes
=====================  ==========================  =========================================
``TRUE``, ``FALSE``    ``bool``
integers               ``int``
strings, model values  ``str``                     Apalache writes model values as ``"a_OF_T"``
sets                   ``frozenset``
sequences and tuples   ``tuple``                   TLC prints both as ``<<...>>``
records                ``Record``                  ``[a |-> 1]``
other functions        ``FnMap``                   ``(k :> v @@ ...)``
variants               ``Variant``                 Apalache/Quint sum types
unprintable values     ``Unserializable``          ITF ``#unserializable``
=====================  ==========================  =========================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import attrs
from frozendict import frozendict


class Record(frozendict[str, Any]):
    """A TLA+ record: an immutable, hashable mapping from field names to values."""

    def __repr__(self) -> str:
        return f"Record({dict(self)!r})"


class FnMap(frozendict[Any, Any]):
    """A TLA+ function that is neither a record nor a sequence."""

    def __repr__(self) -> str:
        return f"FnMap({dict(self)!r})"


@attrs.frozen
class Variant:
    """A value of an Apalache/Quint sum type: ``Variant("Some", 40)``."""

    tag: str
    value: Any


@attrs.frozen
class Unserializable:
    """A value an engine could not serialise; ``text`` is what it printed instead."""

    text: str


TlaValue: TypeAlias = bool | int | str | frozenset[Any] | tuple[Any, ...] | Record | FnMap | Variant | Unserializable


def is_field_name(s: str) -> bool:
    """Does TLC print a function whose domain holds string ``s`` as a record (``[s |-> ...]``)?
    (tlc2.value.impl.FcnRcdValue.isName: letters, digits and '_', at least one letter, and not
    ``WF_...``/``SF_...`` once four characters long; Java's chars are UTF-16 units, so a character
    beyond the BMP is no letter there.)"""
    letter = False
    for ch in s:
        if ch == "_":
            continue
        if ord(ch) > 0xFFFF or not (ch.isalpha() or ch.isdecimal()):
            return False
        letter = letter or ch.isalpha()
    return letter and (len(s) < 4 or not (s.startswith("WF_") or s.startswith("SF_")))


def function_value(d: Any) -> Any:
    """A TLA+ function given as a mapping, in the form TLC prints it (FcnRcdValue's toString) and
    ``parse_value`` reads it back: no domain ``()``; a domain of strings that are all field names
    (``is_field_name``) a ``Record``; a domain 1..n a tuple; any other a ``FnMap``."""
    if not d:
        return ()
    keys = list(d)
    if all(isinstance(k, str) and is_field_name(k) for k in keys):
        return Record(d)
    n = len(keys)
    if all(type(k) is int and 1 <= k <= n for k in keys):  # n distinct keys in 1..n: exactly 1..n
        return tuple(d[k] for k in range(1, n + 1))
    return FnMap(d)


# How TLC writes special characters inside a string literal.
_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\f": "\\f"}


def format_value(value: Any) -> str:
    """Render a value in TLA+ notation, as TLC prints it (sets and maps in a stable order)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + "".join(_STRING_ESCAPES.get(ch, ch) for ch in value) + '"'
    if isinstance(value, Record):
        if not value:
            return "[]"
        return "[" + ", ".join(f"{k} |-> {format_value(v)}" for k, v in value.items()) + "]"
    if isinstance(value, FnMap):
        if not value:
            return "<<>>"
        items = sorted(value.items(), key=lambda kv: sort_key(kv[0]))
        return "(" + " @@ ".join(f"{format_value(k)} :> {format_value(v)}" for k, v in items) + ")"
    if isinstance(value, frozenset):
        return "{" + ", ".join(format_value(v) for v in sorted(value, key=sort_key)) + "}"
    if isinstance(value, tuple):
        return "<<" + ", ".join(format_value(v) for v in value) + ">>"
    if isinstance(value, Variant):
        return f"{value.tag}({format_value(value.value)})"
    if isinstance(value, Unserializable):
        return value.text
    return repr(value)


def format_log(value: Any, element: Callable[[Any], str]) -> str:
    """``format_value`` of a function whose values are sequences (a log variable: each key's
    entries), with each entry written by ``element`` (which may keep the text of entries it has
    written before). Anything else is written by ``format_value``."""

    def entries(seq: Any) -> str:
        if not isinstance(seq, tuple):
            return format_value(seq)
        return "<<" + ", ".join(element(e) for e in seq) + ">>"

    if isinstance(value, Record) and value:
        return "[" + ", ".join(f"{k} |-> {entries(v)}" for k, v in value.items()) + "]"
    if isinstance(value, FnMap) and value:
        items = sorted(value.items(), key=lambda kv: sort_key(kv[0]))
        return "(" + " @@ ".join(f"{format_value(k)} :> {entries(v)}" for k, v in items) + ")"
    if isinstance(value, tuple):
        return "<<" + ", ".join(entries(v) for v in value) + ">>"
    return format_value(value)


def sort_key(value: Any) -> tuple[Any, ...]:
    """A total order over values of mixed kinds, so that printing is deterministic."""
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, int):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    return (3, format_value(value))


def constant_to_tla(value: Any) -> str:
    """TLA+ text for a registry constant: an int, a string, a bool, or a list meaning a set of them.

    The text is the same for TLC's .cfg and for an Apalache ``CInit`` operator, which is why
    registry constants are limited to these kinds.
    """
    if isinstance(value, (list, tuple, set, frozenset)):
        return "{" + ", ".join(constant_to_tla(v) for v in value) + "}"
    if isinstance(value, (bool, int, str)):
        return format_value(value)
    raise TypeError(f"a constant must be an integer, a string, a boolean or a list of them, not {value!r}")
