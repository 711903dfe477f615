"""Kafka's traces: the columns, what a header's constants and each event must satisfy, how events
become the tuples of specs/kafka/TraceKafkaTxn.tla, and how a rejected event is explained.

The generic machinery (reading files, generating the TLC module, running the engine) lives in
``trace_check.traces``; this module holds only what is Kafka's. Column meanings are documented in
docs/trace-format.md; the JSON Schema is docs/trace-format.schema.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trace_check.traces.protocol import (
    BOOL,
    INT,
    INT64,
    LIST,
    OFFSETS,
    STRING,
    Columns,
    Constants,
    Diagnosis,
    Encoding,
    Event,
    ProtocolInputError,
)

from .actions import ACTIONS as TABLE
from .actions import INSTANCE, MESSAGE, TXN_ID, TXN_PARTITION
from .constants import BUGS, LATE_REQUEST_TYPES, VERSIONS
from .messages import MESSAGE_TYPES
from .states import ERRORS, TXN_STATES

SPEC_DIR = Path(__file__).resolve().parents[2] / "specs" / "kafka"
SPEC_MODULES = ("KafkaTxn.tla", "KafkaTxnProperties.tla", "KafkaTxnSince.tla", "KafkaLog.tla", "KafkaTxnStates.tla")
TRACE_MODULE = "TraceKafkaTxn"
RECORDS_MODULE = "TraceKafkaTxnRecords"

# --- columns, in the order a writer puts them ---

KEY_COLUMNS = ("txn_id", "producer_id", "producer_epoch", "instance", "topic", "partition", "group")
MESSAGE_COLUMNS = ("type", "txn", "seq", "att", "commit", "coordinator_epoch", "error", "offset", "generation")
RESULT_COLUMNS = ("result", "isolation", "from", "records", "lso", "committed_offset")
POST_COLUMNS = (
    "client_state",
    "client_epoch",
    "client_txn",
    "txn_state",
    "txn_epoch",
    "txn_partitions",
    "pending",
    "append_offset",
    "log_end",
    "group_generation",
    "group_committed",
)
# New in trace format version 2: the partition set of the entry a TcAppend appended to
# __transaction_state (the spec's tlog entry `parts`; 0 is the offsets partition), and the offset
# an entry appended to a partition log took (the log's length before the append).
V2_COLUMNS = ("txn_partitions", "append_offset")
ORDER = ("event", "action", "actor", *KEY_COLUMNS, *MESSAGE_COLUMNS, *RESULT_COLUMNS, *POST_COLUMNS)
# How the checker compares them (TraceKafkaTxn.tla): message fields and post-state fields are each
# rendered as one string, in this order.
MSG_FIELDS = ("type", "txn", "producer_epoch", "seq", "att", "commit", "coordinator_epoch", "error", "offset", "generation")
POST_FIELDS = (*POST_COLUMNS, "records", "lso")
# producer_id is Kafka's 64-bit producer id: the spec names a producer by its transactional.id, so
# the id is for partitioning and people only, and never reaches TLC (whose integers are 32-bit).
INFO_COLUMNS = frozenset({"event", "actor", "producer_id", "topic"})
STRING_COLUMNS = frozenset(
    {"action", "actor", "txn_id", "topic", "group", "type", "error", "result", "isolation", "client_state", "txn_state"}
)

# The steps that append an entry to a partition log (and log `append_offset` when they do). The
# offsets partition is not a log in the spec: GcTxnOffsetCommit and GcMarker append nothing.
APPENDING_ACTIONS = frozenset({"LeaderProduce", "LeaderVerified", "LeaderMarker"})

# The action names and their kinds come from the broker's table of actions, which a test holds
# to the spec's Next: a client's steps (and its receipt of an answer), the steps on a message in
# flight, the coordinator's own steps.
ACTIONS = frozenset(a.name for a in TABLE)
MESSAGE_ACTIONS = frozenset(a.name for a in TABLE if a.over == MESSAGE)
CLIENT_ACTIONS = frozenset(a.name for a in TABLE if a.over == INSTANCE) | {"ClientReceive"}
COORDINATOR_ACTIONS = frozenset(a.name for a in TABLE if a.over in (TXN_ID, TXN_PARTITION))
SENDING_ACTIONS = frozenset({"StartInstance", "SendRequest", "Retry", "ReInit", "FetchOffset"})
# An open client's request (txconform serve): the spec builds it from these columns (KafkaTxn: ClientSend).
OPEN_SEND = "ClientSend"
OPEN_SEND_COLUMNS = ("txn_id", "instance", "partition", "type", "txn", "producer_epoch", "seq", "att", "commit", "offset", "generation")
CLIENT_STATES = frozenset({"down", "init", "ready", "intxn", "fenced", "failed", "done"})
ISOLATIONS = frozenset({"read_committed", "read_uncommitted"})


def _kind(c: str) -> str:
    if c in STRING_COLUMNS:
        return STRING
    if c == "commit":
        return BOOL
    if c in ("records", "txn_partitions"):
        return OFFSETS
    return INT64 if c == "producer_id" else INT


COLUMNS = Columns(
    order=ORDER,
    kinds={c: _kind(c) for c in ORDER},
    enums={
        "action": ACTIONS,
        "type": frozenset(MESSAGE_TYPES),
        "error": ERRORS,
        "result": ERRORS,
        "isolation": ISOLATIONS,
        "client_state": CLIENT_STATES,
        "txn_state": TXN_STATES,
    },
    info=INFO_COLUMNS,
    since={c: 2 for c in V2_COLUMNS},
)
# What the reference broker logs: every column, for every event it applies to.
LOGGED = tuple(c for c in ORDER if c not in INFO_COLUMNS)

# --- the header ---

CONSTANT_KINDS = {
    "TxnIds": LIST,
    "NumInstances": INT,
    "NumPartitions": INT,
    "TxnsPerInstance": INT,
    "Version": STRING,
    "LateRequests": LIST,
    "MaxRetries": INT,
    "MaxLoss": INT,
    "MaxFailovers": INT,
    "AppAborts": BOOL,
    "ProduceTimeouts": BOOL,
    "MaxHangs": INT,
    "InputSize": INT,
    "LeaderRestarts": BOOL,
    "TxnTimeouts": BOOL,
    "ProducerExpiry": BOOL,
    "MaxAppendFails": INT,
    "MaxEpoch": INT,
    "UncleanElections": BOOL,
    "MaxInFlight": INT,
    "Batches": INT,
    "ClientBumps": BOOL,
    "OpenClients": BOOL,
    "Bugs": LIST,
}
# What a trace written before a constant existed leaves out (restarts, timeouts, expiry, failed
# appends, the epoch bound: Short.MaxValue, replication, pipelining).
DEFAULTS = {"LeaderRestarts": False, "TxnTimeouts": False, "ProducerExpiry": False, "MaxAppendFails": 0,
            "MaxEpoch": 32767, "UncleanElections": False, "MaxInFlight": 1, "Batches": 1, "ClientBumps": False,
            "OpenClients": False, "Bugs": []}


def _printable(s: str) -> bool:
    return all(32 <= ord(ch) < 127 for ch in s)


def check_constants(k: Constants) -> None:
    if k["Version"] not in VERSIONS:
        raise ProtocolInputError(f'"Version" must be "TV1", "TV1V" or "TV2", got {json.dumps(k["Version"])}')
    if not k["TxnIds"] or not all(isinstance(t, str) and t and _printable(t) for t in k["TxnIds"]):
        raise ProtocolInputError('"TxnIds" must be a non-empty list of printable ASCII strings')
    if k["NumInstances"] < 1 or k["NumPartitions"] < 1:
        raise ProtocolInputError('"NumInstances" and "NumPartitions" must be at least 1')
    bad = [r for r in k["LateRequests"] if r not in LATE_REQUEST_TYPES]
    if bad:
        raise ProtocolInputError(f'"LateRequests": {json.dumps(bad[0])} is not one of {", ".join(LATE_REQUEST_TYPES)}')
    if not isinstance(k["MaxEpoch"], int) or not 2 <= k["MaxEpoch"] <= 32767:
        raise ProtocolInputError('"MaxEpoch" must be a whole number from 2 to 32767 (Short.MaxValue)')
    if not 1 <= k["MaxInFlight"] <= 5:
        raise ProtocolInputError('"MaxInFlight" must be a whole number from 1 to 5 (max.in.flight.requests.per.connection)')
    if k["Batches"] < 1:
        raise ProtocolInputError('"Batches" must be a whole number, at least 1 (batches per partition per transaction)')
    if k["ClientBumps"] and k["NumInstances"] != 1:
        raise ProtocolInputError('"ClientBumps": the KIP-360 bump is checked with one instance per transactional.id; '
                                 'set "NumInstances" to 1')
    if k["MaxInFlight"] > 1 and (k["ProduceTimeouts"] or "Produce" in k["LateRequests"]):
        raise ProtocolInputError('"MaxInFlight" > 1: produce requests neither time out nor arrive late; '
                                 'set "ProduceTimeouts" to false and leave "Produce" out of "LateRequests"')
    if k["OpenClients"] and k["ClientBumps"]:
        raise ProtocolInputError('"OpenClients": real clients bump their epochs as they do; "ClientBumps" describes '
                                 'the spec\'s own clients, so set it to false')
    if any(b not in BUGS for b in k["Bugs"]):
        raise ProtocolInputError(f'"Bugs" must list bugs of {", ".join(BUGS)}')


def spec_constants(k: Constants) -> Constants:
    """Always the correct protocol: a buggy broker's trace must be rejected."""
    return {**k, "Bugs": []}


