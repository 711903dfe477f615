"""The network layer of the test broker: size-prefixed frames between TCP connections and a handler.

Kafka's framing: a 4-byte big-endian signed size, then that many bytes. :class:`FrameServer` knows
nothing of Kafka's APIs. It runs one ``selectors`` loop in the calling thread over non-blocking
sockets and hands each complete frame (without its size) to a :class:`Handler`; the handler answers
with :meth:`FrameServer.send` (bytes already framed), from inside the loop thread.

A loop turn, always in this order: the timers that are due (:meth:`FrameServer.call_later`), new
connections, one read of at most :data:`CHUNK` bytes from each readable connection (by connection
id), then at most :data:`FRAMES_PER_TURN` frames of each connection (by connection id), then the
writes. A connection holding a complete frame not yet handed over is not read (backpressure), so a
peer that pipelines fast costs the server a bounded buffer and cannot starve the others.

A connection ends, and the handler gets ``on_disconnect`` exactly once, when the peer closes or
resets it (``closed_by_peer``), when a frame's size is negative or above ``max_frame`` (``oversized``,
closed at once), when the handler closes it or raises in ``on_frame`` (closed once what is queued is
written), or when the server stops. Only :meth:`FrameServer.stop` may be called from another thread
or a signal handler.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import attrs

log = logging.getLogger("txconform.serve")

LOCAL_HOSTS = ("127.0.0.1", "::1", "localhost")
CHUNK = 64 * 1024  # bytes read from one connection per loop turn
FRAMES_PER_TURN = 4  # frames handed to the handler per connection per loop turn
ACCEPTS_PER_TURN = 64
FLUSH_TIMEOUT_S = 2.0  # what stop() waits at most for the queued bytes to be written
_SIZE = struct.Struct(">i")
_LISTENER = "listener"
_WAKE = "wake"


class Handler(Protocol):
    def on_connect(self, conn: int) -> None: ...

    def on_frame(self, conn: int, payload: bytes) -> None: ...  # the payload without the size prefix

    def on_disconnect(self, conn: int) -> None: ...


@attrs.define
class ServerStats:
    connections_accepted: int = 0  # connections handed to the handler (ids 1, 2, ...)
    rejected: int = 0  # accepted and closed at once: max_connections were open
    frames_in: int = 0  # frames handed to the handler
    bytes_in: int = 0  # bytes read from the sockets, sizes included
    frames_out: int = 0  # send() calls queued
    bytes_out: int = 0  # bytes written to the sockets
    oversized: int = 0  # connections closed for a size < 0 or > max_frame
    closed_by_peer: int = 0  # connections the peer closed or reset


@attrs.define(eq=False)
class _Conn:
    id: int
    sock: socket.socket
    peer: tuple[str, int]
    inbuf: bytearray = attrs.Factory(bytearray)
    outbuf: bytearray = attrs.Factory(bytearray)
    events: int = 0  # what the selector watches for (0: not registered)
    closing: bool = False  # closed by the handler: written out, then closed, nothing more read
    open: bool = True


class FrameServer:
    def __init__(
        self,
        handler: Handler,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_frame: int = 100 * 1024 * 1024,
        max_connections: int = 1000,
        allow_any_host: bool = False,
    ) -> None:
        self.handler = handler
        self.host = host
        self.port = port
        self.max_frame = max_frame
        self.max_connections = max_connections
        self.allow_any_host = allow_any_host
        self.stats = ServerStats()
        self._stopping = False
        self._listener: socket.socket | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._sel: selectors.BaseSelector | None = None
        self._conns: dict[int, _Conn] = {}  # open connections, by id (so in accept order)
        self._ids = itertools.count(1)
        self._timers: list[tuple[float, int, Callable[[], None]]] = []  # a heap: (due, insertion, fn)
        self._timer_seq = itertools.count()

    # --- life cycle ---

    def bind(self) -> int:
        """Bind and listen (once); the port, also when port 0 was asked."""
        if self._listener is not None:
            return self.port
        if self.host not in LOCAL_HOSTS and not self.allow_any_host:
            raise ValueError(f"refusing to listen on {self.host!r}: only {', '.join(LOCAL_HOSTS)} (or allow_any_host=True)")
        host = "127.0.0.1" if self.host == "localhost" else self.host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.create_server((host, self.port), family=family, backlog=128)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        return self.port

    def serve_forever(self) -> None:
        """The loop, in the calling thread, until :meth:`stop`; then every socket is closed."""
        try:
            self.bind()
            assert self._listener is not None and self._wake_r is not None
            self._sel = selectors.DefaultSelector()
            self._sel.register(self._listener, selectors.EVENT_READ, _LISTENER)
            self._sel.register(self._wake_r, selectors.EVENT_READ, _WAKE)
            while not self._stopping:
                self._turn()
        finally:
            self._shutdown()

    def stop(self) -> None:
        """Thread-safe and signal-safe: the loop ends at its next turn, which the wake socket starts now."""
        self._stopping = True
        wake = self._wake_w
        if wake is not None:
            with contextlib.suppress(OSError):  # full (a wake-up is pending anyway) or already closed
                wake.send(b"\0")

    # --- for the handler, in the loop thread ---

    def send(self, conn: int, data: bytes) -> None:
        """Queue bytes (already framed) to write to ``conn``; ignored if it is gone."""
        c = self._conns.get(conn)
        if c is not None and data:
            c.outbuf += data
            self.stats.frames_out += 1

    def close(self, conn: int) -> None:
        """Close ``conn`` once what is queued for it is written; nothing more is read from it."""
        c = self._conns.get(conn)
        if c is not None:
            c.closing = True

    def call_later(self, delay_s: float, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the loop thread after ``delay_s`` (by due time, then in the order of the calls)."""
        heapq.heappush(self._timers, (time.monotonic() + delay_s, next(self._timer_seq), fn))

    def peer(self, conn: int) -> tuple[str, int]:
        return self._conns[conn].peer

    # --- the loop ---

    def _turn(self) -> None:
        assert self._sel is not None
        ready = self._sel.select(self._timeout())
        self._run_timers()
        readable: list[_Conn] = []
        for key, mask in ready:
            if key.data == _LISTENER:
                self._accept()
            elif key.data == _WAKE:
                self._drain_wake()
            elif mask & selectors.EVENT_READ:
                readable.append(key.data)
        for c in sorted(readable, key=lambda c: c.id):
            if c.open and not c.closing:
                self._read(c)
        for c in list(self._conns.values()):
            self._deliver(c)
        for c in list(self._conns.values()):
            self._flush(c)
            if c.open and c.closing and not c.outbuf:
                self._drop(c)
            elif c.open:
                self._watch(c, (0 if c.closing or self._has_frame(c) else selectors.EVENT_READ) | (selectors.EVENT_WRITE if c.outbuf else 0))

    def _timeout(self) -> float | None:
        if any(not c.closing and self._has_frame(c) for c in self._conns.values()):
            return 0
        if self._timers:
            return max(0.0, self._timers[0][0] - time.monotonic())
        return None

    def _run_timers(self) -> None:
        now = time.monotonic()
        due = []
        while self._timers and self._timers[0][0] <= now:  # those due now; what they schedule waits for a later turn
            due.append(heapq.heappop(self._timers)[2])
        for fn in due:
            try:
                fn()
            except Exception:
                log.exception("timer %r failed", fn)

    def _accept(self) -> None:
        assert self._listener is not None and self._sel is not None
        for _ in range(ACCEPTS_PER_TURN):
            try:
                sock, addr = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # e.g. ECONNABORTED, EMFILE: the listener stays
                log.warning("accept failed", exc_info=True)
                return
            if len(self._conns) >= self.max_connections:
                self.stats.rejected += 1
                sock.close()
                continue
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c = _Conn(next(self._ids), sock, (addr[0], addr[1]))
            self._conns[c.id] = c
            self.stats.connections_accepted += 1
            self._watch(c, selectors.EVENT_READ)
            if not self._call(c, self.handler.on_connect, c.id):
                self.close(c.id)

    def _drain_wake(self) -> None:
        assert self._wake_r is not None
        with contextlib.suppress(OSError):
            while self._wake_r.recv(4096):
                pass

    def _read(self, c: _Conn) -> None:
        try:
            chunk = c.sock.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:  # ECONNRESET and the like: the peer is gone
            log.debug("connection %d: %s", c.id, e)
            chunk = b""
        if not chunk:
            self.stats.closed_by_peer += 1
            self._drop(c)
            return
        self.stats.bytes_in += len(chunk)
        c.inbuf += chunk

    def _frame_end(self, c: _Conn) -> int | None:
        """Where the first buffered frame ends if it is complete; -1 if its size is out of bounds."""
        if len(c.inbuf) < _SIZE.size:
            return None
        (size,) = _SIZE.unpack_from(c.inbuf)
        if size < 0 or size > self.max_frame:
            return -1
        end = _SIZE.size + size
        return end if len(c.inbuf) >= end else None

    def _has_frame(self, c: _Conn) -> bool:
        return (self._frame_end(c) or 0) > 0

    def _deliver(self, c: _Conn) -> None:
        for _ in range(FRAMES_PER_TURN):
            if not c.open or c.closing:
                return
            end = self._frame_end(c)
            if end is None:
                return
            if end < 0:
                self.stats.oversized += 1
                log.warning("connection %d: frame size %d out of bounds (max %d), closing", c.id, _SIZE.unpack_from(c.inbuf)[0], self.max_frame)
                self._drop(c)
                return
            payload = bytes(c.inbuf[_SIZE.size:end])
            del c.inbuf[:end]
            self.stats.frames_in += 1
            if not self._call(c, self.handler.on_frame, c.id, payload):
                self.close(c.id)

    def _flush(self, c: _Conn) -> None:
        while c.open and c.outbuf:
            try:
                n = c.sock.send(c.outbuf)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # EPIPE, ECONNRESET: the peer is gone
                log.debug("connection %d: %s", c.id, e)
                self.stats.closed_by_peer += 1
                self._drop(c)
                return
            self.stats.bytes_out += n
            del c.outbuf[:n]

    def _watch(self, c: _Conn, events: int) -> None:
        assert self._sel is not None
        if events == c.events:
            return
        if c.events == 0:
            self._sel.register(c.sock, events, c)
        elif events == 0:
            self._sel.unregister(c.sock)
        else:
            self._sel.modify(c.sock, events, c)
        c.events = events

    def _drop(self, c: _Conn) -> None:
        """Close ``c`` now, whatever is queued, and tell the handler."""
        if not c.open:
            return
        self._watch(c, 0)
        c.open = False
        del self._conns[c.id]
        c.sock.close()
        self._call(c, self.handler.on_disconnect, c.id)

    def _call(self, c: _Conn, fn: Callable[..., Any], *args: Any) -> bool:
        """Call the handler; whatever it raises is logged, not raised: False then."""
        try:
            fn(*args)
            return True
        except Exception:
            log.exception("handler %s failed on connection %d; closing it", getattr(fn, "__name__", fn), c.id)
            return False

    def _shutdown(self) -> None:
        """Close the listener, write what is queued (for at most FLUSH_TIMEOUT_S), close the rest."""
        sel = self._sel
        for s in (self._listener, self._wake_r):
            if s is not None:
                if sel is not None:
                    with contextlib.suppress(KeyError, ValueError):
                        sel.unregister(s)
                s.close()
        if sel is not None:
            deadline = time.monotonic() + FLUSH_TIMEOUT_S
            for c in list(self._conns.values()):
                self._flush(c)
            while any(c.outbuf for c in self._conns.values()) and time.monotonic() < deadline:
                for c in list(self._conns.values()):
                    self._watch(c, selectors.EVENT_WRITE if c.outbuf else 0)
                for key, _ in sel.select(max(0.0, deadline - time.monotonic())):
                    self._flush(key.data)
        for c in list(self._conns.values()):
            self._drop(c)
        if sel is not None:
            sel.close()
        if self._wake_w is not None:
            self._wake_w.close()
        self._listener = self._wake_r = self._wake_w = self._sel = None


@contextlib.contextmanager
def serving(server: FrameServer, join_timeout_s: float = 5.0) -> Iterator[int]:
    """``with serving(server) as port:`` runs ``server`` in a daemon thread; at the end, stops it and joins it."""
    port = server.bind()
    thread = threading.Thread(target=server.serve_forever, name=f"frame-server-{port}", daemon=True)
    thread.start()
    try:
        yield port
    finally:
        server.stop()
        thread.join(join_timeout_s)
        if thread.is_alive():
            raise RuntimeError(f"the frame server on port {port} did not stop within {join_timeout_s} s")
