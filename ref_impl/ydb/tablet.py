"""PQ tablets "A" and "B" and the datashard "DS" (YdbTopics: "Tablet B", "Proposal and plan",
"Calculation, read sets, execution", and the tablets' restart): supportive partitions, the
durable and volatile transaction states, read sets, and the partitions' commit writes.

``reason`` is the trace's word for why a predicate failed (docs/trace-format.md, "YDB"):
``Gap`` (the consumer's committed offset is behind the range's begin), ``Conflict`` (it is past
it: another transaction committed the range), ``BehindEnd`` (the range ends past the
partition's end), ``WriteIdDeleted`` (a supportive partition of the WriteId was deleted: the lock
was lost or the proposal expired), ``WriteIdMissing`` (a write never reached its supportive
partition), ``MinSeqNo`` (the producer's first SeqNo in the transaction is not above its last
one on the partition), ``LocksBroken`` (the table's lock is gone or its row is missing).
"""

from __future__ import annotations

from .state import (
    ABORT,
    COMMIT,
    CONSUMER,
    GONE_STATES,
    NONE,
    RS,
    RS_ACK,
    WRITE,
    Durable,
    NetMsg,
    State,
    Sup,
    Volatile,
    read_set,
    read_set_ack,
)

WAITING = ("PREPARED", "PLANNED", "WAIT_RS")
DECIDED = ("WAIT_RS", "EXECUTING", "WAIT_RS_ACKS")