# --- events ---


def check_event(ev: Event, k: Constants) -> None:
    """What an event must say, given its action and the constants (the kinds are checked already)."""
    a = ev["action"]

    def need(col: str, valid: Iterable[Any], what: str) -> None:
        if col not in ev:
            raise ProtocolInputError(f'{a}: field "{col}" is missing; it says {what}')
        if ev[col] not in valid:
            raise ProtocolInputError(f'{a}: field "{col}" = {json.dumps(ev[col])} is not {what} of this trace\'s constants')

    parts = range(1, k["NumPartitions"] + 1)
    if a == OPEN_SEND:
        missing = [c for c in OPEN_SEND_COLUMNS if c not in ev]
        if missing:
            raise ProtocolInputError(f'{a}: field "{missing[0]}" is missing; a ClientSend event logs the whole request '
                                     f'({", ".join(OPEN_SEND_COLUMNS)})')
        if not k["OpenClients"]:
            raise ProtocolInputError(f'{a}: the requests of real clients are checked only with "OpenClients": true in the header')
    for c in MSG_FIELDS:
        if c in ev and a not in MESSAGE_ACTIONS | SENDING_ACTIONS | {OPEN_SEND}:
            raise ProtocolInputError(f'{a}: field "{c}" describes a message, and {a} neither takes nor sends one; leave it out')
    if "result" in ev and a not in MESSAGE_ACTIONS | {"LeaderVerifyLost", "GcVerifyLost"}:
        raise ProtocolInputError(f'{a}: field "result" is the error code of an answer, and {a} answers nothing; leave it out')
    if a in CLIENT_ACTIONS | {OPEN_SEND, "ClientTake"} or any(c in ev for c in ("client_state", "client_epoch", "client_txn")):
        need("txn_id", k["TxnIds"], "a transactional.id")
        need("instance", range(1, k["NumInstances"] + 1), "a producer instance")
    if a in COORDINATOR_ACTIONS or any(c in ev for c in ("txn_state", "txn_epoch", "pending")):
        need("txn_id", k["TxnIds"], "a transactional.id")
    if a == "TcResendMarker":
        need("partition", range(0, k["NumPartitions"] + 1), "a partition (0: the offsets partition)")
    if "txn_partitions" in ev:
        if a != "TcAppend":
            raise ProtocolInputError(f'{a}: field "txn_partitions" is the partition set of a TcAppend\'s entry in __transaction_state; leave it out')
        ps = ev["txn_partitions"]
        if ps != sorted(set(ps)) or any(p > k["NumPartitions"] for p in ps):
            raise ProtocolInputError(f'{a}: field "txn_partitions" = {json.dumps(ps)} is not a sorted list of distinct partitions '
                                     f"(0: the offsets partition, 1..{k['NumPartitions']}: data)")
    if "append_offset" in ev:
        if a not in APPENDING_ACTIONS:
            raise ProtocolInputError(f'{a}: field "append_offset" is the offset of an entry appended to a partition log, '
                                     f"and {a} appends none; leave it out")
        if ev["append_offset"] < 0:
            raise ProtocolInputError(f'{a}: field "append_offset" = {ev["append_offset"]} is not an offset (a whole number >= 0)')
    partition_actions = ("LeaderVerifyLost", "LeaderRestart", "FollowerLag", "UncleanElection", "Fetch", "OffsetCommit")
    if a in partition_actions or any(c in ev for c in ("log_end", "records", "lso", "append_offset")):
        need("partition", parts, "a data partition")
    if a == "GcVerifyLost":
        need("partition", (0,), "the offsets partition (0)")
    if a == "Fetch" or "records" in ev:
        need("isolation", ISOLATIONS, "an isolation level")
        if "from" not in ev:
            raise ProtocolInputError(f'{a}: field "from" is missing; it says the offset the fetch started at')
    if a == "OffsetCommit":
        if not ev.get("group"):
            raise ProtocolInputError(f'{a}: field "group" is missing; it names the consumer group the offset is committed in')
        if "committed_offset" not in ev:
            raise ProtocolInputError(f'{a}: field "committed_offset" is missing; it says the position the consumer committed')
    elif "committed_offset" in ev:
        raise ProtocolInputError(f'{a}: field "committed_offset" belongs to OffsetCommit events; leave it out')


