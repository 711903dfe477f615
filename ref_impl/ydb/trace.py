"""YDB Topics traces: the columns, what a header's constants and each event must satisfy, how
events become the tuples of specs/ydb/TraceYdbTopics.tla, and how a rejected event is explained.

An event names the spec action it implements, as the spec's history variable ``action`` names
the step (``PartitionCommit``/``PartitionRollback`` for ``PartitionApply``,
``PqWrite``/``PqWriteSkipped``/``PqWriteRefused`` for ``PqWrite``, ``PlainWrite``/``PlainWriteSkipped``
for ``PlainWrite``), and logs:

- keys: ``worker``, ``tablet`` ("A", "B", "DS"), ``peer`` (the other tablet of a read set: its
  sender when received or lost, its receiver when resent), ``txn_id`` (KQP's TxId, which is also
  the WriteId: ``write_id`` repeats it for people), ``partition`` (of A for reads and A's
  commits, of B for writes and B's commits, 1 for the datashard), ``topic`` and ``group`` (for
  people: "A"/"B" and consumer "c"), ``step`` (the plan step), ``offset`` (of a message of A),
  ``producer`` (a write's producer: 0, -2, ... for a write-only transaction's writers; logged when
  TxWriters > 1),
  ``offsets_begin``/``offsets_end`` (the read range [b, e)), ``message`` (what Lose lost:
  Write, RS, RSAck);
- outcomes: ``result`` (KqpResult: COMMITTED, ABORTED or BAD_REQUEST; RollbackTx: ABORTED;
  UpdateOffsets: SUCCESS, or BAD_REQUEST for a range that intersects the transaction's;
  PqPropose: PREPARED or REFUSED), ``decision`` (commit or abort: PqCalc's own predicate, the decision a read set
  carries, PqExecute's and PqTxDone's decision), ``reason`` when a check fails (PqCalc abort,
  PqPropose REFUSED): ``Gap`` (the consumer's committed offset < b), ``Conflict`` (committed > b:
  another transaction committed the range), ``BehindEnd`` (e past the partition's end),
  ``WriteIdDeleted`` (a supportive partition was deleted: the lock was lost or the proposal
  expired), ``WriteIdMissing`` (a write never reached tablet B), ``Inactive`` (a split made a
  partition the transaction writes inactive), ``MinSeqNo`` (the producer's
  SeqNo would go back), ``LocksBroken`` (the table's lock);
- post-state: ``phase`` (the worker's SDK), ``kqp_state`` (the session's transaction),
  ``tx_state`` (the tablet's volatile state of the transaction), ``committed_offset`` (consumer
  c's committed offset of the partition of A), ``log_end`` (the length of B's main partition).

The checker compares every logged column with the spec's value for the step (its parameters,
its ``action`` arguments, its post-state); what an event does not log is left free.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trace_check.traces.protocol import (
    BOOL,
    INT,
    LIST,
    STRING,
    Columns,
    Constants,
    Diagnosis,
    Encoding,
    Event,
    ProtocolInputError,
)

from .actions import EVENTS
from .constants import BUGS, SHAPES, VERSIONS, other_producer, producer
from .state import PHASES, SESSION_STATES, TX_STATES

SPEC_DIR = Path(__file__).resolve().parents[2] / "specs" / "ydb"
SPEC_MODULES = ("YdbTopics.tla", "YdbTopicsProperties.tla")
TRACE_MODULE = "TraceYdbTopics"

# --- columns, in the order a writer puts them ---

KEY_COLUMNS = ("worker", "tablet", "peer", "txn_id", "write_id", "topic", "group", "partition", "step", "offset",
               "producer", "offsets_begin", "offsets_end", "message")
OUTCOME_COLUMNS = ("result", "reason", "decision")
POST_COLUMNS = ("phase", "kqp_state", "tx_state", "committed_offset", "log_end")
ORDER = ("event", "action", *KEY_COLUMNS, *OUTCOME_COLUMNS, *POST_COLUMNS)
INFO_COLUMNS = frozenset({"event", "write_id", "topic", "group"})
STRING_COLUMNS = frozenset({"action", "worker", "tablet", "peer", "topic", "group", "message", "result", "reason", "decision",
                            "phase", "kqp_state", "tx_state"})
# The columns the trace spec compares, rendered as one string (TraceYdbTopics.tla's PostVal).
COMPARED = tuple(c for c in ORDER if c not in INFO_COLUMNS and c != "action")
# The spec's parameters an event may log, passed to the trace spec as plain values
# ("" or -1: not logged): the dispatch binds the step's arguments with them.
PARAMS = ("worker", "tablet", "txn_id", "partition", "peer", "offset", "offsets_end", "message", "decision")

RESULTS = frozenset({"COMMITTED", "ABORTED", "BAD_REQUEST", "PREPARED", "REFUSED", "SUCCESS"})
REASONS = frozenset({"Gap", "Conflict", "BehindEnd", "WriteIdDeleted", "WriteIdMissing", "Inactive", "MinSeqNo",
                     "LocksBroken"})
TABLETS = ("A", "B", "DS")

COLUMNS = Columns(
    order=ORDER,
    kinds={c: STRING if c in STRING_COLUMNS else INT for c in ORDER},
    enums={
        "action": frozenset(EVENTS),
        "topic": frozenset({"A", "B"}),
        "group": frozenset({"c"}),
        "message": frozenset({"Write", "RS", "RSAck"}),
        "result": RESULTS,
        "reason": REASONS,
        "decision": frozenset({"commit", "abort"}),
        "phase": frozenset(PHASES),
        "kqp_state": frozenset(SESSION_STATES),
        "tx_state": frozenset(TX_STATES),
    },
    info=INFO_COLUMNS,
)
# What the reference engine logs: every column, for every event it applies to.
LOGGED = tuple(c for c in ORDER if c not in ("event", "action"))

# The events of CommitOffset: the partition's three answers (the offset moved, stale, a dead session).
COMMIT_OFFSET = ("CommitOffset", "CommitOffsetStale", "CommitOffsetRefused")
# The columns each event may log (besides the informational ones).
_WORKER = ("worker", "txn_id", "phase")
_TABLET = ("tablet", "txn_id", "tx_state")
EVENT_COLUMNS: dict[str, frozenset[str]] = {ev: frozenset(cols) for ev, cols in {
    "ReadBatch": (*_WORKER, "partition", "offsets_begin", "offsets_end", "kqp_state"),
    "ReadOnlyBatch": (*_WORKER, "partition", "offsets_begin", "offsets_end", "kqp_state"),
    "BeginWrites": (*_WORKER, "offsets_begin", "offsets_end", "kqp_state"),
    "ReadMore": (*_WORKER, "partition", "offsets_begin", "offsets_end", "kqp_state"),
    "ReadOther": (*_WORKER, "partition", "offsets_begin", "offsets_end", "kqp_state"),
    "UpdateOffsets": (*_WORKER, "offsets_begin", "offsets_end", "result", "kqp_state"),
    "TxWrite": (*_WORKER, "partition", "offset", "producer"),
    "NonTxWrite": ("worker", "txn_id", "partition", "offset", "log_end"),
    "OtherProducerWrite": ("worker", "txn_id", "partition", "offset", "log_end"),
    "PlainWrite": ("producer", "partition", "offset", "log_end"),
    "PlainWriteSkipped": ("producer", "partition", "offset", "log_end"),
    "TableWrite": _WORKER,
    "Flush": _WORKER,
    "CommitTx": (*_WORKER, "kqp_state"),
    "RollbackTx": (*_WORKER, "result", "kqp_state"),
    "Hang": ("worker", "txn_id"),
    "Resume": ("worker", "txn_id"),
    "TakeOver": ("worker", "partition"),
    "PlainRead": ("worker", "partition", "offsets_begin", "offsets_end", "phase"),
    "CommitOffset": ("worker", "partition", "offsets_begin", "offsets_end", "phase", "committed_offset"),
    "CommitOffsetStale": ("worker", "partition", "offsets_begin", "offsets_end", "phase", "committed_offset"),
    "CommitOffsetRefused": ("worker", "partition", "offsets_begin", "offsets_end", "phase", "committed_offset"),
    "KqpResult": (*_WORKER, "result", "kqp_state"),
    "CoordPlan": ("txn_id", "step", "kqp_state"),
    "PlanDeadline": ("txn_id",),
    "LockLost": ("txn_id",),
    "PqLockLost": ("tablet", "txn_id"),
    "PqWrite": ("tablet", "txn_id", "partition", "offset", "producer", "log_end"),
    "PqWriteRefused": ("tablet", "txn_id", "partition", "offset", "producer", "log_end"),
    "PqWriteSkipped": ("tablet", "txn_id", "partition", "offset", "producer", "log_end"),
    "PqWriteAckLost": ("tablet", "txn_id", "partition", "offset", "producer", "log_end"),
    "Resend": _WORKER,
    "ForceClose": _WORKER,
    "PqReadSet": (*_TABLET, "peer", "decision"),
    "PqReadSetAck": (*_TABLET, "peer"),
    "Lose": ("message", "txn_id", "tablet", "peer", "partition", "offset", "producer", "decision"),
    "PqPlanStep": (*_TABLET, "step"),
    "TabletRestart": ("tablet",),
    "Split": ("tablet", "partition", "log_end"),
    "PqPropose": (*_TABLET, "result", "reason"),
    "PqImmediate": (*_TABLET, "partition", "decision", "reason", "kqp_state", "committed_offset", "log_end"),
    "Expire": _TABLET,
    "PqCalc": (*_TABLET, "step", "decision", "reason", "committed_offset"),
    "PqExecute": (*_TABLET, "decision"),
    "PartitionCommit": (*_TABLET, "partition", "step", "committed_offset", "log_end"),
    "PartitionRollback": (*_TABLET, "partition", "step", "committed_offset", "log_end"),
    "PqTxDone": (*_TABLET, "decision"),
    "PqDelete": _TABLET,
    "PqResendReadSet": (*_TABLET, "peer", "decision"),
}.items()}
assert set(EVENT_COLUMNS) == set(EVENTS), "every event of the table of actions has its columns"

# --- the header ---

CONSTANT_KINDS = {
    "Workers": LIST,
    "NumSrc": INT,
    "NumDst": INT,
    "MsgsPerSrc": INT,
    "BatchMax": INT,
    "MaxTxns": INT,
    "Table": BOOL,
    "Rollbacks": BOOL,
    "TxShapes": LIST,
    "Producers": STRING,
    "Version": STRING,
    "MaxHangs": INT,
    "MaxRestarts": INT,
    "MaxLoss": INT,
    "MaxLockLosses": INT,
    "MaxDeadlines": INT,
    "MaxNonTxWrites": INT,
    "MaxReconnects": INT,
    "MaxRanges": INT,
    "MaxReads": INT,
    "MaxOtherWrites": INT,
    "MaxSplits": INT,
    "ForceCloses": BOOL,
    "TxWriters": INT,
    "MaxPlainWrites": INT,
    "MaxPartsRead": INT,
    "Others": INT,
    "MaxPlainCommits": INT,
    "Bugs": LIST,
    "DepthBound": INT,
}
# All but the first two: older headers, and the constants a header names only when not their default.
DEFAULTS = {"Bugs": [], "DepthBound": 6, "Rollbacks": False, "Producers": "none", "TxShapes": ["copy"],
            "MaxNonTxWrites": 0, "MaxReconnects": 0, "MaxRanges": 0, "MaxReads": 1, "MaxOtherWrites": 0, "MaxSplits": 0,
            "ForceCloses": False, "TxWriters": 1, "MaxPlainWrites": 0, "MaxPartsRead": 1, "Others": 1,
            "MaxPlainCommits": 0}


def _printable(s: str) -> bool:
    return all(32 <= ord(ch) < 127 for ch in s)


def check_constants(k: Constants) -> None:
    if k["Version"] not in VERSIONS:
        raise ProtocolInputError(f'"Version" must be {" or ".join(json.dumps(v) for v in VERSIONS)}, got {json.dumps(k["Version"])}')
    ws = k["Workers"]
    if not ws or not all(isinstance(w, str) and w and _printable(w) for w in ws) or len(set(ws)) != len(ws):
        raise ProtocolInputError('"Workers" must be a non-empty list of distinct printable ASCII names')
    if k.get("MaxPartsRead", 1) not in (1, 2):
        raise ProtocolInputError(f'"MaxPartsRead" must be 1 or 2 (a transaction reads one partition of A, or two), got {k["MaxPartsRead"]}')
    for name in ("NumSrc", "NumDst", "BatchMax", "MaxReads", "TxWriters", "Others"):
        if k.get(name, DEFAULTS.get(name, 1)) < 1:
            raise ProtocolInputError(f'"{name}" must be at least 1, got {k[name]}')
    shapes = k["TxShapes"]
    if not shapes or not all(sh in SHAPES for sh in shapes):
        raise ProtocolInputError(f'"TxShapes" must be a non-empty list drawn from {", ".join(json.dumps(sh) for sh in SHAPES)}, '
                                 f'got {json.dumps(shapes)}')
    bad = [b for b in k["Bugs"] if b not in BUGS]
    if bad:
        raise ProtocolInputError(f'"Bugs": {json.dumps(bad[0])} is not one of the spec\'s Bugs ({", ".join(BUGS)})')


def spec_constants(k: Constants) -> Constants:
    """Always the correct protocol: a buggy engine's trace must be rejected."""
    return {**k, "Bugs": []}


