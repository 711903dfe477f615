"""Mutation testing of trace validation: take a valid trace, change one event, and see whether
the checker notices.

Operators: drop an event, duplicate it, swap it with the next one, or alter one logged field.
Each mutant gets one of:

- ``killed``: the checker rejects it (or the reader refuses it, or it breaks an invariant);
- ``legal``: the checker accepts it and the protocol's reference engine, replaying it step by step, takes
  exactly these steps too: the mutant is a run the protocol allows (say, two independent steps in
  the other order), so it does not count against the score; the report says why;
- ``survived``: the checker accepts it but the engine cannot take these steps: a mutant the
  checker missed, which counts against the score.

score = killed / (killed + survived).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

from trace_check.errors import TxconformError
from trace_check.traces import format as tf
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import Protocol
from trace_check.traces.reader import Trace, read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status

OPERATORS = ("drop", "duplicate", "swap", "alter")


def _hashable(v: Any) -> Any:
    """A list as a tuple, so that a Mutation stays hashable."""
    return tuple(v) if isinstance(v, list) else v


@attrs.frozen
class Mutation:
    op: str
    index: int  # 1-based event
    column: str = ""
    new: Any = attrs.field(default=None, converter=_hashable)

    def describe(self, protocol: Protocol, events: list[dict[str, Any]]) -> str:
        ev = events[self.index - 1]
        what = protocol.event_text(ev)
        if self.op == "drop":
            return f"drop event {self.index} ({what})"
        if self.op == "duplicate":
            return f"duplicate event {self.index} ({what})"
        if self.op == "swap":
            return f"swap events {self.index} and {self.index + 1} ({what} / {protocol.event_text(events[self.index])})"
        return f"event {self.index} ({what}): {self.column} {ev.get(self.column)!r} -> {self.new!r}"


@attrs.frozen
class MutantResult:
    mutation: Mutation
    description: str
    outcome: str  # killed, legal, survived, error
    detail: str


def _altered(protocol: Protocol, col: str, v: Any, constants: dict[str, Any]) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 1
    if isinstance(v, list):
        return v[:-1] if v else [0]
    enum = protocol.columns.enums.get(col)
    if enum is not None:
        values = sorted(enum)
        return values[(values.index(v) + 1) % len(values)]
    return protocol.alter(col, v, constants)


def mutations(trace: Trace, count: int, seed: int) -> list[Mutation]:
    """``count`` distinct mutations of ``trace``, chosen with ``seed``."""
    rng = random.Random(seed)
    events = trace.events
    n = len(events)
    seen: set[Mutation] = set()
    out: list[Mutation] = []
    attempts = 0
    while len(out) < count and attempts < count * 50:
        attempts += 1
        op = rng.choice(OPERATORS)
        i = rng.randrange(1, n + 1)
        if op == "swap" and i == n:
            continue
        if op == "alter":
            cols = [c for c in events[i - 1] if c not in trace.protocol.columns.info and c != "action"]
            if not cols:
                continue
            col = rng.choice(sorted(cols))
            new = _altered(trace.protocol, col, events[i - 1][col], trace.constants)
            if new is None:
                continue
            m = Mutation(op, i, col, new)
        else:
            m = Mutation(op, i)
        if m not in seen:
            seen.add(m)
            out.append(m)
    return out


def apply(events: list[dict[str, Any]], m: Mutation) -> list[dict[str, Any]]:
    evs = copy.deepcopy(events)
    k = m.index - 1
    if m.op == "drop":
        del evs[k]
    elif m.op == "duplicate":
        evs.insert(k + 1, copy.deepcopy(evs[k]))
    elif m.op == "swap":
        evs[k], evs[k + 1] = evs[k + 1], evs[k]
    else:
        evs[k][m.column] = list(m.new) if isinstance(m.new, tuple) else m.new
    for n, ev in enumerate(evs, 1):
        ev["event"] = n
    return evs


def _why_legal(protocol: Protocol, m: Mutation, events: list[dict[str, Any]]) -> str:
    own = protocol.why_legal(m.op, events[m.index - 1], m.index, len(events))
    if own is not None:
        return own
    if m.op == "swap":
        return "the two steps are independent (different components and messages): either order is a run"
    if m.op == "drop" and m.index == len(events):
        return "dropping the last event leaves a prefix of the run, which is a run"
    return f"{protocol.engine_noun} takes exactly these steps from the initial state"


def judge(trace: Trace, m: Mutation, workdir: Path, timeout: float = 300.0) -> MutantResult:
    protocol = trace.protocol
    events = [dict(e) for e in trace.events]
    desc = m.describe(protocol, events)
    mutant = apply(events, m)
    path = workdir / f"mutant-{m.op}-{m.index}-{m.column or 'x'}.jsonl"
    tf.write_trace(path, trace.header, [{k: v for k, v in ev.items() if k != "event"} for ev in mutant], protocol.columns.order)
    try:
        t = read_trace(path)
    except TxconformError as e:
        return MutantResult(m, desc, "killed", f"the reader refuses it: {str(e).split(': ', 1)[-1]}")
    v = check_trace(t, CheckOptions(timeout=timeout))
    if v.status is Status.REJECTED:
        return MutantResult(m, desc, "killed", f"rejected at event {v.at_event}: {v.reason}")
    if v.status is Status.VIOLATES:
        return MutantResult(m, desc, "killed", f"violates {v.invariant}")
    if v.status is Status.ERROR:
        return MutantResult(m, desc, "error", v.message)
    stuck = protocol.replay(trace.constants, [dict(e) for e in t.events])
    if stuck is None:
        return MutantResult(m, desc, "legal", _why_legal(protocol, m, events))
    return MutantResult(m, desc, "survived", f"accepted, but {protocol.engine_noun} cannot take event {stuck}")


@attrs.frozen
class MutationReport:
    results: tuple[MutantResult, ...]

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.results if r.outcome == outcome)

    @property
    def score(self) -> float | None:
        judged = self.count("killed") + self.count("survived")
        return self.count("killed") / judged if judged else None


def mutation_report(
    traces: list[Trace],
    per_trace: int,
    seed: int,
    workdir: Path,
    jobs: int = 2,
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutationReport:
    todo = [(t, m) for n, t in enumerate(traces) for m in mutations(t, per_trace, seed + n)]
    workdir.mkdir(parents=True, exist_ok=True)

    def one(job: tuple[int, tuple[Trace, Mutation]]) -> MutantResult:
        n, (t, m) = job
        d = workdir / f"{n:04d}"
        d.mkdir(exist_ok=True)
        r = judge(t, m, d)
        if on_result:
            on_result(r)
        return r

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, enumerate(todo)))
    return MutationReport(tuple(results))
