"""The C*One reference engine: specs/cone/Cone.tla step for step, in Python.

Each spec action ``CoBegin`` is a guard ``co_begin_enabled`` and an effect ``co_begin`` that
emits one trace event named ``CoBegin`` (``actions.py`` lists them all). The state mirrors the
spec's variables: ``cl`` (clients), ``co`` (coordinators: up, paused, fenced, active, clock),
``lk`` (lock tables), ``txs`` (transaction tables), ``unborn`` (Begins held), ``cut`` (heartbeat
links cut), ``dead``, ``batches`` (storage: every batch sent, with its batchlog entry, the
replicas it is on its way to and those that applied it), ``hist`` and ``told`` (ghosts).

Where the spec chooses (which two replicas a QUORUM read gets its answers from, which batch of
a transaction a commit's answer waits for), the choice is an argument of the step: the scheduler
(``sim.py``) picks it, and a replay finds it from what the event logged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .constants import COORDS, QUORUM, REPLICAS, Constants, co_name

Key = tuple[str, int, str]
Txn = tuple[str, int]
Mut = tuple[Key, int, bool]  # <<key, value, tombstone>>
Cell = tuple[int, int, bool, Txn]  # <<value, timestamp, tombstone, writer>>

INIT_TXN: Txn = ("init", 0)
NO_CELL: Cell = (0, -1, True, INIT_TXN)


def row(pk: str) -> Key:
    return ("row", 0, pk)


def ix(tag: int, pk: str) -> Key:
    return ("ix", tag, pk)


ALBUM = row("a")
INIT_DATA: tuple[Mut, ...] = ((ALBUM, 1, False), (row("p0"), 0, False), (ix(0, "p0"), 1, False))


def key_text(k: Key) -> str:
    return f"{k[2]}" if k[0] == "row" else f"ix/{k[1]}/{k[2]}"


def txn_text(t: Txn) -> str:
    return "init" if t == INIT_TXN else f"{t[0]}/{t[1]}"


@attrs.define
class Client:
    st: str = "idle"  # idle, begin, open, commit, done
    att: int = 0
    co: int = 0
    pc: str = ""  # read, write, ryw, commit, rollback
    n: int = -1
    ryw: int = -1


@attrs.define
class Coord:
    up: bool = True
    paused: bool = False
    fenced: bool = False
    active: bool = False
    clock: int = 0


@attrs.define
class Tx:
    st: str = "none"  # none, open, committing, indexing
    ts: int = 0
    rd: frozenset[tuple[Key, Txn, int]] = frozenset()
    wr: frozenset[Mut] = frozenset()


@attrs.define
class Batch:
    t: Txn
    co: int
    ts: int
    muts: frozenset[Mut]
    logged: bool
    blog: bool
    bdc: set[int]
    pend: set[int]
    applied: set[int]


def beats(c1: Cell, c2: Cell) -> bool:
    """Cassandra's Cells.resolveRegular: the higher timestamp; at a tie a tombstone; then the greater value."""
    return c1[1] > c2[1] or (c1[1] == c2[1] and c1[2] and not c2[2]) or (c1[1] == c2[1] and c1[2] == c2[2] and c1[0] > c2[0])


def winner(cells: set[Cell]) -> Cell:
    best: Cell | None = None
    for c in sorted(cells, key=repr):
        if best is None or beats(c, best):
            best = c
    return NO_CELL if best is None else best


