"""Starting and stopping the YDB server: in a background thread (``start``, for tests) or in the
foreground until SIGINT/SIGTERM (``run``, for ``txconform serve --protocol ydb``); the session's
trace is written when it stops (as ``ref_impl/kafka/serve/run.py`` does for Kafka)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

import attrs
import grpc

from trace_check.traces import format as trace_format
from trace_check.traces.protocol import ProtocolInputError

from .. import trace as ydb_trace
from ..constants import VERSIONS, Constants
from .faults import NO_FAULTS, Switches
from .front import Front
from .services import Shared, add_services

GENERATOR = "txconform serve ydb 1"
STOP_GRACE_S = 1.0
# gRPC worker threads: each open stream (a session's attach, a reader, a writer) holds one, and an RPC
# beyond them is refused (RESOURCE_EXHAUSTED), which the SDK retries for ever: the SDK's own tests open
# 100 writers at once (test_start_many_sync_writers_in_parallel). An idle thread costs its stack only.
MAX_STREAMS = 256


@attrs.frozen
class Options:
    port: int = 2136
    host: str = "127.0.0.1"
    version: str = "v26"
    messages: int = 8  # MsgsPerSrc: messages of each partition of topic A
    batch: int = 2  # BatchMax: the most messages a read batch holds
    txns: int = 16  # MaxTxns: the engine's transactions, in all
    plain: int = 256  # MaxPlainWrites: writes to B outside any transaction
    others: int = 128  # Others: the producer ids of those writes
    commits: int = 256  # MaxPlainCommits: batches of A read and committed outside any transaction
    workers: int = 1  # Workers: the engine's workers, each in one transaction at a time
    table: bool = True  # Table: the tables of single-row statements (sql.py) are the spec's one row
    trace: Path | None = None
    faults: Switches = NO_FAULTS
    bugs: tuple[str, ...] = ()  # the YDB bug zoo's (ref_impl/ydb/zoo.py), as the engine takes them

    def constants(self) -> Constants:
        if self.version not in VERSIONS:
            raise ProtocolInputError(f"--version: {self.version!r} is not one of {', '.join(VERSIONS)} (the spec's Version)")
        if not 0 <= self.port <= 65535:
            raise ProtocolInputError(f"--port: {self.port} is not a TCP port (0 takes a free one)")
        f = self.faults  # each fault step's budget: as many as its switches
        return Constants(workers=tuple(f"w{n}" for n in range(1, self.workers + 1)), num_src=1, num_dst=1, msgs_per_src=self.messages, batch_max=self.batch,
                         max_txns=self.txns, rollbacks=True, table=self.table, shapes=("copy", "read", "write"), version=self.version,
                         bugs=self.bugs, max_restarts=f.budget("TabletRestart"), max_deadlines=f.budget("PlanDeadline"),
                         max_lock_losses=f.budget("LockLost"), max_loss=f.budget("Lose"), max_splits=f.budget("Split"),
                         max_plain_writes=self.plain, others=self.others,
                         max_plain_commits=self.commits)


class Running:
    """A YDB gRPC server bound to host:port, serving the reference engine until ``stop()``."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.front = Front(options.constants())
        self.shared = Shared(self.front, options.host, options.faults)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=MAX_STREAMS, thread_name_prefix="txconform-ydb"),
                                  maximum_concurrent_rpcs=MAX_STREAMS)
        add_services(self.server, self.shared)
        try:
            self.port = self.server.add_insecure_port(f"{options.host}:{options.port}")
        except RuntimeError as e:  # grpcio: "Failed to bind to address"
            raise OSError(str(e)) from None
        if self.port == 0:
            raise OSError(f"cannot listen on {options.host}:{options.port}")
        self.shared.port = self.port
        self._started = False
        self._stopped = threading.Event()

    @property
    def bootstrap(self) -> str:
        return f"{self.options.host}:{self.port}"

    @property
    def endpoint(self) -> str:
        return f"grpc://{self.bootstrap}"

    def start(self) -> Running:
        if not self._started:
            self._started = True
            self.server.start()
        return self

    def stop(self) -> Path | None:
        """Stop serving (streams end within a second) and write the trace, if one was asked for."""
        if not self._stopped.is_set():
            self._stopped.set()
            self.shared.stopping.set()
            self.server.stop(STOP_GRACE_S).wait(STOP_GRACE_S + 5)
        return self.write_trace()

    def run(self, announce: Callable[[str], None]) -> None:
        """Serve until SIGINT or SIGTERM (or ``stop()``); then write the trace."""
        previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

        def on_signal(signum: int, frame: object) -> None:
            self._stopped.set()

        for s in previous:
            signal.signal(s, on_signal)
        try:
            self.start()
            announce(f"txconform serve: YDB ({self.options.version}) on {self.endpoint}, database /local (port {self.port})")
            while not self._stopped.wait(0.2):
                pass
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            self.shared.stopping.set()
            self.server.stop(STOP_GRACE_S).wait(STOP_GRACE_S + 5)
        self.write_trace()

    # --- the trace ---

    def header(self) -> dict[str, Any]:
        k = self.front.k
        used = max(1, self.front.engine.next_tx - 1)
        # the transactions begun (the rest never had a state); the plain writes' budget and their
        # producers as used, the budget large enough that every SeqNo written is in AppOffsets
        e = self.front.engine
        top = max((ev["offset"] + 1 for ev in self.front.events if ev["action"] in ("PlainWrite", "PlainWriteSkipped")),
                  default=0)
        plain = max(e.plain_sent, top - used * k.batch_max) if e.plain_sent else 0
        constants = attrs.evolve(k, max_txns=used, max_plain_writes=plain,
                                 others=max(1, len(self.front.plain_ids)), max_plain_commits=len(e.plain_commits)).to_spec()
        o = self.options
        return trace_format.header("ydb", ydb_trace.SPEC_DIR, ydb_trace.SPEC_MODULES, constants, None, GENERATOR, ydb_trace.LOGGED,
                                   workload=f"real clients (txconform serve, messages={o.messages}, batch={o.batch})",
                                   faults=o.faults.describe(), bugs=list(k.bugs))

    def write_trace(self) -> Path | None:
        path = self.options.trace
        if path is None:
            return None
        with self.shared.lock:
            head, events = self.header(), list(self.front.events)
        trace_format.write_trace(path, head, events, ydb_trace.ORDER)
        return path

    def summary(self) -> list[str]:
        trace = self.options.trace
        served = sum(self.shared.requests.values())
        lines = [f"txconform serve: stopped after {served} requests, {len(self.front.events)} trace events"
                 + (f"; trace written to {trace} (check it: txconform check {trace})" if trace else "")]
        if self.shared.requests:
            lines.append("  served: " + ", ".join(f"{n}: {c}" for n, c in sorted(self.shared.requests.items())))
        lines += [f"  fault taken: {f}" for f in self.front.faults_taken]
        lines += [f"  fault not taken: {f}" for f in self.front.faults_missed]
        return lines + [f"  refused (outside the engine's model): {r}" for r in self.front.refusals[:10]]

    def __enter__(self) -> Running:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(options: Options = Options(port=0)) -> Running:
    """A serving server in the background; stop it with ``stop()`` (or use ``with``)."""
    return Running(options).start()
