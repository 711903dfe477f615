"""Kafka partition logs read from disk: segments (``.log``) and transaction indexes (``.txnindex``).

An input is a broker's log directory, a partition directory (``TOPIC-PARTITION``) or single files
inside one; ``trace_id`` is the log directory, so that the partitions of one broker join. Replicas
being moved or deleted (``TOPIC-PARTITION.UUID-future`` / ``-delete`` / ``-stray``) are skipped when a
log directory is given.

**Segments** are sequences of record batches (magic 2, apache/kafka clients/.../common/record/
DefaultRecordBatch.java). kafka-python parses them: ``kafka.record.default_records.DefaultRecordBatch``
(header fields, records, CRC) and its ``ControlRecord`` (the control key: version, type). Two scans:

- the header scan (data topics): each batch's 61-byte header is unpacked with ``struct`` (the layout
  of kafka-python's ``DefaultRecordBatch.HEADER_STRUCT``) and its records are skipped, except in
  control batches, which kafka-python decodes for their marker. No CRC check, no decompression;
- the deep scan (``__transaction_state``, ``__consumer_offsets``, and the oracle the tests hold the
  header scan to): kafka-python reads every batch whole, checks its CRC and decodes its records.

A marker's coordinator epoch is in its control record's value, ``>hi`` (version, coordinatorEpoch;
``EndTransactionMarker.deserialize``). Message sets of magic 0 and 1 (before Kafka 0.11) give rows
without a producer (``kafka.record.legacy_records.LegacyRecordBatch``).

**__transaction_state** records are TransactionLogKey / TransactionLogValue (apache/kafka
transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json): key version 0
is the transactional id; value versions 0 and 1 (1 is flexible: compact strings and arrays, and the
tagged fields PreviousProducerId, NextProducerId, ClientTransactionVersion). A null value is a
tombstone (state null). **__consumer_offsets** records are OffsetCommitKey (key versions 0 and 1) /
OffsetCommitValue (versions 0 to 4, 4 flexible; group-coordinator/.../OffsetCommit{Key,Value}.json);
group metadata (key version 2) and the new consumer groups' records (3 and up) are skipped. A value
version above the highest known is read as the highest (KIP-915: later versions add only tagged
fields). The schemas are given to kafka-python's message decoder (``kafka.protocol.schemas.fields.
StructField``), which reads the Kafka JSON schema format.

**.txnindex** files are AbortedTxn entries of 34 bytes (storage/.../log/AbortedTxn.java: version int16,
producerId int64, firstOffset int64, lastOffset int64, lastStableOffset int64).

Columns a segment cannot fill: ``replica`` (one copy is read); ``base_seq`` and ``last_seq`` of
``__transaction_state`` and ``__consumer_offsets``: the coordinators write those batches themselves
(AppendOrigin.COORDINATOR), each from sequence 0 (a transactional offset commit carries the
producer's id and epoch but not its sequences), and the broker checks no sequence of theirs; ``event``, ``txn_id``, ``instance``,
``client_txn``, ``src`` (trace inputs only); a control batch with no record left (``control`` null).
``file`` is the segment or index, ``position`` the byte where the batch or entry starts. Corrupt or
truncated files raise ReplayInputError naming the file and the byte position.
"""

from __future__ import annotations

import io
import mmap
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from kafka.errors import CorruptRecordError, UnsupportedCodecError
from kafka.protocol.schemas.fields import StructField
from kafka.record.default_records import ControlRecord, DefaultRecordBatch
from kafka.record.legacy_records import LegacyRecordBatch
from kafka.record.memory_records import MemoryRecords

from spark_replay.adapters.kafka_common import (
    CONSUMER_OFFSETS_TOPIC,
    CONTROL_TYPES,
    ENTRY_COLUMNS,
    TRANSACTION_STATE_TOPIC,
    LogTables,
    partition_dir,
    txn_value_row,
)
from spark_replay.staging import InputFormat, ReplayInputError, Stager

SOURCE = "segment"

