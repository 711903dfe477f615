"""Verdicts: what the checker says of a trace (``Status``, ``Verdict``) and how ``txconform check``
prints it (``verdict_lines``)."""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import attrs

from trace_check.models.counterexample import state_lines
from trace_check.models.result import Counterexample
from trace_check.values.tla import format_value


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
    part: str | None = None  # ... the named part of the invariant that is false (invariants.checked_parts)
    at_event: int | None = None  # for REJECTED: the event nothing explained
    event: dict[str, Any] | None = None
    reason: str = ""
    state_before: dict[str, Any] | None = None
    spec_action: str = ""  # for REJECTED: the spec action the event stands for (Protocol.spec_action)
    action_reads: frozenset[str] | None = None  # ... and the variables it reads in the state before (None: unknown)
    read_by: str = ""  # ... what reads them, for people: the action and the spec's values of the event's columns
    message: str = ""  # for ERROR
    # for REJECTED and VIOLATES: the spec's run to the state before the event nothing explained, or
    # to the state that breaks the invariant (of the last window: its start is the window's first state)
    run: Counterexample | None = None
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


def verdict_lines(v: Verdict, path: Path, engine: str = "the reference engine", width: int | None = None,
                  full: bool = False) -> list[str]:
    """What ``check`` prints; ``engine`` names the plug-in's reference engine (``Protocol.engine_noun``).
    A rejection shows the state before the event as a counterexample's first state is shown: the
    variables the event's spec action reads, a value wider than ``width`` part by part, and a line
    that counts the others; ``full`` (or an action whose reads are unknown) shows every variable,
    each on one line."""
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
        part = f" (its part {v.part} is false)" if v.part else ""
        lines = [f"violates {v.invariant}: {path} is a behaviour of the spec, and it breaks {v.invariant}{at}{part} "
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
            lines += _state_before_lines(v, width, full)
        return lines
    return [f"error: {path}: {v.message}"]


def _state_before_lines(v: Verdict, width: int | None, full: bool) -> list[str]:
    state = v.state_before or {}
    if full or v.action_reads is None:
        return ["  the spec's state just before it:"] + [f"    {var} = {format_value(state[var])}" for var in sorted(state)]
    shown = sorted(var for var in state if var in v.action_reads)
    others = len(state) - len(shown)
    lines = [f"  the spec's state just before it, what {v.read_by or v.spec_action} read:"]
    lines += [line for var in shown for line in state_lines(var, state[var], width, "    ")]
    if not shown:
        lines.append("    (no variable: only constants)")
    if others:
        noun = "variable" if others == 1 else "variables"
        lines.append(f"    (and {others} other {noun}, which they do not read: --full prints the whole state)")
    return lines