class TabletSteps(State):
    # --- predicates ---

    def range_ok(self, tx: int, k: int) -> bool:
        """RangeOk(tx, k): the read predicate on partition k of A."""
        (b, e), c, end = self.range_on(tx, k), self.committed[k], self.k.msgs_per_src
        return (
            self.applied_at("A", k, tx)
            or self.k.bug("no_offset_check")
            or (self.k.bug("overlap_check") and b <= c < e)
            or (self.k.bug("no_gap_check") and c <= b and e <= end)
            or (c == b and b <= e <= end)
            or (self.k.bug("first_range_only") and k != self.kqp[tx].src)
        )

    def read_predicate(self, tx: int) -> bool:
        """ReadPredicate(tx): every partition of A the transaction read passes."""
        return all(self.range_ok(tx, k) for k in self.parts_of("A", tx))

    def last_seq_no(self, d: int, p: int) -> int:
        """LastSeqNo(d, p): what the MinSeqNo check compares with (with seqno_ignores_plain, the
        producer's transactional writes only)."""
        if not self.k.bug("seqno_ignores_plain"):
            return self.producer_last(d, p)
        return max((m.off + 1 for m in self.target[d] if m.src == p and m not in self.plain), default=0)

    def seq_no_ok(self, tx: int, d: int) -> bool:
        """SeqNoOk(tx, d): per SourceId, the first SeqNo the transaction wrote to d is above that
        producer's last one (with seqno_first_source, the first message's producer only)."""
        data = self.sup[tx][d].data
        seen: set[int] = set()
        for i, m in enumerate(data):
            first = i == 0 if self.k.bug("seqno_first_source") else m.src not in seen
            seen.add(m.src)
            if first and not m.off + 1 > self.last_seq_no(d, m.src):
                return False
        return True

    def seq_no_predicate(self, tx: int) -> bool:
        """SeqNoPredicate(tx): the MinSeqNo check (partition.cpp ApplyWriteInfoResponse)."""
        if self.k.producers == "none" or self.k.bug("no_seqno_check"):
            return True
        return all(self.applied_at("B", d, tx) or self.seq_no_ok(tx, d) for d in self.kqp[tx].dsts)

    def active(self, d: int) -> bool:
        """Active(d): no split made partition d of B inactive (CanWrite); with split_ignored, always."""
        return self.sealed[d] == -1 or self.k.bug("split_ignored")

    def write_predicate(self, tx: int) -> bool:
        present = all(self.applied_at("B", d, tx) or (self.sup[tx][d].st in ("open", "closed") and self.active(d))
                      for d in self.kqp[tx].dsts)
        return present and self.seq_no_predicate(tx)

    def predicate(self, t: str, tx: int) -> bool:
        if t == "A":
            return self.read_predicate(tx)
        if t == "B":
            return self.write_predicate(tx)
        return self.table_predicate(tx)

    def reason(self, t: str, tx: int) -> str:
        """Why participant t's check of tx fails, in the trace's words."""
        s = self.kqp[tx]
        if t == "A":
            k = s.src2 if s.src2 and self.range_ok(tx, s.src) else s.src
            c, b = self.committed[k], self.range_on(tx, k)[0]
            return "Gap" if c < b else "Conflict" if c > b else "BehindEnd"
        if t == "B":
            if any(self.sup[tx][d].st in ("deleted", "done") for d in s.dsts):
                return "WriteIdDeleted"
            if any(self.sup[tx][d].st == "none" for d in s.dsts):
                return "WriteIdMissing"
            return "Inactive" if any(self.sealed[d] != -1 for d in s.dsts) else "MinSeqNo"
        return "LocksBroken"

    def table_predicate(self, tx: int) -> bool:
        """TablePredicate(tx): the lock holds and nobody committed a write of the row since tx read it."""
        return self.kqp[tx].lock == "alive" and (self.k.bug("no_table_lock") or self.urows[tx] == len(self.rows))

    def blocks_row(self, x: int, tx: int) -> bool:
        """BlocksRow(x, tx): x is calculated and not yet executed on the datashard."""
        return x != tx and self.ptx["DS"][x].st in ("WAIT_RS", "EXECUTING")

    def blocks_consumer(self, x: int, tx: int) -> bool:
        """BlocksConsumer(x, tx): x is calculated and not yet executed on a partition of A tx reads too."""
        return (x != tx and self.ptx["A"][x].st in ("WAIT_RS", "EXECUTING")
                and bool(self.parts_of("A", x) & self.parts_of("A", tx)))

    def blocks_producer(self, x: int, tx: int) -> bool:
        """BlocksProducer(x, tx): x, of the same producer, is calculated and not yet executed on B."""
        return (x != tx and self.ptx["B"][x].st in ("WAIT_RS", "EXECUTING")
                and bool(self.tx_producers_of(x) & self.tx_producers_of(tx))
                and bool(self.kqp[x].dsts & self.kqp[tx].dsts))

    def in_queue(self, t: str) -> list[int]:
        return [x for x in self.started() if self.ptx[t][x].st in ("PLANNED", "WAIT_RS", "EXECUTING")]

    def _tx_cols(self, t: str, tx: int) -> dict[str, object]:
        return {"tablet": t, "txn_id": tx, "tx_state": self.ptx[t][tx].st}

    # --- PqWrite(m) ---

    def pq_write_enabled(self, m: NetMsg) -> bool:
        if m.type != WRITE or m not in self.net:
            return False
        # InOrder(m): a writer's session is a stream: a partition gets each producer's writes of a
        # transaction in order
        return not any(n.type == WRITE and n.tx == m.tx and n.dst == m.dst and n.m.src == m.m.src and n.m.off < m.m.off
                       for n in self.net)

    def write_accepted(self, m: NetMsg) -> bool:
        """WriteAccepted(m): the supportive partition is there, or not yet created and its partition
        active (one created after a split is inactive: pq_impl.cpp MakeSupportivePartitionConfig)."""
        s = self.sup[m.tx][m.dst]
        return (s.st == "open" or (s.st == "none" and self.sealed[m.dst] == -1)
                or (self.k.bug("lock_race") and s.st == "deleted"))

    def write_repeated(self, m: NetMsg) -> bool:
        """WriteRepeated(m): the producer already wrote this SeqNo (or a later one) to the
        supportive partition: AlreadyWritten (partition_write.cpp AnswerCurrentWrites)."""
        s = self.sup[m.tx][m.dst]
        return (not self.k.bug("no_write_dedup") and s.st == "open"
                and any(x.src == m.m.src and x.off >= m.m.off for x in s.data))

    def _store_write(self, m: NetMsg) -> None:
        """StoreWrite(m)."""
        tx, d = m.tx, m.dst
        s = self.sup[tx][d]
        if self.write_repeated(m):
            return
        if self.k.bug("visible_before_commit"):
            self.target[d].append(m.m)
            self.sup[tx][d] = Sup("open", [])
        else:
            self.sup[tx][d] = Sup("open", [m.m] if s.st == "deleted" else [*s.data, m.m])

    def pq_write(self, m: NetMsg) -> None:
        tx, d = m.tx, m.dst
        accept = self.write_accepted(m)
        name = "PqWriteRefused" if not accept else "PqWriteSkipped" if self.write_repeated(m) else "PqWrite"
        if name == "PqWriteSkipped":
            self.skipped.add(m.m)
        if accept:
            self._store_write(m)
            self.wacked[tx].add(m.m)
        self.take(m)
        self.emit(name, "B", (("txn_id", tx), ("partition", d), ("off", m.m.off)),
                  tablet="B", txn_id=tx, partition=d, topic="B", write_id=tx, offset=m.m.off, producer=self.logged_producer(m.m),
                  log_end=len(self.target[d]))

    # --- PqWriteAckLost(m): stored, its acknowledgement lost (a fault) ---

    def pq_write_ack_lost_enabled(self, m: NetMsg) -> bool:
        return self.reconnects < self.k.max_reconnects and self.pq_write_enabled(m) and self.write_accepted(m)

    def pq_write_ack_lost(self, m: NetMsg) -> None:
        tx, d = m.tx, m.dst
        self._store_write(m)
        self.take_with_stream(m)
        self.emit("PqWriteAckLost", "B", (("txn_id", tx), ("partition", d), ("off", m.m.off)),
                  tablet="B", txn_id=tx, partition=d, topic="B", write_id=tx, offset=m.m.off, producer=self.logged_producer(m.m),
                  log_end=len(self.target[d]))

    # --- PqLockLost(tx) ---

    def pq_lock_lost_enabled(self, tx: int) -> bool:
        s = self.kqp[tx]
        return (s.st != "none" and s.lock == "lost" and self.pdur["B"][tx].st == "NONE"
                and any(self.sup[tx][d].st in ("none", "open") for d in self.k.dst_parts))

    def pq_lock_lost(self, tx: int) -> None:
        for d in self.k.dst_parts:
            if self.sup[tx][d].st in ("none", "open"):
                self.sup[tx][d] = Sup("deleted", [])
        self.emit("PqLockLost", "B", (("txn_id", tx),), tablet="B", txn_id=tx, topic="B", write_id=tx)

    # --- PqPropose(t, tx) ---

    def _propose_ok(self, t: str, tx: int) -> bool:
        s = self.kqp[tx]
        if t == "B":
            return all(self.sup[tx][d].st == "open" for d in s.dsts)
        if t == "DS":
            return s.lock == "alive"
        return True

    def pq_propose_enabled(self, t: str, tx: int) -> bool:
        s = self.kqp[tx]
        return (s.st == "proposing" and not self.immediate(tx) and not self.expired[tx] and t in self.participants(tx)
                and t not in s.prepared and not s.refused and self.pdur[t][tx].st == "NONE")

    def pq_propose(self, t: str, tx: int) -> None:
        s = self.kqp[tx]
        ok = self._propose_ok(t, tx)
        depth = s.depth + 1
        reason: str | None = None
        if ok:
            self.pdur[t][tx] = Durable(st="PREPARED", depth=depth)
            self.ptx[t][tx] = Volatile(st="PREPARED", depth=depth)
            s.prepared.add(t)
        else:
            reason = self.reason(t, tx)
            self.why_aborted.setdefault(tx, reason)
            s.refused = True
        self.emit("PqPropose", t, (("txn_id", tx), ("prepared", 1 if ok else 0)),
                  result="PREPARED" if ok else "REFUSED", reason=reason, **self._tx_cols(t, tx))

    # --- Expire(t, tx) ---

    def expire_enabled(self, t: str, tx: int) -> bool:
        if self.ptx[t][tx].st != "PREPARED":
            return False
        p = self.plan[tx]
        return (self.expired[tx] and p == 0) or (p != 0 and (p, tx) not in self.pending[t])

    def expire(self, t: str, tx: int) -> None:
        self.ptx[t][tx].st = "EXPIRED"
        self.pdur[t][tx].st = "EXPIRED"
        if t == "B":
            self.sup[tx] = {d: Sup("done", []) for d in self.k.dst_parts}
        self.emit("Expire", t, (("txn_id", tx),), **self._tx_cols(t, tx))

    # --- PqPlanStep(t) ---

    def plan_step_of(self, t: str) -> tuple[int, int] | None:
        """The plan step the mediator delivers to t next: the earliest of a PREPARED transaction."""
        ready = [s for s in self.pending[t] if self.ptx[t][s[1]].st == "PREPARED"]
        return min(ready) if ready else None

    def pq_plan_step_enabled(self, t: str) -> bool:
        return self.plan_step_of(t) is not None

    def pq_plan_step(self, t: str) -> None:
        s = self.plan_step_of(t)
        assert s is not None
        step, tx = s
        v25 = self.k.version == "v25"
        depth = self.kqp[tx].pdepth + 1 if v25 else self.kqp[tx].pdepth
        v = self.ptx[t][tx]
        v.st, v.step, v.depth = "PLANNED", step, depth
        if v25:
            d = self.pdur[t][tx]
            d.st, d.step, d.depth = "PLANNED", step, depth
        if self.k.bug("ack_plan_on_receipt"):
            self.pending[t].discard(s)
        self.emit("PqPlanStep", t, (("txn_id", tx), ("step", step)), step=step, **self._tx_cols(t, tx))

    # --- PqCalc(t, tx) ---

    def pq_calc_enabled(self, t: str, tx: int) -> bool:
        v = self.ptx[t][tx]
        if v.st != "PLANNED":
            return False
        if any(self.ptx[t][x].st == "PLANNED" and self.ptx[t][x].step < v.step for x in self.started()):
            return False
        return not self._consumer_or_producer_blocked(t, tx)

    def pq_calc(self, t: str, tx: int) -> None:
        v = self.ptx[t][tx]
        own = COMMIT if self.predicate(t, tx) else ABORT
        reason = self.reason(t, tx) if own == ABORT else None
        if reason is not None:
            self.why_aborted.setdefault(tx, reason)
        v25 = self.k.version == "v25"
        depth = v.depth + 1 if v25 else v.depth
        solo = self.k.bug("independent_decision")
        v.st, v.own, v.dec, v.depth = ("EXECUTING" if solo else "WAIT_RS"), own, (own if solo else NONE), depth
        if v25:
            d = self.pdur[t][tx]
            d.st, d.dec, d.depth = "WAIT_RS", own, depth
        if not solo:
            self.send(*(read_set(t, q, tx, own, depth) for q in self.peers_of(t, tx)))
        self.votes[t][tx] = own
        if t == "B":
            for sp in self.sup[tx].values():
                if sp.st == "open":
                    sp.st = "closed"
        a = t == "A"
        self.emit("PqCalc", t, (("txn_id", tx), ("step", v.step), ("commit", 1 if own == COMMIT else 0)),
                  step=v.step, decision=own, reason=reason, committed_offset=self.committed[self.kqp[tx].src] if a else None,
                  topic="A" if a else None, group=CONSUMER if a else None, **self._tx_cols(t, tx))

    # --- PqReadSet(m) ---

    def pq_read_set_enabled(self, m: NetMsg) -> bool:
        return m.type == RS and m in self.net

    def pq_read_set(self, m: NetMsg) -> None:
        t, tx = m.to, m.tx
        v = self.ptx[t][tx]
        waiting, executing = v.st in WAITING, v.st == "EXECUTING"
        if waiting:
            v.rs.add(m.frm)
            v.abort_seen = v.abort_seen or m.dec == ABORT
            v.rsdepth = max(v.rsdepth, m.depth)
        elif executing:
            v.rs.add(m.frm)
        self.take(m)
        if (not waiting and not executing) or self.k.bug("ack_rs_before_persist"):
            self.send(read_set_ack(t, m.frm, tx))
        self.emit("PqReadSet", t, (("txn_id", tx), ("commit", 1 if m.dec == COMMIT else 0)),
                  peer=m.frm, decision=m.dec, **self._tx_cols(t, tx))

    # --- PqExecute(t, tx) ---

    def pq_execute_enabled(self, t: str, tx: int) -> bool:
        v = self.ptx[t][tx]
        if v.st != "WAIT_RS" or v.rs != set(self.peers_of(t, tx)):
            return False
        return all(v.step <= self.ptx[t][x].step for x in self.in_queue(t))

    def pq_execute(self, t: str, tx: int) -> None:
        v = self.ptx[t][tx]
        v.dec = COMMIT if v.own == COMMIT and not v.abort_seen else ABORT
        v.st = "EXECUTING"
        self.emit("PqExecute", t, (("txn_id", tx), ("commit", 1 if v.dec == COMMIT else 0)),
                  decision=v.dec, **self._tx_cols(t, tx))

    # --- PartitionApply(t, tx, k) ---

    def partition_apply_enabled(self, t: str, tx: int, k: int) -> bool:
        v = self.ptx[t][tx]
        return v.st == "EXECUTING" and k in self.parts_of(t, tx) and k not in v.done

    def _apply_data(self, t: str, k: int, tx: int, commit: bool) -> None:
        if t == "A":
            if commit:
                b, e = self.range_on(tx, k)
                self.range_bad = self.range_bad or self.committed[k] != b
                self.committed[k] = e
        elif t == "B":
            if commit:
                self.target[k].extend(self.sup[tx][k].data)
            self.sup[tx][k].st = "done"
        elif commit:
            self.rows.append(tx)

    def partition_apply(self, t: str, tx: int, k: int) -> None:
        v = self.ptx[t][tx]
        commit = v.dec == COMMIT
        skip = self.applied_at(t, k, tx) and not self.k.bug("partition_reapply")
        depth = max(v.depth, v.rsdepth) + 1  # partitions write in parallel: counted once
        if not skip:
            self._apply_data(t, k, tx, commit)
            self.order_bad = self.order_bad or (v.step, tx) <= self.meta[t][k]
            self.meta[t][k] = (v.step, tx)
        v.done.add(k)
        d = self.pdur[t][tx]
        d.done.add(k)
        d.dec, d.step, d.depth = v.dec, v.step, depth
        self.applied[t][tx] = v.dec
        cols: dict[str, object] = {}
        if t == "A":
            cols = {"topic": "A", "group": CONSUMER, "committed_offset": self.committed[k]}
        elif t == "B":
            cols = {"topic": "B", "write_id": tx, "log_end": len(self.target[k])}
        self.emit("PartitionCommit" if commit else "PartitionRollback", t, (("txn_id", tx), ("partition", k), ("step", v.step)),
                  partition=k, step=v.step, **cols, **self._tx_cols(t, tx))

    # --- PqImmediate(t, tx) ---

    def _consumer_or_producer_blocked(self, t: str, tx: int) -> bool:
        if t == "A" and not self.k.bug("no_consumer_block"):
            return any(self.blocks_consumer(x, tx) for x in self.started())
        if t == "B" and self.k.producers == "partition" and not self.k.bug("no_producer_block"):
            return any(self.blocks_producer(x, tx) for x in self.started())
        if t == "DS":
            return any(self.blocks_row(x, tx) for x in self.started())
        return False

    def pq_immediate_enabled(self, t: str, tx: int) -> bool:
        return (self.kqp[tx].st == "proposing" and self.immediate(tx) and t in self.participants(tx)
                and not self._consumer_or_producer_blocked(t, tx))

    def immediate_ok(self, t: str, tx: int) -> bool:
        """The immediate path's check (partition.cpp ProcessImmediateTx; the write info's predicate)."""
        s = self.kqp[tx]
        if t == "A":
            return self.k.bug("immediate_no_offset_check") or (self.committed[s.src] == s.b and s.e <= self.k.msgs_per_src)
        if t != "B":  # the datashard alone: an empty write-only transaction's row
            return self.predicate(t, tx)
        seq_ok = (self.k.producers == "none" or self.k.bug("no_seqno_check")
                  or all(self.seq_no_ok(tx, d) for d in s.dsts))
        return all(self.sup[tx][d].st == "open" and self.active(d) for d in s.dsts) and seq_ok

    def pq_immediate(self, t: str, tx: int) -> None:
        s = self.kqp[tx]
        (k,) = self.parts_of(t, tx)
        ok = self.immediate_ok(t, tx)
        reason = None if ok else self.reason(t, tx)
        if reason is not None:
            self.why_aborted.setdefault(tx, reason)
        dec = COMMIT if ok else ABORT
        self._apply_data(t, k, tx, ok)
        self.applied[t][tx] = dec
        self.votes[t][tx] = dec
        s.st, s.results, s.aborted, s.depth = "planned", {t}, not ok, s.depth + 1
        # past the partition's end with the gap check passed: "commit to the future", BAD_REQUEST
        s.bad = t == "A" and not ok and self.committed[s.src] == s.b
        cols: dict[str, object] = {}
        if t == "A":
            cols = {"topic": "A", "group": CONSUMER, "committed_offset": self.committed[k]}
        elif t == "B":
            cols = {"topic": "B", "write_id": tx, "log_end": len(self.target[k])}
        self.emit("PqImmediate", t, (("txn_id", tx), ("partition", k), ("commit", 1 if ok else 0)),
                  partition=k, decision=dec, reason=reason, kqp_state=s.st, **cols, **self._tx_cols(t, tx))

    # --- PqTxDone(t, tx) ---

    def pq_tx_done_enabled(self, t: str, tx: int) -> bool:
        v = self.ptx[t][tx]
        return v.st == "EXECUTING" and v.done == self.parts_of(t, tx)

    def pq_tx_done(self, t: str, tx: int) -> None:
        v = self.ptx[t][tx]
        v.st = "WAIT_RS_ACKS"
        self.pdur[t][tx].st = "EXECUTED"
        s = self.kqp[tx]
        s.results.add(t)
        s.aborted = s.aborted or v.dec == ABORT
        s.depth = max(s.depth, max(v.depth, v.rsdepth) + 1)  # after the partitions' commit writes
        self.pending[t].discard((v.step, tx))
        if not self.k.bug("ack_rs_before_persist"):
            self.send(*(read_set_ack(t, q, tx) for q in sorted(v.rs)))
        if t == "B":
            for d in sorted(v.done):
                self.sup[tx][d] = Sup("done", [])
        self.emit("PqTxDone", t, (("txn_id", tx), ("commit", 1 if v.dec == COMMIT else 0)),
                  decision=v.dec, **self._tx_cols(t, tx))

    # --- PqReadSetAck(m) ---

    def pq_read_set_ack_enabled(self, m: NetMsg) -> bool:
        return m.type == RS_ACK and m in self.net

    def pq_read_set_ack(self, m: NetMsg) -> None:
        v = self.ptx[m.to][m.tx]
        if v.st in DECIDED:
            v.acked.add(m.frm)
        self.take(m)
        self.emit("PqReadSetAck", m.to, (("txn_id", m.tx),), peer=m.frm, **self._tx_cols(m.to, m.tx))

    # --- PqDelete(t, tx) ---

    def pq_delete_enabled(self, t: str, tx: int) -> bool:
        v = self.ptx[t][tx]
        return v.st == "WAIT_RS_ACKS" and (self.k.bug("independent_decision") or v.acked == set(self.peers_of(t, tx)))

    def pq_delete(self, t: str, tx: int) -> None:
        self.ptx[t][tx].st = "DELETED"
        self.pdur[t][tx].st = "DELETED"
        self.emit("PqDelete", t, (("txn_id", tx),), **self._tx_cols(t, tx))

    # --- PqResendReadSet(t, tx, q) ---

    def pq_resend_read_set_enabled(self, t: str, tx: int, q: str) -> bool:
        v = self.ptx[t][tx]
        if self.k.bug("independent_decision") or v.st not in DECIDED:
            return False
        if q not in self.peers_of(t, tx) or q in v.acked or self.ptx[q][tx].st == "NONE":
            return False
        if t in self.ptx[q][tx].rs:
            # q has it: resend only when q executed (it acknowledges at once) and no ack is on its way
            if self.ptx[q][tx].st not in ("WAIT_RS_ACKS", "DELETED"):
                return False
            if any(m.type == RS_ACK and m.tx == tx and m.frm == q and m.to == t for m in self.net):
                return False
        return not any(m.type == RS and m.tx == tx and m.frm == t and m.to == q for m in self.net)

    def pq_resend_read_set(self, t: str, tx: int, q: str) -> None:
        v = self.ptx[t][tx]
        self.send(read_set(t, q, tx, v.own, v.depth))
        self.emit("PqResendReadSet", t, (("txn_id", tx),), peer=q, decision=v.own, **self._tx_cols(t, tx))

    # --- TabletRestart(t) ---

    def recover(self, t: str, tx: int) -> Volatile:
        """What t recovers of tx from its durable keys [fix] (the spec's Recover)."""
        d = self.pdur[t][tx]
        if d.st in GONE_STATES:
            return Volatile(st=d.st)
        if d.st == "EXECUTED":
            return Volatile(st="WAIT_RS_ACKS", step=d.step, own=d.dec, dec=d.dec, done=set(d.done), depth=d.depth - 1)
        if d.done and d.done == self.parts_of(t, tx):
            return Volatile(st="EXECUTING", step=d.step, own=d.dec, dec=d.dec, done=set(d.done), depth=d.depth - 1)
        if d.done:
            return Volatile(st="PLANNED", step=d.step, depth=d.depth - 1)
        if d.st == "WAIT_RS":
            return Volatile(st="WAIT_RS", step=d.step, own=d.dec, depth=d.depth)
        if d.st == "PLANNED":
            return Volatile(st="PLANNED", step=d.step, depth=d.depth)
        return Volatile(st="PREPARED", depth=d.depth)

    # --- Split(d): a partition of B becomes inactive ---

    def split_enabled(self, d: int) -> bool:
        if sum(1 for x in self.sealed.values() if x != -1) >= self.k.max_splits or self.sealed[d] != -1:
            return False
        return not any(self.ptx["B"][x].st in ("WAIT_RS", "EXECUTING") and d in self.kqp[x].dsts - self.ptx["B"][x].done
                       for x in self.started())

    def split(self, d: int) -> None:
        self.sealed[d] = len(self.target[d])
        self.emit("Split", "B", (("partition", d),), tablet="B", topic="B", partition=d, log_end=len(self.target[d]))

    def tablet_restart_enabled(self, t: str) -> bool:
        return self.restarts < self.k.max_restarts

    def tablet_restart(self, t: str) -> None:
        rec = {tx: self.recover(t, tx) for tx in self.k.txns}
        self.ptx[t] = rec
        for m in [m for m in self.net if m.type == WRITE and m.to == t]:  # the writers' streams to t break
            self.take(m)
        for tx in self.k.txns:
            if rec[tx].st in DECIDED:
                self.send(*(read_set(t, q, tx, rec[tx].own, rec[tx].depth) for q in self.peers_of(t, tx)))
        self.restarts += 1
        self.emit("TabletRestart", t, (), tablet=t)
