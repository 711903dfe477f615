"""Records in and out: Produce (transactional batches as the spec's, plain ones beside it), ListOffsets, Fetch."""

from __future__ import annotations

from typing import Any

from kafka.protocol.consumer.fetch import FetchResponse
from kafka.protocol.consumer.offsets import ListOffsetsResponse
from kafka.protocol.producer.produce import ProduceResponse

from ..messages import Msg
from . import wire
from .translate import ERRORS, LOG_START, BrokerCore, Ordinals, Stored


class DataRequests(BrokerCore):
    """Produce, ListOffsets and Fetch: Kafka's record batches and offsets over the spec's log entries."""

    def on_produce(self, req: wire.Request, body: Any) -> Any:
        R = ProduceResponse
        TR = R.TopicProduceResponse
        PR = TR.PartitionProduceResponse
        topics = []
        for td in body.topic_data:
            out = []
            for pd in td.partition_data:
                code, base, msg = self._produce_one(body.transactional_id, td.name, pd.index, pd.records)
                out.append(PR(index=pd.index, error_code=code, base_offset=base, log_append_time_ms=-1,
                              log_start_offset=LOG_START, record_errors=[], error_message=msg))
            topics.append(TR(name=td.name, partition_responses=out))
        if body.acks == 0:
            return None
        return R(responses=topics, throttle_time_ms=0)

    def _produce_one(self, t: str | None, topic: str, index: int, records: bytes | None) -> tuple[int, int, str | None]:
        p = self.partition(topic, index)
        if p is None:
            return ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], -1, None
        try:
            batches = wire.parse_batches(records)
        except wire.WireError as e:
            return ERRORS["CORRUPT_MESSAGE"], -1, str(e)
        if len(batches) != 1:
            self.refuse(f"Produce to {topic}-{index} with {len(batches)} batches (clients send one per partition)")
            return ERRORS["INVALID_RECORD"], -1, "one record batch per partition"
        b = batches[0]
        if not b.is_transactional or b.is_control:
            return self._produce_plain(p, topic, index, b)
        if not t:
            t = next((q.txn_id for (u, pid, _), q in self.producers.items() if pid == b.producer_id), None)
        err, prod, g = self.txn_request("Produce", t, b.producer_id, b.producer_epoch)
        if err is not None or t is None:
            return ERRORS[err or "INVALID_PRODUCER_ID_MAPPING"], -1, None
        if any(s.producer_id < 0 for s in self.stored[p]) or self.plain.get(p):
            self.refuse(f"transactional Produce to {topic}-{index}, which holds non-transactional data")
            return ERRORS["INVALID_RECORD"], -1, "a partition holds transactional or plain data, not both"
        last_seq = b.base_sequence + b.record_count - 1
        seq = self.ordinals.setdefault((t, g, p), Ordinals()).of(b.base_sequence, last_seq)
        self.raw_of.setdefault((t, g, p, seq), b)
        m = Msg("Produce", tid=t, inst=prod.inst, epoch=g, part=p, seq=seq, gtx=(t, prod.inst, prod.txn),
                att=self.copy_of("Produce", t, prod.inst, prod.txn, g, p, seq))
        self.max_txn = max(self.max_txn, prod.txn)
        r = self.exchange(m)
        if r.err != "NONE":
            return ERRORS[r.err], -1, None
        for entry, stored in zip(self.c.plog[p].entries, self.stored[p], strict=True):
            if entry.kind == "data" and (entry.pid, entry.epoch, entry.seq) == (t, g, seq):
                return 0, stored.base, None
        return 0, -1, None  # a duplicate of a batch no longer in the log

    def _produce_plain(self, p: int, topic: str, index: int, b: wire.Batch) -> tuple[int, int, str | None]:
        """Non-transactional data: outside the spec, so only to partitions without transactional data."""
        if any(s.producer_id >= 0 for s in self.stored[p]) or self.c.plog[p].entries:
            self.refuse(f"non-transactional Produce to {topic}-{index}, which holds transactional data")
            return ERRORS["INVALID_RECORD"], -1, "a partition holds transactional or plain data, not both"
        self.plain[p] = True
        base = self.next_offset(p)
        self.stored[p].append(Stored(base, base + b.last_offset_delta, wire.rebase(b, base), -1))
        return 0, base, None

    def on_list_offsets(self, req: wire.Request, body: Any) -> Any:
        R = ListOffsetsResponse
        TR = R.ListOffsetsTopicResponse
        PR = TR.ListOffsetsPartitionResponse
        committed = req.api_version >= 2 and body.isolation_level == 1
        topics = []
        for t in body.topics:
            out = []
            for q in t.partitions:
                p = self.partition(t.name, q.partition_index, create=False)
                if p is None:
                    out.append(PR(partition_index=q.partition_index, error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"],
                                  timestamp=-1, offset=-1, leader_epoch=-1, old_style_offsets=[]))
                    continue
                if q.timestamp == -2:  # EARLIEST  # noqa: SIM108 (a nested conditional reads worse)
                    off = LOG_START
                else:  # LATEST, and any timestamp: the end (timestamps are not indexed)
                    off = self.lso_offset(p) if committed else self.next_offset(p)
                out.append(PR(partition_index=q.partition_index, error_code=0, timestamp=-1, offset=off, leader_epoch=0,
                              old_style_offsets=[off]))
            topics.append(TR(name=t.name, partitions=out))
        return R(throttle_time_ms=0, topics=topics)

    def lso_offset(self, p: int) -> int:
        lso = self.c.plog[p].lso()
        s = self.stored[p]
        return s[lso].base if lso < len(s) else self.next_offset(p)

    def on_fetch(self, req: wire.Request, body: Any) -> Any:
        R = FetchResponse
        TR = R.FetchableTopicResponse
        PR = TR.PartitionData
        AT = PR.AbortedTransaction
        committed = req.api_version >= 4 and body.isolation_level == 1
        budget = body.max_bytes if req.api_version >= 3 else 50 * 1024 * 1024
        topics = []
        self.last_fetch_empty = True
        for t in body.topics:
            out = []
            for q in t.partitions:
                p = self.partition(t.topic, q.partition, create=False)
                if p is None:
                    out.append(PR(partition_index=q.partition, error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], high_watermark=-1,
                                  last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None, preferred_read_replica=-1,
                                  records=b""))
                    continue
                end = self.next_offset(p)
                if not LOG_START <= q.fetch_offset <= end:
                    out.append(PR(partition_index=q.partition, error_code=ERRORS["OFFSET_OUT_OF_RANGE"], high_watermark=end,
                                  last_stable_offset=self.lso_offset(p), log_start_offset=LOG_START,
                                  aborted_transactions=None, preferred_read_replica=-1, records=b""))
                    continue
                raw, aborted = self._read(p, q.fetch_offset, committed, min(q.partition_max_bytes, max(budget, 1)))
                budget -= len(raw)
                out.append(PR(partition_index=q.partition, error_code=0, high_watermark=end, last_stable_offset=self.lso_offset(p),
                              log_start_offset=LOG_START,
                              aborted_transactions=[AT(producer_id=pid, first_offset=first) for pid, first in aborted] if committed else None,
                              preferred_read_replica=-1, records=raw))
            topics.append(TR(topic=t.topic, partitions=out))
        return R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)

    def _read(self, p: int, offset: int, committed: bool, max_bytes: int) -> tuple[bytes, list[tuple[int, int]]]:
        """The batches from Kafka offset ``offset`` a consumer is sent (up to the LSO for
        read_committed, the high watermark otherwise), and the aborted transactions among them.
        A read of transactional data is the spec's Fetch step."""
        stored = self.stored[p]
        start = next((i for i, s in enumerate(stored) if s.last >= offset), len(stored))
        if self.plain.get(p):
            upper = len(stored)
        else:
            log = self.c.plog[p]
            lso = log.lso()
            inclusive = self.c.k.bug("lso_inclusive") and lso < len(stored)
            upper = (lso + 1 if inclusive else lso) if committed else len(stored)
        chosen: list[int] = []
        size = 0
        for i in range(start, upper):
            if chosen and size + len(stored[i].raw) > max_bytes:
                break
            chosen.append(i)
            size += len(stored[i].raw)
        if not chosen:
            return b"", []
        self.last_fetch_empty = False
        aborted: list[tuple[int, int]] = []
        if not self.plain.get(p):
            isolation = "read_committed" if committed else "read_uncommitted"
            self.step("Fetch", (p, isolation, start))
            if committed:
                last = chosen[-1]
                for _pid, first, marker in self.c.plog[p].aborted_index():
                    if first <= last and marker >= start:
                        aborted.append((stored[first].producer_id, stored[first].base))
        return b"".join(stored[i].raw for i in chosen), aborted
