"""The test broker's network layer (ref_impl/kafka/serve/server.py): frames in and out of real
sockets on 127.0.0.1, a handler that fails, timers, limits and stopping. Every wait is bounded."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from ref_impl.kafka.serve.server import FRAMES_PER_TURN, FrameServer, serving

TIMEOUT_S = 5.0


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError(f"EOF after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def read_frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, size)


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed ``sock`` (EOF or a reset); what it wrote before is skipped."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


@contextlib.contextmanager
def client(port: int) -> Iterator[socket.socket]:
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        yield sock


def wait_until(cond: Callable[[], bool], timeout_s: float = TIMEOUT_S) -> None:
    """Poll a condition another thread makes true (the server's counters)."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.001)


def bytes_in_reach(server: FrameServer, n: int) -> bool:
    return server.stats.bytes_in >= n


class Echo:
    """Answers each frame with the same frame, and records what it saw."""

    def __init__(self) -> None:
        self.server: FrameServer | None = None
        self.cond = threading.Condition()
        self.connected: list[int] = []
        self.disconnected: list[int] = []
        self.frames: list[tuple[int, bytes]] = []
        self.peers: dict[int, tuple[str, int]] = {}

    @property
    def srv(self) -> FrameServer:
        assert self.server is not None
        return self.server

    def on_connect(self, conn: int) -> None:
        with self.cond:
            self.connected.append(conn)
            self.peers[conn] = self.srv.peer(conn)
            self.cond.notify_all()

    def on_frame(self, conn: int, payload: bytes) -> None:
        with self.cond:
            self.frames.append((conn, payload))
            self.cond.notify_all()
        self.answer(conn, payload)

    def answer(self, conn: int, payload: bytes) -> None:
        self.srv.send(conn, frame(payload))

    def on_disconnect(self, conn: int) -> None:
        with self.cond:
            self.disconnected.append(conn)
            self.cond.notify_all()

    def wait(self, pred: Callable[[], bool]) -> None:
        with self.cond:
            assert self.cond.wait_for(pred, TIMEOUT_S)


@contextlib.contextmanager
def running(handler: Echo, **kwargs: Any) -> Iterator[FrameServer]:
    server = FrameServer(handler, **kwargs)
    handler.server = server
    with serving(server):
        yield server


def assert_serves(port: int) -> None:
    with client(port) as sock:
        sock.sendall(frame(b"still here"))
        assert read_frame(sock) == b"still here"


# --- echo ---


def test_a_frame_comes_back_on_the_port_the_server_bound() -> None:
    h = Echo()
    with running(h) as server, client(server.port) as sock:
        assert server.port != 0
        sock.sendall(frame(b"hello"))
        assert read_frame(sock) == b"hello"
        sock.sendall(frame(b""))
        assert read_frame(sock) == b""
        assert h.connected == [1]
        assert h.peers[1] == sock.getsockname()
        assert (server.stats.frames_in, server.stats.bytes_in) == (2, 4 + 5 + 4)
    assert h.disconnected == [1]


def test_twenty_clients_at_once_get_their_answers_in_order() -> None:
    h = Echo()

    def one_client(k: int, port: int) -> None:
        with client(port) as sock:
            sent = [f"client {k} frame {i}".encode() * (i + 1) for i in range(50)]
            sock.sendall(b"".join(frame(p) for p in sent))  # pipelined
            assert [read_frame(sock) for _ in sent] == sent

    with running(h) as server, ThreadPoolExecutor(20) as pool:
        futures = [pool.submit(one_client, k, server.port) for k in range(20)]
        for f in futures:
            f.result(timeout=TIMEOUT_S * 2)
        assert sorted(h.connected) == list(range(1, 21))
        assert server.stats.frames_in == server.stats.frames_out == 20 * 50


def test_a_frame_written_a_byte_at_a_time_is_reassembled() -> None:
    h = Echo()
    data = frame(b"split") + frame(b"up")
    with running(h) as server, client(server.port) as sock:
        for i in range(len(data)):
            sock.sendall(data[i : i + 1])
            wait_until(functools.partial(bytes_in_reach, server, i + 1))  # the server read this byte alone
        assert [read_frame(sock), read_frame(sock)] == [b"split", b"up"]
    assert [p for _, p in h.frames] == [b"split", b"up"]


def test_a_frame_of_one_mebibyte_at_the_limit_comes_back() -> None:
    payload = os.urandom(1 << 20)
    with running(Echo(), max_frame=1 << 20) as server, client(server.port) as sock:
        sock.sendall(frame(payload))
        assert read_frame(sock) == payload
        wait_until(lambda: server.stats.bytes_out == 4 + len(payload))


def test_two_frames_in_one_write_are_two_frames() -> None:
    h = Echo()
    with running(h) as server, client(server.port) as sock:
        sock.sendall(frame(b"one") + frame(b"two"))
        assert [read_frame(sock), read_frame(sock)] == [b"one", b"two"]
    assert h.frames == [(1, b"one"), (1, b"two")]


def test_a_connection_that_pipelines_gets_a_few_frames_per_turn() -> None:
    """A timer due at once runs at the next loop turn: after at most FRAMES_PER_TURN frames, although
    all 200 frames came in one read."""
    events: list[str] = []

    class Ticking(Echo):
        def answer(self, conn: int, payload: bytes) -> None:
            events.append("frame")
            if len(events) == 1:
                self.srv.call_later(0, lambda: events.append("tick"))
            super().answer(conn, payload)

    with running(Ticking()) as server, client(server.port) as sock:
        sock.sendall(b"".join(frame(b"%d" % i) for i in range(200)))
        assert [read_frame(sock) for _ in range(200)] == [b"%d" % i for i in range(200)]
    assert events.index("tick") <= FRAMES_PER_TURN


# --- bad peers ---


@pytest.mark.parametrize("size", [1024 + 1, -1, 2**31 - 1])
def test_a_size_out_of_bounds_closes_the_connection(size: int) -> None:
    h = Echo()
    with running(h, max_frame=1024) as server:
        with client(server.port) as sock:
            sock.sendall(struct.pack(">i", size) + b"x" * 10)
            assert closed_by_server(sock)
        h.wait(lambda: h.disconnected == [1])
        assert (server.stats.oversized, server.stats.frames_in, server.stats.closed_by_peer) == (1, 0, 0)
        assert_serves(server.port)


def test_garbage_is_an_oversized_frame() -> None:
    h = Echo()
    with running(h) as server:
        with client(server.port) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")  # "GET " is a size of about 1.2 GB
            assert closed_by_server(sock)
        h.wait(lambda: h.disconnected == [1])
        assert server.stats.oversized == 1
        assert_serves(server.port)


@pytest.mark.parametrize("reset", [False, True], ids=["fin", "rst"])
def test_a_peer_that_leaves_mid_frame_is_a_disconnect(reset: bool) -> None:
    h = Echo()
    with running(h) as server:
        with client(server.port) as sock:
            sock.sendall(frame(b"whole") + struct.pack(">i", 100) + b"x" * 10)
            assert read_frame(sock) == b"whole"
            if reset:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.wait(lambda: h.disconnected == [1])
        assert h.frames == [(1, b"whole")]
        assert (server.stats.closed_by_peer, server.stats.frames_in, server.stats.bytes_in) == (1, 1, 9 + 14)
        assert_serves(server.port)


def test_a_handler_that_raises_loses_its_connection_only(caplog: pytest.LogCaptureFixture) -> None:
    class Fragile(Echo):
        def answer(self, conn: int, payload: bytes) -> None:
            if payload == b"boom":
                raise RuntimeError("the handler broke")
            super().answer(conn, payload)

    h = Fragile()
    with running(h) as server, client(server.port) as other:
        other.sendall(frame(b"before"))
        assert read_frame(other) == b"before"
        with client(server.port) as sock:
            sock.sendall(frame(b"fine") + frame(b"boom") + frame(b"never"))
            assert read_frame(sock) == b"fine"
            assert closed_by_server(sock)
        other.sendall(frame(b"after"))
        assert read_frame(other) == b"after"
        h.wait(lambda: h.disconnected == [2])
        assert (2, b"never") not in h.frames
    errors = [r for r in caplog.records if r.name == "txconform.serve" and r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert errors[0].exc_info is not None and "the handler broke" in str(errors[0].exc_info[1])


# --- timers ---


def test_timers_run_by_due_time_then_in_the_order_of_the_calls() -> None:
    class Scheduling(Echo):
        def answer(self, conn: int, payload: bytes) -> None:
            order: list[str] = []
            for delay, name in [(0.2, "d"), (0.1, "b"), (0.1, "c"), (0.0, "a")]:
                self.srv.call_later(delay, functools.partial(order.append, name))
            self.srv.call_later(0.2, lambda: self.srv.send(conn, frame("".join(order).encode())))

    with running(Scheduling()) as server, client(server.port) as sock:
        start = time.monotonic()
        sock.sendall(frame(b"go"))
        assert read_frame(sock) == b"abcd"
        assert time.monotonic() - start >= 0.2


def test_an_answer_sent_later_arrives_later() -> None:
    class Slow(Echo):
        def answer(self, conn: int, payload: bytes) -> None:
            self.srv.call_later(0.1, lambda: self.srv.send(conn, frame(payload)))

    with running(Slow()) as server, client(server.port) as sock:
        start = time.monotonic()
        sock.sendall(frame(b"one") + frame(b"two"))
        assert [read_frame(sock), read_frame(sock)] == [b"one", b"two"]
        assert 0.1 <= time.monotonic() - start < TIMEOUT_S


def test_a_send_to_a_connection_that_is_gone_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    class Late(Echo):
        def answer(self, conn: int, payload: bytes) -> None:
            if conn == 1:
                self.srv.close(conn)
                self.srv.call_later(0, lambda: self.srv.send(conn, frame(payload)))
            else:
                super().answer(conn, payload)

    h = Late()
    with running(h) as server:
        with client(server.port) as sock:
            sock.sendall(frame(b"x"))
            assert closed_by_server(sock)
        h.wait(lambda: h.disconnected == [1])
        assert_serves(server.port)
        assert server.stats.frames_out == 1  # the echo to the second client only
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


# --- stopping ---


def test_stop_from_another_thread_ends_the_loop_and_closes_the_clients() -> None:
    h = Echo()
    server = FrameServer(h)
    h.server = server
    port = server.bind()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with client(port) as sock:
            sock.sendall(frame(b"hi"))
            assert read_frame(sock) == b"hi"
            start = time.monotonic()
            threading.Thread(target=server.stop).start()
            thread.join(1.0)
            assert not thread.is_alive()
            assert time.monotonic() - start < 1.0
            assert sock.recv(1) == b""
        assert h.disconnected == [1]
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S):
            pass
    finally:
        server.stop()
        thread.join(TIMEOUT_S)


def test_stop_writes_what_is_queued_first() -> None:
    big = os.urandom(8 << 20)  # more than the socket buffers hold

    class Last(Echo):
        def answer(self, conn: int, payload: bytes) -> None:
            self.srv.send(conn, frame(big))
            self.srv.stop()  # from inside the loop thread too

    h = Last()
    with running(h) as server, client(server.port) as sock:
        sock.sendall(frame(b"last words"))
        assert read_frame(sock) == big
        assert sock.recv(1) == b""
    assert h.disconnected == [1]


def test_stop_before_serve_forever_returns_at_once() -> None:
    server = FrameServer(Echo())
    port = server.bind()
    server.stop()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    thread.join(1.0)
    assert not thread.is_alive()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S):
        pass


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_stop_from_a_signal_handler() -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread")
    h = Echo()
    server = FrameServer(h)
    h.server = server
    server.bind()
    main = threading.main_thread().ident
    assert main is not None
    previous = signal.signal(signal.SIGUSR1, lambda *_: server.stop())
    kill = threading.Timer(0.1, signal.pthread_kill, (main, signal.SIGUSR1))
    backstop = threading.Timer(TIMEOUT_S, server.stop)  # should the signal not stop it, the test fails instead of hanging
    try:
        kill.start()
        backstop.start()
        start = time.monotonic()
        server.serve_forever()  # in the main thread, where the signal handler runs
        assert time.monotonic() - start < 1.0
    finally:
        signal.signal(signal.SIGUSR1, previous)
        kill.cancel()
        backstop.cancel()
        kill.join()
        backstop.join()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.com"])
def test_only_a_loopback_host_unless_allowed(host: str) -> None:
    with pytest.raises(ValueError, match="allow_any_host"):
        FrameServer(Echo(), host).bind()


def test_localhost_is_a_loopback_host() -> None:
    with running(Echo(), host="localhost") as server:
        assert_serves(server.port)


# --- limits ---


def test_beyond_max_connections_a_client_is_closed() -> None:
    h = Echo()
    with running(h, max_connections=2) as server, client(server.port) as a, client(server.port) as b:
        for sock, msg in [(a, b"a"), (b, b"b")]:
            sock.sendall(frame(msg))
            assert read_frame(sock) == msg
        with client(server.port) as third:
            assert closed_by_server(third)
        assert (server.stats.connections_accepted, server.stats.rejected) == (2, 1)
        assert h.connected == [1, 2]
        a.close()
        h.wait(lambda: h.disconnected == [1])
        assert_serves(server.port)  # one is open again: a new one is welcome
        assert h.connected == [1, 2, 3]
