"""The Kafka log adapters of the Spark replay (spark_replay/adapters): ``dump-log`` on the real
kafka-dump-log.sh samples (tests/fixtures/kafka-dump-log/) and on the other formats Kafka versions
print, ``segment`` on segments built here with kafka-python's record builders. Pure Python and
pyarrow: no Spark."""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("kafka")  # kafka-python: the spark extra

import pyarrow.parquet as pq
from kafka.record.default_records import DefaultRecordBase, DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords
from kafka.record.util import calc_crc32c

from spark_replay.adapters import FORMATS
from spark_replay.adapters.dumplog import DUMP_LOG, _read_dump
from spark_replay.adapters.kafka_common import LogTables
from spark_replay.adapters.segments import SEGMENTS, Batch, read_batches
from spark_replay.staging import ReplayInputError, Stager

SAMPLES = Path(__file__).parent / "fixtures" / "kafka-dump-log"


def stage(fmt: Any, paths: list[Path], root: Path) -> dict[str, list[dict[str, Any]]]:
    stager = Stager(root)
    fmt.stage(paths, stager)
    return {name: read_table(root, name) for name in ("entries", "txn_log", "offset_commits", "aborted_index")}


def read_table(root: Path, name: str) -> list[dict[str, Any]]:
    parts = sorted((root / name).glob("*.parquet"))
    return [row for part in parts for row in pq.read_table(part).to_pylist()]


def pick(rows: list[dict[str, Any]], *columns: str) -> list[tuple[Any, ...]]:
    return [tuple(row[c] for c in columns) for row in rows]


TXN = ("log_offset", "txn_id", "producer_id", "prev_producer_id", "next_producer_id", "epoch", "state", "timeout_ms", "start_ms", "update_ms", "tv")
BATCH = ("base_offset", "last_offset", "producer_id", "producer_epoch", "base_seq", "last_seq", "is_txn", "is_control", "control", "coord_epoch")


def test_the_formats_are_listed_by_name() -> None:
    assert FORMATS["dump-log"] is DUMP_LOG and FORMATS["segment"] is SEGMENTS
    assert all(name == fmt.name for name, fmt in FORMATS.items())
    assert not DUMP_LOG.needs_spark and not SEGMENTS.needs_spark


# --- dump-log: the real samples ------------------------------------------------------------------


def test_every_sample_is_recognised_as_a_dump() -> None:
    samples = sorted(SAMPLES.glob("*.txt"))
    assert len(samples) == 6
    assert all(DUMP_LOG.sniff(p) for p in samples)
    assert not any(SEGMENTS.sniff(p) for p in samples)
    assert not DUMP_LOG.sniff(SAMPLES / "README.md")


def test_a_committed_transaction(tmp_path: Path) -> None:
    sample = SAMPLES / "ableasdale-committed-transaction-topic-0.txt"
    t = stage(DUMP_LOG, [sample], tmp_path)
    assert pick(t["entries"], *BATCH) == [
        (0, 4, 0, 0, 0, 4, True, False, None, None),
        (5, 5, 0, 0, -1, -1, True, True, "COMMIT", 0),
    ]
    first, marker = t["entries"]
    assert (first["source"], first["trace_id"], first["topic"], first["partition"]) == ("dump-log", "/var/lib/kafka/data", "transaction-topic", 0)
    assert (first["ts_ms"], first["crc"], first["leader_epoch"], first["replica"]) == (1681906496697, 2067214322, 0, None)
    assert (marker["ts_ms"], marker["crc"]) == (1681906504073, 3680477367)
    assert (first["file"], first["position"], marker["position"]) == (str(sample), 3, 9)  # the batch lines
    assert t["txn_log"] == t["offset_commits"] == t["aborted_index"] == []


def test_an_aborted_transaction_and_an_open_one(tmp_path: Path) -> None:
    aborted = stage(DUMP_LOG, [SAMPLES / "ableasdale-aborted-transaction2-topic-0.txt"], tmp_path / "a")
    assert pick(aborted["entries"], "topic", *BATCH) == [
        ("transaction2-topic", 0, 4, 1, 1, 0, 4, True, False, None, None),
        ("transaction2-topic", 5, 5, 1, 1, -1, -1, True, True, "ABORT", 0),
    ]
    open_ = stage(DUMP_LOG, [SAMPLES / "ableasdale-open-transaction4-topic-0.txt"], tmp_path / "o")
    assert pick(open_["entries"], "topic", *BATCH) == [("transaction4-topic", 0, 4, 2, 0, 0, 4, True, False, None, None)]


