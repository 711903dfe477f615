"""Raw Fetch requests: the log as the broker serves it, with kafka-python's protocol classes.

``KafkaProtocol`` (kafka.protocol.parser) frames requests and parses responses; this module only
moves its bytes over a socket, with a deadline on every call. Record batches are read with
kafka-python's record classes through the segment adapter's batch reader
(spark_replay.adapters.segments.batch_row), so a fetched batch becomes the same entries row a
batch of a segment file does. A read_committed client's view of a fetch is computed as Kafka's
consumer computes it (Fetcher / CompletedFetch: a transactional batch of a producer listed in the
aborted transactions, from its first offset up to that producer's ABORT marker, is skipped;
control batches are never returned).
"""

from __future__ import annotations

import socket
import time
from typing import Any

import attrs
from kafka.protocol.consumer.fetch import FetchRequest
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.parser import KafkaProtocol
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

from probe.targets import TargetError

FETCH_KEY = 1
MAX_FETCH_VERSION = 12  # the last version that names topics by name (13 uses topic ids)
READ_COMMITTED, READ_UNCOMMITTED = 1, 0


class RawRequestError(TargetError):
    """The broker answered something the probe cannot use, or not in time."""


@attrs.define
class FetchedBatch:
    row: dict[str, Any]  # the entries columns (segments.Batch fields)
    records: list[tuple[int, str | None, str | None]]  # (offset, key, value) of data records


@attrs.define
class Fetched:
    """One Fetch response for one partition."""

    from_offset: int
    error_code: int
    high_watermark: int
    lso: int | None
    aborted: list[tuple[int, int]]  # (producer id, first offset), read_committed only
    batches: list[FetchedBatch] = attrs.field(factory=list)
    empty_response: bool = False  # the broker answered without the partition

    def delivered(self) -> list[tuple[int, str | None, str | None]]:
        """What a read_committed consumer returns from this response (Kafka's CompletedFetch)."""
        pending = sorted(self.aborted, key=lambda a: a[1])
        aborted_pids: set[int] = set()
        out: list[tuple[int, str | None, str | None]] = []
        for b in self.batches:
            r = b.row
            while pending and pending[0][1] <= r["last_offset"]:
                aborted_pids.add(pending.pop(0)[0])
            if r["is_control"]:
                if r["control"] == "ABORT":
                    aborted_pids.discard(r["producer_id"])
                continue
            if r["is_txn"] and r["producer_id"] in aborted_pids:
                continue
            out.extend(rec for rec in b.records if rec[0] >= self.from_offset)
        return out

    def next_offset(self) -> int:
        ends: list[int] = [b.row["last_offset"] + 1 for b in self.batches]
        return max([self.from_offset, *ends])


def _text(b: bytes | None) -> str | None:
    return None if b is None else bytes(b).decode("utf-8", "backslashreplace")


def read_batches(data: bytes) -> list[FetchedBatch]:
    """The complete v2 batches of a Fetch response's records (a partial last batch is left out, as
    consumers do)."""
    from spark_replay.adapters.segments import batch_row

    out = []
    records = MemoryRecords(bytes(data))
    while True:
        batch = records.next_batch()
        if batch is None:
            break
        if not isinstance(batch, DefaultRecordBatch):
            raise RawRequestError(f"the broker served a message set of magic {getattr(batch, 'magic', '?')}: the probe reads record batch v2 only")
        try:
            crc_valid = bool(batch.validate_crc())  # kafka-python iterates a batch only after this
            row, recs = batch_row(batch, 0, check_crc=False)
            row["crc_valid"] = crc_valid
        except Exception as e:  # segments._Corrupt: what is wrong with the batch
            raise RawRequestError(f"the broker served a corrupt batch at offset {batch.base_offset}: {e}") from None
        data_records = [] if row["is_control"] else [(r.offset, _text(r.key), _text(r.value)) for r in recs]
        out.append(FetchedBatch(row, data_records))
    return out


class Connection:
    """One socket to one broker; each call waits at most ``timeout`` seconds."""

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.address = f"{host}:{port}"
        self.timeout = timeout
        try:
            self.sock = socket.create_connection((host, port), timeout)
        except OSError as e:
            raise RawRequestError(f"cannot connect to {self.address}: {e}") from None
        self.proto = KafkaProtocol(client_id="txconform-probe")
        versions = self.call(ApiVersionsRequest(version=0))
        fetch = [k for k in versions.api_keys if k.api_key == FETCH_KEY]
        if not fetch or fetch[0].max_version < 4:
            raise RawRequestError(f"{self.address} does not serve Fetch v4+ (read_committed): ApiVersions says {fetch}")
        self.fetch_version = min(fetch[0].max_version, MAX_FETCH_VERSION)

    def call(self, request: Any) -> Any:
        self.proto.send_request(request)
        deadline = time.monotonic() + self.timeout
        self.sock.settimeout(self.timeout)
        try:
            self.sock.sendall(self.proto.send_bytes())
            while time.monotonic() < deadline:
                data = self.sock.recv(1 << 20)
                if not data:
                    raise RawRequestError(f"{self.address} closed the connection")
                responses = self.proto.receive_bytes(data)
                if responses:
                    return responses[0][1]
        except OSError as e:
            raise RawRequestError(f"{self.address}: {e}") from None
        raise RawRequestError(f"{self.address} did not answer within {self.timeout:.0f} s")

    def fetch(self, topic: str, partition: int, offset: int, isolation: int, max_wait_ms: int = 100) -> Fetched:
        Topic = FetchRequest.FetchTopic
        request = FetchRequest(
            version=self.fetch_version,
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=4 << 20,
            isolation_level=isolation,
            topics=[
                Topic(
                    topic=topic, partitions=[Topic.FetchPartition(partition=partition, fetch_offset=offset, log_start_offset=-1, partition_max_bytes=1 << 20)]
                )
            ],
        )
        response = self.call(request)
        parts = [p for t in response.responses if t.topic == topic for p in t.partitions if p.partition_index == partition]
        if not parts:
            return Fetched(offset, 0, -1, None, [], empty_response=True)
        p = parts[0]
        lso = p.last_stable_offset if isolation == READ_COMMITTED and p.last_stable_offset >= 0 else None
        aborted = [(a.producer_id, a.first_offset) for a in (p.aborted_transactions or [])]
        return Fetched(offset, p.error_code, p.high_watermark, lso, aborted, read_batches(p.records or b""))

    def close(self) -> None:
        self.sock.close()
