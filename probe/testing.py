"""A pytest plug-in: real Apache Kafka brokers (and Apache Cassandra nodes) for your own tests, started once per test session.

Enable it in a conftest.py with ``pytest_plugins = ["probe.testing"]``; then

    def test_my_app(txconform_kafka):
        run_my_app(bootstrap_servers=txconform_kafka.bootstrap)

gets a single KRaft node of the newest Kafka txconform tests (probe.kafka.DEFAULT_VERSION) on
127.0.0.1, shared by the session's tests and stopped by its process id when the session ends.
For other versions or transaction versions, ask the factory; each distinct one is started once:

    def test_tv1(txconform_kafka_cluster):
        cluster = txconform_kafka_cluster(version="4.1.0", transaction_version=1)

``txconform_cassandra`` (one node) and ``txconform_cassandra_cluster(nodes=3)`` give Apache
Cassandra 5.0 the same way (probe.cassandra; ``txconform probe --target cassandra --hold``).

It needs Java 17+ and Maven (the jars are resolved into ~/.cache/txconform once per version); a
test that asks for a broker where they are missing is skipped with the reason. This is what
``txconform probe --target kafka --hold`` gives on the command line.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

Factory = Callable[..., Any]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (an exited process not yet reaped counts as gone): for tests
    that check a broker or a client was stopped by its id."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@contextlib.contextmanager
def holding(*args: str) -> Iterator[subprocess.Popen[str]]:
    """``txconform probe ARGS --hold`` in a process (and session) of its own, its output in pipes,
    for a test that stops it with SIGINT; killed and its pipes closed whatever happens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "trace_check.cli", "probe", *args, "--hold"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def prefetch(versions: tuple[str, ...], java_client: bool = False) -> threading.Thread:
    """Resolve the jars of ``versions`` (and of the Java client) in a background thread, one after
    another, so that a first run on a new machine downloads them while the first broker runs
    (probe.maven's file lock makes a fixture that needs one meanwhile wait for it, not resolve it
    twice). Errors are left for the fixture that needs the jars to report."""

    def run() -> None:
        from probe.kafka import broker_jars

        for version in versions:
            with contextlib.suppress(Exception):  # reported by the fixture that starts this version
                broker_jars(version)
        if java_client:
            try:
                from probe.java_client import driver_classes

                driver_classes()
            except Exception:
                pass

    thread = threading.Thread(target=run, name="txconform-prefetch", daemon=True)
    thread.start()
    return thread


@pytest.fixture(scope="session")
def txconform_kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Factory]:
    """``factory(version=None, transaction_version=None, brokers=1)``: a running
    probe.kafka.KafkaCluster, started on first request and shared after."""
    from probe.kafka import DEFAULT_VERSION, environment_problem, start_kafka

    started: dict[tuple[str, int | None, int], Any] = {}

    def factory(version: str | None = None, transaction_version: int | None = None, brokers: int = 1) -> Any:
        why = environment_problem()
        if why:
            pytest.skip(why)
        key = (version or DEFAULT_VERSION, transaction_version, brokers)
        if key not in started:
            workdir = tmp_path_factory.mktemp(f"kafka-{key[0]}-tv{transaction_version or 'default'}-{brokers}")
            started[key] = start_kafka(workdir, key[0], transaction_version, brokers)
        return started[key]

    try:
        yield factory
    finally:
        for cluster in started.values():
            cluster.stop()


@pytest.fixture(scope="session")
def txconform_kafka(txconform_kafka_cluster: Factory) -> Any:
    """One node of the default version, its default transaction version (2 on Kafka 4.x)."""
    return txconform_kafka_cluster()


@pytest.fixture(scope="session")
def txconform_cassandra_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Factory]:
    """``factory(nodes=1, version=None)``: a running probe.cassandra.CassandraCluster (1 or 3 nodes on
    127.0.0.1 to 127.0.0.3), started on first request and shared after. At most one is up: asking
    for another size or version stops the one running first (a node takes ~700 MiB here). Skips
    the test without Java 17 or Maven; every node stopped by its pid at the end of the session."""
    from probe.cassandra import DEFAULT_VERSION, environment_problem, start_cassandra

    running: dict[tuple[str, int], Any] = {}

    def factory(nodes: int = 1, version: str | None = None) -> Any:
        why = environment_problem()
        if why:
            pytest.skip(why)
        key = (version or DEFAULT_VERSION, nodes)
        if key not in running:
            for cluster in running.values():
                cluster.stop()
            running.clear()
            running[key] = start_cassandra(tmp_path_factory.mktemp(f"cassandra-{key[0]}-{nodes}"), key[0], nodes)
        return running[key]

    try:
        yield factory
    finally:
        for cluster in running.values():
            cluster.stop()


@pytest.fixture(scope="session")
def txconform_cassandra(txconform_cassandra_cluster: Factory) -> Any:
    """One Cassandra node of the default version on 127.0.0.1 (``.contact_points``, ``.native_port``)."""
    return txconform_cassandra_cluster()