def test_a_read_process_write_transaction_in_its_three_logs(tmp_path: Path) -> None:
    samples = [SAMPLES / f"strimzi-{name}.txt" for name in ("output-topic-0", "__consumer_offsets-12", "__transaction_state-30")]
    t = stage(DUMP_LOG, samples, tmp_path)
    # one broker's log directory: the three dumps join
    assert {row["trace_id"] for table in t.values() for row in table} == {"/var/lib/kafka/data/kafka-log10"}

    output = [r for r in t["entries"] if r["topic"] == "output-topic"]
    assert pick(output, *BATCH) == [(0, 0, 1, 0, 0, 0, True, False, None, None), (1, 1, 1, 0, -1, -1, True, True, "COMMIT", 0)]
    offsets = [r for r in t["entries"] if r["topic"] == "__consumer_offsets"]
    # the coordinator numbers its own batches (a transactional offset commit's is always 0; a marker's
    # is -1): not a client's sequences, so none is read (P1 flagged "sequence 0 follows 1" on Kafka 4.4)
    expected = [(12, 7, 7, 1, 0, None, None, True, False, None, None), (12, 8, 8, 1, 0, None, None, True, True, "COMMIT", 0)]
    assert pick(offsets, "partition", *BATCH) == expected

    # the transactional offset commit (Kafka 3.8+ JSON decoder), its producer from the batch
    assert t["offset_commits"] == [
        {
            "source": "dump-log",
            "trace_id": "/var/lib/kafka/data/kafka-log10",
            "log_partition": 12,
            "log_offset": 7,
            "ts_ms": 1742739703027,
            "group_id": "my-group",
            "topic": "input-topic",
            "partition": 0,
            "committed_offset": 1,
            "producer_id": 1,
            "producer_epoch": 0,
            "event": None,
            "file": str(samples[1]),
            "position": 5,
        }
    ]

    # the coordinator's records (text decoder): Empty -> Ongoing -> PrepareCommit -> CompleteCommit
    out, off = {"topic": "output-topic", "partition": 0}, {"topic": "__consumer_offsets", "partition": 12}
    assert pick(t["txn_log"], "log_partition", "log_offset", "txn_id", "producer_id", "epoch", "state", "partitions", "timeout_ms") == [
        (30, 0, "kafka-txn-0", 1, 0, "Empty", [], 60000),
        (30, 1, "kafka-txn-0", 1, 0, "Ongoing", [out], 60000),
        (30, 2, "kafka-txn-0", 1, 0, "Ongoing", [out, off], 60000),
        (30, 3, "kafka-txn-0", 1, 0, "PrepareCommit", [out, off], 60000),
        (30, 4, "kafka-txn-0", 1, 0, "CompleteCommit", [], 60000),
    ]
    assert pick(t["txn_log"], "ts_ms", "update_ms") == [
        (1742739549438, 1742739549435),
        (1742739702876, 1742739702876),
        (1742739702882, 1742739702882),
        (1742739703134, 1742739703132),
        (1742739703240, 1742739703142),
    ]
    # the text format does not print these
    assert {(r["prev_producer_id"], r["next_producer_id"], r["start_ms"], r["tv"]) for r in t["txn_log"]} == {(None, None, None, None)}
    # every partition the PrepareCommit names got a COMMIT of the transaction's producer and epoch
    prepare = next(r for r in t["txn_log"] if r["state"] == "PrepareCommit")
    markers = {(r["topic"], r["partition"]) for r in t["entries"] if r["control"] == "COMMIT" and (r["producer_id"], r["producer_epoch"]) == (1, 0)}
    assert {(p["topic"], p["partition"]) for p in prepare["partitions"]} == markers


def test_rows_go_to_the_stager_in_chunks(tmp_path: Path) -> None:
    stager = Stager(tmp_path)
    tables = LogTables(stager, chunk_rows=2)
    _read_dump(SAMPLES / "strimzi-__transaction_state-30.txt", tables)
    tables.flush()
    assert len(list((tmp_path / "txn_log").glob("*.parquet"))) == 3  # 2 + 2 + 1 rows
    assert stager.rows["txn_log"] == 5 and stager.rows["entries"] == 5
    assert [r["log_offset"] for r in read_table(tmp_path, "txn_log")] == [0, 1, 2, 3, 4]


# --- dump-log: the formats of other Kafka versions ------------------------------------------------


def batch_line(base: int, last: int, pid: int, epoch: int, seq: int, txn: bool, control: bool, position: int = 0) -> str:
    last_seq = -1 if seq < 0 else seq + last - base
    return (
        f"baseOffset: {base} lastOffset: {last} count: {last - base + 1} baseSequence: {seq} lastSequence: {last_seq} "
        f"producerId: {pid} producerEpoch: {epoch} partitionLeaderEpoch: 3 isTransactional: {str(txn).lower()} "
        f"isControl: {str(control).lower()} deleteHorizonMs: OptionalLong.empty position: {position} CreateTime: 1700000000000 "
        "size: 100 magic: 2 compresscodec: none crc: 12345 isvalid: true"
    )


def record_line(offset: int, content: str) -> str:
    return f"| offset: {offset} CreateTime: 1700000000001 keySize: 10 valueSize: 20 sequence: -1 headerKeys: [] {content}"


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_transaction_log_text_formats_of_older_kafka(tmp_path: Path) -> None:
    dump = write(
        tmp_path,
        "old.txt",
        [
            "Dumping /kafka/logs/__transaction_state-4/00000000000000000000.log",
            "Starting offset: 0",  # before Kafka 3.3
            batch_line(0, 0, -1, -1, -1, False, False),
            # before Kafka 2.5: a bare key, the partitions as a Scala Set, fields in another order
            record_line(
                0,
                "key: transactionalId=app-1 payload: producerId:895510,producerEpoch:3,state=Ongoing,partitions=Set(orders-0, orders-1),"
                "txnTimeoutMs=60000,txnLastUpdateTimestamp=17",
            ),
            batch_line(1, 1, -1, -1, -1, False, False),
            record_line(
                1,
                "key: transaction_metadata::transactionalId=app-1 payload: producerId:895510,producerEpoch:3,state=PrepareAbort,"
                "partitions=HashSet(orders-0),txnLastUpdateTimestamp=18,txnTimeoutMs=60000,somethingNew=1",
            ),
            batch_line(2, 2, -1, -1, -1, False, False),
            record_line(2, "key: transaction_metadata::transactionalId=app-1 payload: <DELETE>"),
            batch_line(3, 3, -1, -1, -1, False, False),
            record_line(3, "key: unknown::version=9"),  # a key version the decoder does not know: skipped
        ],
    )
    t = stage(DUMP_LOG, [dump], tmp_path / "out")
    assert pick(t["txn_log"], "log_offset", "txn_id", "producer_id", "epoch", "state", "partitions", "update_ms", "timeout_ms") == [
        (0, "app-1", 895510, 3, "Ongoing", [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 1}], 17, 60000),
        (1, "app-1", 895510, 3, "PrepareAbort", [{"topic": "orders", "partition": 0}], 18, 60000),
        (2, "app-1", None, None, None, None, None, None),  # a tombstone
    ]
    assert [r["trace_id"] for r in t["txn_log"]] == ["/kafka/logs"] * 3


