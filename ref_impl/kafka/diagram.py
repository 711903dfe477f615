"""Kafka's runs (specs/kafka/KafkaTxn.tla) as sequence diagrams: the producer instances
(``t1#1``, ``t1#2``: instance 2 of transactional.id t1 is the restart of instance 1), the
transaction coordinator, the partition leaders (``p1``, ``p2``), the group coordinator (which leads
the offsets partition, 0 in the spec) and the consumers.

A message a step adds to ``net`` is an arrow from its sender to its receiver, both read off the
message (a request's type names its receiver; an answer goes back); a message the network drops is
an arrow that ends in a cross. A step that takes an answer is a note on its receiver when it
changes the client's state or is an error; the coordinator's step that takes a request whose
answer waits for the log append is a note on it. Appends to ``__transaction_state`` and to a partition's log are notes on
the coordinator and on the leader; hangs, failovers and restarts are faults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trace_check.traces.protocol import Arrow, Diagram, Note

from .state import OFFSETS_PART  # the group coordinator's partition

COORDINATOR, GROUP, CONSUMER = "coordinator", "group coordinator", "consumer"
TO_COORDINATOR = frozenset({"InitProducerId", "AddPartitionsToTxn", "EndTxn", "AddOffsetsToTxn", "Verify"})
TO_GROUP = frozenset({"TxnOffsetCommit", "OffsetFetch"})
NO_ERROR = "NONE"
# The coordinator's steps that validate a request and leave its answer to the log append (TcAppend).
VALIDATIONS = frozenset({"TcInitProducerId", "TcAddPartitionsToTxn", "TcAddOffsetsToTxn", "TcEndTxn"})
# Steps with nothing to draw beyond the messages they take and send.
QUIET = frozenset({"TcMarkerAck", "TcComplete", "Finished", "ClientTake"})


def instance(tid: str, inst: int) -> str:
    return f"{tid}#{inst}"


def leader(part: int) -> str:
    """The leader of a partition; the offsets partition's is the group coordinator."""
    return GROUP if part == OFFSETS_PART else f"p{part}"


def lifelines(first: Mapping[str, Any]) -> tuple[str, ...]:
    instances = sorted(_keys(first["cl"]))
    parts = len(first["plog"])
    return (*(instance(t, k) for t, k in instances), COORDINATOR, *(leader(p) for p in range(1, parts + 1)), GROUP, CONSUMER)


def ends(m: Mapping[str, Any]) -> tuple[str, str]:
    """A message's sender and receiver."""
    kind = str(m["type"])
    request = kind.removesuffix("Resp")
    client = instance(m["tid"], m["inst"])
    if request == "Verify":  # a leader (or the group coordinator) asks the coordinator
        pair = (leader(m["part"]), COORDINATOR)
    elif request == "WriteTxnMarkers":
        pair = (COORDINATOR, leader(m["part"]))
    elif request in TO_COORDINATOR:
        pair = (client, COORDINATOR)
    elif request in TO_GROUP:
        pair = (client, GROUP)
    else:  # Produce
        pair = (client, leader(m["part"]))
    return (pair[1], pair[0]) if kind.endswith("Resp") else pair


def text(m: Mapping[str, Any]) -> str:
    """A message in Kafka's words: ``EndTxn(commit, epoch 0)``, ``Produce(p1, seq 0)``, ``EndTxn → NONE``."""
    kind = str(m["type"])
    request = kind.removesuffix("Resp")
    if kind.endswith("Resp"):
        epoch = f", epoch {m['epoch']}" if request in ("InitProducerId", "EndTxn") and m["err"] == NO_ERROR else ""
        offset = f", offset {m['val']}" if request == "OffsetFetch" and m["err"] == NO_ERROR else ""
        return f"{request} → {m['err']}{epoch}{offset}"
    if request in REQUESTS:
        return REQUESTS[request](m)
    return f"{request}(epoch {m['epoch']})" if m["epoch"] >= 0 else request


def _commit(m: Mapping[str, Any]) -> str:
    return "commit" if m["commit"] else "abort"


# A request in Kafka's words, by type (the others: their name, and the epoch they carry).
REQUESTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "Produce": lambda m: f"Produce({leader(m['part'])}, seq {m['seq']}, epoch {m['epoch']})",
    "EndTxn": lambda m: f"EndTxn({_commit(m)}, epoch {m['epoch']})",
    "WriteTxnMarkers": lambda m: f"WriteTxnMarkers({_commit(m).upper()} {m['tid']}, epoch {m['epoch']})",
    "Verify": lambda m: f"Verify({m['tid']} on {leader(m['part'])}, epoch {m['epoch']})",
    "TxnOffsetCommit": lambda m: f"TxnOffsetCommit(offset {m['val']}, generation {m['gen']})",
    "OffsetFetch": lambda m: "OffsetFetch(require_stable)",
}


