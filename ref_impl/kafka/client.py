"""Producer clients (KafkaTxn: StartInstance .. InputDone, ClientReceive).

A client runs its transactions as the spec's fixed program: [TV1, TV1V: AddPartitionsToTxn] Produce
``batches`` batches to each partition in turn, [CTP: AddOffsetsToTxn (TV1, TV1V), TxnOffsetCommit],
EndTxn. A TV2 client sends neither AddPartitionsToTxn nor AddOffsetsToTxn: the leaders and the group
coordinator add the partitions (TransactionManager.sendOffsetsToTransaction).
One request is outstanding at a time; one without an answer is sent again (Retry). With
pipelining (max_in_flight > 1) batches go without waiting for their answers, up to max_in_flight
per partition, and wait in ``fly``; EndTxn waits for all of them.
"""

from __future__ import annotations

import attrs

from .messages import NO_GTX, Msg
from .state import OFFSETS_PART, Client, ClusterState, Inst
from .states import FENCING, RETRIABLE

# The request types an open client sends to the transaction machinery (KafkaTxn: OpenTypes).
OPEN_TYPES = ("InitProducerId", "AddPartitionsToTxn", "Produce", "EndTxn", "AddOffsetsToTxn", "TxnOffsetCommit")
OPEN_RESPONSE_TYPES = tuple(t + "Resp" for t in OPEN_TYPES)