_HEADER = DefaultRecordBatch.HEADER_STRUCT  # the record batch v2 header, 61 bytes
_LOG_OVERHEAD = MemoryRecords.LOG_OVERHEAD  # base offset int64 + length int32: what every batch starts with
_MAGIC_OFFSET = MemoryRecords.MAGIC_OFFSET  # the magic byte, at the same place in every format
_LENGTH = struct.Struct(">i")  # the batch length after the base offset (MemoryRecords.LENGTH_OFFSET)
_MIN_LEGACY = LegacyRecordBatch.RECORD_OVERHEAD_V0  # the smallest magic 0 message after the log overhead
_VERSION = struct.Struct(">h")  # the version prefix of a coordinator record's key and value
_MARKER_VALUE = struct.Struct(">hi")  # EndTransactionMarker: version int16, coordinatorEpoch int32
# AbortedTxn.java: VERSION (int16), PRODUCER_ID, FIRST_OFFSET, LAST_OFFSET, LAST_STABLE_OFFSET (int64)
ABORTED_TXN = struct.Struct(">hqqqq")
assert ABORTED_TXN.size == 34  # AbortedTxn.TOTAL_SIZE
_ABORTED_TXN_VERSION = 0  # AbortedTxn.CURRENT_VERSION

_CODECS_FIX = "install kafka-python's codecs (pip install 'kafka-python[lz4,snappy,zstd]')"


class Batch(NamedTuple):
    """One record batch of a segment: the entries row, in the order of kafka_common.ENTRY_COLUMNS."""

    base_offset: int | None
    last_offset: int
    producer_id: int
    producer_epoch: int | None
    base_seq: int | None
    last_seq: int | None
    is_txn: bool
    is_control: bool
    control: str | None
    coord_epoch: int | None
    ts_ms: int | None
    crc: int
    leader_epoch: int | None
    position: int


assert Batch._fields == ENTRY_COLUMNS


# --- the coordinators' record schemas, in Kafka's JSON schema format -----------------------------


def _field(name: str, kind: str, versions: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, "versions": versions, **more}


def _schema(name: str, versions: str, fields: list[dict[str, Any]]) -> StructField:
    return StructField({"name": name, "type": name, "versions": versions, "fields": fields})


# TransactionLogKey.json: version 0, not flexible
TRANSACTION_LOG_KEY = _schema("TransactionLogKey", "0", [_field("TransactionalId", "string", "0")])
# TransactionLogValue.json: versions 0-1, flexible from 1
TRANSACTION_LOG_VALUE = _schema(
    "TransactionLogValue",
    "0-1",
    [
        _field("ProducerId", "int64", "0+"),
        _field("PreviousProducerId", "int64", "1+", taggedVersions="1+", tag=0, default=-1),
        _field("NextProducerId", "int64", "1+", taggedVersions="1+", tag=1, default=-1),
        _field("ProducerEpoch", "int16", "0+"),
        _field("TransactionTimeoutMs", "int32", "0+"),
        _field("TransactionStatus", "int8", "0+"),
        _field(
            "TransactionPartitions",
            "[]PartitionsSchema",
            "0+",
            nullableVersions="0+",
            fields=[_field("Topic", "string", "0+"), _field("PartitionIds", "[]int32", "0+")],
        ),
        _field("TransactionLastUpdateTimestampMs", "int64", "0+"),
        _field("TransactionStartTimestampMs", "int64", "0+"),
        _field("ClientTransactionVersion", "int16", "1+", taggedVersions="1+", tag=2, default=0),
    ],
)
# OffsetCommitKey.json: versions 0-1 (the same fields; the version tells the record type)
OFFSET_COMMIT_KEY = _schema("OffsetCommitKey", "0-1", [_field("group", "string", "0-1"), _field("topic", "string", "0-1"), _field("partition", "int32", "0-1")])
# OffsetCommitValue.json: versions 0-4, flexible from 4
OFFSET_COMMIT_VALUE = _schema(
    "OffsetCommitValue",
    "0-4",
    [
        _field("offset", "int64", "0+"),
        _field("leaderEpoch", "int32", "3+", default=-1),
        _field("metadata", "string", "0+"),
        _field("commitTimestamp", "int64", "0+"),
        _field("expireTimestamp", "int64", "1", default=-1),
    ],
)


# what kafka-python's decoder raises on bytes that do not fit the schema
_DECODE_ERRORS = (struct.error, ValueError, IndexError, TypeError, KeyError, AssertionError, EOFError)


class _Corrupt(Exception):
    """What is wrong at a byte of the current file, and the fix."""

    def __init__(self, position: int, what: str, fix: str) -> None:
        super().__init__(what)
        self.position = position
        self.what = what
        self.fix = fix


