"""Starting and stopping a serving broker: in a thread (``start``, for tests and the pytest
fixture) or in the foreground until SIGINT/SIGTERM (``serve``, for ``txconform serve``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path

import attrs

from ref_impl.sim import settings
from trace_check.traces.protocol import ProtocolInputError

from ..constants import BUGS, VERSIONS
from .broker import ServeBroker
from .server import FrameServer
from .session import Session, Switches

JOIN_TIMEOUT_S = 10.0


@attrs.frozen
class Options:
    port: int = 0
    host: str = "127.0.0.1"
    version: str = "TV1V"
    partitions: int = 1  # of a topic created by auto-creation or CreateTopics without a count
    bugs: tuple[str, ...] = ()
    faults: str = ""
    trace: Path | None = None
    auto_create: bool = True

    def check(self) -> Switches:
        if self.version not in VERSIONS:
            raise ProtocolInputError(f"--version: {self.version!r} is not one of {', '.join(VERSIONS)}")
        settings.option("--bugs", lambda text: settings.bugs(text, BUGS), "+".join(self.bugs))
        if not 1 <= self.partitions <= 10_000:
            raise ProtocolInputError(f"--partitions: {self.partitions} is not a partition count from 1 to 10000")
        if not 0 <= self.port <= 65535:
            raise ProtocolInputError(f"--port: {self.port} is not a TCP port (0 takes a free one)")
        return settings.option("--faults", Switches.parse, self.faults)


class Running:
    """A serving broker bound to 127.0.0.1:port, its loop in a daemon thread until ``stop()``."""

    def __init__(self, options: Options) -> None:
        faults = options.check()
        self.options = options
        self.broker = ServeBroker(version=options.version, default_partitions=options.partitions, bugs=options.bugs,
                                  auto_create=options.auto_create, host=options.host)
        self.session = Session(self.broker, faults, options.trace)
        self.server = FrameServer(self.session, options.host, options.port)
        self.session.server = self.server
        self.port = self.server.bind()
        self.broker.port = self.port
        self._thread: threading.Thread | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.options.host}:{self.port}"

    def start(self) -> Running:
        self._thread = threading.Thread(target=self.server.serve_forever, name=f"txconform-serve-{self.port}", daemon=True)
        self._thread.start()
        return self

    def create_topic(self, name: str, partitions: int) -> None:
        """Create a topic from the test's thread (as CreateTopics would), under the session's lock."""
        with self.session.lock:
            if name not in self.broker.topics:
                self.broker.create_topic(name, partitions)

    def stop(self) -> Path | None:
        """Stop serving (bounded in time) and write the trace, if one was asked for."""
        self.server.stop()
        if self._thread is not None:
            self._thread.join(JOIN_TIMEOUT_S)
        return self.session.write_trace()

    def run(self, announce: Callable[[str], None]) -> None:
        """Serve in the calling thread until SIGINT or SIGTERM (or ``stop()``); then write the trace."""
        previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

        def on_signal(signum: int, frame: object) -> None:
            self.server.stop()

        for s in previous:
            signal.signal(s, on_signal)
        try:
            announce(f"txconform serve: Kafka {self.options.version} on {self.bootstrap} (port {self.port})")
            self.server.serve_forever()
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
        self.session.write_trace()

    def summary(self) -> list[str]:
        b = self.broker
        trace = self.options.trace
        lines = [f"txconform serve: stopped after {b.requests} requests, {len(b.events)} trace events"
                 + (f"; trace written to {trace} (check it: txconform check {trace})" if trace else "")]
        served = ", ".join(f"{name} v{v}: {n}" for (name, v), n in sorted(b.versions.items()))
        if served:
            lines.append(f"  served: {served}")
        return lines + [f"  refused (outside the spec): {r}" for r in b.refusals[:10]]

    def __enter__(self) -> Running:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(options: Options = Options()) -> Running:
    """A serving broker in a background thread; stop it with ``stop()`` (or use ``with``)."""
    return Running(options).start()
