"""The network's own steps (KafkaTxn: DiscardStale, Drop): delivery in any order is the
scheduler's choice of which message's step runs next."""

from __future__ import annotations

from .messages import RESPONSE_TYPES, Msg
from .state import ClusterState


class NetworkActions(ClusterState):
    def discard_stale(self, m: Msg, dry: bool = False) -> bool:
        """A response nobody waits for any more (the answer to an earlier copy)."""
        if m not in self.net or m.type not in RESPONSE_TYPES or self.answers((m.tid, m.inst), m):
            return False
        if dry:
            return True
        self.take(m)
        self.emit(self.with_msg(self.event("DiscardStale", "network"), m))
        return True

    def drop(self, m: Msg, dry: bool = False) -> bool:
        """A message is lost (not the leader-to-coordinator verification traffic)."""
        if m not in self.net or self.losses >= self.k.max_loss or m.type in ("Verify", "VerifyResp"):
            return False
        if dry:
            return True
        self.take(m)
        self.losses += 1
        self.emit(self.with_msg(self.event("Drop", "network"), m))
        return True