def test_transaction_log_json_format(tmp_path: Path) -> None:
    """The Java DumpLogSegments' TransactionLogMessageParser: TransactionLogValue as JSON."""
    value_v1 = (
        '{"version":"1","data":{"producerId":895510,"previousProducerId":895509,"producerEpoch":0,"transactionTimeoutMs":60000,'
        '"transactionStatus":2,"transactionPartitions":[{"topic":"orders","partitionIds":[0,2]},{"topic":"__consumer_offsets","partitionIds":[7]}],'
        '"transactionLastUpdateTimestampMs":1700000000500,"transactionStartTimestampMs":1700000000100,"clientTransactionVersion":2}}'
    )
    value_v0 = (
        '{"version":"0","data":{"producerId":12,"producerEpoch":5,"transactionTimeoutMs":1000,"transactionStatus":0,'
        '"transactionPartitions":null,"transactionLastUpdateTimestampMs":9,"transactionStartTimestampMs":-1}}'
    )
    dump = write(
        tmp_path,
        "json.txt",
        [
            "Dumping /kafka/logs/__transaction_state-0/00000000000000000040.log",
            "Log starting offset: 40",
            batch_line(40, 41, -1, -1, -1, False, False),
            record_line(40, 'key: {"type":"0","data":{"transactionalId":"app 2"}} payload: ' + value_v1),
            record_line(41, 'key: {"type":"0","data":{"transactionalId":"app-3"}} payload: ' + value_v0),
            batch_line(42, 42, -1, -1, -1, False, False),
            '| key: {"type":"0","data":{"transactionalId":"app-3"}} payload: <DELETE>',  # --skip-record-metadata
        ],
    )
    t = stage(DUMP_LOG, [dump], tmp_path / "out")
    rows = pick(t["txn_log"], *TXN)
    assert rows == [
        (40, "app 2", 895510, 895509, -1, 0, "PrepareCommit", 60000, 1700000000100, 1700000000500, 2),
        (41, "app-3", 12, None, None, 5, "Empty", 1000, -1, 9, 1),
        (42, "app-3", None, None, None, None, None, None, None, None, None),
    ]
    assert t["txn_log"][0]["partitions"] == [
        {"topic": "orders", "partition": 0},
        {"topic": "orders", "partition": 2},
        {"topic": "__consumer_offsets", "partition": 7},
    ]
    assert t["txn_log"][1]["partitions"] == []


def test_offsets_decoder_formats(tmp_path: Path) -> None:
    dump = write(
        tmp_path,
        "offsets.txt",
        [
            "Dumping /kafka/logs/__consumer_offsets-3/00000000000000000000.log",
            "Log starting offset: 0",
            batch_line(0, 0, -1, -1, -1, False, False),
            record_line(0, 'key: group_metadata::group=g payload: {"protocolType":"consumer","protocol":"range","generationId":1,"assignment":"{}"}'),
            batch_line(1, 2, -1, -1, -1, False, False),
            record_line(1, "key: offset_commit::group=my group, with commas,partition=wc-input-0 payload: offset=1"),  # Kafka 2.5 to 3.7
            record_line(2, "key: offset_commit::group=g,partition=wc-input-1 payload: offset=8,metadata=a b: c"),
            batch_line(3, 3, 77, 2, 0, True, False),
            record_line(3, "key: offset::g:wc-input:2 payload: 15:meta"),  # before Kafka 2.5
            batch_line(4, 4, 77, 2, -1, True, True),
            "| offset: 4 CreateTime: 1700000000001 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 887",
            batch_line(5, 7, -1, -1, -1, False, False),
            record_line(5, 'key: {"type":"2","data":{"group":"g"}} payload: {"version":"4","data":{"protocolType":"consumer"}}'),
            record_line(6, 'key: {"type":"0","data":{"group":"g","topic":"t","partition":4}} payload: <DELETE>'),
            record_line(7, "key: Unknown record type 42 at offset 7, skipping."),
        ],
    )
    t = stage(DUMP_LOG, [dump], tmp_path / "out")
    assert pick(t["offset_commits"], "log_offset", "group_id", "topic", "partition", "committed_offset", "producer_id", "producer_epoch") == [
        (1, "my group, with commas", "wc-input", 0, 1, -1, -1),
        (2, "g", "wc-input", 1, 8, -1, -1),
        (3, "g", "wc-input", 2, 15, 77, 2),
        (6, "g", "t", 4, None, -1, -1),  # a tombstone
    ]
    assert pick(t["entries"], "base_offset", "control", "coord_epoch") == [
        (0, None, None),
        (1, None, None),
        (3, None, None),
        (4, "ABORT", 887),
        (5, None, None),
    ]


def test_the_deep_format_of_kafka_before_2_2(tmp_path: Path) -> None:
    """Kafka 0.11 to 2.1 print no batch lines under --deep-iteration: each record carries its batch's
    position, producer and flags (and a shallow dump has no isControl)."""
    v2 = "isvalid: true keysize: 1 valuesize: 5 magic: 2 compresscodec: NONE producerId: 7 producerEpoch: 1"
    dump = write(
        tmp_path,
        "kafka-1.1.txt",
        [
            "Dumping /var/kafka/orders-0/00000000000000000000.log",
            "Starting offset: 0",
            f"offset: 0 position: 0 CreateTime: 1500000000002 {v2} sequence: 0 isTransactional: true headerKeys: []",
            f"offset: 1 position: 0 CreateTime: 1500000000001 {v2} sequence: 1 isTransactional: true headerKeys: [h]",
            f"offset: 2 position: 90 CreateTime: 1500000000005 {v2} sequence: -1 isTransactional: true headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 2",
            "offset: 3 position: 160 CreateTime: 1400000000000 isvalid: true keysize: 1 valuesize: 1 magic: 1 compresscodec: NONE crc: 99",
            "Dumping /var/kafka/orders-1/00000000000000000000.log",
            "Starting offset: 0",
            "baseOffset: 0 lastOffset: 1 baseSequence: 0 lastSequence: 1 producerId: 8 producerEpoch: 0 partitionLeaderEpoch: 4 isTransactional: false "
            "position: 0 CreateTime: 1500000000009 isvalid: true size: 90 magic: 2 compresscodec: NONE crc: 5",
        ],
    )
    t = stage(DUMP_LOG, [dump], tmp_path / "out")
    assert pick(t["entries"], "partition", *BATCH, "ts_ms", "leader_epoch", "position") == [
        (0, 0, 1, 7, 1, 0, 1, True, False, None, None, 1500000000002, None, 3),
        (0, 2, 2, 7, 1, -1, -1, True, True, "ABORT", 2, 1500000000005, None, 5),
        (0, 3, 3, -1, None, None, None, False, False, None, None, 1400000000000, None, 6),
        (1, 0, 1, 8, 0, 0, 1, False, False, None, None, 1500000000009, 4, 9),
    ]


