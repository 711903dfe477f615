"""What the two Kafka log adapters (``segments``, ``dumplog``) share: Kafka's names for transaction
states and control records, partition directory names, and a buffer that writes rows through the
stager in chunks, so that memory does not grow with the input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from spark_replay.staging import Stager
from spark_replay.tables import TABLES

TRANSACTION_STATE_TOPIC = "__transaction_state"
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"

# TransactionState ids as __transaction_state stores them (TransactionLogValue.TransactionStatus):
# apache/kafka core/src/main/scala/kafka/coordinator/transaction/TransactionMetadata.scala, the case
# objects Empty (0) ... PrepareEpochFence (7), each with its `id` and `name`.
TXN_STATES: tuple[str, ...] = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)
_STATE_BY_KEY = {name.lower(): name for name in TXN_STATES}

# ControlRecordType ids (apache/kafka clients/.../common/record/ControlRecordType.java): the key of a
# control record is (version int16, type int16). ABORT and COMMIT are transaction markers; the others
# live only in KRaft's __cluster_metadata log.
CONTROL_TYPES: dict[int, str] = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}

# A partition directory is TOPIC-PARTITION (UnifiedLog.parseTopicPartitionName); a replica being
# moved or deleted adds a suffix: TOPIC-PARTITION.UUID-future / -delete / -stray.
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<uuid>[0-9a-fA-F]{32})-(?P<kind>delete|future|stray))?$")
_TOPIC_PARTITION = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")

CHUNK_ROWS = 65536


def txn_state_name(text: str) -> str | None:
    """Kafka's name of a transaction state from any spelling a Kafka version prints (``CompleteCommit``,
    ``COMPLETE_COMMIT``, ``completecommit``); None if it names no state."""
    return _STATE_BY_KEY.get(text.replace("_", "").lower())


def txn_value_row(version: int, value: Mapping[str, Any]) -> dict[str, Any]:
    """The txn_log columns of a TransactionLogValue of ``version``, its fields named as kafka-python
    names those of TransactionLogValue.json (producer_id, transaction_status, transaction_partitions
    as [{topic, partition_ids}], ...), the tagged fields absent when they hold their defaults.

    Read as Kafka reads it (TransactionLog.readTxnRecordValue): the partitions of an Empty transaction
    are ignored; version 0 carries no previous / next producer id (null). ``tv`` is 2 when the client
    uses KIP-890's protocol (ClientTransactionVersion 2), else 1: version 0 predates transaction.version.
    Raises ValueError for a status that names no state."""
    status = value["transaction_status"]
    if not 0 <= status < len(TXN_STATES):
        raise ValueError(f"TransactionStatus {status} is no transaction state (0 to {len(TXN_STATES) - 1})")
    state = TXN_STATES[status]
    partitions: list[dict[str, Any]] = []
    if state != "Empty":
        for entry in value["transaction_partitions"] or []:
            partitions.extend({"topic": entry["topic"], "partition": p} for p in entry["partition_ids"])
    return {
        "producer_id": value["producer_id"],
        "prev_producer_id": value.get("previous_producer_id", -1) if version >= 1 else None,
        "next_producer_id": value.get("next_producer_id", -1) if version >= 1 else None,
        "epoch": value["producer_epoch"],
        "state": state,
        "partitions": partitions,
        "timeout_ms": value["transaction_timeout_ms"],
        "start_ms": value["transaction_start_timestamp_ms"],
        "update_ms": value["transaction_last_update_timestamp_ms"],
        "tv": 2 if version >= 1 and value.get("client_transaction_version", 0) >= 2 else 1,
    }


def partition_dir(name: str) -> tuple[str, int, str | None] | None:
    """(topic, partition, suffix kind) of a partition directory's name, kind being None for a live
    replica and ``future`` / ``delete`` / ``stray`` otherwise; None if the name is no partition's."""
    m = _PARTITION_DIR.match(name)
    if m is None:
        return None
    return m["topic"], int(m["partition"]), m["kind"]


def topic_partition(text: str) -> tuple[str, int] | None:
    """(topic, partition) of ``TOPIC-PARTITION`` as Kafka's TopicPartition.toString prints it."""
    m = _TOPIC_PARTITION.match(text.strip())
    if m is None:
        return None
    return m["topic"], int(m["partition"])


