"""Replay of a real Kafka 4.4.0 log (transaction.version 2), tests/fixtures/kafka-4x/: the raw segments
and the DumpLogSegments text of one data partition and of __transaction_state, made by
scripts/make_kafka_sample.py (see the fixture's README.md).

The log as Kafka wrote it replays clean. Three defects are planted in copies of the data partition,
each on its own producer, in the dump text and in the segment bytes alike: a COMMIT marker batch
removed, an aborted transaction's ABORT marker turned into COMMIT, and a data batch dropped (a
sequence gap). Each is found where it was planted, by the check that should find it, and nothing
else is flagged.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("kafka")  # kafka-python: the spark extra

from kafka.record.util import calc_crc32c

from spark_replay.adapters import FORMATS
from spark_replay.adapters.dumplog import DUMP_LOG
from spark_replay.adapters.segments import SEGMENTS, read_batches
from spark_replay.replay import ReplayOptions, Report, run_replay
from spark_replay.staging import Stager

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "kafka-4x"
TOPIC = "txconform-probe-3-79d67f"
DATA = f"{TOPIC}-0"
DUMP = f"{DATA}.txt"
SEGMENT = "00000000000000000000.log"

# The plants, on partition 0 (offsets as the fixture has them; the test checks each first):
# (name, producer id, offset of the batch it changes, what that batch is)
MARKER_REMOVED = ("COMMIT marker removed", 6, 33, "COMMIT")  # closes producer 6's data at offset 31 (epoch 2)
ABORT_FLIPPED = ("ABORT marker flipped to COMMIT", 5, 22, "ABORT")  # closes producer 5's data at 21; .txnindex lists 21-22
BATCH_DROPPED = ("data batch dropped", 1, 15, "data")  # producer 1 (TV1 client, epoch 0): seq 0-2 @3, 3-5 @15, 6 @26
PLANTS = (MARKER_REMOVED, ABORT_FLIPPED, BATCH_DROPPED)

# What each plant is found as: (check, kind, offset of the violation). P4's MARKER_MISSING is a
# PrepareCommit record of __transaction_state whose partition (and producer) has no marker: no offset
# of the data partition.
EXPECTED: dict[tuple[str, int, int, str], set[tuple[str, str, Any]]] = {
    MARKER_REMOVED: {("P4", "MARKER_MISSING", None), ("P5", "HANGING", 31)},
    ABORT_FLIPPED: {("P4", "MARKER_AGAINST_DECISION", 22), ("P6", "INDEX_WITHOUT_ABORT", 22)},
    BATCH_DROPPED: {("P1", "GAP", 26)},
}

# The control record of a marker: key version int16, type int16 (ControlRecordType: 0 ABORT, 1 COMMIT)
_ABORT_KEY = struct.pack(">hh", 0, 0)
_COMMIT_KEY = struct.pack(">hh", 0, 1)
_CRC_AT = 17  # DefaultRecordBatch: baseOffset int64, length int32, leaderEpoch int32, magic int8, crc uint32
_CRC_FROM = 21  # the CRC covers attributes to the end


@pytest.fixture(scope="module")
def spark(local_spark: Any) -> Any:
    return local_spark


def replay(spark: Any, paths: list[Path]) -> Report:
    return run_replay(paths, FORMATS, ReplayOptions(spark_factory=lambda: spark))


def violations(report: Report) -> set[tuple[Any, ...]]:
    """(check, kind, trace id, topic, partition, producer, offset) of every violation."""
    found = set()
    for o in report.outcomes:
        assert o.violations <= 32, f"{o.id}: {o.violations} violations, more than its examples"
        assert len(o.examples) == o.violations, o.id
        found |= {(o.id, e["kind"], e.get("trace_id"), e.get("topic"), e.get("partition"), e.get("producer_id"), e.get("offset")) for e in o.examples}
    return found


# --- planting, in the dump text -----------------------------------------------------------------------


def _dump_batches(lines: list[str]) -> list[tuple[int, int, dict[str, str]]]:
    """(first line, end line, fields) of each batch line with its record lines."""
    starts = [i for i, line in enumerate(lines) if line.startswith("baseOffset: ")]
    out = []
    for i in starts:
        end = i + 1
        while end < len(lines) and lines[end].startswith("| "):
            end += 1
        tokens = lines[i].split()
        fields = dict(zip(tokens[0::2], tokens[1::2], strict=False))
        out.append((i, end, {k.rstrip(":"): v for k, v in fields.items()}))
    return out


def _find(batches: list[tuple[int, int, dict[str, str]]], lines: list[str], plant: tuple[str, int, int, str]) -> tuple[int, int]:
    _, producer, offset, what = plant
    for start, end, f in batches:
        if int(f["baseOffset"]) == offset:
            assert int(f["producerId"]) == producer, plant
            if what == "data":
                assert f["isControl"] == "false", plant
            else:
                assert f["isControl"] == "true" and f"endTxnMarker: {what} " in lines[start + 1], plant
            return start, end
    raise AssertionError(f"no batch at offset {offset}")


def plant_dump(text: str, plants: tuple[tuple[str, int, int, str], ...]) -> str:
    lines = text.split("\n")
    batches = _dump_batches(lines)
    drop: set[int] = set()
    for plant in plants:
        start, end = _find(batches, lines, plant)
        if plant is ABORT_FLIPPED:
            lines[start + 1] = lines[start + 1].replace("endTxnMarker: ABORT ", "endTxnMarker: COMMIT ")
        else:
            drop |= set(range(start, end))
    return "\n".join(line for i, line in enumerate(lines) if i not in drop)


# --- planting, in the segment bytes -------------------------------------------------------------------


def plant_segment(path: Path, plants: tuple[tuple[str, int, int, str], ...]) -> None:
    data = bytearray(path.read_bytes())
    spans = []
    positions = [b.position for b, _ in read_batches(path)] + [len(data)]
    batches = {b.base_offset: (b, positions[i], positions[i + 1]) for i, (b, _) in enumerate(read_batches(path))}
    for plant in plants:
        _, producer, offset, what = plant
        b, start, end = batches[offset]
        assert b.producer_id == producer and (b.control == what if what != "data" else not b.is_control), plant
        if plant is ABORT_FLIPPED:
            at = data.index(_ABORT_KEY, start + 61, end)  # the control record's key, after the 61-byte header
            data[at : at + 4] = _COMMIT_KEY
            struct.pack_into(">I", data, start + _CRC_AT, calc_crc32c(bytes(data[start + _CRC_FROM : end])))
        else:
            spans.append((start, end))
    for start, end in sorted(spans, reverse=True):
        del data[start:end]
    path.write_bytes(bytes(data))


def planted_copy(tmp: Path) -> tuple[Path, Path]:
    """Copies of the sample with every plant: the dump of the data partition beside that of
    __transaction_state, and the log directory with the data partition's segment changed. The
    dumps' ``Dumping node-1/...`` lines become ``Dumping planted/node-1/...``, so that their trace id
    (the log directory a dump names) is not the unchanged dumps' ``node-1``."""
    dumps = tmp / "dumps"
    dumps.mkdir()
    for f in (SAMPLE / "dumps").iterdir():
        text = f.read_text()
        if f.name == DUMP:
            text = plant_dump(text, PLANTS)
        (dumps / f.name).write_text(text.replace("Dumping node-1/", "Dumping planted/node-1/"))
    logdir = tmp / "node-1"
    shutil.copytree(SAMPLE / "node-1", logdir)
    plant_segment(logdir / DATA / SEGMENT, PLANTS)
    return dumps, logdir


