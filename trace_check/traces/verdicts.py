"""Verdicts: what the checker says of a trace (``Status``, ``Verdict``) and how ``txconform check``
prints it (``verdict_lines``)."""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import attrs

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
