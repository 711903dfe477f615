"""The invariants a trace is checked against (``invariants_of``), and how the generated module checks
them after every event: only where what they read changed, part by part, through the parts'
XSince forms and the logs' indexes (``changed_definitions``, ``indexed_logs``,
``from_index_definitions``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_check.models.registry import spec_invariants
from trace_check.traces import handoff
from trace_check.traces.protocol import Protocol
from trace_check.traces.reads import INDEX, conjuncts, indexed_log, reads, since_form
from trace_check.traces.spec_text import spec_stamps, spec_variables
from trace_check.traces.tla_text import tla_string
from trace_check.values.tla import format_value, function_value


def invariants_of(protocol: Protocol) -> tuple[str, ...]:
    """The invariants a trace is checked against: the base of the protocol's registry, if it has one."""
    if protocol.registry is not None:
        return spec_invariants(protocol.registry)
    return protocol.invariants


def changed_definitions(protocol: Protocol, init: str, checked: bool = False, prior: handoff.Prior | None = None,
                        save: Mapping[str, str] | None = None, kept: bool = False) -> list[str]:
    r"""After every event, each invariant X is checked in the states where a variable it reads
    (trace_check/traces/reads.py, an over-approximation) differs from the state before, and in
    the initial states. The others need no check: X reads the same values there as in the state
    before, where it held. ``traceChanged``, a variable of the generated module, holds the numbers of the variables
    that differ (all of them in an initial state); the view (``TraceView``) leaves it out, so the
    states TLC tells apart are the spec's.

    An invariant defined as a conjunction of named parts (``reads.conjuncts``) is guarded part by
    part, so a part that reads only the logs is not checked after a step that changed only the
    network. A part X with a form checked from the state before (``XSince``, ``reads.since_form``)
    is checked through it: after an append, only what the new entries can change, not the whole log.
    Measured on a 2,004-event faulty run (docs/benchmarks.md): at the end 5.4 s; every invariant in
    every state 27.0 s; in the states where what it reads changed 14.1 s; part by part, with the
    linear log operators, 9.5 s against 4.4 s. On 5,004 events: 45.7 s against 7.7 s at the end,
    and 11.5 s with the XSince forms. (The same guard as a TLC action property,
    [][UNCHANGED reads \/ X']_l, had no verdict in 600 s.)"""
    bases = protocol.log_bases

    def whole(v: str) -> str:  # log v, whole: base and variable (Protocol.log_bases)
        return bases[v][1] if v in bases else v

    def before_len(v: str) -> str:  # what precedes log v's entries at key logKey: its base
        return f"Len({bases[v][0]}[logKey]) + " if v in bases else ""

    def same(v: str) -> str:
        # (TraceSame, with txconform's Java: v' = v, not walking the parts the step left shared)
        if v in protocol.logs:
            lengths = f"DOMAIN {v}' = DOMAIN {v} /\\ \\A logKey \\in DOMAIN {v} : Len({v}'[logKey]) = Len({v}[logKey])"
            return f"(TraceSame({v}', {v}) \\/ ({lengths}))" if kept else lengths
        return f"TraceSame({v}', {v})" if kept else f"{v}' = {v}"

    _, parts, read, since = invariant_forms(protocol)
    # Each variable by its number, not its name: a string in the module would change the order in
    # which TLC prints record fields of the same name (specs/README.md), and with it the docs.
    number = {n: k for k, n in enumerate(sorted({v for vs in read.values() for v in vs}), 1)}
    # What a form checked from the state before (reads.since_form) is given: for a log L, traceFrom_L,
    # for each key how many of its first entries the state before had (its length then, when the
    # step did not make it shorter: a log only grows at its end or is cut back to a prefix,
    # Protocol.logs; else 0; 0 in an initial state); for another variable V, tracePrev_V, its value
    # in the state before (in an initial state, its own).
    used = {v for _, vs, _ in since.values() for v in vs} | set(indexed_logs(protocol))
    known = {v: f"traceFrom_{v}" if v in protocol.logs else f"tracePrev_{v}" for v in spec_variables(protocol) if v in used}
    # A log's index (reads.indexed_log), for the XSinceIndexed forms: traceIndex_L, IndexOf_L of the
    # log, kept from the state before's by IndexOf_LSince (the new entries alone), and
    # traceIndexBefore_L, the state before's (in an initial state, its own). Computed from scratch
    # once, in the initial states. At 90,000 events of a faulty Kafka run, the LSO found through the
    # log and AtomicityWhenQuiescent through every record took nine tenths of a window's time.
    indexed = indexed_logs(protocol)
    # ``checked``: the initial states are a window's start, whose invariants the window before
    # checked in the same states (its last): nothing has changed, and the logs are known to hold.
    # ``kept`` (txconform's Java for TLC): the state holds a key of each index, traceIndexKey_L, and
    # reads the index through TraceKept; TLC normalizes every variable of every state, and an index
    # grows with the trace (TraceLoad.java: TraceKeep).
    index_vars = [name for v in indexed for name in ((f"traceIndexKey_{v}", f"traceIndexBeforeKey_{v}") if kept
                                                     else (f"traceIndex_{v}", f"traceIndexBefore_{v}"))]

    def index_init(v: str) -> str:
        start = (f"{INDEX}{v}Since({whole(v)}, [logKey \\in DOMAIN {v} |-> Len({bases[v][0]}[logKey])], TraceBaseIndex_{v})"
                 if v in bases else f"{INDEX}{v}({v})")
        if kept:
            return f" /\\ traceIndexKey_{v} = TraceKeep({start}) /\\ traceIndexBeforeKey_{v} = traceIndexKey_{v}"
        return f" /\\ traceIndex_{v} = {start} /\\ traceIndexBefore_{v} = traceIndex_{v}"

    def index_next(v: str) -> str:
        now = f"{INDEX}{v}Since({whole(v)}', {known[v]}', traceIndex_{v})"
        if kept:  # a log the step left as it was has the same index (IndexOf_LSince from its whole length)
            return (f" /\\ traceIndexBeforeKey_{v}' = traceIndexKey_{v} /\\ traceIndexKey_{v}' = "
                    f"(IF TraceSame({v}', {v}) THEN traceIndexKey_{v} ELSE TraceKeep({now}))")
        return f" /\\ traceIndexBefore_{v}' = traceIndex_{v} /\\ traceIndex_{v}' = {now}"

    lines = [f"VARIABLES {', '.join(['traceChanged', *known.values(), *index_vars])}", "", f"TraceChangedNames == 1..{len(number)}"]
    if kept:
        lines += [f"traceIndex{when}_{v} == TraceKept(traceIndex{when}Key_{v})" for v in indexed for when in ("", "Before")]
    # A window's base index is computed from the index an earlier window saved of the first entries
    # of the same logs (``prior``: handoff.Prior), and saved for the windows after it (``save``).
    for v in indexed:
        if v in bases and prior is not None and v in prior.files:
            known_lengths = function_value(dict(prior.lengths[v]))
            lines.append(f"TraceBaseIndex_{v} == {INDEX}{v}Since({bases[v][0]}, {format_value(known_lengths)}, "
                         f"TraceLoaded({tla_string(prior.files[v])}))")
        elif v in bases:
            lines.append(f"TraceBaseIndex_{v} == {INDEX}{v}({bases[v][0]})")
        if v in bases and save is not None and v in save:
            lines.append(f"ASSUME TraceSave({tla_string(save[v])}, TraceBaseIndex_{v})")
    lines.append(f"TraceChangedInit == {init} /\\ traceChanged = {'{}' if checked else 'TraceChangedNames'}"
                 + "".join((f" /\\ {k} = [logKey \\in DOMAIN {v} |-> {f'{before_len(v)}Len({v}[logKey])' if checked else 0}]")
                           if v in protocol.logs else f" /\\ {k} = {v}" for v, k in known.items())
                 + "".join(index_init(v) for v in indexed))
    # A log is compared by its lengths: it changed exactly where one differs, since a step only
    # appends at a log's end or cuts it back to a prefix (Protocol.logs). Comparing its entries
    # read the whole log after every event: on 5,000 events after 25,000, 5 s of 23.
    diffs = " \\cup ".join(f"(IF {same(n)} THEN {{}} ELSE {{{k}}})" for n, k in number.items()) or "{}"

    def from_next(v: str, k: str) -> str:  # traceFrom_L' (a log the step left as it was: each key's whole length)
        lengths = (f"[logKey \\in DOMAIN {v}' |-> IF logKey \\in DOMAIN {v} /\\ "
                   f"Len({v}'[logKey]) >= Len({v}[logKey]) THEN {before_len(v)}Len({v}[logKey]) ELSE 0]")
        if kept:
            lengths = f"(IF TraceSame({v}', {v}) THEN [logKey \\in DOMAIN {v} |-> {before_len(v)}Len({v}[logKey])] ELSE {lengths})"
        return f" /\\ {k}' = {lengths}"

    befores = "".join(from_next(v, k) if v in protocol.logs else f" /\\ {k}' = {v}" for v, k in known.items())
    befores += "".join(index_next(v) for v in indexed)
    lines.append(f"TraceChangedNext == TraceNext /\\ traceChanged' = {diffs}{befores}")

    def guarded(part: str) -> str:
        check = part
        if part in since:
            form, variables, ix = since[part]
            check = f"{form}({', '.join(f'{whole(v)}, {known[v]}' + (f', traceIndexBefore_{v}, traceIndex_{v}' if v in ix else '') for v in variables)})"
        if not read[part]:
            return f"(l = 1 => {check})"
        return f"(traceChanged \\cap {{{', '.join(str(number[v]) for v in read[part])}}} # {{}} => {check})"

    for inv, part in checked_parts(protocol):  # each named part its own invariant, so that TLC names the one that fails
        lines.append(f"{checked_name(inv, part)} == " + (guarded(part) if part else " /\\ ".join(guarded(q) for q in parts[inv])))
    lines += [f"{head} == {form}" for head, form in from_index_definitions(protocol).values()]
    return lines


