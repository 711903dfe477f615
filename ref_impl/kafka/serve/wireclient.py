"""The tool's own Kafka client, on kafka-python's protocol classes: for what no real client here
sends. librdkafka and kafka-python are TV1 clients (EndTxn v3 and below, AddPartitionsToTxn);
``TransactionalClient`` is a TV2 client (KIP-890 part 2): no AddPartitionsToTxn, Produce v12
(the partition is added by the leader), EndTxn v5, whose answer carries the bumped epoch the next
transaction uses. It is synchronous, one request at a time, and bounded in time on every call.
"""

from __future__ import annotations

import itertools
import socket
import struct
import time
from typing import Any

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from kafka.record.default_records import DefaultRecordBatchBuilder


class WireClientError(Exception):
    """The broker closed the connection, answered late, or answered an error the caller did not expect."""


class WireClient:
    def __init__(self, host: str, port: int, timeout: float = 10.0, client_id: str = "txconform") -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.timeout = timeout
        self.client_id = client_id
        self.ids = itertools.count(1)
        self.max_versions: dict[int, int] = {}

    def negotiate(self) -> dict[int, int]:
        """ApiVersions: the highest version of each API the broker serves."""
        r = self.call(ApiVersionsRequest(), ApiVersionsResponse, 0)  # v0: every broker answers it
        self.max_versions = {int(k.api_key): int(k.max_version) for k in r.api_keys}
        return self.max_versions

    def version(self, request: Any, wanted: int) -> int:
        """``wanted``, or the broker's highest version of the request's API if that is lower."""
        return min(wanted, self.max_versions.get(request.API_KEY, wanted))

    def call(self, request: Any, response_class: Any, version: int) -> Any:
        version = self.version(request, version)
        cid = next(self.ids)
        request.with_header(correlation_id=cid, client_id=self.client_id)
        self.sock.sendall(request.encode(version=version, header=True, framed=True))
        size = struct.unpack(">i", self._recv(4))[0]
        payload = self._recv(size)
        response = response_class.decode(payload, version=version, header=True)
        if response.header.correlation_id != cid:
            raise WireClientError(f"answer to request {response.header.correlation_id}, expected {cid}")
        return response

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        deadline = time.monotonic() + self.timeout
        while len(out) < n:
            if time.monotonic() > deadline:
                raise WireClientError("no answer in time")
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise WireClientError("the broker closed the connection")
            out += chunk
        return bytes(out)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def batch(producer_id: int, epoch: int, base_sequence: int, values: list[bytes]) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
                                  producer_epoch=epoch, base_sequence=base_sequence, batch_size=1 << 20)
    now = int(time.time() * 1000)
    for i, v in enumerate(values):
        b.append(i, timestamp=now, key=None, value=v, headers=[])
    return bytes(b.build())


class TransactionalClient:
    """A transactional producer on one connection. ``tv2``: Produce v12 and EndTxn v5 with no
    AddPartitionsToTxn (KIP-890 part 2); else TV1 (AddPartitionsToTxn v3, Produce v9, EndTxn v3)."""

    def __init__(self, client: WireClient, txn_id: str, tv2: bool = True) -> None:
        self.c = client
        self.txn_id = txn_id
        self.tv2 = tv2
        self.producer_id, self.epoch = -1, -1
        self.seq: dict[tuple[str, int], int] = {}
        self.added: set[tuple[str, int]] = set()

    def metadata(self, topics: list[str]) -> Any:
        req = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t, topic_id=None) for t in topics],
                              allow_auto_topic_creation=True, include_topic_authorized_operations=False)
        return self.c.call(req, MetadataResponse, 9)

    def init(self, retries: int = 50) -> None:
        for _ in range(retries):
            r = self.c.call(InitProducerIdRequest(transactional_id=self.txn_id, transaction_timeout_ms=60000,
                                                  producer_id=-1, producer_epoch=-1), InitProducerIdResponse, 4)
            if r.error_code == 51:  # CONCURRENT_TRANSACTIONS: a fence is under way; ask again
                continue
            if r.error_code:
                raise WireClientError(f"InitProducerId: error {r.error_code}")
            self.producer_id, self.epoch = r.producer_id, r.producer_epoch
            self.seq, self.added = {}, set()
            return
        raise WireClientError("InitProducerId: CONCURRENT_TRANSACTIONS for ever")

    def produce(self, topic: str, partition: int, values: list[bytes]) -> int:
        """Send one batch; its error code (0: appended, or a duplicate)."""
        tp = (topic, partition)
        if not self.tv2 and tp not in self.added:
            req = AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=self.txn_id, v3_and_below_producer_id=self.producer_id,
                v3_and_below_producer_epoch=self.epoch,
                v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=topic, partitions=[partition])])
            r = self.c.call(req, AddPartitionsToTxnResponse, 3)
            code = r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
            if code:
                return int(code)
            self.added.add(tp)
        seq = self.seq.get(tp, 0)
        P = ProduceRequest
        req = P(transactional_id=self.txn_id, acks=-1, timeout_ms=10000, topic_data=[
            P.TopicProduceData(name=topic, partition_data=[
                P.TopicProduceData.PartitionProduceData(index=partition, records=batch(self.producer_id, self.epoch, seq, values))])])
        r = self.c.call(req, ProduceResponse, 12 if self.tv2 else 9)
        code = int(r.responses[0].partition_responses[0].error_code)
        if code == 0:
            self.seq[tp] = seq + len(values)
        return code

    def end(self, commit: bool) -> int:
        r = self.c.call(EndTxnRequest(transactional_id=self.txn_id, producer_id=self.producer_id, producer_epoch=self.epoch,
                                      committed=commit), EndTxnResponse, 5 if self.tv2 else 3)
        if r.error_code == 0:
            if self.tv2:  # the next transaction goes on with the epoch the end bumped (sequences start again)
                self.producer_id, self.epoch = r.producer_id, r.producer_epoch
                self.seq = {}
            self.added = set()
        return int(r.error_code)


def transactions(host: str, port: int, txn_id: str, topic: str, commits: list[bool], tv2: bool = True,
                 batches: int = 1, records: int = 1, partition: int = 0, timeout: float = 10.0) -> int | None:
    """Run one transaction per entry of ``commits``; None when every request succeeded, else the first
    error code."""
    with WireClient(host, port, timeout) as c:
        t = TransactionalClient(c, txn_id, tv2)
        c.negotiate()
        t.metadata([topic])
        t.init()
        for k, commit in enumerate(commits):
            for b in range(batches):
                code = t.produce(topic, partition, [f"{txn_id}-{k}-{b}-{i}".encode() for i in range(records)])
                if code:
                    return code
            code = t.end(commit)
            if code:
                return code
    return None