def _version(data: bytes) -> int:
    """The version a record key or value starts with (MessageUtil.toVersionPrefixedBytes)."""
    if len(data) < 2:
        raise ValueError(f"{len(data)} bytes, too short for a version")
    (version,) = _VERSION.unpack_from(data)
    return int(version)


def _decode(schema: StructField, data: bytes, highest: int, flexible_from: int | None) -> tuple[int, dict[str, Any]]:
    """(version, fields) of a version-prefixed record key or value, read by kafka-python's decoder."""
    version = _version(data)
    if version < 0:
        raise ValueError(f"negative version {version}")
    read_as = min(version, highest)
    flexible = flexible_from is not None and read_as >= flexible_from
    buf = io.BytesIO(data)
    buf.seek(_VERSION.size)
    return version, schema.decode(buf, version=read_as, compact=flexible, tagged=flexible)


# --- batches --------------------------------------------------------------------------------------


def read_batches(path: Path, deep: bool = False) -> Iterator[tuple[Batch, list[Any]]]:
    """The batches of segment ``path`` with, when ``deep``, their records (kafka-python's records).

    The header scan (``deep`` false) unpacks each batch's header with ``struct`` and seeks past its
    records, except in control batches, which kafka-python decodes for their marker. The deep scan
    has kafka-python read every batch whole: header fields, CRC and records. Raises _Corrupt."""
    size = path.stat().st_size
    if size == 0:
        return
    unpack_header = _HEADER.unpack_from
    header_size = _HEADER.size
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos = 0
        while pos < size:
            if size - pos >= header_size:
                header = unpack_header(mm, pos)
                length = header[1]
                end = pos + _LOG_OVERHEAD + length
                # the common case, inline: a whole v2 data batch, read from its header alone
                if header[3] == 2 and not deep and not header[5] & _CONTROL_MASK and length >= header_size - _LOG_OVERHEAD and end <= size:
                    yield _header_batch(header, pos), []
                    pos = end
                    continue
            yield _checked_batch(mm, pos, size, deep)
            pos = _next_position(mm, pos)


def _next_position(mm: mmap.mmap, pos: int) -> int:
    (length,) = _LENGTH.unpack_from(mm, pos + 8)
    return int(pos + _LOG_OVERHEAD + length)


def _checked_batch(mm: mmap.mmap, pos: int, size: int, deep: bool) -> tuple[Batch, list[Any]]:
    """The batch at ``pos`` with every framing check, read by kafka-python (v2 control batches, the
    deep scan, message sets of magic 0 and 1), or _Corrupt."""
    left = size - pos
    if left < _MAGIC_OFFSET + 1:
        raise _Corrupt(pos, f"the file ends {left} bytes into a batch header", _TRUNCATED_FIX)
    (length,) = _LENGTH.unpack_from(mm, pos + 8)
    magic = mm[pos + _MAGIC_OFFSET]
    end = pos + _LOG_OVERHEAD + length
    if magic == 2:
        if length < _HEADER.size - _LOG_OVERHEAD:
            raise _Corrupt(pos, f"batch length {length} is shorter than a batch header", _CORRUPT_FIX)
        if end > size:
            raise _Corrupt(pos, f"the batch needs {_LOG_OVERHEAD + length} bytes but the file ends after {left}", _TRUNCATED_FIX)
        return _read_batch(mm[pos:end], pos, deep)
    if magic in (0, 1):
        if length < _MIN_LEGACY:
            raise _Corrupt(pos, f"message length {length} is shorter than a message header", _CORRUPT_FIX)
        if end > size:
            raise _Corrupt(pos, f"the message needs {_LOG_OVERHEAD + length} bytes but the file ends after {left}", _TRUNCATED_FIX)
        return _legacy_batch(mm[pos:end], magic, pos), []
    raise _Corrupt(pos, f"magic {magic if magic < 128 else magic - 256} is no record format (0, 1 or 2)", _CORRUPT_FIX)


_TRUNCATED_FIX = "the segment was cut short (a crash mid-write or a partial copy): copy it again from the broker"
_CORRUPT_FIX = "the segment is corrupt here: copy it again from the broker, or leave it out"
_CONTROL_MASK = DefaultRecordBatch.CONTROL_MASK
_TRANSACTIONAL_MASK = DefaultRecordBatch.TRANSACTIONAL_MASK
_NO_SEQUENCE = DefaultRecordBatch.NO_SEQUENCE
_MAX_INT = DefaultRecordBatch.MAX_INT


