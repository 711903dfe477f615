"""The canonical tables every input is turned into, and every check reads (docs/replay.md).

Each adapter (``spark_replay.adapters``) writes some of these tables as Parquet, once; the checks
read them from there. A column an input cannot fill is null, and the checks that need it report
"not applicable" for that input instead of guessing.

Producer ids are int64 and epochs int32, as in Kafka's record batch v2 (a producer id is an int64,
an epoch an int16); offsets are int64. ``source`` names the input file a row came from and
``trace_id`` the run: one per txconform trace file, one per log directory or dump, one per Jepsen
history.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

# One row per record batch of a partition log, or per append of a txconform trace.
ENTRIES = pa.schema(
    [
        ("source", pa.string()),  # "trace", "segment", "dump-log"
        ("trace_id", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("replica", pa.string()),  # the broker whose copy this is (null: the only copy read)
        ("base_offset", pa.int64()),
        ("last_offset", pa.int64()),
        ("producer_id", pa.int64()),  # -1: no producer (not idempotent)
        ("producer_epoch", pa.int32()),
        ("base_seq", pa.int32()),
        ("last_seq", pa.int32()),
        ("is_txn", pa.bool_()),
        ("is_control", pa.bool_()),
        ("control", pa.string()),  # "COMMIT" / "ABORT" for a control batch, else null
        ("coord_epoch", pa.int32()),  # a marker's coordinator epoch, else null
        ("ts_ms", pa.int64()),
        ("crc", pa.int64()),
        ("leader_epoch", pa.int32()),  # logs: the batch's partitionLeaderEpoch (the leader that appended it), else null
        ("event", pa.int64()),  # trace inputs: the event that appended it
        ("txn_id", pa.string()),  # trace inputs: the transactional id (logs do not carry it)
        ("instance", pa.int32()),  # trace inputs: the producer instance (zombie detection)
        ("client_txn", pa.int32()),  # trace inputs: the instance's transaction number
        ("src", pa.int64()),  # trace inputs: the input record a data batch was made from (provenance)
        ("file", pa.string()),
        ("position", pa.int64()),  # byte position in a segment or line in a dump / trace
    ]
)

PARTITION = pa.struct([("topic", pa.string()), ("partition", pa.int32())])

# One row per record of __transaction_state (or per TcAppend of a trace).
TXN_LOG = pa.schema(
    [
        ("source", pa.string()),
        ("trace_id", pa.string()),
        ("log_partition", pa.int32()),  # the __transaction_state partition
        ("log_offset", pa.int64()),
        ("ts_ms", pa.int64()),
        ("txn_id", pa.string()),
        ("producer_id", pa.int64()),
        ("prev_producer_id", pa.int64()),
        ("next_producer_id", pa.int64()),
        ("epoch", pa.int32()),
        ("state", pa.string()),  # Empty, Ongoing, PrepareCommit, ..., Dead (null for a tombstone)
        ("partitions", pa.list_(PARTITION)),
        ("timeout_ms", pa.int64()),
        ("start_ms", pa.int64()),  # logs: TransactionStartTimestampMs (when the transaction began), null if unknown
        ("update_ms", pa.int64()),  # logs: TransactionLastUpdateTimestampMs, null if unknown
        ("tv", pa.int32()),  # ClientTransactionVersion: 1 (classic) or 2 (KIP-890), null if unknown
        ("event", pa.int64()),
        ("file", pa.string()),
        ("position", pa.int64()),
    ]
)

# One row per offset commit record of __consumer_offsets (or per GcTxnOffsetCommit / OffsetCommit of
# a trace). A transactional commit is visible only once its producer's marker on the offsets
# partition commits it (entries holds those batches and markers).
OFFSET_COMMITS = pa.schema(
    [
        ("source", pa.string()),
        ("trace_id", pa.string()),
        ("log_partition", pa.int32()),
        ("log_offset", pa.int64()),
        ("ts_ms", pa.int64()),
        ("group_id", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("committed_offset", pa.int64()),  # null: a tombstone (the group's offset was deleted)
        ("producer_id", pa.int64()),  # the transactional producer, -1 for a plain OffsetCommit
        ("producer_epoch", pa.int32()),
        ("event", pa.int64()),
        ("file", pa.string()),
        ("position", pa.int64()),
    ]
)

# One row per entry of a partition's .txnindex (AbortedTxn.java: producer id, first offset, last
# offset, last stable offset), or per aborted transaction a trace's Fetch reported.
ABORTED_INDEX = pa.schema(
    [
        ("source", pa.string()),
        ("trace_id", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("producer_id", pa.int64()),
        ("first_offset", pa.int64()),
        ("last_offset", pa.int64()),
        ("lso", pa.int64()),
        ("file", pa.string()),
        ("position", pa.int64()),
    ]
)

# Client histories: what each client was told. One row per record a send or a read concerns.
WRITES = pa.schema(
    [
        ("source", pa.string()),  # "trace", "jepsen"
        ("trace_id", pa.string()),
        ("process", pa.string()),
        ("op_index", pa.int64()),
        ("time", pa.int64()),
        ("txn", pa.string()),  # the client transaction the send belonged to, null outside one
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("key", pa.string()),
        ("value", pa.string()),
        ("offset", pa.int64()),  # as acknowledged, null if unknown
        ("outcome", pa.string()),  # "ok", "fail", "info" (indeterminate)
        ("event", pa.int64()),
        # whether the client was told its transaction committed (trace: the EndTxn answer; Jepsen: the op
        # is ok / fail), null if it never learned
        ("committed", pa.bool_()),
    ]
)

READS = pa.schema(
    [
        ("source", pa.string()),
        ("trace_id", pa.string()),
        ("process", pa.string()),
        ("op_index", pa.int64()),
        ("time", pa.int64()),
        ("isolation", pa.string()),  # "read_committed", "read_uncommitted"
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("from_offset", pa.int64()),  # where the fetch started, null if unknown
        # where its answer ended (the offset after its last batch): a broker may answer with part of
        # what it has (Kafka's fetch size limits); null: it returned everything below the LSO
        ("to_offset", pa.int64()),
        ("offset", pa.int64()),  # the record returned, null for an empty fetch
        ("key", pa.string()),
        ("value", pa.string()),
        ("lso", pa.int64()),  # the last stable offset the fetch reported, null if unknown
        ("event", pa.int64()),
        ("op_type", pa.string()),  # Jepsen: the op's :type ("ok", "info", "fail"); null for a trace's Fetch
        ("op_f", pa.string()),  # Jepsen: "poll", "txn", or "assign" / "subscribe" (a row per key named, offset null)
        ("read_index", pa.int64()),  # the record's position among what the op returned, in the order returned
        ("rebalanced", pa.bool_()),  # Jepsen: the op's :rebalance-log names this key
    ]
)

TABLES: dict[str, pa.Schema] = {
    "entries": ENTRIES,
    "txn_log": TXN_LOG,
    "offset_commits": OFFSET_COMMITS,
    "aborted_index": ABORTED_INDEX,
    "writes": WRITES,
    "reads": READS,
}


def empty(name: str) -> pa.Table:
    """An empty table of schema ``name``."""
    return TABLES[name].empty_table()


def rows_to_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """A table of schema ``name`` from dicts; missing keys are null. Extra keys are an error."""
    schema = TABLES[name]
    unknown = {k for row in rows for k in row} - set(schema.names)
    if unknown:
        raise ValueError(f"{name}: no such column(s): {', '.join(sorted(unknown))}")
    return pa.Table.from_pylist(rows, schema=schema)