def params(ev: Event) -> tuple[Any, ...]:
    """<<txn_id, instance, partition, text, number, result>>: text and number are the parameters of
    the consumer steps (Fetch: isolation and from; OffsetCommit: group and committed_offset)."""
    commit = ev["action"] == "OffsetCommit"
    return (
        ev.get("txn_id", ""),
        ev.get("instance", -1),
        ev.get("partition", -1),
        ev.get("group", "") if commit else ev.get("isolation", ""),
        ev.get("committed_offset", 0) if commit else ev.get("from", 0),
        ev.get("result", ""),
    )


def tail(ev: Event) -> tuple[Any, ...]:
    """ClientSend: the request's <<type, txn, producer_epoch, seq, att, commit, offset, generation>>,
    from which the trace spec builds it (TraceKafkaTxn: SentOf); nothing for any other event."""
    return (tuple(ev[c] for c in OPEN_SEND_COLUMNS[3:]),) if ev["action"] == OPEN_SEND else ()


ENCODING = Encoding(params=params, groups=(MSG_FIELDS, POST_FIELDS), diagnosed=1, tail=tail)

# --- explaining a rejected event: TraceKafkaTxn.tla's Diagnose* operators, in the order tried ---

DIAGNOSES = (
    Diagnosis("DiagnoseMessage", lambda ev: (
        f"no message in flight matches the event's {ev.get('type', 'message')} "
        "(it was never sent, already delivered, or a field such as epoch, seq or att differs)")),
    Diagnosis("DiagnoseEnabled", lambda ev: f"the spec's {ev['action']} is not enabled here: its guard is false in this state"),
    Diagnosis("DiagnoseResult", lambda ev: (
        f"the step is possible, but it does not answer {ev.get('result')}: the spec answers otherwise")),
    Diagnosis("DiagnoseSent", lambda ev: "the request the event says was sent is not the one the spec's client sends in this state"),
)


