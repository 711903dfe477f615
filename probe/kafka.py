"""Apache Kafka itself as a probe target: ``--target kafka`` (the newest version we test,
``DEFAULT_VERSION``) or ``--target kafka:4.1.0`` (any version Maven serves).

The broker's runtime classpath comes from Maven Central through ``probe/java/kafka-broker.pom.xml``
(probe.maven, cached per version). A node is one KRaft process with ``process.roles=broker,controller``
on free ports of 127.0.0.1; its storage is formatted with ``kafka.tools.StorageTool format`` (with
``--feature transaction.version=N`` when asked: 4.x formats the latest, 2, by default; TV2 is
KIP-890 part 2) and started with ``kafka.Kafka server.properties``, with a bounded heap. Internal
topics have one partition and replication factor 1 (3 with ``brokers=3``), the first rebalance of a
group is not delayed, and the coordinator looks for timed-out transactions every second. The
broker's log4j output goes to ``DIR/target.log`` (one node) or ``DIR/target-N.log``.

Readiness is a Metadata answer (probe.targets.wait_ready). Each node is stopped by its own
process id (SIGTERM, then SIGKILL) and its data folder removed, unless the caller keeps it
(``keep_data``: ``DIR/kafka-data/node-N`` keeps the segments and ``__transaction_state`` a probe
run left, for ``txconform replay``).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from probe import maven
from probe.targets import LOCAL, Target, TargetError, free_port, stop_process, wait_ready

POM = Path(__file__).resolve().parent / "java" / "kafka-broker.pom.xml"
DEFAULT_VERSION = "4.4.0"
HEAP = ("-Xms128m", "-Xmx512m")
READY_SECONDS = 90.0  # a node answered Metadata 3.7 s after its start here; a cold JVM on a busy machine takes longer
FORMAT_SECONDS = 120.0

LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
"""


def parse_target(text: str) -> tuple[str, str | None]:
    """``kafka`` or ``kafka:VERSION`` -> ("kafka", VERSION or None); other names pass through."""
    name, _, version = text.partition(":")
    if name != "kafka":
        if version:
            raise TargetError(f"--target {text}: only kafka takes a version (kafka:4.1.0)")
        return name, None
    if version and not maven.VERSION.fullmatch(version):
        raise TargetError(f"--target {text}: give the version as MAJOR.MINOR.PATCH, e.g. kafka:4.1.0")
    if version and not version.startswith("4."):
        raise TargetError(f"--target {text}: the real Kafka target runs Kafka 4.x (KRaft, started from its jars); give e.g. kafka:4.1.0")
    return name, version or None


def broker_jars(version: str) -> Path:
    """The broker's runtime classpath at ``version`` (resolved through Maven once, then cached)."""
    try:
        return maven.classpath(POM, version, "kafka", "kafka.version")
    except maven.MavenError as e:
        raise TargetError(f"--target kafka:{version}: {e}") from None


@attrs.define
class Node:
    node_id: int
    port: int
    controller_port: int
    data: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    command: list[str] = attrs.field(factory=list)  # how it was started, to start it again after a kill


