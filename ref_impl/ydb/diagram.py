"""YDB Topics' runs (specs/ydb/YdbTopics.tla) as sequence diagrams: the workers (each an SDK
reader, writer and transaction), the KQP session, the coordinator (with the mediator), the PQ
tablets of topic A and topic B and the datashard, and the consumer group that assigns A's
partitions.

Most of the spec's steps are one process acting on another's state (the session proposes to a
tablet, the mediator delivers a plan step): each is the arrow of that request, or its answer. The
messages the spec keeps in ``net`` (writes to tablet B, read sets and their acknowledgements) are
arrows from their sender to their receiver when sent, a cross when lost. A tablet's decisions and
commits are notes on it; hangs, restarts and a lost lock are faults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_check.traces.protocol import Arrow, Diagram, Note

KQP, COORDINATOR, GROUP = "KQP session", "coordinator", "group"
PLAIN_WRITER = "plain writer"  # the application writing outside any transaction (PlainWrite's actor)
TABLETS = {"A": "PQ tablet A", "B": "PQ tablet B", "DS": "datashard"}
# Steps with nothing to draw: a read set stored (its acknowledgement is sent later), an
# acknowledgement taken, a record deleted, the run's end.
QUIET = frozenset({"PqReadSet", "PqReadSetAck", "PqDelete", "Finished"})


def tablet(name: str) -> str:
    return TABLETS.get(name, name)


def lifelines(first: Mapping[str, Any]) -> tuple[str, ...]:
    return (GROUP, *sorted(first["cl"]), PLAIN_WRITER, KQP, COORDINATOR, *TABLETS.values())


def _decision(args: Mapping[str, Any]) -> str:
    return "commit" if args.get("commit") else "abort"


def draw(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[Arrow | Note, ...]:
    act = after["action"]
    name, actor = str(act["name"]), str(act["actor"])
    args = act["args"] if isinstance(act["args"], Mapping) else {}
    tx = f"tx {args.get('txn_id', '?')}"
    who = tablet(actor)
    requests: dict[str, tuple[Arrow | Note, ...]] = {
        "ReadBatch": (Arrow(actor, tablet("A"), f"Read(A{args.get('partition')}, [{args.get('b')}, {args.get('e')})) in {tx}"),),
        "ReadOnlyBatch": (Arrow(actor, tablet("A"), f"Read(A{args.get('partition')}, [{args.get('b')}, {args.get('e')})) in {tx}"),),
        "ForceClose": (Note((actor,), f"{tx}: writer closed by force, writes unacknowledged"),),
        "Split": (Note((tablet("B"),), f"partition {args.get('partition')} splits: inactive"),),
        "OtherProducerWrite": (Arrow(actor, tablet("B"), f"another producer writes (-1, {args.get('off')}) outside any transaction"),),
        "NonTxWrite": (Arrow(actor, tablet("B"), f"the same producer writes (0, {args.get('off')}) outside the transaction"),),
        "PlainWrite": (Arrow(PLAIN_WRITER, tablet("B"), f"producer {args.get('producer')} writes SeqNo {_seqno(args)} "
                                                      f"to B{args.get('partition')} outside any transaction"),),
        "PlainWriteSkipped": (Arrow(PLAIN_WRITER, tablet("B"), f"producer {args.get('producer')} writes SeqNo {_seqno(args)}"),
                              Arrow(tablet("B"), PLAIN_WRITER, "→ AlreadyWritten (Skipped)", answer=True)),
        "ReadOther": (Arrow(actor, tablet("A"), f"Read(A{args.get('partition')}, [{args.get('b')}, {args.get('e')})) in {tx}, "
                                                  "a second partition"),),
        "PlainRead": (Arrow(actor, tablet("A"), f"Read(A{args.get('partition')}, [{args.get('b')}, {args.get('e')})) "
                                                  "outside any transaction"),),
        "CommitOffset": (Arrow(actor, tablet("A"), f"CommitOffset(A{args.get('partition')}, {args.get('e')})"),
                         Arrow(tablet("A"), actor, "→ OK: the offset moves", answer=True)),
        "CommitOffsetStale": (Arrow(actor, tablet("A"), f"CommitOffset(A{args.get('partition')}, {args.get('e')})"),
                              Arrow(tablet("A"), actor, "→ OK, stale: nothing moves", answer=True)),
        "CommitOffsetRefused": (Arrow(actor, tablet("A"), f"CommitOffset(A{args.get('partition')}, {args.get('e')})"),
                                Arrow(tablet("A"), actor, "→ WRONG_COOKIE: the read session is dead", answer=True)),
        "ReadMore": (Arrow(actor, tablet("A"), f"Read(A{args.get('partition')}, [{args.get('b')}, {args.get('e')})) in {tx}, again"),),
        "UpdateOffsets": (Arrow(actor, KQP, f"UpdateOffsetsInTransaction([{args.get('b')}, {args.get('e')})) in {tx}"),
                          Arrow(KQP, actor, "→ SUCCESS" if args.get("ok") else "→ BAD_REQUEST", answer=True)),
        "BeginWrites": (Note((actor,), f"{tx}: writer bound to the transaction"),),
        "TableWrite": (Arrow(actor, tablet("DS"), f"UpsertRow in {tx}"),),
        "Flush": (Note((actor,), f"{tx}: writer flushed"),),
        "CommitTx": (Arrow(actor, KQP, f"CommitTx({tx})"),),
        "RollbackTx": (Arrow(actor, KQP, f"RollbackTx({tx})"),),
        "KqpResult": (Arrow(KQP, actor, f"CommitTx → {'SUCCESS' if args.get('committed') else 'ABORTED'}", answer=True),),
        "PqPropose": (Arrow(KQP, who, f"Propose({tx})"),
                      Arrow(who, KQP, "→ PREPARED" if args.get("prepared") else "→ refused", answer=True)),
        "CoordPlan": (Arrow(KQP, COORDINATOR, f"Plan({tx})"), Note((COORDINATOR,), f"step {args.get('step')}: {tx}")),
        "PlanDeadline": (Note((COORDINATOR,), f"{tx}: deadline passed, never planned"),),
        "Expire": (Note((who,), f"{tx} expires"),),
        "PqPlanStep": (Arrow(COORDINATOR, who, f"PlanStep({args.get('step')}: {tx})"),),
        "PqCalc": (Note((who,), f"{tx}: predicate {_decision(args)}"),),
        "PqExecute": (Note((who,), f"{tx}: decision {_decision(args)}"),),
        "PartitionCommit": (Note((who,), f"{tx}: {_part(actor, args)} commits"),),
        "PartitionRollback": (Note((who,), f"{tx}: {_part(actor, args)} rolls back"),),
        "PqImmediate": (Arrow(KQP, who, f"Immediate({tx})"), Arrow(who, KQP, f"→ {_decision(args)}", answer=True)),
        "PqTxDone": (Arrow(who, KQP, f"{tx} EXECUTED ({_decision(args)})", answer=True),),
        "PqWrite": (Note((who,), f"{tx}: write to B{args.get('partition')}'s supportive partition"),),
        "PqWriteRefused": (Note((who,), f"{tx}: write to B{args.get('partition')} refused"),),
        "PqWriteSkipped": (Note((who,), f"{tx}: SeqNo {_seqno(args)} already written to B{args.get('partition')}: Skipped"),),
        "PqWriteAckLost": (Note((who,), f"{tx}: write stored in B{args.get('partition')}, its ack lost", fault=True),),
        "Resend": (Note((actor,), f"{tx}: writer reconnects, sends the unacknowledged writes again"),),
        "Hang": (Note((actor,), "hang", fault=True),),
        "Resume": (Note((actor,), "resumes (a zombie if replaced)"),),
        "TakeOver": (Arrow(GROUP, actor, f"Assign(A{args.get('partition')})"),),
        "LockLost": (Note((KQP,), f"{tx}: lock lost", fault=True),),
        "PqLockLost": (Note((who,), f"{tx}: lock lost", fault=True),),
        "TabletRestart": (Note((who,), "restart: volatile state lost", fault=True),),
    }
    out: list[Arrow | Note] = list(requests.get(name, ()))
    for m in _sorted(after["net"] - before["net"]):
        again = " again" if name == "PqResendReadSet" else ""
        out.append(Arrow(_sender(m, actor, before), tablet(m["to"]), _text(m) + again, answer=m["type"] == "RSAck"))
    if name == "Lose":
        out += [Arrow(_sender(m, actor, before), tablet(m["to"]), _text(m), answer=m["type"] == "RSAck", lost=True)
                for m in _sorted(before["net"] - after["net"])]
    if not out and name not in QUIET:
        out.append(Note((who,), name))
    return tuple(out)


def _seqno(args: Mapping[str, Any]) -> str:
    """A write's SeqNo, as the spec numbers it: the message's offset plus one."""
    off = args.get("off")
    return str(off + 1) if isinstance(off, int) else "?"


def _part(participant: str, args: Mapping[str, Any]) -> str:
    """What a participant's partition commit applies: a partition of A or B (``B1``), or the row."""
    return "the row" if participant == "DS" else f"{participant}{args.get('partition')}"