# --- events ---


def tablets_of(k: Constants) -> tuple[str, ...]:
    return TABLETS if k["Table"] else TABLETS[:2]


def check_event(ev: Event, k: Constants) -> None:
    """What an event must say, given its action and the constants (the kinds are checked already)."""
    a = ev["action"]
    allowed = EVENT_COLUMNS[a]
    for c in ev:
        if c not in allowed and c not in INFO_COLUMNS and c != "action":
            raise ProtocolInputError(f'{a}: field "{c}" is not something {a} logs; it logs {", ".join(sorted(allowed))}')

    def within(col: str, valid: Any, what: str) -> None:
        if col in ev and ev[col] not in valid:
            raise ProtocolInputError(f'{a}: field "{col}" = {json.dumps(ev[col])} is not {what} of this trace\'s constants')

    tablets = tablets_of(k)
    within("worker", k["Workers"], "a worker")
    within("tablet", tablets, "a tablet (A, B, and DS when Table is true)")
    within("peer", tablets, "a tablet (A, B, and DS when Table is true)")
    within("txn_id", range(1, k["MaxTxns"] + 1), "a transaction (1..MaxTxns)")
    # The application's own messages (a write-only transaction's) are numbered 0..MaxTxns*BatchMax-1.
    top = max(k["MsgsPerSrc"], k["MaxTxns"] * k["BatchMax"] + k["MaxNonTxWrites"] + k.get("MaxOtherWrites", 0)
              + k.get("MaxPlainWrites", 0))
    within("offset", range(0, top), "an offset of a message (0..max(MsgsPerSrc, MaxTxns*BatchMax+MaxNonTxWrites)-1)")
    within("offsets_begin", range(0, top + 1), "an offset (0..max(MsgsPerSrc, MaxTxns*BatchMax+MaxNonTxWrites))")
    # a write-only transaction begins with nothing written: its range [b, b) is empty
    # a range of its own may end one past the partition's end ("commit to the future")
    within("offsets_end", range(0 if a == "BeginWrites" else 1, max(top, k["MsgsPerSrc"] + 1 if a == "UpdateOffsets" else 0) + 1),
           "the end of a range (1..max(MsgsPerSrc, MaxTxns*BatchMax+MaxNonTxWrites))")
    writers = k.get("TxWriters", 1)
    others = {other_producer(j, writers) for j in range(k.get("Others", 1))}
    producers = {*(producer(g) for g in range(writers)), *range(1, k["NumSrc"] + 1),
                 *(others if a in ("PlainWrite", "PlainWriteSkipped") else ())}
    within("producer", producers, f"a producer (a partition of A, or a writer's: 0, -2, ... -{writers}; TxWriters {writers})")
    within("step", range(1, 2**31), "a plan step (1, 2, ...)")
    for col in ("committed_offset", "log_end"):
        within(col, range(0, 2**31), "a length")
    if ev.get("peer") is not None and ev.get("peer") == ev.get("tablet"):
        raise ProtocolInputError(f'{a}: field "peer" names the tablet itself; a read set goes to another tablet')
    # Which partitions a partition key may name: A's for reads, B's for writes, the tablet's for its commits.
    src, dst = range(1, k["NumSrc"] + 1), range(1, k["NumDst"] + 1)
    if a in ("ReadBatch", "ReadOnlyBatch", "ReadMore", "ReadOther", "TakeOver", "PlainRead", *COMMIT_OFFSET):
        within("partition", src, "a partition of topic A")
    elif a in ("TxWrite", "NonTxWrite", "OtherProducerWrite", "PlainWrite", "PlainWriteSkipped", "Split", "PqWrite",
               "PqWriteRefused", "PqWriteSkipped", "PqWriteAckLost", "Lose"):
        within("partition", dst, "a partition of topic B")
    elif a in ("PartitionCommit", "PartitionRollback", "PqImmediate"):
        t = ev.get("tablet")
        if "partition" in ev and t is None:
            raise ProtocolInputError(f'{a}: field "partition" needs field "tablet": it is a partition of that tablet')
        within("partition", src if t == "A" else dst if t == "B" else range(1, 2), f"a partition of tablet {t}")
    if "committed_offset" in ev and ev.get("tablet") != "A" and a not in COMMIT_OFFSET:
        raise ProtocolInputError(f'{a}: field "committed_offset" is tablet A\'s; log "tablet": "A" with it')
    if "log_end" in ev and a not in ("PqWrite", "PqWriteRefused", "PqWriteSkipped", "PqWriteAckLost", "NonTxWrite",
                                     "OtherProducerWrite", "PlainWrite", "PlainWriteSkipped") \
            and ev.get("tablet") != "B":
        raise ProtocolInputError(f'{a}: field "log_end" is tablet B\'s; log "tablet": "B" with it')
    if a == "Lose" and ev.get("message") == "Write" and any(c in ev for c in ("peer", "decision")):
        raise ProtocolInputError('Lose: a lost Write has no "peer" or "decision"')
    if a == "Lose" and ev.get("message") in ("RS", "RSAck") and any(c in ev for c in ("partition", "offset", "producer")):
        raise ProtocolInputError(f'Lose: a lost {ev["message"]} has no "partition", "offset" or "producer"')
    if a == "Lose" and ev.get("message") == "RSAck" and "decision" in ev:
        raise ProtocolInputError('Lose: a lost RSAck has no "decision"')
    if "reason" in ev and not (ev.get("decision") == "abort" or ev.get("result") == "REFUSED"):
        raise ProtocolInputError(f'{a}: field "reason" says why a check failed; log it with "decision": "abort" or "result": "REFUSED"')
    if "result" in ev:
        valid = ({"PREPARED", "REFUSED"} if a == "PqPropose" else {"SUCCESS", "BAD_REQUEST"} if a == "UpdateOffsets"
                 else {"COMMITTED", "ABORTED", "BAD_REQUEST"} if a == "KqpResult" else {"COMMITTED", "ABORTED"})
        within("result", valid, f"an outcome of {a}")


