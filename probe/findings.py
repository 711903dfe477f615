"""The replay's violations of a probe run, named as Jepsen names the anomaly where one fits, with
the spec invariant (specs/kafka/) each one breaks."""

from __future__ import annotations

from typing import Any

# (check, kind) -> (the anomaly's name, the invariant of specs/kafka/ it breaks, what it means)
ANOMALIES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("C1", "ABORTED_READ"): ("aborted read (G1a)", "ReadCommitted", "a read_committed fetch gave a consumer a record of an aborted transaction"),
    ("C1", "DIRTY_READ"): ("LSO past an open transaction", "ReadCommitted", "a read_committed fetch returned a record whose transaction had not committed yet"),
    ("C1", "SKIPPED_READ"): ("poll skip (below the LSO)", "ReadCommitted", "a committed record below the LSO the broker reported was not returned"),
    ("C1", "WRONG_LSO"): ("wrong LSO", "ReadCommitted", "the LSO the broker reported is not the first offset of its oldest open transaction"),
    ("C2", "LOST_WRITE"): ("lost write", "Atomicity", "a send of a committed transaction is missing from the log, or its batch was aborted"),
    ("C2", "G1A"): ("aborted read (G1a)", "Atomicity", "a send of an aborted transaction was committed, or read by a read_committed consumer"),
    ("C2", "MARKER_MISSING"): (
        "marker missing (torn transaction)",
        "Atomicity",
        "the client was told its transaction committed, but no marker closes its batch on that partition",
    ),
    ("C4", "POLL_SKIP"): ("poll skip", "ReadCommitted", "a consumer's poll started past where its last poll of the partition ended"),
    ("C4", "NONMONOTONIC_POLL"): ("nonmonotonic poll", "ReadCommitted", "a consumer's poll started at or before where its last poll ended"),
    ("C4", "INT_POLL_SKIP"): ("internal poll skip", "ReadCommitted", "one poll skipped a record between two it returned"),
    ("C4", "INT_NONMONOTONIC_POLL"): ("internal nonmonotonic poll", "ReadCommitted", "one poll returned records out of offset order"),
    ("C4", "DUPLICATE_IN_POLL"): ("duplicate", "ReadCommitted", "one poll returned the same offset twice"),
    ("P1", "DUPLICATE"): ("duplicate", "NoDuplicates", "a batch repeats the sequence numbers of the one before it"),
    ("P1", "GAP"): ("sequence gap", "NoDuplicates", "a batch's first sequence does not follow the last one of its producer and epoch"),
    ("P2", "STALE_EPOCH_DATA"): ("zombie write after fencing", "ZombieFenced", "data of an older producer epoch was appended after a newer epoch was seen"),
    ("P2", "MARKER_EPOCH_BELOW_DATA"): ("marker of the wrong epoch", "ZombieFenced", "a marker carries an epoch below the data it closes"),
    ("P3", "COORDINATOR_EPOCH_BACK"): ("marker from a stale coordinator", "MarkerSafety", "a marker's coordinator epoch is below an earlier marker's"),
}


def findings(report: Any) -> list[dict[str, Any]]:
    """One finding per (check, kind) the replay reported, with its first example."""
    out = []
    for o in report.outcomes:
        for kind, count in sorted(o.by_kind.items()):
            name, invariant, meaning = ANOMALIES.get((o.id, kind), (kind.lower().replace("_", " "), o.invariant, ""))
            example = next((e for e in o.examples if e.get("kind") == kind), None)
            out.append({"check": o.id, "kind": kind, "anomaly": name, "invariant": invariant, "meaning": meaning, "count": count, "example": example})
    return out


def where(example: dict[str, Any]) -> str:
    """The partition, offset, producer and transaction of a violation row, as far as it has them."""
    parts = []
    if example.get("topic") is not None:
        parts.append(f"partition {example['partition']}")
    if example.get("offset") is not None:
        parts.append(f"offset {example['offset']}")
    if example.get("producer_id") is not None:
        parts.append(f"producer {example['producer_id']}")
    if example.get("txn_id"):
        parts.append(f"transactional id {example['txn_id']}")
    return ", ".join(parts)


def record_findings(path: Any) -> list[dict[str, Any]]:
    """What the record itself shows, without the replay: batches the broker served whose CRC-32C
    does not match (a consumer with check.crcs=true rejects them; Kafka's brokers validate and
    write correct ones: DefaultRecordBatch.ensureValid)."""
    import json

    bad: dict[tuple[Any, Any], dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for i, raw in enumerate(fh):
            line = json.loads(raw)
            if i == 0 or line.get("type") != "fetch":
                continue
            for b in line.get("batches") or []:
                if b.get("crc_valid") is False:
                    bad.setdefault((line.get("partition"), b.get("base_offset")), {**b, "topic": line.get("topic"), "partition": line.get("partition")})
    if not bad:
        return []
    first = bad[min(bad, key=lambda k: (k[0], k[1]))]
    kinds = sorted({str(b.get("control") or "data") for b in bad.values()})
    return [
        {
            "check": "probe",
            "kind": "BAD_CRC",
            "anomaly": "corrupt batch (CRC mismatch)",
            "invariant": "(the record batch format; no spec invariant)",
            "meaning": f"the broker served batches ({', '.join(kinds)}) whose CRC-32C does not match their bytes",
            "count": len(bad),
            "example": {
                "topic": first["topic"],
                "partition": first["partition"],
                "offset": first.get("base_offset"),
                "producer_id": first.get("producer_id"),
                "detail": f"{first.get('control') or 'data'} batch with CRC {first.get('crc')}",
            },
        }
    ]
