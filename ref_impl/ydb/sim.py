"""The seeded scheduler: runs the workers' applications and the engine, one enabled step at a time.

Each round, applications whose call was answered continue to their next call; then the scheduler
lists every enabled step: the next step of each application's call, then every enabled step of
the table of actions (``actions``) in the table's order (a message delivered or lost, a tablet's
step, KQP's answer, a fault), and picks one with a seeded random choice; faults are picked less
often than normal steps, and only within the run's budgets (the spec's fault constants). The run
ends when nothing is enabled (or at ``max_events``). Same seed, workload, faults and bugs: same
run, and the same trace byte for byte.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import attrs

from ref_impl.sim import settings
from ref_impl.sim.settings import SettingsError
from ref_impl.sim.stepper import Step, Stepper

from . import api
from .actions import ACTION, ACTIONS, NORMAL, SCHEDULER, Action, arguments
from .constants import BUGS, PRODUCERS, SHAPES, VERSIONS, Constants
from .engine import Engine
from .state import GONE_STATES

GENERATOR = "txconform ref_impl.ydb 1"


@attrs.frozen
class Workload:
    """``copy``: each worker reads a batch of topic A (consumer c), writes it to topic B (and a row
    of the table), and commits the three in one transaction, until MaxTxns transactions began.
    ``shapes=copy+read+write`` mixes in read-only transactions (the batch's offsets commit,
    nothing is written) and write-only ones (messages of the application's own, no read), each
    transaction's shape drawn at random; ``nontx=N`` (with ``producers=partition``) lets a
    write-only transaction's producer write N messages outside any transaction; ``ranges=N`` lets
    a read-only transaction name up to N offset ranges of its own (UpdateOffsetsInTransaction);
    ``reads=N`` lets a copy or read-only transaction read up to N batches, after its writes;
    ``others=N`` lets another producer write N messages outside transactions beside them;
    ``close=true`` lets the application close its transactional writer by force before the commit;
    ``writers=N`` lets a write-only transaction open up to N writers, producers of their own;
    ``plain=N`` lets the application write N messages outside any transaction, at any time, as
    any of its producers, mostly with the automatic SeqNo, sometimes a repeat or a gap;
    ``parts=2`` (with reads=2 or more and src=2 or more) lets a transaction's further read take a
    batch of a second partition of A; ``commits=N`` lets the workers read N batches outside any
    transaction and commit them on the read stream (reader.commit_with_ack)."""

    workers: int = 2
    src: int = 1
    dst: int = 2
    msgs: int = 4
    batch: int = 2
    txns: int = 6
    table: bool = False
    rollback: bool = False
    producers: str = "none"
    version: str = "v26"
    shapes: tuple[str, ...] = ("copy",)
    nontx: int = 0
    ranges: int = 0
    reads: int = 1
    others: int = 0
    close: bool = False
    writers: int = 1
    plain: int = 0
    parts: int = 1
    commits: int = 0

    KEYS = ("workers", "src", "dst", "msgs", "batch", "txns", "table", "rollback", "producers", "version", "shapes",
            "nontx", "ranges", "reads", "others", "close", "writers", "plain", "parts", "commits")

    @classmethod
    def parse(cls, text: str) -> Workload:
        """``copy``, then optional ``:key=value,...`` (workers, src, dst, msgs, batch, txns, table, rollback, producers,
        version, shapes: e.g. ``shapes=copy+read+write``, nontx: how many writes outside transactions, with
        producers=partition and write-only transactions, ranges: how many offset ranges of its own a
        read-only transaction names, reads: how many batches a transaction reads, others: how many writes
        another producer makes outside transactions, close: whether the application closes its writer by force,
        writers: how many writers a write-only transaction may open, plain: how many writes outside any
        transaction the application makes, parts: how many partitions of A a transaction reads, 1 or 2,
        commits: how many batches the workers read and commit outside transactions)."""
        kind, _, rest = text.strip().partition(":")
        if kind != "copy":
            raise SettingsError(f"unknown workload {kind!r}; use copy, e.g. copy:workers=2,src=1,dst=2,msgs=4,txns=6,table=true")
        fields: dict[str, Any] = {}
        for key, value in settings.pairs(rest).items():
            if key == "version":
                fields[key] = settings.choice(key, value, VERSIONS)
            elif key == "shapes":
                names = value.split("+")
                for n in names:
                    settings.choice(key, n, SHAPES)
                fields[key] = tuple(sorted(set(names)))
            elif key == "producers":
                fields[key] = settings.choice(key, value, PRODUCERS)
            elif key in ("table", "rollback", "close"):
                fields[key] = settings.flag(key, value)
            elif key in cls.KEYS:
                fields[key] = settings.whole(key, value, 0 if key in ("msgs", "txns", "nontx", "ranges", "others", "plain", "commits") else 1)
            else:
                raise settings.unknown("workload setting", key, cls.KEYS)
        return cls(**fields)

    def describe(self) -> str:
        d, default = attrs.asdict(self), attrs.asdict(Workload())
        d["shapes"], default["shapes"] = "+".join(self.shapes), "copy"
        text = "copy" + "".join((":" if n == 0 else ",") + f"{k}={v}"
                                for n, (k, v) in enumerate((k, v) for k, v in d.items() if v != default[k]))
        return text.replace("=True", "=true").replace("=False", "=false")


@attrs.frozen
class Faults:
    """The fault budgets, the spec's MaxHangs, MaxRestarts, MaxLoss, MaxLockLosses, MaxDeadlines,
    MaxReconnects: a worker hangs (and its partition is taken over; it resumes as a zombie), a
    tablet restarts, the network loses a message, a transaction's lock dies, a proposal's plan
    deadline passes, a write's acknowledgement is lost and the SDK's writer reconnects and resends, a
    partition of B splits (MaxSplits)."""

    hangs: int = 0
    restarts: int = 0
    loss: int = 0
    locklosses: int = 0
    deadlines: int = 0
    reconnects: int = 0
    splits: int = 0

    KEYS = ("hangs", "restarts", "loss", "locklosses", "deadlines", "reconnects", "splits")

    @classmethod
    def parse(cls, text: str) -> Faults:
        """``none``, ``all`` (one of each but splits), or e.g.
        ``hangs=1,restarts=2,loss=1,locklosses,deadlines,reconnects,splits``."""
        preset = settings.fault_preset(text)
        if preset:
            # all: one of each, but no split: its children are not modelled, so after a split every
            # later transaction routed to the parent aborts, and a long run ends in aborts
            return cls() if preset == "none" else cls(1, 1, 1, 1, 1, 1, 0)
        fields: dict[str, int] = {}
        for key, value in settings.pairs(text, bare="1").items():
            if key not in cls.KEYS:
                raise settings.unknown("fault", key, ("none", "all", *(k + "=N" for k in cls.KEYS)))
            fields[key] = settings.whole(key, value, 0)
        return cls(**fields)

    def describe(self) -> str:
        d = attrs.asdict(self)
        if all(v == 0 for v in d.values()):
            return "none"
        return ",".join(f"{k}={v}" for k, v in d.items() if v)


def parse_bugs(text: str) -> tuple[str, ...]:
    return settings.bugs(text, BUGS)


def constants_for(w: Workload, f: Faults, bugs: tuple[str, ...] = ()) -> Constants:
    return Constants(
        workers=tuple(f"w{n}" for n in range(1, w.workers + 1)),
        num_src=w.src,
        num_dst=w.dst,
        msgs_per_src=w.msgs,
        batch_max=w.batch,
        max_txns=w.txns,
        table=w.table,
        rollbacks=w.rollback,
        shapes=w.shapes,
        max_non_tx_writes=w.nontx,
        max_ranges=w.ranges,
        max_reads=w.reads,
        max_other_writes=w.others,
        force_closes=w.close,
        tx_writers=w.writers,
        max_plain_writes=w.plain,
        max_parts_read=w.parts,
        max_plain_commits=w.commits,
        producers=w.producers,
        version=w.version,
        max_hangs=f.hangs,
        max_restarts=f.restarts,
        max_loss=f.loss,
        max_lock_losses=f.locklosses,
        max_deadlines=f.deadlines,
        max_reconnects=f.reconnects,
        max_splits=f.splits,
        bugs=bugs,
    )


@attrs.define
class AppRunner:
    worker: str
    gen: api.App
    call: api.Call | None = None
    finished: bool = False


SCHEDULED = tuple(a for a in ACTIONS if a.by == SCHEDULER)


class Simulation(Stepper):
    def __init__(self, workload: Workload, faults: Faults, seed: int, emit: Callable[[dict[str, Any]], None],
                 bugs: tuple[str, ...] = (), max_events: int = 100_000, prune: bool = True) -> None:
        self.w, self.f, self.seed, self.bugs = workload, faults, seed, bugs
        self.k = constants_for(workload, faults, bugs)
        self.rng = random.Random(seed)
        self.app_rng = random.Random(seed * 7919 + 1)
        self.engine = Engine(self.k, emit=emit)
        self.max_events = max_events
        self.prune = prune
        self.quiet: set[int] = set()  # transactions no step can touch any more
        self.apps = [AppRunner(w, api.copy_app(api.Driver(self.engine, w), self._batch_size, self._rollback_here,
                                               self._shape, self._outside_here, self._write_count,
                                               self._table_here, self._range, self._more_here,
                                               self._other_here, self._close_here, self._writer_count,
                                               self._plain_here, self._plain_read_here, self._first_writer))
                     for w in self.k.workers]

    def _batch_size(self) -> int:
        return self.app_rng.randint(1, self.k.batch_max)

    def _table_here(self) -> bool:
        """With a table, a transaction reads and upserts the row three times in four (no draw without one)."""
        return self.app_rng.random() < 0.75

    def _write_count(self) -> int:
        """How many messages a write-only transaction writes: none (an empty commit) up to BatchMax."""
        return self.app_rng.randint(0, self.k.batch_max)

    def _plain_here(self) -> tuple[int, int | None] | None:
        """With plain=N the application writes outside any transaction at about one in three of its
        chances, while the budget lasts, as one of its producers: the automatic SeqNo seven times in
        ten, else a repeat of the producer's last or a gap of one (no draw without it)."""
        e = self.engine
        if self.w.plain <= e.plain_sent or self.app_rng.random() >= 1 / 3:
            return None
        q = self.app_rng.choice(self.k.plain_producers)
        o = e.plain_next(q)
        r = self.app_rng.random()
        if r < 0.7 or (r < 0.85 and o == 0):
            return q, None
        seqno = o if r < 0.85 else o + 2  # a repeat of the last SeqNo, or a gap of one
        return (q, seqno) if seqno - 1 in self.k.app_offsets else (q, None)

    def _plain_read_here(self, reader: api.TopicReader) -> int | None:
        """With commits=N a worker reads a batch outside any transaction and commits it at about one
        in three of its chances (every chance once no transaction is left to begin), while the budget
        lasts and its partitions have messages left (no draw without it): the batch's size, or None."""
        e = self.engine
        if self.w.commits <= e.plain_reads():
            return None
        if not reader.has_messages() or (e.next_tx <= self.k.max_txns and self.app_rng.random() >= 1 / 3):
            return None
        return self._batch_size()

    def _first_writer(self, writers: int) -> int:
        """Which of a write-only transaction's writers writes first (drawn only when it has several):
        its first message's SourceId is the supportive partition's first, whose MinSeqNo
        seqno_first_source alone would check."""
        return self.app_rng.randrange(writers)

    def _writer_count(self) -> int:
        """How many writers a write-only transaction opens: 1 up to the workload's writers (no draw
        with one)."""
        return 1 if self.w.writers == 1 else self.app_rng.randint(1, self.w.writers)

    def _shape(self) -> str:
        """The next transaction's shape: drawn among the workload's shapes (no draw with one, so
        that a copy-only run is the run it always was)."""
        shapes = self.w.shapes
        return shapes[0] if len(shapes) == 1 else self.app_rng.choice(shapes)

    def _range(self, batch: api.Batch) -> tuple[int, int] | None:
        """With ranges=N a read-only transaction names a range of its own at about one in two of its
        chances, while its budget lasts: mostly the messages after its batch (processed outside the
        transaction), sometimes any range (no draw without it)."""
        e = self.engine
        c = e.cl[e.kqp[batch.tx_id].w]
        if self.w.ranges <= c.ranges or self.app_rng.random() < 0.5:
            return None
        end = batch.messages[-1].off + 1 if batch.messages else 0
        b = end if self.app_rng.random() < 0.6 else self.app_rng.randint(0, self.k.msgs_per_src)
        return b, min(b + self.app_rng.randint(1, self.k.batch_max), self.k.msgs_per_src + 1)

    def _more_here(self, tx: api.Tx) -> bool:
        """With reads=N a transaction reads again at about one in two of its chances, while its
        budget lasts and its partition (or, with parts=2, another of its worker's) has more (no draw
        without it)."""
        e, w = self.engine, tx.driver.worker
        c = e.cl[w]
        if self.w.reads <= c.reads or c.ranges or e.kqp[tx.id].src2:
            return False
        more = c.e < self.k.msgs_per_src and e.owner.get(c.src) == w
        other = self.k.max_parts_read >= 2 and bool(e.other_partitions(w))
        if not (more or other):
            return False
        return self.app_rng.random() < 0.5

    def _other_here(self) -> bool:
        """With others=N another producer writes beside a transaction's first write at about one in
        two of the chances, while the budget lasts (no draw without it)."""
        return self.w.others > self.engine.plain_writes(-1) and self.app_rng.random() < 0.5

    def _close_here(self) -> bool:
        """With close=true the application closes its writer by force at about one in eight of its
        chances (no draw without it)."""
        return self.w.close and self.app_rng.random() < 0.125

    def _outside_here(self) -> bool:
        """With nontx=N the application writes outside its write-only transaction at about one in
        two of its chances, while the budget lasts (no draw without it)."""
        e = self.engine
        return (self.w.nontx > e.plain_writes(0) and self.w.producers == "partition"
                and self.app_rng.random() < 0.5)

    def _rollback_here(self) -> bool:
        """With rollback=true the application rolls back at about one in eight of its chances."""
        return self.w.rollback and self.app_rng.random() < 0.125

    # --- applications ---

    def _advance(self, a: AppRunner) -> None:
        """Run the application until its call has a step to take or waits for an answer."""
        while not a.finished:
            value: Any = None
            error: api.YdbError | None = None
            if a.call is not None:
                if a.call.taken < len(a.call.steps):
                    error = a.call.fails()
                    if error is None:
                        return
                elif not a.call.done():
                    return
                else:
                    try:
                        value = a.call.outcome()
                    except api.YdbError as e:
                        error = e
            try:
                if a.call is None:
                    a.call = next(a.gen)
                elif error is not None:
                    a.call = a.gen.throw(error)
                else:
                    a.call = a.gen.send(value)
            except StopIteration:
                a.finished = True

    def _app_step(self, a: AppRunner) -> Step | None:
        if a.finished or a.call is None:
            return None
        nxt = a.call.next_step()
        if nxt is None:
            return None
        name, arg = nxt
        action = ACTION[name]
        if arg is None or not action.enabled(self.engine, arg):
            if a.call.taken in a.call.optional:  # e.g. a rollback the session refuses while it commits
                a.call.taken += 1
                return self._app_step(a)
            return None
        call = a.call

        def take() -> bool:
            ok = action.run(self.engine, arg)
            call.taken += 1
            return ok

        return Step(name, NORMAL, take)

    # --- the engine's enabled steps ---

    def live_txns(self) -> list[int]:
        """The transactions begun and not yet quiet (settled everywhere: KQP answered, every
        participant's record gone, nothing of it in flight, nothing left for PqLockLost). A quiet
        transaction stays quiet, so the scheduler stops looking at it; ``prune=False`` looks anyway."""
        e = self.engine
        if not self.prune:
            return list(e.started())
        in_flight = {m.tx for m in e.net}
        for tx in e.started():
            if tx in self.quiet or tx in in_flight or e.kqp[tx].st != "done":
                continue
            if all(e.ptx[t][tx].st in GONE_STATES for t in e.k.tablets) and not e.pq_lock_lost_enabled(tx):
                self.quiet.add(tx)
        return [tx for tx in e.started() if tx not in self.quiet]

    def _step(self, a: Action, arg: Any) -> Step:
        return Step(a.name, a.weight, lambda: a.run(self.engine, arg))

    def steps(self) -> list[Step]:
        out = [s for s in (self._app_step(a) for a in self.apps) if s is not None]
        txns = self.live_txns()
        for a in SCHEDULED:
            out += [self._step(a, arg) for arg in arguments(self.engine, a.over, txns) if a.enabled(self.engine, arg)]
        return out

    # --- the loop (ref_impl/sim/stepper.py) ---

    def events(self) -> int:
        return self.engine.events

    def before_round(self) -> None:
        for a in self.apps:
            self._advance(a)
