"""The group coordinator of the application's consumer group (KafkaTxn: Gc* actions).

Committed offsets, the pending transactional offset of each producer (applied or dropped by the
marker on the offsets partition), and the generation TxnOffsetCommit is checked against (KIP-447).
"""

from __future__ import annotations

import attrs

from .leader import marker_check
from .messages import Msg
from .state import OFFSETS_PART, ClusterState


class GroupActions(ClusterState):
    def _group_event(self, action: str, m: Msg, result: str) -> None:
        ev = self.with_msg(self.event(action, "group"), m)
        ev.update(result=result, group_generation=self.gc.gen, group_committed=self.gc.committed)
        self.emit(ev)

    def gc_offset_fetch_enabled(self, m: Msg) -> bool:
        """OffsetFetch with require_stable: UNSTABLE_OFFSET_COMMIT while offsets are pending."""
        return self.in_net(m) and m.type == "OffsetFetch"

    def gc_offset_fetch(self, m: Msg) -> None:
        self.take(m)
        if any(v != -1 for v in self.gc.pending.values()):
            reply = m.reply("UNSTABLE_OFFSET_COMMIT")
        else:
            reply = m.reply("NONE", val=self.gc.committed)
        self.send(reply)
        self._group_event("GcOffsetFetch", m, reply.err)

    def gc_txn_offset_commit_enabled(self, m: Msg) -> bool:
        """TxnOffsetCommit: the member must be in the current generation (ILLEGAL_GENERATION)."""
        return self.in_net(m) and m.type == "TxnOffsetCommit"

    def gc_txn_offset_commit(self, m: Msg) -> None:
        gc = self.gc
        # open clients: the serving broker checked the generation of its real group
        ok = self.k.open_clients or self.k.bug("no_generation_check") or (m.gen == gc.gen and gc.owner == (m.tid, m.inst))
        if ok:
            gc.pending[m.tid] = m.val
        self.take(m)
        self.send(m.reply("NONE" if ok else "ILLEGAL_GENERATION"))
        self._group_event("GcTxnOffsetCommit", m, "NONE" if ok else "ILLEGAL_GENERATION")

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
        """A marker on the offsets partition: COMMIT applies the pending offset, ABORT drops it."""
        return self.in_net(m) and m.type == "WriteTxnMarkers" and m.part == OFFSETS_PART

    def gc_marker(self, m: Msg) -> None:
        s = self.pst[OFFSETS_PART][m.tid]
        err = marker_check(m, s)
        if err == "NONE":
            gc = self.gc
            if m.commit and gc.pending[m.tid] != -1:
                gc.committed = gc.pending[m.tid]
            gc.pending[m.tid] = -1
            self.pst[OFFSETS_PART][m.tid] = attrs.evolve(s, epoch=m.epoch, cepoch=m.cepoch)
        self.take(m)
        self.send(m.reply(err))
        self._group_event("GcMarker", m, err)
