"""The group coordinator of the application's consumer group (KafkaTxn: Gc* actions).

Committed offsets, the pending transactional offset of each producer (applied or dropped by the
marker on the offsets partition), and the generation TxnOffsetCommit is checked against (KIP-447).
Under TV1V and TV2 a TxnOffsetCommit is verified with the transaction coordinator before it is
written, as a produce is (Kafka 4.x: GroupCoordinatorService.commitTransactionalOffsets,
CoordinatorPartitionWriter.maybeStartTransactionVerification): TV2 adds the offsets partition to the
transaction, TV1V checks that it is in it.
"""

from __future__ import annotations

import attrs

from .leader import marker_check
from .messages import Msg
from .state import OFFSETS_PART, ClusterState, Held


def gc_verify_error(err: str) -> str:
    """What the client hears when its TxnOffsetCommit's verification failed (GcVerifyError): a
    voided verification is INVALID_TXN_STATE; PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH
    (AddPartitionsToTxnManager); the rest, CONCURRENT_TRANSACTIONS included, is passed on
    (CoordinatorOperationExceptionHelper.handleOperationException), unlike a produce's."""
    if err == "NONE":
        return "INVALID_TXN_STATE"
    if err == "PRODUCER_FENCED":
        return "INVALID_PRODUCER_EPOCH"
    return err


def _about(n: Msg, x: Msg, types: tuple[str, ...] = ("Verify", "VerifyResp")) -> bool:
    """Is ``n`` (of one of ``types``) the verification of TxnOffsetCommit ``x``, or its answer?"""
    return n.type in types and attrs.evolve(n, type="TxnOffsetCommit", err="NONE") == x