def _header_batch(header: tuple[Any, ...], pos: int) -> Batch:
    """A data batch from its header alone (the fields of kafka-python's HEADER_STRUCT, in order)."""
    base_offset, _, leader_epoch, _, crc, attributes, delta, _, max_ts, producer_id, epoch, base_seq, count = header
    if delta < 0 or count < 0:
        raise _Corrupt(pos, f"negative lastOffsetDelta ({delta}) or record count ({count})", _CORRUPT_FIX)
    # DefaultRecordBatch.lastSequence: the base sequence plus the offset delta, wrapping past 2^31-1
    # to 0 (DefaultRecordBatch.incrementSequence); kafka-python's last_sequence is the test oracle
    if base_seq == _NO_SEQUENCE:
        last_seq = _NO_SEQUENCE
    elif base_seq > _MAX_INT - delta:
        last_seq = delta - (_MAX_INT - base_seq) - 1
    else:
        last_seq = base_seq + delta
    return Batch(
        base_offset,
        base_offset + delta,
        producer_id,
        epoch,
        base_seq,
        last_seq,
        bool(attributes & _TRANSACTIONAL_MASK),
        bool(attributes & _CONTROL_MASK),
        None,
        None,
        max_ts if max_ts >= 0 else None,
        crc,
        leader_epoch,
        pos,
    )


def _read_batch(data: bytes, pos: int, deep: bool) -> tuple[Batch, list[Any]]:
    """A batch read whole by kafka-python: header fields, CRC, records; a control batch's marker."""
    batch, records = _batch(DefaultRecordBatch(data), pos)
    return batch, records if deep else []


def batch_row(batch: DefaultRecordBatch, pos: int, check_crc: bool = True) -> tuple[dict[str, Any], list[Any]]:
    """An entries row (Batch's fields) and the records of a v2 batch kafka-python parsed, from any
    source (the probe's Fetch responses too); a corrupt batch raises an error saying what is wrong.
    ``check_crc=False`` reads a batch whose CRC fails (the caller reports that itself)."""
    b, records = _batch(batch, pos, check_crc)
    return b._asdict(), records


def _batch(batch: DefaultRecordBatch, pos: int, check_crc: bool = True) -> tuple[Batch, list[Any]]:
    if batch.last_offset_delta < 0 or batch.records_count < 0:
        raise _Corrupt(pos, f"negative lastOffsetDelta ({batch.last_offset_delta}) or record count ({batch.records_count})", _CORRUPT_FIX)
    if check_crc and not batch.validate_crc():
        raise _Corrupt(pos, f"the batch fails its CRC ({batch.crc})", _CORRUPT_FIX)
    try:
        records = list(batch)
    except UnsupportedCodecError as e:
        raise _Corrupt(pos, f"cannot decompress the batch ({e})", _CODECS_FIX) from None
    except (CorruptRecordError, struct.error, ValueError, IndexError, TypeError) as e:
        raise _Corrupt(pos, f"the records are malformed ({e})", _CORRUPT_FIX) from None
    control = coord_epoch = None
    if batch.is_control_batch and records:
        control, coord_epoch = _control(records[0], pos)
    ts = batch.max_timestamp
    return (
        Batch(
            batch.base_offset,
            batch.last_offset,
            batch.producer_id,
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            batch.is_transactional,
            batch.is_control_batch,
            control,
            coord_epoch,
            ts if ts >= 0 else None,
            batch.crc,
            batch.leader_epoch,
            pos,
        ),
        records,
    )


def _control(record: Any, pos: int) -> tuple[str, int | None]:
    """(type, coordinator epoch) of a control record (ControlRecordType, EndTransactionMarker)."""
    if not isinstance(record, ControlRecord):
        raise _Corrupt(pos, "a control batch holds a record that is not a control record", _CORRUPT_FIX)
    kind = CONTROL_TYPES.get(record.type, f"UNKNOWN({record.type})")
    if kind not in ("ABORT", "COMMIT"):
        return kind, None
    value = record.value
    if value is None or len(value) < _MARKER_VALUE.size:
        raise _Corrupt(pos, f"the {kind} marker's value has {0 if value is None else len(value)} bytes, not 6 (version, coordinatorEpoch)", _CORRUPT_FIX)
    _, coord_epoch = _MARKER_VALUE.unpack_from(value)
    return kind, coord_epoch


