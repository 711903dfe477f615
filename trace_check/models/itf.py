"""Read and write ITF traces (the Informal Trace Format of Apalache and Quint) with itf-py.

itf-py does the JSON encoding and decoding; this module converts between its Python values and
the project's model in ``values.tla``. For reading, a shim on the raw JSON works around what
itf-py 0.5.0 does with records and variants, without a decoder of our own:

* it makes a ``namedtuple`` class per record (fields as names) and per variant (tag as name),
  so a tag such as ``None`` (Quint's ``Option``) or a field such as ``class``, ``my-field`` or
  ``_x`` raises ``ValueError``;
* it flattens a variant whose payload is a JSON object into the variant's fields, which breaks
  on ``{"tag": "Some", "value": {"#bigint": "40"}}`` and confuses ``Some(5)`` with
  ``Some([value |-> 5])``;
* namedtuples compare as plain tuples, so ``{[a |-> 1], [b |-> 1]}`` or ``{A(1), B(1)}``
  silently become one-element sets (and map keys merge) while itf-py builds them; escaping the
  names would not fix that.

So before decoding, ``_prepare`` rewrites every record, variant, tuple and ``#unserializable``
as an ITF tuple whose first element says what it is and which carries the names as data
(``{"#tup": ["#rec", ["a", "b"], 1, 2]}``). itf-py decodes those as plain, hashable tuples that
differ whenever the values differ, and ``_from_itf_py`` turns them into ``Record``, ``Variant``,
``tuple`` and ``Unserializable``. Writing goes through itf-py's ``value_to_json`` with small
adapter objects (see ``_to_itf_py``).

One ambiguity is the format's own: ITF writes a variant as ``{"tag": t, "value": v}``, so a
record whose fields are exactly ``tag`` and ``value`` reads back as a variant (in itf-py and in
Apalache alike).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import itf_py
from itf_py.itf import ITFUnserializable, State, Trace

from trace_check.errors import ItfError
from trace_check.models.result import Counterexample, Step
from trace_check.values.tla import FnMap, Record, Unserializable, Variant, sort_key

__all__ = ["ITF_FORMAT_DESCRIPTION", "ItfError", "itf_json", "read_itf", "write_itf"]

ITF_FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"

# First elements of the tuples _prepare makes; since it rewrites every tuple-shaped ITF value,
# the first element of each tuple itf-py returns is one of these.
_TUP, _REC, _VARIANT, _UNSERIALIZABLE = "#tup", "#rec", "#variant", "#unserializable"


# ---------------------------------------------------------------------------------------------
# Reading


def read_itf(path: Path) -> Counterexample:
    """Read an ITF trace into a ``Counterexample``; raise ``ItfError`` if it is not one."""
    path = Path(path)
    data = _load_json(path)
    _check_shape(data, path)
    try:
        trace = itf_py.trace_from_json(_prepare_trace(data))
        steps = tuple(_step(i, state) for i, state in enumerate(trace.states))
    except ItfError as err:
        raise ItfError(f"{path}: not a valid ITF trace: {err}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        raise ItfError(f"{path}: not a valid ITF trace: {type(err).__name__}: {err}") from None
    return Counterexample(steps=steps, variables=tuple(trace.vars), loop=_loop_from_itf(trace.loop))


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ItfError(f"{path}: cannot read the file: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise ItfError(f"{path}: not an ITF trace: the file is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ItfError(f"{path}: not JSON: {err.msg} at line {err.lineno}, column {err.colno}") from None


def _check_shape(data: Any, path: Path) -> None:
    """Reject what is not a trace up front, so the message says what is missing."""
    if not isinstance(data, dict):
        raise ItfError(f"{path}: not an ITF trace: expected a JSON object, found {type(data).__name__}")
    for key in ("vars", "states"):
        if key not in data:
            raise ItfError(f"{path}: not an ITF trace: no {key!r} field")
        if not isinstance(data[key], list):
            raise ItfError(f"{path}: not an ITF trace: {key!r} is not a list")
    if not all(isinstance(v, str) for v in data["vars"]):
        raise ItfError(f"{path}: not an ITF trace: 'vars' must be a list of names")
    for i, state in enumerate(data["states"]):
        if not isinstance(state, dict):
            raise ItfError(f"{path}: not an ITF trace: state {i} is not a JSON object")
    loop = data.get("loop")
    if loop is not None and (not isinstance(loop, int) or isinstance(loop, bool)):
        raise ItfError(f"{path}: not an ITF trace: 'loop' is not an integer")


def _prepare_trace(data: dict[str, Any]) -> dict[str, Any]:
    """The trace with every value passed through ``_prepare``; the trace's own keys stay."""
    states = [
        {k: (v if k == "#meta" else _prepare(v)) for k, v in state.items()} for state in data["states"]
    ]
    return {**data, "states": states}


