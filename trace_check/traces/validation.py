"""Trace validation: is a trace a behaviour of the spec?

The checker writes a module that extends the protocol's trace spec (for Kafka,
specs/kafka/TraceKafkaTxn.tla; the plug-in names it) and defines the trace, then asks TLC:

1. for a complete search with the spec's invariants (``TraceInv_X``, at the end of the trace or
   after every event). A search as deep as the trace is long means every event was explained:
   accepted. A violation means the run is a behaviour of the spec that breaks X. A shallower
   search of depth d means no behaviour explains event d.
2. for a rejected trace, a second run whose invariants diagnose event d in the state before it:
   was its message in flight, was the action enabled, which logged field disagreed.

Speed, measured on TLC 2.15 (docs/benchmarks.md): SANY's parsing time grows with the number of
tokens, so each event is a 10-element tuple whose logged message and post-state fields are one
string each, compared with TLC's ToString of the spec's values; the events are grouped in chunks
that are looked up, never concatenated (TLC re-evaluates a concatenation at every access); and no
"accepted" invariant is violated on purpose, since TLC would print the whole trace state by state.

Strings from the trace only ever appear inside TLA+ string literals, escaped, and the constants go
into the module rather than the .cfg, so no trace content can change the module's meaning.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

from trace_check.engines import tlc, tlc_java
from trace_check.engines.runner import check_engine_available, resolve_engine, run_task
from trace_check.errors import TxconformError
from trace_check.models.registry import spec_invariants
from trace_check.models.result import ApalacheOptions, CheckResult, CheckTask, Outcome, Progress, TlcOptions
from trace_check.traces import handoff
from trace_check.traces.handoff import spec_stamps
from trace_check.traces.protocol import BOOL, LIST, OFFSETS, STRING, Protocol, StateReplay
from trace_check.traces.reader import Trace, count_events, read_trace, read_windows, windows_ending, windows_of
from trace_check.traces.reads import INDEX, conjuncts, indexed_log, reads, since_form
from trace_check.values.tla import Record, format_log, format_value, function_value
from trace_check.values.tlc import TlcValueError, parse_value

GENERATED_MODULE = "TraceRun"
RECORDS_MODULE = "TraceRunRecords"
CHUNK = 250
# The file a window's events are read from, in its folder, when TLC reads them itself (Window.classes)
EVENTS_FILE = "TraceEvents.txt"


class Status(str, enum.Enum):
    """What the checker says of a trace."""

    ACCEPTED = "accepted"  # a behaviour of the spec, and the invariants hold
    VIOLATES = "violates"  # a behaviour of the spec that breaks an invariant
    REJECTED = "rejected"  # no behaviour of the spec explains it
    ERROR = "error"  # the check itself failed (engine error, timeout)


@attrs.frozen
class Verdict:
    """The answer for one trace."""

    status: Status
    events: int
    engine: str
    wall_time: float
    invariant: str | None = None  # for VIOLATES
    at_event: int | None = None  # for REJECTED: the event nothing explained
    event: dict[str, Any] | None = None
    reason: str = ""
    state_before: dict[str, Any] | None = None
    message: str = ""  # for ERROR
    every_step: bool = False
    distinct_states: int | None = None
    windows: int = 1  # TLC runs the trace was checked in, each from the states the last ended in
    handed_on: int = 0  # the most states one window handed on to the next
    jobs: int = 1  # TLC runs at once (parallel windows)
    run_ahead: int = 0  # windows whose verdict came from a run started at the reference engine's state
    run_again: int = 0  # windows run again from the hand-off, since the engine's state was not it

    @property
    def ok(self) -> bool:
        return self.status is Status.ACCEPTED


def invariants_of(protocol: Protocol) -> tuple[str, ...]:
    """The invariants a trace is checked against: the base of the protocol's registry, if it has one."""
    if protocol.registry is not None:
        return spec_invariants(protocol.registry)
    return protocol.invariants


def tla_string(s: str) -> str:
    """A TLA+ string literal holding exactly ``s`` (printable ASCII, checked by the reader)."""
    return format_value(s)


