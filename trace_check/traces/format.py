"""The trace format: JSON Lines, a header then one event per line (docs/trace-format.md).

Columns are flat, so a trace converts to a table (Parquet, a Spark DataFrame) without reshaping.
A column absent from an event, or null, is not logged; the checker leaves it free. The JSON Schema
is ``docs/trace-format.schema.json``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

FORMAT = "txconform-trace"
FORMAT_VERSION = 1

# Every event column, in the order a writer puts them.
KEY_COLUMNS = ("txn_id", "producer_id", "producer_epoch", "instance", "topic", "partition", "group")
MESSAGE_COLUMNS = ("type", "txn", "seq", "att", "commit", "coordinator_epoch", "error", "offset", "generation")
RESULT_COLUMNS = ("result", "isolation", "from", "records", "lso", "committed_offset")
POST_COLUMNS = (
    "client_state",
    "client_epoch",
    "client_txn",
    "txn_state",
    "txn_epoch",
    "pending",
    "log_end",
    "group_generation",
    "group_committed",
)
COLUMNS = ("event", "action", "actor") + KEY_COLUMNS + MESSAGE_COLUMNS + RESULT_COLUMNS + POST_COLUMNS
# How the checker compares them (specs/kafka/TraceKafkaTxn.tla): parameters as values; message
# fields and post-state fields each rendered as one string in this order.
MSG_FIELDS = ("type", "txn", "producer_epoch", "seq", "att", "commit", "coordinator_epoch", "error", "offset", "generation")
POST_FIELDS = POST_COLUMNS + ("records", "lso")
# Columns for people and partitioning only; the spec does not read them.
HEADER_ORDER = ("format", "version", "protocol", "spec", "spec_hash", "generator", "seed", "workload", "faults",
                "bugs", "constants", "logged")
INFO_COLUMNS = frozenset({"event", "actor", "producer_id", "topic"})

STRING_COLUMNS = frozenset(
    {"action", "actor", "txn_id", "topic", "group", "type", "error", "result", "isolation", "client_state", "txn_state"}
)
BOOL_COLUMNS = frozenset({"commit"})
LIST_COLUMNS = frozenset({"records"})
INT_COLUMNS = frozenset(COLUMNS) - STRING_COLUMNS - BOOL_COLUMNS - LIST_COLUMNS

SPEC_MODULES = {"kafka": ("kafka/KafkaTxn.tla", "kafka/KafkaLog.tla", "kafka/KafkaTxnStates.tla")}
SPECS_DIR = Path(__file__).resolve().parents[2] / "specs"


def spec_hash(protocol: str, specs_dir: Path = SPECS_DIR) -> str:
    """sha256 over the spec modules a trace of ``protocol`` is checked against."""
    h = hashlib.sha256()
    for rel in SPEC_MODULES[protocol]:
        h.update(rel.encode() + b"\0" + (specs_dir / rel).read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def header(
    protocol: str,
    constants: dict[str, Any],
    seed: Optional[int],
    generator: str,
    logged: Iterable[str],
    **extra: Any,
) -> dict[str, Any]:
    h: dict[str, Any] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "protocol": protocol,
        "spec": SPEC_MODULES[protocol][0],
        "spec_hash": spec_hash(protocol),
        "constants": constants,
        "seed": seed,
        "generator": generator,
        "logged": sorted(logged),
    }
    h.update(extra)
    return h


def dumps(obj: dict[str, Any], order: Iterable[str] = ()) -> str:
    """One line of JSON, keys in ``order`` first: the same object always gives the same bytes."""
    keys = [k for k in order if k in obj] + sorted(k for k in obj if k not in set(order))
    return json.dumps({k: obj[k] for k in keys}, separators=(",", ":"), ensure_ascii=False)


def event_lines(events: Iterable[dict[str, Any]]) -> Iterator[str]:
    for n, ev in enumerate(events, 1):
        yield dumps({"event": n, **ev}, COLUMNS)


def write_trace(path: Path, head: dict[str, Any], events: Iterable[dict[str, Any]]) -> None:
    """Write a trace file; events are numbered 1, 2, ... in order."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps(head, HEADER_ORDER) + "\n")
        for line in event_lines(events):
            f.write(line + "\n")
    tmp.replace(path)  # never leave a half-written trace under the real name


def event_text(ev: dict[str, Any]) -> str:
    """One event as a short line: ``TcEndTxn t1/1 txn 2 EndTxn epoch 0 commit -> NONE``."""
    parts = [ev.get("action", "?")]
    if "txn_id" in ev:
        parts.append(f"{ev['txn_id']}/{ev['instance']}" if ev.get("instance") else str(ev["txn_id"]))
    if ev.get("txn"):
        parts.append(f"txn {ev['txn']}")
    if "type" in ev:
        parts.append(ev["type"])
    if ev.get("partition") or ev.get("action") in ("Fetch", "OffsetCommit", "LeaderRestart"):
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
    for col, label in (("client_state", "client"), ("txn_state", "coordinator")):
        if col in ev:
            parts.append(f"[{label} {ev[col]}]")
    return " ".join(str(p) for p in parts)