def test_columns_in_another_order_extra_fields_and_other_sections(tmp_path: Path) -> None:
    shuffled = (
        "baseOffset: 10 lastOffset: 12 producerEpoch: 4 producerId: 9007199254740993 count: 3 isControl: false isTransactional: false "
        "baseSequence: 2147483646 lastSequence: 0 someFutureField: x position: 4096 LogAppendTime: 1700000000999 crc: 7 isvalid: true"
    )
    dump = write(
        tmp_path,
        "mixed.txt",
        [
            "Dumping /kafka/logs/orders-3/00000000000000000000.index",
            "offset: 10 position: 4096",  # an offset index: skipped
            "Dumping /kafka/logs/orders-3/00000000000000000000.log",
            "Log starting offset: 0",
            shuffled,
            "",
            "...",
            "Found 17 invalid bytes at the end of 00000000000000000000.log",
            "Dumping /kafka/logs/orders-3/00000000000000000000.txnindex",
            "version: 0 producerId: 5 firstOffset: 0 lastOffset: 6 lastStableOffset: 0",
            "Dumping /kafka/logs/orders-3/00000000000000000013.snapshot",
            "producerId: 9 producerEpoch: 4 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1",
            "Non-consecutive offsets in /kafka/logs/orders-3/00000000000000000000.log",  # stderr, with 2>&1
            "  12 is followed by 14",
        ],
    )
    t = stage(DUMP_LOG, [dump], tmp_path / "out")
    assert pick(t["entries"], *BATCH, "ts_ms", "crc", "leader_epoch") == [
        (10, 12, 9007199254740993, 4, 2147483646, 0, False, False, None, None, 1700000000999, 7, None)
    ]
    assert pick(t["aborted_index"], "topic", "partition", "producer_id", "first_offset", "last_offset", "lso", "position") == [("orders", 3, 5, 0, 6, 0, 10)]


@pytest.mark.parametrize(
    "lines, line, message",
    [
        (["hello"], 1, "the dump does not start with a `Dumping PATH` line; give the whole output of kafka-dump-log.sh"),
        (["Dumping /l/t-0/0.log", "hello world"], 2, "not a line of kafka-dump-log.sh: 'hello world'; give the text kafka-dump-log.sh printed, unedited"),
        (
            ["Dumping 00000000000000000000.log"],
            1,
            "cannot tell the topic and partition of '00000000000000000000.log'; run kafka-dump-log.sh on the file inside",
        ),
        (["Dumping /l/t-0/0.log", "| offset: 0 CreateTime: 1"], 2, "a record line before any batch line"),
        (["Dumping /l/t-0/0.log", "baseOffset: 0 lastOffset: 0 producerEpoch: 0 isTransactional: false"], 2, "the line has no producerId; give the text"),
        (["Dumping /l/t-0/0.log", batch_line(0, 0, 1, 0, 0, True, False).replace("producerId: 1", "producerId: x1")], 2, "producerId is 'x1', not an integer"),
        (
            ["Dumping /l/t-0/0.log", batch_line(0, 0, 1, 0, 0, True, False).replace("isControl: false", "isControl: maybe")],
            2,
            "isControl is 'maybe', not true or false",
        ),
        (["Dumping /l/t-0/0.log", batch_line(5, 4, 1, 0, 0, True, False)], 2, "lastOffset 4 is below baseOffset 5"),
        (
            ["Dumping /l/t-0/0.log", batch_line(0, 0, 1, 0, 0, True, False).replace(" isControl: false", "")],
            2,
            "a transactional batch without isControl (Kafka before 2.2 prints none in a shallow dump), so a marker cannot be told from data; "
            "dump the segment with kafka-dump-log.sh --deep-iteration",
        ),
        (["Dumping /l/t-0/0.log", batch_line(0, 0, 1, 0, -1, True, True), "baseOffset: 1 lastOffset: 1"], 2, "has no record line, so its marker"),
        (["Dumping /l/t-0/0.log", batch_line(0, 0, 1, 0, -1, True, True)], 2, "dump the segment with kafka-dump-log.sh --deep-iteration"),
        (
            ["Dumping /l/t-0/0.log", batch_line(0, 0, 1, 0, -1, True, True), record_line(0, "endTxnMarker: MAYBE coordinatorEpoch: 1")],
            3,
            "endTxnMarker 'MAYBE'",
        ),
        (
            ["Dumping /l/__transaction_state-1/0.log", batch_line(0, 0, -1, -1, -1, False, False), record_line(0, "key: \x00\x05app-1 payload: \x00\x00")],
            3,
            "not a key of the transaction-log decoder: '\\x00\\x05app-1'; dump __transaction_state with --transaction-log-decoder",
        ),
        (
            [
                "Dumping /l/__transaction_state-1/0.log",
                batch_line(0, 0, -1, -1, -1, False, False),
                record_line(0, "key: transactionalId=a payload: producerId:1,producerEpoch:0,state=Weird,partitions=[]"),
            ],
            3,
            "state 'Weird' is no transaction state",
        ),
        (
            [
                "Dumping /l/__transaction_state-1/0.log",
                batch_line(0, 0, -1, -1, -1, False, False),
                record_line(0, "key: transactionalId=a payload: producerId:1,state=Empty"),
            ],
            3,
            "the payload has no producerEpoch, partitions",
        ),
        (
            [
                "Dumping /l/__transaction_state-1/0.log",
                batch_line(0, 0, -1, -1, -1, False, False),
                record_line(0, 'key: {"type":"0","data":{"transactionalId":"a"}} payload: {"version":"1","data":{'),
            ],
            3,
            "the payload is not JSON",
        ),
        (
            [
                "Dumping /l/__consumer_offsets-1/0.log",
                batch_line(0, 0, -1, -1, -1, False, False),
                record_line(0, "key: Error at offset 0, skipping. Unknown version"),
            ],
            3,
            "Kafka could not decode this record",
        ),
        (
            ["Dumping /l/__consumer_offsets-1/0.log", batch_line(0, 0, -1, -1, -1, False, False), record_line(0, "key: mygroup payload: 12")],
            3,
            "not a key of the offsets decoder: 'mygroup'; dump __consumer_offsets with --offsets-decoder",
        ),
        (["Dumping /l/t-0/0.txnindex", "version: 0 firstOffset: 0"], 2, "not an aborted transaction of a .txnindex dump"),
    ],
)
def test_malformed_dumps_give_a_one_line_error(tmp_path: Path, lines: list[str], line: int, message: str) -> None:
    dump = write(tmp_path, "bad.txt", lines)
    with pytest.raises(ReplayInputError) as e:
        stage(DUMP_LOG, [dump], tmp_path / "out")
    text = str(e.value)
    assert text.startswith(f"{dump}:{line}: "), text
    assert message in text
    assert "\n" not in text and "; " in text  # what is wrong; the fix
    assert e.value.__cause__ is None and (e.value.__context__ is None or e.value.__suppress_context__)  # no chained traceback


