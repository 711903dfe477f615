"""The text output of Kafka's ``kafka-dump-log.sh`` into the canonical tables.

What the tool prints is defined by apache/kafka ``DumpLogSegments`` (core/src/main/scala/kafka/tools/
DumpLogSegments.scala, later tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java): for
each file of ``--files`` a ``Dumping PATH`` line, then

- a segment (``.log``): ``Log starting offset: N`` (``Starting offset: N`` before Kafka 3.3), one
  line per batch (``printBatchLevel``: ``baseOffset: .. lastOffset: .. count: .. baseSequence: ..
  lastSequence: .. producerId: .. producerEpoch: .. partitionLeaderEpoch: .. isTransactional: ..
  isControl: .. deleteHorizonMs: .. position: .. CreateTime: .. size: .. magic: .. compresscodec: ..
  crc: .. isvalid: ..``; before magic 2 only ``offset: .. position: ..``), and with
  ``--deep-iteration`` one ``| offset: ..`` line per record (Kafka 0.11 to 2.1 print no batch lines
  then, only ``offset: .. position: .. keysize: ..`` per record with its batch's position and
  producer, and no isControl in a shallow dump); a control record adds ``endTxnMarker: COMMIT
  coordinatorEpoch: N`` (or, outside transactions, ``controlType: NAME(ID)`` and the KRaft control
  records), and with ``--print-data-log`` a data record adds ``key: .. payload: ..`` as the chosen
  decoder prints them;
- a transaction index (``.txnindex``, ``dumpTxnIndex``): ``version: .. producerId: .. firstOffset: ..
  lastOffset: .. lastStableOffset: ..`` per aborted transaction;
- offset and time indexes and producer snapshots, which carry nothing the checks need (skipped).

The decoders' keys and payloads, by Kafka version:

- ``--transaction-log-decoder``: ``transaction_metadata::transactionalId=ID`` and ``producerId:P,
  producerEpoch:E,state=S,partitions=[t-0,...],txnLastUpdateTimestamp=T,txnTimeoutMs=M``
  (``TransactionLog.formatRecordKeyAndValue``, since Kafka 2.5; ``Set(t-0, ...)`` and a bare
  ``transactionalId=ID`` key before); in the Java DumpLogSegments JSON from the generated
  converters, ``{"type":"0","data":{"transactionalId":ID}}`` and ``{"version":"V","data":
  {"producerId":..,"transactionStatus":N (Kafka 4.x: its name),"transactionPartitions":[{"topic":..,"partitionIds":[..]}],
  ..}}`` (``TransactionLogMessageParser``). A tombstone's payload is ``<DELETE>``.
- ``--offsets-decoder``: ``offset_commit::group=G,partition=T-P`` and ``offset=N[,metadata=M]``
  (Kafka 2.5 to 3.7; ``offset::G:T:P`` and ``N[:M]`` before); since Kafka 3.8 JSON,
  ``{"type":"1","data":{"group":..,"topic":..,"partition":..}}`` and ``{"version":"V","data":
  {"offset":N,..}}`` (``OffsetsMessageParser``, KAFKA-16470). Group metadata and the records of the
  new consumer groups are skipped; ``Unknown record type N at offset M, skipping.`` too.

Topic and partition come from the ``Dumping DIR/TOPIC-PARTITION/FILE`` line; ``trace_id`` is DIR,
the broker's log directory, so that the dumps of one broker's partitions join. ``file`` is the dump
and ``position`` its line. Columns a dump cannot fill: ``replica``; ``txn_log.prev_producer_id``,
``next_producer_id``, ``start_ms`` and ``tv`` in the text format of the transaction-log decoder
(the JSON one has them); ``crc`` and ``leader_epoch`` in the deep format of Kafka 0.11 to 2.1; ``base_seq`` and ``last_seq`` of
``__transaction_state`` and ``__consumer_offsets`` (the coordinators' own, as in segments.py); the
producer fields of magic 0 and 1 (none exist); the marker of a control batch dumped without
``--deep-iteration``, which is an error since the checks need it. A ``...`` or ``# ...`` line (an
elision a person made when pasting a dump), Kafka's ``Found N invalid bytes at the end of FILE`` (a
torn tail; the batches before it are read, as Kafka's recovery keeps them) and the tool's stderr
lines in a dump captured with ``2>&1`` are accepted. ``isvalid`` (the batch CRC) is not checked.

Untrusted input: anything else raises ReplayInputError ``FILE:LINE: what is wrong; the fix``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from spark_replay.adapters.kafka_common import (
    CONSUMER_OFFSETS_TOPIC,
    CONTROL_TYPES,
    TRANSACTION_STATE_TOPIC,
    TXN_STATES,
    LogTables,
    partition_dir,
    topic_partition,
    txn_state_name,
    txn_value_row,
)
from spark_replay.staging import InputFormat, ReplayInputError, Stager

SOURCE = "dump-log"

_TOKEN = re.compile(r"([A-Za-z]+): (\S+)")
_RECORD_OFFSET = re.compile(r"^offset: (-?\d+)")
_TIMESTAMP = re.compile(r"(?:^| )(?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+)")
_MARKER = re.compile(r"(?:^| )endTxnMarker: (\S+) coordinatorEpoch: (\S+)")
_CONTROL_TYPE = re.compile(r"(?:^| )controlType: (\w+)\((-?\d+)\)")
# DumpLogSegments.printControlRecord: the KRaft control records print their name and JSON.
_KRAFT_CONTROL = {
    "LeaderChange:": "LEADER_CHANGE",
    "SnapshotHeader": "SNAPSHOT_HEADER",
    "SnapshotFooter": "SNAPSHOT_FOOTER",
    "KRaftVersion": "KRAFT_VERSION",
    "KRaftVoters": "KRAFT_VOTERS",
}
_KEY = re.compile(r"(?:^| )key: ")
_PAYLOAD = " payload: "
_SKIPPED_KEY = re.compile(r"^(Unknown record type -?\d+ at offset -?\d+, skipping\.|unknown::version=-?\d+)$")
_FAILED_KEY = re.compile(r"^Error at (?:offset )?-?\d+, skipping\.")
_INVALID_BYTES = re.compile(r"^Found \d+ invalid bytes at the end of ")
# What DumpLogSegments prints on stderr (after all files, and for files it ignores), in a dump
# captured with 2>&1: its own findings about offsets and indexes, nothing the tables take.
_STDERR = re.compile(
    r"^(Ignoring unknown file |Non-consecutive offsets in |  -?\d+ is followed by -?\d+$|Mismatches in :|  Index offset: |"
    r"Found timestamp mismatch in :|  Index timestamp: |Found out of order timestamp in :|"
    r"The following indexed offsets are not found in the log\.|Indexed offset: )"
)

# The text payload of the transaction-log decoder (TransactionLog.formatRecordKeyAndValue), one
# pattern per field so that order and extra fields do not matter.
_TXN_TEXT_FIELDS = {
    "producer_id": re.compile(r"(?:^|,)producerId[:=](-?\d+)"),
    "epoch": re.compile(r"(?:^|,)producerEpoch[:=](-?\d+)"),
    "update_ms": re.compile(r"(?:^|,)txnLastUpdateTimestamp[:=](-?\d+)"),
    "timeout_ms": re.compile(r"(?:^|,)txnTimeoutMs[:=](-?\d+)"),
}
_TXN_TEXT_STATE = re.compile(r"(?:^|,)state[:=](\w+)")
_TXN_TEXT_PARTITIONS = re.compile(r"(?:^|,)partitions[:=](?:\[([^\]]*)\]|\w*Set\(([^)]*)\))")
_OFFSET_TEXT_VALUE = re.compile(r"^offset=(-?\d+)(?:,|$)")
_OFFSET_LEGACY_VALUE = re.compile(r"^(-?\d+)(?::|$)")
_OFFSET_TEXT_KEY = re.compile(r"^offset_commit::group=(.*),partition=(.+)$")

_DUMP_TOOL = "kafka-dump-log.sh"


class _Fail(Exception):
    """What is wrong with the current line and how to fix it, before the file and line are known."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what = what
        self.fix = fix


