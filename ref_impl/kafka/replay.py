"""Replay a trace on the reference broker: can the broker itself take these steps, in this order,
with these logged results? An independent second opinion to the spec's: the mutation score uses
it to tell a mutant that is still a legal run from one the checker missed."""

from __future__ import annotations

from typing import Any

from .actions import ACTION, COMMIT_ARGS, FETCH_ARGS, INSTANCE, MESSAGE, PARTITION, REQUEST, TXN_ID, TXN_PARTITION, Action
from .cluster import Cluster
from .constants import Constants
from .messages import Msg

MSG_FIELDS = {
    "type": "type",
    "txn_id": "tid",
    "instance": "inst",
    "partition": "part",
    "producer_epoch": "epoch",
    "seq": "seq",
    "att": "att",
    "commit": "commit",
    "coordinator_epoch": "cepoch",
    "error": "err",
    "offset": "val",
    "generation": "gen",
}
INFO = {"event", "actor", "producer_id", "topic"}

def _matches(c: Cluster, m: Msg, ev: dict[str, Any]) -> bool:
    if "txn" in ev and m.gtx[2] != ev["txn"]:
        return False
    # the engine's epochs are generations (producer id and epoch in one number); traces log both
    if "producer_id" in ev and m.tid in c.producer_ids and c.producer_id(m.tid, m.epoch) != ev["producer_id"]:
        return False
    return all(
        (c.k.epoch_of(m.epoch) if col == "producer_epoch" else getattr(m, attr)) == ev[col]
        for col, attr in MSG_FIELDS.items()
        if col in ev
    )


def agrees(got: dict[str, Any] | None, ev: dict[str, Any]) -> bool:
    """Does the event the engine emitted (``got``) log what ``ev`` logs, but its informative columns?"""
    if got is None:
        return False
    return all(got.get(c) == v for c, v in ev.items() if c not in INFO)


def open_request(c: Cluster, ev: dict[str, Any]) -> Msg:
    """The request a ClientSend event logs (TraceKafkaTxnDispatch: OpenMsg): its producer epoch is
    of the coordinator's current producer id."""
    t, e = ev["txn_id"], ev["producer_epoch"]
    current = c.tc[t].epoch if t in c.tc and c.tc[t].epoch >= 0 else 0
    g = e if e < 0 else c.k.pid_of(current) * c.k.span + e
    return Msg(type=ev["type"], tid=t, inst=ev["instance"], epoch=g, part=ev["partition"], seq=ev["seq"], commit=ev["commit"],
               gtx=(t, ev["instance"], ev["txn"]), att=ev["att"], val=ev["offset"], gen=ev["generation"])


def _argument(a: Action, ev: dict[str, Any]) -> Any:
    """The argument of ``a`` that event ``ev`` names (not a message: ``take_step`` finds that)."""
    if a.over == INSTANCE:
        return (ev.get("txn_id"), ev.get("instance"))
    if a.over == TXN_ID:
        return ev["txn_id"]
    if a.over == TXN_PARTITION:
        return (ev["txn_id"], ev["partition"])
    if a.over == PARTITION:
        return ev["partition"]
    if a.over == FETCH_ARGS:
        return (ev["partition"], ev["isolation"], ev["from"])
    if a.over == COMMIT_ARGS:
        return (ev["group"], ev["partition"], ev["committed_offset"])
    return None


def take_step(c: Cluster, ev: dict[str, Any]) -> bool:
    """Take the step ``ev`` logs; False if its action is unknown or not enabled. A message-driven
    step takes the first message in flight that has the event's message columns."""
    a = ACTION.get(ev["action"])
    if a is None:
        return False
    if a.over == MESSAGE:
        m = next((m for m in c.net if _matches(c, m, ev)), None)
        return m is not None and a.run(c, m)
    if a.over == REQUEST:
        return a.run(c, open_request(c, ev))
    i = _argument(a, ev)
    if a.name == "SendRequest" and i in c.cl:  # the application's choice at EndTxn is in the event
        c.cl[i].decision = ev.get("commit", True) if ev.get("type") == "EndTxn" else True
    return a.run(c, i)


def broker_value(constants: dict[str, Any], events: list[dict[str, Any]], n: int, field: str) -> Any:
    """What the reference broker logs for ``field`` when it takes event ``n`` (1-based) after
    replaying the events before it; None when it cannot get there or does not log the field."""
    emitted: list[dict[str, Any]] = []
    c = Cluster(Constants.from_spec({**constants, "Bugs": []}), emitted.append)
    try:
        for ev in events[: n - 1]:
            if not take_step(c, ev):
                return None
        before = len(emitted)
        if not take_step(c, events[n - 1]) or len(emitted) != before + 1:
            return None
    except (KeyError, TypeError, ValueError):
        return None
    return emitted[-1].get(field)


def replay(constants: dict[str, Any], events: list[dict[str, Any]]) -> int | None:
    """The 1-based index of the first event the broker cannot reproduce, or None if it can all."""
    emitted: list[dict[str, Any]] = []
    k = Constants.from_spec({**constants, "Bugs": []})
    c = Cluster(k, emitted.append)
    for n, ev in enumerate(events, 1):
        before = len(emitted)
        try:
            ok = take_step(c, ev)
        except (KeyError, TypeError, ValueError):
            return n
        if not ok or len(emitted) != before + 1 or not agrees(emitted[-1], ev):
            return n
    return None
