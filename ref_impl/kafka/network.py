"""The network's own steps (KafkaTxn: DiscardStale, Drop): delivery in any order is the
scheduler's choice of which message's step runs next."""

from __future__ import annotations

from .messages import RESPONSE_TYPES, Msg
from .state import ClusterState


class NetworkActions(ClusterState):
    def discard_stale_enabled(self, m: Msg) -> bool:
        """A response nobody waits for any more (the answer to an earlier copy)."""
        return not self.k.open_clients and self.in_net(m) and m.type in RESPONSE_TYPES and not self.answers((m.tid, m.inst), m)

    def discard_stale(self, m: Msg) -> None:
        self.take(m)
        self.emit(self.with_msg(self.event("DiscardStale", "network"), m))

    def drop_enabled(self, m: Msg) -> bool:
        """A message is lost (not the leader-to-coordinator verification traffic)."""
        return self.in_net(m) and self.losses < self.k.max_loss and m.type not in ("Verify", "VerifyResp")

    def lost_with(self, m: Msg) -> list[Msg]:
        """With pipelining a produce request or answer is lost with its connection, and so is
        everything else on it (LostWith)."""
        if self.k.pipelined and m.type in ("Produce", "ProduceResp"):
            return [n for n in self.net
                    if n.type in ("Produce", "ProduceResp") and (n.tid, n.inst, n.part) == (m.tid, m.inst, m.part)]
        return [m]

    def drop(self, m: Msg) -> None:
        for n in self.lost_with(m):
            self.take(n)
        self.losses += 1
        self.emit(self.with_msg(self.event("Drop", "network"), m))