@attrs.define
class _Batch:
    line: int
    base_offset: int | None
    last_offset: int
    producer_id: int
    producer_epoch: int | None
    base_seq: int | None
    last_seq: int | None
    is_txn: bool
    is_control: bool
    ts_ms: int | None
    crc: int | None
    leader_epoch: int | None
    control: str | None = None
    coord_epoch: int | None = None
    records: int = 0
    first_record_offset: int | None = None
    position: int | None = None  # the segment position, for the record lines of Kafka 0.11 to 2.1


@attrs.define
class _Section:
    """One ``Dumping PATH`` of the dump."""

    kind: str  # "log", "txnindex" or "skip"
    topic: str = ""
    partition: int = -1
    batch: _Batch | None = None


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    first = head.decode("utf-8", errors="replace").lstrip().split("\n", 1)[0]
    return first.startswith("Dumping ")


def stage(paths: list[Path], stager: Stager) -> None:
    tables = LogTables(stager)
    for path in paths:
        _read_dump(path, tables)
    tables.flush()


def _read_dump(path: Path, tables: LogTables) -> None:
    try:
        f = path.open("rb")
    except OSError as e:
        raise ReplayInputError(f"{path}: cannot read it ({e.strerror}); give the text {_DUMP_TOOL} printed") from None
    with f:
        _DumpReader(path, tables).read(f)