# --- tests --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replayed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    """One replay of the sample as it is (dumps and segments) and of its planted copies: four
    inputs, four trace ids (the dumps' ``node-1`` and ``planted/node-1``, the two log directories),
    so that nothing joins across them. The planted log directory is returned."""
    dumps, logdir = planted_copy(tmp_path_factory.mktemp("planted"))
    return replay(spark, [SAMPLE / "dumps", SAMPLE / "node-1", dumps, logdir]), logdir


def test_the_sample_replays_clean(replayed: tuple[Report, Path]) -> None:
    report, _ = replayed
    assert report.rows["entries"] > 0 and report.rows["txn_log"] > 0 and report.rows["aborted_index"] > 0
    status = {o.id: o.status for o in report.outcomes}
    for check in ("P1", "P2", "P3", "P4", "P5", "P6", "P7"):
        assert status[check] in ("pass", "violated"), (check, status)  # applicable: the plants violate some
    unchanged = {"node-1", str((SAMPLE / "node-1").resolve())}
    flagged = [v for v in violations(report) if v[2] in unchanged]
    assert flagged == [], flagged


def test_the_dump_and_the_segment_read_alike() -> None:
    """No Spark: the adapters give the same batches for the partition's dump and its segment."""
    import re

    text = (SAMPLE / "dumps" / DUMP).read_text()
    from_dump = {
        (int(t["baseOffset"]), int(t["lastOffset"]), int(t["producerId"]), int(t["producerEpoch"]), int(t["baseSequence"]), t["isControl"] == "true")
        for t in (dict(re.findall(r"([A-Za-z]+): (\S+)", line)) for line in text.splitlines() if line.startswith("baseOffset: "))
    }
    from_segment = {
        (b.base_offset, b.last_offset, b.producer_id, b.producer_epoch, b.base_seq, b.is_control) for b, _ in read_batches(SAMPLE / "node-1" / DATA / SEGMENT)
    }
    assert from_dump == from_segment


def _staged(fmt: Any, paths: list[Path], root: Path) -> dict[str, list[dict[str, Any]]]:
    import pyarrow.parquet as pq

    fmt.stage(paths, Stager(root))
    return {name: [r for part in sorted((root / name).glob("*.parquet")) for r in pq.read_table(part).to_pylist()] for name in ("entries", "txn_log")}


def test_kafka_4x_logs_read_whole(tmp_path: Path) -> None:
    """No Spark. The log directory is named like a partition (``node-1``) and is still read as a log
    directory; the 4.x dump's transactionStatus names ("CompleteCommit") read as the segment's ids."""
    seg = _staged(SEGMENTS, [SAMPLE / "node-1"], tmp_path / "s")
    dump = _staged(DUMP_LOG, sorted((SAMPLE / "dumps").iterdir()), tmp_path / "d")
    assert {(r["topic"], r["partition"]) for r in seg["entries"]} == {(TOPIC, 0), ("__transaction_state", 0)}
    columns = ("log_offset", "txn_id", "producer_id", "prev_producer_id", "epoch", "state", "partitions", "timeout_ms", "start_ms", "update_ms", "tv")
    assert [tuple(r[c] for c in columns) for r in dump["txn_log"]] == [tuple(r[c] for c in columns) for r in seg["txn_log"]]
    assert {r["state"] for r in seg["txn_log"]} == {"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort"}
    assert {r["tv"] for r in seg["txn_log"]} == {1, 2}  # librdkafka and kafka-python use TV1, the Java client TV2


def test_planted_defects_are_found_at_their_place(replayed: tuple[Report, Path]) -> None:
    report, logdir = replayed
    found = {v for v in violations(report) if v[2] in ("planted/node-1", str(logdir.resolve()))}
    expected = {
        (check, kind, trace_id, TOPIC, 0, plant[1], offset)
        for trace_id in ("planted/node-1", str(logdir.resolve()))
        for plant, hits in EXPECTED.items()
        for check, kind, offset in hits
    }
    assert found == expected, f"unexpected {sorted(found - expected, key=str)}, missing {sorted(expected - found, key=str)}"
    assert len(violations(report)) == len(expected)  # and nothing anywhere else
