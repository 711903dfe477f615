"""Which variables a definition of a spec reads: every variable named in its body or in the body of
a definition it names, transitively, over the trace module and the modules of ``spec_dir`` it
extends.

The answer is an over-approximation, which is what makes its use exact: a name that is a bound
variable as well as a spec variable counts as read, so a definition may be said to read a variable
it does not, never the other way round. A record field is no variable, where the syntax says so:
``r.f``, ``![k].f`` and ``f |-> e`` (``0..n`` is an interval, whose ``n`` counts). Every way TLA+ gives a definition to
read a variable names the variable or a definition that does (these specs have no INSTANCE). A
definition sees only the variables of its own module and of the modules that module extends.

The checker uses it to check an invariant after a step only when the step changed a variable the
invariant reads (``TraceChanged`` in trace_check/traces/invariants.py): if none changed, the
invariant has the value it had in the state before, where it held. An invariant defined as a
conjunction of named parts (``Atomicity == AtomicityNow /\\ AtomicityWhenQuiescent``) is checked
part by part, each where what it reads changed (``conjuncts``). A part X may have a form checked
from the state before, ``XSince`` (``since_form``), given what is known of each variable X reads:
the checker then checks what the step can have changed, such as a log's new entries, not the whole.

A rejected event is shown with what its action reads in the state before it (``reads_before``:
not what the action only primes or leaves UNCHANGED).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import attrs

from trace_check.models.definitions import conjunct_names
from trace_check.traces.protocol import Protocol
from trace_check.traces.spec_text import EXTENDS_RE, VARIABLES_RE, code, spec_stamps, spec_variables

_DEFINITION_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?:\([^)]*\)|\[[^\]]*\])?\s*==", re.MULTILINE)
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_BACKSLASH_RE = re.compile(r"\\[A-Za-z]+")  # \E, \A, \in, \o: operators, not names (E may be a definition)


class ReadsError(RuntimeError):
    """A name the spec text does not define (a bug in the caller or in the protocol's plug-in)."""


@attrs.frozen
class _Spec:
    bodies: dict[str, str]  # each definition's body (a name defined twice: both bodies)
    visible: dict[str, frozenset[str]]  # the variables a definition can name: its module's and those it extends
    raw: dict[str, str] = attrs.field(factory=dict)  # each body with comments and strings blanked, operators kept


def _scan(spec_dir: Path, module: str, seen: dict[str, frozenset[str]], spec: _Spec) -> frozenset[str]:
    """Read ``module`` and what it extends; the variables visible in it."""
    if module in seen:
        return seen[module]
    seen[module] = frozenset()
    path = spec_dir / f"{module}.tla"
    if not path.is_file():
        return frozenset()  # a standard module: it declares no variable, and its operators read none
    text = code(path.read_text(encoding="utf-8"))
    raw = text
    text = _BACKSLASH_RE.sub(lambda m: " " * len(m.group()), text)  # the same length: spans agree with raw's
    visible: set[str] = set()
    for m in EXTENDS_RE.finditer(text):
        for name in m.group(1).split(","):
            visible |= _scan(spec_dir, name.strip(), seen, spec)
    for m in VARIABLES_RE.finditer(text):
        visible |= {v.strip() for v in m.group(1).split(",")}
    seen[module] = frozenset(visible)
    starts = list(_DEFINITION_RE.finditer(text))
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
        name = m.group(1)
        spec.bodies[name] = spec.bodies.get(name, "") + " " + text[m.end() : end]
        spec.raw[name] = spec.raw.get(name, "") + " " + raw[m.end() : end]
        spec.visible[name] = spec.visible.get(name, frozenset()) | seen[module]
    return seen[module]


def _spec(spec_dir: Path, trace_module: str) -> _Spec:
    return _read_spec(spec_dir, trace_module, spec_stamps(spec_dir))


@functools.lru_cache(maxsize=8)
def _read_spec(spec_dir: Path, trace_module: str, stamps: tuple[tuple[str, int, int], ...]) -> _Spec:
    spec = _Spec({}, {})
    _scan(spec_dir, trace_module, {}, spec)
    return spec


def reads_in_module(spec_file: Path, name: str) -> frozenset[str]:
    """The variables definition ``name`` of module ``spec_file`` reads, as ``reads`` finds them (a
    model's module, such as specs/kafka/MCKafkaTxn.tla, and the modules of its folder it extends)."""
    return _reads(spec_file.parent, spec_file.stem, name, spec_stamps(spec_file.parent))


def reads(protocol: Protocol, name: str) -> frozenset[str]:
    """The variables definition ``name`` of the protocol's trace spec reads (an over-approximation)."""
    return _reads(protocol.spec_dir, protocol.trace_module, name, spec_stamps(protocol.spec_dir))


def reads_before(protocol: Protocol, name: str) -> frozenset[str]:
    """The variables action ``name`` of the protocol's trace spec reads in the state before its step:
    as ``reads``, but not a variable it only primes (``x' = ...``) or leaves ``UNCHANGED`` (an
    action that changes a variable from its old value, ``x' = x + 1``, reads it)."""
    return _reads(protocol.spec_dir, protocol.trace_module, name, spec_stamps(protocol.spec_dir), before=True)


_UNCHANGED_RE = re.compile(r"\bUNCHANGED\s*(?:<<[^>]*>>|[A-Za-z_]\w*)")
_PRIMED_RE = re.compile(r"\s*'")


@functools.lru_cache(maxsize=4096)  # asked again for every window of a long trace
def _reads(spec_dir: Path, trace_module: str, name: str, stamps: tuple[tuple[str, int, int], ...],
           before: bool = False) -> frozenset[str]:
    spec = _read_spec(spec_dir, trace_module, stamps)
    if name not in spec.bodies:
        raise ReadsError(f"{trace_module} and the modules it extends define no {name}")
    found: set[str] = set()
    done: set[str] = set()
    todo = [name]
    while todo:
        d = todo.pop()
        if d in done:
            continue
        done.add(d)
        variables = spec.visible[d]  # a module cannot name a variable of a module that extends it
        body = spec.bodies[d]
        if before:  # UNCHANGED names what the step keeps, not what it reads
            body = _UNCHANGED_RE.sub(lambda m: " " * len(m.group()), body)
        for m in _IDENT_RE.finditer(body):
            ident = m.group()
            if _field(body, m.start(), m.end()) or (before and _PRIMED_RE.match(body, m.end())):
                continue
            if ident in variables:
                found.add(ident)
            elif ident in spec.bodies and ident not in done:
                todo.append(ident)
    return frozenset(found)


_MAPS_TO_RE = re.compile(r"\s*\|->")


def _field(body: str, start: int, end: int) -> bool:
    """Is the name at body[start:end] a record field, not a variable: ``r.f``, ``!.f``, or ``f |-> e``
    right after ``[`` or ``,`` (a record)? (``0..n`` is an interval and ``[x \\in S |-> e]`` a
    function: their ``n`` and ``S`` may be variables.)"""
    if start >= 1 and body[start - 1] == "." and not (start >= 2 and body[start - 2] == "."):
        return True
    if _MAPS_TO_RE.match(body, end) is None:
        return False
    k = start - 1
    while k >= 0 and body[k].isspace():
        k -= 1
    return k >= 0 and body[k] in "[,"


def conjuncts(protocol: Protocol, name: str) -> tuple[str, ...]:
    """The named parts of definition ``name`` when its whole body is a conjunction of names
    (``A /\\ B``, or a list of ``/\\ A`` lines); otherwise ``(name,)``."""
    spec = _spec(protocol.spec_dir, protocol.trace_module)
    if name not in spec.raw:
        raise ReadsError(f"{protocol.trace_module} and the modules it extends define no {name}")
    parts = conjunct_names(spec.raw[name])  # a body runs to the next definition
    return parts if parts is not None and all(p in spec.bodies for p in parts) else (name,)


SINCE = "Since"  # XSince(V1, known1, V2, known2, ...): X, given what is known of the state before
INDEXED = "SinceIndexed"  # XSinceIndexed: the same, and for an indexed log, its index before and now
INDEX = "IndexOf_"  # IndexOf_V(V), IndexOf_VSince(V, known, before): an index of log V the checker keeps


def indexed_log(protocol: Protocol, variable: str) -> bool:
    """Does the spec define an index of log ``variable``: ``IndexOf_V(V)``, its value from scratch,
    and ``IndexOf_VSince(V, known, before)``, its value from the state before's index ``before``
    and what is known of the log (as for XSince), reading only the new entries? The checker keeps
    it beside each state, for the ``XSinceIndexed`` forms."""
    spec = _spec(protocol.spec_dir, protocol.trace_module)
    name = INDEX + variable
    if variable not in protocol.logs or name not in spec.bodies:
        return False
    for d in (name, name + SINCE):
        if d not in spec.bodies:
            raise ReadsError(f"{name} is defined but {d} is not: an index of a log needs both")
        if reads(protocol, d):
            raise ReadsError(f"{d} reads {', '.join(sorted(reads(protocol, d)))}: it must read only its arguments")
    return True


def since_form(protocol: Protocol, name: str) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """``(XSince, variables, ())`` when the spec defines ``XSince`` for definition ``name`` (X); else None.
    When it defines ``XSinceIndexed``, that form instead, with the indexed logs (``indexed_log``)
    among the variables: after what is known of each, it takes that log's index in the state
    before and now.
    XSince is X given that X held in the state before. It takes, for each variable X reads (in the
    order the spec declares them), the variable and what is known of it: for a log
    (``Protocol.logs``), how many of each key's first entries the state before had (a log only
    grows at its end or is cut back to a prefix; 0 when it was cut, and everywhere in an initial
    state, which asks for everything to be checked); for any other variable, its value in the
    state before (in an initial state, its own value). XSince itself reads no variable. A spec
    that breaks this gets an error naming the definition, not a check that could miss a violation."""
    spec = _spec(protocol.spec_dir, protocol.trace_module)
    form = name + INDEXED if name + INDEXED in spec.bodies else name + SINCE
    if form not in spec.bodies:
        return None
    read = reads(protocol, name)
    if not read:
        raise ReadsError(f"{form} is defined, but {name} reads no variable: it is checked once, in the initial states")
    if reads(protocol, form):
        raise ReadsError(f"{form} reads {', '.join(sorted(reads(protocol, form)))}: it must read only its arguments, "
                         f"each variable {name} reads and what is known of it in the state before")
    variables = tuple(v for v in spec_variables(protocol) if v in read)
    if not form.endswith(INDEXED):
        return form, variables, ()
    indexed = tuple(v for v in variables if indexed_log(protocol, v))
    if not indexed:
        raise ReadsError(f"{form} is defined, but no log {name} reads has an index ({INDEX}V and {INDEX}V{SINCE})")
    return form, variables, indexed