class TableBuffer:
    """Rows of one canonical table, handed to the stager every ``chunk_rows`` rows.

    ``columns`` are the columns each ``add`` gives, in order; the others take the values last set with
    ``constants`` (null when not set). Rows are kept as tuples and turned into Arrow columns once per
    chunk.
    """

    def __init__(self, stager: Stager, name: str, columns: Sequence[str], chunk_rows: int = CHUNK_ROWS) -> None:
        self.name = name
        self._stager = stager
        self._schema = TABLES[name]
        unknown = set(columns) - set(self._schema.names)
        if unknown:
            raise ValueError(f"{name}: no such column(s): {', '.join(sorted(unknown))}")
        self._names = tuple(columns)
        self._rows: list[tuple[Any, ...]] = []
        self._constants: dict[str, Any] = {}
        self._blocks: list[pa.Table] = []
        self._pending = 0  # rows in self._blocks
        self._chunk_rows = chunk_rows

    def constants(self, **values: Any) -> None:
        """Set the values of the columns ``add`` does not give, for the rows added from now on."""
        unknown = set(values) - (set(self._schema.names) - set(self._names))
        if unknown:
            raise ValueError(f"{self.name}: not a constant column: {', '.join(sorted(unknown))}")
        if values != self._constants:
            self._close_block()
            self._constants = values

    def add(self, *values: Any) -> None:
        if len(values) != len(self._names):
            raise ValueError(f"{self.name}: {len(values)} values for {len(self._names)} columns")
        self._rows.append(values)
        if len(self._rows) + self._pending >= self._chunk_rows:
            self.flush()

    def _close_block(self) -> None:
        rows = len(self._rows)
        if rows == 0:
            return
        arrays = []
        given = dict(zip(self._names, zip(*self._rows, strict=True), strict=True))
        for field in self._schema:
            if field.name in given:
                arrays.append(pa.array(given[field.name], type=field.type))
            else:
                value = self._constants.get(field.name)
                arrays.append(pa.nulls(rows, field.type) if value is None else pa.array([value] * rows, type=field.type))
        self._blocks.append(pa.Table.from_arrays(arrays, schema=self._schema))
        self._pending += rows
        self._rows = []

    def flush(self) -> None:
        self._close_block()
        if self._blocks:
            self._stager.write(self.name, pa.concat_tables(self._blocks))
        self._blocks = []
        self._pending = 0


# The columns each adapter gives per row, in the order of TableBuffer.add; the rest are per file.
ENTRY_COLUMNS = (
    "base_offset",
    "last_offset",
    "producer_id",
    "producer_epoch",
    "base_seq",
    "last_seq",
    "is_txn",
    "is_control",
    "control",
    "coord_epoch",
    "ts_ms",
    "crc",
    "leader_epoch",
    "position",
)
TXN_LOG_COLUMNS = (
    "log_offset",
    "ts_ms",
    "txn_id",
    "producer_id",
    "prev_producer_id",
    "next_producer_id",
    "epoch",
    "state",
    "partitions",
    "timeout_ms",
    "start_ms",
    "update_ms",
    "tv",
    "position",
)
OFFSET_COMMIT_COLUMNS = (
    "log_offset",
    "ts_ms",
    "group_id",
    "topic",
    "partition",
    "committed_offset",
    "producer_id",
    "producer_epoch",
    "position",
)
ABORTED_INDEX_COLUMNS = ("producer_id", "first_offset", "last_offset", "lso", "position")


class LogTables:
    """The four tables a Kafka log fills, each a TableBuffer."""

    def __init__(self, stager: Stager, chunk_rows: int = CHUNK_ROWS) -> None:
        self.entries = TableBuffer(stager, "entries", ENTRY_COLUMNS, chunk_rows)
        self.txn_log = TableBuffer(stager, "txn_log", TXN_LOG_COLUMNS, chunk_rows)
        self.offset_commits = TableBuffer(stager, "offset_commits", OFFSET_COMMIT_COLUMNS, chunk_rows)
        self.aborted_index = TableBuffer(stager, "aborted_index", ABORTED_INDEX_COLUMNS, chunk_rows)

    def partition(self, source: str, trace_id: str, topic: str, partition: int, file: str) -> None:
        """The per-file values of the rows that follow, read from ``file`` of ``topic``-``partition``."""
        self.entries.constants(source=source, trace_id=trace_id, topic=topic, partition=partition, file=file)
        self.aborted_index.constants(source=source, trace_id=trace_id, topic=topic, partition=partition, file=file)
        self.txn_log.constants(source=source, trace_id=trace_id, log_partition=partition, file=file)
        self.offset_commits.constants(source=source, trace_id=trace_id, log_partition=partition, file=file)

    def add_txn(self, log_offset: int, ts_ms: int | None, txn_id: str, row: Mapping[str, Any], position: int) -> None:
        """A txn_log row: ``row`` holds the columns of the value (txn_value_row), empty for a tombstone."""
        self.txn_log.add(log_offset, ts_ms, txn_id, *(row.get(c) for c in TXN_LOG_COLUMNS[3:-1]), position)

    def flush(self) -> None:
        for buffer in (self.entries, self.txn_log, self.offset_commits, self.aborted_index):
            buffer.flush()