def _legacy_batch(data: bytes, magic: int, pos: int) -> Batch:
    """A message (set) of magic 0 or 1: no producer, no transactions; its offsets from its messages."""
    try:
        batch = LegacyRecordBatch(data, magic)
        if not batch.validate_crc():
            raise _Corrupt(pos, "the message fails its CRC", _CORRUPT_FIX)
        messages = list(batch)
    except UnsupportedCodecError as e:
        raise _Corrupt(pos, f"cannot decompress the message set ({e})", _CODECS_FIX) from None
    except (CorruptRecordError, struct.error, ValueError, IndexError, TypeError, AssertionError) as e:
        raise _Corrupt(pos, f"the message is malformed ({e})", _CORRUPT_FIX) from None
    if not messages:
        raise _Corrupt(pos, "a message set with no message", _CORRUPT_FIX)
    stamps = [m.timestamp for m in messages if m.timestamp is not None and m.timestamp >= 0]
    crc = LegacyRecordBatch.HEADER_STRUCT_V0.unpack_from(data)[2]
    return Batch(messages[0].offset, messages[-1].offset, -1, None, None, None, False, False, None, None, max(stamps) if stamps else None, crc, None, pos)


# --- the coordinators' logs -----------------------------------------------------------------------


def _txn_rows(batch: Batch, records: list[Any], tables: LogTables) -> None:
    for record in records:
        if record.key is None:
            raise _Corrupt(batch.position, f"the record at offset {record.offset} has no key (a transactional id)", _CORRUPT_FIX)
        try:
            if _version(record.key) != 0:
                continue  # not a TransactionLogKey (TransactionLog.readTxnRecordKey: UnknownKey)
            _, key = _decode(TRANSACTION_LOG_KEY, record.key, highest=0, flexible_from=None)
            value: dict[str, Any] | None = None
            version = 0
            if record.value is not None:
                version, value = _decode(TRANSACTION_LOG_VALUE, record.value, highest=1, flexible_from=1)
        except _DECODE_ERRORS as e:
            raise _Corrupt(batch.position, f"the record at offset {record.offset} is no TransactionLogKey/Value ({e})", _CORRUPT_FIX) from None
        try:
            row = {} if value is None else txn_value_row(version, value)  # None: a tombstone
        except ValueError:
            assert value is not None
            status = value["transaction_status"]
            raise _Corrupt(batch.position, f"the record at offset {record.offset} has TransactionStatus {status}, no state", _CORRUPT_FIX) from None
        tables.add_txn(record.offset, record.timestamp, key["transactional_id"], row, batch.position)


def _offset_rows(batch: Batch, records: list[Any], tables: LogTables) -> None:
    for record in records:
        if record.key is None:
            raise _Corrupt(batch.position, f"the record at offset {record.offset} has no key", _CORRUPT_FIX)
        try:
            if _version(record.key) not in (0, 1):
                continue  # 2: GroupMetadataKey; 3 and up: the new consumer groups' records
            _, key = _decode(OFFSET_COMMIT_KEY, record.key, highest=1, flexible_from=None)
            committed = None  # a tombstone: the group's offset was deleted
            if record.value is not None:
                _, value = _decode(OFFSET_COMMIT_VALUE, record.value, highest=4, flexible_from=4)
                committed = value["offset"]
        except _DECODE_ERRORS as e:
            raise _Corrupt(batch.position, f"the record at offset {record.offset} is no OffsetCommitKey/Value ({e})", _CORRUPT_FIX) from None
        tables.offset_commits.add(
            record.offset,
            record.timestamp,
            key["group"],
            key["topic"],
            key["partition"],
            committed,
            batch.producer_id if batch.is_txn else -1,
            batch.producer_epoch if batch.is_txn else -1,
            batch.position,
        )


# --- transaction indexes --------------------------------------------------------------------------


def read_txnindex(path: Path) -> Iterator[tuple[int, int, int, int, int]]:
    """(position, producer id, first offset, last offset, last stable offset) per AbortedTxn."""
    with path.open("rb") as f:
        data = f.read()
    whole = len(data) - len(data) % ABORTED_TXN.size
    if whole != len(data):
        raise _Corrupt(whole, f"the file ends {len(data) - whole} bytes into an entry of {ABORTED_TXN.size}", _TRUNCATED_FIX)
    for pos in range(0, whole, ABORTED_TXN.size):
        version, producer_id, first, last, lso = ABORTED_TXN.unpack_from(data, pos)
        if version != _ABORTED_TXN_VERSION:
            raise _Corrupt(pos, f"AbortedTxn version {version} (this reader knows version {_ABORTED_TXN_VERSION})", _CORRUPT_FIX)
        if last < first:
            raise _Corrupt(pos, f"lastOffset {last} is below firstOffset {first}", _CORRUPT_FIX)
        yield pos, producer_id, first, last, lso


