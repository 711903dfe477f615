"""One window of a trace checked by TLC (``check_window``): the generated module written to its
folder, the acceptance run with the window's invariants and, for a rejected event, a second run
whose invariants diagnose it in the state before it: was its message in flight, was the action
enabled, which logged field disagreed."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from trace_check.engines import tlc_java
from trace_check.engines.runner import run_task
from trace_check.models.result import ApalacheOptions, CheckResult, CheckTask, Counterexample, Outcome, TlcOptions
from trace_check.traces import handoff
from trace_check.traces.guards import GUARD, guard_diagnosis
from trace_check.traces.invariants import checked_name, checked_of, checked_parts, from_index_definitions
from trace_check.traces.module_text import (
    EVENTS_FILE,
    GENERATED_MODULE,
    Window,
    diagnosis_names,
    events_file_text,
    loaded,
    module_text,
    viewed,
)
from trace_check.traces.options import CheckOptions, Prefix, TraceSource
from trace_check.traces.protocol import Protocol
from trace_check.traces.reader import Trace
from trace_check.traces.reads import ReadsError, reads_before
from trace_check.traces.tla_text import copy_specs, trace_constants
from trace_check.traces.verdicts import Status, Verdict

# A run of at most this many events compiles with the JIT's first tier alone (TlcOptions.quick_jit),
# beside other runs or not: most of its time is reading and evaluating the module, which the
# optimizing compiler's work does not pay back. `txconform check`, CPU time, 2 cores: 304 events
# 8.9 s against 4.5 s, 1,004 events 13.3 s against 5.8 s, 3,004 events 18.3 s against 10.2 s;
# one window of 5,000 alone took 7% longer (see Window.beside; docs/benchmarks.md, "Where the test
# suite's minutes go").
QUICK_JIT_EVENTS = 3_000

# TLC's heap for a trace check: a window holds few states (docs/benchmarks.md: 10,004 events at the end
# peaked at 1.3 GB with Java's default heap and at 0.6 GB with 1 GB, in the same time).
# $TXCONFORM_TLC_JAVA_OPTS=-Xmx4g overrides it.
HEAP = "1g"


def _task(trace: Trace, workdir: Path, invariants: tuple[str, ...], timeout: float, init: str, every_step: bool,
          where: Window) -> CheckTask:
    """The TLC task of a generated module: after every event, with the module's traceChanged
    (``changed_definitions``) and the view that leaves it out, and the operators it computes from
    its index of a log (``from_index_definitions``). ``where`` gives the view, the Java classes, the
    bases and whether other runs share the cores."""
    view, beside, classes, base = where.view, where.beside, where.classes, where.base
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


def _explain(diag: str, ev: dict[str, Any], trace: Trace, n: int, prefix: Prefix) -> str:
    protocol = trace.protocol
    for d in protocol.diagnoses:
        if diag == f"Diag_{d.name}":
            return d.explain(ev)
    if diag.startswith(GUARD):
        action = protocol.spec_action(str(ev.get("action", "")))
        guard = guard_diagnosis(protocol, action)
        conjunct = guard.conjuncts.get(diag, "?") if guard is not None else "?"
        return (f"the spec's {action} is not enabled here: conjunct {diag[len(GUARD):]} of its guard is false in this state "
                f"(with the event's arguments): {conjunct}")
    if diag.startswith("Diag_field_"):
        f = diag[len("Diag_field_") :]
        # The reference engine implements the spec step by step: ask it for the value.
        other = protocol.engine_value(trace.constants, prefix(n), n, f)
        hint = f" ({protocol.engine_noun}, replaying the trace, gives {f} = {json.dumps(other)})" if other is not None else ""
        return f"the step is possible, but not with {f} = {json.dumps(ev.get(f))}: the spec gives another value{hint}"
    if ev.get("result") is not None:
        return f"the step is possible, but its answer is not {ev['result']} (or the logged fields do not hold together)"
    return "the step is possible, but not with all of the event's logged fields together"


def check_window(win: Trace, where: Window, source: TraceSource, options: CheckOptions, folder: Path,
                 stop: threading.Event | None = None) -> tuple[Verdict, tuple[str, ...] | None]:
    """One window's verdict, in the whole trace's numbering, and (when accepted and not last) the
    states it ends in. An accepted verdict without states is the last window's."""
    total, prefix = source.total, source.prefix
    every_step, timeout, on_progress = options.every_step, options.timeout, options.on_progress
    protocol = win.protocol
    init = "TraceInit" if where.start is None else "TraceHandOffInit"
    offset = win.first - 1
    where = viewed(protocol, loaded(where))
    run1 = folder / "accept"
    # No "accepted" invariant: its counterexample would be the whole trace, printed state by state
    # (quadratic in the trace's length). A complete search instead reports its depth:
    # Len(Trace) + 1 levels means every event was explained. At the end only: the invariants are
    # the last window's alone.
    invs = tuple(checked_name(inv, part) for inv, part in checked_parts(protocol)) if every_step or where.last else ()
    if not where.last:
        invs += ("TraceHandOffOut",)
    _prepare(run1, win, every_step, window=where)
    # TraceLogsKept first: TLC checks a state's invariants in order and stops at the first that fails
    r: CheckResult = run_task("tlc", _task(win, run1, ("TraceLogsKept",) * where.view + invs, timeout, init, every_step, where), run1,
                              on_progress, stop=stop)
    if where.view and r.outcome is Outcome.VIOLATED and r.invariant == "TraceLogsKept":
        # a log was cut shorter than at the window's start: the view may not tell states apart
        where = attrs.evolve(where, view=False)
        run1 = folder / "accept-without-view"
        _prepare(run1, win, every_step, window=where)
        r = run_task("tlc", _task(win, run1, invs, timeout, init, every_step, where), run1, on_progress, stop=stop)
    common: dict[str, Any] = dict(events=total, engine="tlc", every_step=every_step, distinct_states=r.distinct_states)
    if r.outcome is Outcome.HOLDS and r.depth == len(win.events) + 1:
        states = None if where.last else tuple(handoff.read_states(r.log_file))
        return Verdict(Status.ACCEPTED, wall_time=r.wall_time, **common), states
    if r.outcome is Outcome.VIOLATED and r.invariant and (named := checked_of(r.invariant)) is not None:
        steps = r.counterexample.steps if r.counterexample else ()
        common["run"] = _spec_run(r.counterexample, win.first - 1)
        at = int(steps[-1].state.get("l", 1)) - 1 if steps else None
        verdict = Verdict(
            Status.VIOLATES,
            wall_time=r.wall_time,
            invariant=named[0],
            part=named[1],
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
    ev = win.events[stuck - 1]
    d = _diagnose(win, folder / "diagnose", stuck, where, timeout, init, every_step, stop)
    if where.guards and d.outcome in (Outcome.PARSE_ERROR, Outcome.SEMANTIC_ERROR, Outcome.EVAL_ERROR):
        # the guard's prefixes, copied from the spec, did not run: the diagnosis without them
        d = _diagnose(win, folder / "diagnose-without-guard", stuck, attrs.evolve(where, guards=False), timeout, init, every_step, stop)
    state = None
    reason = "no behaviour of the spec reaches this event with the logged fields"
    if d.outcome is Outcome.VIOLATED and d.counterexample:
        common["run"] = _spec_run(d.counterexample, win.first - 1)
        state = _spec_state(d.counterexample.steps[-1].state)
        if where.base is not None:  # shown with whole logs
            state = where.base.joined(state)
        reason = _explain(d.invariant or "", ev, win, offset + stuck, prefix)
    action = protocol.spec_action(str(ev.get("action", "")))
    read_by = f"{action} and the spec's values of the event's columns" if protocol.column_values else action
    action_reads = _reads_before(protocol, action) if state else None
    guard = guard_diagnosis(protocol, action) if d.invariant and d.invariant.startswith(GUARD) else None
    if guard is not None and state and d.invariant in guard.reads:  # the conjunct that is false, and what it reads
        read_by, action_reads = f"conjunct {d.invariant[len(GUARD):]} of {action}'s guard", guard.reads[d.invariant]
    verdict = Verdict(
        Status.REJECTED,
        wall_time=r.wall_time + d.wall_time,
        at_event=offset + stuck,
        event=ev,
        reason=reason,
        state_before=state,
        spec_action=action,
        read_by=read_by,
        action_reads=action_reads,
        **common,
    )
    return verdict, None


GENERATED = ("traceFrom_", "tracePrev_", "traceIndex")  # the prefixes of the generated module's own variables


def _spec_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """A state of the generated module without its own variables: the spec's state."""
    return {k: v for k, v in state.items() if k not in ("l", "traceChanged") and not k.startswith(GENERATED)}


def _spec_run(cex: Counterexample | None, offset: int) -> Counterexample | None:
    """The run TLC printed, each state the spec's (``_spec_state``), numbered by the trace's events:
    state k of a window whose first event follows ``offset`` events is the state after event
    ``offset + k - 1`` (0: the initial state)."""
    if cex is None:
        return None
    steps = tuple(attrs.evolve(s, index=offset + s.index - 1, state=_spec_state(s.state)) for s in cex.steps)
    return attrs.evolve(cex, steps=steps, variables=tuple(v for v in cex.variables if v in steps[0].state) if steps else ())


def _diagnose(win: Trace, run: Path, stuck: int, where: Window, timeout: float, init: str, every_step: bool,
              stop: threading.Event | None) -> CheckResult:
    """The diagnosis run of the event ``stuck`` that nothing explained: the first of its diagnoses
    that fails in the state before it (``diagnosis_names``)."""
    _prepare(run, win, every_step, stuck, Window(start=where.start, classes=where.classes, base=where.base, prior=where.prior,
                                                 guards=where.guards))
    names = diagnosis_names(win.protocol, win.events[stuck - 1], where.guards)
    return run_task("tlc", _task(win, run, names, timeout, init, every_step, attrs.evolve(where, view=False)), run, None, stop=stop)


def _reads_before(protocol: Protocol, action: str) -> frozenset[str] | None:
    """What the spec action, and the spec's values of the logged columns it is compared with
    (``Protocol.column_values``), read in the state before its step (None: the spec defines no
    such action)."""
    try:
        read = reads_before(protocol, action)
        if protocol.column_values:
            read |= reads_before(protocol, protocol.column_values)
    except ReadsError:
        return None
    return read - frozenset(protocol.history)