class Engine:
    def __init__(self, k: Constants, emit: Callable[[dict[str, Any]], None]) -> None:
        self.k = k
        self.emit = emit
        self.events = 0
        self.cl = {c: Client() for c in k.clients}
        self.co = {x: Coord(active=x == 1) for x in COORDS}
        self.lk: dict[int, set[tuple[Key, Txn]]] = {x: set() for x in COORDS}
        self.txs: dict[int, dict[Txn, Tx]] = {x: {} for x in COORDS}
        self.unborn: dict[int, set[Txn]] = {x: set() for x in COORDS}
        self.cut: set[tuple[int, int]] = set()
        self.dead: set[int] = set()
        self.batches: list[Batch] = []  # batch i of the spec is batches[i - 1]
        self.dc_down: set[int] = set()
        # Ghost: every committed transaction, as the spec's $commit: its timestamp, reads, keys.
        self.hist: list[tuple[Txn, int, frozenset[tuple[Key, Txn, int]], frozenset[Key]]] = []
        self.told: set[tuple[Txn, str]] = set()
        self.faults = [0, 0, 0, 0, 0]  # crashes, pauses, cuts, drops, data centres lost

    # --- reading the state, as the spec's operators do ---

    def tx(self, x: int, t: Txn) -> Tx:
        return self.txs[x].get(t, Tx())

    def kind(self, c: str) -> str:
        return "add" if c in self.k.adders else "retag"

    def entity(self, c: str) -> Key:
        return row(c) if c in self.k.adders else row("p0")

    def txn_of(self, c: str) -> Txn:
        return (c, self.cl[c].att)

    def running(self, x: int) -> bool:
        return self.co[x].up and not self.co[x].paused

    def hears(self, y: int, x: int) -> bool:
        return self.running(x) and self.running(y) and (x, y) not in self.cut

    def confirmed(self, x: int) -> bool:
        return x not in self.dead and any(self.hears(y, x) and self.hears(x, y) for y in COORDS if y != x)

    def can_act(self, x: int) -> bool:
        return self.running(x) and not self.co[x].fenced and self.co[x].active

    def live_quorum(self, q: tuple[int, ...]) -> bool:
        """Cone.tla LiveQuorums: a quorum of replicas still up."""
        return not set(q) & self.dc_down

    def drained(self) -> bool:
        return not any(b.blog for b in self.batches)

    def cells_at(self, r: int, k: Key) -> set[Cell]:
        cells = {(m[1], 0, m[2], INIT_TXN) for m in INIT_DATA if m[0] == k}
        for b in self.batches:
            if r in b.applied:
                cells |= {(m[1], b.ts, m[2], b.t) for m in b.muts if m[0] == k}
        return cells

    def read_at(self, q: tuple[int, ...], k: Key) -> Cell:
        cells: set[Cell] = set()
        for r in q:
            cells |= self.cells_at(r, k)
        return winner(cells)

    def batch_of(self, x: int, t: Txn) -> list[int]:
        """The spec's BatchOf(x, t): 1-based batch numbers."""
        return [i for i, b in enumerate(self.batches, start=1) if b.t == t and b.co == x]

    def waiting(self, c: str, t: Txn) -> bool:
        return self.cl[c].att == t[1] and self.cl[c].st == "begin"

    def locked_by_other(self, x: int, k: Key, t: Txn) -> bool:
        return any(key == k and holder != t for key, holder in self.lk[x])

    def _forget(self, x: int, t: Txn) -> None:
        self.txs[x].pop(t, None)
        self.lk[x] = {lock for lock in self.lk[x] if lock[1] != t}

    def _event(self, action: str, **cols: Any) -> None:
        self.events += 1
        self.emit({"event": self.events, "action": action, **{c: v for c, v in cols.items() if v is not None}})

    # --- clients ---

    def client_begin_enabled(self, c: str) -> bool:
        return self.cl[c].st == "idle" and self.cl[c].att < self.k.max_attempts

    def client_begin(self, c: str) -> None:
        att = self.cl[c].att + 1
        self.cl[c] = Client(st="begin", att=att)
        for x in COORDS:
            if self.co[x].up:
                self.unborn[x].add((c, att))
        self._event("ClientBegin", client=c, attempt=att, client_state="begin")

    def client_commit_enabled(self, c: str) -> bool:
        return self.cl[c].st == "open" and self.cl[c].pc == "commit"

    def client_commit(self, c: str) -> None:
        self.cl[c].st = "commit"
        self._event("ClientCommit", client=c, attempt=self.cl[c].att, client_state="commit")

    def client_rollback_enabled(self, c: str) -> bool:
        x, t = self.cl[c].co, self.txn_of(c)
        return self.cl[c].st == "open" and self.cl[c].pc == "rollback" and self.can_act(x) and self.tx(x, t).st == "open"

    def client_rollback(self, c: str) -> None:
        self._forget(self.cl[c].co, self.txn_of(c))
        self.cl[c].st = "done"
        self._event("ClientRollback", client=c, attempt=self.cl[c].att, client_state="done")

    def client_timeout_enabled(self, c: str) -> bool:
        cl, t = self.cl[c], self.txn_of(c)
        if cl.st == "begin":
            return not any(self.can_act(y) and t in self.unborn[y] for y in COORDS)
        if cl.st == "open":
            return not self.can_act(cl.co)
        if cl.st == "commit":
            return not self.can_act(cl.co) or all(len(self.batches[i - 1].applied) < QUORUM for i in self.batch_of(cl.co, t))
        return False

    def client_timeout(self, c: str) -> None:
        cl, t = self.cl[c], self.txn_of(c)
        outcome = "unknown" if cl.st == "commit" and not self.k.bug("timeout_as_abort") else "failed"
        self.told.add((t, outcome))
        self.cl[c] = Client(att=cl.att)
        self._event("ClientTimeout", client=c, attempt=cl.att, result=outcome, client_state="idle")

    # --- coordinators ---

    def co_begin_enabled(self, x: int, t: Txn, q: tuple[int, ...]) -> bool:
        return self.can_act(x) and t in self.unborn[x] and self.live_quorum(q)

    def co_begin(self, x: int, t: Txn, q: tuple[int, ...]) -> None:
        c = t[0]
        k = self.entity(c)
        waiting = self.waiting(c, t)
        self.unborn[x].discard(t)
        if self.locked_by_other(x, k, t):
            if waiting:
                self.cl[c] = Client(att=self.cl[c].att)
                self.told.add((t, "failed"))
            self._event("CoBegin", coordinator=co_name(x), client=c, attempt=t[1], result="locked", tx_state=self.tx(x, t).st, client_state=self.cl[c].st)
            return
        cell = self.read_at(q, k)
        ts = self.co[x].clock + 1 if self.k.bug("ts_at_begin") else 0
        self.lk[x].add((k, t))
        self.txs[x][t] = Tx(st="open", ts=ts, rd=frozenset({(k, cell[3], cell[1])}))
        if self.k.bug("ts_at_begin"):
            self.co[x].clock = ts
        if waiting:
            live = not cell[2]
            pc = "write" if self.kind(c) == "retag" else "rollback" if live else "read"
            self.cl[c] = attrs.evolve(self.cl[c], st="open", co=x, n=cell[0] if live else -1, pc=pc)
        self._event(
            "CoBegin",
            coordinator=co_name(x),
            client=c,
            attempt=t[1],
            result="ok" if waiting else "orphan",
            read_ts=cell[1],
            read_val=cell[0],
            read_txn=txn_text(cell[3]),
            clock=self.co[x].clock,
            tx_state="open",
            client_state=self.cl[c].st,
        )

    def co_unborn_expire_enabled(self, t: Txn) -> bool:
        return any(t in self.unborn[x] and not self.co[x].active for x in COORDS) and not self.waiting(t[0], t)

    def co_unborn_expire(self, t: Txn) -> None:
        for x in COORDS:
            if not self.co[x].active:
                self.unborn[x].discard(t)
        self._event("CoUnbornExpire", client=t[0], attempt=t[1])

    def co_read_enabled(self, x: int, c: str, q: tuple[int, ...]) -> bool:
        cl = self.cl[c]
        return (
            cl.st == "open" and cl.co == x and cl.pc in ("read", "ryw") and self.can_act(x) and self.tx(x, self.txn_of(c)).st == "open" and self.live_quorum(q)
        )

    def co_read(self, x: int, c: str, q: tuple[int, ...]) -> None:
        t = self.txn_of(c)
        cl = self.cl[c]
        common = {"coordinator": co_name(x), "client": c, "attempt": t[1]}
        if cl.pc == "read" and not self.k.bug("read_without_lock") and self.locked_by_other(x, ALBUM, t):
            self._forget(x, t)
            self.cl[c] = Client(att=cl.att)
            self.told.add((t, "failed"))
            self._event("CoRead", **common, result="locked", tx_state="none", client_state="idle")
            return
        if not self.k.bug("read_without_lock"):
            self.lk[x].add((ALBUM, t))
        tx = self.txs[x][t]
        buffered = [m for m in tx.wr if m[0] == ALBUM]
        if buffered and not self.k.bug("no_ryw"):
            v = buffered[0][1]
            cl.ryw, cl.pc = v, "commit"
            self._event("CoRead", **common, result="ok", read_ts=-1, read_val=v, tx_state=tx.st, client_state=cl.st)
            return
        cell = self.read_at(q, ALBUM)
        if cl.pc == "read":
            cl.n, cl.pc = cell[0], "write"
            tx.rd = tx.rd | {(ALBUM, cell[3], cell[1])}
        else:
            cl.ryw, cl.pc = cell[0], "commit"
        self._event("CoRead", **common, result="ok", read_ts=cell[1], read_val=cell[0], read_txn=txn_text(cell[3]), tx_state=tx.st, client_state=cl.st)

    def write_muts(self, c: str) -> frozenset[Mut]:
        n = self.cl[c].n
        if self.kind(c) == "add":
            return frozenset({(ALBUM, n + 1, False), (row(c), 1, False), (ix(1, c), 1, False)})
        muts: set[Mut] = {(row("p0"), self.k.retag_to, False)}
        if n != self.k.retag_to or self.k.bug("index_same_ts_tombstone"):
            if n >= 0:
                muts.add((ix(n, "p0"), 0, True))
            muts.add((ix(self.k.retag_to, "p0"), 1, False))
        return frozenset(muts)

    def _new_batch(self, t: Txn, x: int, ts: int, muts: frozenset[Mut], logged: bool) -> int:
        """Cone.tla NewBatch: the batchlog entry in the coordinator's data centre and the next one
        (local_batchlog: the coordinator's only)."""
        nxt = x % 3 + 1 if x % 3 + 1 not in self.dc_down else (x + 1) % 3 + 1  # Cone.tla NextLiveDc
        bdc = set() if not logged else {x} if self.k.bug("local_batchlog") else {x, nxt}
        self.batches.append(Batch(t=t, co=x, ts=ts, muts=muts, logged=logged, blog=logged, bdc=bdc, pend=set(REPLICAS) - self.dc_down, applied=set()))
        return len(self.batches)

    def co_write_enabled(self, x: int, c: str) -> bool:
        cl = self.cl[c]
        return cl.st == "open" and cl.co == x and cl.pc == "write" and self.can_act(x) and self.tx(x, self.txn_of(c)).st == "open"

    def co_write(self, x: int, c: str) -> None:
        t = self.txn_of(c)
        muts = self.write_muts(c)
        tx = self.txs[x][t]
        tx.wr = tx.wr | muts
        self.cl[c].pc = "ryw" if self.kind(c) == "add" else "commit"
        batch = None
        if self.k.bug("write_through"):
            batch = self._new_batch(t, x, self.co[x].clock + 1, muts, False)
            self.co[x].clock += 1
        self._event("CoWrite", coordinator=co_name(x), client=c, attempt=t[1], batch=batch, clock=self.co[x].clock, tx_state=tx.st, client_state=self.cl[c].st)

    def co_commit_enabled(self, x: int, c: str) -> bool:
        cl = self.cl[c]
        return cl.st == "commit" and cl.co == x and self.can_act(x) and self.tx(x, self.txn_of(c)).st == "open"

    def co_commit(self, x: int, c: str) -> None:
        t = self.txn_of(c)
        tx = self.txs[x][t]
        read_ts = max((r[2] for r in tx.rd), default=0)
        ts = tx.ts if self.k.bug("ts_at_begin") else max(self.co[x].clock, read_ts) + 1
        muts = frozenset(m for m in tx.wr if m[0][0] != "ix") if self.k.bug("index_outside_txn") else tx.wr
        self.co[x].clock = max(self.co[x].clock, ts)
        batch = self._new_batch(t, x, ts, muts, not self.k.bug("unlogged_batch"))
        self.hist.append((t, ts, tx.rd, frozenset(m[0] for m in tx.wr)))  # Cone.tla CoCommit: hist
        tx.st, tx.ts = "committing", ts
        if self.k.bug("early_unlock"):
            self.lk[x] = {lock for lock in self.lk[x] if lock[1] != t}
        self._event(
            "CoCommit",
            coordinator=co_name(x),
            client=c,
            attempt=t[1],
            batch=batch,
            ts=ts,
            mutations=len(muts),
            clock=self.co[x].clock,
            tx_state="committing",
            client_state=self.cl[c].st,
        )

    def co_commit_done_enabled(self, x: int, t: Txn, i: int) -> bool:
        need = 1 if self.k.bug("commit_cl_one") else QUORUM
        return self.running(x) and self.tx(x, t).st == "committing" and i in self.batch_of(x, t) and len(self.batches[i - 1].applied) >= need

    def co_commit_done(self, x: int, t: Txn, i: int) -> None:
        c = t[0]
        self.batches[i - 1].blog = False
        if self.k.bug("index_outside_txn"):
            self.txs[x][t].st = "indexing"
            self.lk[x] = {lock for lock in self.lk[x] if lock[1] != t}
        else:
            self._forget(x, t)
        cl = self.cl[c]
        told = cl.st == "commit" and cl.att == t[1] and cl.co == x
        if told:
            cl.st = "done"
            self.told.add((t, "committed"))
        self._event(
            "CoCommitDone",
            coordinator=co_name(x),
            client=c,
            attempt=t[1],
            batch=i,
            result="committed" if told else "none",
            tx_state=self.tx(x, t).st,
            client_state=cl.st,
        )

    def co_index_write_enabled(self, x: int, t: Txn) -> bool:
        return self.running(x) and self.tx(x, t).st == "indexing"

    def co_index_write(self, x: int, t: Txn) -> None:
        tx = self.txs[x][t]
        muts = frozenset(m for m in tx.wr if m[0][0] == "ix")
        batch = self._new_batch(t, x, tx.ts, muts, True)
        self.txs[x].pop(t)
        self._event("CoIndexWrite", coordinator=co_name(x), client=t[0], attempt=t[1], batch=batch, mutations=len(muts), tx_state="none")

    def co_tx_timeout_enabled(self, x: int, t: Txn) -> bool:
        cl = self.cl[t[0]]
        return self.can_act(x) and self.tx(x, t).st == "open" and not (cl.att == t[1] and cl.co == x and cl.st in ("open", "commit"))

    def co_tx_timeout(self, x: int, t: Txn) -> None:
        self._forget(x, t)
        self._event("CoTxTimeout", coordinator=co_name(x), client=t[0], attempt=t[1], tx_state="none")

    # --- storage and the batchlog ---

    def next_replica(self, i: int) -> int:
        """Cone.tla Next1: a batch's mutations reach the replicas in the order r1, r2, r3."""
        return min(self.batches[i - 1].pend)

    def apply_mutation_enabled(self, i: int) -> bool:
        return 1 <= i <= len(self.batches) and bool(self.batches[i - 1].pend)

    def apply_mutation(self, i: int) -> None:
        r = self.next_replica(i)
        b = self.batches[i - 1]
        b.pend.discard(r)
        b.applied.add(r)
        self._event("ApplyMutation", batch=i, replica=r)

    def drop_mutation_enabled(self, i: int) -> bool:
        return self.apply_mutation_enabled(i) and self.faults[3] < self.k.max_drops

    def drop_mutation(self, i: int) -> None:
        r = self.next_replica(i)
        self.batches[i - 1].pend.discard(r)
        self.faults[3] += 1
        self._event("DropMutation", batch=i, replica=r)

    def batchlog_replay_enabled(self, i: int) -> bool:
        return 1 <= i <= len(self.batches) and self.batches[i - 1].blog and not self.batches[i - 1].pend

    def batchlog_replay(self, i: int) -> None:
        b = self.batches[i - 1]
        b.applied, b.blog = b.applied | (set(REPLICAS) - self.dc_down), False
        self._event("BatchlogReplay", batch=i)

    # --- heartbeats, failure detection, failover ---

    def cut_enabled(self, x: int, y: int) -> bool:
        return x != y and (x, y) not in self.cut and self.faults[2] < self.k.max_cuts

    def cut_link(self, x: int, y: int) -> None:
        self.cut.add((x, y))
        self.faults[2] += 1
        self._event("Cut", coordinator=co_name(x), peer=co_name(y))

    def heal_enabled(self, x: int, y: int) -> bool:
        return (x, y) in self.cut

    def heal(self, x: int, y: int) -> None:
        self.cut.discard((x, y))
        self._event("Heal", coordinator=co_name(x), peer=co_name(y))

    def co_self_fence_enabled(self, x: int) -> bool:
        return self.running(x) and not self.co[x].fenced and not self.confirmed(x)

    def co_self_fence(self, x: int) -> None:
        self.co[x].fenced = True
        self._event("CoSelfFence", coordinator=co_name(x))

    def declare_dead_enabled(self, x: int) -> bool:
        if x in self.dead:
            return False
        others = [y for y in COORDS if y != x]
        if self.k.bug("failover_no_quorum"):
            return any(self.running(y) and not self.hears(y, x) for y in others)
        # the only quorum of coordinators without x is the other two
        return all(self.running(y) and not self.hears(y, x) for y in others) and (not self.running(x) or self.co[x].fenced)

    def declare_dead(self, x: int) -> None:
        self.dead.add(x)
        self._event("DeclareDead", coordinator=co_name(x))

    def co_activate_enabled(self, x: int, q: tuple[int, ...]) -> bool:
        return (
            self.live_quorum(q)
            and self.running(x)
            and not self.co[x].fenced
            and not self.co[x].active
            and x not in self.dead
            and all(y in self.dead for y in range(1, x))
            and (self.drained() or self.k.bug("failover_no_drain"))
        )

    def co_activate(self, x: int, q: tuple[int, ...]) -> None:
        top = max((b.ts for b in self.batches if b.applied & set(q)), default=0)
        self.co[x].active = True
        if not self.k.bug("no_ts_bump"):
            self.co[x].clock = max(self.co[x].clock, top) + 1
        self._event("CoActivate", coordinator=co_name(x), clock=self.co[x].clock)

    def crash_enabled(self, x: int) -> bool:
        return self.co[x].up and self.co[x].active and self.faults[0] < self.k.max_crashes

    def crash(self, x: int) -> None:
        self.co[x].up = False
        self.lk[x], self.txs[x], self.unborn[x] = set(), {}, set()
        self.faults[0] += 1
        self._event("Crash", coordinator=co_name(x))

    def dc_fail_enabled(self, d: int) -> bool:
        return d not in self.dc_down and self.faults[4] < self.k.max_dc_fails

    def dc_fail(self, d: int) -> None:
        self.dc_down.add(d)
        self.co[d].up = False
        self.lk[d], self.txs[d], self.unborn[d] = set(), {}, set()
        for b in self.batches:
            b.pend.discard(d)
            b.blog = b.blog and bool(b.bdc - {d})
            b.bdc.discard(d)
        self.faults[4] += 1
        self._event("DcFail", dc=d)

    def pause_enabled(self, x: int) -> bool:
        return self.running(x) and self.co[x].active and self.faults[1] < self.k.max_pauses

    def pause(self, x: int) -> None:
        self.co[x].paused = True
        self.faults[1] += 1
        self._event("Pause", coordinator=co_name(x))

    def resume_enabled(self, x: int) -> bool:
        return self.co[x].up and self.co[x].paused

    def resume(self, x: int) -> None:
        if not self.k.bug("zombie_commit"):
            heard = any((x, y) not in self.cut and (y, x) not in self.cut and self.running(y) for y in COORDS if y != x)
            self.co[x].fenced = self.co[x].fenced or x in self.dead or not heard
        self.co[x].paused = False
        self._event("Resume", coordinator=co_name(x), result="fenced" if self.co[x].fenced else "running")