# --- inputs ---------------------------------------------------------------------------------------


def _is_segment_name(path: Path) -> bool:
    return path.suffix in (".log", ".txnindex") and path.stem.isdigit()


def sniff(path: Path) -> bool:
    if path.is_dir():
        return any(_is_segment_name(p) for pattern in ("*.log", "*.txnindex", "*/*.log", "*/*.txnindex") for p in path.glob(pattern))
    if not (path.is_file() and _is_segment_name(path)):
        return False
    if path.suffix == ".txnindex":
        return True
    try:
        with path.open("rb") as f:
            head = f.read(_MAGIC_OFFSET + 1)
    except OSError:
        return False
    return len(head) == 0 or (len(head) > _MAGIC_OFFSET and head[_MAGIC_OFFSET] in (0, 1, 2))


def _partition_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and _is_segment_name(p) and p.suffix == ".log") + sorted(
        p for p in directory.iterdir() if p.is_file() and _is_segment_name(p) and p.suffix == ".txnindex"
    )


def _inputs(path: Path) -> Iterator[tuple[Path, str, int]]:
    """(file, topic, partition) of each segment and transaction index ``path`` names."""
    if not path.exists():
        raise ReplayInputError(f"{path}: no such file or directory; give a Kafka log directory, a partition directory or .log / .txnindex files")
    if path.is_file():
        if not _is_segment_name(path):
            raise ReplayInputError(f"{path}: not a segment (NNN.log) or transaction index (NNN.txnindex); give Kafka's files under their own names")
        where = partition_dir(path.resolve().parent.name)
        if where is None:
            raise ReplayInputError(
                f"{path}: cannot tell the topic and partition of this file; give it inside its partition directory (LOGDIR/TOPIC-PARTITION/{path.name})"
            )
        yield path, where[0], where[1]
        return
    where = partition_dir(path.resolve().name)
    # A log directory may itself be named like a partition (``node-1``): it is one only if it holds segments.
    if where is not None and _partition_files(path):
        for file in _partition_files(path):
            yield file, where[0], where[1]
        return
    found = False
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        child_where = partition_dir(child.name)
        if child_where is None or child_where[2] is not None:
            continue  # not a partition, or a replica being moved or deleted
        for file in _partition_files(child):
            found = True
            yield file, child_where[0], child_where[1]
    if not found:
        raise ReplayInputError(
            f"{path}: no segments here or in partition directories (TOPIC-PARTITION/) under it; give a Kafka log directory, a partition directory or .log files"
        )


def stage(paths: list[Path], stager: Stager) -> None:
    tables = LogTables(stager)
    for path in paths:
        file = path
        try:
            for file, topic, partition in _inputs(path):
                tables.partition(SOURCE, str(file.resolve().parent.parent), topic, partition, str(file))
                if file.suffix == ".txnindex":
                    for row in read_txnindex(file):
                        tables.aborted_index.add(*row[1:], row[0])
                    continue
                deep = topic in (TRANSACTION_STATE_TOPIC, CONSUMER_OFFSETS_TOPIC)
                for batch, records in read_batches(file, deep=deep):
                    if deep:  # the coordinators' batches: sequences they number themselves, not a client's
                        batch = batch._replace(base_seq=None, last_seq=None)
                    tables.entries.add(*batch)
                    if batch.is_control or not records:
                        continue
                    if topic == TRANSACTION_STATE_TOPIC:
                        _txn_rows(batch, records, tables)
                    else:
                        _offset_rows(batch, records, tables)
        except _Corrupt as e:
            raise ReplayInputError(f"{file}: byte {e.position}: {e.what}; {e.fix}") from None
        except ReplayInputError:
            raise
        except (OSError, ValueError) as e:  # unreadable, or mmap of a file that changed size
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            where = e.filename if isinstance(e, OSError) and e.filename else file
            raise ReplayInputError(f"{where}: cannot read it ({reason}); check that it is a readable file or directory") from None
    tables.flush()


SEGMENTS = InputFormat(
    "segment",
    "Kafka log directories, partition directories, .log segments (record batch v2) and .txnindex files",
    sniff,
    stage,
)
