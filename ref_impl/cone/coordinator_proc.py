"""One C*One coordinator as a process of its own (issue 54): ``python -m ref_impl.cone.coordinator_proc``.

Three of these run on 127.0.0.1, started and stopped by their process id by ref_impl/cone/processes.py
(the conductor: the clients, the faults and the trace). Each keeps what the design keeps in a
coordinator's memory (specs/cone/Cone.tla: ``lk``, the lock table, "a plain HashMap in the
coordinator's memory"; ``txs``, the transaction table; ``unborn``, the Begins a backup holds; its
Lamport ``clock``) and sends its storage steps to Cassandra through ref_impl/cone/cassandra_store.py
(QUORUM reads, one LOGGED batch at QUORUM per commit ``USING TIMESTAMP`` its Lamport timestamp).

Heartbeats (Cone.tla, "Heartbeats"): every ``HEARTBEAT_S`` each coordinator sends a UDP datagram to
the others on 127.0.0.1 naming the coordinators it heard within ``MISS_S`` and those it holds dead.
x is *confirmed* (Cone.tla ``Confirmed``) while some y it hears reports hearing x; x fences itself
(``CoSelfFence``) once it has not been confirmed for ``FENCE_S``. y is declared dead
(``DeclareDead``) once the other two have both missed it for ``DEAD_S`` > ``FENCE_S`` (a running
node fences itself before a quorum declares it dead: the spec's guard ``~Running(x) \\/ fenced``).
Failover (``CoActivate``): the first coordinator in the fixed order 1, 2, 3 whose predecessors are all
dead activates once Cassandra's batchlog is empty (``Drained``: ``system.batches`` read on every node
up, each its own, without blocking the loop; the guard the spec adds, cone_failover_no_drain) and
sets its clock above the group's highest timestamp read at QUORUM (no_ts_bump: keeps its own).
A Begin goes to all three (the unborn queue); only the active master answers it, and a new master
serves the Begins its queue holds.

One thread, one ``select`` loop: a loop that did not run for ``PAUSE_S`` was stopped (SIGSTOP, a
GC pause): before anything else it drains the heartbeats that arrived meanwhile and fences itself if
they say so (Cone.tla ``Resume``). With ``--bug zombie_commit`` it serves the requests waiting on
its socket first (the design's zombie). Every step is reported to the conductor as one JSON line,
with what Cassandra answered.

The client protocol, one JSON object a line on a TCP connection from the conductor: ``begin`` (t),
``read`` (t), ``write`` (t, muts), ``commit`` (t), ``rollback`` (t), ``moved_on`` (t), ``cut`` (peer),
``heal`` (peer). The answers and the unprompted steps come back on the same connection.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import socket
import sys
import time
from typing import Any

import attrs

from .cassandra_store import CassandraStore, StoreError
from .engine import ALBUM, Cell, Key, Mut, Txn, row, txn_text

HEARTBEAT_S = 0.1  # the design's period is 50 ms; doubled for 2 shared cores
MISS_S = 0.6  # a peer not heard for this long is not heard ("several missed heartbeats in a row")
FENCE_S = 1.0  # not confirmed for this long: fence
DEAD_S = 2.5  # missed by the other two for this long: dead (> FENCE_S + MISS_S: fencing first)
PAUSE_S = 0.8  # the loop did not run for this long: it was stopped
START_GRACE_S = 1.5  # after "go": no fencing and no verdict before the peers' first heartbeats arrive
DRAIN_EVERY_S = 0.2  # a successor waiting for the batchlog asks the nodes again after this


@attrs.define
class TxState:
    st: str = "open"
    rd: list[tuple[Key, Txn, int]] = attrs.Factory(list)
    wr: list[Mut] = attrs.Factory(list)


def _key(k: list[Any]) -> Key:
    return (str(k[0]), int(k[1]), str(k[2]))


def _txn(t: list[Any]) -> Txn:
    return (str(t[0]), int(t[1]))


class Coordinator:
    def __init__(self, x: int, store: CassandraStore, hb_ports: dict[int, int], bugs: frozenset[str]) -> None:
        self.x = x
        self.store = store
        self.bugs = bugs
        self.peers = [y for y in (1, 2, 3) if y != x]
        self.hb_ports = hb_ports
        self.active = x == 1
        self.fenced = False
        self.clock = 0
        self.lk: dict[Key, Txn] = {}
        self.txs: dict[Txn, TxState] = {}
        self.unborn: list[Txn] = []
        self.entity: dict[Txn, Key] = {}  # the row a Begin locks (the client's photo; p0 for a retag)
        self.drain_q: list[list[Any]] | None = None  # the batchlog queries in flight: [address, entries or None, done]
        self.drain_at = 0.0  # when they were sent
        self.drain_first: float | None = None  # the first check that found an entry (or no answer)
        self.batchlog_seen = 0  # the most entries one check found
        self.dead: set[int] = set()
        self.cut_from: set[int] = set()  # peers whose heartbeats this coordinator drops (a cut link)
        start = time.monotonic()
        self.started: float | None = None  # the conductor's "go": every coordinator is up
        self.heard_at: dict[int, float] = {y: start for y in self.peers}
        self.reports: dict[int, tuple[set[int], set[int]]] = {y: ({x}, set()) for y in self.peers}  # y: (heard, dead)
        self.confirmed_at = start
        self.missed_since: dict[int, float | None] = {y: None for y in self.peers}
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", hb_ports[x]))
        self.udp.setblocking(False)
        self.out: socket.socket | None = None
        self.next_hb = 0.0

    # --- reporting -------------------------------------------------------------------------------

    def report(self, ev: str, **cols: Any) -> None:
        assert self.out is not None
        self.out.sendall((json.dumps({"ev": ev, "x": self.x, **cols}) + "\n").encode())

    # --- heartbeats ------------------------------------------------------------------------------

    def heard(self, now: float) -> set[int]:
        return {y for y in self.peers if now - self.heard_at[y] < MISS_S and y not in self.dead}

    def send_heartbeats(self, now: float) -> None:
        if now < self.next_hb:
            return  # a fenced coordinator still runs and sends (Cone.tla Hears: Running, not fenced)
        self.next_hb = now + HEARTBEAT_S
        msg = json.dumps({"from": self.x, "heard": sorted(self.heard(now)), "dead": sorted(self.dead)}).encode()
        for y in self.peers:
            with contextlib.suppress(OSError):  # a peer's port closed (killed): a lost heartbeat
                self.udp.sendto(msg, ("127.0.0.1", self.hb_ports[y]))

    def drain_heartbeats(self) -> None:
        """Read every heartbeat waiting on the socket (bounded: the socket's buffer)."""
        for _ in range(10_000):
            try:
                data = self.udp.recv(4096)
            except BlockingIOError:
                return
            except OSError:
                continue  # an ICMP error for a datagram sent to a killed peer
            msg = json.loads(data)
            y = int(msg["from"])
            if y in self.cut_from or y in self.dead:
                continue
            self.heard_at[y] = time.monotonic()
            self.reports[y] = (set(msg["heard"]), set(msg["dead"]))
            for d in set(msg["dead"]) - self.dead:
                self.dead.add(d)  # the cluster's verdict is one set (Cone.tla dead)

    def failure_detector(self, now: float) -> None:
        """Self-fencing, verdicts and failover, from what the heartbeats said."""
        if self.fenced or self.started is None or now - self.started < START_GRACE_S:
            return
        heard = self.heard(now)
        if self.x in self.dead:
            self.fence("reported dead")
            return
        if any(self.x in self.reports[y][0] for y in heard):
            self.confirmed_at = now
        elif now - self.confirmed_at > FENCE_S:
            self.fence("quorum lost")
            return
        for y in self.peers:
            if y in self.dead:
                continue
            (other,) = [z for z in self.peers if z != y]
            # Cone.tla DeclareDead: a quorum (the other two) missed y; failover_no_quorum: this one alone
            other_misses = "failover_no_quorum" in self.bugs or (other in heard and y not in self.reports[other][0])
            if y not in heard and other_misses:
                since = self.missed_since[y]
                if since is None:
                    self.missed_since[y] = now
                elif now - since > DEAD_S - MISS_S:
                    self.dead.add(y)
                    self.report("DeclareDead", dead=y)
            else:
                self.missed_since[y] = None
        if not self.active and all(y in self.dead for y in range(1, self.x)):
            self.activate()

    def fence(self, why: str) -> None:
        self.fenced = True
        self.report("CoSelfFence", why=why)

    def drained(self, now: float) -> bool:
        """Cone.tla Drained, asked of Cassandra without blocking the loop (the heartbeats go on):
        every node up answered that its batchlog (``system.batches``, each node's own; an entry is
        removed once its batch applied or was replayed: apache/cassandra batchlog/BatchlogManager.java,
        service/StorageProxy.java mutateAtomically) is empty. False while the queries are in flight,
        while an entry is there, or a node did not answer; asked again every DRAIN_EVERY_S."""
        if self.drain_q is None:
            if now < self.drain_at + DRAIN_EVERY_S:
                return False
            self.drain_at = now
            self.drain_q = []
            for address, f in self.store.batchlog_queries():
                slot: list[Any] = [address, None, False]

                def ok(rows: Any, slot: list[Any] = slot) -> None:
                    slot[1], slot[2] = len(list(rows)), True

                def failed(_e: Any, slot: list[Any] = slot) -> None:
                    slot[2] = True

                f.add_callbacks(ok, failed)
                self.drain_q.append(slot)
            return False
        if not all(slot[2] for slot in self.drain_q):
            return False
        answers = [slot[1] for slot in self.drain_q]
        self.drain_q = None
        if answers and all(n == 0 for n in answers):
            return True
        self.drain_first = self.drain_first or self.drain_at
        self.batchlog_seen = max([self.batchlog_seen, *(n for n in answers if n is not None)])
        return False

    def activate(self) -> None:
        now = time.monotonic()
        if "failover_no_drain" not in self.bugs and not self.drained(now):
            return  # Cone.tla CoActivate: Drained; tried again next loop
        top = self.store.top_timestamp()
        self.active = True
        if "no_ts_bump" not in self.bugs:
            self.clock = max(self.clock, top) + 1
        waited = round(now - self.drain_first, 2) if self.drain_first is not None else 0.0
        self.report("CoActivate", top=top, clock=self.clock, batchlog_seen=self.batchlog_seen, drain_waited_s=waited)
        for t in list(self.unborn):  # the new master serves its unborn queue
            self.begin(t)

    # --- the client's requests -----------------------------------------------------------------

    def can_act(self) -> bool:
        return self.active and not self.fenced

    def cell(self, c: Cell) -> dict[str, Any]:
        return {"val": c[0], "ts": c[1], "tomb": c[2], "writer": txn_text(c[3])}

    def begin(self, t: Txn, key: Key | None = None) -> None:
        if key is not None:
            self.entity[t] = key
        if t not in self.unborn:
            self.unborn.append(t)
        if not self.can_act():
            return  # a backup keeps it in its unborn queue
        self.unborn.remove(t)
        k = self.entity.get(t, row(t[0]))
        holder = self.lk.get(k)
        if holder is not None and holder != t:
            self.report("CoBegin", t=list(t), result="locked")
            return
        got = self.store.read(k)
        self.lk[k] = t
        self.txs[t] = TxState(rd=[(k, got[3], got[1])])
        self.report("CoBegin", t=list(t), result="ok", cell=self.cell(got), clock=self.clock)

    def read(self, t: Txn) -> None:
        tx = self.txs.get(t)
        if not self.can_act() or tx is None:
            self.report("Refused", t=list(t), op="read")
            return
        holder = self.lk.get(ALBUM)
        if holder is not None and holder != t:
            self.forget(t)
            self.report("CoRead", t=list(t), result="locked")
            return
        self.lk[ALBUM] = t
        buffered = [m for m in tx.wr if m[0] == ALBUM]
        if buffered:
            self.report("CoRead", t=list(t), result="ok", ryw=buffered[0][1])
            return
        got = self.store.read(ALBUM)
        tx.rd.append((ALBUM, got[3], got[1]))
        self.report("CoRead", t=list(t), result="ok", cell=self.cell(got))

    def write(self, t: Txn, muts: list[Mut]) -> None:
        tx = self.txs.get(t)
        if not self.can_act() or tx is None:
            self.report("Refused", t=list(t), op="write")
            return
        tx.wr.extend(muts)
        self.report("CoWrite", t=list(t), clock=self.clock)

    def commit(self, t: Txn) -> None:
        tx = self.txs.get(t)
        if not self.can_act() or tx is None or tx.st != "open":
            self.report("Refused", t=list(t), op="commit")
            return
        ts = max(self.clock, max((r[2] for r in tx.rd), default=0)) + 1  # Cone.tla CoCommit
        self.clock = max(self.clock, ts)
        tx.st = "committing"
        self.report("CoCommit", t=list(t), ts=ts, clock=self.clock, mutations=len(set(tx.wr)))
        sent = time.monotonic()
        try:
            self.store.commit(t, self.x, ts, frozenset(tx.wr))
        except Exception as e:  # a write timeout: the outcome is unknown; the batchlog has it
            self.report("CommitFailed", t=list(t), error=str(e)[:200])
            return
        self.forget(t)
        self.report("CoCommitDone", t=list(t), ts=ts, ms=round((time.monotonic() - sent) * 1000, 1))

    def forget(self, t: Txn) -> None:
        self.txs.pop(t, None)
        self.lk = {k: h for k, h in self.lk.items() if h != t}

    def rollback(self, t: Txn) -> None:
        self.forget(t)
        self.report("Rolledback", t=list(t))

    def moved_on(self, t: Txn) -> None:
        """The client moved on from ``t``: a backup drops it from its unborn queue (CoUnbornExpire),
        the master rolls back an open orphan (CoTxTimeout)."""
        if t in self.unborn and not self.active:
            self.unborn.remove(t)
        tx = self.txs.get(t)
        if tx is not None and tx.st == "open" and self.can_act():
            self.forget(t)
            self.report("CoTxTimeout", t=list(t))

    def handle(self, req: dict[str, Any]) -> None:
        op = req["op"]
        if op == "go":
            self.started = time.monotonic()
            self.heard_at = dict.fromkeys(self.peers, self.started)
            self.confirmed_at = self.started
            return
        if op in ("cut", "heal"):
            (self.cut_from.add if op == "cut" else self.cut_from.discard)(int(req["peer"]))
            self.report("Ok", op=op)
            return
        t = _txn(req["t"])
        if op == "begin":
            self.begin(t, _key(req["key"]) if "key" in req else None)
        elif op == "read":
            self.read(t)
        elif op == "write":
            self.write(t, [(_key(m[0]), int(m[1]), bool(m[2])) for m in req["muts"]])
        elif op == "commit":
            self.commit(t)
        elif op == "rollback":
            self.rollback(t)
        elif op == "moved_on":
            self.moved_on(t)

    # --- the loop --------------------------------------------------------------------------------

    def serve(self, listener: socket.socket, seconds: float) -> None:
        conn, _ = listener.accept()
        self.out = conn
        self.report("Ready", pid=_pid())
        buf = b""
        last = time.monotonic()
        deadline = last + seconds
        while time.monotonic() < deadline:
            readable, _, _ = select.select([conn, self.udp], [], [], 0.02)
            now = time.monotonic()
            requests: list[dict[str, Any]] = []
            if conn in readable:
                data = conn.recv(65536)
                if not data:
                    return  # the conductor is gone
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    requests.append(json.loads(line))
            if now - last > PAUSE_S:  # stopped: a GC pause (Cone.tla Resume)
                if "zombie_commit" in self.bugs:
                    self.report("Resume", fenced=self.fenced)
                    for req in requests:
                        self.handle(req)
                    requests = []
                    self.drain_heartbeats()
                else:
                    self.drain_heartbeats()
                    peers_up = any(now - self.heard_at[y] < MISS_S + PAUSE_S for y in self.peers if y not in self.cut_from)
                    if not self.fenced and (self.x in self.dead or not peers_up):
                        self.fenced = True
                    self.report("Resume", fenced=self.fenced)
                self.confirmed_at = max(self.confirmed_at, now - FENCE_S / 2) if not self.fenced else self.confirmed_at
            else:
                self.drain_heartbeats()
            for req in requests:
                self.handle(req)
            if time.monotonic() - now > PAUSE_S:
                # Stopped (or stalled as long) after this round's clock reading: the next round
                # takes it for the pause it was and resumes first, before any failure detection.
                # (Read before the stop, ``now`` hid it: a SIGSTOP that landed here made the next
                # round fence the node without its Resume, the zombie run's failure under load.)
                last = now
                continue
            self.failure_detector(time.monotonic())
            self.send_heartbeats(time.monotonic())
            done = time.monotonic()
            last = now if done - now > PAUSE_S else done  # stopped during this round's own steps: the same


def _pid() -> int:
    return os.getpid()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="coordinator_proc")
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--hb-ports", required=True, help="three UDP ports, comma-separated")
    p.add_argument("--cassandra", required=True, help="host:port")
    p.add_argument("--keyspace", required=True)
    p.add_argument("--bugs", default="")
    p.add_argument("--seconds", type=float, default=300.0)
    a = p.parse_args(argv)
    host, _, port = a.cassandra.rpartition(":")
    ports = [int(v) for v in a.hb_ports.split(",")]
    try:
        store = CassandraStore.connect([host], int(port), keyspace=a.keyspace)
    except StoreError as e:
        print(f"coordinator {a.id}: {e}", file=sys.stderr)
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    print(listener.getsockname()[1], flush=True)
    co = Coordinator(a.id, store, {i + 1: ports[i] for i in range(3)}, frozenset(b for b in a.bugs.split("+") if b))
    try:
        co.serve(listener, a.seconds)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