class _DumpReader:
    def __init__(self, path: Path, tables: LogTables) -> None:
        self.path = path
        self.tables = tables
        self.section: _Section | None = None
        self.lineno = 0

    def fail(self, what: str, fix: str, line: int | None = None) -> ReplayInputError:
        return ReplayInputError(f"{self.path}:{self.lineno if line is None else line}: {what}; {fix}")

    def read(self, f: BinaryIO) -> None:
        try:
            for self.lineno, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise _Fail(f"not UTF-8 text ({e.reason} at column {e.start + 1})", f"give the text {_DUMP_TOOL} printed") from None
                self._line(line.rstrip("\r\n"))
            self.lineno += 1
            self._end_section()
        except _Fail as e:
            raise self.fail(e.what, e.fix) from None

    def _line(self, line: str) -> None:
        section = self.section
        if line.startswith("| ") or line == "|":
            if section is None or section.kind != "log":
                raise _Fail("a record line outside a segment's dump", f"keep the lines {_DUMP_TOOL} printed, in order")
            self._record(section, line[2:])
        elif line.startswith("baseOffset: "):
            if section is None or section.kind != "log":
                raise _Fail("a batch line outside a segment's dump", f"keep the `Dumping DIR/TOPIC-PARTITION/N.log` line {_DUMP_TOOL} printed first")
            self._batch(section, line)
        elif line.startswith("Dumping "):
            self._end_section()
            self._begin_section(line[len("Dumping ") :].strip())
        elif not line.strip() or line.strip() in ("...", "# ...") or _INVALID_BYTES.match(line) or _STDERR.match(line):
            # A control record under --skip-record-metadata prints an empty line; "..." is an elision.
            return
        elif section is None:
            raise _Fail(
                "the dump does not start with a `Dumping PATH` line",
                f"give the whole output of {_DUMP_TOOL} (its first line names the file, and so the topic and partition)",
            )
        elif section.kind == "skip":
            return
        elif section.kind == "txnindex":
            self._aborted_txn(section, line)
        elif line.startswith(("Log starting offset: ", "Starting offset: ", "Snapshot end offset: ")) or line == "KRaft bootstrap snapshot":
            return
        elif line.startswith("offset: ") and " keysize: " in line:
            self._old_record(section, line)
        elif line.startswith("offset: "):
            self._legacy_batch(section, line)
        else:
            raise _Fail(f"not a line of {_DUMP_TOOL}: {_clip(line)!r}", f"give the text {_DUMP_TOOL} printed, unedited")

    # --- sections ---------------------------------------------------------------------------------

    def _begin_section(self, dumped: str) -> None:
        parts = [p for p in re.split(r"[\\/]", dumped) if p]
        name = parts[-1] if parts else dumped
        suffix = name[name.rfind(".") :] if "." in name else ""
        if suffix not in (".log", ".checkpoint", ".txnindex"):
            # .index, .timeindex, .snapshot (producer state) and files Kafka ignores: nothing to read
            self.section = _Section("skip")
            return
        where = partition_dir(parts[-2]) if len(parts) >= 2 else None
        if where is None and suffix == ".checkpoint":  # KRaft's bootstrap.checkpoint: no partition
            self.section = _Section("skip")
            return
        if where is None:
            raise _Fail(
                f"cannot tell the topic and partition of {dumped!r}",
                f"run {_DUMP_TOOL} on the file inside its partition directory (--files LOGDIR/TOPIC-PARTITION/{name})",
            )
        topic, partition, _ = where
        log_dir = dumped[: dumped.rfind(parts[-2])].rstrip("\\/") or "."
        self.section = _Section("txnindex" if suffix == ".txnindex" else "log", topic, partition)
        self.tables.partition(SOURCE, log_dir, topic, partition, str(self.path))

    def _end_section(self) -> None:
        if self.section is not None and self.section.batch is not None:
            self._emit_batch(self.section, self.section.batch)
            self.section.batch = None

    # --- segments ---------------------------------------------------------------------------------

    def _batch(self, section: _Section, line: str) -> None:
        self._end_section()
        t = dict(_TOKEN.findall(line))
        base = _int(t, "baseOffset")
        last = _int(t, "lastOffset")
        if last < base:
            raise _Fail(f"lastOffset {last} is below baseOffset {base}", "the line is damaged: dump the segment again")
        is_txn = _bool(t, "isTransactional")
        if "isControl" in t:
            is_control = _bool(t, "isControl")
        elif not is_txn:
            is_control = False  # control batches are transactional (before KRaft)
        else:
            raise _Fail(
                "a transactional batch without isControl (Kafka before 2.2 prints none in a shallow dump), so a marker cannot be told from data",
                f"dump the segment with {_DUMP_TOOL} --deep-iteration",
            )
        section.batch = _Batch(
            line=self.lineno,
            base_offset=base,
            last_offset=last,
            producer_id=_int(t, "producerId"),
            producer_epoch=_int(t, "producerEpoch"),
            base_seq=_int(t, "baseSequence"),
            last_seq=_int(t, "lastSequence"),
            is_txn=is_txn,
            is_control=is_control,
            ts_ms=_timestamp(line),
            crc=_opt_int(t, "crc"),
            leader_epoch=_opt_int(t, "partitionLeaderEpoch"),
        )

    def _old_record(self, section: _Section, line: str) -> None:
        """A record as Kafka 0.11 to 2.1 print it under --deep-iteration: no batch lines, each record
        with its batch's position, producer and flags; the records of one batch share the position."""
        m = _KEY.search(line)
        cut = min(m.start() if m else len(line), len(line) if _PAYLOAD not in line else line.index(_PAYLOAD))
        t = dict(_TOKEN.findall(line[:cut]))  # the record's fields, not its key or payload
        offset = _int(t, "offset")
        position = _int(t, "position")
        marker = _MARKER.search(line) or _CONTROL_TYPE.search(line)
        b = section.batch
        if b is None or b.position != position:
            self._end_section()
            magic = _int(t, "magic")
            seq = _opt_int(t, "sequence") if magic >= 2 else None
            section.batch = b = _Batch(
                line=self.lineno,
                base_offset=offset,
                last_offset=offset,
                producer_id=_int(t, "producerId") if magic >= 2 else -1,
                producer_epoch=_int(t, "producerEpoch") if magic >= 2 else None,
                base_seq=seq,
                last_seq=seq,
                is_txn=_bool(t, "isTransactional") if magic >= 2 else False,
                is_control=marker is not None,
                ts_ms=None,
                crc=None,  # only a record's own CRC is printed, before magic 2
                leader_epoch=None,
                position=position,
            )
        elif offset <= b.last_offset:
            raise _Fail(f"offset {offset} does not follow {b.last_offset} in the batch at position {position}", "the line is damaged: dump the segment again")
        b.last_offset = offset
        if b.base_seq is not None:
            b.last_seq = _opt_int(t, "sequence")
        ts = _timestamp(line)
        if ts is not None and (b.ts_ms is None or ts > b.ts_ms):
            b.ts_ms = ts  # a batch's timestamp is its records' largest (RecordBatch.maxTimestamp)
        self._record(section, line)

    def _legacy_batch(self, section: _Section, line: str) -> None:
        """A message set of magic 0 or 1 (before Kafka 0.11): no producer, no transactions."""
        self._end_section()
        t = dict(_TOKEN.findall(line))
        last = _int(t, "offset")
        section.batch = _Batch(
            line=self.lineno,
            # an uncompressed message is its own batch; a compressed wrapper's first offset is
            # known only from its record lines
            base_offset=last if t.get("compresscodec", "").lower() in ("none", "nocompressioncodec") else None,
            last_offset=last,
            producer_id=-1,
            producer_epoch=None,
            base_seq=None,
            last_seq=None,
            is_txn=False,
            is_control=False,
            ts_ms=_timestamp(line),
            crc=_opt_int(t, "crc"),
            leader_epoch=None,
        )

    def _emit_batch(self, section: _Section, b: _Batch) -> None:
        if b.is_control and b.control is None:
            raise self.fail(
                f"the control batch at offset {b.base_offset} has no record line, so its marker (COMMIT or ABORT) is unknown",
                f"dump the segment with {_DUMP_TOOL} --deep-iteration (and without --skip-record-metadata)",
                line=b.line,
            )
        base = b.base_offset if b.base_offset is not None else b.first_record_offset
        coordinator = section.topic in (TRANSACTION_STATE_TOPIC, CONSUMER_OFFSETS_TOPIC)  # no client's sequences: see segments.py
        self.tables.entries.add(
            base,
            b.last_offset,
            b.producer_id,
            b.producer_epoch,
            None if coordinator else b.base_seq,
            None if coordinator else b.last_seq,
            b.is_txn,
            b.is_control,
            b.control,
            b.coord_epoch,
            b.ts_ms,
            b.crc,
            b.leader_epoch,
            b.line,
        )

    def _record(self, section: _Section, content: str) -> None:
        b = section.batch
        if b is None:
            raise _Fail("a record line before any batch line", f"keep the lines {_DUMP_TOOL} printed, in order")
        m = _RECORD_OFFSET.match(content)
        if m:
            offset = int(m[1])
        elif b.base_offset is not None:
            offset = b.base_offset + b.records  # --skip-record-metadata: the records are consecutive
        else:
            offset = b.last_offset
        if b.first_record_offset is None:
            b.first_record_offset = offset
        b.records += 1
        if b.is_control:
            self._control_record(b, content)
            return
        if section.topic not in (TRANSACTION_STATE_TOPIC, CONSUMER_OFFSETS_TOPIC):
            return
        key, payload = _key_and_payload(content)
        if key is None:
            if payload is not None:
                raise _Fail(f"a {section.topic} record with a payload but no key", f"dump {section.topic} with its decoder ({_decoder(section.topic)})")
            return  # dumped without --print-data-log: entries only
        ts = _timestamp(content)
        ts = b.ts_ms if ts is None else ts
        if isinstance(key, str) and _SKIPPED_KEY.match(key):
            return
        if isinstance(key, str) and _FAILED_KEY.match(key):
            raise _Fail(
                f"Kafka could not decode this record ({_clip(key)})",
                "read the segment itself with --input-format segment, or dump it with the Kafka version that wrote it",
            )
        if section.topic == TRANSACTION_STATE_TOPIC:
            self._txn_record(offset, ts, key, payload)
        else:
            self._offset_record(b, offset, ts, key, payload)

    def _control_record(self, b: _Batch, content: str) -> None:
        m = _MARKER.search(content)
        if m:
            if m[1] not in ("COMMIT", "ABORT"):
                raise _Fail(f"endTxnMarker {m[1]!r} is neither COMMIT nor ABORT", "the line is damaged: dump the segment again")
            b.control = m[1]
            b.coord_epoch = _parse_int(m[2], "coordinatorEpoch")
            return
        m = _CONTROL_TYPE.search(content)
        if m:
            b.control = CONTROL_TYPES.get(int(m[2]), m[1])
            return
        for label, name in _KRAFT_CONTROL.items():
            if f" {label}" in content:
                b.control = name
                return
        if _RECORD_OFFSET.match(content):
            raise _Fail(
                "a control record line without endTxnMarker or controlType",
                "the line is damaged: dump the segment again with --deep-iteration",
            )

    # --- __transaction_state ----------------------------------------------------------------------

    def _txn_record(self, offset: int, ts: int | None, key: Any, payload: str | None) -> None:
        txn_id = _txn_key(key)
        if payload is None:
            raise _Fail(f"the record of transactional id {txn_id!r} has no payload", "dump __transaction_state with --transaction-log-decoder")
        row: dict[str, Any] = {}
        if payload in ("<DELETE>", "NULL"):
            pass  # a tombstone: the transactional id expired
        elif payload.startswith("{"):
            row = _txn_json_value(_json(payload, "payload"))
        else:
            row = _txn_text_value(payload)
        self.tables.add_txn(offset, ts, txn_id, row, self.lineno)

    # --- __consumer_offsets -----------------------------------------------------------------------

    def _offset_record(self, b: _Batch, offset: int, ts: int | None, key: Any, payload: str | None) -> None:
        commit_key = _offset_key(key)
        if commit_key is None:
            return  # group metadata, or a record of the new consumer groups
        group, topic, partition = commit_key
        if payload is None:
            raise _Fail(f"the offset commit of group {group!r} has no payload", "dump __consumer_offsets with --offsets-decoder")
        committed = _offset_value(payload)
        self.tables.offset_commits.add(
            offset,
            ts,
            group,
            topic,
            partition,
            committed,
            b.producer_id if b.is_txn else -1,
            b.producer_epoch if b.is_txn else -1,
            self.lineno,
        )

    # --- .txnindex --------------------------------------------------------------------------------

    def _aborted_txn(self, section: _Section, line: str) -> None:
        t = dict(_TOKEN.findall(line))
        if "producerId" not in t:
            raise _Fail(f"not an aborted transaction of a .txnindex dump: {_clip(line)!r}", f"give the text {_DUMP_TOOL} printed, unedited")
        self.tables.aborted_index.add(
            _int(t, "producerId"),
            _int(t, "firstOffset"),
            _int(t, "lastOffset"),
            _int(t, "lastStableOffset"),
            self.lineno,
        )


