"""One serving session: the frame server, the serving broker between them, fault switches, and the
session's trace.

``Session`` is the frame server's handler: it decodes each frame (``wire``), has the broker answer
it (``broker.ServeBroker``), and writes the answer. A connection's requests are answered one at a
time, in order, as a Kafka broker does (its channel is muted while a request is in progress): a
Fetch that finds nothing to read waits for up to its max_wait_ms (at most ``MAX_FETCH_WAIT_S``),
then looks again. Malformed input closes the connection; an unsupported API or version gets
UNSUPPORTED_VERSION where its answer has room for it. Nothing a client sends stops the server.

Fault switches (``Switches.parse``): ``KIND@REQUEST:N``, each taken once, right after the N-th
request of type REQUEST was served:
  drop@EndTxn:1        the answer is lost: the spec's Drop instead of ClientTake, and the
                       connection is closed (the client reconnects and retries)
  delay@Produce:2:300  the answer is held for 300 ms (the connection waits)
  failover@EndTxn:2    the transaction coordinator fails over after answering
  restart@Produce:3    the leader of that Produce's first partition restarts after answering
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from pathlib import Path
from typing import Any

import attrs

from ref_impl.sim.settings import SettingsError
from trace_check.traces import format as trace_format

from .. import trace as kafka_trace
from . import wire
from .broker import ServeBroker, ServeError
from .server import FrameServer

log = logging.getLogger("txconform.serve")

GENERATOR = "txconform serve 1"
MAX_FETCH_WAIT_S = 0.5
FAULT_KINDS = ("drop", "delay", "failover", "restart")
_FAULT = re.compile(r"^(drop|delay|failover|restart)@([A-Za-z]+):([0-9]+)(?::([0-9]+))?$")


@attrs.frozen
class Switch:
    kind: str
    request: str
    n: int
    ms: int = 0

    def describe(self) -> str:
        return f"{self.kind}@{self.request}:{self.n}" + (f":{self.ms}" if self.kind == "delay" else "")


@attrs.frozen
class Switches:
    switches: tuple[Switch, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Switches:
        out = []
        for part in (p.strip() for p in text.split(",") if p.strip()):
            m = _FAULT.match(part)
            if m is None:
                raise SettingsError(f"{part!r} is not KIND@REQUEST:N (KIND one of {', '.join(FAULT_KINDS)}; "
                                     "delay takes :MS after N), e.g. drop@EndTxn:1 or delay@Produce:2:300")
            kind, request, n, ms = m.group(1), m.group(2), int(m.group(3)), m.group(4)
            if n < 1:
                raise SettingsError(f"{part!r}: N counts requests from 1")
            if (kind == "delay") != (ms is not None):
                raise SettingsError(f"{part!r}: delay, and only delay, takes a time in milliseconds (delay@Produce:2:300)")
            out.append(Switch(kind, request, n, int(ms or 0)))
        return cls(tuple(out))

    def describe(self) -> str:
        return ",".join(f.describe() for f in self.switches) or "none"


class Session:
    """The frame server's handler (``server.Handler``): one broker, many connections."""

    def __init__(self, broker: ServeBroker, faults: Switches = Switches(), trace: Path | None = None) -> None:
        self.broker = broker
        self.faults = faults
        self.trace_path = trace
        self.server: FrameServer | None = None
        self.queued: dict[int, deque[bytes]] = {}
        self.busy: set[int] = set()
        self.served: dict[str, int] = {}  # requests served, by API name
        self.lock = threading.Lock()  # held while the broker changes: trace() may run in another thread

    # --- the handler ---

    def on_connect(self, conn: int) -> None:
        self.queued[conn] = deque()

    def on_disconnect(self, conn: int) -> None:
        self.queued.pop(conn, None)
        self.busy.discard(conn)

    def on_frame(self, conn: int, payload: bytes) -> None:
        if conn in self.busy:
            self.queued.setdefault(conn, deque()).append(payload)
            return
        self._serve(conn, payload)

    def _next(self, conn: int) -> None:
        self.busy.discard(conn)
        q = self.queued.get(conn)
        while q and conn not in self.busy:
            self._serve(conn, q.popleft())

    def _serve(self, conn: int, payload: bytes) -> None:
        server = self.server
        assert server is not None
        try:
            req = wire.decode_request(payload)
        except wire.UnsupportedRequest as e:
            data = wire.error_response(e, 35)
            if data is None:
                server.close(conn)
            else:
                server.send(conn, data)
            return
        except wire.WireError as e:
            log.info("connection %d: malformed request, closing: %s", conn, e)
            server.close(conn)
            return
        self._answer(conn, req, first=True)

    def _answer(self, conn: int, req: wire.Request, first: bool) -> None:
        server = self.server
        assert server is not None
        n = self.served.get(req.name, 0) + 1
        fault = next((f for f in self.faults.switches if f.request == req.name and f.n == n), None)
        try:
            with self.lock:
                self.broker.lose_answers = fault is not None and fault.kind == "drop"
                try:
                    body = self.broker.handle(req, conn)
                finally:
                    self.broker.lose_answers = False
        except ServeError as e:
            log.warning("connection %d: %s: %s; closing", conn, req.name, e)
            server.close(conn)
            return
        except Exception:  # a bug of ours: never the server's end
            log.exception("connection %d: %s failed; closing", conn, req.name)
            server.close(conn)
            return
        if first and req.name == "Fetch" and self.broker.last_fetch_empty and req.body.max_wait_ms > 0:
            self.busy.add(conn)
            wait = min(req.body.max_wait_ms / 1000, MAX_FETCH_WAIT_S)
            server.call_later(wait, lambda: self._answer(conn, req, first=False) if conn in self.queued else None)
            return
        self.served[req.name] = n
        if body is not None:
            data = wire.encode_response(req, body)
            if fault is not None and fault.kind == "delay":
                self.busy.add(conn)
                server.call_later(fault.ms / 1000, lambda: self._release(conn, data))
                return
            if fault is not None and fault.kind == "drop":
                server.close(conn)
                return
            server.send(conn, data)
        if fault is not None:
            with self.lock:
                if fault.kind == "failover":
                    self.broker.failover()
                elif fault.kind == "restart":
                    self.broker.restart_leader_of(req)
        if not first:
            self._next(conn)

    def _release(self, conn: int, data: bytes) -> None:
        if conn in self.queued and self.server is not None:
            self.server.send(conn, data)
        self._next(conn)

    # --- the trace ---

    def header(self) -> dict[str, Any]:
        b = self.broker
        return trace_format.header("kafka", kafka_trace.SPEC_DIR, kafka_trace.SPEC_MODULES, b.constants(), None, GENERATOR,
                                   kafka_trace.LOGGED, workload="real clients (txconform serve)",
                                   faults=self.faults.describe(), bugs=list(b.bugs))

    def write_trace(self) -> Path | None:
        """Write the session's trace so far (header with the constants seen, then the events)."""
        path = self.trace_path
        if path is None:
            return None
        with self.lock:
            head, events = self.header(), list(self.broker.events)
        trace_format.write_trace(path, head, events, kafka_trace.ORDER)
        return path
