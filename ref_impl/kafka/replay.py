"""Replay a trace on the reference broker: can the broker itself take these steps, in this order,
with these logged results? An independent second opinion to the spec's: the mutation score uses
it to tell a mutant that is still a legal run from one the checker missed."""

from __future__ import annotations

from typing import Any, Optional

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

CLIENT = {
    "StartInstance": "start_instance", "BeginTxn": "begin_txn", "SendRequest": "send_request", "Retry": "retry",
    "ProduceTimeout": "produce_timeout", "ReInit": "re_init", "Hang": "hang", "Resume": "resume",
    "JoinGroup": "join_group", "FetchOffset": "fetch_offset", "InputDone": "input_done",
}
MESSAGE = {
    "ClientReceive": None, "DiscardStale": "discard_stale", "Drop": "drop", "TcInitProducerId": "tc_init_producer_id",
    "TcAddPartitionsToTxn": "tc_add_partitions_to_txn", "TcAddOffsetsToTxn": "tc_add_offsets_to_txn",
    "TcVerify": "tc_verify", "TcEndTxn": "tc_end_txn", "TcMarkerAck": "tc_marker_ack",
    "GcOffsetFetch": "gc_offset_fetch", "GcTxnOffsetCommit": "gc_txn_offset_commit", "GcMarker": "gc_marker",
    "LeaderProduce": "leader_produce", "LeaderVerified": "leader_verified",
    "LeaderDiscardVerify": "leader_discard_verify", "LeaderMarker": "leader_marker",
}


def _matches(m: Msg, ev: dict[str, Any]) -> bool:
    if "txn" in ev and m.gtx[2] != ev["txn"]:
        return False
    return all(getattr(m, attr) == ev[col] for col, attr in MSG_FIELDS.items() if col in ev)


def _agrees(got: Optional[dict[str, Any]], ev: dict[str, Any]) -> bool:
    if got is None:
        return False
    return all(got.get(c) == v for c, v in ev.items() if c not in INFO)


def _step(c: Cluster, ev: dict[str, Any]) -> bool:
    a = ev["action"]
    if a in CLIENT:
        i = (ev.get("txn_id"), ev.get("instance"))
        if a == "SendRequest" and i in c.cl:  # the application's choice at EndTxn is in the event
            c.cl[i].decision = ev.get("commit", True) if ev.get("type") == "EndTxn" else True
        return getattr(c, CLIENT[a])(i)
    if a in MESSAGE:
        for m in list(c.net):
            if _matches(m, ev):
                if a == "ClientReceive":
                    return c.client_receive((m.tid, m.inst), m)
                return getattr(c, MESSAGE[a])(m)  # type: ignore[arg-type]
        return False
    if a == "TcAppend":
        return c.tc_append(ev["txn_id"])
    if a == "TcComplete":
        return c.tc_complete(ev["txn_id"])
    if a == "TcResendMarker":
        return c.tc_resend_marker(ev["txn_id"], ev["partition"])
    if a == "LeaderVerifyLost":
        return c.leader_verify_lost(ev["partition"])
    if a == "Failover":
        return c.failover()
    if a == "LeaderRestart":
        return c.leader_restart(ev["partition"])
    if a == "OffsetCommit":
        return c.offset_commit(ev["group"], ev["partition"], ev["committed_offset"])
    if a == "Fetch":
        c.fetch(ev["partition"], ev["isolation"], ev["from"])
        return True
    return False


def broker_value(constants: dict[str, Any], events: list[dict[str, Any]], n: int, field: str) -> Any:
    """What the reference broker logs for ``field`` when it takes event ``n`` (1-based) after
    replaying the events before it; None when it cannot get there or does not log the field."""
    emitted: list[dict[str, Any]] = []
    c = Cluster(Constants.from_spec({**constants, "Bugs": []}), emitted.append)
    try:
        for ev in events[: n - 1]:
            if not _step(c, ev):
                return None
        before = len(emitted)
        if not _step(c, events[n - 1]) or len(emitted) != before + 1:
            return None
    except (KeyError, TypeError, ValueError):
        return None
    return emitted[-1].get(field)


def replay(constants: dict[str, Any], events: list[dict[str, Any]]) -> Optional[int]:
    """The 1-based index of the first event the broker cannot reproduce, or None if it can all."""
    emitted: list[dict[str, Any]] = []
    k = Constants.from_spec({**constants, "Bugs": []})
    c = Cluster(k, emitted.append)
    for n, ev in enumerate(events, 1):
        before = len(emitted)
        try:
            ok = _step(c, ev)
        except (KeyError, TypeError, ValueError):
            return n
        if not ok or len(emitted) != before + 1 or not _agrees(emitted[-1], ev):
            return n
    return None