@attrs.define
class KafkaCluster(Target):
    """One or more KRaft nodes of one version, started here."""

    nodes: list[Node] = attrs.field(factory=list)
    lib: Path | None = None
    transaction_version: int | None = None
    scratch: Path | None = None  # the nodes' data folders, removed at stop unless kept
    keep_data: bool = False

    @property
    def pid(self) -> int | None:
        return self.nodes[0].process.pid if self.nodes and self.nodes[0].process is not None else None

    @property
    def pids(self) -> list[int]:
        return [n.process.pid for n in self.nodes if n.process is not None]

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None:
                stop_process(node.process)
        if self.scratch is not None and not self.keep_data:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def node_at(self, host: str, port: int) -> Node | None:
        return next((n for n in self.nodes if n.port == port and host in (LOCAL, "localhost")), None)

    def restart(self, node: Node) -> None:
        """Start ``node`` again, with its data, after it was killed (probe.faults)."""
        if node.process is not None and node.process.poll() is None:
            return
        with open(node.log, "ab") as out:
            node.process = subprocess.Popen(node.command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def run_tool(self, main_class: str, *args: str, seconds: float = 60.0) -> subprocess.CompletedProcess[str]:
        """One of Kafka's command-line tools (TransactionsCommand, FeatureCommand, ...) on this
        cluster's classpath, with a bounded heap and time."""
        assert self.lib is not None
        return subprocess.run(
            [str(maven.java()), "-Xmx256m", "-Dlog4j2.level=WARN", "-cp", maven.jars(self.lib), main_class, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=seconds,
        )


def _properties(node: Node, voters: str, brokers: int) -> str:
    rf = min(3, brokers)
    return "\n".join(
        [
            "process.roles=broker,controller",
            f"node.id={node.node_id}",
            f"controller.quorum.voters={voters}",
            f"listeners=PLAINTEXT://{LOCAL}:{node.port},CONTROLLER://{LOCAL}:{node.controller_port}",
            f"advertised.listeners=PLAINTEXT://{LOCAL}:{node.port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            f"log.dirs={node.data}",
            "num.partitions=1",
            f"default.replication.factor={rf}",
            f"min.insync.replicas={min(2, rf)}",
            "offsets.topic.num.partitions=1",
            f"offsets.topic.replication.factor={rf}",
            "transaction.state.log.num.partitions=1",
            f"transaction.state.log.replication.factor={rf}",
            f"transaction.state.log.min.isr={min(2, rf)}",
            f"share.coordinator.state.topic.replication.factor={rf}",
            f"share.coordinator.state.topic.min.isr={min(2, rf)}",
            "group.initial.rebalance.delay.ms=0",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
            "auto.create.topics.enable=false",
            "",
        ]
    )


def start_kafka(
    workdir: Path, version: str | None = None, transaction_version: int | None = None, brokers: int = 1, keep_data: bool = False
) -> KafkaCluster:
    """Resolve, format and start ``brokers`` KRaft nodes of Kafka ``version``; ready for clients."""
    version = version or DEFAULT_VERSION
    if transaction_version not in (None, 0, 1, 2):
        raise TargetError(f"--transaction-version {transaction_version}: Kafka 4.x has transaction versions 0, 1 and 2")
    if brokers not in (1, 3):
        raise TargetError(f"--brokers {brokers}: the real Kafka target runs 1 or 3 nodes")
    lib = broker_jars(version)
    java = maven.java()
    workdir.mkdir(parents=True, exist_ok=True)
    if keep_data:  # DIR/kafka-data/node-N: each node's log.dirs, for txconform replay after the run
        scratch = workdir / "kafka-data"
        if scratch.exists():
            raise TargetError(f"{scratch}: exists; --keep-data writes the brokers' data there: remove it or give a new --out")
        scratch.mkdir()
    else:
        scratch = Path(tempfile.mkdtemp(prefix="txconform-kafka-", dir=workdir))
    tv = f", transaction.version={transaction_version}" if transaction_version is not None else ", transaction.version as 4.x formats it (2)"
    cluster = KafkaCluster(
        "kafka",
        version=f"Apache Kafka {version} (KRaft, {brokers} node{'s' if brokers > 1 else ''}{tv})",
        lib=lib,
        transaction_version=transaction_version,
        scratch=scratch,
        keep_data=keep_data,
        replication=min(3, brokers),
    )
    for k in range(brokers):
        log = workdir / ("target.log" if brokers == 1 else f"target-{k + 1}.log")
        cluster.nodes.append(Node(k + 1, free_port(), free_port(), scratch / f"node-{k + 1}", log))
    cluster.log = cluster.nodes[0].log
    cluster.bootstrap = ",".join(f"{LOCAL}:{n.port}" for n in cluster.nodes)
    voters = ",".join(f"{n.node_id}@{LOCAL}:{n.controller_port}" for n in cluster.nodes)
    try:
        cluster_id = _tool(java, lib, ["kafka.tools.StorageTool", "random-uuid"], cluster.nodes[0].log).strip().splitlines()[-1]
        for node in cluster.nodes:
            props = scratch / f"server-{node.node_id}.properties"
            props.write_text(_properties(node, voters, brokers))
            (scratch / f"log4j2-{node.node_id}.properties").write_text(LOG4J2.format(log=node.log))
            feature = ["--feature", f"transaction.version={transaction_version}"] if transaction_version is not None else []
            _tool(java, lib, ["kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props), *feature], node.log)
        for node in cluster.nodes:
            node.command = [
                str(java),
                *HEAP,
                "-XX:+UseG1GC",
                f"-Dlog4j2.configurationFile={scratch / f'log4j2-{node.node_id}.properties'}",
                "-cp",
                maven.jars(lib),
                "kafka.Kafka",
                str(scratch / f"server-{node.node_id}.properties"),
            ]
            with open(node.log, "ab") as out:  # the JVM's own output (a heap too small, a bad flag) beside log4j's
                node.process = subprocess.Popen(node.command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        cluster.process = cluster.nodes[0].process
        _ready(cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _ready(cluster: KafkaCluster) -> None:
    """Every node answers Metadata, and the cluster sees all of them, within READY_SECONDS."""
    deadline = time.monotonic() + READY_SECONDS
    for node in cluster.nodes:
        one = Target(f"kafka node {node.node_id}", bootstrap=f"{LOCAL}:{node.port}", log=node.log, process=node.process)
        seen = wait_ready(one, seconds=max(1.0, deadline - time.monotonic()))
        one.process = None  # the cluster owns it
        while len(seen) < len(cluster.nodes) and time.monotonic() < deadline:
            time.sleep(0.5)
            seen = wait_ready(one, seconds=max(1.0, deadline - time.monotonic()))
        if len(seen) < len(cluster.nodes):
            raise TargetError(f"kafka: node {node.node_id} sees {len(seen)} of {len(cluster.nodes)} brokers after {READY_SECONDS:.0f} s; its log: {node.log}")


def _tool(java: Path, lib: Path, args: list[str], log: Path) -> str:
    """A Kafka tool run before the broker starts (StorageTool); its output, or a one-line error."""
    try:
        out = subprocess.run(
            [str(java), "-Xmx256m", "-cp", maven.jars(lib), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=FORMAT_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise TargetError(f"kafka: {args[0]} {args[1]} did not finish within {FORMAT_SECONDS:.0f} s") from None
    with open(log, "a") as f:
        f.write(f"$ {' '.join(args)}\n{out.stdout}{out.stderr}\n")
    if out.returncode != 0:
        last = next((ln for ln in reversed((out.stderr + out.stdout).strip().splitlines()) if ln.strip()), "no output")
        raise TargetError(f"kafka: {args[0]} {args[1]} failed (exit {out.returncode}): {last.strip()[:300]}; its output: {log}")
    return out.stdout


def hold_message(cluster: KafkaCluster) -> str:
    return f"kafka {cluster.version} at {cluster.bootstrap} (pids {', '.join(map(str, cluster.pids))}); interrupt (Ctrl-C) to stop it"


def environment_problem() -> str | None:
    """Why the real Kafka target cannot run here (no java, no mvn), or None."""
    try:
        maven.java()
        maven.mvn()
    except maven.MavenError as e:
        return str(e)
    return None

