"""The seeded scheduler: runs applications and the cluster, one enabled step at a time.

Each round, applications whose future is done continue to their next call; then the scheduler
lists every enabled step of the cluster (the spec's Next, from the table ``ref_impl.kafka.actions``:
deliver this message to its handler, drop it, append a pending transition, retry, hang, fail over,
...) and picks one with a seeded random choice. Faults are picked less often than normal steps.
The run ends when nothing is enabled (or at ``max_events``); a read_committed and a
read_uncommitted consumer then read every partition.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any, cast

import attrs

from ref_impl.kafka.actions import (  # noqa: F401  (the weights of steps, used here before)
    ACTION,
    ACTIONS,
    FAULT,
    INSTANCE,
    LATE,
    MESSAGE,
    NORMAL,
    SCHEDULER,
    TXN_ID,
    TXN_PARTITION,
    Action,
    arguments,
    run,
)
from ref_impl.kafka.api import Consumer, KafkaError, Producer
from ref_impl.kafka.cluster import Cluster
from ref_impl.kafka.constants import Constants
from ref_impl.kafka.messages import Msg
from ref_impl.sim.stepper import Step, Stepper

from .faults import Fault, Faults, Schedule
from .workloads import App, Workload, make_app

READ = 1  # a consumer's read, as rare as a fault
READER_GROUP = "reader"

# The actions the scheduler picks, grouped as it lists them: every step of each message in flight,
# then of each client, then of each transactional.id; then the others, action by action.
SCHEDULED = tuple(a for a in ACTIONS if a.by == SCHEDULER)
PER_MESSAGE = tuple(a for a in SCHEDULED if a.over == MESSAGE)
PER_CLIENT = tuple(a for a in SCHEDULED if a.over == INSTANCE)
PER_TXN_ID = tuple(a for a in SCHEDULED if a.over in (TXN_ID, TXN_PARTITION))
OTHERS = tuple(a for a in SCHEDULED if a not in PER_MESSAGE + PER_CLIENT + PER_TXN_ID)

# The scheduled faults (``Fault.kind``) and the action each one takes; ``Fault.type`` narrows a
# drop to messages of that type, a retry or a hang to clients whose outstanding request has it.
FAULT_ACTIONS = {
    "drop": ACTION["Drop"],
    "retry": ACTION["Retry"],
    "timeout": ACTION["ProduceTimeout"],
    "hang": ACTION["Hang"],
    "resume": ACTION["Resume"],
    "restart": ACTION["LeaderRestart"],
    "failover": ACTION["Failover"],
    "txn-timeout": ACTION["TcTimeoutAbort"],
    "expire": ACTION["LeaderExpireProducer"],
    "append-fail": ACTION["TcAppendFail"],
    "lag": ACTION["FollowerLag"],
    "unclean": ACTION["UncleanElection"],
}
NARROWED_BY_MESSAGE = ("drop",)
NARROWED_BY_REQUEST = ("retry", "hang")


def constants_for(w: Workload, f: Faults, bugs: tuple[str, ...] = ()) -> Constants:
    """The spec's constants of a run. A pipelining client's produce requests neither time out nor
    arrive late (KafkaTxn's abstraction: a request timeout closes the connection), so with
    in_flight > 1 those faults are left out."""
    pipelined = w.in_flight > 1
    return Constants(
        txn_ids=w.txn_ids,
        num_instances=w.instances,
        num_partitions=w.partitions,
        txns_per_instance=w.txns,
        version=w.version,
        max_epoch=w.max_epoch,
        late_requests=tuple(r for r in f.late if not (pipelined and r == "Produce")),
        max_retries=f.retries,
        max_loss=f.loss,
        max_failovers=f.failovers,
        app_aborts=w.aborts,
        produce_timeouts=f.timeouts and not pipelined,
        max_hangs=f.hangs,
        input_size=w.input if w.kind == "ctp" else 0,
        leader_restarts=f.restarts > 0,
        txn_timeouts=f.txn_timeouts,
        producer_expiry=f.expiry,
        max_append_fails=f.append_fails,
        unclean_elections=f.unclean,
        max_in_flight=w.in_flight,
        batches=w.batches,
        client_bumps=w.bumps,
        bugs=bugs,
    )


# A reader goes back this many entries before where its last read ended: what was open then and
# has been decided since is read again.
REREAD = 64


@attrs.define
class AppRunner:
    inst: tuple[str, int]
    gen: App | None = None
    waiting: Any = None  # the Future the app waits on
    finished: bool = False


class Simulation(Stepper):
    def __init__(
        self,
        workload: Workload,
        faults: Faults,
        seed: int,
        emit: Callable[[dict[str, Any]], None],
        bugs: tuple[str, ...] = (),
        max_events: int = 100_000,
        schedule: Schedule | None = None,
    ) -> None:
        # Two modes. Random faults (schedule None): every fault the budgets allow is a step the
        # scheduler may pick, less often than normal steps. Scheduled faults: only the schedule's
        # faults happen, each at its time; the budgets are the schedule's.
        self.schedule = sorted(schedule.faults) if schedule is not None else None
        self.scheduled = schedule.describe() if schedule is not None else None
        if schedule is not None:
            faults = schedule.budgets()
        self.held: dict[Msg, int] = {}  # delayed messages: deliverable again after this event
        self.w, self.f, self.seed = workload, faults, seed
        self.k = constants_for(workload, faults, bugs)
        self.rng = random.Random(seed)
        self.app_rng = random.Random(seed * 7919 + 1)
        self.cluster = Cluster(self.k, emit)
        self.max_events = max_events
        self.apps = [AppRunner(i) for i in self.cluster.instances]
        self.reads = {p: 0 for p in self.cluster.parts}
        self.restarts = 0
        # A downstream reader of the output: polls read_committed and commits its position.
        self.reader = Consumer(self.cluster, "read_committed", group_id=READER_GROUP)
        self.reader.assign(self.cluster.parts)

    # --- applications ---

    def _may_start(self, a: AppRunner) -> bool:
        t, n = a.inst
        return n == 1 or self.cluster.cl[(t, n - 1)].hung

    def _advance_apps(self) -> None:
        for a in self.apps:
            while not a.finished:
                c = self.cluster.cl[a.inst]
                if c.hung:
                    break
                if a.gen is None:
                    if not self._may_start(a):
                        break
                    a.gen = make_app(self.cluster, Producer(self.cluster, *a.inst), self.w, self.app_rng)
                    value, error = None, None
                elif a.waiting is not None and a.waiting.done():
                    try:
                        value, error = a.waiting.result(), None
                    except KafkaError as e:
                        value, error = None, e
                else:
                    break
                try:
                    a.waiting = a.gen.throw(error) if error else a.gen.send(value)
                except StopIteration:
                    a.finished = True

    # --- the cluster's enabled steps ---

    def _step(self, a: Action, arg: object) -> Step:
        return Step(a.name, a.weight(self.cluster, arg), lambda: self._run(a, arg), a.fault(self.cluster, arg))

    def _run(self, a: Action, arg: object) -> bool:
        if a.name == "LeaderRestart":
            self.restarts += 1
        return a.run(self.cluster, arg)

    def _allowed(self, a: Action) -> bool:
        """The spec allows any number of leader restarts; a run has a budget."""
        return a.name != "LeaderRestart" or self.restarts < self.f.restarts

    def steps(self) -> list[Step]:
        c = self.cluster
        out: list[Step] = []
        for m in list(c.net):
            if self.held.get(m, -1) >= c.events:
                continue
            out += [self._step(a, m) for a in PER_MESSAGE if a.takes_message(m) and a.enabled(c, m)]
        for i in c.instances:
            out += [self._step(a, i) for a in PER_CLIENT if a.enabled(c, i)]
        for t in c.k.txn_ids:
            for a in PER_TXN_ID:
                out += [self._step(a, arg) for arg in arguments(c, a.over, t) if a.enabled(c, arg)]
        for a in OTHERS:
            if self._allowed(a):
                out += [self._step(a, arg) for arg in arguments(c, a.over) if a.enabled(c, arg)]
        # A consumer reads a partition now and then, to check what it was given at that moment.
        for p in c.parts:
            if len(c.plog[p]) > self.reads[p]:
                out.append(Step("Fetch", READ, functools.partial(self._read, p)))
        if self.schedule is not None:
            out = [s for s in out if not s.fault]
        return out

    # --- scheduled faults ---

    def _fault_candidates(self, f: Fault) -> list[Callable[[], bool]]:
        c = self.cluster
        if f.kind == "delay":
            return [functools.partial(self._delay, m, f.steps) for m in c.net
                    if (not f.type or m.type == f.type) and m not in self.held]
        a = FAULT_ACTIONS[f.kind]

        def narrowed(arg: object) -> bool:
            if not f.type:
                return True
            if f.kind in NARROWED_BY_MESSAGE:
                return cast(Msg, arg).type == f.type
            if f.kind in NARROWED_BY_REQUEST:
                return c.cl[arg].req.type == f.type  # type: ignore[index]
            return True

        return [functools.partial(self._run, a, arg) for arg in arguments(c, a.over)
                if narrowed(arg) and a.enabled(c, arg) and a.fault(c, arg)]

    def _delay(self, m: Msg, steps: int) -> bool:
        self.held[m] = self.cluster.events + steps
        return False  # not a step: nothing happened yet

    def _apply_due_faults(self) -> None:
        assert self.schedule is not None
        for f in list(self.schedule):
            if f.at > self.cluster.events:
                break
            cands = self._fault_candidates(f)
            if cands:
                self.schedule.remove(f)
                cands[f.target % len(cands)]()

    def _read(self, p: int) -> bool:
        """Read p at one isolation level from REREAD entries before where the last read of p
        ended (from the start while the log is short), or let the downstream reader poll on from
        its position and commit it. (A read from the start every time would make a run's trace,
        and checking it, grow with the square of its length.)"""
        x = self.rng.random()
        if x < 0.25:
            self.reader.poll([p])
            self.reader.commit({p: self.reader.positions[p]})
        else:
            start = max(0, min(self.reads[p], len(self.cluster.plog[p])) - REREAD)
            run(self.cluster, "Fetch", (p, "read_committed" if x < 0.75 else "read_uncommitted", start))
        self.reads[p] = len(self.cluster.plog[p])
        return True

    # --- the loop (ref_impl/sim/stepper.py) ---

    def events(self) -> int:
        return self.cluster.events

    def before_round(self) -> None:
        self._advance_apps()
        if self.schedule is not None:
            self._apply_due_faults()
            self._advance_apps()

    def when_stuck(self) -> list[Step]:
        if not self.held:
            return []
        self.held.clear()  # only delayed messages are left: deliver them now
        return self.steps()

    def run(self, progress: Callable[[int], None] | None = None) -> int:
        """Run to the end, then read every partition at both isolation levels; the number of events."""
        super().run(progress)
        c = self.cluster
        for p in c.parts:
            run(c, "Fetch", (p, "read_committed", 0))
            run(c, "Fetch", (p, "read_uncommitted", 0))
        return c.events
