"""Partition leaders (KafkaTxn: Leader* actions).

A leader keeps the partition log and, per producer, the epoch, the last sequence, the sequences of
the last five batches (duplicate detection), whether a transaction is open, the coordinator
epoch of the last marker (ProducerStateManager, ProducerAppendInfo), and the lowest sequence
under verification (VerificationStateEntry).
"""

from __future__ import annotations

from typing import Any

import attrs

from .log import Entry, PartitionLog
from .messages import Msg
from .state import ClusterState, Held, ProducerState


def produce_check(m: Msg, s: ProducerState, no_idempotence: bool) -> str:
    """``append``, ``duplicate``, or an error code (ProducerAppendInfo)."""
    if m.epoch < s.epoch:
        return "INVALID_PRODUCER_EPOCH"
    if no_idempotence:
        return "append"
    if m.epoch == s.epoch and m.seq in s.seqs:
        return "duplicate"
    if s.vseq != -1 and m.seq > s.vseq:
        # KAFKA-14920: nothing above the lowest sequence under verification is appended
        return "OUT_OF_ORDER_SEQUENCE_NUMBER"
    if m.epoch > s.epoch:
        # a new epoch starts at sequence 0; with no producer state any sequence is taken
        return "append" if m.seq == 0 or s.epoch == -1 else "OUT_OF_ORDER_SEQUENCE_NUMBER"
    if m.seq == s.last_seq + 1:
        return "append"
    return "OUT_OF_ORDER_SEQUENCE_NUMBER"


def start_verification(s: ProducerState, epoch: int, seq: int, no_lowest_sequence: bool) -> ProducerState:
    """The verification state once a batch of (epoch, seq) starts its verification: the lowest
    sequence of the newest epoch seen (maybeCreateVerificationStateEntry; StartVerification)."""
    if no_lowest_sequence:
        return s
    if s.vseq == -1 or epoch > s.vepoch or (epoch == s.vepoch and seq < s.vseq):
        return attrs.evolve(s, vepoch=epoch, vseq=seq)
    return s


def marker_check(m: Msg, s: ProducerState) -> str:
    """A marker from an older coordinator epoch, or for an older producer epoch, is refused."""
    if m.cepoch < s.cepoch:
        return "TRANSACTION_COORDINATOR_FENCED"
    if m.epoch < s.epoch:
        return "INVALID_PRODUCER_EPOCH"
    return "NONE"


def verify_error(err: str) -> str:
    """What the producer hears when its batch's verification failed (VerifyError): a voided
    verification is INVALID_TXN_STATE; CONCURRENT_TRANSACTIONS becomes the retriable
    NOT_ENOUGH_REPLICAS, as ReplicaManager translates it."""
    if err == "NONE":
        return "INVALID_TXN_STATE"
    if err in ("CONCURRENT_TRANSACTIONS", "COORDINATOR_NOT_AVAILABLE"):
        return "NOT_ENOUGH_REPLICAS"
    return err


def remember(seqs: frozenset[int], s: int) -> frozenset[int]:
    """The sequences of the last five batches."""
    return frozenset(x for x in seqs | {s} if x > s - 5)


def after_append(s: ProducerState, epoch: int, seq: int) -> ProducerState:
    """The producer state once a batch of (epoch, seq) is appended."""
    seqs = frozenset({seq}) if epoch > s.epoch else remember(s.seqs, seq)
    return ProducerState(epoch, seq, seqs, True, s.cepoch, s.start)


def after_marker(s: ProducerState, epoch: int, cepoch: int) -> ProducerState:
    """The producer state once a marker of (epoch, coordinator epoch) is appended."""
    newer = epoch > s.epoch
    return ProducerState(epoch, -1 if newer else s.last_seq, frozenset() if newer else s.seqs, False, cepoch, s.start)


