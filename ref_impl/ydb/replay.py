"""Replay a trace on the reference engine: can the engine itself take these steps, in this order,
with these logged columns? An independent second opinion to the spec's: the mutation score uses
it to tell a mutant that is still a legal run from one the checker missed."""

from __future__ import annotations

import copy
from typing import Any

from .actions import (
    BY_EVENT,
    DST,
    MESSAGE,
    PLAIN,
    RANGE,
    READ,
    TABLET,
    TABLET_TXN,
    TABLET_TXN_PARTITION,
    TABLET_TXN_PEER,
    TXN,
    WORKER,
    WORKER_PARTITION,
    WRITER,
    Action,
    arguments,
)
from .constants import Constants
from .engine import Engine
from .state import NetMsg

INFO = frozenset({"event", "write_id", "topic", "group"})
# The columns that name an action's argument, per kind of argument.
ARG_COLUMNS = {
    WORKER: ("worker",),
    READ: ("worker", "partition", "offsets_end"),
    RANGE: ("worker", "offsets_begin", "offsets_end"),
    WORKER_PARTITION: ("worker", "partition"),
    WRITER: ("worker", "writer"),  # the writer is never logged (its producer is)
    PLAIN: ("producer", "offset"),
    TXN: ("txn_id",),
    TABLET: ("tablet",),
    DST: ("partition",),
    TABLET_TXN: ("tablet", "txn_id"),
    TABLET_TXN_PARTITION: ("tablet", "txn_id", "partition"),
    TABLET_TXN_PEER: ("tablet", "txn_id", "peer"),
}


def _msg_matches(m: NetMsg, ev: dict[str, Any]) -> bool:
    fields = {"txn_id": m.tx, "message": m.type, "tablet": m.to, "peer": m.frm, "partition": m.dst, "offset": m.m.off,
              "producer": m.m.src}
    if any(c in ev and ev[c] != v for c, v in fields.items()):
        return False
    return m.type != "RS" or "decision" not in ev or ev["decision"] == m.dec


def _agrees(got: dict[str, Any], ev: dict[str, Any]) -> bool:
    return all(got.get(c) == v for c, v in ev.items() if c not in INFO)


def initial_owner(k: Constants, events: list[dict[str, Any]]) -> dict[int, str]:
    """The assignment Init chose, as the trace shows it: the worker of the first read of each
    partition, or, when a take-over comes first, the worker that hung last before it."""
    owner = {p: k.workers[(p - 1) % len(k.workers)] for p in k.src_parts}
    seen: set[int] = set()
    hung: list[str] = []
    for ev in events:
        a, p = ev.get("action"), ev.get("partition")
        if a == "Hang" and "worker" in ev:
            hung.append(ev["worker"])
        if a not in ("ReadBatch", "ReadOnlyBatch", "ReadOther", "PlainRead", "TakeOver") or p in seen or p not in owner or "worker" not in ev:
            continue
        seen.add(p)
        if a != "TakeOver":
            owner[p] = ev["worker"]
        else:
            others = [w for w in hung if w != ev["worker"]]
            if others:
                owner[p] = others[-1]
    return owner


def _candidates(e: Engine, a: Action, ev: dict[str, Any]) -> list[Any]:
    if a.over == MESSAGE:
        return [m for m in e.net if m.type in a.takes and _msg_matches(m, ev)]
    cols = ARG_COLUMNS[a.over]
    args = arguments(e, a.over, e.k.txns)
    out = []
    for arg in args:
        values = arg if isinstance(arg, tuple) else (arg,)
        if all(c not in ev or ev[c] == v for c, v in zip(cols, values, strict=True)):
            out.append(arg)
    return out


def _snapshot(e: Engine) -> dict[str, Any]:
    """The engine's variables (not its constants or its event sink), to try a step and undo it."""
    return {name: copy.deepcopy(v) for name, v in e.__dict__.items() if name not in ("emit_event", "k")}


class Replayer:
    """The engine taking a trace's events one by one (``replay``, and ``replay_state``'s window by window)."""

    def __init__(self, constants: dict[str, Any], events: list[dict[str, Any]]) -> None:
        k = Constants.from_spec({**constants, "Bugs": []})
        self.emitted: list[dict[str, Any]] = []
        self.engine = Engine(k, owner=initial_owner(k, events), emit=self.emitted.append)

    def step(self, ev: dict[str, Any]) -> dict[str, Any] | None:
        """Take the step ``ev`` logs; the event the engine emitted, or None if it cannot."""
        a = BY_EVENT.get(ev.get("action", ""))
        if a is None:
            return None
        e = self.engine
        try:
            cands = [c for c in _candidates(e, a, ev) if a.enabled(e, c)]
        except (KeyError, TypeError, ValueError):
            return None
        for n, arg in enumerate(cands):
            last = n == len(cands) - 1
            saved = None if last else (_snapshot(e), len(self.emitted))
            a.apply(e, arg)
            got = self.emitted[-1]
            if got["action"] == ev["action"] and _agrees(got, ev):
                return got
            if saved is not None:
                e.__dict__.update(saved[0])
                del self.emitted[saved[1]:]
        return None


def replay(constants: dict[str, Any], events: list[dict[str, Any]]) -> int | None:
    """The 1-based index of the first event the engine cannot reproduce, or None if it can all."""
    r = Replayer(constants, events)
    for n, ev in enumerate(events, 1):
        if r.step(ev) is None:
            return n
    return None


def engine_value(constants: dict[str, Any], events: list[dict[str, Any]], n: int, field: str) -> Any:
    """What the engine logs for ``field`` when it takes event ``n`` (1-based) after replaying the
    events before it, with the event's other columns; None when it cannot get there."""
    r = Replayer(constants, events)
    for ev in events[: n - 1]:
        if r.step(ev) is None:
            return None
    target = {c: v for c, v in events[n - 1].items() if c != field}
    got = r.step(target)
    return None if got is None else got.get(field)
