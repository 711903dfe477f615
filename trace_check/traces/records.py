"""The record encoding (for Kafka, specs/kafka/TraceKafkaTxnRecords.tla), for Apalache: each event
a record with every field, the whole trace in one run (``check_trace_records``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_check.engines.runner import run_task
from trace_check.models.result import ApalacheOptions, CheckTask, Outcome, TlcOptions
from trace_check.traces.invariants import invariants_of
from trace_check.traces.protocol import BOOL, LIST, OFFSETS, STRING, Protocol
from trace_check.traces.reader import Trace
from trace_check.traces.tla_text import copy_specs, module_head, tla_string, tla_value, trace_constants
from trace_check.traces.verdicts import Status, Verdict

RECORDS_MODULE = "TraceRunRecords"


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
