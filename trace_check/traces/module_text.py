"""The module a trace check generates for TLC (``TraceRun``), for a trace or one window of it: it
extends the protocol's trace spec and defines the events, the window's start states and view,
the invariants to check and, for a rejected event, the invariants that diagnose it.

Speed, measured on TLC 2.15 (docs/benchmarks.md): SANY's parsing time grows with the number of
tokens, so each event is a 10-element tuple whose logged message and post-state fields are one
string each, compared with TLC's ToString of the spec's values; the events are grouped in chunks
that are looked up, never concatenated (TLC re-evaluates a concatenation at every access); and no
"accepted" invariant is violated on purpose, since TLC would print the whole trace state by state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from trace_check.engines import tlc_java, tlc_tools
from trace_check.traces import handoff
from trace_check.traces.guards import ENABLED, guard_diagnosis
from trace_check.traces.invariants import changed_definitions, checked_name, checked_parts
from trace_check.traces.protocol import Protocol
from trace_check.traces.reader import Trace
from trace_check.traces.tla_text import Shape, event_tuple, module_head, shape_of, tla_string, tla_value

GENERATED_MODULE = "TraceRun"
CHUNK = 250
# The file a window's events are read from, in its folder, when TLC reads them itself (Window.classes)
EVENTS_FILE = "TraceEvents.txt"


def diagnosis_names(protocol: Protocol, ev: dict[str, Any], guards: bool = True) -> tuple[str, ...]:
    """The diagnosis invariants of a rejected event, in the order they are tried (``guards``: with
    each prefix of its action's guard, guards.py)."""
    fields = tuple(f"Diag_field_{f}" for f in shape_of(protocol, ev)[protocol.encoding.diagnosed])
    guard = guard_diagnosis(protocol, protocol.spec_action(str(ev.get("action", "")))) if guards else None
    names: list[str] = []
    for d in protocol.diagnoses:  # each prefix of the action's guard just before the whole action
        names += [*(guard.conjuncts if guard is not None and d.name == ENABLED else ()), f"Diag_{d.name}"]
    return (*names, *fields, "Diag_reached")


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
    # A rejected event's diagnosis checks each prefix of its action's guard (guards.py)
    guards: bool = True


def viewed(protocol: Protocol, where: Window) -> Window:
    """``where``, with the view when it applies: a window that starts from one state, of a protocol
    with logs, without txconform's Java for TLC (with it, the view is the state's fingerprint,
    ``TraceFP``, which costs what each step changed, whatever the window starts from)."""
    one = where.start is not None and len(where.start) == 1
    return attrs.evolve(where, view=bool(protocol.logs) and one and where.classes is None)


def loaded(where: Window) -> Window:
    """``where``, with its events and start states read by TLC from files when txconform's Java
    for TLC can be had (``tlc_java.loader_classes``)."""
    classes = tlc_java.loader_classes(tlc_tools.find_tla2tools())
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
    if window.classes:  # TLC reads them from a file (one_window's _prepare writes it): SANY parses no event
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
        lines += [f"{checked_name(inv, part)} == AtEnd({part or inv})" for inv, part in checked_parts(protocol)]
    if stuck is not None:
        ev = events[stuck - 1]
        lines += ["", f"Stuck == {stuck}"]
        guard = guard_diagnosis(protocol, protocol.spec_action(str(ev.get("action", "")))) if window.guards else None
        if guard is not None:
            lines += ["", *guard.lines, ""]
        lines += [f"Diag_{d.name} == {d.name}(Stuck)" for d in protocol.diagnoses]
        for f in shape_of(protocol, ev)[protocol.encoding.diagnosed]:
            lines.append(f"Diag_field_{f} == DiagnoseField(Stuck, {tla_string(f)}, {tla_string(tla_value(ev[f]))})")
        lines.append("Diag_reached == DiagnoseReached(Stuck)")
    lines.append("====")
    return "\n".join(lines) + "\n"


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
