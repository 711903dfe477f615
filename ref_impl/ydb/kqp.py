"""The KQP session and the coordinator (YdbTopics, "Proposal and plan" and the session's
faults): the answer to the client, the lock's loss, the plan step, and a proposal's deadline."""

from __future__ import annotations

from .state import State


class KqpSteps(State):
    # --- KqpResult(tx) ---

    def _kqp_outcome(self, tx: int) -> tuple[bool, bool, bool]:
        """(done, early, ok) of KqpResult."""
        s = self.kqp[tx]
        done = s.st == "planned" and s.results == set(self.kqp_participants(tx))
        early = s.st == "proposing" and (s.refused or self.expired[tx])
        return done, early, done and not s.aborted

    def kqp_result_enabled(self, tx: int) -> bool:
        done, early, _ = self._kqp_outcome(tx)
        if not (done or early):
            return False
        c = self.cl[self.kqp[tx].w]
        return not c.hung and c.phase == "committing" and c.tx == tx

    def kqp_result(self, tx: int) -> None:
        _, early, ok = self._kqp_outcome(tx)
        s = self.kqp[tx]
        w = s.w
        s.st = "done"
        self.told[tx] = "COMMITTED" if ok else "BAD_REQUEST" if s.bad else "ABORTED"
        self.told_depth[tx] = s.depth if ok else 0
        if early:
            self.expired[tx] = True  # CancelProposal
        pos = dict(self.cl[w].pos)
        if not (ok or self.k.bug("no_reread") or s.shape == "write"):
            pos = self.reread(pos, tx)  # after an abort the reader re-reads from the committed offset
        self.cl[w] = self.idle_worker(pos)
        self.emit("KqpResult", w, (("txn_id", tx), ("committed", 1 if ok else 0)),
                  worker=w, txn_id=tx, result=self.told[tx], phase="idle", kqp_state=s.st)

    # --- LockLost(tx) ---

    def lock_lost_enabled(self, tx: int) -> bool:
        s = self.kqp[tx]
        return self.lock_losses < self.k.max_lock_losses and s.st == "open" and s.lock == "alive"

    def lock_lost(self, tx: int) -> None:
        self.kqp[tx].lock = "lost"
        self.lock_losses += 1
        self.emit("LockLost", "session", (("txn_id", tx),), txn_id=tx)

    # --- CoordPlan(tx) ---

    def coord_plan_enabled(self, tx: int) -> bool:
        s = self.kqp[tx]
        return (s.st == "proposing" and s.prepared == set(self.participants(tx)) and not self.expired[tx]
                and self.plan[tx] == 0)

    def coord_plan(self, tx: int) -> None:
        step = self.next_step
        self.plan[tx] = step
        for t in self.participants(tx):
            self.pending[t].add((step, tx))
        self.next_step += 1
        s = self.kqp[tx]
        depth = 1 + s.depth + 1  # after the PREPARED writes, made in parallel
        s.st, s.depth, s.pdepth = "planned", depth, depth
        self.emit("CoordPlan", "coordinator", (("txn_id", tx), ("step", step)), txn_id=tx, step=step, kqp_state=s.st)

    # --- PlanDeadline(tx) ---

    def plan_deadline_enabled(self, tx: int) -> bool:
        return (self.deadlines < self.k.max_deadlines and self.kqp[tx].st == "proposing" and not self.immediate(tx)
                and self.plan[tx] == 0 and not self.expired[tx])

    def plan_deadline(self, tx: int) -> None:
        self.expired[tx] = True
        self.deadlines += 1
        self.emit("PlanDeadline", "coordinator", (("txn_id", tx),), txn_id=tx)
