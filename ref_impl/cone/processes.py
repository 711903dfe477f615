"""C*One's three coordinators as processes over a real Cassandra, under real faults (issue 54).

The conductor here starts three ref_impl/cone/coordinator_proc.py children on 127.0.0.1 (each its
own locks, transaction table, unborn queue, clock and heartbeats, its storage steps in Cassandra),
plays the album's clients against them (the client API: ``begin``, ``read``, ``write``, ``commit``,
``rollback``, as Cone.tla's client steps), injects the faults (SIGKILL, SIGSTOP then SIGCONT, a cut
heartbeat link) and writes the run's trace in the shared format.

The trace is kept by a mirror of the reference engine (ref_impl/cone/engine.py): each step a
coordinator reports, in the order the conductor receives it, is taken by the mirror, with the
columns the process reported (what Cassandra answered to a read: value, write timestamp, writer;
a commit's timestamp; a new master's clock; whether a resumed process fenced itself) put in the
event instead of the mirror's own. A step the spec does not allow at that point is still taken and
listed in ``departures``: ``txconform check`` then rejects the trace there. What is not observed but
inferred: Cone.tla's three replicas are the cluster (one node: its one replica stands for the three),
and a batch that Cassandra acknowledged at QUORUM is logged as applied at every replica
(``ApplyMutation`` 1, 2, 3) just before ``CoCommitDone``.

Scenarios (``SCENARIOS``): ``plain``, ``kill`` (the master SIGKILLed with a transaction open),
``pause`` (the master SIGSTOPped with a commit waiting, a successor serving meanwhile, then SIGCONT),
``cut`` (the master's heartbeats to both backups dropped: it fences itself), ``handover`` (the master
SIGKILLed after c1's commit; the successor commits c2's retag of p0), ``dc`` (three nodes:
Cassandra's node 3 stopped and x3 killed), ``stall`` (three nodes: Cassandra's node 2 SIGSTOPped
while the master commits, so that the batch waits in node 3's batchlog with none of its mutations
sent; the master SIGKILLed; the successor waits for the replay), and four with a guard off:
``zombie`` (``pause`` with Cone.tla's zombie_commit: the resumed master serves the waiting commit
before reading its heartbeats), ``split`` (one link cut with failover_no_quorum: the first backup
declares the master dead on its own misses while the second still hears it), ``no_ts_bump``
(``handover`` with no_ts_bump: the successor keeps its own clock) and ``failover_no_drain``
(``stall`` with failover_no_drain: the successor serves while the batch waits in the batchlog).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from trace_check.traces import format as trace_format

from . import trace
from .cassandra_store import CassandraStore, StoreError
from .constants import COORDS, Constants
from .engine import ALBUM, Cell, Engine, Key, Txn, row
from .sim import GENERATOR

WAIT_S = 30.0  # the longest the conductor waits for one step (a failover takes DEAD_S + a QUORUM read)
SCENARIOS = ("plain", "kill", "pause", "cut", "handover", "dc", "stall", "zombie", "split", "no_ts_bump", "failover_no_drain")
BUG_OF = {"zombie": "zombie_commit", "split": "failover_no_quorum", "no_ts_bump": "no_ts_bump", "failover_no_drain": "failover_no_drain"}
THREE_NODES = ("dc", "stall", "failover_no_drain")  # the scenarios that stop or stall a Cassandra node
RETAG = ("handover", "no_ts_bump")  # one adder (c1) and one retagger (c2, p0's tag 0 -> 1)
STALL_S = 2.3  # node 2 stopped this long: past the batchlog write's timeout (write_request_timeout, 2 s)
Q = (1, 2)  # the replica pair a mirror read is taken from (the answer is Cassandra's anyway)


class RunError(Exception):
    """A coordinator did not start, or a step did not come within its time."""


def _txn_of(text: str) -> Txn:
    if text == "init":
        return ("init", 0)
    client, _, attempt = text.rpartition("/")
    return (client, int(attempt))


class Mirror(Engine):
    """The engine, taking the steps the processes report, with their columns in its events."""

    def __init__(self, k: Constants, emit: Callable[[dict[str, Any]], None]) -> None:
        super().__init__(k, emit)
        self.real: dict[str, Any] = {}
        self.answer: Cell | None = None

    def read_at(self, q: tuple[int, ...], k: Key) -> Cell:
        if self.answer is None:
            return super().read_at(q, k)
        cell, self.answer = self.answer, None
        return cell

    def _event(self, action: str, **cols: Any) -> None:
        cols.update(self.real)
        self.real = {}
        super()._event(action, **cols)


@attrs.define
class Proc:
    x: int
    popen: subprocess.Popen[str]
    conn: socket.socket
    killed: bool = False
    stopped: bool = False


@attrs.frozen
class ProcRun:
    scenario: str
    path: Path
    events: int
    departures: tuple[str, ...]  # steps the spec (with the run's bugs) did not allow where they came
    violations: tuple[str, ...]  # the first break of each invariant the mirror checks (ExclusiveLocks, TsMonotone, Serializable)
    album: int  # the album's counter in Cassandra at the end
    photos: int  # the photos in Cassandra at the end (p0 and every committed add)
    told: tuple[str, ...]  # what each attempt's client was told
    seconds: float
    failover_s: float | None  # from the fault to the successor's CoActivate
    fence_s: float | None  # from the fault to the first CoSelfFence
    commit_ms: tuple[float, ...]
    committed: tuple[tuple[str, int], ...] = ()  # each committed transaction's timestamp, read back from Cassandra's txns
    seen: tuple[str, ...] = ()  # what the conductor saw in Cassandra on the way (the batchlog, a read)
    replay_s: float | None = None  # from the fault to the batchlog found empty on every node


class Conductor:
    def __init__(self, store: CassandraStore, host: str, port: int, k: Constants, seconds: float = 180.0) -> None:
        self.store = store
        self.k = k
        self.events: list[dict[str, Any]] = []
        self.m = Mirror(k, self.events.append)
        self.inbox: queue.Queue[tuple[int, dict[str, Any]]] = queue.Queue()
        self.procs: dict[int, Proc] = {}
        self.departures: list[str] = []
        self.violations: list[str] = []  # the first spec invariant the mirror's state broke
        self.acks: list[tuple[int, dict[str, Any]]] = []
        self.heard: list[tuple[int, dict[str, Any]]] = []  # every report, in the order taken
        self.host, self.port, self.seconds = host, port, seconds
        self.activated_at: float | None = None
        self.fenced_at: float | None = None
        self.commit_ms: list[float] = []  # each commit's LOGGED batch at QUORUM, as its coordinator timed it
        self.seen: list[str] = []

    # --- the processes ---------------------------------------------------------------------------

    def start(self) -> None:
        """The three processes, started at once (each connects to Cassandra before it listens),
        then connected to in turn; a process that exits first is named with its error's last line."""
        ports = _free_udp_ports(3)
        bugs = "+".join(sorted(self.k.bugs))
        started = {}
        for x in COORDS:
            cmd = [sys.executable, "-m", "ref_impl.cone.coordinator_proc", "--id", str(x), "--hb-ports", ",".join(map(str, ports))]
            cmd += ["--cassandra", f"{self.host}:{self.port}", "--keyspace", self.store.keyspace, "--bugs", bugs, "--seconds", str(self.seconds)]
            started[x] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        for x, p in started.items():
            assert p.stdout is not None
            line = p.stdout.readline().strip()  # the TCP port, once connected (bounded: the driver's connect timeout)
            if not line.isdigit():
                p.wait(10)
                err = p.stderr.read() if p.stderr is not None else ""
                for q in started.values():
                    if q.poll() is None:
                        q.kill()
                        q.wait(10)
                    for stream in (q.stdout, q.stderr):
                        if stream is not None:
                            stream.close()
                raise RunError(f"coordinator {x} did not start: {((err or line).strip().splitlines() or [''])[-1][:300]}")
            conn = socket.create_connection(("127.0.0.1", int(line)), timeout=10)
            conn.settimeout(None)
            self.procs[x] = Proc(x, p, conn)
            threading.Thread(target=self._reader, args=(x, conn), daemon=True).start()
        self.wait("every coordinator ready", lambda: sum(1 for x, a in self.acks if a["ev"] == "Ready") == 3)
        for x in COORDS:
            self.send(x, {"op": "go"})
        time.sleep(2.0)  # coordinator_proc.START_GRACE_S after "go": the heartbeats established

    def _reader(self, x: int, conn: socket.socket) -> None:
        buf = b""
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self.inbox.put((x, json.loads(line)))

    def send(self, x: int, req: dict[str, Any]) -> None:
        p = self.procs[x]
        if not p.killed:
            p.conn.sendall((json.dumps(req) + "\n").encode())

    def exits(self) -> str:
        """The coordinators that exited unasked, with the last line of their error output."""
        said = []
        for p in self.procs.values():
            if not p.killed and p.popen.poll() is not None:
                err = p.popen.stderr.read() if p.popen.stderr is not None else ""
                said.append(f"; x{p.x} exited {p.popen.returncode}: {(err.strip().splitlines() or [''])[-1][:200]}")
        return "".join(said)

    def stop(self) -> None:
        """Every coordinator stopped by its pid (SIGCONT first if stopped), reaped."""
        for p in self.procs.values():
            if p.popen.poll() is None:
                if p.stopped:
                    os.kill(p.popen.pid, signal.SIGCONT)
                p.popen.kill()
            p.popen.wait(10)
            p.conn.close()
            for s in (p.popen.stdout, p.popen.stderr):
                if s is not None:
                    s.close()

    # --- faults ----------------------------------------------------------------------------------

    def kill(self, x: int) -> None:
        os.kill(self.procs[x].popen.pid, signal.SIGKILL)
        self.procs[x].popen.wait(10)
        self.procs[x].killed = True
        self._step(self.m.crash_enabled(x), f"Crash x{x}", lambda: self.m.crash(x))

    def pause(self, x: int) -> None:
        os.kill(self.procs[x].popen.pid, signal.SIGSTOP)
        self.procs[x].stopped = True
        self._step(self.m.pause_enabled(x), f"Pause x{x}", lambda: self.m.pause(x))

    def resume(self, x: int) -> None:
        os.kill(self.procs[x].popen.pid, signal.SIGCONT)
        self.procs[x].stopped = False
        self.wait(f"x{x} resumed", lambda: not self.m.co[x].paused)

    def cut(self, x: int, y: int) -> None:
        """Heartbeats from x no longer reach y (y drops them)."""
        self.send(y, {"op": "cut", "peer": x})
        self._step(self.m.cut_enabled(x, y), f"Cut x{x} x{y}", lambda: self.m.cut_link(x, y))

    # --- the mirror ------------------------------------------------------------------------------

    def _step(self, enabled: bool, what: str, take: Callable[[], None]) -> None:
        if not enabled:
            self.departures.append(f"event {len(self.events) + 1}: {what}: not enabled in the spec here")
        take()
        for name, holds in (("ExclusiveLocks", exclusive_locks), ("TsMonotone", ts_monotone), ("Serializable", serializable)):
            if not any(v.startswith(name) for v in self.violations) and not holds(self.m):
                self.violations.append(f"{name} violated after event {len(self.events)} ({self.events[-1]['action']})")

    def wait(self, what: str, done: Callable[[], bool], seconds: float = WAIT_S) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                last = "; ".join(f"x{x} {m['ev']}" for x, m in self.heard[-6:])
                raise RunError(f"waited {seconds:.0f} s for {what} (last reports: {last}){self.exits()}")
            try:
                x, msg = self.inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            self.apply(x, msg)

    def settle(self, seconds: float) -> None:
        """Take what the processes report for ``seconds``."""
        end = time.monotonic() + seconds
        self.wait("nothing", lambda: time.monotonic() > end, seconds + 5)

    def apply(self, x: int, msg: dict[str, Any]) -> None:
        self.heard.append((x, msg))
        m = self.m
        ev = msg["ev"]
        t: Txn = (msg["t"][0], int(msg["t"][1])) if "t" in msg else ("", 0)
        c = t[0]
        if "cell" in msg:
            cell = msg["cell"]
            m.answer = (int(cell["val"]), int(cell["ts"]), bool(cell["tomb"]), _txn_of(cell["writer"]))
            m.real = {"read_ts": m.answer[1], "read_val": m.answer[0], "read_txn": cell["writer"]} if not m.answer[2] else {}
        if msg.get("result") == "locked":
            m.real = {"result": "locked"}
        if "ryw" in msg:
            m.real = {"read_val": msg["ryw"]}
        if ev == "CoBegin":
            self._step(m.co_begin_enabled(x, t, Q), f"CoBegin x{x} {c}", lambda: m.co_begin(x, t, Q))
        elif ev == "CoRead":
            self._step(m.co_read_enabled(x, c, Q), f"CoRead x{x} {c}", lambda: m.co_read(x, c, Q))
        elif ev == "CoWrite":
            m.real = {"clock": msg["clock"]}
            self._step(m.co_write_enabled(x, c), f"CoWrite x{x} {c}", lambda: m.co_write(x, c))
        elif ev == "CoCommit":
            m.real = {"ts": msg["ts"], "clock": msg["clock"], "mutations": msg["mutations"]}
            self._step(m.co_commit_enabled(x, c), f"CoCommit x{x} {c}", lambda: m.co_commit(x, c))
        elif ev == "CoCommitDone":
            self.commit_ms.append(float(msg["ms"]))
            i = max(m.batch_of(x, t), default=0)
            for _ in range(len(m.batches[i - 1].pend) if i else 0):  # QUORUM answered: applied (inferred)
                m.apply_mutation(i)
            self._step(bool(i) and m.co_commit_done_enabled(x, t, i), f"CoCommitDone x{x} {c}", lambda: m.co_commit_done(x, t, i))
        elif ev == "CoTxTimeout":
            self._step(m.co_tx_timeout_enabled(x, t), f"CoTxTimeout x{x} {c}", lambda: m.co_tx_timeout(x, t))
        elif ev == "CoSelfFence":
            self.fenced_at = self.fenced_at or time.monotonic()
            self._step(m.co_self_fence_enabled(x), f"CoSelfFence x{x}", lambda: m.co_self_fence(x))
        elif ev == "DeclareDead":
            y = int(msg["dead"])
            if y not in m.dead:  # the cluster's verdict is one set: the first report makes it
                self._step(m.declare_dead_enabled(y), f"DeclareDead x{y}", lambda: m.declare_dead(y))
        elif ev == "CoActivate":
            if msg.get("batchlog_seen") and not m.k.bug("failover_no_drain"):
                # It waited for the batchlog, found on the nodes, to empty: the replay it waited for
                for i in range(1, len(m.batches) + 1):
                    if m.batches[i - 1].blog:
                        self._step(m.batchlog_replay_enabled(i), f"BatchlogReplay {i}", lambda i=i: m.batchlog_replay(i))  # type: ignore[misc]
                self.seen.append(f"x{x} waited {msg.get('drain_waited_s', 0)} s for the batchlog ({msg['batchlog_seen']} entries at most)")
            m.real = {"clock": msg["clock"]}
            self.activated_at = time.monotonic()
            self._step(m.co_activate_enabled(x, Q), f"CoActivate x{x}", lambda: m.co_activate(x, Q))
        elif ev == "Resume":
            if m.co[x].paused:
                m.real = {"result": "fenced" if msg["fenced"] else "running"}

                def resume() -> None:
                    m.resume(x)
                    m.co[x].fenced = bool(msg["fenced"])

                self._step(True, f"Resume x{x}", resume)
        elif ev == "Rolledback":
            self._step(m.client_rollback_enabled(c), f"ClientRollback {c}", lambda: m.client_rollback(c))
        else:  # Ready, Ok, Refused, CommitFailed: acknowledgements the client waits on
            self.acks.append((x, msg))

    # --- the client API --------------------------------------------------------------------------

    def up(self) -> list[int]:
        return [x for x in COORDS if not self.procs[x].killed]

    def refused(self, c: str) -> bool:
        return any(a["ev"] in ("Refused", "CommitFailed") and a.get("t", [None])[0] == c for _, a in self.acks)

    def _give_up(self, c: str) -> None:
        """The client stops waiting (Cone.tla ClientTimeout) and its coordinators learn it moved on."""
        t = self.m.txn_of(c)
        self.wait(f"{c} may time out", lambda: self.m.client_timeout_enabled(c))
        self.m.client_timeout(c)
        self.moved_on(t)

    def moved_on(self, t: Txn) -> None:
        for x in self.up():
            self.send(x, {"op": "moved_on", "t": list(t)})
        if self.m.co_unborn_expire_enabled(t):
            self.m.co_unborn_expire(t)

    def must_begin(self, c: str) -> None:
        if not self.begin(c):
            last = "; ".join(f"x{x} {m['ev']}" for x, m in self.heard[-6:])
            raise RunError(f"{c}'s Begin was not served (last reports: {last}){self.exits()}")

    def begin(self, c: str) -> bool:
        """ClientBegin, sent to every coordinator; True once the active master opened it."""
        self.acks.clear()
        self.m.client_begin(c)
        t = self.m.txn_of(c)
        for x in self.up():
            self.send(x, {"op": "begin", "t": list(t), "key": list(self.m.entity(c))})
        try:
            self.wait(f"{c}'s Begin answered", lambda: self.m.cl[c].st != "begin")
        except RunError:
            self._give_up(c)
            return False
        if self.m.cl[c].st != "open":
            self.moved_on(t)
            return False
        return True

    def _ask(self, c: str, op: str, done: Callable[[], bool], **extra: Any) -> bool:
        self.acks.clear()
        self.send(self.m.cl[c].co, {"op": op, "t": list(self.m.txn_of(c)), **extra})
        with contextlib.suppress(RunError):
            self.wait(f"{c}'s {op}", lambda: done() or self.refused(c))
        if done():
            return True
        self._give_up(c)
        return False

    def add_photo(self, c: str, *, before_commit: Callable[[], None] | None = None) -> str:
        """The album's add (Cone.tla): Begin names the photo; lock and read the album, write
        album + 1, the photo and its index row, read the album back (read your writes), commit.
        Returns what the client was told: committed, failed, unknown or exists (rolled back)."""
        m = self.m
        if not self.begin(c):
            return "failed"
        if m.cl[c].pc == "rollback":  # the photo is there: an earlier attempt committed
            self._ask(c, "rollback", lambda: m.cl[c].st == "done")
            return "exists"
        if not self._ask(c, "read", lambda: m.cl[c].pc != "read" or m.cl[c].st != "open"):
            return "failed"
        if m.cl[c].st != "open":
            self.moved_on(m.txn_of(c))
            return "failed"  # the album was locked
        muts = [[list(k), v, tomb] for k, v, tomb in sorted(m.write_muts(c))]
        if not self._ask(c, "write", lambda: m.cl[c].pc != "write", muts=muts):
            return "failed"
        if not self._ask(c, "read", lambda: m.cl[c].pc == "commit"):
            return "failed"
        m.client_commit(c)
        if before_commit is not None:
            before_commit()
        if not self._ask(c, "commit", lambda: m.cl[c].st == "done"):
            return "unknown"
        return "committed"

    def up_to_commit(self, c: str) -> None:
        """An add up to its ClientCommit, the commit not sent: Begin, read the album, write, read it back."""
        m = self.m
        self.must_begin(c)
        self._ask(c, "read", lambda: m.cl[c].pc != "read")
        muts = [[list(key), v, tomb] for key, v, tomb in sorted(m.write_muts(c))]
        self._ask(c, "write", lambda: m.cl[c].pc != "write", muts=muts)
        self._ask(c, "read", lambda: m.cl[c].pc == "commit")
        m.client_commit(c)

    def retag_photo(self, c: str) -> str:
        """The album's retag (Cone.tla): Begin locks and reads p0's row; write its new tag, the new
        index row and the old one's tombstone (no album read); commit."""
        m = self.m
        if not self.begin(c):
            return "failed"
        muts = [[list(k), v, tomb] for k, v, tomb in sorted(m.write_muts(c))]
        if not self._ask(c, "write", lambda: m.cl[c].pc != "write", muts=muts):
            return "failed"
        m.client_commit(c)
        if not self._ask(c, "commit", lambda: m.cl[c].st == "done"):
            return "unknown"
        return "committed"

    def add_until_done(self, c: str) -> list[str]:
        told = []
        for _ in range(self.k.max_attempts):
            if self.m.cl[c].st == "done":
                break
            told.append(self.add_photo(c) if c in self.k.adders else self.retag_photo(c))
        return told

    # --- the result ------------------------------------------------------------------------------

    def batchlog(self) -> str:
        return entries_text(self.store.batchlog())

    def write_trace(self, out: Path, workload: str) -> None:
        k, bugs = self.k.to_spec(), sorted(self.k.bugs)
        gen = GENERATOR + " processes"
        head = trace_format.header("cone", trace.SPEC_DIR, trace.SPEC_MODULES, k, 0, gen, trace.LOGGED, workload=workload, faults="processes", bugs=bugs)
        trace_format.write_trace(out, head, self.events, trace.ORDER)