def draw(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[Arrow | Note, ...]:
    act = after["action"]
    name, args = str(act["name"]), _args(act)
    who = _actor(act)
    sent = sorted(after["net"] - before["net"], key=_order)
    gone = sorted(before["net"] - after["net"], key=_order)
    out: list[Arrow | Note] = []
    if name in ("Drop", "DiscardStale"):
        why = "" if name == "Drop" else " (stale: no one waits for it)"
        out += [Arrow(*ends(m), text(m) + why, answer=str(m["type"]).endswith("Resp"), lost=True) for m in gone]
    faults = {"Hang": "hang", "Failover": f"failover: coordinator epoch {args.get('cepoch')}",
              "LeaderRestart": "restart", "UncleanElection": f"unclean election: log cut to {args.get('offset')}",
              "FollowerLag": "follower falls behind", "TcAppendFail": "append fails"}
    if name in faults:
        out.append(Note((who,), faults[name], fault=True))
    elif name == "Resume":
        out.append(Note((who,), "resumes (a zombie if replaced)"))
    elif name == "StartInstance":
        out.append(Note((who,), "starts"))
    elif name == "BeginTxn":
        out.append(Note((who,), f"begins txn {args.get('txn')}"))
    elif name == "TcTimeoutAbort":
        out.append(Note((COORDINATOR,), f"{act['txn_id']} times out: abort"))
    elif name == "LeaderExpireProducer":
        out.append(Note((who,), f"forgets producer {act['txn_id']}"))
    elif name == "JoinGroup":
        out.append(Arrow(who, GROUP, f"JoinGroup → generation {args.get('generation')}"))
    elif name == "Fetch" and who == CONSUMER:
        out.append(Arrow(CONSUMER, leader(args["part"]), f"Fetch(from {args['from']}, {act['note']})"))
    elif name == "OffsetCommit" and who == CONSUMER:
        out.append(Arrow(CONSUMER, GROUP, f"OffsetCommit({leader(args['part'])}, {args['offset']})"))
    out += _logged(before, after)
    if name not in ("Drop", "DiscardStale"):
        again = " again (retry)" if name == "Retry" else ""
        out += [Arrow(*ends(m), text(m) + again, answer=str(m["type"]).endswith("Resp")) for m in sent]
    if name.startswith("Receive"):
        return tuple(out + _taken(who, before, after, act))
    if name in VALIDATIONS and not out:  # the request is taken; its answer waits for the log append
        out.append(Note((COORDINATOR,), f"takes {name.removeprefix('Tc')}{_of_txn(args)}: to be logged"))
    if not out and name not in QUIET:
        out.append(Note((who,), name))
    return tuple(out)


def _taken(who: str, before: Mapping[str, Any], after: Mapping[str, Any], act: Mapping[str, Any]) -> list[Arrow | Note]:
    """A client took an answer: a note when its state changed (``ready``, ``fenced``) or the answer is an error."""
    key = next(k for k in _keys(after["cl"]) if instance(*k) == who)
    old, new = _get(before["cl"], key), _get(after["cl"], key)
    if act["note"] not in (NO_ERROR, "") and old["st"] == new["st"]:
        return [Note((who,), f"{act['note']}: retries")]
    if old["st"] != new["st"]:
        return [Note((who,), str(new["st"]))]
    return []


def _logged(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Note]:
    """Appends to ``__transaction_state`` (on the coordinator) and to the partition logs (on their leaders)."""
    out = []
    for t in _keys(after["tlog"]):
        for e in _appended(_get(before["tlog"], t), _get(after["tlog"], t)):
            out.append(Note((COORDINATOR,), f"log {t}: {e['st']}, epoch {e['epoch']}"))
    for p in _keys(after["plog"]):
        for e in _appended(_get(before["plog"], p), _get(after["plog"], p)):
            what = (f"{_commit(e).upper()} marker {e['pid']}" if e["kind"] == "marker"
                    else f"batch {e['pid']} seq {e['seq']}")
            out.append(Note((leader(p),), f"log: {what}"))
    return out


def _appended(old: tuple[Any, ...], new: tuple[Any, ...]) -> tuple[Any, ...]:
    return new[len(old):] if len(new) > len(old) and new[: len(old)] == old else ()


def _actor(act: Mapping[str, Any]) -> str:
    """The process a step's action names: an instance, the coordinator, a leader, the group coordinator."""
    actor, args = str(act["actor"]), _args(act)
    if actor == "leader":
        return leader(args["part"])
    if actor == "group":
        return GROUP
    if actor in (COORDINATOR, CONSUMER, "network", "client"):
        return actor
    return instance(actor, args["instance"]) if "instance" in args else actor


def _of_txn(args: Mapping[str, Any]) -> str:
    return f" of txn {args['txn']}" if "txn" in args else ""


def _args(act: Mapping[str, Any]) -> Mapping[str, Any]:
    """A step's arguments (none: the empty function, which TLC prints as an empty sequence)."""
    args = act["args"]
    return args if isinstance(args, Mapping) else {}


def _keys(f: Any) -> Iterable[Any]:
    """The domain of a function (a function over 1..n is printed as a sequence)."""
    return range(1, len(f) + 1) if isinstance(f, tuple) else f.keys()


def _get(f: Any, key: Any) -> Any:
    return f[key - 1] if isinstance(f, tuple) else f[key]


def _order(m: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(m[k]) for k in sorted(m))


DIAGRAM = Diagram(lifelines=lifelines, draw=draw)