# --- fields -------------------------------------------------------------------------------------


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _parse_int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise _Fail(f"{name} is {_clip(value)!r}, not an integer", "the line is damaged: dump the segment again") from None


def _int(tokens: dict[str, str], name: str) -> int:
    value = tokens.get(name)
    if value is None:
        raise _Fail(f"the line has no {name}", f"give the text {_DUMP_TOOL} printed (Kafka 0.11 or later), unedited")
    return _parse_int(value, name)


def _opt_int(tokens: dict[str, str], name: str) -> int | None:
    value = tokens.get(name)
    return None if value is None else _parse_int(value, name)


def _bool(tokens: dict[str, str], name: str) -> bool:
    value = tokens.get(name)
    if value is None:
        raise _Fail(f"the line has no {name}", f"give the text {_DUMP_TOOL} printed (Kafka 0.11 or later), unedited")
    if value not in ("true", "false"):
        raise _Fail(f"{name} is {_clip(value)!r}, not true or false", "the line is damaged: dump the segment again")
    return value == "true"


def _timestamp(text: str) -> int | None:
    m = _TIMESTAMP.search(text)
    if m is None or int(m[1]) < 0:  # NoTimestampType: -1
        return None
    return int(m[1])


def _decoder(topic: str) -> str:
    return "--transaction-log-decoder" if topic == TRANSACTION_STATE_TOPIC else "--offsets-decoder"