class GroupActions(ClusterState):
    def _group_event(self, action: str, m: Msg, result: str | None) -> None:
        ev = self.with_msg(self.event(action, "group"), m)
        ev.update(result=result, group_generation=self.gc.gen, group_committed=self.gc.committed)
        self.emit(ev)

    def gc_offset_fetch_enabled(self, m: Msg) -> bool:
        """OffsetFetch with require_stable: UNSTABLE_OFFSET_COMMIT while offsets are pending."""
        return self.in_net(m) and m.type == "OffsetFetch"

    def gc_offset_fetch(self, m: Msg) -> None:
        self.take(m)
        reply = m.reply("UNSTABLE_OFFSET_COMMIT") if any(v != -1 for v in self.gc.pending.values()) else m.reply("NONE", val=self.gc.committed)
        self.send(reply)
        self._group_event("GcOffsetFetch", m, reply.err)

    def generation_ok(self, m: Msg) -> bool:
        """KIP-447: TxnOffsetCommit ``m`` comes from the input's owner in the current generation
        (GenerationOk; open clients: the serving broker checked the generation of its real group)."""
        gc = self.gc
        return self.k.open_clients or self.k.bug("no_generation_check") or (m.gen == gc.gen and gc.owner == (m.tid, m.inst))

    def _write_offset(self, m: Msg) -> str:
        """Write TxnOffsetCommit ``m``: pending for its producer until the marker, unless the member is
        of another generation (WriteOffset); returns the answer's error code."""
        ok = self.generation_ok(m)
        if ok:
            self.gc.pending[m.tid] = m.val
        err = "NONE" if ok else "ILLEGAL_GENERATION"
        self.send(m.reply(err))
        return err

    def gc_txn_offset_commit_enabled(self, m: Msg) -> bool:
        """TxnOffsetCommit: TV1, or TV1V/TV2 with the producer's transaction open on the offsets
        partition under this epoch: write it. TV1V/TV2 otherwise: an older epoch is refused; a newer
        one is held while the coordinator adds (TV2) or checks (TV1V) the offsets partition."""
        return self.in_net(m) and m.type == "TxnOffsetCommit"

    def gc_txn_offset_commit(self, m: Msg) -> None:
        s = self.pst[OFFSETS_PART][m.tid]
        self.take(m)
        err: str | None
        if not self.k.verifies or (s.open and s.epoch == m.epoch):
            err = self._write_offset(m)
        elif m.epoch < s.epoch:  # UnifiedLog.maybeStartTransactionVerification
            err = "INVALID_PRODUCER_EPOCH"
            self.send(m.reply(err))
        else:
            self.hold(OFFSETS_PART, m)
            err = None
        self._group_event("GcTxnOffsetCommit", m, err)

    def _held_commit(self, r: Msg) -> Held | None:
        """The TxnOffsetCommit held at the offsets partition that verification ``r`` is about."""
        return next((h for h in self.held[OFFSETS_PART] if _about(r, h.m, ("VerifyResp",))), None)

    def gc_verified_enabled(self, r: Msg) -> bool:
        """TV1V, TV2: the coordinator answered a held TxnOffsetCommit's verification. Write it (and
        open the producer's transaction on the offsets partition) unless a marker voided the
        verification meanwhile or the coordinator refused (GcVerified)."""
        return self.in_net(r) and r.type == "VerifyResp" and r.part == OFFSETS_PART and self._held_commit(r) is not None

    def gc_verified(self, r: Msg) -> None:
        h = self._held_commit(r)
        assert h is not None
        self.held[OFFSETS_PART].remove(h)
        self.take(r)
        if r.err == "NONE" and not h.void:
            err = self._write_offset(h.m)
            if err == "NONE":
                self.pst[OFFSETS_PART][r.tid] = attrs.evolve(self.pst[OFFSETS_PART][r.tid], epoch=r.epoch, open=True)
        else:
            err = gc_verify_error(r.err)
            self.send(h.m.reply(err))
        self._group_event("GcVerified", r, err)

    def _lost_commit(self) -> Held | None:
        """The first TxnOffsetCommit held at the offsets partition whose verification is neither in
        flight nor pending at the coordinator."""
        for h in self.held[OFFSETS_PART]:
            x = h.m
            if any(_about(n, x) for n in self.net):
                continue
            if any(_about(n, x, ("VerifyResp",)) for pe in self.tc[x.tid].pending for n in pe.replies):
                continue
            return h
        return None

    def gc_verify_lost_enabled(self) -> bool:
        """TV1V, TV2: a failover lost a held TxnOffsetCommit's verification: fail it with
        NOT_COORDINATOR, which the client retries (GcVerifyLost)."""
        return self._lost_commit() is not None

    def gc_verify_lost(self) -> None:
        h = self._lost_commit()
        assert h is not None
        x = h.m
        self.held[OFFSETS_PART].remove(h)
        self.send(x.reply("NOT_COORDINATOR"))
        ev = self.event("GcVerifyLost", "group", partition=OFFSETS_PART, txn_id=x.tid, instance=x.inst)
        ev["result"] = "NOT_COORDINATOR"
        self.emit(ev)

    def offset_commit_enabled(self, group: str, p: int, offset: int) -> bool:
        """A standalone consumer of ``group`` commits its position ``offset`` on partition ``p``
        (OffsetCommit with generation -1). A position is at most the log end."""
        return p in self.plog and 0 <= offset <= len(self.plog[p])

    def offset_commit(self, group: str, p: int, offset: int) -> None:
        self.gc.groups.setdefault(group, {})[p] = offset
        ev = self.event("OffsetCommit", "consumer", partition=p, group=group)
        ev["committed_offset"] = offset
        self.emit(ev)

    def gc_marker_enabled(self, m: Msg) -> bool:
        """A marker on the offsets partition: COMMIT applies the pending offset, ABORT drops it; it
        closes the producer's transaction there."""
        return self.in_net(m) and m.type == "WriteTxnMarkers" and m.part == OFFSETS_PART

    def gc_marker(self, m: Msg) -> None:
        s = self.pst[OFFSETS_PART][m.tid]
        err = marker_check(m, s)
        if err == "NONE":
            gc = self.gc
            if m.commit and gc.pending[m.tid] != -1:
                gc.committed = gc.pending[m.tid]
            gc.pending[m.tid] = -1
            self.pst[OFFSETS_PART][m.tid] = attrs.evolve(s, epoch=m.epoch, cepoch=m.cepoch, open=False)
            self.void_held(OFFSETS_PART, m.tid)  # a TxnOffsetCommit under verification meanwhile
        self.take(m)
        self.send(m.reply(err))
        self._group_event("GcMarker", m, err)