def _sender(m: Mapping[str, Any], actor: str, before: Mapping[str, Any]) -> str:
    """A message's sender: a read set's tablet, or the worker that wrote (the step's actor when it
    sends; when the write is lost, the worker of its transaction's session)."""
    if m["from"]:
        return tablet(m["from"])
    if actor in before["cl"]:
        return actor
    session = before["kqp"].get(m["tx"]) if isinstance(before["kqp"], Mapping) else None
    return str(session["w"]) if session else "writer"


def _text(m: Mapping[str, Any]) -> str:
    if m["type"] == "Write":
        src, off = m["m"]["src"], m["m"]["off"]
        # a message of A by its partition and offset; the application's own by its producer and SeqNo
        what = f"A{src}:{off}" if src > 0 else f"producer {src} SeqNo {off + 1}"
        return f"Write(B{m['dst']}, {what}) in tx {m['tx']}"
    if m["type"] == "RS":
        return f"ReadSet(tx {m['tx']}: {m['dec']})"
    return f"ReadSetAck(tx {m['tx']})"


def _sorted(msgs: frozenset[Any]) -> list[Any]:
    return sorted(msgs, key=lambda m: tuple(str(m[k]) for k in sorted(m)))


DIAGRAM = Diagram(lifelines=lifelines, draw=draw)
