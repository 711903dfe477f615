"""The worker and its SDK (YdbTopics, "The worker and its SDK" and the worker's faults): a topic
reader, a writer bound to the transaction, the table upsert, flush, commit and rollback; a worker
hangs and resumes, and the group gives a hung worker's partition to another."""

from __future__ import annotations

from .constants import producer
from .state import CONSUMER, OTHER_PRODUCER, WRITE, Msg, Session, State, write_msg


class WorkerSteps(State):
    # --- ReadBatch(w, p, e) ---

    def read_begin(self, w: str, p: int) -> int:
        """Where worker w's read of partition p starts: its position, or the committed offset."""
        pos = self.cl[w].pos[p]
        return self.committed[p] if pos == -1 else pos

    def _read_in_ok(self, w: str, p: int, e: int, shape: str) -> bool:
        c = self.cl[w]
        if (shape not in self.k.shapes or c.hung or c.phase != "idle" or self.owner.get(p) != w
                or self.next_tx > self.k.max_txns):
            return False
        b = self.read_begin(w, p)
        return b < self.k.msgs_per_src and b + 1 <= e <= min(b + self.k.batch_max, self.k.msgs_per_src)

    def _read_in(self, w: str, p: int, e: int, shape: str, name: str) -> None:
        b, tx = self.read_begin(w, p), self.next_tx
        self.kqp[tx] = Session(st="open", shape=shape, w=w, src=p, b=b, e=e,
                               named=set(range(b, e)) if shape == "read" else set())
        pos = dict(self.cl[w].pos)
        pos[p] = e
        c = self.idle_worker(pos)
        c.phase, c.shape, c.tx, c.src, c.b, c.e, c.reads = "open", shape, tx, p, b, e, 1
        self.cl[w] = c
        self.next_tx += 1
        self.emit(name, w, (("txn_id", tx), ("partition", p), ("b", b), ("e", e)),
                  worker=w, txn_id=tx, partition=p, topic="A", group=CONSUMER, offsets_begin=b, offsets_end=e,
                  phase="open", kqp_state="open")

    def read_batch_enabled(self, w: str, p: int, e: int) -> bool:
        return self._read_in_ok(w, p, e, "copy")

    def read_batch(self, w: str, p: int, e: int) -> None:
        self._read_in(w, p, e, "copy", "ReadBatch")

    # --- ReadOnlyBatch(w, p, e): the batch's offsets commit, nothing is written ---

    def read_only_batch_enabled(self, w: str, p: int, e: int) -> bool:
        return self._read_in_ok(w, p, e, "read")

    def read_only_batch(self, w: str, p: int, e: int) -> None:
        self._read_in(w, p, e, "read", "ReadOnlyBatch")

    # --- ReadMore(w, e): the transaction reads the next batch of its partition ---

    def read_more_enabled(self, w: str, p: int, e: int) -> bool:
        c = self.cl[w]
        return (c.reads < self.k.max_reads and not c.hung and c.shape in ("copy", "read") and c.phase == "open"
                and c.ranges == 0 and p == c.src and self.owner.get(p) == w and self.kqp[c.tx].src2 == 0
                and c.e + 1 <= e <= min(c.e + self.k.batch_max, self.k.msgs_per_src))

    def read_more(self, w: str, p: int, e: int) -> None:
        """receive_batch_with_tx again in the same transaction: the reader goes on from its
        position, and the batch joins the transaction's range (a copy transaction writes it too)."""
        c = self.cl[w]
        s = self.kqp[c.tx]
        b = c.e
        s.e = c.e = e
        if c.shape == "read":
            s.named |= set(range(b, e))
        c.reads += 1
        c.pos[p] = e
        self.emit("ReadMore", w, (("txn_id", c.tx), ("partition", p), ("b", b), ("e", e)),
                  worker=w, txn_id=c.tx, partition=p, topic="A", group=CONSUMER, offsets_begin=b, offsets_end=e,
                  phase=c.phase, kqp_state=s.st)

    # --- ReadOther(w, p, e): a batch of a second partition of A joins the transaction ---

    def other_partitions(self, w: str) -> list[int]:
        """The partitions of A worker w's reader holds besides its transaction's, with messages left."""
        c = self.cl[w]
        return [p for p in self.k.src_parts
                if p != c.src and self.owner.get(p) == w and self.read_begin(w, p) < self.k.msgs_per_src]

    def read_other_enabled(self, w: str, p: int, e: int) -> bool:
        c = self.cl[w]
        if (self.k.max_parts_read < 2 or c.reads >= self.k.max_reads or c.hung or c.shape not in ("copy", "read")
                or c.phase != "open" or c.ranges != 0 or p == c.src or self.owner.get(p) != w or self.kqp[c.tx].src2):
            return False
        b = self.read_begin(w, p)
        return b + 1 <= e <= min(b + self.k.batch_max, self.k.msgs_per_src)

    def read_other(self, w: str, p: int, e: int) -> None:
        """receive_batch_with_tx in the same transaction returns a batch of another partition the
        reader has a session on: a second range joins the transaction (a copy writes it after the first)."""
        c = self.cl[w]
        s = self.kqp[c.tx]
        b = self.read_begin(w, p)
        s.src2, s.b2, s.e2 = p, b, e
        c.reads += 1
        c.pos[p] = e
        self.emit("ReadOther", w, (("txn_id", c.tx), ("partition", p), ("b", b), ("e", e)),
                  worker=w, txn_id=c.tx, partition=p, topic="A", group=CONSUMER, offsets_begin=b, offsets_end=e,
                  phase=c.phase, kqp_state=s.st)

    # --- UpdateOffsets(w, b, e): a read-only transaction names a range of its own ---

    def update_offsets_enabled(self, w: str, b: int, e: int) -> bool:
        c = self.cl[w]
        return (c.ranges < self.k.max_ranges and not c.hung and c.shape == "read" and c.phase == "open"
                and 0 <= b <= self.k.msgs_per_src and b + 1 <= e <= min(b + self.k.batch_max, self.k.msgs_per_src + 1))

    def update_offsets(self, w: str, b: int, e: int) -> None:
        """UpdateOffsetsInTransaction: a range that intersects the transaction's is BAD_REQUEST and
        KQP invalidates the transaction (kqp_topics.cpp, kqp_session_actor.cpp HandleTopicOps)."""
        c = self.cl[w]
        tx = c.tx
        s = self.kqp[tx]
        r = set(range(b, e))
        ok = not (r & s.named)
        if ok:
            s.named |= r
            s.b, s.e = min(s.b, b), max(s.e, e)
            c.ranges += 1
            result = "SUCCESS"
        else:
            s.st, s.lock = "done", "lost"
            self.told[tx] = result = "BAD_REQUEST"
            # the reader reads again from the committed offset
            self.cl[w] = self.idle_worker(self.reread(dict(c.pos), tx))
        self.emit("UpdateOffsets", w, (("txn_id", tx), ("b", b), ("e", e), ("ok", 1 if ok else 0)),
                  worker=w, txn_id=tx, topic="A", group=CONSUMER, offsets_begin=b, offsets_end=e, result=result,
                  phase=self.cl[w].phase, kqp_state=s.st)

    # --- BeginWrites(w): a write-only transaction: messages of the application's own, no read ---

    def begin_writes_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return ("write" in self.k.shapes and not c.hung and c.phase == "idle" and self.next_tx <= self.k.max_txns
                and self.write_base(self.next_tx) + self.k.batch_max <= len(self.k.app_offsets))

    def write_base(self, tx: int) -> int:
        """WriteBase(tx): where write-only transaction tx's SeqNos begin. With shared producers
        ("partition") after the highest last SeqNo of the transaction's producers in B, as the SDK's
        writer numbers from its init (last_seq_no); with a producer of its own per writer ("none"),
        BatchMax apart per transaction."""
        if self.k.producers == "partition":
            return max(self.producer_last(d, producer(g)) for d in self.k.dst_parts for g in self.k.writers)
        return (tx - 1) * self.k.batch_max

    def begin_writes(self, w: str) -> None:
        tx = self.next_tx
        b = self.write_base(tx)
        self.kqp[tx] = Session(st="open", shape="write", w=w, b=b, e=b)
        c = self.idle_worker(self.cl[w].pos)
        c.phase, c.shape, c.tx, c.b, c.e = "open", "write", tx, b, b
        self.cl[w] = c
        self.next_tx += 1
        self.emit("BeginWrites", w, (("txn_id", tx), ("b", b), ("e", b)),
                  worker=w, txn_id=tx, topic="B", write_id=tx, offsets_begin=b, offsets_end=b,
                  phase="open", kqp_state="open")

    # --- TxWrite(w, g): writer g of the transaction sends its next message ---

    def tx_write_enabled(self, w: str, g: int) -> bool:
        c = self.cl[w]
        limit = self.k.batch_max if c.shape == "write" else self.writes(w)
        return (not c.hung and c.phase == "open" and not c.closed and c.sent < limit and g in self.k.writers
                and (g == 0 or c.shape == "write"))

    def stream_broken(self, w: str, q: int, d: int) -> bool:
        """StreamBroken(w, q, d): a write of producer q sent to partition d is neither acknowledged
        nor on its way (each writer has a stream of its own)."""
        in_flight = {m.m for m in self.net if m.type == WRITE and m.tx == self.cl[w].tx}
        return any(m.src == q and self.k.dest(m.src, m.off) == d and m not in in_flight for m in self.unacked_writes(w))

    def next_write(self, w: str, g: int) -> Msg:
        """The message writer g of worker w's transaction sends next: the batch's next one for a
        copy, writer g's next SeqNo as producer Producer(g) for a write-only transaction."""
        c = self.cl[w]
        if c.shape == "write":
            return Msg(producer(g), c.b + c.gsent[g])
        return self.copy_msg(w, c.sent)

    def copy_msg(self, w: str, k: int) -> Msg:
        """CopyMsg(w, k): the k-th message a copy transaction writes: its first partition's range,
        then its second's."""
        c = self.cl[w]
        first = c.e - c.b
        if k < first:
            return Msg(c.src, c.b + k)
        s = self.kqp[c.tx]
        return Msg(s.src2, s.b2 + k - first)

    def tx_write(self, w: str, g: int) -> None:
        c = self.cl[w]
        tx = c.tx
        m = self.next_write(w, g)
        d = self.k.dest(m.src, m.off)
        if not self.stream_broken(w, m.src, d):  # on a broken stream the SDK keeps it until it reconnects
            self.send(write_msg(tx, d, m))
        self.kqp[tx].dsts.add(d)
        c.sent += 1
        if c.shape == "write":  # a write-only transaction's messages are as many as it writes
            c.e += 1
            c.gsent[g] += 1
            self.kqp[tx].e = c.e
            self.kqp[tx].prods.add(m.src)
        args = (("txn_id", tx), ("partition", d), ("off", m.off), *((("producer", m.src),) if g else ()))
        self.emit("TxWrite", w, args, worker=w, txn_id=tx, partition=d, topic="B", write_id=tx, offset=m.off,
                  producer=self.logged_producer(m) if c.shape == "write" else None, phase=c.phase)

    # --- NonTxWrite(w): the same producer's write outside any transaction ---

    def non_tx_write_enabled(self, w: str) -> bool:
        c = self.cl[w]
        if (self.k.producers != "partition" or self.plain_writes(0) >= self.k.max_non_tx_writes or c.hung
                or c.shape != "write" or c.phase not in ("open", "flushed") or c.sent < 1):
            return False
        d = self.k.dest(0, c.b)
        if self.sealed[d] != -1:  # "Write to inactive partition"
            return False
        # Blocked while a transaction of the producer is calculated and not yet executed there
        return not any(self.ptx["B"][x].st in ("WAIT_RS", "EXECUTING") and 0 in self.tx_producers_of(x)
                       and d in self.kqp[x].dsts for x in self.started())

    def non_tx_write(self, w: str) -> None:
        c = self.cl[w]
        d = self.k.dest(0, c.b)
        m = Msg(0, self.producer_last(d, 0))  # the SDK's automatic SeqNo: the main partition's last + 1
        self.target[d].append(m)
        self.plain.add(m)
        self.emit("NonTxWrite", w, (("txn_id", c.tx), ("partition", d), ("off", m.off)),
                  worker=w, txn_id=c.tx, partition=d, topic="B", offset=m.off, log_end=len(self.target[d]))

    # --- OtherProducerWrite(w): another producer's write outside any transaction ---

    def plain_writes(self, producer: int) -> int:
        return sum(1 for m in self.plain if m.src == producer)

    def other_producer_write_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return (self.plain_writes(OTHER_PRODUCER) < self.k.max_other_writes and c.phase in ("open", "flushed") and c.sent >= 1
                and self.sealed[self.k.dest(c.src, c.b)] == -1)

    def other_producer_write(self, w: str) -> None:
        """A different SourceId: published at once, never waiting for the transaction nor moving its MinSeqNo."""
        c = self.cl[w]
        d = self.k.dest(c.src, c.b)
        m = Msg(OTHER_PRODUCER, self.producer_last(d, OTHER_PRODUCER))
        self.target[d].append(m)
        self.plain.add(m)
        self.emit("OtherProducerWrite", w, (("txn_id", c.tx), ("partition", d), ("off", m.off)),
                  worker=w, txn_id=c.tx, partition=d, topic="B", offset=m.off, log_end=len(self.target[d]))

    # --- PlainWrite(q, o): a write outside any transaction, at any time ---

    def plain_write_enabled(self, q: int, o: int) -> bool:
        """PlainWrite's guard: within the budget, a producer of the application, a partition not split,
        and no transaction of the producer between its predicate and its commit there (Blocked)."""
        if self.plain_sent >= self.k.max_plain_writes or q not in self.k.plain_producers or o not in self.k.app_offsets:
            return False
        d = self.k.dest(q, o)
        if self.sealed[d] != -1:  # "Write to inactive partition"
            return False
        return not any(self.ptx["B"][x].st in ("WAIT_RS", "EXECUTING") and q in self.tx_producers_of(x)
                       and d in self.kqp[x].dsts for x in self.started())

    def plain_next(self, q: int) -> int:
        """The offset of producer q's next message with the SDK's automatic SeqNo: its last in B plus
        one (with routing by key a producer's messages may be in any partition)."""
        return max(self.producer_last(d, q) for d in self.k.dst_parts)

    def plain_repeat(self, q: int, o: int) -> bool:
        """The SeqNo is at or below the producer's last in the partition: AlreadyWritten."""
        return o < self.producer_last(self.k.dest(q, o), q) and not self.k.bug("plain_no_dedup")

    def plain_write(self, q: int, o: int) -> None:
        d, m = self.k.dest(q, o), Msg(q, o)
        repeat = self.plain_repeat(q, o)
        if repeat:
            self.skipped.add(m)  # the SDK's Skipped
        else:
            self.target[d].append(m)
            self.plain.add(m)
        self.plain_sent += 1
        self.emit("PlainWriteSkipped" if repeat else "PlainWrite", "application",
                  (("partition", d), ("off", o), ("producer", q)),
                  partition=d, topic="B", offset=o, producer=q, log_end=len(self.target[d]))

    # --- PlainRead(w, p, e) and CommitOffset(w): a batch read outside a transaction, its offsets
    # committed on the read stream (partition.cpp PreProcessUserAct, CommitUserAct) ---

    def plain_read_enabled(self, w: str, p: int, e: int) -> bool:
        c = self.cl[w]
        if (self.plain_reads() >= self.k.max_plain_commits or c.hung or c.phase != "idle"
                or self.owner.get(p) != w):
            return False
        b = self.read_begin(w, p)
        return b < self.k.msgs_per_src and b + 1 <= e <= min(b + self.k.batch_max, self.k.msgs_per_src)

    def plain_read(self, w: str, p: int, e: int) -> None:
        """receive_batch with no transaction: the reader goes on from its position (a new partition
        session: the committed offset), and the worker holds the batch until it commits it."""
        b = self.read_begin(w, p)
        pos = dict(self.cl[w].pos)
        pos[p] = e
        c = self.idle_worker(pos)
        c.phase, c.src, c.b, c.e = "plain", p, b, e
        self.cl[w] = c
        self.emit("PlainRead", w, (("partition", p), ("b", b), ("e", e)),
                  worker=w, partition=p, topic="A", group=CONSUMER, offsets_begin=b, offsets_end=e, phase="plain")

    def commit_offset_blocked(self, p: int) -> bool:
        """TxAffectedConsumers: a transaction of the consumer is calculated and not yet executed on
        partition p, and a commit outside a transaction waits for it (unless commit_unblocked)."""
        return not self.k.bug("commit_unblocked") and any(
            self.ptx["A"][x].st in ("WAIT_RS", "EXECUTING") and p in self.parts_of("A", x) for x in self.started())

    def commit_offset_result(self, w: str) -> str:
        """What partition p answers worker w's commit: "dead" (WRONG_COOKIE: the group gave p to
        another reader, so w's read session is no longer p's), "stale" (an end at or below the
        committed offset: OK, nothing moves) or "ok" (the offset moves to the end)."""
        c = self.cl[w]
        if self.owner[c.src] != w and not self.k.bug("commit_dead_session"):
            return "dead"
        return "stale" if c.e <= self.committed[c.src] else "ok"

    def commit_offset_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return not c.hung and c.phase == "plain" and not self.commit_offset_blocked(c.src)

    def commit_offset(self, w: str) -> None:
        """reader.commit(batch) (commit_with_ack waits for the answer): the partition does not check
        where the batch began, so a commit outside a transaction is at least once."""
        c = self.cl[w]
        p, b, e = c.src, c.b, c.e
        res = self.commit_offset_result(w)
        if res == "ok":
            self.committed[p] = e
        self.plain_commits.add((w, p, b, e, res))
        self.cl[w] = self.idle_worker(c.pos)
        name = {"ok": "CommitOffset", "stale": "CommitOffsetStale", "dead": "CommitOffsetRefused"}[res]
        self.emit(name, w, (("partition", p), ("b", b), ("e", e)),
                  worker=w, partition=p, topic="A", group=CONSUMER, offsets_begin=b, offsets_end=e, phase="idle",
                  committed_offset=self.committed[p])

    # --- TableWrite(w) ---

    def table_write_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return self.k.table and not c.hung and c.phase == "open" and not c.row

    def table_write(self, w: str) -> None:
        c = self.cl[w]
        c.row = True
        self.urows[c.tx] = len(self.rows)  # the read takes an optimistic lock at the row's version
        self.emit("TableWrite", w, (("txn_id", c.tx),), worker=w, txn_id=c.tx, phase=c.phase)

    # --- Flush(w) ---

    def flush_enabled(self, w: str) -> bool:
        c = self.cl[w]
        if c.hung or c.phase != "open" or c.closed or c.sent != self.writes(w):
            return False
        return self.k.bug("no_flush") or len(self.wacked[c.tx]) == self.writes(w)

    def flush(self, w: str) -> None:
        c = self.cl[w]
        c.phase = "flushed"
        self.emit("Flush", w, (("txn_id", c.tx),), worker=w, txn_id=c.tx, phase=c.phase)

    # --- CommitTx(w) ---

    def commit_tx_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return not c.hung and c.phase == "flushed"

    def commit_tx(self, w: str) -> None:
        c = self.cl[w]
        s = self.kqp[c.tx]
        s.st = "planned" if not self.kqp_participants(c.tx) else "proposing"
        s.depth = 1 if self.wacked[c.tx] else 0  # DataDepth
        s.aborted = self.kqp_refuses(c.tx)  # "Incorrect offset ranges in the transaction": ABORTED
        if s.aborted:
            self.why_aborted.setdefault(c.tx, "Ranges")
        c.phase = "committing"
        self.emit("CommitTx", w, (("txn_id", c.tx),), worker=w, txn_id=c.tx, phase=c.phase, kqp_state=s.st)

    # --- RollbackTx(w) ---

    def writer_failed(self, w: str) -> bool:
        """WriterFailed(w): a write was refused or lost, so it can never be acknowledged."""
        c = self.cl[w]
        if c.phase == "open" and c.closed:  # closed by force: SESSION_EXPIRED at the commit
            return True
        if c.phase != "open" or c.sent != self.writes(w):
            return False
        return len(self.wacked[c.tx]) < self.writes(w) and not any(m.type == "Write" and m.tx == c.tx for m in self.net)

    # --- ForceClose(w): the application closes its transactional writer by force ---

    def force_close_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return (self.k.force_closes and not c.hung and c.phase == "open" and c.shape != "read" and not c.closed
                and bool(self.unacked_writes(w)))

    def force_close(self, w: str) -> None:
        """Close(0) with writes unacknowledged: nothing more is sent, the writer never flushes, and
        the SDK answers the commit SESSION_EXPIRED without sending it (write_session_impl.cpp)."""
        c = self.cl[w]
        c.closed = True
        self.emit("ForceClose", w, (("txn_id", c.tx),), worker=w, txn_id=c.tx, phase=c.phase)

    # --- Resend(w): the SDK's writer reconnects and sends every unacknowledged write again ---

    def sent_writes(self, w: str) -> list[Msg]:
        """SentWrites(w), each producer's in SeqNo order."""
        c = self.cl[w]
        if c.shape == "write":
            return [Msg(producer(g), c.b + k) for g in self.k.writers for k in range(c.gsent[g])]
        return [self.copy_msg(w, k) for k in range(c.sent)]

    def unacked_writes(self, w: str) -> list[Msg]:
        return [m for m in self.sent_writes(w) if m not in self.wacked[self.cl[w].tx]]

    def resend_enabled(self, w: str) -> bool:
        c = self.cl[w]
        if self.reconnects >= self.k.max_reconnects or c.hung or c.phase != "open" or c.closed:
            return False
        return bool(self.unacked_writes(w)) and not any(m.type == WRITE and m.tx == c.tx for m in self.net)

    def resend(self, w: str) -> None:
        c = self.cl[w]
        again = self.unacked_writes(w)
        for m in again:
            self.send(write_msg(c.tx, self.k.dest(m.src, m.off), m))
        self.reconnects += 1
        self.emit("Resend", w, (("txn_id", c.tx),), worker=w, txn_id=c.tx, topic="B", write_id=c.tx, phase=c.phase)

    def rollback_tx_enabled(self, w: str) -> bool:
        c = self.cl[w]
        if c.hung:
            return False
        return (self.writer_failed(w)
                or (self.k.rollbacks and c.phase in ("open", "flushed"))
                or (self.k.bug("rollback_while_committing") and c.phase == "committing" and self.kqp[c.tx].st != "done"))

    def rollback_tx(self, w: str) -> None:
        c = self.cl[w]
        tx = c.tx
        s = self.kqp[tx]
        s.st, s.lock = "done", "lost"
        self.told[tx] = "ABORTED"
        pos = dict(c.pos)
        if not (self.k.bug("no_reread") or c.shape == "write"):
            pos = self.reread(pos, tx)
        self.cl[w] = self.idle_worker(pos)
        self.emit("RollbackTx", w, (("txn_id", tx),), worker=w, txn_id=tx, result="ABORTED", phase="idle",
                  kqp_state=s.st)

    # --- faults of the worker ---

    def hang_enabled(self, w: str) -> bool:
        c = self.cl[w]
        return self.hangs < self.k.max_hangs and not c.hung and c.phase != "idle"

    def hang(self, w: str) -> None:
        c = self.cl[w]
        self.hangs += 1
        c.hung = True
        self.emit("Hang", w, (), worker=w, txn_id=c.tx or None)

    def take_over_enabled(self, w: str, p: int) -> bool:
        return self.owner[p] != w and self.cl[self.owner[p]].hung and not self.cl[w].hung

    def take_over(self, w: str, p: int) -> None:
        self.owner[p] = w
        self.cl[w].pos[p] = -1
        self.emit("TakeOver", w, (("partition", p),), worker=w, partition=p, topic="A", group=CONSUMER)

    def resume_enabled(self, w: str) -> bool:
        return self.cl[w].hung

    def resume(self, w: str) -> None:
        c = self.cl[w]
        c.hung = False
        self.emit("Resume", w, (), worker=w, txn_id=c.tx or None)
