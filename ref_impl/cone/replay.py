"""Replay a trace on the reference engine: can the engine itself take these steps, in this order,
with these logged columns? An independent second opinion to the spec's: the mutation score uses
it to tell a mutant that is still a legal run from one the checker missed."""

from __future__ import annotations

import copy
from typing import Any

from .actions import BATCH, BY_EVENT, CLIENT, CO, CO_CLIENT, CO_CLIENT_QUORUM, CO_QUORUM, CO_TXN, CO_TXN_BATCH, CO_TXN_QUORUM, LINK, TXN, Action, arguments
from .constants import Constants, co_name
from .engine import Engine

INFO = frozenset({"event", "read_txn"})


def _agrees(got: dict[str, Any], ev: dict[str, Any]) -> bool:
    return all(got.get(c) == v for c, v in ev.items() if c not in INFO)


# The trace columns that name each position of an action's argument (None: not logged, as the
# quorum a read took its answers from); a transaction is logged as client and attempt.
TXN_COLUMNS = ("client", "attempt")
ARG_COLUMNS: dict[str, tuple[Any, ...]] = {
    CLIENT: ("client",),
    TXN: (TXN_COLUMNS,),
    CO_TXN_QUORUM: ("coordinator", TXN_COLUMNS, None),
    CO_CLIENT_QUORUM: ("coordinator", "client", None),
    CO_CLIENT: ("coordinator", "client"),
    CO_TXN_BATCH: ("coordinator", TXN_COLUMNS, "batch"),
    CO_TXN: ("coordinator", TXN_COLUMNS),
    BATCH: ("batch",),
    LINK: ("coordinator", "peer"),
    CO: ("coordinator",),
    CO_QUORUM: ("coordinator", None),
}


def _fits(a: Action, arg: tuple[Any, ...], ev: dict[str, Any]) -> bool:
    """Whether the step's argument agrees with the event's logged keys."""
    logged: dict[str, Any] = {}
    for cols, v in zip(ARG_COLUMNS[a.over], arg, strict=True):
        if cols == TXN_COLUMNS:
            logged.update(zip(TXN_COLUMNS, v, strict=True))
        elif cols in ("coordinator", "peer"):
            logged[cols] = co_name(v)
        elif cols is not None:
            logged[cols] = v
    return all(c not in ev or ev[c] == v for c, v in logged.items())


class Replayer:
    """The engine taking a trace's events one by one (``replay``, and ``replay_state``'s window by window)."""

    def __init__(self, constants: dict[str, Any]) -> None:
        self.emitted: list[dict[str, Any]] = []
        self.engine = Engine(Constants.from_spec({**constants, "Bugs": []}), self.emitted.append)

    def step(self, ev: dict[str, Any]) -> dict[str, Any] | None:
        a = BY_EVENT.get(ev.get("action", ""))
        if a is None:
            return None
        e = self.engine
        try:
            cands = [arg for arg in arguments(e, a.over) if _fits(a, arg, ev) and a.enabled(e, arg)]
        except (KeyError, TypeError, ValueError, IndexError):
            return None
        for arg in cands:
            saved = copy.deepcopy({n: v for n, v in e.__dict__.items() if n not in ("emit", "k")}), len(self.emitted)
            a.apply(e, arg)
            got = self.emitted[-1]
            if _agrees(got, ev):
                return got
            e.__dict__.update(saved[0])
            del self.emitted[saved[1] :]
        return None


def replay(constants: dict[str, Any], events: list[dict[str, Any]]) -> int | None:
    """The 1-based index of the first event the engine cannot reproduce, or None if it can all."""
    r = Replayer(constants)
    for n, ev in enumerate(events, 1):
        if r.step(ev) is None:
            return n
    return None


def engine_value(constants: dict[str, Any], events: list[dict[str, Any]], n: int, field: str) -> Any:
    """What the engine logs for ``field`` when it takes event ``n`` after replaying the ones before."""
    r = Replayer(constants)
    for ev in events[: n - 1]:
        if r.step(ev) is None:
            return None
    got = r.step({c: v for c, v in events[n - 1].items() if c != field})
    return None if got is None else got.get(field)
