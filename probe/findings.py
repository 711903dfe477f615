"""The replay's violations of a probe run, named as Jepsen names the anomaly where one fits, with
the spec invariant (specs/kafka/) each one breaks; and what the record shows by itself: corrupt
batches, a zombie's commit after fencing, exactly-once of consume-transform-produce."""

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
    if example.get("topic") is not None and example.get("partition") is not None:
        parts.append(f"partition {example['partition']}")
    if example.get("offset") is not None:
        parts.append(f"offset {example['offset']}")
    if example.get("producer_id") is not None:
        parts.append(f"producer {example['producer_id']}")
    if example.get("txn_id"):
        parts.append(f"transactional id {example['txn_id']}")
    return ", ".join(parts) or str(example.get("topic") or "the run")


def record_findings(path: Any) -> list[dict[str, Any]]:
    """What the record itself shows, without the replay: batches whose CRC does not match
    (``crc_findings``) and the consume-transform-produce loop's outcome (``ctp_findings``)."""
    import json

    with open(path, encoding="utf-8") as fh:
        lines = [json.loads(raw) for raw in fh]
    return crc_findings(lines) + zombie_findings(lines) + ctp_findings(lines)


def crc_findings(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Batches the broker served whose CRC-32C does not match (a consumer with check.crcs=true
    rejects them; Kafka's brokers validate and write correct ones: DefaultRecordBatch.ensureValid)."""
    bad: dict[tuple[Any, Any], dict[str, Any]] = {}
    for i, line in enumerate(lines):
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


def _logs(lines: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Each partition's batches from the final read_uncommitted pass (process ``log``), by offset."""
    out: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for line in lines[1:]:
        if line.get("type") == "fetch" and line.get("process") == "log" and not line.get("error_code"):
            for b in line.get("batches") or []:
                out.setdefault((str(line["topic"]), int(line["partition"])), {})[int(b["base_offset"])] = b
    return {tp: [bs[o] for o in sorted(bs)] for tp, bs in out.items()}


def _fates(batches: list[dict[str, Any]]) -> dict[int, str]:
    """Offset -> COMMIT / ABORT / OPEN for each data record: a transactional batch's fate is its
    producer's next marker (the spec's CloserOf); a non-transactional one is committed."""
    fate: dict[int, str] = {}
    for i, b in enumerate(batches):
        if b.get("is_control"):
            continue
        closer = "COMMIT"
        if b.get("is_txn"):
            m = next((m for m in batches[i + 1 :] if m.get("is_control") and m.get("producer_id") == b.get("producer_id")), None)
            closer = str(m.get("control")) if m is not None else "OPEN"
        for o in range(int(b["base_offset"]), int(b["last_offset"]) + 1):
            fate[o] = closer
    return fate


def _commits_after_fencing(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``commit-after-fencing`` notes: an older instance asked to commit after a newer one's
    InitProducerId had returned. A record of version 1, from before the note existed: zombie-0
    committed in the same thread right after zombie-1's init, so zombie-1's
    ``fenced-older-instance`` note stands for it."""
    notes = [ln for ln in lines[1:] if ln.get("type") == "note" and ln.get("what") == "commit-after-fencing"]
    if notes:
        return notes
    fenced = [ln for ln in lines[1:] if ln.get("type") == "note" and ln.get("what") == "fenced-older-instance" and ln.get("process") == "zombie-1"]
    return [{**n, "process": "zombie-0", "txn": f"{n.get('txid')}/0/1", "fenced_by": "zombie-1"} for n in fenced]


def zombie_findings(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A zombie's commit (the spec's ZombieFenced, seen from the clients and from the log): an
    instance of a transactional id asked to commit after a newer instance's InitProducerId had
    returned, which must have fenced it and aborted its transaction (KIP-98;
    TransactionCoordinator.handleInitProducerId bumps the epoch and aborts an ongoing
    transaction, handleEndTransaction refuses an old epoch with PRODUCER_FENCED); yet the client
    was told the commit succeeded, or the log holds its records under a COMMIT marker. The
    example says what the log and the read_committed consumers held of that transaction."""
    notes = _commits_after_fencing(lines)
    if not notes:
        return []
    ends = {(ln.get("process"), ln.get("txn")): ln for ln in lines[1:] if ln.get("type") == "txn"}
    fates = {tp: _fates(bs) for tp, bs in _logs(lines).items()}
    polls = [ln for ln in lines[1:] if ln.get("type") == "poll" and ln.get("isolation") == "read_committed"]
    rows = []
    for note in notes:
        end = ends.get((note.get("process"), note.get("txn"))) or {}
        told = end.get("outcome") == "ok" and int(end.get("seq", 0)) > int(note.get("seq", 0))
        sends = [ln for ln in lines[1:] if ln.get("type") == "send" and ln.get("txn") == note.get("txn") and ln.get("offset") is not None]
        committed = [s for s in sends if fates.get((str(s.get("topic")), int(s.get("partition", -1))), {}).get(int(s["offset"])) == "COMMIT"]
        if not told and not committed:
            continue
        values = {s.get("value") for s in sends}
        read = sorted({r[4] for ln in polls for r in ln.get("records") or [] if r[4] in values})
        first = committed[0] if committed else (sends[0] if sends else {})
        rows.append(
            {
                "topic": first.get("topic"),
                "partition": first.get("partition"),
                "offset": first.get("offset"),
                "txn_id": note.get("txid"),
                "detail": f"{note.get('process')} asked to commit {note.get('txn')} after {note.get('fenced_by')}'s InitProducerId and was told "
                f"{end.get('outcome') or 'nothing'}; {len(committed)} of its {len(sends)} acknowledged records are committed in the log, "
                f"{len(read)} read by read_committed consumers",
            }
        )
    if not rows:
        return []
    return [
        {
            "check": "probe",
            "kind": "ZOMBIE_COMMITTED",
            "anomaly": "zombie commit after fencing",
            "invariant": "ZombieFenced",
            "meaning": "an older instance of a transactional id committed after a newer instance's InitProducerId, which must fence it",
            "count": len(rows),
            "example": rows[0],
        }
    ]


def ctp_findings(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Exactly-once of the consume-transform-produce loop (the spec's ExactlyOnceCTP), judged on the
    logs of both topics as the broker served them: each committed output names its input record
    (its key is topic/partition/offset). Flags an input with two committed outputs
    (CTP_DUPLICATE), a committed output of an input that did not commit (CTP_ABORTED_INPUT), an
    input below the group's committed offset with no committed output (CTP_LOST), and committed
    transactions that sent offsets while the group ends with none (CTP_OFFSETS_NOT_COMMITTED)."""
    header = lines[0] if lines else {}
    plan = header.get("plan") or {}
    if not plan.get("ctp"):
        return []
    topic, output = plan.get("topic"), f"{plan.get('topic')}-out"
    logs = _logs(lines)
    fates = {tp: _fates(bs) for tp, bs in logs.items()}
    outputs: dict[str, list[tuple[int, int]]] = {}
    for (t, p), bs in logs.items():
        if t != output:
            continue
        for b in bs:
            if b.get("is_control"):
                continue
            for rec in b.get("records") or []:
                if fates[(t, p)].get(int(rec[0])) == "COMMIT" and rec[1]:
                    outputs.setdefault(str(rec[1]), []).append((p, int(rec[0])))
    notes = [ln for ln in lines[1:] if ln.get("type") == "note" and ln.get("process") == "ctp-0"]
    ends = {ln["txn"]: ln["outcome"] for ln in lines[1:] if ln.get("type") == "txn" and ln.get("process") == "ctp-0"}
    sent_offsets = [n for n in notes if n.get("what") == "ctp-offsets" and ends.get(n.get("txn")) == "ok"]
    group = next((n for n in notes if n.get("what") == "group-committed"), None)
    committed_at = {int(p): int(o) for t, p, o in (group or {}).get("offsets") or [] if t == topic and o is not None and o >= 0}

    found: list[dict[str, Any]] = []
    silent = next((n for n in notes if n.get("what") == "ctp-no-assignment"), None)
    if silent is not None:
        found.append(
            {
                "check": "probe",
                "kind": "CTP_NO_ASSIGNMENT",
                "anomaly": "consumer group never formed",
                "invariant": "(liveness of the group protocol; no safety invariant)",
                "meaning": "the consume-transform-produce member subscribed but was never assigned a partition (JoinGroup/SyncGroup did not complete)",
                "count": 1,
                "example": {
                    "topic": topic,
                    "partition": None,
                    "offset": None,
                    "detail": f"group {silent.get('group')}: no assignment after {silent.get('seconds')} s",
                },
            }
        )

    def add(kind: str, name: str, meaning: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            found.append(
                {"check": "probe", "kind": kind, "anomaly": name, "invariant": "ExactlyOnceCTP", "meaning": meaning, "count": len(rows), "example": rows[0]}
            )

    dup, aborted = [], []
    for src, outs in sorted(outputs.items()):
        in_topic, in_partition, in_offset = src.rsplit("/", 2)
        if len(outs) > 1:
            dup.append(
                {"topic": output, "partition": outs[1][0], "offset": outs[1][1], "detail": f"input {src} has {len(outs)} committed outputs, at {sorted(outs)}"}
            )
        fate = fates.get((in_topic, int(in_partition)), {}).get(int(in_offset))
        if fate != "COMMIT":
            aborted.append(
                {
                    "topic": output,
                    "partition": outs[0][0],
                    "offset": outs[0][1],
                    "detail": f"the output of input {src} committed, but that input is {(fate or 'not in the log').lower()}",
                }
            )
    add("CTP_DUPLICATE", "duplicate (exactly-once broken)", "an input record's output was committed more than once", dup)
    add(
        "CTP_ABORTED_INPUT", "aborted read through consume-transform-produce (G1a)", "an output was committed for an input record that never committed", aborted
    )
    lost = []
    for p, upto in sorted(committed_at.items()):
        for o, fate in sorted(fates.get((str(topic), p), {}).items()):
            if o < upto and fate == "COMMIT" and f"{topic}/{p}/{o}" not in outputs:
                lost.append(
                    {
                        "topic": topic,
                        "partition": p,
                        "offset": o,
                        "detail": f"the group committed offset {upto}, past input {topic}/{p}/{o}, which has no committed output",
                    }
                )
    add("CTP_LOST", "lost input (exactly-once broken)", "the group's committed offset passed an input record whose output never committed", lost)
    if sent_offsets and not committed_at:
        n = sent_offsets[-1]
        add(
            "CTP_OFFSETS_NOT_COMMITTED",
            "transactional offset commit lost",
            "transactions that sent the group's offsets (TxnOffsetCommit) committed, but the group has no committed offset",
            [
                {
                    "topic": topic,
                    "partition": None,
                    "offset": None,
                    "detail": f"{len(sent_offsets)} committed transaction(s) sent offsets, e.g. {n.get('txn')}: {n.get('offsets')}; "
                    f"the group then had {(group or {}).get('offsets')}",
                }
            ],
        )
    return found