def _prepare(val: Any) -> Any:
    """Rewrite raw ITF JSON so that itf-py decodes it without loss (see the module doc).

    The branches test keys in the order itf-py's ``value_from_json`` does, so we agree with
    itf-py (and Apalache) on what is a record and what is a variant.
    """
    if isinstance(val, list):
        return [_prepare(v) for v in val]
    if isinstance(val, (bool, str, int)):
        return val
    if val is None or isinstance(val, float):
        raise ItfError(f"unsupported JSON value {json.dumps(val)} (ITF has no null or fractional numbers)")
    if not isinstance(val, dict):
        raise ItfError(f"unsupported JSON value of type {type(val).__name__}")
    if "#bigint" in val:
        return val
    if "#tup" in val:
        return _tagged(_TUP, *(_prepare(v) for v in _json_list(val, "#tup")))
    if "#set" in val:
        return {"#set": [_prepare(v) for v in _json_list(val, "#set")]}
    if "#map" in val:
        return {"#map": [_prepare_pair(pair) for pair in _json_list(val, "#map")]}
    if "#unserializable" in val:
        return _tagged(_UNSERIALIZABLE, str(val["#unserializable"]))
    if len(val) == 2 and "tag" in val and "value" in val:
        return _prepare_variant(val["tag"], val["value"])
    return _tagged(_REC, list(val), *(_prepare(v) for v in val.values()))


def _tagged(kind: str, *items: Any) -> dict[str, Any]:
    return {"#tup": [kind, *items]}


def _json_list(val: dict[str, Any], key: str) -> list[Any]:
    items = val[key]
    if not isinstance(items, list):
        raise ItfError(f"{key} must be followed by a list")
    return items


def _prepare_pair(pair: Any) -> list[Any]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise ItfError("a #map entry must be a [key, value] pair")
    return [_prepare(pair[0]), _prepare(pair[1])]


def _prepare_variant(tag: Any, payload: Any) -> dict[str, Any]:
    if not isinstance(tag, str):
        raise ItfError(f"a variant tag must be a string, found {json.dumps(tag)}")
    # itf-py writes a variant without payload as {"tag": t, "value": null}; Apalache and Quint
    # write the unit payload as an empty record, so read both as an empty record.
    return _tagged(_VARIANT, tag, _prepare({} if payload is None else payload))


def _step(i: int, state: State) -> Step:
    action = state.meta.get("action") if isinstance(state.meta, dict) else None
    return Step(
        index=i + 1,
        action=action if isinstance(action, str) else None,
        state={name: _from_itf_py(value) for name, value in state.values.items()},
    )


def _loop_from_itf(loop: int | None) -> int | None:
    """ITF counts states from 0; ``Counterexample.loop`` uses 1-based ``Step.index``."""
    return None if loop is None else loop + 1


def _from_itf_py(val: Any) -> Any:
    """Convert a value itf-py decoded from ``_prepare``d JSON into the project's model."""
    if isinstance(val, (bool, int, str)):
        return val
    if isinstance(val, tuple):
        return _from_tagged(val)
    if isinstance(val, list):  # itf-py's ImmutableList: a JSON list, ITF's sequence
        return tuple(_from_itf_py(v) for v in val)
    if isinstance(val, frozenset):
        return frozenset(_from_itf_py(v) for v in val)
    if isinstance(val, Mapping):  # itf-py's ImmutableDict, from "#map"
        return FnMap({_from_itf_py(k): _from_itf_py(v) for k, v in val.items()})
    raise ItfError(f"unexpected value from itf-py: {val!r}")


def _from_tagged(val: tuple[Any, ...]) -> Any:
    kind, items = val[0], val[1:]
    if kind == _TUP:
        return tuple(_from_itf_py(v) for v in items)
    if kind == _REC:
        names, values = items[0], items[1:]
        return Record({name: _from_itf_py(v) for name, v in zip(names, values, strict=False)})
    if kind == _VARIANT:
        return Variant(items[0], _from_itf_py(items[1]))
    if kind == _UNSERIALIZABLE:
        return Unserializable(items[0])
    raise ItfError(f"unexpected tuple from itf-py: {val!r}")


# ---------------------------------------------------------------------------------------------
# Writing


