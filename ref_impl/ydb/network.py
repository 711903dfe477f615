"""The network (YdbTopics, Lose): a write, a read set or an acknowledgement goes missing."""

from __future__ import annotations

from .state import RS, WRITE, NetMsg, State


class NetworkSteps(State):
    def lose_enabled(self, m: NetMsg) -> bool:
        return self.losses < self.k.max_loss and m in self.net

    def lose(self, m: NetMsg) -> None:
        if m.type == WRITE:
            self.take_with_stream(m)
        else:
            self.take(m)
        self.losses += 1
        if m.type == WRITE:
            where = {"tablet": m.to, "partition": m.dst, "offset": m.m.off, "producer": self.logged_producer(m.m), "topic": "B",
                     "write_id": m.tx}
        else:
            where = {"tablet": m.to, "peer": m.frm, "decision": m.dec if m.type == RS else None}
        self.emit("Lose", "network", (("txn_id", m.tx),), message=m.type, txn_id=m.tx, **where)