def params(ev: Event) -> tuple[Any, ...]:
    """<<worker, tablet, txn_id, partition, peer, offset, offsets_end, message, decision>>."""
    return tuple(ev.get(c, -1 if COLUMNS.kinds[c] == INT else "") for c in PARAMS)


ENCODING = Encoding(params=params, groups=(COMPARED,), diagnosed=0)

# --- explaining a rejected event: TraceYdbTopics.tla's Diagnose* operators, in the order tried ---

_OTHER = {"PqWrite": ("does not store the write: it refuses it (PqWriteRefused: its supportive partition is closed "
                      "or deleted) or skips it (PqWriteSkipped: AlreadyWritten, the partition already holds this "
                      "SeqNo of the producer)"),
          "PqWriteSkipped": ("stores the write (PqWrite) or refuses it (PqWriteRefused): the supportive partition "
                             "holds no such SeqNo of the producer"),
          "PqWriteRefused": "accepts the write (PqWrite or PqWriteSkipped): its supportive partition is open",
          "PlainWrite": ("skips the write (PlainWriteSkipped: AlreadyWritten, the partition already holds this SeqNo "
                         "of the producer)"),
          "PlainWriteSkipped": "stores the write (PlainWrite): the partition holds no such SeqNo of the producer",
          "PartitionCommit": "rolls the transaction back here (PartitionRollback): its decision is abort",
          "PartitionRollback": "commits the transaction here (PartitionCommit): its decision is commit"}


