"""The transaction protocol's requests, each a ClientSend of the spec, the brokers' steps, then a ClientTake:
InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit."""

from __future__ import annotations

from typing import Any

from kafka.protocol.producer.transaction import (
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnResponse,
    EndTxnResponse,
    InitProducerIdResponse,
    TxnOffsetCommitResponse,
)

from ..messages import Msg
from ..state import OFFSETS_PART
from . import wire
from .translate import ERRORS, BrokerCore, group_error_name


class TxnRequests(BrokerCore):
    """InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and TxnOffsetCommit, as steps of the reference broker."""

    def on_init_producer_id(self, req: wire.Request, body: Any) -> Any:
        R = InitProducerIdResponse
        t = body.transactional_id
        if not t:
            self.refuse("InitProducerId without a transactional.id (idempotent-only producers are not served)")
            return R(throttle_time_ms=0, error_code=ERRORS["INVALID_REQUEST"], producer_id=-1, producer_epoch=-1)
        if not self.txn_id(t):
            self.refuse(f"InitProducerId of transactional.id {t!r}: a trace holds printable ASCII ids of 1 to 249 characters")
            return R(throttle_time_ms=0, error_code=ERRORS["INVALID_REQUEST"], producer_id=-1, producer_epoch=-1)
        given_pid = body.producer_id if req.api_version >= 3 else -1
        given_epoch = body.producer_epoch if req.api_version >= 3 else -1
        if given_pid < 0:
            # a retry on the same connection (after CONCURRENT_TRANSACTIONS) is the same instance
            p = self.initializing.get((self.conn, t)) or self._new_instance(t)
            self.initializing[(self.conn, t)] = p
            g = -1
        else:
            p = self.producer(t, given_pid, given_epoch)
            gen = self.generation(t, given_pid, given_epoch)
            if gen is None:
                self.refuse(f"InitProducerId of {t} with producer id {given_pid}, which is not its current one")
                return R(throttle_time_ms=0, error_code=ERRORS["INVALID_PRODUCER_ID_MAPPING"], producer_id=-1, producer_epoch=-1)
            g = gen
        m = Msg("InitProducerId", tid=t, inst=p.inst, epoch=g, part=OFFSETS_PART, gtx=(t, p.inst, 0),
                att=self.copy_of("InitProducerId", t, p.inst, g))
        r = self.exchange(m)
        if r.err == "NONE":
            self.initializing.pop((self.conn, t), None)
            self._given(p, t, r.epoch)
            return R(throttle_time_ms=0, error_code=0, producer_id=self.c.producer_id(t, r.epoch),
                     producer_epoch=self.c.k.epoch_of(r.epoch))
        return R(throttle_time_ms=0, error_code=self._error("InitProducerId", req.api_version, r.err), producer_id=-1,
                 producer_epoch=-1)

    def on_add_partitions_to_txn(self, req: wire.Request, body: Any) -> Any:
        R = AddPartitionsToTxnResponse
        TR = R.AddPartitionsToTxnTopicResult
        PR = TR.AddPartitionsToTxnPartitionResult
        if req.api_version >= 4:
            self.refuse("AddPartitionsToTxn v4+ (broker to broker, KIP-890) from a client")
            return R(throttle_time_ms=0, error_code=ERRORS["UNSUPPORTED_VERSION"], results_by_transaction=[])
        t = body.v3_and_below_transactional_id
        err0, prod, g = self.txn_request("AddPartitionsToTxn", t, body.v3_and_below_producer_id,
                                          body.v3_and_below_producer_epoch)
        failed: str | None = err0
        results = []
        for topic in body.v3_and_below_topics:
            out = []
            for index in topic.partitions:
                p = self.partition(topic.name, index)
                if failed is not None:
                    code = ERRORS[failed] if failed == err0 else ERRORS["OPERATION_NOT_ATTEMPTED"]
                elif p is None:
                    code = ERRORS["UNKNOWN_TOPIC_OR_PARTITION"]
                else:
                    assert t is not None and prod is not None
                    m = Msg("AddPartitionsToTxn", tid=t, inst=prod.inst, epoch=g, part=p, gtx=(t, prod.inst, prod.txn),
                            att=self.copy_of("AddPartitionsToTxn", t, prod.inst, prod.txn, p, g))
                    r = self.exchange(m)
                    if r.err != "NONE":
                        failed = r.err
                    code = self._error("AddPartitionsToTxn", req.api_version, r.err)
                out.append(PR(partition_index=index, partition_error_code=code))
            results.append(TR(name=topic.name, results_by_partition=out))
        return R(throttle_time_ms=0, results_by_topic_v3_and_below=results)

    def _simple_txn(self, api: str, req: wire.Request, t: str, producer_id: int, epoch: int, **fields: Any) -> str:
        err, prod, g = self.txn_request(api, t, producer_id, epoch)
        if err is not None:
            return err
        self.max_txn = max(self.max_txn, prod.txn)
        m = Msg(api, tid=t, inst=prod.inst, epoch=g, part=OFFSETS_PART, gtx=(t, prod.inst, prod.txn),
                att=self.copy_of(api, t, prod.inst, prod.txn, g, tuple(sorted(fields.items()))), **fields)
        r = self.exchange(m)
        if api == "EndTxn" and r.err == "NONE":
            prod.txn += 1
            self._given(prod, t, r.epoch)
            self._end_epoch = r.epoch
        return r.err

    def on_add_offsets_to_txn(self, req: wire.Request, body: Any) -> Any:
        err = self._simple_txn("AddOffsetsToTxn", req, body.transactional_id, body.producer_id, body.producer_epoch)
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=self._error("AddOffsetsToTxn", req.api_version, err))

    def on_end_txn(self, req: wire.Request, body: Any) -> Any:
        self._end_epoch = -1
        if self.c.k.tv2 and req.api_version < 5:
            # a TV1 client (EndTxn before v5 cannot carry the epoch TV2 bumps): Kafka 4 serves it with
            # TV1, which this session's spec constants do not; it is told, not served wrongly
            self.refuse(f"EndTxn v{req.api_version} (a TV1 client) in a TV2 session: serve it with --version TV1V")
            return EndTxnResponse(throttle_time_ms=0, error_code=ERRORS["UNSUPPORTED_VERSION"], producer_id=-1, producer_epoch=-1)
        err = self._simple_txn("EndTxn", req, body.transactional_id, body.producer_id, body.producer_epoch,
                               commit=bool(body.committed))
        R = EndTxnResponse
        code = self._error("EndTxn", req.api_version, err)
        if err == "NONE" and self._end_epoch >= 0:
            t = body.transactional_id
            return R(throttle_time_ms=0, error_code=code, producer_id=self.c.producer_id(t, self._end_epoch),
                     producer_epoch=self.c.k.epoch_of(self._end_epoch))
        return R(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)

    def on_txn_offset_commit(self, req: wire.Request, body: Any) -> Any:
        R = TxnOffsetCommitResponse
        TR = R.TxnOffsetCommitResponseTopic
        PR = TR.TxnOffsetCommitResponsePartition

        def answer(code: int) -> Any:
            return R(throttle_time_ms=0, topics=[
                TR(name=tp.name, partitions=[PR(partition_index=p.partition_index, error_code=code) for p in tp.partitions])
                for tp in body.topics])

        if self.c.k.tv2 and req.api_version < 5:
            # a TV1 client: Kafka only checks that its AddOffsetsToTxn put the offsets partition in the
            # transaction (TxnOffsetCommit v4 and earlier verify; v5, TV2, adds it:
            # AddPartitionsToTxnManager.txnOffsetCommitRequestVersionToTransactionSupportedOperation),
            # which this session's spec constants do not describe; it is told, not served wrongly
            self.refuse(f"TxnOffsetCommit v{req.api_version} (a TV1 client) in a TV2 session: serve it with --version TV1V")
            return answer(ERRORS["UNSUPPORTED_VERSION"])
        # TV1V and TV2: the spec's group coordinator verifies the commit with the transaction
        # coordinator (TV2: adds the offsets partition) before it writes it (GcTxnOffsetCommit, GcVerified)
        offsets = {(tp.name, p.partition_index): p.committed_offset for tp in body.topics for p in tp.partitions}
        generation = body.generation_id if req.api_version >= 3 else -1
        member = body.member_id if req.api_version >= 3 else ""
        err = group_error_name(self.groups.check(body.group_id, generation, member or ""))
        if err == "NONE":
            self.offset_ids += 1
            err = self._simple_txn("TxnOffsetCommit", req, body.transactional_id, body.producer_id, body.producer_epoch,
                                   val=self.offset_ids)
            if err == "NONE":
                self.groups.add_pending(body.transactional_id, body.group_id, offsets)
        return answer(self._error("TxnOffsetCommit", req.api_version, err))