def load_producer_state(log: PartitionLog, pid: str, start: int = 0) -> ProducerState:
    """Rebuild a producer's state from the log after offset ``start`` (where the state last
    expired), as a restarted leader does from its snapshot (ProducerStateManager;
    LoadedProducerState in the spec): a snapshot keeps only the last batch, so of the sequences
    only the last one is remembered."""
    s = ProducerState(start=start)
    for e in log.entries[start:]:
        if e.pid == pid:
            s = after_append(s, e.epoch, e.seq) if e.kind == "data" else after_marker(s, e.epoch, e.cepoch)
    return attrs.evolve(s, seqs=frozenset({s.last_seq}) if s.last_seq in s.seqs else frozenset())


class LeaderActions(ClusterState):
    def _leader_event(self, action: str, m: Msg, result: str | None, appended: int | None = None) -> None:
        """The event of a leader's step; ``appended``: the offset the entry it appended took."""
        ev = self.with_msg(self.event(action, f"leader-{m.part}"), m)
        ev["result"] = result
        if appended is not None:
            ev["append_offset"] = appended
        ev["log_end"] = len(self.plog[m.part]) if m.part in self.plog else None
        self.emit(ev)

    def append_batch(self, m: Msg) -> tuple[str, int | None]:
        """Check m's batch, append it if it passes; returns the answer's error code and the
        offset the batch took (None when it was not appended: refused, or a duplicate)."""
        p = m.part
        s = self.pst[p][m.tid]
        verdict = produce_check(m, s, self.k.bug("no_idempotence"))
        offset = None
        if verdict == "append":
            zombie = m.inst != self.latest_instance(m.tid)
            offset = self.plog[p].append(
                Entry("data", m.tid, m.epoch, m.seq, gtx=m.gtx, zombie=zombie, src=m.val, records=self.payload(m))
            )
            self.pst[p][m.tid] = after_append(s, m.epoch, m.seq)
        return ("NONE" if verdict in ("append", "duplicate") else verdict), offset

    def payload(self, m: Msg) -> tuple[Any, ...]:
        records = self.batches.get((m.tid, m.inst, m.gtx[2], m.part), [])
        b = self.batch_of.get((m.tid, m.inst, m.gtx[2], m.part, m.seq), 0)
        return tuple(records[b::self.k.batches])

    def connection_ready(self, m: Msg) -> bool:
        """Pipelining: nothing sent before ``m`` on its connection is unread or held (ConnectionReady)."""
        if not self.k.pipelined:
            return True
        if any(n.type == "Produce" and (n.tid, n.inst, n.part) == (m.tid, m.inst, m.part) and n.att < m.att
               for n in self.net):
            return False
        return not any((h.m.tid, h.m.inst) == (m.tid, m.inst) for h in self.held[m.part])

    def connections_lost(self, p: int) -> None:
        """Pipelining: the produce requests and answers of ``p`` die with its leader's connections
        (ConnectionsLost)."""
        if self.k.pipelined:
            for n in [n for n in self.net if n.type in ("Produce", "ProduceResp") and n.part == p]:
                self.take(n)

    def leader_produce_enabled(self, m: Msg) -> bool:
        """TV1, or TV1V/TV2 with the producer's transaction open here under this epoch: check and
        append. TV1V/TV2 otherwise: hold the batch and ask the coordinator to check (TV1V) or add
        (TV2) the partition. With pipelining, a connection's requests are read in order."""
        return self.in_net(m) and m.type == "Produce" and self.connection_ready(m)

    def leader_produce(self, m: Msg) -> None:
        s = self.pst[m.part][m.tid]
        self.take(m)
        if self.k.verifies and not (s.open and s.epoch == m.epoch) and m.epoch >= s.epoch:
            self.pst[m.part][m.tid] = start_verification(s, m.epoch, m.seq, self.k.bug("no_lowest_sequence"))
            self.hold(m.part, m)
            self._leader_event("LeaderProduce", m, None)
        else:
            err, offset = self.append_batch(m)
            self.send(m.reply(err))
            self._leader_event("LeaderProduce", m, err, offset)

    def _held_for(self, r: Msg) -> Held | None:
        for h in self.held[r.part]:
            x = h.m
            if (x.tid, x.inst, x.gtx, x.seq, x.epoch, x.att) == (r.tid, r.inst, r.gtx, r.seq, r.epoch, r.att):
                return h
        return None

    def leader_verified_enabled(self, r: Msg) -> bool:
        """TV2: the coordinator answered a held batch's verification. Append it unless a marker
        voided the verification meanwhile (VerificationGuard) or the coordinator refused. (The
        offsets partition's answers are the group coordinator's: GcVerified.)"""
        return self.in_net(r) and r.type == "VerifyResp" and r.part in self.plog and self._held_for(r) is not None

    def leader_verified(self, r: Msg) -> None:
        h = self._held_for(r)
        assert h is not None
        self.held[r.part].remove(h)
        self.take(r)
        offset = None
        if r.err == "NONE" and not h.void:
            err, offset = self.append_batch(h.m)
        else:
            err = verify_error(r.err)
        self.send(h.m.reply(err))
        self._leader_event("LeaderVerified", r, err, offset)

    def _lost_verification(self, p: int) -> Held | None:
        """The first batch held at ``p`` whose verification is neither in flight nor pending."""
        for h in self.held[p]:
            x = h.m
            if any(
                n.type in ("Verify", "VerifyResp")
                and (n.tid, n.inst, n.gtx, n.seq, n.epoch, n.att, n.part) == (x.tid, x.inst, x.gtx, x.seq, x.epoch, x.att, p)
                for n in self.net
            ):
                continue
            if any(
                n.type == "VerifyResp" and (n.inst, n.gtx, n.part, n.att) == (x.inst, x.gtx, p, x.att)
                for pe in self.tc[x.tid].pending
                for n in pe.replies
            ):
                continue
            return h
        return None

    def leader_verify_lost_enabled(self, p: int) -> bool:
        """TV2: a failover lost a held batch's verification: fail it with a retriable error."""
        return self._lost_verification(p) is not None

    def leader_verify_lost(self, p: int) -> None:
        h = self._lost_verification(p)
        assert h is not None
        x = h.m
        self.held[p].remove(h)
        self.send(x.reply("NOT_ENOUGH_REPLICAS"))
        ev = self.event("LeaderVerifyLost", f"leader-{p}", partition=p, txn_id=x.tid, instance=x.inst)
        ev["result"] = "NOT_ENOUGH_REPLICAS"
        self.emit(ev)

    def leader_discard_verify_enabled(self, r: Msg) -> bool:
        """The answer to a verification of a batch the leader no longer holds."""
        return self.in_net(r) and r.type == "VerifyResp" and r.part in self.plog and self._held_for(r) is None

    def leader_discard_verify(self, r: Msg) -> None:
        self.take(r)
        self._leader_event("LeaderDiscardVerify", r, None)

    def leader_marker_enabled(self, m: Msg) -> bool:
        """A WriteTxnMarkers request: append the control record, closing the producer's
        transaction here, unless it comes from an older coordinator or producer epoch."""
        return self.in_net(m) and m.type == "WriteTxnMarkers" and m.part in self.plog

    def leader_marker(self, m: Msg) -> None:
        p = m.part
        s = self.pst[p][m.tid]
        err = marker_check(m, s)
        offset = None
        if err == "NONE":
            offset = self.plog[p].append(
                Entry("marker", m.tid, m.epoch, commit=m.commit, cepoch=m.cepoch, gtx=m.gtx, end_by=m.end_by, src=0)
            )
            self.pst[p][m.tid] = after_marker(s, m.epoch, m.cepoch)
            self.void_held(p, m.tid)
        self.take(m)
        self.send(m.reply(err))
        self._leader_event("LeaderMarker", m, err, offset)

    def leader_restart_enabled(self, p: int) -> bool:
        """The leader of ``p`` crashes and restarts: the log survives, the producer state is
        rebuilt from it, batches held for verification are lost (their producers retry)."""
        return self.k.leader_restarts and p in self.plog

    def leader_restart(self, p: int) -> None:
        if self.k.bug("restart_forgets_producers"):
            self.pst[p] = {t: ProducerState() for t in self.pst[p]}
        else:
            self.pst[p] = {t: load_producer_state(self.plog[p], t, s.start) for t, s in self.pst[p].items()}
        self.held[p] = []
        self.connections_lost(p)
        self.emit(self.event("LeaderRestart", f"leader-{p}", partition=p))

    def follower_lag_enabled(self, p: int) -> bool:
        """The follower of ``p`` stops replicating and leaves the ISR; the leader goes on alone."""
        return self.k.unclean_elections and p in self.plog and self.lag[p] == -1

    def follower_lag(self, p: int) -> None:
        self.lag[p] = len(self.plog[p])
        self.emit(self.event("FollowerLag", f"leader-{p}", partition=p))

    def unclean_election_enabled(self, p: int) -> bool:
        """unclean.leader.election.enable: the lagging follower of ``p`` is elected with the log it
        has; what came after is lost (KAFKA-20716: a marker among it leaves the LSO stuck)."""
        return p in self.lag and self.lag[p] >= 0

    def unclean_election(self, p: int) -> None:
        kept = self.lag[p]
        self.plog[p].truncate(kept)
        self.pst[p] = {t: load_producer_state(self.plog[p], t, min(s.start, kept)) for t, s in self.pst[p].items()}
        self.held[p] = []
        self.connections_lost(p)
        self.lag[p] = -2
        self.emit(self.event("UncleanElection", f"leader-{p}", partition=p, log_end=len(self.plog[p])))

    def leader_expire_producer_enabled(self, t: str, p: int) -> bool:
        """The leader of ``p`` forgets producer ``t`` (producer.id.expiration.ms): no transaction
        of it open here and, the expiry being longer than any request lives, nothing of it under
        way for ``p``; with "early_producer_expiry" (KAFKA-9144) markers under way do not count."""
        if not self.k.producer_expiry or p not in self.plog:
            return False
        s = self.pst[p][t]
        if s.epoch == -1 or s.open or any(h.m.tid == t for h in self.held[p]):
            return False
        if any(m.tid == t and m.part == p and m.type in ("Produce", "Verify", "VerifyResp") for m in self.net):
            return False
        if any(i[0] == t and c.out and c.req.type == "Produce" and c.req.part == p for i, c in self.cl.items()):
            return False
        if any(i[0] == t and any(f.part == p for f in c.fly) for i, c in self.cl.items()):
            return False
        if self.k.bug("early_producer_expiry"):
            return True
        c = self.tc[t]
        return not (
            any(m.tid == t and m.part == p and m.type == "WriteTxnMarkers" for m in self.net)
            or (c.st in ("PrepareCommit", "PrepareAbort") and p in c.todo)
            or any(p in pending.entry.parts for pending in c.pending)
        )

    def leader_expire_producer(self, t: str, p: int) -> None:
        self.pst[p][t] = ProducerState(start=len(self.plog[p]))
        self.emit(self.event("LeaderExpireProducer", f"leader-{p}", txn_id=t, partition=p))

    def fetch_enabled(self, p: int, isolation: str, start: int) -> bool:
        """A consumer fetches partition p from offset ``start`` (KafkaTxn: Fetch). The client
        library checks the isolation level and the position."""
        return p in self.plog

    def fetch(self, p: int, isolation: str, start: int) -> list[int]:
        """Returns the offsets the consumer is given."""
        log = self.plog[p]
        records = log.fetch(isolation, start, lso_inclusive=self.k.bug("lso_inclusive"))
        ev = self.event("Fetch", "consumer", partition=p, isolation=isolation)
        ev["from"] = start
        ev.update(records=records, lso=log.lso())
        self.emit(ev)
        return records