def _key_and_payload(content: str) -> tuple[Any, str | None]:
    """The decoded key (a JSON object or text) and the payload text of a record line, None if absent."""
    m = _KEY.search(content)
    if m is None:
        i = content.find(_PAYLOAD)
        if i < 0 and content.startswith("payload: "):
            return None, content[len("payload: ") :]
        return None, None if i < 0 else content[i + len(_PAYLOAD) :]
    start = m.end()
    if content.startswith("{", start):
        try:
            key, end = json.JSONDecoder().raw_decode(content, start)
        except json.JSONDecodeError as e:
            raise _Fail(f"the key is not JSON ({e.msg} at column {e.colno})", "the line is damaged: dump the segment again") from None
        except RecursionError:
            raise _Fail("the key is JSON nested too deep", "the line is damaged: dump the segment again") from None
        if not isinstance(key, dict):
            raise _Fail(f"the key is JSON but not an object: {_clip(content[start:end])!r}", "the line is damaged: dump the segment again")
        rest = content[end:]
        if not rest:
            return key, None
        if not rest.startswith(_PAYLOAD):
            raise _Fail(f"unexpected text after the key: {_clip(rest)!r}", "the line is damaged: dump the segment again")
        return key, rest[len(_PAYLOAD) :]
    i = content.find(_PAYLOAD, start)
    if i < 0:
        return content[start:], None
    return content[start:i], content[i + len(_PAYLOAD) :]


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _Fail(f"the {what} is not JSON ({e.msg} at column {e.colno})", "the line is damaged: dump the segment again") from None
    except RecursionError:
        raise _Fail(f"the {what} is JSON nested too deep", "the line is damaged: dump the segment again") from None