def exclusive_locks(e: Engine) -> bool:
    """specs/cone/ConeProperties.tla ExclusiveLocks on the engine's state: no two coordinators that
    can act hold a lock on one key for a live transaction."""
    holders: dict[Key, set[int]] = {}
    for x in COORDS:
        if e.can_act(x):
            for k, t in e.lk[x]:
                if e.tx(x, t).st in ("open", "committing"):
                    holders.setdefault(k, set()).add(x)
    return all(len(xs) <= 1 for xs in holders.values())


def entries_text(entries: dict[str, int | None]) -> str:
    """Each node's batchlog entries, as ``address: n`` (``?``: no answer)."""
    return ", ".join(f"{a}: {'?' if n is None else n}" for a, n in entries.items())


def ts_monotone(e: Engine) -> bool:
    """ConeProperties.tla TsMonotone: two transactions' batches carry increasing timestamps in the
    order they were sent."""
    bs = e.batches
    return all(bs[i].ts < bs[j].ts for i in range(len(bs)) for j in range(i + 1, len(bs)) if bs[i].t != bs[j].t)


def serializable(e: Engine) -> bool:
    """ConeProperties.tla Serializable: every committed transaction read, for each key it read, the
    write of the committed transaction with the highest timestamp below its own."""

    def latest_writer(k: Key, ts: int) -> Txn:
        before = [(h_ts, t) for t, h_ts, _, ks in e.hist if k in ks and h_ts < ts]
        return max(before)[1] if before else ("init", 0)

    return all(writer == latest_writer(k, ts) for _, ts, rd, _ in e.hist for k, writer, _ in rd)