# --- for people: one event as a line ---


def event_text(ev: Event) -> str:
    """One event as a short line: ``TcEndTxn t1/1 txn 2 EndTxn epoch 0 commit -> NONE``."""
    parts = [ev.get("action", "?")]
    if "txn_id" in ev:
        parts.append(f"{ev['txn_id']}/{ev['instance']}" if ev.get("instance") else str(ev["txn_id"]))
    if ev.get("txn"):
        parts.append(f"txn {ev['txn']}")
    if "type" in ev:
        parts.append(ev["type"])
    if ev.get("partition") or ev.get("action") in ("Fetch", "OffsetCommit", "LeaderRestart", "FollowerLag", "UncleanElection"):
        parts.append(f"p{ev.get('partition')}")
    if ev.get("type") in ("Produce", "ProduceResp", "Verify", "VerifyResp"):
        parts.append(f"seq {ev.get('seq')}")
    if "producer_epoch" in ev and ev.get("producer_epoch", -1) >= 0:
        parts.append(f"epoch {ev['producer_epoch']}")
    if ev.get("att"):
        parts.append(f"copy {ev['att'] + 1}")
    if ev.get("type") in ("EndTxn", "EndTxnResp", "WriteTxnMarkers", "WriteTxnMarkersResp"):
        parts.append("commit" if ev.get("commit") else "abort")
    if ev.get("error") not in (None, "NONE"):
        parts.append(ev["error"])
    if ev.get("action") == "Fetch":
        parts.append(f"{ev.get('isolation')} from {ev.get('from')}: {ev.get('records')} (LSO {ev.get('lso')})")
    if ev.get("action") == "OffsetCommit":
        parts.append(f"group {ev.get('group')} offset {ev.get('committed_offset')}")
    if ev.get("result") is not None:
        parts.append(f"-> {ev['result']}")
    if "append_offset" in ev:
        parts.append(f"at offset {ev['append_offset']}")
    if "txn_partitions" in ev:
        parts.append(f"partitions {ev['txn_partitions']}")
    for col, label in (("client_state", "client"), ("txn_state", "coordinator")):
        if col in ev:
            parts.append(f"[{label} {ev[col]}]")
    return " ".join(str(p) for p in parts)


# --- mutation testing ---


def alter(col: str, v: Any, k: Constants) -> Any:
    """Another transactional.id, when the trace has several."""
    if col == "txn_id" and len(k["TxnIds"]) > 1:
        ids = sorted(k["TxnIds"])
        return ids[(ids.index(v) + 1) % len(ids)]
    return None


def why_legal(op: str, ev: Event, index: int, length: int) -> str | None:
    if ev["action"] == "Fetch" and op in ("drop", "duplicate", "swap"):
        return "a Fetch changes no state: reading once more, once less or at another moment is a run too"
    if ev["action"] == "OffsetCommit" and op in ("drop", "duplicate"):
        return "a consumer commits when it likes: committing once more or once less is a run too"
    if ev["action"] == "LeaderRestart" and op in ("drop", "duplicate"):
        return "a leader restart rebuilds the state the log already implies: with nothing held, one more or one less is a run too"
    return None