def test_a_dump_that_is_not_text(tmp_path: Path) -> None:
    dump = tmp_path / "bin.txt"
    dump.write_bytes(b"Dumping /l/t-0/0.log\n\xff\xfe\x00\n")
    with pytest.raises(ReplayInputError, match=r"bin\.txt:2: not UTF-8 text"):
        stage(DUMP_LOG, [dump], tmp_path / "out")
    with pytest.raises(ReplayInputError, match=r"missing\.txt: cannot read it"):
        stage(DUMP_LOG, [tmp_path / "missing.txt"], tmp_path / "out")


# --- segments: built with kafka-python's builders ------------------------------------------------

MARKER = {"ABORT": 0, "COMMIT": 1}  # ControlRecordType


def batch(
    base_offset: int,
    records: list[tuple[bytes | None, bytes | None]],
    *,
    pid: int = -1,
    epoch: int = -1,
    seq: int = -1,
    txn: bool = False,
    marker: str | None = None,
    coord_epoch: int = 0,
    leader_epoch: int = 0,
    ts: int = 1_700_000_000_000,
    compression: int = 0,
) -> bytes:
    """A record batch as a broker stores it: the builder's, with the broker's base offset and leader
    epoch, and for a marker the control attribute the builder leaves to the broker (CRC redone)."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=txn, producer_id=pid, producer_epoch=epoch, base_sequence=seq, batch_size=1 << 20
    )
    if marker is not None:
        records = [(struct.pack(">hh", 0, MARKER[marker]), struct.pack(">hi", 0, coord_epoch))]
    for i, (key, value) in enumerate(records):
        builder.append(i, timestamp=ts + i, key=key, value=value, headers=[])
    buf = builder.build()
    struct.pack_into(">q", buf, 0, base_offset)
    struct.pack_into(">i", buf, 12, leader_epoch)  # PartitionLeaderEpoch: outside the CRC
    if marker is not None:
        at = DefaultRecordBase.ATTRIBUTES_OFFSET
        (attributes,) = struct.unpack_from(">h", buf, at)
        struct.pack_into(">h", buf, at, attributes | DefaultRecordBase.CONTROL_MASK)
        struct.pack_into(">I", buf, DefaultRecordBase.CRC_OFFSET, calc_crc32c(bytes(buf[at:])))
    return bytes(buf)


def kstring(s: str) -> bytes:
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def compact_string(s: str) -> bytes:
    data = s.encode()
    return uvarint(len(data) + 1) + data


def txn_key(txn_id: str) -> bytes:
    return struct.pack(">h", 0) + kstring(txn_id)  # TransactionLogKey v0


def txn_value_v0(pid: int, epoch: int, timeout: int, status: int, partitions: dict[str, list[int]] | None, update: int, start: int) -> bytes:
    out = struct.pack(">hqhib", 0, pid, epoch, timeout, status)
    if partitions is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(partitions))
        for topic, ids in partitions.items():
            out += kstring(topic) + struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    return out + struct.pack(">qq", update, start)


def txn_value_v1(
    pid: int, epoch: int, timeout: int, status: int, partitions: dict[str, list[int]], update: int, start: int, prev: int, client_tv: int
) -> bytes:
    """TransactionLogValue v1, flexible: compact arrays and strings, tagged fields at the end."""
    out = struct.pack(">hqhib", 1, pid, epoch, timeout, status) + uvarint(len(partitions) + 1)
    for topic, ids in partitions.items():
        out += compact_string(topic) + uvarint(len(ids) + 1) + b"".join(struct.pack(">i", i) for i in ids) + uvarint(0)
    out += struct.pack(">qq", update, start)
    tags = [(0, struct.pack(">q", prev)), (2, struct.pack(">h", client_tv)), (9, b"future")]  # tag 9: unknown, skipped
    return out + uvarint(len(tags)) + b"".join(uvarint(tag) + uvarint(len(data)) + data for tag, data in tags)


def offset_key(version: int, group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", version) + kstring(group) + kstring(topic) + struct.pack(">i", partition)


def offset_value_v1(offset: int) -> bytes:
    return struct.pack(">hq", 1, offset) + kstring("meta") + struct.pack(">qq", 1_700_000_000_000, -1)


def offset_value_v3(offset: int) -> bytes:
    return struct.pack(">hqi", 3, offset, 5) + kstring("") + struct.pack(">q", 1_700_000_000_000)


def offset_value_v4(offset: int) -> bytes:
    return struct.pack(">hqi", 4, offset, 5) + compact_string("m") + struct.pack(">q", 1_700_000_000_000) + uvarint(0)


def write_segment(directory: Path, batches: list[bytes], name: str = "00000000000000000000.log") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(b"".join(batches))
    return path


# Several producers on one partition, as a broker appends them
ORDERS = [
    batch(0, [(b"k0", b"v" * 50), (b"k1", b"w" * 50)], pid=895510, epoch=3, seq=0, txn=True, leader_epoch=7),
    batch(2, [(None, b"x")], pid=895511, epoch=0, seq=0, txn=True),
    batch(3, [], pid=895510, epoch=3, txn=True, marker="COMMIT", coord_epoch=887, leader_epoch=7),
    batch(4, [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")], pid=42, epoch=1, seq=2147483646),  # idempotent, sequence wraps
    batch(7, [], pid=895511, epoch=0, txn=True, marker="ABORT", coord_epoch=888),
    batch(8, [(b"k", b"z" * 3000)] * 4, compression=1),  # gzip, no producer
]
EXPECTED_ORDERS = [
    Batch(0, 1, 895510, 3, 0, 1, True, False, None, None, 1_700_000_000_001, None, 7, 0),
    Batch(2, 2, 895511, 0, 0, 0, True, False, None, None, 1_700_000_000_000, None, 0, 0),
    Batch(3, 3, 895510, 3, -1, -1, True, True, "COMMIT", 887, 1_700_000_000_000, None, 7, 0),
    Batch(4, 6, 42, 1, 2147483646, 0, False, False, None, None, 1_700_000_000_002, None, 0, 0),
    Batch(7, 7, 895511, 0, -1, -1, True, True, "ABORT", 888, 1_700_000_000_000, None, 0, 0),
    Batch(8, 11, -1, -1, -1, -1, False, False, None, None, 1_700_000_000_003, None, 0, 0),
]


def without_crc_and_position(batches: list[Batch]) -> list[Batch]:
    return [b._replace(crc=None, position=0) for b in batches]


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    logs = tmp_path / "kafka-logs"
    write_segment(logs / "orders-0", ORDERS)
    write_segment(logs / "orders-0", [batch(12, [(b"k", b"v")], pid=895510, epoch=4, seq=0, txn=True)], "00000000000000000012.log")
    (logs / "orders-0" / "00000000000000000000.txnindex").write_bytes(struct.pack(">hqqqq", 0, 895511, 2, 7, 2))
    (logs / "orders-0" / "00000000000000000000.index").write_bytes(b"\x00" * 8)
    (logs / "orders-0" / "leader-epoch-checkpoint").write_text("0\n")
    write_segment(logs / ("orders-1." + "a" * 32 + "-delete"), ORDERS[:1])  # a deleted replica: skipped
    (logs / "meta.properties").write_text("version=1\n")
    write_segment(
        logs / "__transaction_state-7",
        [
            batch(0, [(txn_key("app-1"), txn_value_v0(895510, 3, 60000, 0, None, 10, -1))]),
            batch(1, [(txn_key("app-1"), txn_value_v0(895510, 3, 60000, 1, {"orders": [0]}, 11, 11))]),
            batch(2, [(txn_key("app-1"), txn_value_v1(895510, 3, 60000, 2, {"orders": [0], "__consumer_offsets": [3]}, 12, 11, 895000, 2))]),
            batch(3, [(txn_key("app-1"), None)]),  # tombstone
            batch(4, [(struct.pack(">h", 5) + b"future key", b"?")]),  # a key version Kafka does not know: skipped
        ],
    )
    write_segment(
        logs / "__consumer_offsets-3",
        [
            batch(0, [(struct.pack(">h", 2) + kstring("g"), b"group metadata")]),  # GroupMetadataKey: skipped
            batch(1, [(offset_key(1, "g", "orders", 0), offset_value_v1(5)), (offset_key(0, "g", "orders", 1), offset_value_v3(9))]),
            batch(3, [(offset_key(1, "g", "in", 0), offset_value_v4(2))], pid=895510, epoch=3, seq=0, txn=True),
            batch(4, [], pid=895510, epoch=3, txn=True, marker="COMMIT", coord_epoch=887),
            batch(5, [(offset_key(1, "g", "orders", 1), None)]),  # tombstone
        ],
    )
    return logs


def test_the_header_scan_and_the_deep_scan_agree_with_kafka_python(log_dir: Path) -> None:
    segment = log_dir / "orders-0" / "00000000000000000000.log"
    header = [b for b, _ in read_batches(segment)]
    deep = list(read_batches(segment, deep=True))
    assert header == [b for b, _ in deep]
    assert without_crc_and_position(header) == without_crc_and_position(EXPECTED_ORDERS)
    assert [len(records) for _, records in deep] == [2, 1, 1, 3, 1, 4]
    # kafka-python's own framing (MemoryRecords) and properties, batch by batch
    oracle = list(MemoryRecords(segment.read_bytes()))
    position = 0
    for got, kp in zip(header, oracle, strict=True):
        assert isinstance(kp, DefaultRecordBatch)
        assert (got.base_offset, got.last_offset, got.producer_id, got.producer_epoch) == (kp.base_offset, kp.last_offset, kp.producer_id, kp.producer_epoch)
        assert (got.base_seq, got.last_seq, got.is_txn, got.is_control) == (kp.base_sequence, kp.last_sequence, kp.is_transactional, kp.is_control_batch)
        assert (got.crc, got.leader_epoch, got.ts_ms, got.position) == (kp.crc, kp.leader_epoch, kp.max_timestamp, position)
        assert kp.validate_crc()
        position += kp.size_in_bytes
    assert header[3].last_seq == 0  # 2147483646, 2147483647, then 0: it wraps past 2^31-1, as kafka-python says


def test_the_scans_agree_on_every_sequence_wrap(tmp_path: Path) -> None:
    batches = [batch(i * 3, [(b"k", b"v")] * 3, pid=7, epoch=0, seq=seq) for i, seq in enumerate((0, 2147483644, 2147483645, 2147483646, 2147483647))]
    segment = write_segment(tmp_path / "t-0", batches)
    header = [b for b, _ in read_batches(segment)]
    assert header == [b for b, _ in read_batches(segment, deep=True)]
    assert [b.last_seq for b in header] == [2, 2147483646, 2147483647, 0, 1]


def test_a_log_directory(log_dir: Path, tmp_path: Path) -> None:
    assert SEGMENTS.sniff(log_dir) and SEGMENTS.sniff(log_dir / "orders-0")
    assert SEGMENTS.sniff(log_dir / "orders-0" / "00000000000000000000.log")
    assert SEGMENTS.sniff(log_dir / "orders-0" / "00000000000000000000.txnindex")
    assert not SEGMENTS.sniff(log_dir / "orders-0" / "00000000000000000000.index") and not DUMP_LOG.sniff(log_dir / "orders-0" / "00000000000000000000.log")
    t = stage(SEGMENTS, [log_dir], tmp_path / "out")
    trace_id = str(log_dir.resolve())
    assert {row["trace_id"] for table in t.values() for row in table} == {trace_id}
    assert {row["source"] for table in t.values() for row in table} == {"segment"}

    orders = [r for r in t["entries"] if r["topic"] == "orders"]
    assert {r["partition"] for r in orders} == {0}  # the -delete replica is left out
    assert pick(orders, *BATCH) == [tuple(b)[:10] for b in EXPECTED_ORDERS] + [(12, 12, 895510, 4, 0, 0, True, False, None, None)]
    assert [r["position"] for r in orders] == [b.position for b, _ in read_batches(log_dir / "orders-0" / "00000000000000000000.log")] + [0]
    assert orders[-1]["file"] == str(log_dir / "orders-0" / "00000000000000000012.log")

    assert t["aborted_index"] == [
        {
            "source": "segment",
            "trace_id": trace_id,
            "topic": "orders",
            "partition": 0,
            "producer_id": 895511,
            "first_offset": 2,
            "last_offset": 7,
            "lso": 2,
            "file": str(log_dir / "orders-0" / "00000000000000000000.txnindex"),
            "position": 0,
        }
    ]

    # __transaction_state: value versions 0 and 1 (tagged fields), a tombstone; an unknown key skipped
    rows = pick(t["txn_log"], "log_partition", *TXN)
    assert rows == [
        (7, 0, "app-1", 895510, None, None, 3, "Empty", 60000, -1, 10, 1),
        (7, 1, "app-1", 895510, None, None, 3, "Ongoing", 60000, 11, 11, 1),
        (7, 2, "app-1", 895510, 895000, -1, 3, "PrepareCommit", 60000, 11, 12, 2),
        (7, 3, "app-1", None, None, None, None, None, None, None, None, None),
    ]
    assert [r["partitions"] for r in t["txn_log"]] == [
        [],
        [{"topic": "orders", "partition": 0}],
        [{"topic": "orders", "partition": 0}, {"topic": "__consumer_offsets", "partition": 3}],
        None,
    ]
    assert [r["ts_ms"] for r in t["txn_log"]] == [1_700_000_000_000] * 4

    # __consumer_offsets: key versions 0 and 1, value versions 1, 3 and 4, the transactional commit
    # and its marker, a tombstone; group metadata skipped
    assert pick(t["offset_commits"], "log_partition", "log_offset", "group_id", "topic", "partition", "committed_offset", "producer_id", "producer_epoch") == [
        (3, 1, "g", "orders", 0, 5, -1, -1),
        (3, 2, "g", "orders", 1, 9, -1, -1),
        (3, 3, "g", "in", 0, 2, 895510, 3),
        (3, 5, "g", "orders", 1, None, -1, -1),
    ]
    offsets = [r for r in t["entries"] if r["topic"] == "__consumer_offsets"]
    assert pick(offsets, "base_offset", "control", "coord_epoch") == [(0, None, None), (1, None, None), (3, None, None), (4, "COMMIT", 887), (5, None, None)]


def test_single_files_and_a_partition_directory(log_dir: Path, tmp_path: Path) -> None:
    whole = stage(SEGMENTS, [log_dir / "orders-0"], tmp_path / "dir")
    files = stage(SEGMENTS, [*sorted((log_dir / "orders-0").glob("*.log")), log_dir / "orders-0" / "00000000000000000000.txnindex"], tmp_path / "files")
    assert whole == files
    assert len(whole["entries"]) == 7 and len(whole["aborted_index"]) == 1


def test_a_legacy_message_set(tmp_path: Path) -> None:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    builder.append(0, timestamp=1_600_000_000_000, key=b"k", value=b"v")
    legacy = bytearray(builder.build())
    struct.pack_into(">q", legacy, 0, 41)
    segment = write_segment(tmp_path / "old-0", [bytes(legacy), batch(42, [(b"k", b"v")], pid=3, epoch=0, seq=0)])
    got = [b for b, _ in read_batches(segment)]
    assert pick([b._asdict() for b in got], *BATCH, "ts_ms") == [
        (41, 41, -1, None, None, None, False, False, None, None, 1_600_000_000_000),
        (42, 42, 3, 0, 0, 0, False, False, None, None, 1_700_000_000_000),
    ]
    assert got == [b for b, _ in read_batches(segment, deep=True)]


def corrupt_error(tmp_path: Path, path: Path) -> str:
    with pytest.raises(ReplayInputError) as e:
        stage(SEGMENTS, [path], tmp_path / "out")
    text = str(e.value)
    assert "\n" not in text and "; " in text
    assert e.value.__cause__ is None and (e.value.__context__ is None or e.value.__suppress_context__)
    return text


def test_corrupt_and_truncated_segments(tmp_path: Path) -> None:
    whole = b"".join(ORDERS[:3])
    second = len(ORDERS[0])

    cut = write_segment(tmp_path / "a-0", [whole[: second + 30]])
    assert corrupt_error(tmp_path, cut) == f"{cut}: byte {second}: the batch needs {len(ORDERS[1])} bytes but the file ends after 30; " + (
        "the segment was cut short (a crash mid-write or a partial copy): copy it again from the broker"
    )
    short = write_segment(tmp_path / "b-0", [whole[: second + 10]])
    assert f"{short}: byte {second}: the file ends 10 bytes into a batch header" in corrupt_error(tmp_path, short)

    bad_magic = bytearray(whole)
    bad_magic[second + 16] = 7
    path = write_segment(tmp_path / "c-0", [bytes(bad_magic)])
    assert f"{path}: byte {second}: magic 7 is no record format (0, 1 or 2); the segment is corrupt here" in corrupt_error(tmp_path, path)

    # a flipped bit in the COMMIT marker's record: its CRC (checked when a marker is read) fails
    flipped = bytearray(whole)
    flipped[-3] ^= 0x01
    path = write_segment(tmp_path / "d-0", [bytes(flipped)])
    marker_at = second + len(ORDERS[1])
    assert f"{path}: byte {marker_at}: the batch fails its CRC" in corrupt_error(tmp_path, path)
    # ... and in a data batch only the deep scan sees it
    flipped = bytearray(whole)
    flipped[second - 3] ^= 0x01
    path = write_segment(tmp_path / "e-0", [bytes(flipped)])
    assert len(list(read_batches(path))) == 3
    with pytest.raises(Exception, match="fails its CRC"):
        list(read_batches(path, deep=True))

    too_short = bytearray(whole)
    struct.pack_into(">i", too_short, 8, 20)
    path = write_segment(tmp_path / "f-0", [bytes(too_short)])
    assert f"{path}: byte 0: batch length 20 is shorter than a batch header" in corrupt_error(tmp_path, path)


def test_corrupt_coordinator_records(tmp_path: Path) -> None:
    path = write_segment(tmp_path / "__transaction_state-0", [batch(0, [(txn_key("a"), struct.pack(">hq", 0, 5))])])
    assert f"{path}: byte 0: the record at offset 0 is no TransactionLogKey/Value (" in corrupt_error(tmp_path, path)
    path = write_segment(tmp_path / "__transaction_state-1", [batch(0, [(txn_key("a"), txn_value_v0(1, 0, 1, 9, None, 1, 1))])])
    assert "the record at offset 0 has TransactionStatus 9, no state" in corrupt_error(tmp_path, path)
    path = write_segment(tmp_path / "__transaction_state-2", [batch(0, [(None, b"x")])])
    assert "the record at offset 0 has no key (a transactional id)" in corrupt_error(tmp_path, path)
    path = write_segment(tmp_path / "__consumer_offsets-0", [batch(0, [(offset_key(1, "g", "t", 0), b"\x00")])])
    assert f"{path}: byte 0: the record at offset 0 is no OffsetCommitKey/Value (" in corrupt_error(tmp_path, path)


def test_corrupt_transaction_indexes(tmp_path: Path) -> None:
    entry = struct.pack(">hqqqq", 0, 5, 0, 3, 0)
    path = tmp_path / "t-0" / "00000000000000000000.txnindex"
    path.parent.mkdir()
    path.write_bytes(entry + entry[:20])
    assert corrupt_error(tmp_path, path) == f"{path}: byte 34: the file ends 20 bytes into an entry of 34; " + (
        "the segment was cut short (a crash mid-write or a partial copy): copy it again from the broker"
    )
    path.write_bytes(entry + struct.pack(">hqqqq", 1, 5, 0, 3, 0))
    assert f"{path}: byte 34: AbortedTxn version 1 (this reader knows version 0)" in corrupt_error(tmp_path, path)


def test_inputs_that_are_no_kafka_log(tmp_path: Path) -> None:
    loose = tmp_path / "00000000000000000000.log"
    loose.write_bytes(ORDERS[0])
    assert "cannot tell the topic and partition of this file; give it inside its partition directory" in corrupt_error(tmp_path, loose)
    other = tmp_path / "t-0" / "notes.txt"
    other.parent.mkdir()
    other.write_text("x")
    assert corrupt_error(tmp_path, other).startswith(f"{other}: not a segment (NNN.log) or transaction index")
    assert corrupt_error(tmp_path, tmp_path / "nowhere").startswith(f"{tmp_path / 'nowhere'}: no such file or directory")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no segments here or in partition directories" in corrupt_error(tmp_path, empty)
    assert not SEGMENTS.sniff(empty) and not SEGMENTS.sniff(other)


# --- untrusted input: never a traceback ----------------------------------------------------------


def mutate(data: bytes, rng: random.Random, inserts: list[bytes]) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op, at = rng.random(), rng.randrange(len(out) + 1)
        if op < 0.5 and at < len(out):
            out[at] = rng.randrange(256)
        elif op < 0.7:
            del out[at : at + rng.randint(1, 40)]
        else:
            out[at:at] = rng.choice(inserts)
    return bytes(out)


def test_mutated_inputs_give_rows_or_a_one_line_error(tmp_path: Path) -> None:
    rng = random.Random(19)
    segments = {
        "orders-0": b"".join(ORDERS),
        "__transaction_state-7": batch(0, [(txn_key("app-1"), txn_value_v1(895510, 3, 60000, 2, {"orders": [0, 1]}, 12, 11, 895000, 2))]),
        "__consumer_offsets-3": batch(1, [(offset_key(1, "g", "orders", 0), offset_value_v1(5)), (offset_key(0, "g", "orders", 1), offset_value_v4(9))]),
    }
    dumps = [p.read_bytes() for p in sorted(SAMPLES.glob("*.txt"))]
    tokens = [b"key: ", b" payload: ", b"endTxnMarker: ", b"<DELETE>", b"baseOffset: ", b"isControl: true", b"{", b"[", b"\n", b"| ", b"\xff"]
    outcomes = {"rows": 0, "error": 0}
    for i in range(150):
        name, data = rng.choice(sorted(segments.items()))
        segment = write_segment(tmp_path / f"in{i}" / name, [mutate(data, rng, [bytes([rng.randrange(256)]) * 8])])
        dump = tmp_path / f"dump{i}.txt"
        dump.write_bytes(mutate(rng.choice(dumps), rng, tokens))
        for fmt, path in ((SEGMENTS, segment.parent), (DUMP_LOG, dump)):
            try:
                fmt.stage([path], Stager(tmp_path / f"out{i}-{fmt.name}"))
                outcomes["rows"] += 1
            except ReplayInputError as e:
                assert "\n" not in str(e) and str(e).startswith(str(path)), str(e)
                outcomes["error"] += 1
    assert outcomes["rows"] > 0 and outcomes["error"] > 0


def test_a_replay_that_reads_nothing_is_an_error_not_a_clean_report(tmp_path: Path) -> None:
    """A log directory whose partition holds an empty segment stages nothing: the replay says so
    (exit 2 at the command line) before it starts Spark, instead of reporting no violation."""
    from spark_replay.replay import ReplayOptions, run_replay

    part = tmp_path / "node-1" / "orders-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b"")

    def no_spark() -> Any:
        raise AssertionError("Spark was started for a replay with nothing to read")

    with pytest.raises(ReplayInputError, match=r"nothing to replay: no record, batch or event was read"):
        run_replay([tmp_path / "node-1"], FORMATS, ReplayOptions(input_format="segment", spark_factory=no_spark, out=tmp_path / "out"))
    assert not (tmp_path / "out" / "staged").exists()