_Forms = tuple[tuple[str, ...], dict[str, tuple[str, ...]], dict[str, list[str]], dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]]
_FORMS: dict[tuple[Any, ...], _Forms] = {}  # invariant_forms by _forms_key; a window's module asks for them four times


def _forms_key(protocol: Protocol) -> tuple[Any, ...]:
    """What invariant_forms reads: the protocol's spec modules and registry, as they are now (a spec edited
    while the process runs gives a new key)."""
    registry = protocol.registry
    kept = (registry.stat().st_mtime_ns, registry.stat().st_size) if registry is not None and registry.is_file() else None
    return (protocol.name, protocol.spec_dir, protocol.trace_module, registry, kept, protocol.invariants,
            spec_stamps(protocol.spec_dir))


def invariant_forms(protocol: Protocol) -> _Forms:
    """The invariants, their named parts, what each part reads, and the parts' XSince forms.
    Reading them costs about 0.1 s, asked four times for each window's module: they are kept."""
    key = _forms_key(protocol)
    if key not in _FORMS:
        if len(_FORMS) >= 32:  # specs edited again and again in one process: keep the memory bounded
            _FORMS.clear()
        _FORMS[key] = _read_forms(protocol)
    return _FORMS[key]


def _read_forms(protocol: Protocol) -> _Forms:
    invariants = invariants_of(protocol)
    parts = {inv: conjuncts(protocol, inv) for inv in invariants}  # X == A /\ B: A and B guarded apart
    read = {part: sorted(reads(protocol, part)) for inv in invariants for part in parts[inv]}
    since = {part: form for part in read if (form := since_form(protocol, part)) is not None}
    return invariants, parts, read, since


