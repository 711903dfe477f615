"""Faults a session's switches inject between requests: a coordinator failover, a partition leader's restart."""

from __future__ import annotations

import attrs

from . import wire
from .translate import BrokerCore


class FaultHooks(BrokerCore):
    """Failover and LeaderRestart, taken between requests as steps of the reference broker."""

    # --- faults (taken between requests) ---

    def restart_leader_of(self, req: wire.Request) -> bool:
        """Restart the leader of the first partition of Produce request ``req``."""
        for td in getattr(req.body, "topic_data", []) or []:
            for pd in td.partition_data:
                return self.restart_leader(td.name, pd.index)
        return False

    def failover(self) -> bool:
        """The transaction coordinator fails over (a new coordinator epoch reloads its log)."""
        self.c.k = attrs.evolve(self.c.k, max_failovers=self.c.failovers + 1)  # the session's budget grows as it fails over
        ok = self.step("Failover", None)
        if ok:
            self.drive()
        return ok

    def restart_leader(self, topic: str, index: int) -> bool:
        p = self.partition(topic, index, create=False)
        if p is None:
            return False
        self.c.k = attrs.evolve(self.c.k, leader_restarts=True)
        ok = self.step("LeaderRestart", p)
        if ok:
            self.restarts += 1
            self.drive()
        return ok