def _json_data(obj: Any, version_key: str, what: str) -> tuple[int, dict[str, Any]]:
    """(version, data) of the ``{"type"|"version": "N", "data": {...}}`` envelope of Kafka's JSON decoders."""
    if not isinstance(obj, dict) or not isinstance(obj.get("data"), dict):
        raise _Fail(f"the {what} is not a {{{version_key!r}: .., 'data': {{..}}}} object", "the line is damaged: dump the segment again")
    version = obj.get(version_key)
    if isinstance(version, str) and version.isdigit():  # Kafka writes it as a string
        return int(version), obj["data"]
    if isinstance(version, int) and not isinstance(version, bool) and version >= 0:
        return version, obj["data"]
    raise _Fail(f"the {what}'s {version_key} is {version!r}, not a version number", "the line is damaged: dump the segment again")


def _json_int(data: dict[str, Any], name: str, default: int | None = None, required: bool = False) -> int | None:
    value = data.get(name)
    if value is None:
        if required:
            raise _Fail(f"the payload has no {name}", "the line is damaged: dump the segment again")
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Fail(f"{name} is {value!r}, not an integer", "the line is damaged: dump the segment again")
    return value


def _txn_key(key: Any) -> str:
    if isinstance(key, dict):
        _, data = _json_data(key, "type", "key")
        txn_id = data.get("transactionalId")
        if isinstance(txn_id, str):
            return txn_id
    elif key.startswith("transaction_metadata::transactionalId="):
        return str(key[len("transaction_metadata::transactionalId=") :])
    elif key.startswith("transactionalId="):  # before Kafka 2.5
        return str(key[len("transactionalId=") :])
    raise _Fail(f"not a key of the transaction-log decoder: {_clip(str(key))!r}", "dump __transaction_state with --transaction-log-decoder")