TRACE_INV = "TraceInv_"  # the generated module's invariant for X: TraceInv_X
PART = "__"  # and for part P of X, when X is a conjunction of named parts: TraceInv_X__P


def checked_parts(protocol: Protocol) -> list[tuple[str, str | None]]:
    """What a trace check checks, in order: each invariant (part None), or each named part of one
    that is a conjunction of named parts (``reads.conjuncts``), so that a violation names the part."""
    invariants, parts, _, _ = invariant_forms(protocol)
    return [(inv, part if len(parts[inv]) > 1 else None) for inv in invariants for part in parts[inv]]


def checked_name(invariant: str, part: str | None) -> str:
    """The generated module's name of what checks ``invariant`` (or its ``part``)."""
    return f"{TRACE_INV}{invariant}" + (f"{PART}{part}" if part else "")


def checked_of(name: str) -> tuple[str, str | None] | None:
    """The invariant and its part that TLC's violated ``name`` checks; None when it is no TraceInv_."""
    if not name.startswith(TRACE_INV):
        return None
    invariant, _, part = name[len(TRACE_INV):].partition(PART)
    return invariant, part or None


def indexed_logs(protocol: Protocol) -> list[str]:
    """The logs whose index the generated module keeps after every event (``traceIndex_L``): those
    an XSinceIndexed form of an invariant reads, and those of ``Protocol.from_index`` that have one."""
    _, _, _, since = invariant_forms(protocol)
    used = {v for _, vs, _ in since.values() for v in vs}
    wanted = {log for _, log, _ in protocol.from_index if indexed_log(protocol, log)}
    return [v for v in spec_variables(protocol) if v in protocol.logs
            and (v in wanted or (v in used and any(v in ix for _, _, ix in since.values())))]


def from_index_definitions(protocol: Protocol) -> dict[str, tuple[str, str]]:
    """After every event, for each operator of ``Protocol.from_index`` whose log's index the module
    keeps: the operator, and the definition (head, body) that replaces it in the TLC run, its
    ``FromIndex`` form given that index. The index is the current state's, as is the log the
    operator reads (the step's ``traceIndex_L'`` is assigned after TraceNext).
    Measured on events 90,001 to 95,000 of a 100,004-event faulty Kafka run: 31.4 s, and 25.4 s
    with the LSO's search for a producer's last entry bounded to 2,000 entries: a read_committed
    fetch or ListOffsets looks for every transactional.id, and one that wrote nothing to the
    partition for long is looked for back to the log's start."""
    kept = set(indexed_logs(protocol))
    out = {}
    for op, log, arity in protocol.from_index:
        if log in kept:
            args = ", ".join(f"trArg{i}" for i in range(1, arity + 1))
            out[op] = (f"TraceFromIndex_{op}({args})", f"{op}FromIndex({args}{', ' if args else ''}traceIndex_{log})")
    return out