def _outcome(ev: Event) -> str:
    a = ev["action"]
    if a in _OTHER:
        return f"the step is possible, but the spec {_OTHER[a]}"
    return f"the step is possible, but not as {a}"


DIAGNOSES = (
    Diagnosis("DiagnoseMessage", lambda ev: (
        f"no message in flight matches the event's {ev.get('message') or _message_of(ev['action'])} "
        "(it was never sent, was already taken or lost, or a logged field differs)")),
    Diagnosis("DiagnoseEnabled", lambda ev: f"the spec's {spec_action(ev['action'])} is not enabled here: its guard is false in this state"),
    Diagnosis("DiagnoseOutcome", _outcome),
)


def _message_of(action: str) -> str:
    return {"PqReadSet": "read set", "PqReadSetAck": "read-set ack"}.get(action, "write")


def spec_action(event: str) -> str:
    """The spec action an event's action stands for (TraceYdbTopics.tla's Bound)."""
    return {"PartitionCommit": "PartitionApply", "PartitionRollback": "PartitionApply", "PqWriteRefused": "PqWrite",
            "PqWriteSkipped": "PqWrite", "PlainWriteSkipped": "PlainWrite", "CommitOffsetStale": "CommitOffset",
            "CommitOffsetRefused": "CommitOffset"}.get(event, event)