def _frozen(v: Any) -> Any:
    if isinstance(v, (list, set, frozenset)):
        return frozenset(_frozen(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_frozen(x) for x in v)
    return v


def tla_value(v: Any) -> str:
    """``v`` as TLA+ text (lists are sets), which is also what TLC's ToString prints for it: the
    checker compares the two."""
    return format_value(_frozen(v))


Shape = tuple[tuple[str, ...], ...]


def shape_of(protocol: Protocol, ev: dict[str, Any]) -> Shape:
    """Which columns of each compared group the event logged."""
    return tuple(tuple(c for c in group if c in ev) for group in protocol.encoding.groups)


def rendered(ev: dict[str, Any], cols: tuple[str, ...]) -> str:
    """What TLC's ToString prints for the function k |-> field cols[k] (TLC prints the empty
    function as "<< >>")."""
    return tla_value(tuple(ev[c] for c in cols)) if cols else "<< >>"


def event_tuple(protocol: Protocol, ev: dict[str, Any], shape_ids: dict[Shape, int]) -> str:
    """<<action, shape>> \\o params \\o <<one rendered string per compared group>> \\o tail."""
    shape = shape_of(protocol, ev)
    e = protocol.encoding
    fields = (ev["action"], shape_ids[shape], *e.params(ev), *(rendered(ev, cols) for cols in shape), *e.tail(ev))
    return tla_value(fields)


def trace_constants(trace: Trace) -> dict[str, Any]:
    return trace.protocol.spec_constants(dict(trace.constants))


def module_head(module: str, extends: str, trace: Trace) -> list[str]:
    """The generated module's header and the trace's constants. The constants are definitions
    here, bound in the .cfg by name (Name <- TraceConst_Name): TLC's .cfg reader does not unescape
    strings the way TLA+ does, so no trace text goes there."""
    lines = [f"---- MODULE {module} ----", "\\* Generated by txconform check from a trace file; do not edit.",
             f"EXTENDS {extends}", ""]
    lines += [f"TraceConst_{name} == {tla_value(value)}" for name, value in sorted(trace_constants(trace).items())]
    return lines


def copy_specs(protocol: Protocol, workdir: Path) -> None:
    """The protocol's modules, without its model-checking (MC*) modules."""
    workdir.mkdir(parents=True, exist_ok=True)
    for src in protocol.spec_dir.glob("*.tla"):
        if not src.name.startswith("MC"):
            shutil.copy(src, workdir / src.name)


def diagnosis_names(protocol: Protocol, ev: dict[str, Any]) -> tuple[str, ...]:
    """The diagnosis invariants of a rejected event, in the order they are tried."""
    fields = tuple(f"Diag_field_{f}" for f in shape_of(protocol, ev)[protocol.encoding.diagnosed])
    return tuple(f"Diag_{d.name}" for d in protocol.diagnoses) + fields + ("Diag_reached",)


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

    invariants, parts, read, since = _forms(protocol)
    # Each variable by its number, not its name: a string in the module would change the order in
    # which TLC prints record fields of the same name (specs/README.md), and with it the docs.
    number = {n: k for k, n in enumerate(sorted({v for vs in read.values() for v in vs}), 1)}
    # What a form checked from the state before (reads.since_form) is given: for a log L, traceFrom_L,
    # for each key how many of its first entries the state before had (its length then, when the
    # step did not make it shorter: a log only grows at its end or is cut back to a prefix,
    # Protocol.logs; else 0; 0 in an initial state); for another variable V, tracePrev_V, its value
    # in the state before (in an initial state, its own).
    used = {v for _, vs, _ in since.values() for v in vs} | set(indexed_logs(protocol))
    known = {v: f"traceFrom_{v}" if v in protocol.logs else f"tracePrev_{v}" for v in handoff.spec_variables(protocol) if v in used}
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

    for inv in invariants:
        lines.append(f"TraceInv_{inv} == " + " /\\ ".join(guarded(part) for part in parts[inv]))
    lines += [f"{head} == {form}" for head, form in from_index_definitions(protocol).values()]
    return lines


_Forms = tuple[tuple[str, ...], dict[str, tuple[str, ...]], dict[str, list[str]], dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]]
_FORMS: dict[tuple[Any, ...], _Forms] = {}  # _forms by _forms_key; a window's module asks for them four times


def _forms_key(protocol: Protocol) -> tuple[Any, ...]:
    """What _forms reads: the protocol's spec modules and registry, as they are now (a spec edited
    while the process runs gives a new key)."""
    registry = protocol.registry
    kept = (registry.stat().st_mtime_ns, registry.stat().st_size) if registry is not None and registry.is_file() else None
    return (protocol.name, protocol.spec_dir, protocol.trace_module, registry, kept, protocol.invariants,
            spec_stamps(protocol.spec_dir))


def _forms(protocol: Protocol) -> _Forms:
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


