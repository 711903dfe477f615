"""The transaction coordinator (KafkaTxn: Tc* actions, Failover).

Per transactional.id: the producer epoch, the state, the partition set, and a pending transition.
Every transition takes two steps, as in Kafka's TransactionStateManager: validate and mark it
pending (requests meanwhile get CONCURRENT_TRANSACTIONS), then append it to __transaction_state
(``tlog``, durable) and apply it (``tc_append``). A failover loses memory, not the log.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from .messages import NO_GTX, Gtx, Msg, is_fence
from .state import ClusterState, Coord, Pending, TxnEntry
from .states import PREPARED


def fence_gtx(t: str, k: int) -> Gtx:
    """The ghost requester of a fence: instance k's InitProducerId (txn 0)."""
    return (t, k, 0)


# The entry of a failed append that the bug "append_fail_keeps_pending" keeps pending (FailedSt).
FAILED_ST = "AppendFailed"


def timeout_gtx(t: str) -> Gtx:
    """The ghost requester of the coordinator's timeout abort of t (KafkaTxn: TimeoutGtx)."""
    return (t, 0, -1)


class CoordinatorActions(ClusterState):
    def busy(self, t: str) -> bool:
        c = self.tc[t]
        return (bool(c.pending) or c.st in PREPARED) and not self.k.bug("no_pending_check")

    def mark_pending(self, t: str, entry: TxnEntry, replies: Iterable[Msg]) -> None:
        self.tc[t].pending.append(Pending(entry, list(replies)))

    def _tc_event(self, action: str, m: Msg, result: str | None) -> None:
        ev = self.with_msg(self.event(action, "coordinator"), m)
        ev["result"] = result
        self.emit(self.with_coord(ev, m.tid))

    def _reply_now(self, action: str, m: Msg, reply: Msg) -> None:
        self.take(m)
        self.send(reply)
        self._tc_event(action, m, reply.err)

    def _pend(self, action: str, m: Msg, entry: TxnEntry, replies: list[Msg]) -> None:
        self.take(m)
        self.mark_pending(m.tid, entry, replies)
        self._tc_event(action, m, replies[0].err if replies else None)

    def valid_producer_id(self, e: int, c: int) -> bool:
        """KIP-360 (isValidProducerId): the current producer id, or the one before it with an
        exhausted epoch (the retry of a bump that rotated it) (KafkaTxn: ValidProducerId)."""
        k = self.k
        return c == -1 or k.pid_of(e) == k.pid_of(c) or (k.pid_of(e) + 1 == k.pid_of(c) and k.exhausted(e))

    def tc_init_producer_id_enabled(self, m: Msg) -> bool:
        return self.in_net(m) and m.type == "InitProducerId"

    def tc_init_producer_id(self, m: Msg) -> None:
        t, c, k = m.tid, self.tc[m.tid], self.k
        # an exhausted epoch gets a new producer id (prepareProducerIdRotation)
        bumped = (0 if c.epoch == -1 else c.epoch if k.bug("no_epoch_bump")
                  else k.new_pid(c.epoch) if k.exhausted(c.epoch) else c.epoch + 1)
        expected = m.epoch >= 0  # KIP-360: a running producer gives its producer id and epoch
        if self.busy(t) or c.st in PREPARED:
            self._reply_now("TcInitProducerId", m, m.reply("CONCURRENT_TRANSACTIONS"))
        elif expected and not self.valid_producer_id(m.epoch, c.epoch):  # noqa: SIM114 (two rules, kept apart)
            self._reply_now("TcInitProducerId", m, m.reply("PRODUCER_FENCED"))
        elif expected and c.st != "Ongoing" and c.epoch != -1 and m.epoch not in (c.epoch, c.last):
            self._reply_now("TcInitProducerId", m, m.reply("PRODUCER_FENCED"))
        elif c.st == "Ongoing" and k.bug("fence_bump_on_failed_append") and k.epoch_of(c.epoch) == k.max_epoch:
            # before KAFKA-9666 and KAFKA-20090, prepareFenceProducerEpoch threw at Short.MaxValue
            self._reply_now("TcInitProducerId", m, m.reply("UNKNOWN_SERVER_ERROR"))
        elif c.st == "Ongoing":
            # Fence: abort the open transaction under a bumped epoch (KafkaTxn: FenceEpoch) and tell
            # the new instance to retry once that is done.
            epoch = c.epoch if k.bug("no_epoch_bump") else k.fence_epoch(c.epoch)
            entry = TxnEntry("PrepareAbort", epoch, c.parts, c.gtx, fence_gtx(t, m.inst), c.last)
            self._pend("TcInitProducerId", m, entry, [m.reply("CONCURRENT_TRANSACTIONS")])
        else:
            # KIP-360: given the producer's epoch, bump it; the retry of a bump (the given epoch is
            # the last one) gets the current epoch again (prepareIncrementProducerEpoch)
            nxt = bumped if not expected or m.epoch == c.epoch or c.epoch == -1 else c.epoch
            last = -1 if not expected else c.last if nxt == c.epoch else c.epoch
            entry = TxnEntry("Empty", nxt, frozenset(), fence_gtx(t, m.inst), NO_GTX, last)
            self._pend("TcInitProducerId", m, entry, [m.reply("NONE", epoch=nxt)])

    def rotating(self, t: str, e: int) -> bool:
        """TV2: t's transaction is being ended with a new producer id to follow, and e is that id."""
        c, k = self.tc[t], self.k
        return (k.tv2 and k.epoch_of(c.epoch) == k.max_epoch and e == k.new_pid(c.epoch)
                and (c.st in PREPARED or any(p.entry.st in PREPARED for p in c.pending)))

    def tc_add_partitions(self, action: str, m: Msg, parts: frozenset[int], reply: Msg) -> None:
        t, c, k = m.tid, self.tc[m.tid], self.k
        if m.epoch != c.epoch and self.rotating(t, m.epoch):
            # the new producer id before the rotation completed: wait (KAFKA-18660's second fix)
            self._reply_now(action, m, attrs.evolve(reply, err="CONCURRENT_TRANSACTIONS"))
        elif m.epoch != c.epoch:
            if m.epoch < c.epoch:
                err = k.fenced_error(m.epoch, c.epoch)
            else:
                err = "INVALID_PRODUCER_ID_MAPPING" if k.pid_of(m.epoch) != k.pid_of(c.epoch) else "INVALID_PRODUCER_EPOCH"
            self._reply_now(action, m, attrs.evolve(reply, err=err))
        elif self.busy(t) or c.st in PREPARED:
            self._reply_now(action, m, attrs.evolve(reply, err="CONCURRENT_TRANSACTIONS"))
        elif c.st == "Ongoing" and parts <= c.parts:
            self._reply_now(action, m, reply)
        else:
            gtx = c.gtx if c.st == "Ongoing" else m.gtx
            self._pend(action, m, TxnEntry("Ongoing", c.epoch, c.parts | parts, gtx, NO_GTX, c.last), [reply])

    def tc_add_partitions_to_txn_enabled(self, m: Msg) -> bool:
        return self.in_net(m) and m.type == "AddPartitionsToTxn"

    def tc_add_partitions_to_txn(self, m: Msg) -> None:
        # the fixed program adds every partition; an open client names one
        parts = frozenset({m.part}) if self.k.open_clients else frozenset(self.parts)
        self.tc_add_partitions("TcAddPartitionsToTxn", m, parts, m.reply("NONE"))

    def tc_add_offsets_to_txn_enabled(self, m: Msg) -> bool:
        return self.in_net(m) and m.type == "AddOffsetsToTxn"

    def tc_add_offsets_to_txn(self, m: Msg) -> None:
        self.tc_add_partitions("TcAddOffsetsToTxn", m, frozenset({0}), m.reply("NONE"))

    def tc_verify_enabled(self, m: Msg) -> bool:
        """A leader asks before appending m's batch: TV2, to add partition m.part; TV1V, whether it
        is in the transaction."""
        return self.in_net(m) and m.type == "Verify"

    def verify_only(self, m: Msg) -> str:
        """TV1V (handleVerifyPartitionsInTransaction): the pending state is not checked; a partition
        not in the transaction is TRANSACTION_ABORTABLE (KafkaTxn: VerifyOnly)."""
        c = self.tc[m.tid]
        if m.epoch != c.epoch:
            return self.k.fenced_error(m.epoch, c.epoch)
        if self.k.bug("verify_checks_pending") and c.pending:
            return "CONCURRENT_TRANSACTIONS"  # KAFKA-14904: as AddPartitionsToTxn checks
        if c.st in PREPARED:
            return "CONCURRENT_TRANSACTIONS"
        return "NONE" if c.st == "Ongoing" and m.part in c.parts else "TRANSACTION_ABORTABLE"

    def tc_verify(self, m: Msg) -> None:
        if self.k.tv2:
            self.tc_add_partitions("TcVerify", m, frozenset({m.part}), m.reply("NONE"))
        else:
            self._reply_now("TcVerify", m, m.reply(self.verify_only(m)))

    def abort_bumps(self, t: str) -> bool:
        """Kafka 4.x, TV2 (KAFKA-14563): an EndTxn(abort) at the current epoch with no transaction
        open bumps the epoch and aborts; before 4.0 ("tv2_endtxn_before_4_0") it was refused."""
        return self.k.tv2 and not self.k.bug("tv2_endtxn_before_4_0") and self.tc[t].st in ("Empty", "CompleteCommit", "CompleteAbort")

    def end_txn_epoch_valid(self, t: str, e: int) -> bool:
        c = self.tc[t]
        if not self.k.tv2:
            return e == c.epoch
        if c.st in ("Ongoing", "Empty"):
            return e == c.epoch
        if self.abort_bumps(t) and e == c.epoch:
            return True
        k = self.k
        # TV2: a retry of the EndTxn that bumped the epoch, or that rotated the producer id (retryOnOverflow)
        return e + 1 == c.epoch or (
            c.st in ("CompleteCommit", "CompleteAbort") and k.epoch_of(c.epoch) == 0
            and k.pid_of(e) + 1 == k.pid_of(c.epoch) and k.epoch_of(e) == k.max_epoch - 1
        )

    def tc_end_txn_enabled(self, m: Msg) -> bool:
        return self.in_net(m) and m.type == "EndTxn"

    def tc_end_txn(self, m: Msg) -> None:
        t, c, k = m.tid, self.tc[m.tid], self.k
        done = "CompleteCommit" if m.commit else "CompleteAbort"
        prep = "PrepareCommit" if m.commit else "PrepareAbort"
        new_epoch = c.epoch + 1 if k.tv2 else c.epoch
        # TV2: the epoch the client goes on with; at max_epoch the producer id rotates (KAFKA-18660:
        # the client got the old id and max_epoch)
        rotates = k.tv2 and k.epoch_of(new_epoch) == k.max_epoch and not k.bug("tv2_overflow_wrong_pid")
        given = k.new_pid(c.epoch) if rotates else new_epoch
        abort_bumps = not m.commit and self.abort_bumps(t) and m.epoch == c.epoch
        if not self.end_txn_epoch_valid(t, m.epoch):
            self._reply_now("TcEndTxn", m, m.reply(k.fenced_error(m.epoch, c.epoch)))
        elif self.busy(t):
            self._reply_now("TcEndTxn", m, m.reply("CONCURRENT_TRANSACTIONS"))
        elif k.tv2 and k.epoch_of(c.epoch) == k.max_epoch and (c.st == "Ongoing" or abort_bumps):
            # the bump would overflow (prepareAbortOrCommit: an illegal epoch)
            self._reply_now("TcEndTxn", m, m.reply("UNKNOWN_SERVER_ERROR"))
        elif c.st == "Ongoing":
            entry = TxnEntry(prep, new_epoch, c.parts, c.gtx, m.gtx, c.last)
            self._pend("TcEndTxn", m, entry, [m.reply("NONE", epoch=given)])
        elif abort_bumps:
            # 4.x: abort whatever may still arrive; no partitions yet, so no markers
            entry = TxnEntry("PrepareAbort", c.epoch + 1, frozenset(), m.gtx, m.gtx, c.last)
            self._pend("TcEndTxn", m, entry, [m.reply("NONE", epoch=given)])
        elif c.st == done:
            self._reply_now("TcEndTxn", m, m.reply("NONE", epoch=c.epoch))
        elif c.st == prep:
            self._reply_now("TcEndTxn", m, m.reply("CONCURRENT_TRANSACTIONS"))
        else:
            self._reply_now("TcEndTxn", m, m.reply("INVALID_TXN_STATE"))

    def markers(self, t: str, entry: TxnEntry, cepoch: int) -> list[Msg]:
        return [
            Msg(
                type="WriteTxnMarkers",
                tid=t,
                epoch=entry.epoch,
                part=p,
                commit=entry.st == "PrepareCommit",
                cepoch=cepoch,
                gtx=entry.gtx,
                end_by=entry.end_by,
            )
            for p in sorted(entry.parts)
        ]

    def tc_append_enabled(self, t: str) -> bool:
        """The pending transition reaches __transaction_state: apply it, answer, and once
        PrepareCommit/PrepareAbort is durable, send the markers."""
        return bool(self.tc[t].pending) and self.tc[t].pending[0].entry.st != FAILED_ST

    def tc_append(self, t: str) -> None:
        c = self.tc[t]
        head = c.pending[0]
        e = head.entry
        prepared = e.st in PREPARED
        self.tlog[t].append(e)
        self.tc[t] = Coord(e.st, e.epoch, e.parts, e.gtx, e.end_by, set(e.parts) if prepared else set(), c.pending[1:], e.last)
        self.send(*head.replies)
        if prepared:
            self.send(*self.markers(t, e, self.cepoch))
        ev = self.event("TcAppend", "coordinator", txn_id=t, txn_partitions=sorted(e.parts))
        self.emit(self.with_coord(ev, t))

    def tc_append_fail_enabled(self, t: str) -> bool:
        """The append of the head pending transition fails without a failover (MaxAppendFails)."""
        pending = self.tc[t].pending
        return self.append_fails < self.k.max_append_fails and bool(pending) and pending[0].entry.st != FAILED_ST

    def tc_append_fail(self, t: str) -> None:
        # TransactionStateManager.appendTransactionToLog: the pending state is reset and the waiting
        # request answered COORDINATOR_NOT_AVAILABLE; KAFKA-5351 ("append_fail_keeps_pending") left
        # the transition pending for good.
        c = self.tc[t]
        head = c.pending[0]
        self.append_fails += 1
        self.send(*(attrs.evolve(r, err="COORDINATOR_NOT_AVAILABLE") for r in head.replies))
        if self.k.bug("append_fail_keeps_pending"):
            c.pending[0] = Pending(attrs.evolve(head.entry, st=FAILED_ST), [])
        else:
            c.pending.pop(0)
        if self.k.bug("fence_bump_on_failed_append") and self.is_fence_entry(t, head.entry):
            c.epoch = head.entry.epoch  # KAFKA-9666: the failed fence's bump stays in memory
        self.emit(self.with_coord(self.event("TcAppendFail", "coordinator", txn_id=t), t))

    def tc_marker_ack_enabled(self, m: Msg) -> bool:
        return self.in_net(m) and m.type == "WriteTxnMarkersResp"

    def tc_marker_ack(self, m: Msg) -> None:
        self.take(m)
        c = self.tc[m.tid]
        if m.cepoch == self.cepoch and c.st in PREPARED and m.epoch == c.epoch:
            c.todo.discard(m.part)
        # else: an answer to an earlier coordinator epoch or transaction, ignored
        ev = self.with_msg(self.event("TcMarkerAck", "coordinator"), m)
        self.emit(self.with_coord(ev, m.tid))

    def tc_complete_enabled(self, t: str) -> bool:
        """Every marker is written: log CompleteCommit / CompleteAbort."""
        c = self.tc[t]
        return c.st in PREPARED and not c.todo and not c.pending

    def is_fence_entry(self, t: str, e: TxnEntry) -> bool:
        """Is e the abort of a fence (by an InitProducerId or a timeout)? (KafkaTxn: IsFenceEntry)"""
        return e.st == "PrepareAbort" and (is_fence(e.end_by) or e.end_by == timeout_gtx(t))

    def complete_epoch(self, t: str) -> int:
        """TV2: a transaction ended at max_epoch completes with the next producer id at epoch 0
        (prepareComplete); "fence_no_rotation" (KAFKA-20090): not when the abort was a fence."""
        c, k = self.tc[t], self.k
        fence = self.is_fence_entry(t, TxnEntry(c.st, c.epoch, frozenset(c.parts), c.gtx, c.end_by, c.last))
        if k.tv2 and k.epoch_of(c.epoch) == k.max_epoch and not (k.bug("fence_no_rotation") and fence):
            return k.new_pid(c.epoch)
        return c.epoch

    def tc_complete(self, t: str) -> None:
        c = self.tc[t]
        st = "CompleteCommit" if c.st == "PrepareCommit" else "CompleteAbort"
        self.mark_pending(t, TxnEntry(st, self.complete_epoch(t), frozenset(), c.gtx, c.end_by, c.last), [])
        self.emit(self.with_coord(self.event("TcComplete", "coordinator", txn_id=t), t))

    def tc_timeout_abort_enabled(self, t: str) -> bool:
        """The transaction timed out (transaction.timeout.ms): the coordinator aborts it itself."""
        k, c = self.k, self.tc[t]
        if k.bug("fence_bump_on_failed_append") and k.epoch_of(c.epoch) == k.max_epoch:
            return False  # before KAFKA-20090 the fence threw at Short.MaxValue
        return k.txn_timeouts and c.st == "Ongoing" and not self.busy(t)

    def tc_timeout_abort(self, t: str) -> None:
        # TransactionCoordinator.abortTimedOutTransactions: fence the epoch (PrepareEpochFence),
        # then end the transaction as an abort; one step here, as KafkaTxn's TcTimeoutAbort
        # (FenceEpoch: TV2 bumps once more, as every EndTxn does, never past max_epoch).
        c = self.tc[t]
        epoch = self.k.fence_epoch(c.epoch)
        self.mark_pending(t, TxnEntry("PrepareAbort", epoch, c.parts, c.gtx, timeout_gtx(t), c.last), [])
        self.emit(self.with_coord(self.event("TcTimeoutAbort", "coordinator", txn_id=t), t))

    def failover_enabled(self) -> bool:
        """A new coordinator (epoch + 1) loads __transaction_state and re-sends pending markers."""
        return self.failovers < self.k.max_failovers

    def failover(self) -> None:
        self.failovers += 1
        self.cepoch += 1
        for t in self.k.txn_ids:
            if not self.tlog[t]:
                self.tc[t] = Coord()
                continue
            e = self.tlog[t][-1]
            prepared = e.st in PREPARED
            self.tc[t] = Coord(e.st, e.epoch, e.parts, e.gtx, e.end_by, set(e.parts) if prepared else set(), [], e.last)
            if prepared:
                self.send(*self.markers(t, e, self.cepoch))
        self.emit(self.event("Failover", "coordinator"))

    def tc_resend_marker_enabled(self, t: str, p: int) -> bool:
        """A marker of the current coordinator epoch is neither in flight nor answered: send it again."""
        c = self.tc[t]
        if c.st not in PREPARED or p not in c.todo:
            return False
        return not any(
            n.type in ("WriteTxnMarkers", "WriteTxnMarkersResp") and n.tid == t and n.part == p and n.cepoch == self.cepoch
            for n in self.net
        )

    def tc_resend_marker(self, t: str, p: int) -> None:
        c = self.tc[t]
        entry = TxnEntry(c.st, c.epoch, frozenset({p}), c.gtx, c.end_by, c.last)
        self.send(*self.markers(t, entry, self.cepoch))
        self.emit(self.with_coord(self.event("TcResendMarker", "coordinator", txn_id=t, partition=p), t))
