"""The group coordinator of the application's consumer group (KafkaTxn: Gc* actions).

Committed offsets, the pending transactional offset of each producer (applied or dropped by the
marker on the offsets partition), and the generation TxnOffsetCommit is checked against (KIP-447).
"""

from __future__ import annotations

from .leader import marker_check
from .messages import Msg
from .state import OFFSETS_PART, ClusterState, ProducerState


class GroupActions(ClusterState):
    def _group_event(self, action: str, m: Msg, result: str) -> None:
        ev = self.with_msg(self.event(action, "group"), m)
        ev.update(result=result, group_generation=self.gc.gen, group_committed=self.gc.committed)
        self.emit(ev)

    def gc_offset_fetch(self, m: Msg, dry: bool = False) -> bool:
        """OffsetFetch with require_stable: UNSTABLE_OFFSET_COMMIT while offsets are pending."""
        if m not in self.net or m.type != "OffsetFetch":
            return False
        if dry:
            return True
        self.take(m)
        if any(v != -1 for v in self.gc.pending.values()):
            reply = m.reply("UNSTABLE_OFFSET_COMMIT")
        else:
            reply = m.reply("NONE", val=self.gc.committed)
        self.send(reply)
        self._group_event("GcOffsetFetch", m, reply.err)
        return True

    def gc_txn_offset_commit(self, m: Msg, dry: bool = False) -> bool:
        """TxnOffsetCommit: the member must be in the current generation (ILLEGAL_GENERATION)."""
        if m not in self.net or m.type != "TxnOffsetCommit":
            return False
        if dry:
            return True
        gc = self.gc
        ok = self.k.bug("no_generation_check") or (m.gen == gc.gen and gc.owner == (m.tid, m.inst))
        if ok:
            gc.pending[m.tid] = m.val
        self.take(m)
        self.send(m.reply("NONE" if ok else "ILLEGAL_GENERATION"))
        self._group_event("GcTxnOffsetCommit", m, "NONE" if ok else "ILLEGAL_GENERATION")
        return True

    def offset_commit(self, group: str, p: int, offset: int, dry: bool = False) -> bool:
        """A standalone consumer of ``group`` commits its position ``offset`` on partition ``p``
        (OffsetCommit with generation -1). A position is at most the log end."""
        if p not in self.plog or not 0 <= offset <= len(self.plog[p]):
            return False
        if dry:
            return True
        self.gc.groups.setdefault(group, {})[p] = offset
        ev = self.event("OffsetCommit", "consumer", partition=p, group=group)
        ev["committed_offset"] = offset
        self.emit(ev)
        return True

    def gc_marker(self, m: Msg, dry: bool = False) -> bool:
        """A marker on the offsets partition: COMMIT applies the pending offset, ABORT drops it."""
        if m not in self.net or m.type != "WriteTxnMarkers" or m.part != OFFSETS_PART:
            return False
        if dry:
            return True
        s = self.pst[OFFSETS_PART][m.tid]
        err = marker_check(m, s)
        if err == "NONE":
            gc = self.gc
            if m.commit and gc.pending[m.tid] != -1:
                gc.committed = gc.pending[m.tid]
            gc.pending[m.tid] = -1
            self.pst[OFFSETS_PART][m.tid] = ProducerState(m.epoch, s.last_seq, s.seqs, s.open, m.cepoch)
        self.take(m)
        self.send(m.reply(err))
        self._group_event("GcMarker", m, err)
        return True