def _free_udp_ports(n: int) -> list[int]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _counts(store: CassandraStore, adders: tuple[str, ...]) -> tuple[int, int]:
    album = store.read(ALBUM)
    photos = 1 + sum(1 for c in adders if not store.read(row(c))[2])
    return (album[0], photos)


def run(
    store: CassandraStore,
    host: str,
    port: int,
    scenario: str,
    out: Path,
    stop_node3: Callable[[], None] | None = None,
    signal_node: Callable[[int, int], None] | None = None,
) -> ProcRun:
    """One run of ``scenario`` with three coordinator processes over ``store`` (a fresh keyspace,
    ``create_schema`` done), its trace written to ``out``. ``dc`` (three nodes, RF 3) loses data
    centre 3: ``stop_node3`` stops Cassandra's node 3 and coordinator x3 is SIGKILLed (Cone.tla
    ``DcFail``). ``stall`` and ``failover_no_drain`` (three nodes, RF 3) stop Cassandra's node 2
    for STALL_S with ``signal_node(2, SIGSTOP)``, then ``signal_node(2, SIGCONT)``."""
    if scenario not in SCENARIOS:
        raise RunError(f"scenario {scenario!r}: use one of {', '.join(SCENARIOS)}")
    if scenario == "dc" and stop_node3 is None:
        raise RunError("scenario dc stops Cassandra's node 3: it needs a cluster of three nodes and a way to stop the third")
    if scenario in ("stall", "failover_no_drain") and signal_node is None:
        raise RunError(f"scenario {scenario} stops Cassandra's node 2 for {STALL_S} s: it needs a cluster of three nodes and their pids (--node-pids)")
    bug = BUG_OF.get(scenario)
    bugs = frozenset({bug} if bug else set())
    if scenario in RETAG:
        k = Constants(("c1",), ("c2",), 1, 2, 1, 0, 0, 0, 0, bugs)
    else:  # a stalled node: the batch's three mutations never sent (DropMutation)
        k = Constants(("c1", "c2"), (), 1, 2, 1, 1, 2, 3 if scenario in THREE_NODES else 0, 1 if scenario == "dc" else 0, bugs)
    con = Conductor(store, host, port, k)
    t0 = time.monotonic()
    fault_at: float | None = None
    replay_at: float | None = None
    told: list[str] = []
    try:
        con.start()
        if scenario == "plain":
            told += con.add_until_done("c1") + con.add_until_done("c2")
        elif scenario == "kill":
            m = con.m
            con.must_begin("c1")
            con._ask("c1", "read", lambda: m.cl["c1"].pc != "read")
            fault_at = time.monotonic()
            con.kill(1)  # mid-transaction: c1 open at x1, its album locked
            con._give_up("c1")
            told.append("failed")
            con.wait("x2 active", lambda: m.co[2].active)
            told += con.add_until_done("c1") + con.add_until_done("c2")
        elif scenario in ("pause", "zombie"):
            m = con.m

            def stop_master() -> None:
                nonlocal fault_at
                fault_at = time.monotonic()
                con.pause(1)

            con.acks.clear()
            con.up_to_commit("c1")
            stop_master()
            con.acks.clear()
            con.send(1, {"op": "commit", "t": list(m.txn_of("c1"))})  # waits in the stopped process's socket
            con.wait("x2 active", lambda: m.co[2].active)
            told += con.add_until_done("c2")  # the successor serves while the old master is stopped
            con.resume(1)
            con.wait("c1's commit answered", lambda: m.cl["c1"].st == "done" or con.refused("c1"))
            if m.cl["c1"].st == "done":
                told.append("committed")
                con.moved_on(m.txn_of("c1"))
            else:
                con._give_up("c1")
                told.append("unknown")
                told += con.add_until_done("c1")
            con.settle(1.0)
        elif scenario == "dc":
            assert stop_node3 is not None
            m = con.m
            told += con.add_until_done("c1")
            fault_at = time.monotonic()
            stop_node3()
            os.kill(con.procs[3].popen.pid, signal.SIGKILL)
            con.procs[3].popen.wait(10)
            con.procs[3].killed = True
            con._step(m.dc_fail_enabled(3), "DcFail 3", lambda: m.dc_fail(3))
            told += con.add_until_done("c2")  # QUORUM: two replicas of three answer
            con.wait("x3 declared dead", lambda: 3 in m.dead)
        elif scenario in RETAG:
            m = con.m
            told += con.add_until_done("c1")  # committed at x1, timestamp 1
            fault_at = time.monotonic()
            con.kill(1)
            con.wait("x2 active", lambda: m.co[2].active)
            told += con.add_until_done("c2")  # p0's retag at x2: its timestamp is above x2's clock and p0's
        elif scenario in ("stall", "failover_no_drain"):
            assert signal_node is not None
            m = con.m
            con.up_to_commit("c1")
            t1 = m.txn_of("c1")
            fault_at = time.monotonic()
            signal_node(2, signal.SIGSTOP)  # node 2 stalls (a long GC pause): node 1 asks it and node 3 for the batchlog
            try:
                con.acks.clear()
                con.send(1, {"op": "commit", "t": list(t1)})
                con.wait("x1's CoCommit", lambda: m.tx(1, t1).st == "committing")
                sent_at = time.monotonic()  # x1 reports CoCommit, then sends the batch
                con.settle(0.5)  # the LOGGED batch reaches node 1, which sends the batchlog entry to nodes 2 and 3
                con.kill(1)  # the master dies mid-commit
                con._give_up("c1")
                told.append("unknown")
                con.settle(max(0.0, sent_at + STALL_S - time.monotonic()))  # past node 1's deadline for node 2's answer
            finally:
                signal_node(2, signal.SIGCONT)
            # Node 1 gave up on the batchlog's second copy after the write timeout (2 s), before it sent a
            # mutation: the entry is in node 3's batchlog, no replica has the batch (DropMutation x3).
            entries, cell = store.batchlog(), store.read(ALBUM)
            con.seen.append(f"node 2 stopped {time.monotonic() - fault_at:.2f} s; then the batchlog: {entries_text(entries)}; the album at QUORUM: {cell[:2]}")
            if cell[1] != 0 or not any(entries.values()):
                raise RunError(f"the stall did not hold c1's batch back: the batchlog {entries_text(entries)}, the album at QUORUM {cell[:2]}")
            for _ in range(3):
                con._step(m.drop_mutation_enabled(1), "DropMutation 1", lambda: m.drop_mutation(1))
            told += con.add_until_done("c2")
            con.seen.append(f"at c2's commit, the batchlog: {con.batchlog()}")
            deadline = time.monotonic() + 30
            while any(n != 0 for n in store.batchlog().values()):  # Cassandra's replay: once older than 2 x 2 s, every 10 s
                if time.monotonic() > deadline:
                    raise RunError(f"the batchlog was not replayed within 30 s: {con.batchlog()}")
                con.settle(0.3)
            replay_at = time.monotonic()
            if m.batches[0].blog:
                con._step(m.batchlog_replay_enabled(1), "BatchlogReplay 1", lambda: m.batchlog_replay(1))
            told += con.add_until_done("c1")  # its retry finds the photo: the batch was applied
        elif scenario == "split":
            m = con.m
            con.must_begin("c1")
            fault_at = time.monotonic()
            con.cut(1, 2)  # x2 alone misses x1; x3 still hears it
            con.wait("x2 active", lambda: m.co[2].active)
            con.wait("x1 fenced", lambda: m.co[1].fenced)
            con._give_up("c1")
            told.append("failed")
            told += con.add_until_done("c1") + con.add_until_done("c2")
        elif scenario == "cut":
            m = con.m
            con.must_begin("c1")
            fault_at = time.monotonic()
            con.cut(1, 2)
            con.cut(1, 3)
            con.wait("x2 active", lambda: m.co[2].active)
            con._give_up("c1")
            told.append("failed")
            told += con.add_until_done("c1") + con.add_until_done("c2")
        con.settle(0.5)
    finally:
        con.stop()
    workload = "album:adders=1,retaggers=1,retag_to=1,attempts=2" if scenario in RETAG else "album:adders=2,attempts=2"
    con.write_trace(out, workload)
    album, photos = _counts(store, k.adders)
    failover = None if fault_at is None or con.activated_at is None else con.activated_at - fault_at
    fence = None if fault_at is None or con.fenced_at is None else con.fenced_at - fault_at
    seconds = time.monotonic() - t0
    found = (tuple(con.departures), tuple(con.violations))
    committed = tuple(sorted(store.committed().items(), key=lambda kv: (kv[1], kv[0])))
    replay = None if fault_at is None or replay_at is None else replay_at - fault_at
    return ProcRun(
        scenario, out, len(con.events), *found, album, photos, tuple(told), seconds, failover, fence, tuple(con.commit_ms), committed, tuple(con.seen), replay
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m ref_impl.cone.processes --cassandra HOST:PORT --scenario S --out TRACE``: one run
    in a fresh keyspace of the running cluster (``txconform probe --target cassandra --hold``)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m ref_impl.cone.processes", description=main.__doc__)
    p.add_argument("--cassandra", required=True, help="HOST:PORT of a node, as probe --hold prints it")
    p.add_argument("--scenario", required=True, choices=SCENARIOS)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--replicas", type=int, choices=(1, 3), default=1, help="the keyspace's replication factor: the cluster's nodes")
    p.add_argument("--node-pids", default="", help="the three nodes' pids, as probe --hold prints them (stall, failover_no_drain)")
    a = p.parse_args(argv)
    host, _, port = a.cassandra.rpartition(":")
    if not host or not port.isdigit():
        print(f"--cassandra: {a.cassandra!r} is not HOST:PORT; give the address probe --hold prints, e.g. 127.0.0.1:9042", file=sys.stderr)
        return 2
    pids = [int(v) for v in a.node_pids.replace(" ", "").split(",") if v.isdigit()]
    if a.node_pids and len(pids) != 3:
        print(f"--node-pids: {a.node_pids!r} is not three pids; give those probe --hold --nodes 3 prints, e.g. 101,102,103", file=sys.stderr)
        return 2
    if a.scenario in ("stall", "failover_no_drain") and not pids:
        print(f"{a.scenario}: stops Cassandra's node 2 for {STALL_S} s; give --node-pids with the pids probe --hold --nodes 3 prints", file=sys.stderr)
        return 2
    signal_node = (lambda n, sig: os.kill(pids[n - 1], sig)) if pids else None
    try:
        store = CassandraStore.connect([host], int(port), keyspace=f"cone_procs_{a.scenario}_{int(time.time())}")
    except StoreError as e:
        print(f"--cassandra: {e}", file=sys.stderr)
        return 2
    try:
        try:
            store.create_schema(a.replicas)
        except Exception as e:  # the driver's NoHostAvailable, OperationTimedOut, ...: one line
            why = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
            raise RunError(f"no keyspace created at {a.cassandra}: {why}; is the cluster up (txconform probe --target cassandra --hold)?") from None
        r = run(store, host, int(port), a.scenario, a.out, signal_node=signal_node)
    except RunError as e:
        print(f"{a.scenario}: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(f"{r.scenario}: {r.events} events in {a.out}, {r.seconds:.1f} s; told {', '.join(r.told)}; album {r.album}, photos {r.photos}", end="")
    print(f"; failover {r.failover_s:.2f} s" if r.failover_s is not None else "", end="")
    print(f"; fenced {r.fence_s:.2f} s after the fault" if r.fence_s is not None else "", end="")
    print(f"; replayed {r.replay_s:.2f} s after the fault" if r.replay_s is not None else "", end="")
    print(f"; commits {', '.join(f'{v:.0f}' for v in r.commit_ms)} ms; timestamps {', '.join(f'{t} {ts}' for t, ts in r.committed)}")
    for line in r.seen + r.departures + r.violations:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