def indexed_logs(protocol: Protocol) -> list[str]:
    """The logs whose index the generated module keeps after every event (``traceIndex_L``): those
    an XSinceIndexed form of an invariant reads, and those of ``Protocol.from_index`` that have one."""
    _, _, _, since = _forms(protocol)
    used = {v for _, vs, _ in since.values() for v in vs}
    wanted = {log for _, log, _ in protocol.from_index if indexed_log(protocol, log)}
    return [v for v in handoff.spec_variables(protocol) if v in protocol.logs
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


@attrs.frozen
class Window:
    """Where a window of a trace stands: the states it starts from (None: the spec's initial
    states) and whether a later window follows (then its last states are printed for it)."""

    start: tuple[str, ...] | None = None
    last: bool = True
    view: bool = False  # fingerprint only what lies beyond the start state's logs (handoff.view_definitions)
    beside: bool = False  # other TLC runs share the cores (TlcOptions.quick_jit)
    # TLC reads the start states from a file through this folder of Java classes on its classpath
    # (trace_check/engines/tlc_java.py); None: they are written into the module
    classes: str | None = None
    # The entries the start states' logs begin with, read by TLC from files as the spec's bases
    # (Protocol.log_bases; only with ``classes``): the start states hold the entries after them
    base: handoff.Base | None = None
    # With a base: the index an earlier window saved of its first entries (None: computed from
    # scratch), and the files to save this base's index in, for the windows after (log -> file)
    prior: handoff.Prior | None = None
    save: Mapping[str, str] | None = None


def viewed(protocol: Protocol, where: Window) -> Window:
    """``where``, with the view when it applies: a window that starts from one state, of a protocol
    with logs, without txconform's Java for TLC (with it, the view is the state's fingerprint,
    ``TraceFP``, which costs what each step changed, whatever the window starts from)."""
    one = where.start is not None and len(where.start) == 1
    return attrs.evolve(where, view=bool(protocol.logs) and one and where.classes is None)


def loaded(where: Window) -> Window:
    """``where``, with its events and start states read by TLC from files when txconform's Java
    for TLC can be had (``tlc_java.loader_classes``)."""
    classes = tlc_java.loader_classes(tlc.find_tla2tools())
    return attrs.evolve(where, classes=str(classes) if classes is not None else None)


def module_text(trace: Trace, every_step: bool, stuck: int | None = None, window: Window = Window()) -> str:
    """The generated module for ``trace`` (or one window of it: ``trace.events`` is the window's
    events, and ``stuck`` counts from its first)."""
    protocol = trace.protocol
    events = trace.events
    shape_ids: dict[Shape, int] = {}
    for ev in events:
        shape_ids.setdefault(shape_of(protocol, ev), len(shape_ids) + 1)
    # TLC for the hand-off's PrintT, ToString and the :> and @@ of the states it reads back
    extends = f"{protocol.trace_module}, TLC" + (f", {tlc_java.MODULE}" if window.classes else "")
    if window.base is not None and not (window.classes and window.start is not None):
        raise ValueError("a window with a base starts from states and reads them from files (Window.classes)")
    lines = module_head(GENERATED_MODULE, extends, trace)
    shapes = ", ".join(tla_value(s) for s in shape_ids)
    lines += ["", f"TraceShapes == <<{shapes}>>", ""]
    if window.classes:  # TLC reads them from a file (_prepare writes it): SANY parses no event
        lines.append(f'TraceData == TraceLoaded("{EVENTS_FILE}")')
    else:
        chunks = []
        for n in range(0, len(events), CHUNK):
            name = f"TraceChunk{n // CHUNK + 1}"
            chunks.append(name)
            body = ",\n    ".join(event_tuple(protocol, ev, shape_ids) for ev in events[n : n + CHUNK])
            lines += [f"{name} ==", f"  << {body} >>", ""]
        lines.append("TraceData == <<" + ", ".join(chunks) + ">>")
    lines.append(f"TraceChunkSize == {CHUNK}")
    lines.append("")
    fields = handoff.state_fields(protocol)
    if window.start is not None:
        lines += ["", *handoff.in_definitions(list(window.start), fields, loaded=window.classes is not None)]
    if window.base is not None:
        lines += [""] + [f'TraceBase_{v} == TraceLoaded("{window.base.file_name(v)}")' for v in window.base.texts]
    if window.view:
        lines += ["", *handoff.view_definitions(fields, protocol.logs)]
    elif window.classes:  # the state by a fingerprint that costs what a step changed (TraceLoad.java: TraceFP)
        lines += ["", "TraceView == <<TraceFP(<<" + ", ".join(fields) + ">>), l>>"]
    elif every_step:
        lines += ["", "TraceView == <<" + ", ".join([*fields, "l"]) + ">>"]
    if not window.last:
        lines += ["", *handoff.out_definition(fields)]
    lines.append("")
    if every_step:
        # a window's start states were checked as the last states of the window before
        lines += changed_definitions(protocol, "TraceInit" if window.start is None else "TraceHandOffInit", window.start is not None,
                                     window.prior if window.base is not None else None, window.save if window.base is not None else None,
                                     kept=window.classes is not None)
    else:
        lines += [f"TraceInv_{inv} == AtEnd({inv})" for inv in invariants_of(protocol)]
    if stuck is not None:
        ev = events[stuck - 1]
        lines += ["", f"Stuck == {stuck}"]
        lines += [f"Diag_{d.name} == {d.name}(Stuck)" for d in protocol.diagnoses]
        for f in shape_of(protocol, ev)[protocol.encoding.diagnosed]:
            lines.append(f"Diag_field_{f} == DiagnoseField(Stuck, {tla_string(f)}, {tla_string(tla_value(ev[f]))})")
        lines.append("Diag_reached == DiagnoseReached(Stuck)")
    lines.append("====")
    return "\n".join(lines) + "\n"


# --- The record encoding (for Kafka, specs/kafka/TraceKafkaTxnRecords.tla), for Apalache ---


def _default(kind: str) -> Any:
    """The placeholder of a field an event does not log (never read: the field is not in ``logged``)."""
    return {STRING: "", BOOL: False, OFFSETS: [], LIST: []}.get(kind, 0)


def event_record(protocol: Protocol, ev: dict[str, Any]) -> str:
    """One event as a TLA+ record with every field, and the set of fields it logged."""
    cols = protocol.columns
    fields_ = tuple(c for c in cols.order if c not in cols.info)
    logged = sorted(c for c in ev if c in fields_ and c != "action")
    fields = [f"action |-> {tla_string(ev['action'])}", "logged |-> " + tla_value(logged)]
    fields += [f"{c} |-> {tla_value(ev.get(c, _default(cols.kinds[c])))}" for c in fields_ if c != "action"]
    return "[" + ", ".join(fields) + "]"


def records_module_text(trace: Trace) -> str:
    protocol = trace.protocol
    if protocol.records_module is None:
        raise ValueError(f"protocol {protocol.name} has no record encoding")
    lines = module_head(RECORDS_MODULE, protocol.records_module, trace)
    body = ",\n    ".join(event_record(protocol, ev) for ev in trace.events)
    lines += ["", f"TraceData == << {body} >>", ""]
    lines += [f"TraceInv_{inv} == {inv}" for inv in invariants_of(protocol)]
    lines.append("====")
    return "\n".join(lines) + "\n"


def records_task(trace: Trace, workdir: Path, timeout: float) -> CheckTask:
    """Acceptance with the record encoding: TraceAccepted is violated once every event is explained."""
    copy_specs(trace.protocol, workdir)
    (workdir / f"{RECORDS_MODULE}.tla").write_text(records_module_text(trace), encoding="utf-8")
    subs = {name: f"TraceConst_{name}" for name in trace_constants(trace)}
    return CheckTask(
        name=f"trace {trace.path.name}",
        spec_file=workdir / f"{RECORDS_MODULE}.tla",
        substitutions={"Trace": "TraceData", **subs},
        invariants=(*(f"TraceInv_{i}" for i in invariants_of(trace.protocol)), "TraceAccepted"),
        init="TraceInit",
        next="TraceNext",
        tlc=TlcOptions(workers=1, check_deadlock=False),
        apalache=ApalacheOptions(length=len(trace.events)),
        timeout=timeout,
    )


def check_trace_records(trace: Trace, engine: str, workdir: Path, timeout: float = 600.0) -> Verdict:
    """Validate with the record encoding. Apalache (and TLC, which tests the module) answer
    accepted, violates X, or rejected; the rejected event is not located."""
    r = run_task(engine, records_task(trace, workdir, timeout), workdir, None)
    common: dict[str, Any] = dict(events=len(trace.events), engine=engine, every_step=True, distinct_states=r.distinct_states,
                  wall_time=r.wall_time)
    if r.outcome is Outcome.VIOLATED and r.invariant == "TraceAccepted":
        return Verdict(Status.ACCEPTED, **common)
    if r.outcome is Outcome.VIOLATED and r.invariant and r.invariant.startswith("TraceInv_"):
        return Verdict(Status.VIOLATES, invariant=r.invariant[len("TraceInv_"):], **common)
    if r.outcome is Outcome.HOLDS:
        bound = f" ({r.bound})" if r.bound else ""
        return Verdict(Status.REJECTED, reason=f"no behaviour of the spec explains the whole trace{bound}", **common)
    return Verdict(Status.ERROR, message=f"{r.outcome.value}: {r.message}", **common)


# A run of at most this many events compiles with the JIT's first tier alone (TlcOptions.quick_jit),
# beside other runs or not: most of its time is reading and evaluating the module, which the
# optimizing compiler's work does not pay back. `txconform check`, CPU time, 2 cores: 304 events
# 8.9 s against 4.5 s, 1,004 events 13.3 s against 5.8 s, 3,004 events 18.3 s against 10.2 s;
# one window of 5,000 alone took 7% longer (see Window.beside; docs/benchmarks.md, "Where the test
# suite's minutes go").
QUICK_JIT_EVENTS = 3_000


def _task(trace: Trace, workdir: Path, invariants: tuple[str, ...], timeout: float, init: str = "TraceInit",
          view: bool = False, every_step: bool = False, beside: bool = False, classes: str | None = None,
          base: handoff.Base | None = None) -> CheckTask:
    """The TLC task of a generated module: after every event, with the module's traceChanged
    (``changed_definitions``) and the view that leaves it out, and the operators it computes from
    its index of a log (``from_index_definitions``)."""
    subs = {name: f"TraceConst_{name}" for name in trace_constants(trace)}
    if classes is not None and trace.protocol.log_join:  # a base and the entries after it, joined in Java
        subs[trace.protocol.log_join] = "TraceConcat"
    if base is not None:  # the spec's bases are those the window's start states share
        subs.update({trace.protocol.log_bases[v][0]: f"TraceBase_{v}" for v in base.texts})
    if every_step:
        subs.update({op: head.split("(")[0] for op, (head, _) in from_index_definitions(trace.protocol).items()})
    return CheckTask(
        name=f"trace {trace.path.name}",
        spec_file=workdir / f"{GENERATED_MODULE}.tla",
        substitutions={"TraceChunks": "TraceData", "ChunkSize": "TraceChunkSize", "Shapes": "TraceShapes", **subs},
        invariants=invariants,
        init="TraceChangedInit" if every_step else init,
        next="TraceChangedNext" if every_step else "TraceNext",
        tlc=TlcOptions(workers=1, check_deadlock=False, view="TraceView" if view or every_step or classes else None, heap=HEAP,
                       collector="SerialGC", quick_jit=beside or len(trace.events) <= QUICK_JIT_EVENTS,
                       classpath=(classes,) if classes else ()),
        apalache=ApalacheOptions(length=len(trace.events) + 1),
        timeout=timeout,
    )


def events_file_text(trace: Trace) -> str:
    """The window's events for TLC to read (TraceLoaded): TraceData's chunks, as module_text writes
    them when SANY reads them. (The shapes are numbered in the same order.)"""
    protocol = trace.protocol
    shape_ids: dict[Shape, int] = {}
    for ev in trace.events:
        shape_ids.setdefault(shape_of(protocol, ev), len(shape_ids) + 1)
    chunks = []
    for n in range(0, len(trace.events), CHUNK):
        chunks.append("<<" + ",\n".join(event_tuple(protocol, ev, shape_ids) for ev in trace.events[n : n + CHUNK]) + ">>")
    return "<<" + ",\n".join(chunks) + ">>\n"


def _prepare(workdir: Path, trace: Trace, every_step: bool, stuck: int | None = None, window: Window = Window()) -> None:
    copy_specs(trace.protocol, workdir)
    (workdir / f"{GENERATED_MODULE}.tla").write_text(module_text(trace, every_step, stuck, window), encoding="utf-8")
    if window.classes is not None:
        (workdir / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
        (workdir / EVENTS_FILE).write_text(events_file_text(trace), encoding="utf-8")
    if window.classes is not None and window.start is not None:
        (workdir / handoff.START_FILE).write_text(handoff.start_file_text(list(window.start)), encoding="utf-8")
    if window.base is not None:
        for v in window.base.texts:
            (workdir / window.base.file_name(v)).write_text(window.base.file_text(v), encoding="utf-8")


Prefix = Callable[[int], list[dict[str, Any]]]  # the trace's first n events (read again when asked)


def _explain(diag: str, ev: dict[str, Any], trace: Trace, n: int, prefix: Prefix) -> str:
    protocol = trace.protocol
    for d in protocol.diagnoses:
        if diag == f"Diag_{d.name}":
            return d.explain(ev)
    if diag.startswith("Diag_field_"):
        f = diag[len("Diag_field_") :]
        # The reference engine implements the spec step by step: ask it for the value.
        other = protocol.engine_value(trace.constants, prefix(n), n, f)
        hint = f" ({protocol.engine_noun}, replaying the trace, gives {f} = {json.dumps(other)})" if other is not None else ""
        return f"the step is possible, but not with {f} = {json.dumps(ev.get(f))}: the spec gives another value{hint}"
    if ev.get("result") is not None:
        return f"the step is possible, but its answer is not {ev['result']} (or the logged fields do not hold together)"
    return "the step is possible, but not with all of the event's logged fields together"


WINDOW = 5_000  # events per TLC run (docs/benchmarks.md: "Long traces")
# TLC's heap for a trace check: a window holds few states (docs/benchmarks.md: 10,004 events at the end
# peaked at 1.3 GB with Java's default heap and at 0.6 GB with 1 GB, in the same time).
# $TXCONFORM_TLC_JAVA_OPTS=-Xmx4g overrides it.
HEAP = "1g"


def _engine(trace: Trace, engine: str) -> str:
    name, _why = resolve_engine(engine)
    if name == "apalache" and trace.protocol.records_module is None:
        if engine != "auto":
            raise TxconformError(f"--engine apalache: protocol {trace.protocol.name} has no record encoding for Apalache; "
                                 "use --engine tlc")
        name = "tlc"  # auto: the protocol's trace spec is TLC's alone
    check_engine_available(name)
    return name


def jobs_default() -> int:
    """TLC runs at once when not told: one per core, at most 4 (each is a JVM with a 1 GB heap)."""
    return max(1, min(4, os.cpu_count() or 1))


def jobs_count(jobs: int | None) -> int:
    """``jobs``, or ``jobs_default()`` when it is None; a one-line error below 1."""
    if jobs is None:
        return jobs_default()
    if jobs < 1:
        raise TxconformError(f"--jobs {jobs}: at least one TLC run must go at a time; give a number such as 2")
    return jobs


def _parallel(protocol: Protocol, jobs: int | None) -> int:
    """The TLC runs at once for a trace of ``protocol``: one unless its plug-in replays states."""
    jobs = jobs_count(jobs)
    return jobs if protocol.spec_states is not None else 1


def balanced_size(window: int | None, total: int, jobs: int) -> int:
    """The events per window: ``window`` when given; else, for a trace longer than WINDOW and
    ``jobs`` TLC runs at once, a number of windows near ``total / WINDOW`` that ``jobs`` divides,
    all of one size; otherwise WINDOW. Measured on 2 cores, after every event: 10,004 events in two
    windows of 5,002 at once took 17.4 s, in windows of 5,000, 5,000 and 4 20.2 s, in four of
    2,501 22.9 s; 2,004 events in two windows of 1,002 at once 10.4 s, in one run 7.3 s (two JVMs
    starting at once share the cores that one JVM's start keeps busy)."""
    if window is not None or jobs < 2 or total <= WINDOW:
        return window_size(window)
    count = max(jobs, round(total / WINDOW))
    count = -(-count // jobs) * jobs
    return -(-total // count)


def window_size(window: int | None) -> int:
    """The events per window: ``window``, or WINDOW when it is None; a one-line error below 1."""
    if window is None:
        return WINDOW
    if window < 1:
        raise TxconformError(f"--window {window}: a window holds at least 1 event; give a number such as {WINDOW}")
    return window


def check_trace(
    trace: Trace,
    engine: str = "auto",
    every_step: bool | None = None,
    timeout: float = 600.0,
    workdir: Path | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    window: int | None = None,
    ends: Sequence[int] | None = None,
    jobs: int = 1,
) -> Verdict:
    """Validate ``trace`` against its protocol's spec. ``every_step`` (the default) checks the
    invariants after every event; False checks them in the final state only. TLC checks the
    trace in windows of ``window`` events (default WINDOW), or in windows that end after the
    events ``ends``, each starting from the states the last one ended in: the verdict is the same
    as one run's. With ``jobs`` > 1, up to ``jobs`` windows run at once (``_check_windows``)."""
    jobs = _parallel(trace.protocol, jobs)
    size = balanced_size(window, len(trace.events), jobs)
    windows = windows_of(trace, size) if ends is None else windows_ending(trace, ends)
    return _check(_Source(trace, windows, len(trace.events), lambda n: [dict(e) for e in trace.events[:n]], lambda: trace),
                  engine, every_step, timeout, workdir, on_progress, jobs)


def check_trace_file(
    path: Path,
    engine: str = "auto",
    every_step: bool | None = None,
    timeout: float = 600.0,
    workdir: Path | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    window: int | None = None,
    events: int | None = None,
    jobs: int = 1,
) -> Verdict:
    """``check_trace`` for a file, read window by window, so that memory holds one window of
    events, not the trace. ``events`` is the number of events, if the caller has already checked
    the whole file (``reader.count_events``): every line is checked before any engine runs."""
    total = count_events(path) if events is None else events
    head = read_trace(path, limit=1)
    jobs = _parallel(head.protocol, jobs)
    source = _Source(head, read_windows(path, balanced_size(window, total, jobs)), total,
                     lambda n: [dict(e) for e in read_trace(path, limit=n).events], lambda: read_trace(path))
    return _check(source, engine, every_step, timeout, workdir, on_progress, jobs)


@attrs.frozen
class _Source:
    """A trace to check: its head (header and first events), its windows, its length, its first n
    events on demand (a diagnosis replays them), and all of it (for Apalache's record encoding)."""

    head: Trace
    windows: Iterator[Trace]
    total: int
    prefix: Prefix
    whole: Callable[[], Trace]


def _check(source: _Source, engine: str, every_step: bool | None, timeout: float, workdir: Path | None,
           on_progress: Callable[[Progress], None] | None, jobs: int = 1) -> Verdict:
    if every_step is None:  # after every event, at any length (docs/benchmarks.md: "Long traces")
        every_step = True
    name = _engine(source.head, engine)
    base = workdir or Path(tempfile.mkdtemp(prefix="txconform-check-"))
    if name == "apalache":  # no ToString in Apalache: the record encoding, field by field
        return check_trace_records(source.whole(), "apalache", base / "apalache", timeout)
    protocol = source.head.protocol
    if jobs > 1 and protocol.spec_states is not None and name == "tlc":
        replay = protocol.spec_states(dict(source.head.constants))
        return _checked(base, workdir is not None, lambda: _check_windows(
            source.windows, source.total, source.prefix, every_step, timeout, base, on_progress, workdir is not None,
            jobs, replay, protocol.history))
    return _checked(base, workdir is not None, lambda: _check_windows(
        source.windows, source.total, source.prefix, every_step, timeout, base, on_progress, workdir is not None))


def _checked(base: Path, keep: bool, check: Callable[[], Verdict]) -> Verdict:
    try:
        verdict = check()
        keep = keep or verdict.status is Status.ERROR  # keep the generated module and TLC's log for the report
        return verdict
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def _marked_last(windows: Iterator[Trace]) -> Iterator[tuple[Trace, bool]]:
    """Each window, and whether it is the last (one window is read ahead)."""
    current = next(windows, None)
    while current is not None:
        following = next(windows, None)
        yield current, following is None
        current = following


@attrs.define
class _Ahead:
    """A window read ahead of the one being decided, and its run (if one was started)."""

    k: int
    win: Trace
    last: bool
    guess: Mapping[str, Any] | None  # the reference engine's state at the window's start
    run: Future[tuple[Verdict, tuple[str, ...] | None]] | None = None
    base: handoff.Base | None = None  # the base of the run's start (its hand-off's logs follow it)
    stop: threading.Event = attrs.field(factory=threading.Event)

    def cancel(self) -> None:
        """Kill the run, if any, and wait until it is gone; whatever it ended with is not wanted."""
        if self.run is not None and self.run.cancel():  # still waiting for a worker: never started
            self.run = None
        if self.run is not None:
            self.stop.set()
            with contextlib.suppress(Exception):
                self.run.result()
            self.run = None


# What a replayed start state has for a history variable (Protocol.history): no step reads it.
HISTORY_PLACEHOLDER = "txconform: replayed by the reference engine"


def _as_start(guess: Mapping[str, Any], history: tuple[str, ...]) -> tuple[str, ...]:
    """A replayed state as a window's start: one state, in TLA+."""
    return (format_value(Record({**guess, **{h: HISTORY_PLACEHOLDER for h in history}})),)


class _StartWriter:
    """``_as_start`` for the states of one replay, window after window: a log entry's text is
    written once and kept while the entry stays in its log (the replay gives the same entry
    objects in each state, ``Protocol.spec_states``), so each start costs its new entries and
    the rest of the state, not its whole logs again (at 100,004 events a start is 4.4 MB).
    With ``bases`` (``Protocol.log_bases``), the logs' entries go to the start's base as far as
    they can (``handoff.rebase``), and the state holds the rest; the texts of the entries the last
    start's base had are that base's (``rebase``'s ``known``), not looked up entry by entry."""

    def __init__(self, protocol: Protocol, history: tuple[str, ...], bases: bool = False) -> None:
        self.protocol, self.logs, self.history, self.bases = protocol, frozenset(protocol.logs), history, bases
        self._kept: dict[int, tuple[Any, str]] = {}  # id(entry): the entry (kept alive, so its id is its own) and its text
        self._base: handoff.Base | None = None  # the last start's base: its entries' texts, by the entries

    def __call__(self, guess: Mapping[str, Any]) -> tuple[handoff.Base | None, tuple[str, ...]]:
        before, kept = self._kept, {}

        def entry(e: Any) -> str:
            hit = before.get(id(e))
            text = hit[1] if hit is not None and hit[0] is e else format_value(e)
            kept[id(e)] = (e, text)
            return text

        state: Mapping[str, Any] = {**guess, **{h: HISTORY_PLACEHOLDER for h in self.history}}
        base = None
        if self.bases:
            base, state = handoff.rebase(self.protocol, state, None, entry, replayed=True, known=self._base)
            self._base = base
        text = "[" + ", ".join(f"{k} |-> {format_log(v, entry) if k in self.logs else format_value(v)}"
                               for k, v in state.items()) + "]"
        self._kept = kept  # entries cut from their log are forgotten
        return base, (text,)


def _is_state(start: tuple[str, ...] | None, guess: Mapping[str, Any] | None, history: tuple[str, ...],
              base: handoff.Base | None = None) -> bool:
    """Is the hand-off ``start`` (its logs the entries after ``base``) exactly the one state
    ``guess``, history variables aside?"""
    if start is None or guess is None or len(start) != 1:
        return False
    try:
        state = parse_value(start[0])
    except TlcValueError:
        return False
    if not isinstance(state, Record):
        return False
    return handoff.matches(base, state, guess, history)


def _rebased(protocol: Protocol, handed: tuple[str, ...], base: handoff.Base | None,
             bases: bool) -> tuple[handoff.Base | None, tuple[str, ...]]:
    """A window's hand-off (its logs the entries after ``base``; None: whole logs) as the next
    window's start. With ``bases``, one state gives the entries its logs gained to the base, as
    far as they can go (handoff.rebase); several share ``base`` and keep it."""
    if not bases or len(handed) != 1:
        return base, handed
    try:
        state = parse_value(handed[0])
    except TlcValueError as e:
        raise handoff.HandOffError(f"a hand-off state is not a TLA+ value: {e}") from None
    if not isinstance(state, Record):
        raise handoff.HandOffError("a hand-off state is not a record")
    grown, rest = handoff.rebase(protocol, state, base, format_value, replayed=False)
    return grown, (format_value(Record(rest)),)


def _bases(protocol: Protocol) -> bool:
    """Do windows start from bases (``Protocol.log_bases``)? TLC reads them from files: only with
    txconform's Java for TLC (``tlc_java.loader_classes``)."""
    return bool(protocol.log_bases) and tlc_java.loader_classes(tlc.find_tla2tools()) is not None


def _check_windows(
    windows: Iterator[Trace],
    total: int,
    prefix: Prefix,
    every_step: bool,
    timeout: float,
    base: Path,
    on_progress: Callable[[Progress], None] | None,
    keep: bool,
    jobs: int = 1,
    replay: StateReplay | None = None,
    history: tuple[str, ...] = (),
) -> Verdict:
    """The windows' verdicts, joined: the first that is not an acceptance, or the last's. ``keep``
    keeps each window's folder (``--workdir``); otherwise a window's files go once it is done.

    With a ``replay`` (``Protocol.spec_states``), up to ``jobs`` windows run at once. A window
    cannot know the states it starts from before the window ahead of it ends. The reference
    engine, replaying the trace, says which state that will be, and the window runs from it at
    once. When the window ahead ends, its hand-off decides: if it is exactly that one state
    (``Protocol.history`` aside, which no step reads), the run's verdict is the one a run from the
    hand-off would give; otherwise the run is killed and the window runs again from the hand-off.
    Only an acceptance is taken from such a run: a rejection or a violation is found again from
    the hand-off, so that its diagnosis and the state shown are TLC's own. The engine can only
    cost time, never change a verdict. On 10,004 events after every event, 2 cores: two windows
    of 5,002 at once 11.5 s, windows of 5,000 one after the other 20.6 s (docs/benchmarks.md)."""
    began = time.monotonic()
    spent = 0.0  # TLC's time, window after window (one job: the verdict's time)
    marked = enumerate(_marked_last(windows), 1)
    ahead: collections.deque[_Ahead] = collections.deque()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="txconform-window")
    state: Mapping[str, Any] | None = None  # the engine's state after the windows read so far
    alive = True
    # Runs at once that leave no core to spare: each keeps about 1.4 cores busy, its JIT
    # compiler beside its worker. They compile with the first tier alone (TlcOptions.quick_jit):
    # on 2 cores, two windows at once took 11.5 s instead of 14.4 s early in a trace and 24.5 s
    # instead of 26.8 s at 90,000 events; one window alone took 7% longer that way.
    beside = jobs > 1 and 2 * jobs > (os.cpu_count() or 1)
    distinct = most = run_ahead = run_again = 0
    starts: _StartWriter | None = None  # the replayed states as windows' starts
    bases = False  # windows start from bases (_bases), decided with the first window that hands on

    # The bases of the last runs and the files each saves its index in, for the windows after them
    # (a base holds a tuple of each log's entries: the last 4); the files of the latest 16 (a run
    # reads its prior's files as it starts, long before 16 more runs have begun)
    saved: collections.deque[tuple[handoff.Base, dict[str, Path]]] = collections.deque(maxlen=4)
    written: collections.deque[Path] = collections.deque()
    index_dir = base / "indexes"
    runs = 0

    def submit(a: _Ahead, start: tuple[str, ...] | None, base: handoff.Base | None, folder: Path) -> None:
        nonlocal runs
        a.stop = threading.Event()
        a.base = base
        # (a trace of one window, or one the engine cannot replay, runs one window at a time)
        near = beside and alive and replay is not None and not (a.k == 1 and a.last)
        prior = save = None
        if base is not None:
            runs += 1
            prior = handoff.prior_of(saved, base)
            index_dir.mkdir(parents=True, exist_ok=True)
            files = {v: index_dir / f"run{runs}_{v}.txt" for v in indexed_logs(a.win.protocol) if v in base.texts}
            saved.append((base, files))
            written.extend(files.values())
            while len(written) > 16 * len(files):
                written.popleft().unlink(missing_ok=True)
            save = {v: str(f) for v, f in files.items()}
        a.run = pool.submit(_check_window, a.win, Window(start=start, last=a.last, beside=near, base=base, prior=prior, save=save),
                            total, prefix, every_step, timeout, folder, on_progress, a.stop)

    # With the engine's replay, one window more than runs at once is read, replayed and written
    # ahead, its run waiting in the pool for a worker: it starts the moment a run ends, instead of
    # after the Python work of deciding the runs that ended and preparing the next. Without it,
    # the cores idled between runs for that work, which grows with the logs: on the million-event
    # run, 1.3 s between two runs at a time at the start and 3.6 s at the end, against 4.9 s and
    # 6.6 s of TLC (docs/benchmarks.md).
    depth = jobs + 1 if replay is not None and jobs > 1 else jobs

    def read_ahead() -> None:
        nonlocal state, alive, starts, bases
        while len(ahead) < depth:
            nxt = next(marked, None)
            if nxt is None:
                return
            k, (win, last) = nxt
            a = _Ahead(k, win, last, state if k > 1 else None)
            if k == 1:
                bases = not last and _bases(win.protocol)
                submit(a, None, None, base if last else base / "window1")
            elif a.guess is not None:
                starts = starts or _StartWriter(win.protocol, history, bases)
                replayed_base, replayed = starts(a.guess)
                submit(a, replayed, replayed_base, base / f"window{k}-replayed")
            ahead.append(a)
            if replay is not None and alive and not last:
                try:
                    state = replay.advance([dict(e) for e in win.events])
                except Exception:  # noqa: BLE001 - a replay that fails only costs the runs ahead, never a verdict
                    state = None
                alive = state is not None

    def joined(v: Verdict, k: int, **changes: Any) -> Verdict:
        wall = time.monotonic() - began if jobs > 1 else spent
        return attrs.evolve(v, wall_time=wall, distinct_states=distinct, events=total, windows=k,
                            handed_on=most, jobs=min(jobs, k), run_ahead=run_ahead, run_again=run_again, **changes)

    start: tuple[str, ...] | None = None  # the hand-off of the window last decided
    start_base: handoff.Base | None = None  # the base its logs follow
    try:
        read_ahead()
        while ahead:
            a = ahead.popleft()
            result = None
            if a.run is not None and (a.k == 1 or _is_state(start, a.guess, history, start_base)):
                result = a.run.result()
                if a.k > 1 and result[0].status is not Status.ACCEPTED:
                    result = None  # found again from the hand-off, for TLC's own diagnosis
                elif a.k > 1:
                    run_ahead += 1
            elif a.run is not None:
                a.cancel()
                run_again += 1
            if result is None:
                submit(a, start, start_base, base / f"window{a.k}")
                assert a.run is not None
                result = a.run.result()
            v, handed = result
            spent += v.wall_time
            if v.distinct_states is not None:
                distinct += v.distinct_states - (len(start) if start else 0)
            if handed is None or v.status is not Status.ACCEPTED:
                return joined(v, a.k)
            if not handed:
                message = (f"window {a.k} ended in no state to hand on, though TLC explained all its events "
                           f"(a bug; see {base / f'window{a.k}'})")
                return joined(v, a.k, status=Status.ERROR, message=message)
            most = max(most, len(handed))
            start_base, start = _rebased(a.win.protocol, handed, a.base, bases)
            if not keep:
                for folder in (base / f"window{a.k}", base / f"window{a.k}-replayed"):
                    shutil.rmtree(folder, ignore_errors=True)
            read_ahead()
        raise AssertionError("unreachable: the last window returns")  # pragma: no cover
    finally:
        for a in ahead:
            a.cancel()
        pool.shutdown(wait=True)


def _check_window(
    win: Trace,
    where: Window,
    total: int,
    prefix: Prefix,
    every_step: bool,
    timeout: float,
    folder: Path,
    on_progress: Callable[[Progress], None] | None,
    stop: threading.Event | None = None,
) -> tuple[Verdict, tuple[str, ...] | None]:
    """One window's verdict, in the whole trace's numbering, and (when accepted and not last) the
    states it ends in. An accepted verdict without states is the last window's."""
    protocol = win.protocol
    init = "TraceInit" if where.start is None else "TraceHandOffInit"
    offset = win.first - 1
    where = viewed(protocol, loaded(where))
    run1 = folder / "accept"
    # No "accepted" invariant: its counterexample would be the whole trace, printed state by state
    # (quadratic in the trace's length). A complete search instead reports its depth:
    # Len(Trace) + 1 levels means every event was explained. At the end only: the invariants are
    # the last window's alone.
    invs = tuple(f"TraceInv_{i}" for i in invariants_of(protocol)) if every_step or where.last else ()
    if not where.last:
        invs += ("TraceHandOffOut",)
    _prepare(run1, win, every_step, window=where)
    # TraceLogsKept first: TLC checks a state's invariants in order and stops at the first that fails
    r: CheckResult = run_task("tlc", _task(win, run1, ("TraceLogsKept",) * where.view + invs, timeout, init, where.view, every_step,
                                           where.beside, where.classes, where.base), run1, on_progress, stop=stop)
    if where.view and r.outcome is Outcome.VIOLATED and r.invariant == "TraceLogsKept":
        # a log was cut shorter than at the window's start: the view may not tell states apart
        where = attrs.evolve(where, view=False)
        run1 = folder / "accept-without-view"
        _prepare(run1, win, every_step, window=where)
        r = run_task("tlc", _task(win, run1, invs, timeout, init, every_step=every_step, beside=where.beside, classes=where.classes,
                                  base=where.base), run1, on_progress, stop=stop)
    common: dict[str, Any] = dict(events=total, engine="tlc", every_step=every_step, distinct_states=r.distinct_states)
    if r.outcome is Outcome.HOLDS and r.depth == len(win.events) + 1:
        states = None if where.last else tuple(handoff.read_states(r.log_file))
        return Verdict(Status.ACCEPTED, wall_time=r.wall_time, **common), states
    if r.outcome is Outcome.VIOLATED and r.invariant and r.invariant.startswith("TraceInv_"):
        steps = r.counterexample.steps if r.counterexample else ()
        at = int(steps[-1].state.get("l", 1)) - 1 if steps else None
        verdict = Verdict(
            Status.VIOLATES,
            wall_time=r.wall_time,
            invariant=r.invariant[len("TraceInv_") :],
            at_event=offset + at if at else None,
            event=win.events[at - 1] if at else None,
            **common,
        )
        return verdict, None
    if r.outcome is not Outcome.HOLDS:
        log = f" (engine log: {r.log_file})" if r.log_file else ""
        if r.log_file and "OutOfMemoryError" in r.log_file.read_text(encoding="utf-8", errors="replace"):
            log += (f"; TLC ran out of its {HEAP} heap: give it more with TXCONFORM_TLC_JAVA_OPTS=-Xmx4g, "
                    "or check in smaller windows (--window)")
        return Verdict(Status.ERROR, wall_time=r.wall_time, message=f"{r.outcome.value}: {r.message}{log}", **common), None
    stuck = min(r.depth or 1, len(win.events))
    run2 = folder / "diagnose"
    _prepare(run2, win, every_step, stuck, Window(start=where.start, classes=where.classes, base=where.base, prior=where.prior))
    ev = win.events[stuck - 1]
    d = run_task("tlc", _task(win, run2, diagnosis_names(protocol, ev), timeout, init, every_step=every_step, beside=where.beside,
                              classes=where.classes, base=where.base), run2, None, stop=stop)
    state = None
    reason = "no behaviour of the spec reaches this event with the logged fields"
    if d.outcome is Outcome.VIOLATED and d.counterexample:
        generated = ("traceFrom_", "tracePrev_", "traceIndex")  # the generated module's own variables
        state = {k: v for k, v in d.counterexample.steps[-1].state.items() if k not in ("l", "traceChanged") and not k.startswith(generated)}
        if where.base is not None:  # shown with whole logs
            state = where.base.joined(state)
        reason = _explain(d.invariant or "", ev, win, offset + stuck, prefix)
    verdict = Verdict(
        Status.REJECTED,
        wall_time=r.wall_time + d.wall_time,
        at_event=offset + stuck,
        event=ev,
        reason=reason,
        state_before=state,
        **common,
    )
    return verdict, None


def verdict_lines(v: Verdict, path: Path, engine: str = "the reference engine") -> list[str]:
    """What ``check`` prints; ``engine`` names the plug-in's reference engine (``Protocol.engine_noun``)."""
    where = "after every event" if v.every_step else "on the final state"
    runs = f", {v.windows} windows" if v.windows > 1 else ""
    if v.windows > 1 and v.jobs > 1:
        runs += f", {v.jobs} at a time, {v.run_ahead} from {engine}'s replay"
        runs += f", {v.run_again} run again" if v.run_again else ""
    if v.status is Status.ACCEPTED:
        return [f"accepted: {path} ({v.events} events) is a behaviour of the spec; invariants hold {where} "
                f"({v.engine}{runs}, {v.wall_time:.1f} s)"]
    if v.status is Status.VIOLATES:
        at = f" after event {v.at_event} (line {v.at_event + 1})" if v.at_event else ""
        lines = [f"violates {v.invariant}: {path} is a behaviour of the spec, and it breaks {v.invariant}{at} "
                 f"({v.engine}{runs}, {v.wall_time:.1f} s)"]
        if v.event:
            lines.append("  event: " + json.dumps(v.event))
        return lines
    if v.status is Status.REJECTED:
        if v.at_event is None:
            return [f"rejected: {path}: {v.reason} ({v.engine})"]
        lines = [
            f"rejected at event {v.at_event} (line {v.at_event + 1}): {v.reason}",
            "  event: " + json.dumps(v.event),
        ]
        if v.state_before:
            lines.append("  the spec's state just before it:")
            for var in sorted(v.state_before):
                lines.append(f"    {var} = {format_value(v.state_before[var])}")
        return lines
    return [f"error: {path}: {v.message}"]