class ClientActions(ClusterState):
    def request(self, i: Inst, type: str) -> Msg:
        c = self.cl[i]
        return Msg(type=type, tid=i[0], inst=i[1], epoch=c.epoch, gtx=(i[0], i[1], c.txn))

    def owns_input(self, i: Inst) -> bool:
        return self.gc.owner == i and self.cl[i].gen == self.gc.gen

    def _client_event(self, action: str, i: Inst, sent: Msg | None = None) -> None:
        ev = self.event(action, i[0])
        if sent is not None:
            self.with_msg(ev, sent)
        self.emit(self.with_client(ev, i))

    def start_instance_enabled(self, i: Inst) -> bool:
        c = self.cl[i]
        return not self.k.open_clients and c.st == "down" and (i[1] == 1 or self.cl[(i[0], i[1] - 1)].hung)

    def start_instance(self, i: Inst) -> None:
        c = self.cl[i]
        m = attrs.evolve(self.request(i, "InitProducerId"), gtx=(i[0], i[1], 0))
        c.st, c.out, c.req = "init", True, m
        self.send(m)
        self._client_event("StartInstance", i, m)

    def begin_txn_enabled(self, i: Inst) -> bool:
        c = self.cl[i]
        if c.st != "ready" or c.hung or c.txn >= self.k.txns_per_instance:
            return False
        return not self.k.ctp or (self.owns_input(i) and 0 <= c.pos < self.k.input_size)

    def begin_txn(self, i: Inst) -> None:
        c = self.cl[i]
        c.st, c.txn, c.pc, c.commit, c.decision = "intxn", c.txn + 1, self.k.first_pc, True, None
        self._client_event("BeginTxn", i)

    def next_request(self, i: Inst, commit: bool) -> Msg:
        c, k = self.cl[i], self.k
        pc = c.pc
        if pc == 1:
            return attrs.evolve(self.request(i, "AddPartitionsToTxn"), part=0)
        if pc == k.end_pc:
            return attrs.evolve(self.request(i, "EndTxn"), commit=commit)
        if k.ctp and not k.tv2 and pc == k.add_offsets_pc:
            return attrs.evolve(self.request(i, "AddOffsetsToTxn"), part=OFFSETS_PART)
        if k.ctp and pc == k.offset_commit_pc:
            return attrs.evolve(self.request(i, "TxnOffsetCommit"), part=OFFSETS_PART, val=c.pos + 1, gen=c.gen)
        p = k.part_of_pc(pc)
        return attrs.evolve(self.request(i, "Produce"), part=p, seq=c.seq[p], val=c.pos)

    def send_request_enabled(self, i: Inst) -> bool:
        """The client sends its next request. At EndTxn the application must have decided (it
        may abort: AppAborts)."""
        c, k = self.cl[i], self.k
        if c.st != "intxn" or c.hung or c.out:
            return False
        if c.pc == k.end_pc and c.fly:
            return False  # EndTxn waits for every batch
        if k.pipelined and k.is_produce_pc(c.pc):
            p = k.part_of_pc(c.pc)
            mine = [f for f in c.fly if f.part == p]
            # a batch waiting to be sent again goes first (RecordAccumulator.reenqueue)
            return len(mine) < k.max_in_flight and all(self.on_connection(f) for f in mine)
        # at EndTxn: None while the application has not called commit_transaction / abort_transaction
        return c.pc != k.end_pc or c.decision is not None

    def send_request(self, i: Inst) -> None:
        """After an abortable error the client must abort."""
        c, k = self.cl[i], self.k
        at_end = c.pc == k.end_pc
        commit = bool(c.commit and (c.decision if at_end and k.app_aborts else True))  # decided: the guard says so
        m = self.next_request(i, commit)
        if m.type == "Produce":  # which of the partition's records this batch carries
            self.batch_of[(m.tid, m.inst, m.gtx[2], m.part, m.seq)] = k.batch_of_pc(c.pc)
        if k.pipelined and k.is_produce_pc(c.pc):
            m = attrs.evolve(m, att=c.sent)
            c.fly.append(m)
            c.sent += 1
            c.pc += 1
            c.seq[m.part] += 1
        else:
            c.out, c.req, c.commit = True, m, commit
        self.send(m)
        self._client_event("SendRequest", i, m)

    def _batch_to_resend(self, i: Inst) -> Msg | None:
        """Pipelining: the batch to send again, the lowest sequence first, of those in fly that
        are no longer on their connection (RetryBatch; ProduceTimeoutBatch once retries are spent)."""
        c = self.cl[i]
        gone = [f for f in c.fly if not self.on_connection(f)]
        return min(gone, key=lambda f: (f.part, f.seq)) if gone else None

    def _can_retry_request(self, i: Inst) -> bool:
        c = self.cl[i]
        # out in "ready": the OffsetFetch of a CTP owner, retried like any other request
        if not c.out or c.hung or c.st not in ("init", "ready", "intxn"):
            return False
        late = self.in_flight(c.req)
        return not late or (c.req.type in self.k.late_requests and self.retries < self.k.max_retries)

    def _can_retry_batch(self, i: Inst) -> bool:
        c = self.cl[i]
        return (not c.hung and c.st == "intxn" and self.retries < self.k.max_retries
                and self._batch_to_resend(i) is not None)

    def retry_enabled(self, i: Inst) -> bool:
        """No answer in time: send the request again (RetryRequest). While a copy is still in
        flight (a late request type only), the new copy is a new attempt, and counts against
        MaxRetries. Pipelining: a batch no longer on its connection is sent again with a new
        send stamp (RetryBatch), in sequence order; these count against MaxRetries too."""
        return self._can_retry_batch(i) or self._can_retry_request(i)

    def retry(self, i: Inst) -> None:
        c = self.cl[i]
        if self._can_retry_batch(i):
            f = self._batch_to_resend(i)
            assert f is not None
            b = attrs.evolve(f, att=c.sent)
            c.fly[c.fly.index(f)] = b
            c.sent += 1
            self.retries += 1
            self.send(b)
            self._client_event("Retry", i, b)
            return
        if self.in_flight(c.req):
            self.retries += 1
            c.req = attrs.evolve(c.req, att=c.req.att + 1)
        self.send(c.req)
        self._client_event("Retry", i, c.req)

    def _batch_expires(self, i: Inst) -> bool:
        c = self.cl[i]
        return (not c.hung and c.st == "intxn" and self.retries >= self.k.max_retries
                and self._batch_to_resend(i) is not None)

    def produce_timeout_enabled(self, i: Inst) -> bool:
        """delivery.timeout.ms expires: the batch fails and the transaction must abort. With
        pipelining: a batch waiting to be sent again once the retries are spent."""
        c = self.cl[i]
        if self._batch_expires(i):
            return True
        if not (c.out and not c.hung and c.st == "intxn" and c.req.type == "Produce"):
            return False
        if not (self.k.produce_timeouts and self.retries < self.k.max_retries):
            return False
        return "Produce" in self.k.late_requests or not self.in_flight(c.req)

    def produce_timeout(self, i: Inst) -> None:
        c = self.cl[i]
        if self._batch_expires(i):
            f = self._batch_to_resend(i)
            assert f is not None
            c.fly.remove(f)
            self._must_abort(c)
            self.emit(self.with_client(self.event("ProduceTimeout", i[0], partition=f.part), i))
            return
        self.retries += 1
        part = c.req.part
        c.out, c.pc, c.commit, c.bump = False, self.k.end_pc, False, self.k.kip_bump
        ev = self.event("ProduceTimeout", i[0], partition=part)
        self.emit(self.with_client(ev, i))

    def _after_error(self, i: Inst, m: Msg) -> None:
        c = self.cl[i]
        if m.err in FENCING:
            c.st, c.out = "fenced", False
        elif m.type in ("ProduceResp", "TxnOffsetCommitResp"):
            c.out, c.pc, c.commit, c.bump = False, self.k.end_pc, False, self.k.kip_bump
        else:
            c.st, c.out = "failed", False

    def client_receive_enabled(self, m: Msg) -> bool:
        """Client (m.tid, m.inst) takes the answer it waits for (ClientReceive(i, m))."""
        i = (m.tid, m.inst)
        return i in self.cl and self.in_net(m) and not self.cl[i].hung and self.answers(i, m)

    def _must_abort(self, c: Client) -> None:
        """An abortable error while batches may still be unanswered: send no more batches, abort
        (at EndTxn, or after the outstanding request's answer), and bump the epoch then (KIP-360)."""
        c.commit, c.bump = False, self.k.kip_bump
        if not c.out:
            c.pc = self.k.end_pc

    def _batch_answer(self, i: Inst, m: Msg, f: Msg) -> None:
        """Pipelining: the answer ``m`` to batch ``f`` (AfterBatchAnswer): success retires it; a
        retriable error, or OUT_OF_ORDER_SEQUENCE_NUMBER while a lower batch is unanswered
        (TransactionManager.canRetry), leaves it to be sent again; fencing is fatal; any other
        error is abortable."""
        c = self.cl[i]
        if m.err in ("NONE", "DUPLICATE_SEQUENCE_NUMBER"):
            c.fly.remove(f)
        elif m.err in RETRIABLE or (
            m.err == "OUT_OF_ORDER_SEQUENCE_NUMBER" and any(g.part == f.part and g.seq < f.seq for g in c.fly)
        ):
            pass
        elif m.err in FENCING:
            c.st, c.out, c.fly = "fenced", False, []
        else:
            c.fly.remove(f)
            self._must_abort(c)

    def client_receive(self, m: Msg) -> None:
        i = (m.tid, m.inst)
        c = self.cl[i]
        self.take(m)
        k = self.k
        f = self.answered_batch(i, m)
        if f is not None:
            self._batch_answer(i, m, f)
        elif m.err in RETRIABLE:
            c.out = False
            if m.type == "InitProducerIdResp":
                c.pc = 0
        elif m.err not in ("NONE", "DUPLICATE_SEQUENCE_NUMBER"):
            self._after_error(i, m)
        elif m.type == "InitProducerIdResp":
            c.st = "done" if c.txn == k.txns_per_instance else "ready"
            c.out, c.epoch, c.seq, c.bump = False, m.epoch, {p: 0 for p in self.parts}, False
        elif m.type == "EndTxnResp":
            # KIP-360: after an abortable error, bump the epoch first (ReInit)
            c.st = "init" if c.bump else "done" if c.txn == k.txns_per_instance else "ready"
            c.out, c.epoch = False, m.epoch
            if k.tv2:
                c.seq = {p: 0 for p in self.parts}
            if k.ctp:  # after an abort the application seeks back to the committed offset
                c.pos = c.pos + 1 if c.commit else -1
        elif m.type == "OffsetFetchResp":
            c.out, c.pos = False, m.val
        elif m.type == "ProduceResp":
            c.out, c.pc = False, c.pc + 1
            c.seq[m.part] += 1
        else:  # (pipelining: a batch failed meanwhile, so the client aborts)
            c.out, c.pc = False, c.pc + 1 if c.commit else k.end_pc
        ev = self.with_msg(self.event("ClientReceive", i[0]), m)
        self.emit(self.with_client(ev, i))

    def re_init_enabled(self, i: Inst) -> bool:
        """After CONCURRENT_TRANSACTIONS on InitProducerId the client asks again."""
        c = self.cl[i]
        return c.st == "init" and not c.out and not c.hung

    def re_init(self, i: Inst) -> None:
        c = self.cl[i]
        # KIP-360: after an abort that needs an epoch bump, with the producer's id and epoch
        m = attrs.evolve(self.request(i, "InitProducerId"), gtx=(i[0], i[1], 0), epoch=c.epoch if c.bump else -1)
        c.out, c.req = True, m
        self.send(m)
        self._client_event("ReInit", i, m)

    def hang_enabled(self, i: Inst) -> bool:
        """A GC pause or VM freeze. Only an instance with a successor (or the group) hangs."""
        c = self.cl[i]
        if c.hung or self.hangs >= self.k.max_hangs or c.st not in ("init", "ready", "intxn"):
            return False
        has_successor = i[1] < self.k.num_instances and self.cl[(i[0], i[1] + 1)].st == "down"
        return has_successor or (self.k.ctp and self.gc.owner == i)

    def hang(self, i: Inst) -> None:
        self.cl[i].hung = True
        self.hangs += 1
        self._client_event("Hang", i)

    def resume_enabled(self, i: Inst) -> bool:
        """A hung instance resumes; replaced meanwhile, it is a zombie and does not know."""
        return self.cl[i].hung

    def resume(self, i: Inst) -> None:
        self.cl[i].hung = False
        self._client_event("Resume", i)

    def join_group_enabled(self, i: Inst) -> bool:
        c, gc = self.cl[i], self.gc
        if not (self.k.ctp and c.st == "ready" and not c.hung and not c.out and gc.owner != i):
            return False
        if gc.owner[0]:
            o = self.cl[gc.owner]
            return o.hung or o.st in ("fenced", "failed", "done")
        return True

    def join_group(self, i: Inst) -> None:
        c, gc = self.cl[i], self.gc
        gc.gen, gc.owner = gc.gen + 1, i
        c.gen, c.pos = gc.gen, -1
        ev = self.event("JoinGroup", i[0], group_generation=gc.gen, group_committed=gc.committed)
        self.emit(self.with_client(ev, i))

    def fetch_offset_enabled(self, i: Inst) -> bool:
        c = self.cl[i]
        return self.k.ctp and c.st == "ready" and not c.hung and not c.out and self.owns_input(i) and c.pos == -1

    def fetch_offset(self, i: Inst) -> None:
        c = self.cl[i]
        m = attrs.evolve(self.request(i, "OffsetFetch"), part=OFFSETS_PART)
        c.out, c.req = True, m
        self.send(m)
        self._client_event("FetchOffset", i, m)

    def input_done_enabled(self, i: Inst) -> bool:
        c = self.cl[i]
        if not (self.k.ctp and c.st == "ready" and not c.hung and not c.out and self.owns_input(i)):
            return False
        return c.pos == self.k.input_size

    def input_done(self, i: Inst) -> None:
        self.cl[i].st = "done"
        self._client_event("InputDone", i)

    # --- open clients (KafkaTxn: OpenRequest, ClientSend, ClientTake): real clients, txconform serve ---

    def open_request(self, m: Msg) -> bool:
        """A well-formed request of an open client (OpenRequest)."""
        k = self.k
        parts = self.parts if m.type in ("AddPartitionsToTxn", "Produce") else [OFFSETS_PART]
        return (m.type in OPEN_TYPES and m.tid in k.txn_ids and 1 <= m.inst <= k.num_instances and m.part in parts
                and m.gtx[:2] == (m.tid, m.inst) and m.gtx[2] >= 0 and (m.gtx[2] == 0) == (m.type == "InitProducerId")
                and m.err == "NONE" and m.cepoch == -1 and m.end_by == NO_GTX and m.att >= 0)

    def client_send_enabled(self, m: Msg) -> bool:
        """An open client sends request ``m`` (the server read it from a connection)."""
        return self.k.open_clients and self.open_request(m)

    def client_send(self, m: Msg) -> None:
        self.send(m)
        self.emit(self.with_msg(self.event("ClientSend", m.tid), m))

    def client_take_enabled(self, m: Msg) -> bool:
        """An answer is delivered to its open client (the server wrote it to the connection)."""
        return self.k.open_clients and self.in_net(m) and m.type in OPEN_RESPONSE_TYPES

    def client_take(self, m: Msg) -> None:
        self.take(m)
        self.emit(self.with_msg(self.event("ClientTake", m.tid), m))