def _partition_list(items: list[str]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        if not item.strip():
            continue
        tp = topic_partition(item)
        if tp is None:
            raise _Fail(f"partition {_clip(item)!r} is not TOPIC-PARTITION", "the line is damaged: dump the segment again")
        out.append({"topic": tp[0], "partition": tp[1]})
    return out


def _state(text: str) -> str:
    state = txn_state_name(text)
    if state is None:
        raise _Fail(f"state {_clip(text)!r} is no transaction state ({', '.join(TXN_STATES)})", "the line is damaged: dump the segment again")
    return state


def _txn_text_value(payload: str) -> dict[str, Any]:
    """The text payload of TransactionLog.formatRecordKeyAndValue (and of the parser before it)."""
    row: dict[str, Any] = {}
    for name, pattern in _TXN_TEXT_FIELDS.items():
        m = pattern.search(payload)
        row[name] = int(m[1]) if m else None
    m = _TXN_TEXT_STATE.search(payload)
    p = _TXN_TEXT_PARTITIONS.search(payload)
    missing = [n for n, v in (("producerId", row["producer_id"]), ("producerEpoch", row["epoch"]), ("state", m), ("partitions", p)) if v is None]
    if missing:
        raise _Fail(
            f"the payload has no {', '.join(missing)}: {_clip(payload)!r}",
            "dump __transaction_state with --transaction-log-decoder, unedited",
        )
    assert m is not None and p is not None
    row["state"] = _state(m[1])
    listed = p[1] if p[1] is not None else p[2]
    row["partitions"] = _partition_list(listed.split(","))
    return row


def _txn_json_value(obj: Any) -> dict[str, Any]:
    """The payload of the Java DumpLogSegments' TransactionLogMessageParser: TransactionLogValue as
    JSON (the generated converter's camelCase names; tagged fields absent at their defaults)."""
    version, data = _json_data(obj, "version", "payload")
    listed = data.get("transactionPartitions")
    partitions = []
    if listed is not None:
        if not isinstance(listed, list):
            raise _Fail("transactionPartitions is not a list", "the line is damaged: dump the segment again")
        for entry in listed:
            topic = entry.get("topic") if isinstance(entry, dict) else None
            ids = entry.get("partitionIds") if isinstance(entry, dict) else None
            if not isinstance(topic, str) or not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
                raise _Fail(
                    f"a transactionPartitions entry is not {{topic, partitionIds}}: {_clip(repr(entry))}", "the line is damaged: dump the segment again"
                )
            partitions.append({"topic": topic, "partition_ids": ids})
    value = {
        "producer_id": _json_int(data, "producerId", required=True),
        "producer_epoch": _json_int(data, "producerEpoch", required=True),
        "transaction_timeout_ms": _json_int(data, "transactionTimeoutMs"),
        "transaction_status": _txn_json_status(data),
        "transaction_partitions": partitions,
        "transaction_last_update_timestamp_ms": _json_int(data, "transactionLastUpdateTimestampMs"),
        "transaction_start_timestamp_ms": _json_int(data, "transactionStartTimestampMs"),
    }
    for name, key in (
        ("previous_producer_id", "previousProducerId"),
        ("next_producer_id", "nextProducerId"),
        ("client_transaction_version", "clientTransactionVersion"),
    ):
        if data.get(key) is not None:
            value[name] = _json_int(data, key)
    try:
        return txn_value_row(version, value)
    except ValueError as e:
        raise _Fail(str(e), "the line is damaged: dump the segment again") from None


def _txn_json_status(data: dict[str, Any]) -> int | None:
    """transactionStatus: its id (Kafka 3.x) or, since Kafka 4.x's TransactionLogMessageFormatter, its name ("CompleteCommit")."""
    status = data.get("transactionStatus")
    if isinstance(status, str):
        name = txn_state_name(status)
        if name is None:
            raise _Fail(f"transactionStatus {_clip(status)!r} is no transaction state ({', '.join(TXN_STATES)})", "the line is damaged: dump the segment again")
        return TXN_STATES.index(name)
    return _json_int(data, "transactionStatus", required=True)


def _offset_key(key: Any) -> tuple[str, str, int] | None:
    """(group, topic, partition) of an offset commit key; None for the other records of the topic."""
    if isinstance(key, dict):
        if "type" not in key and "metadata" in key:  # a group metadata key before Kafka 2.5
            return None
        kind, data = _json_data(key, "type", "key")
        if kind not in (0, 1):  # 2: GroupMetadataKey; 3 and up: the new consumer groups' records
            return None
        group, topic, partition = data.get("group"), data.get("topic"), data.get("partition")
        if not isinstance(group, str) or not isinstance(topic, str) or isinstance(partition, bool) or not isinstance(partition, int):
            raise _Fail(f"the offset commit key is not {{group, topic, partition}}: {_clip(json.dumps(data))}", "the line is damaged: dump the segment again")
        return group, topic, partition
    if key.startswith("group_metadata::"):
        return None
    m = _OFFSET_TEXT_KEY.match(key)
    if m:
        tp = topic_partition(m[2])
        if tp is not None:
            return m[1], tp[0], tp[1]
    elif key.startswith("offset::"):  # before Kafka 2.5: offset::GROUP:TOPIC:PARTITION
        parts = key[len("offset::") :].rsplit(":", 2)
        if len(parts) == 3 and parts[2].isdigit():
            return parts[0], parts[1], int(parts[2])
    raise _Fail(f"not a key of the offsets decoder: {_clip(key)!r}", "dump __consumer_offsets with --offsets-decoder")


def _offset_value(payload: str) -> int | None:
    if payload in ("<DELETE>", "NULL"):
        return None  # a tombstone: the offset was deleted
    if payload.startswith("{"):
        _, data = _json_data(_json(payload, "payload"), "version", "payload")
        return _json_int(data, "offset", required=True)
    m = _OFFSET_TEXT_VALUE.match(payload) or _OFFSET_LEGACY_VALUE.match(payload)
    if m is None:
        raise _Fail(f"not a payload of the offsets decoder: {_clip(payload)!r}", "dump __consumer_offsets with --offsets-decoder")
    return int(m[1])


DUMP_LOG = InputFormat(
    "dump-log",
    "text output of kafka-dump-log.sh (--deep-iteration; --transaction-log-decoder, --offsets-decoder)",
    sniff,
    stage,
)