def write_itf(cex: Counterexample, path: Path, meta: Mapping[str, Any] | None = None) -> None:
    """Write ``cex`` as a pretty-printed ITF trace; the same trace always gives the same bytes.

    ``meta`` goes into the trace's ``#meta`` (after ``format`` and ``format-description``).
    Each state's ``#meta`` has its 0-based ITF ``index`` and, when known, the ``action``.
    """
    text = json.dumps(itf_json(cex, meta or {}), indent=2, ensure_ascii=False) + "\n"
    Path(path).write_text(text, encoding="utf-8")


def itf_json(cex: Counterexample, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The ITF trace of ``cex`` as plain JSON data (what ``write_itf`` writes)."""
    trace = Trace(
        meta={"format": "ITF", "format-description": ITF_FORMAT_DESCRIPTION, **meta},
        params=[],
        vars=list(cex.variables),
        states=[_state(i, step, cex.variables) for i, step in enumerate(cex.steps)],
        loop=None if cex.loop is None else cex.loop - 1,
    )
    plain: dict[str, Any] = _plain_json(itf_py.trace_to_json(trace))
    return plain


def _state(i: int, step: Step, variables: Iterable[str]) -> State:
    meta: dict[str, Any] = {"index": i}
    if step.action is not None:
        meta["action"] = step.action
    return State(meta=meta, values={name: _to_itf_py(value) for name, value in _state_items(step, variables)})


def _state_items(step: Step, variables: Iterable[str]) -> list[tuple[str, Any]]:
    """The trace's variables in its order, then any other names (e.g. constants) sorted."""
    known = [v for v in variables if v in step.state]
    others = sorted(set(step.state) - set(known))
    return [(name, step.state[name]) for name in known + others]


def _to_itf_py(val: Any) -> Any:
    """Convert a project value into what itf-py's ``value_to_json`` expects."""
    if isinstance(val, (bool, int, str)):
        return val
    if isinstance(val, Record):
        # SimpleNamespace: itf-py writes an object's __dict__ as a record, whatever the names.
        return SimpleNamespace(**{k: _to_itf_py(v) for k, v in val.items()})
    if isinstance(val, FnMap):
        return _OrderedMap([(_to_itf_py(k), _to_itf_py(v)) for k, v in _sorted(val.items(), lambda kv: kv[0])])
    if isinstance(val, Variant):
        return _variant_class(val.tag)(value=_to_itf_py(val.value))
    if isinstance(val, tuple):
        return [_to_itf_py(v) for v in val]  # a JSON list is ITF's sequence
    if isinstance(val, frozenset):
        return _OrderedSet(_to_itf_py(v) for v in _sorted(val, lambda v: v))
    if isinstance(val, Unserializable):
        return _Unserializable(val.text)
    raise ItfError(f"cannot write {val!r} as ITF: not a TLA+ value of the project's model")


def _sorted(items: Iterable[Any], value_of: Any) -> list[Any]:
    """Sort by the project's value order; the type name separates kinds that print alike."""
    return sorted(items, key=lambda item: (sort_key(value_of(item)), type(value_of(item)).__name__))


@functools.cache
def _variant_class(tag: str) -> type:
    # itf-py names the tag after the class and, for a single field called "value", writes
    # {"tag": <class name>, "value": <field>}; type() accepts any string as a class name.
    return type(tag, (SimpleNamespace,), {"_itf_variant": True})


class _OrderedSet(frozenset[Any]):
    """A set for itf-py that iterates in the order given.

    itf-py writes ``[... for v in val]`` for a frozenset, and a real frozenset's order depends
    on the string hash seed. Converted elements (namespaces, lists) are unhashable anyway, so
    they live in a list and the frozenset part stays empty.
    """

    _items: list[Any]

    def __new__(cls, items: Iterable[Any]) -> _OrderedSet:
        obj = super().__new__(cls)
        obj._items = list(items)
        return obj

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)


class _OrderedMap(dict[Any, Any]):
    """A map for itf-py whose ``items()`` are the pairs given, in order; keys may be unhashable."""

    def __init__(self, pairs: list[tuple[Any, Any]]) -> None:
        super().__init__()
        self._pairs = pairs

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]  # itf-py only iterates it
        return list(self._pairs)


class _Unserializable:
    """Has no ``__dict__``, so itf-py turns it into ``ITFUnserializable(str(self))``."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _plain_json(data: Any) -> Any:
    """itf-py's output with its ``ITFUnserializable`` objects written the ITF way."""
    if isinstance(data, ITFUnserializable):
        return {"#unserializable": data.value}
    if isinstance(data, dict):
        return {k: _plain_json(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain_json(v) for v in data]
    return data
