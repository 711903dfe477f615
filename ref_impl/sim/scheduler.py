"""The seeded scheduler: runs applications and the cluster, one enabled step at a time.

Each round, applications whose future is done continue to their next call; then the scheduler
lists every enabled step of the cluster (the spec's Next: deliver this message to its handler, drop
it, append a pending transition, retry, hang, fail over, ...) and picks one with a seeded random
choice. Faults are picked less often than normal steps. The run ends when nothing is enabled (or
at ``max_events``); a read_committed and a read_uncommitted consumer then read every partition.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterator, Optional

import attrs

from ref_impl.kafka.api import Consumer, KafkaError, Producer
from ref_impl.kafka.cluster import Cluster
from ref_impl.kafka.constants import Constants
from ref_impl.kafka.messages import RESPONSE_TYPES, Msg

from .faults import Fault, Faults, Schedule
from .workloads import App, Workload, make_app

NORMAL, FAULT, READ, LATE = 10, 1, 1, 2
READER_GROUP = "reader"


def constants_for(w: Workload, f: Faults, bugs: tuple[str, ...] = ()) -> Constants:
    return Constants(
        txn_ids=w.txn_ids,
        num_instances=w.instances,
        num_partitions=w.partitions,
        txns_per_instance=w.txns,
        version=w.version,
        late_requests=f.late,
        max_retries=f.retries,
        max_loss=f.loss,
        max_failovers=f.failovers,
        app_aborts=w.aborts,
        produce_timeouts=f.timeouts,
        max_hangs=f.hangs,
        input_size=w.input if w.kind == "ctp" else 0,
        leader_restarts=f.restarts > 0,
        bugs=bugs,
    )


@attrs.define
class Step:
    """One enabled step: the spec action, how likely the scheduler is to pick it, and the call."""

    action: str
    weight: int
    run: Callable[[], bool]

    @property
    def fault(self) -> bool:
        return self.weight == FAULT and self.action != "Fetch"


@attrs.define
class AppRunner:
    inst: tuple[str, int]
    gen: Optional[App] = None
    waiting: Any = None  # the Future the app waits on
    finished: bool = False


class Simulation:
    def __init__(
        self,
        workload: Workload,
        faults: Faults,
        seed: int,
        emit: Callable[[dict[str, Any]], None],
        bugs: tuple[str, ...] = (),
        max_events: int = 100_000,
        schedule: Optional[Schedule] = None,
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

    def _message_steps(self, m: Msg) -> Iterator[Step]:
        c = self.cluster
        handlers: dict[str, Callable[..., bool]] = {
            "InitProducerId": c.tc_init_producer_id,
            "AddPartitionsToTxn": c.tc_add_partitions_to_txn,
            "AddOffsetsToTxn": c.tc_add_offsets_to_txn,
            "Verify": c.tc_verify,
            "EndTxn": c.tc_end_txn,
            "WriteTxnMarkersResp": c.tc_marker_ack,
            "OffsetFetch": c.gc_offset_fetch,
            "TxnOffsetCommit": c.gc_txn_offset_commit,
            "Produce": c.leader_produce,
        }
        # An earlier copy of a request the client has since sent again tends to arrive late.
        sender = c.cl.get((m.tid, m.inst))
        late = sender is not None and sender.req.gtx == m.gtx and sender.req.type == m.type and sender.req.att > m.att
        if m.type in handlers:
            yield Step(m.type, LATE if late else NORMAL, lambda h=handlers[m.type]: h(m))
        elif m.type == "WriteTxnMarkers":
            h = c.gc_marker if m.part == 0 else c.leader_marker
            yield Step(m.type, NORMAL, lambda: h(m))
        elif m.type == "VerifyResp":
            yield Step(m.type, NORMAL, lambda: c.leader_verified(m) or c.leader_discard_verify(m))
        elif m.type in RESPONSE_TYPES:
            i = (m.tid, m.inst)
            if c.client_receive(i, m, dry=True):
                yield Step("ClientReceive", NORMAL, lambda: c.client_receive(i, m))
            elif c.discard_stale(m, dry=True):
                yield Step("DiscardStale", NORMAL, lambda: c.discard_stale(m))
        if c.drop(m, dry=True):
            yield Step("Drop", FAULT, lambda: c.drop(m))

    def steps(self) -> list[Step]:
        c = self.cluster
        out: list[Step] = []
        for m in list(c.net):
            if self.held.get(m, -1) >= c.events:
                continue
            out += self._message_steps(m)
        for i in c.instances:
            cli = c.cl[i]
            if c.send_request(i, dry=True):
                out.append(Step("SendRequest", NORMAL, lambda i=i: c.send_request(i)))
            if c.re_init(i, dry=True):
                out.append(Step("ReInit", NORMAL, lambda i=i: c.re_init(i)))
            if c.retry(i, dry=True):
                late = c.in_flight(cli.req)  # a copy still in flight: a fault (late or duplicate)
                out.append(Step("Retry", FAULT if late else NORMAL, lambda i=i: c.retry(i)))
            if c.produce_timeout(i, dry=True):
                out.append(Step("ProduceTimeout", FAULT, lambda i=i: c.produce_timeout(i)))
            if c.hang(i, dry=True):
                out.append(Step("Hang", FAULT, lambda i=i: c.hang(i)))
            if c.resume(i, dry=True):
                out.append(Step("Resume", FAULT, lambda i=i: c.resume(i)))
        for t in c.k.txn_ids:
            if c.tc_append(t, dry=True):
                out.append(Step("TcAppend", NORMAL, lambda t=t: c.tc_append(t)))
            if c.tc_complete(t, dry=True):
                out.append(Step("TcComplete", NORMAL, lambda t=t: c.tc_complete(t)))
            for p in [0] + c.parts:
                if c.tc_resend_marker(t, p, dry=True):
                    out.append(Step("TcResendMarker", NORMAL, lambda t=t, p=p: c.tc_resend_marker(t, p)))
        for p in c.parts:
            if c.leader_verify_lost(p, dry=True):
                out.append(Step("LeaderVerifyLost", NORMAL, lambda p=p: c.leader_verify_lost(p)))
        if c.failover(dry=True):
            out.append(Step("Failover", FAULT, lambda: c.failover()))
        if self.restarts < self.f.restarts:
            for p in c.parts:
                out.append(Step("LeaderRestart", FAULT, lambda p=p: self._restart(p)))
        # A consumer reads a partition now and then, to check what it was given at that moment.
        for p in c.parts:
            if len(c.plog[p]) > self.reads[p]:
                out.append(Step("Fetch", READ, lambda p=p: self._read(p)))
        if self.schedule is not None:
            out = [s for s in out if not s.fault]
        return out

    # --- scheduled faults ---

    def _fault_candidates(self, f: Fault) -> list[Callable[[], bool]]:
        c = self.cluster

        def msg_ok(m: Msg) -> bool:
            return not f.type or m.type == f.type

        def req_ok(i: tuple[str, int]) -> bool:
            return not f.type or c.cl[i].req.type == f.type

        if f.kind == "drop":
            return [lambda m=m: c.drop(m) for m in c.net if msg_ok(m) and c.drop(m, dry=True)]
        if f.kind == "delay":
            return [lambda m=m: self._delay(m, f.steps) for m in c.net if msg_ok(m) and m not in self.held]
        if f.kind == "retry":
            return [lambda i=i: c.retry(i) for i in c.instances
                    if req_ok(i) and c.retry(i, dry=True) and c.in_flight(c.cl[i].req)]
        if f.kind == "timeout":
            return [lambda i=i: c.produce_timeout(i) for i in c.instances if c.produce_timeout(i, dry=True)]
        if f.kind == "hang":
            return [lambda i=i: c.hang(i) for i in c.instances if req_ok(i) and c.hang(i, dry=True)]
        if f.kind == "resume":
            return [lambda i=i: c.resume(i) for i in c.instances if c.resume(i, dry=True)]
        if f.kind == "restart":
            return [lambda p=p: self._restart(p) for p in c.parts]
        return [c.failover] if c.failover(dry=True) else []

    def _restart(self, p: int) -> bool:
        self.restarts += 1
        return self.cluster.leader_restart(p)

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
        """Read p from the start at one isolation level, or let the downstream reader poll on
        from its position and commit it."""
        x = self.rng.random()
        if x < 0.25:
            self.reader.poll([p])
            self.reader.commit({p: self.reader.positions[p]})
        else:
            self.cluster.fetch(p, "read_committed" if x < 0.75 else "read_uncommitted", 0)
        self.reads[p] = len(self.cluster.plog[p])
        return True

    def run(self, progress: Optional[Callable[[int], None]] = None) -> int:
        """Run to the end; returns the number of events."""
        c = self.cluster
        while c.events < self.max_events:
            self._advance_apps()
            if self.schedule is not None:
                self._apply_due_faults()
                self._advance_apps()
            steps = self.steps()
            if not steps and self.held:
                self.held.clear()  # only delayed messages are left: deliver them now
                steps = self.steps()
            if not steps:
                break
            total = sum(s.weight for s in steps)
            x = self.rng.randrange(total)
            for s in steps:
                x -= s.weight
                if x < 0:
                    break
            if not s.run():
                raise AssertionError(f"step {s.action} was listed as enabled but did not run")
            if progress:
                progress(c.events)
        for p in c.parts:
            c.fetch(p, "read_committed", 0)
            c.fetch(p, "read_uncommitted", 0)
        return c.events
