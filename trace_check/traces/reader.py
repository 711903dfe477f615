"""Reading a trace file: untrusted input, checked line by line before anything is generated.

Every problem is one line naming the file, the line and the field, and saying what is expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Optional

import attrs

from ref_impl.kafka.constants import BUGS, LATE_REQUEST_TYPES
from ref_impl.kafka.messages import MESSAGE_TYPES
from ref_impl.kafka.states import ERRORS, TXN_STATES

from trace_check.traces import format as tf
from trace_check.errors import TxconformError, suggest


class TraceError(TxconformError, ValueError):
    """A trace file that cannot be checked; the message names the file, line and field."""


CLIENT_ACTIONS = frozenset(
    {"StartInstance", "BeginTxn", "SendRequest", "Retry", "ProduceTimeout", "ReInit", "Hang", "Resume",
     "JoinGroup", "FetchOffset", "InputDone", "ClientReceive"}
)
MESSAGE_ACTIONS = frozenset(
    {"ClientReceive", "DiscardStale", "Drop", "TcInitProducerId", "TcAddPartitionsToTxn", "TcAddOffsetsToTxn",
     "TcVerify", "TcEndTxn", "TcMarkerAck", "GcOffsetFetch", "GcTxnOffsetCommit", "GcMarker", "LeaderProduce",
     "LeaderVerified", "LeaderDiscardVerify", "LeaderMarker"}
)
SENDING_ACTIONS = frozenset({"StartInstance", "SendRequest", "Retry", "ReInit", "FetchOffset"})
COORDINATOR_ACTIONS = frozenset({"TcAppend", "TcComplete", "TcResendMarker"})
ACTIONS = CLIENT_ACTIONS | MESSAGE_ACTIONS | COORDINATOR_ACTIONS | {"LeaderVerifyLost", "LeaderRestart", "Failover", "Fetch",
                                                                    "OffsetCommit"}

CLIENT_STATES = frozenset({"down", "init", "ready", "intxn", "fenced", "failed", "done"})
ENUMS: dict[str, frozenset[str]] = {
    "action": ACTIONS,
    "type": frozenset(MESSAGE_TYPES),
    "error": ERRORS,
    "result": ERRORS,
    "isolation": frozenset({"read_committed", "read_uncommitted"}),
    "client_state": CLIENT_STATES,
    "txn_state": TXN_STATES,
}

CONSTANT_KINDS: dict[str, type] = {
    "TxnIds": list,
    "NumInstances": int,
    "NumPartitions": int,
    "TxnsPerInstance": int,
    "Version": str,
    "LateRequests": list,
    "MaxRetries": int,
    "MaxLoss": int,
    "MaxFailovers": int,
    "AppAborts": bool,
    "ProduceTimeouts": bool,
    "MaxHangs": int,
    "InputSize": int,
    "LeaderRestarts": bool,
}


@attrs.frozen
class Trace:
    path: Path
    header: dict[str, Any]
    events: tuple[dict[str, Any], ...]

    @property
    def constants(self) -> dict[str, Any]:
        return self.header["constants"]


def _is_ident_text(s: str) -> bool:
    return all(32 <= ord(ch) < 127 for ch in s)


def _fail(path: Path, line: int, what: str) -> TraceError:
    return TraceError(f"{path}:{line}: {what}")


def _check_header(path: Path, h: Any) -> dict[str, Any]:
    if not isinstance(h, dict):
        raise _fail(path, 1, "the first line must be the trace header, a JSON object (see docs/trace-format.md)")
    if h.get("format") != tf.FORMAT:
        raise _fail(path, 1, f'header: "format" must be "{tf.FORMAT}"; is this a txconform trace?')
    if h.get("version") != tf.FORMAT_VERSION:
        raise _fail(path, 1, f'header: "version" {json.dumps(h.get("version"))} is not supported; this txconform reads version {tf.FORMAT_VERSION}')
    if h.get("protocol") != "kafka":
        raise _fail(path, 1, f'header: "protocol" {json.dumps(h.get("protocol"))} has no trace spec; supported: "kafka"')
    k = h.get("constants")
    if not isinstance(k, dict):
        raise _fail(path, 1, 'header: "constants" must be an object with the spec\'s constants')
    k.setdefault("LeaderRestarts", False)  # traces written before leader restarts were modelled
    for name, kind in CONSTANT_KINDS.items():
        if name not in k:
            raise _fail(path, 1, f'header: constants: "{name}" is missing')
        v = k[name]
        ok = isinstance(v, kind) and not (kind is int and isinstance(v, bool))
        if not ok:
            raise _fail(path, 1, f'header: constants: "{name}" must be {"a list" if kind is list else "an integer" if kind is int else "a boolean" if kind is bool else "a string"}, got {json.dumps(v)}')
        if kind is int and v < 0:
            raise _fail(path, 1, f'header: constants: "{name}" must be >= 0, got {v}')
    for name in k:
        if name not in CONSTANT_KINDS and name != "Bugs":
            raise _fail(path, 1, f'header: constants: unknown constant "{name}"{suggest(name, CONSTANT_KINDS)}')
    if k["Version"] not in ("TV1", "TV2"):
        raise _fail(path, 1, f'header: constants: "Version" must be "TV1" or "TV2", got {json.dumps(k["Version"])}')
    if not k["TxnIds"] or not all(isinstance(t, str) and t and _is_ident_text(t) for t in k["TxnIds"]):
        raise _fail(path, 1, 'header: constants: "TxnIds" must be a non-empty list of printable ASCII strings')
    if k["NumInstances"] < 1 or k["NumPartitions"] < 1:
        raise _fail(path, 1, 'header: constants: "NumInstances" and "NumPartitions" must be at least 1')
    bad = [r for r in k["LateRequests"] if r not in LATE_REQUEST_TYPES]
    if bad:
        raise _fail(path, 1, f'header: constants: "LateRequests": {json.dumps(bad[0])} is not one of {", ".join(LATE_REQUEST_TYPES)}')
    bugs = k.get("Bugs", [])
    if not isinstance(bugs, list) or any(b not in BUGS for b in bugs):
        raise _fail(path, 1, f'header: constants: "Bugs" must list bugs of {", ".join(BUGS)}')
    return h


def _check_value(path: Path, line: int, col: str, v: Any) -> None:
    def bad(expected: str) -> TraceError:
        return _fail(path, line, f'field "{col}": expected {expected}, got {json.dumps(v)[:60]}')

    if col in tf.STRING_COLUMNS:
        if not isinstance(v, str):
            raise bad("a string")
        if not _is_ident_text(v):
            raise bad("printable ASCII text")
        if col in ENUMS and v not in ENUMS[col]:
            raise _fail(path, line, f'field "{col}": unknown value {json.dumps(v)[:60]}{suggest(v, ENUMS[col])}')
    elif col in tf.BOOL_COLUMNS:
        if not isinstance(v, bool):
            raise bad("true or false")
    elif col in tf.LIST_COLUMNS:
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
            raise bad("a list of offsets (whole numbers >= 0)")
    else:
        if not isinstance(v, int) or isinstance(v, bool):
            raise bad("a whole number")
        if not -(2**31) <= v < 2**31:
            raise bad("a number TLC can represent (32-bit)")


def _check_event(path: Path, line: int, ev: Any, k: dict[str, Any], number: int) -> dict[str, Any]:
    if not isinstance(ev, dict):
        raise _fail(path, line, "an event must be a JSON object")
    ev = {c: v for c, v in ev.items() if v is not None}  # null means: not logged
    for col, v in ev.items():
        if col not in tf.COLUMNS:
            raise _fail(path, line, f'unknown field "{col}"{suggest(col, tf.COLUMNS)} (fields: docs/trace-format.md)')
        _check_value(path, line, col, v)
    if "action" not in ev:
        raise _fail(path, line, 'field "action" is missing: every event names the spec action it implements')
    if "event" in ev and ev["event"] != number:
        raise _fail(path, line, f'field "event": this is event {number}, but it says {ev["event"]}; events are numbered 1, 2, ... in order')
    a = ev["action"]
    parts = range(1, k["NumPartitions"] + 1)

    def need(col: str, valid: Iterable[Any], what: str) -> None:
        if col not in ev:
            raise _fail(path, line, f'{a}: field "{col}" is missing; it says {what}')
        if ev[col] not in valid:
            raise _fail(path, line, f'{a}: field "{col}" = {json.dumps(ev[col])} is not {what} of this trace\'s constants')

    for c in tf.MSG_FIELDS:
        if c in ev and a not in MESSAGE_ACTIONS | SENDING_ACTIONS:
            raise _fail(path, line, f'{a}: field "{c}" describes a message, and {a} neither takes nor sends one; leave it out')
    if "result" in ev and a not in MESSAGE_ACTIONS | {"LeaderVerifyLost"}:
        raise _fail(path, line, f'{a}: field "result" is the error code of an answer, and {a} answers nothing; leave it out')
    if a in CLIENT_ACTIONS or any(c in ev for c in ("client_state", "client_epoch", "client_txn")):
        need("txn_id", k["TxnIds"], "a transactional.id")
        need("instance", range(1, k["NumInstances"] + 1), "a producer instance")
    if a in COORDINATOR_ACTIONS or any(c in ev for c in ("txn_state", "txn_epoch", "pending")):
        need("txn_id", k["TxnIds"], "a transactional.id")
    if a == "TcResendMarker":
        need("partition", range(0, k["NumPartitions"] + 1), "a partition (0: the offsets partition)")
    if a in ("LeaderVerifyLost", "LeaderRestart", "Fetch", "OffsetCommit") or any(c in ev for c in ("log_end", "records", "lso")):
        need("partition", parts, "a data partition")
    if a == "Fetch" or "records" in ev:
        need("isolation", ENUMS["isolation"], "an isolation level")
        if "from" not in ev:
            raise _fail(path, line, f'{a}: field "from" is missing; it says the offset the fetch started at')
    if a == "OffsetCommit":
        if not ev.get("group"):
            raise _fail(path, line, f'{a}: field "group" is missing; it names the consumer group the offset is committed in')
        if "committed_offset" not in ev:
            raise _fail(path, line, f'{a}: field "committed_offset" is missing; it says the position the consumer committed')
    elif "committed_offset" in ev:
        raise _fail(path, line, f'{a}: field "committed_offset" belongs to OffsetCommit events; leave it out')
    return ev


def read_trace(path: Path, limit: Optional[int] = None) -> Trace:
    """Read and check a trace file; raises TraceError naming the line of the first problem."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise TraceError(f"{path}: cannot read the trace: {e.strerror}") from None
    events: list[dict[str, Any]] = []
    header: Optional[dict[str, Any]] = None
    with f:
        try:
            for n, raw in enumerate(f, 1):
                if not raw.strip():
                    raise _fail(path, n, "empty line; a trace has one JSON object per line")
                try:
                    obj = json.loads(raw, parse_constant=lambda c: _nan(path, n, c))
                except json.JSONDecodeError as e:
                    raise _fail(path, n, f"not valid JSON ({e.msg} at column {e.colno})") from None
                if header is None:
                    header = _check_header(path, obj)
                else:
                    events.append(_check_event(path, n, obj, header["constants"], len(events) + 1))
                    if limit and len(events) >= limit:
                        break
        except UnicodeDecodeError:
            raise TraceError(f"{path}: not UTF-8 text; a trace is JSON Lines") from None
    if header is None:
        raise TraceError(f"{path}: empty file; a trace starts with a header line (see docs/trace-format.md)")
    return Trace(path, header, tuple(events))


def _nan(path: Path, line: int, c: str) -> Any:
    raise _fail(path, line, f"{c} is not a number JSON allows")