# --- for people: one event as a line ---


def event_text(ev: Event) -> str:
    """One event as a short line: ``PqCalc A tx 3 step 3 -> commit [WAIT_RS]``."""
    parts = [str(ev.get("action", "?"))]
    for col in ("worker", "tablet"):
        if col in ev:
            parts.append(str(ev[col]))
    if "message" in ev:
        parts.append(str(ev["message"]))
    if "peer" in ev:
        parts.append(("from " if ev.get("action") in ("PqReadSet", "PqReadSetAck", "Lose") else "to ") + str(ev["peer"]))
    if "txn_id" in ev:
        parts.append(f"tx {ev['txn_id']}")
    if "partition" in ev:
        parts.append(f"p{ev['partition']}")
    if "offsets_begin" in ev or "offsets_end" in ev:
        parts.append(f"[{ev.get('offsets_begin', '?')}, {ev.get('offsets_end', '?')})")
    if "offset" in ev:
        parts.append(f"offset {ev['offset']}")
    if "step" in ev:
        parts.append(f"step {ev['step']}")
    for col in ("result", "decision"):
        if col in ev:
            parts.append(f"-> {ev[col]}")
    if "reason" in ev:
        parts.append(f"({ev['reason']})")
    for col, label in (("phase", "worker"), ("kqp_state", "kqp"), ("tx_state", "tablet"), ("committed_offset", "committed"),
                       ("log_end", "log end")):
        if col in ev:
            parts.append(f"[{label} {ev[col]}]")
    return " ".join(parts)


# --- mutation testing ---


def alter(col: str, v: Any, k: Constants) -> Any:
    """Another worker, tablet or peer of this trace's constants."""
    names = list(k["Workers"]) if col == "worker" else list(tablets_of(k)) if col in ("tablet", "peer") else None
    if names and len(names) > 1 and v in names:
        names.sort()
        return names[(names.index(v) + 1) % len(names)]
    return None


def why_legal(op: str, ev: Event, index: int, length: int) -> str | None:
    if ev["action"] in ("PqReadSetAck", "PqDelete") and op == "drop" and index == length:
        return "the last acknowledgement or deletion is a step the run may still be waiting to take"
    return None
